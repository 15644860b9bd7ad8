#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu-hotplug
# nvme-hmb-kernel: debug stock stock-6.12
#
# Removal of a drive whose HMB nvme_hmb_pci runs, on the real path: QEMU
# removes the emulated DRAM-less drive from its PCIe root port (vm-run
# --machine q35-hotplug, asked for on the results port), and pciehp in
# the guest unbinds nvme-pci under the device lock, as on a laptop whose
# drive goes away.  Five drives, one removal each:
#
#  1. the drive has gone silent (it answers no admin command until a
#     controller reset, C4h action 1 mode 3) and a disable of ours is in
#     flight when the removal starts: nvme-pci's admin timeout resets
#     the controller, the disable comes back, the detach completes;
#  2. the controller is not live at the removal (a reset waits for a
#     late Identify, C4h action 4 mode 1): nothing more is sent to it,
#     and nvme_hmb_pci detaches after nvme-pci's remove let it go;
#  3. the drive is pulled (a surprise removal): silent, a disable of ours
#     in flight, and its slot's power is cut behind pciehp's back (the
#     root port's Slot Control written directly: QEMU then removes the
#     device at once, config reads give all ones, pciehp sees the
#     presence change and marks the function disconnected before it
#     unbinds).  On 6.1 nvme-pci's timeout re-arms for a disconnected
#     function until nvme-pci's remove cancels the command: nothing of
#     ours may wait for it before;
#  4. the drive is pulled while nvme_hmb_pci's work holds the device lock
#     (a reset report held back, debugfs hold_reset_ms): pciehp waits for
#     that lock, and the report that follows must send nothing to the
#     pulled drive (on 6.1 a command would wait for ever);
#  5. the drive is pulled while a command of that work is out: the reset
#     report's Get Features, which the drive answers 60 s late (C4h
#     action 2 mode 4); the command must come back once the drive is
#     gone, well before the drive's answer would have.
#
# They run in the order 3, 4, 5, 1, 2.  On the debug kernel lockdep
# stops at its first report, and Linux 6.1 gives two of its own here
# (lockdep_expect below): pciehp's at the first removal, once the driver
# is unbound, and nvme-pci's at an admin timeout.  In this order lockdep
# watches the whole of a surprise removal of a drive with a command of
# ours in flight (3) before its first report.
#
# Each removal must complete within a bound (the VM's admin timeout is
# 10 s), leave no task waiting, and detach; the drive checks its map at
# the controller's shutdown and prints its counters when QEMU removes it
# ("hmb-emu:" lines, judged by scripts/check-run): memory freed while the
# drive could still use it shows there.  The modules unload at the end.
#
# The VM only (it removes its drives).  Exit: 0 all passed, 1 a test
# failed, 4 skipped (not root, not the test VM, or no emulated drives).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

ksft_header nvme_hmb_pci
if ! in_test_vm; then
	echo "1..0 # SKIP removes its drives: the test VM only"
	exit $KSFT_SKIP
fi
echo "1..44"

# How long a removal may take: pciehp's 5 s attention button, two admin
# timeouts of 10 s (the command, then nvme-pci's Delete I/O Queue
# commands in its disable) and the reset after them, under TCG.
UNPLUG_MAX=180

# ctrl_of SERIAL: the controller whose serial is SERIAL (vm-run gives
# drive N the serial deadbeef + N)
ctrl_of() {
	for _c in /sys/class/nvme/nvme*; do
		[ "$(cat "$_c/serial" 2>/dev/null | tr -d ' ')" = "$1" ] &&
			{ basename "$_c"; return 0; }
	done
	return 1
}

# removed ID BDF HOW T0: PCI function BDF (QEMU's device ID) gone within
# UNPLUG_MAX s; says how long since T0 (seconds of uptime)
removed() {
	wait_for $UNPLUG_MAX sh -c "! test -e /sys/bus/pci/devices/$2" ||
		return 1
	echo "# $1 ($2) $3; removed in $(($(cut -d. -f1 /proc/uptime) - $4)) s"
}

# unplug ID BDF: ask vm-run to remove QEMU device ID (device_del)
unplug() {
	_t0=$(cut -d. -f1 /proc/uptime)
	printf '# nvme-hmb-unplug: %s\n' "$1" >"$NVME_HMB_RESULTS"
	removed "$1" "$2" "device_del" "$_t0"
}

# hmb_ready NAME: nvme-hmb enabled a buffer on NAME
hmb_ready() {
	[ "$(val "$SYS/$1/state")" = enabled ] &&
		[ "$(val "$SYS/$1/size_kib")" -gt 0 ]
}

# no_hang: no task was reported blocked, nothing warned or oopsed; but
# for the title of lockdep's circular-dependency report: the reports
# below are Linux's own, and scripts/check-run excuses them by their
# chains in the brackets that name them, no other.
no_hang() {
	dmesg_none 'blocked for more than|WARNING:|BUG:|Oops|hung_task' \
		"WARNING: possible circular locking dependency detected"
}
# The lockdep reports expected (lockdep_expect), Debian 6.1's, no lock of
# nvme-hmb's in either:
# - pciehp at the first removal by a presence change (it takes
#   pci_rescan_remove_lock, then its reset_lock);
# - nvme-pci on its timeout path (nvme_timeout() disables the controller
#   under shutdown_lock and namespaces_rwsem; nvme_reset_work() flushes
#   the timeout work under namespaces_rwsem).
PCIEHP_CHAIN="pci_rescan_remove_lock --> &ctrl->reset_lock"
NVME_CHAIN="(work_completion)(&q->timeout_work) --> &dev->shutdown_lock --> &ctrl->namespaces_rwsem"

# detached NAME: nvme_hmb_pci said it let NAME go, and nvme-hmb's sysfs
# directory of NAME is gone
detached() {
	dmesg_has "$1: HMB: nvme_hmb_pci detached" &&
		! test -e "$SYS/$1"
}

# five_drives: every serial found, each the emulated drive
five_drives() {
	for CTRL in "$c0" "$c1" "$c2" "$c3" "$c4"; do
		[ -n "$CTRL" ] || return 1
		emu_present || { echo "# $CTRL is not the emulated drive"; return 1; }
	done
}

# cfg_byte FILE OFFSET: one byte of a PCI config space file, in decimal
cfg_byte() {
	od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '
}

# slot_power_off BDF: cut the power of the slot of function BDF behind
# pciehp's back: its root port's Slot Control (PCIe capability + 18h)
# gets Power Controller Control off (bit 10) and the power indicator off
# (bits 9:8 = 11b), as the slot of a pulled drive ends up
slot_power_off() {
	_cfg=$(readlink -f "/sys/bus/pci/devices/$1/..")/config
	_p=$(cfg_byte "$_cfg" 52)
	while [ -n "$_p" ] && [ "$_p" != 0 ]; do
		[ "$(cfg_byte "$_cfg" "$_p")" = 16 ] && break
		_p=$(cfg_byte "$_cfg" $((_p + 1)))
	done
	[ -n "$_p" ] && [ "$_p" != 0 ] ||
		{ echo "# no PCIe capability in $_cfg"; return 1; }
	_o=$((_p + 24))
	_v=$(( $(cfg_byte "$_cfg" "$_o") + 256 * $(cfg_byte "$_cfg" $((_o + 1))) ))
	_v=$((_v | 0x700))
	echo "# $_cfg: Slot Control at $_o: writing $(printf %04x $_v)"
	# One write of the word: QEMU acts on a Slot Control write as a
	# whole, as the port's command.
	# shellcheck disable=SC2059 # the format is the octal escapes
	printf "$(printf '\\%03o\\%03o' $((_v & 255)) $((_v >> 8)))" |
		dd of="$_cfg" bs=2 count=1 seek=$((_o / 2)) conv=notrunc \
			2>/dev/null
}

# pull ID BDF: the drive QEMU calls ID is pulled (slot_power_off)
pull() {
	_t0=$(cut -d. -f1 /proc/uptime)
	slot_power_off "$2" || return 1
	removed "$1" "$2" pulled "$_t0"
}

# io_on NAME: io_ok on NAME's namespace
io_on() {
	CTRL=$1
	NS=/dev/${1}n1
	io_ok 0
}

modprobe -r nvme_hmb_pci nvme_hmb 2>/dev/null
c0=$(ctrl_of deadbeef)
c1=$(ctrl_of deadbef0)
c2=$(ctrl_of deadbef1)
c3=$(ctrl_of deadbef2)
c4=$(ctrl_of deadbef3)
check "five emulated drives (serials deadbeef to deadbef3): ${c0:-?} ${c1:-?} ${c2:-?} ${c3:-?} ${c4:-?}" \
	five_drives
b0=$(basename "$(readlink -f "/sys/class/nvme/$c0/device")")
b1=$(basename "$(readlink -f "/sys/class/nvme/$c1/device")")
b2=$(basename "$(readlink -f "/sys/class/nvme/$c2/device")")
b3=$(basename "$(readlink -f "/sys/class/nvme/$c3/device")")
b4=$(basename "$(readlink -f "/sys/class/nvme/$c4/device")")

dmesg_mark
check "modprobe nvme_hmb_pci" modprobe nvme_hmb_pci
check "$c0: HMB enabled by nvme-hmb" wait_for 30 hmb_ready "$c0"
check "$c1: HMB enabled by nvme-hmb" wait_for 30 hmb_ready "$c1"
check "$c2: HMB enabled by nvme-hmb" wait_for 30 hmb_ready "$c2"
check "$c3: HMB enabled by nvme-hmb" wait_for 30 hmb_ready "$c3"
check "$c4: HMB enabled by nvme-hmb" wait_for 30 hmb_ready "$c4"
# The drive's map writes and scrubs need I/O (scripts/check-run).
check "$c0: I/O" io_on "$c0"
check "$c1: I/O" io_on "$c1"
check "$c2: I/O" io_on "$c2"
check "$c3: I/O" io_on "$c3"
check "$c4: I/O" io_on "$c4"

# 3. Pulled: silent, a disable of ours in flight, the slot's power cut.
lockdep_expect "$PCIEHP_CHAIN" "pciehp's own (Debian 6.1), at the first removal"
CTRL=$c2
dmesg_mark
check "$c2: drive silenced" fault_cmd 1 1 0 3
(echo 16 > "$SYS/$c2/limit_mib") 2>/dev/null &
writer=$!
sleep 2
check "$c2: the shrink's disable is in flight" kill -0 "$writer"
check "$c2: pulled with the disable in flight; removed within ${UNPLUG_MAX} s" \
	pull nvme2 "$b2"
check "$c2: the limit_mib write returned" wait_for 30 sh -c "! kill -0 $writer"
wait "$writer" 2>/dev/null
check "$c2: nothing sent at the unbind; detached after nvme-pci's remove" \
	dmesg_has "$c2: HMB: controller gone at its unbind"
check "$c2: detached, its nvme-hmb directory gone" detached "$c2"
check "$c2: no task blocked, no warning" no_hang

# 4. Pulled while our work holds the device lock: a reset report held
# back 15 s (debugfs), the drive pulled meanwhile.
PDBG=/sys/kernel/debug/nvme_hmb_pci
CTRL=$c3
dmesg_mark
check "$c3: a reset report held back 15 s under the device lock" \
	sh -c "echo 15000 > $PDBG/hold_reset_ms && echo $c3 > $PDBG/report_reset && sleep 1"
check "$c3: pulled meanwhile; removed within ${UNPLUG_MAX} s" \
	pull nvme3 "$b3"
echo 0 > $PDBG/hold_reset_ms
check "$c3: nothing sent at the unbind; detached after nvme-pci's remove" \
	dmesg_has "$c3: HMB: controller gone at its unbind"
check "$c3: detached, its nvme-hmb directory gone" detached "$c3"
check "$c3: no task blocked, no warning" no_hang

# 5. Pulled while the work's Get Features is out (answered 60 s late).
CTRL=$c4
dmesg_mark
check "$c4: the next Get Features 0Dh answered 60 s late (C4h action 2 mode 4)" \
	fault_cmd 2 1 0 4 60000
check "$c4: a reset report sends it, under the device lock" \
	sh -c "echo $c4 > $PDBG/report_reset && sleep 2"
_t0=$(cut -d. -f1 /proc/uptime)
check "$c4: pulled with the Get Features out; removed within ${UNPLUG_MAX} s" \
	pull nvme4 "$b4"
check "$c4: removed before the drive's answer was due (30 s)" \
	test $(($(cut -d. -f1 /proc/uptime) - _t0)) -lt 30
check "$c4: detached, its nvme-hmb directory gone" detached "$c4"
check "$c4: no task blocked, no warning" no_hang
lockdep_end

# 1. Silent drive, a disable of ours in flight.  Its admin timeout, and
# that of the late Identify of 2., are meant (scripts/check-run), and so
# is nvme-pci's lockdep report on that path (if lockdep still runs).
CTRL=$c0
echo "nvme-hmb-selftest: admin timeouts expected" > /dev/kmsg
lockdep_expect "$NVME_CHAIN" "nvme-pci's own timeout path (Debian 6.1), a silent drive's admin timeout"
dmesg_mark
check "$c0: drive silenced (C4h: the next Set Features 0Dh and every admin command after it are lost)" \
	fault_cmd 1 1 0 3
# A shrink: its disable is the command lost.
(echo 16 > "$SYS/$c0/limit_mib") 2>/dev/null &
writer=$!
sleep 2
check "$c0: the shrink's disable is in flight (its limit_mib write has not returned)" \
	kill -0 "$writer"
check "$c0: removed with the disable in flight, within ${UNPLUG_MAX} s" \
	unplug nvme0 "$b0"
check "$c0: the limit_mib write returned" wait_for 30 sh -c "! kill -0 $writer"
wait "$writer" 2>/dev/null
check "$c0: detached, its nvme-hmb directory gone" detached "$c0"
check "$c0: the removal said what it waited for (the admin timeout's reset)" \
	dmesg_has "$c0: I/O .*QID 0 timeout"
check "$c0: no task blocked, no warning" no_hang

# 2. Not live at the removal: a reset waits for a late Identify.
CTRL=$c1
dmesg_mark
check "$c1: Identify Controller delayed 20 s (C4h action 4 mode 1)" \
	fault_cmd 4 1 0 1 20000
(nvme reset "/dev/$c1") 2>/dev/null &
resetter=$!
check "$c1: reset under way" wait_for 10 sh -c \
	"grep -qx -e resetting -e connecting /sys/class/nvme/$c1/state"
check "$c1: removed during its reset, within ${UNPLUG_MAX} s" \
	unplug nvme1 "$b1"
wait "$resetter" 2>/dev/null
echo "nvme-hmb-selftest: admin timeouts end" > /dev/kmsg
lockdep_end
check "$c1: nothing sent at the unbind; detached after nvme-pci's remove" \
	dmesg_has "$c1: HMB: controller not live at its unbind"
check "$c1: detached, its nvme-hmb directory gone" detached "$c1"
check "$c1: no task blocked, no warning" no_hang

check "nvme_hmb_pci and nvme_hmb unload" sh -c \
	"rmmod nvme_hmb_pci && rmmod nvme_hmb"
ksft_end
