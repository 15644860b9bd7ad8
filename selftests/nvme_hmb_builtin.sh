#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu
# nvme-hmb-kernel: builtin
#
# nvme_hmb_pci on a kernel with nvme-core and nvme-pci built in (the
# usual Ubuntu and Raspberry Pi OS setup; scripts/builtin-kernel.config),
# on the emulated DRAM-less drive (qemu/).  The modules under test were
# built from the kernel's own BTF alone (scripts/build-modules builtin):
# the layout of struct nvme_ctrl and struct nvme_dev came from vmlinux.
# nvme-pci cannot be reloaded here, so nvme_hmb_emu_pci (which reloads it
# with other parameters) does not run; this suite covers what a user
# with nvme built in meets:
#
#  1. nvme-pci set its HMB up at boot; insmod takes it over beside I/O
#     (nvme-pci's own code disables and frees it);
#  2. nvme reset, a resize, and an unbind/bind of the PCI function while
#     nvme-hmb runs it: nvme-pci never takes it back;
#  3. a refused controller (debugfs) goes back to nvme-pci and comes back;
#  4. rmmod hands it back beside I/O: nvme-pci's buffer as at boot.
# After every step sysfs agrees with Get Features 0Dh and the drive saw
# no violation.
#
# Destructive to the first 16 MiB of the namespace.  Exit: 0 all passed,
# 1 a test failed, 4 skipped (not root, nvme_hmb_pci not installed, the
# controller is not the emulated drive, or nvme is not built in).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

ksft_header nvme_hmb_pci
device_guard
if ! emu_present; then
	echo "1..0 # SKIP $CTRL is not the emulated DRAM-less drive"
	exit $KSFT_SKIP
fi
BUILTIN=/lib/modules/$(uname -r)/modules.builtin
if ! grep -qx 'kernel/drivers/nvme/host/nvme.ko' "$BUILTIN" 2>/dev/null; then
	echo "1..0 # SKIP nvme-pci is a module on $(uname -r): nvme_hmb_emu_pci covers it"
	exit $KSFT_SKIP
fi
echo "1..27"

BDF=$(basename "$(readlink -f /sys/class/nvme/$CTRL/device)")
D=$SYS/$CTRL
PCI_SETUP="allocated [0-9]+ MiB host memory buffer"
modprobe -r nvme_hmb_pci nvme_hmb 2>/dev/null

state_is() { [ "$(val "$D/state")" = "$1" ]; }
io_loop() { # io_loop FIRST COUNT: COUNT io_ok rounds from 64 KiB block FIRST
	_i=0
	while [ $_i -lt "$2" ]; do
		T=$T.bg io_ok $(($1 + (_i % 4) * 16)) || return 1
		_i=$((_i + 1))
	done
}
# ours SIZE: nvme-hmb runs it, SIZE KiB, agreeing with Get Features
ours() { state_is enabled && eq "$(val "$D/size_kib")" "$1" && agree_pci; }

# --- 1. built in, nvme-pci's HMB from boot, taken over ---------------------
built_in() {
	grep -qx 'kernel/drivers/nvme/host/nvme-core.ko' "$BUILTIN" &&
	[ ! -e /sys/module/nvme/initstate ] &&
	[ ! -e /sys/module/nvme_core/initstate ]
}
check "nvme-core and nvme-pci are built in (modules.builtin, no initstate)" \
	built_in
check "nvme-pci enabled its HMB at boot" eq "$(feat ehm)" 1
boot_hsize=$(feat hsize)
boot_hmdlec=$(feat hmdlec)
check "nvme-pci's: 64 MiB in blocks of at most 4 MiB" \
	sh -c "[ '$boot_hsize' = 16384 ] && [ '$boot_hmdlec' -ge 16 ]"
# theirs: nvme-pci's buffer, as at boot; nvme-hmb holds none
theirs() {
	eq "$(feat ehm)" 1 && eq "$(feat hsize)" "$boot_hsize" &&
	eq "$(feat hmdlec)" "$boot_hmdlec" &&
	{ [ ! -d "$D" ] || eq "$(val "$D/size_kib")" 0; } && emu_clean
}

dmesg_mark
dis0=$(emu disables)
io_loop 0 6 &
io_pid=$!
load_hmb() {
	modprobe nvme_hmb default_limit_mib=128 && modprobe nvme_hmb_pci &&
	wait_for 10 test -d "$D"
}
check "modprobe nvme_hmb, nvme_hmb_pci beside I/O" load_hmb
check "dmesg: nvme-pci let go of its HMB, nvme-hmb takes it over" \
	wait_for 10 dmesg_has "nvme-pci disabled and freed its 64 MiB Host Memory Buffer; nvme-hmb takes it over"
check "nvme-hmb runs it: enabled, 64 MiB, agreeing" wait_for 10 ours 65536
check "the drive saw nvme-pci's disable" \
	sh -c "[ $(emu disables) -gt $dis0 ]"
check "the I/O beside the take-over read back what it wrote" wait $io_pid

# --- 2. reset, resize, unbind/bind: nvme-pci never takes it back ----------
dmesg_mark
check "nvme reset while nvme-hmb runs it" nvme reset "/dev/$CTRL"
check "nvme-hmb's after the reset" wait_for 20 ours 65536
check "nvme-pci set none of its own up in the reset" dmesg_none "$PCI_SETUP"
check "limit_mib 32: 32 MiB, agreeing" \
	sh -c "echo 32 > $D/limit_mib && [ \$(cat $D/size_kib) = 32768 ]"
check "agreeing at 32 MiB" agree_pci
check "limit_mib 128: 64 MiB again" \
	sh -c "echo 128 > $D/limit_mib && [ \$(cat $D/size_kib) = 65536 ]"
dmesg_mark
check "unbind the PCI function from the built-in nvme-pci" \
	put "$BDF" /sys/bus/pci/drivers/nvme/unbind
check "bind it again" put "$BDF" /sys/bus/pci/drivers/nvme/bind
check "attached again after the bind: nvme-hmb's" wait_for 30 ours 65536
check "I/O after the bind" wait_for 20 io_ok 32

# --- 3. a refused controller goes back to nvme-pci -------------------------
dmesg_mark
check "refuse $CTRL (debugfs)" put "$CTRL" /sys/kernel/debug/nvme_hmb_pci/refuse
check "refused: nvme-pci's again" wait_for 20 theirs
check "lift the refusal" sh -c "echo > /sys/kernel/debug/nvme_hmb_pci/refuse"
check "taken over again" wait_for 20 ours 65536

# --- 4. rmmod hands it back ------------------------------------------------
dmesg_mark
io_loop 0 6 &
io_pid=$!
check "rmmod nvme_hmb_pci beside I/O" rmmod nvme_hmb_pci
check "dmesg: nvme-pci set its own up again" \
	wait_for 20 dmesg_has "allocated 64 MiB host memory buffer"
check "nvme-pci's, as at boot" wait_for 20 theirs
check "the I/O beside the hand-back read back what it wrote" wait $io_pid
check "rmmod nvme_hmb" rmmod nvme_hmb

rm -rf "$T" "$T.bg"
ksft_end
