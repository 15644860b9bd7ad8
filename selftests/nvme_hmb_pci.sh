#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nvme_hmb_pci selftest (TAP 13): the backend for real NVMe PCIe
# controllers, end to end on the first nvme-pci controller (in the test VM,
# QEMU's NVMe, which asks for no HMB: HMPRE 0).
#
#  - load: the controller is read through the real admin queue and its
#    directory says why there is no HMB;
#  - force= (test only): Set Features 0Dh reaches the controller and is
#    refused, the engine frees everything and says why; hostile force=
#    values make the load fail;
#  - nvme reset, PCI unbind/bind, rmmod/modprobe cycles: noticed, no
#    oops, I/O through the namespace keeps working;
#  - nvme-cli's view of Feature 0Dh agrees with the engine's.
#
# Destructive to the first 4 MiB of the namespace.  Exit: 0 all passed,
# 1 a test failed, 4 skipped (not root, nvme_hmb_pci not installed, or no
# nvme-pci controller with a namespace).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

loaded() { grep -q "^nvme_hmb_pci " /proc/modules; }

ksft_header nvme_hmb_pci
device_guard
if [ ! -b "$NS" ] || [ ! -e /sys/class/nvme/$CTRL/device ]; then
	echo "1..0 # SKIP no nvme-pci controller $CTRL with namespace $NS"
	exit $KSFT_SKIP
fi
BDF=$(basename "$(readlink -f /sys/class/nvme/$CTRL/device)")
mkdir -p "$T"

echo "1..53"

modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
check "I/O before the backend is loaded" io_ok 0

# --- 1. load: QEMU's controller asks for no HMB -------------------------
dmesg_mark
# with the debug messages on from the start, wherever this runs
check "modprobe nvme_hmb_pci" sh -c \
	"modprobe nvme_hmb dyndbg=+p && modprobe nvme_hmb_pci dyndbg=+p"
# "reset noticed" is a debug message (a reset is routine)
check "our debug messages on" dyndbg on
check "$CTRL directory exists" test -d $SYS/$CTRL
check "hmpre_kib is 0 (read through the admin queue)" \
	eq "$(val $SYS/$CTRL/hmpre_kib)" 0
check "size_kib is 0" eq "$(val $SYS/$CTRL/size_kib)" 0
check "state is off" eq "$(val $SYS/$CTRL/state)" off
check "reason: HMPRE 0" eq "$(val $SYS/$CTRL/reason)" not-asked
check "dmesg: attached (debug level)" \
	dmesg_has_at 7 "$CTRL: HMB: nvme_hmb_pci attached \\(PCI $BDF\\)"
check "dmesg: the controller asks for none (debug level)" \
	dmesg_has_at 7 "$CTRL: HMB not used: the controller asks for none \\(HMPRE 0\\)"
check "dmesg: resets are watched (debug level)" \
	dmesg_has_at 7 "nvme_hmb_pci: loaded; watching controller resets: yes"
nothing_at_info() {
	_info=$(dmesg_ours_at 0-6)
	[ -z "$_info" ] || { echo "$_info" | sed 's/^/# /'; return 1; }
}
check "dmesg: nothing of ours at info level for a drive with DRAM, as nvme-pci" \
	nothing_at_info
check "no Set Features sent (cmd_failures 0, enables 0)" \
	sh -c "[ $(stat_of $CTRL cmd_failures) = 0 ] &&
	       [ $(stat_of $CTRL enables) = 0 ]"
check "I/O with the backend loaded" io_ok 16

# nvme-cli's view: QEMU has no Feature 0Dh (Invalid Field); the engine off.
getfeat_agrees() {
	out=$(nvme get-feature /dev/$CTRL -f 0x0d -H 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# nvme-cli: /'
	if [ $rc -ne 0 ]; then
		# No HMB feature at all: the engine must not claim one.
		eq "$(val $SYS/$CTRL/state)" off &&
		eq "$(val $SYS/$CTRL/size_kib)" 0
	elif echo "$out" | grep -q "Enable Host Memory (EHM): Enabled"; then
		eq "$(val $SYS/$CTRL/state)" enabled
	else
		eq "$(val $SYS/$CTRL/state)" off
	fi
}
check "nvme get-feature 0x0d agrees with the engine" getfeat_agrees

# --- 2. controller reset with the backend loaded ------------------------
dmesg_mark
check "nvme reset /dev/$CTRL" nvme reset /dev/$CTRL
reset_noticed() { dmesg_has "HMB: controller reset noticed"; }
check "dmesg: the reset was noticed" wait_for 20 reset_noticed
check "dmesg: nothing about the HMB at info level for a reset" \
	dmesg_none_at 0-6 HMB
check "resets counted in stats" \
	sh -c "[ \$(cat $SYS/$CTRL/stats/resets) -gt 0 ]"
check "namespace back after the reset" wait_for 20 test -b "$NS"
check "I/O after the reset" io_ok 32

# --- 3. rmmod ------------------------------------------------------------
check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
check "$CTRL directory gone" test ! -e $SYS/$CTRL
check "I/O after rmmod" io_ok 48

# --- 4. hostile force= values: the load fails ---------------------------
bad_force() { # refused as an invalid argument, not for any other reason
	if _err=$(modprobe nvme_hmb_pci force="$1" 2>&1); then
		echo "# force='$1' was accepted"
		rmmod nvme_hmb_pci
		return 1
	fi
	case "$_err" in
	*"Invalid argument"*) ;;
	*)
		echo "# force='$1': not refused as an invalid argument: $_err"
		return 1
		;;
	esac
	! loaded
}
bad_all() {
	for f in "nvme0" "nvme0:" "nvme0:hmpre" "nvme0:hmpre=" \
		 "nvme0:hmpre=-1" "nvme0:hmpre=+5" "nvme0:hmpre=0x10" \
		 "nvme0:hmpre=4294967296" "nvme0:hmmaxd=65536" \
		 "nvme0:hmpre=1,hmpre=2" "nvme0:hmpre=1;nvme0:hmmin=1" \
		 "nvme0:bogus=1" "foo0:hmpre=1" "nvme:hmpre=1" "nvmex:hmpre=1" \
		 "nvme0:hmpre=1," "nvme0:hmpre=1;" "nvme0:hmpre=1 " \
		 "nvme12345678901234:hmpre=1"; do
		bad_force "$f" || return 1
	done
}
dmesg_mark
check "hostile force= values fail the load" bad_all
check "dmesg explains a bad force=" \
	dmesg_has "nvme_hmb_pci: force: nvme0: 'bogus' is not one of"

# --- 5. force=: Set Features 0Dh reaches QEMU and is refused -------------
dmesg_mark
check "modprobe nvme_hmb_pci force=$CTRL:hmpre=4096,hmmin=1024" \
	modprobe nvme_hmb_pci force="$CTRL:hmpre=4096,hmmin=1024"
check "our debug messages on again" dyndbg on
check "hmpre_kib shows the override (16384)" \
	eq "$(val $SYS/$CTRL/hmpre_kib)" 16384
check "hmmin_kib shows the override (4096)" \
	eq "$(val $SYS/$CTRL/hmmin_kib)" 4096
check "state off after the refusal" eq "$(val $SYS/$CTRL/state)" off
check "size_kib 0 after the refusal" eq "$(val $SYS/$CTRL/size_kib)" 0
# The reason is the token; the status the drive answered is last_error.
reason_rejected() {
	r=$(val $SYS/$CTRL/reason) e=$(val $SYS/$CTRL/last_error)
	[ "$r $e" = "set-failed 0x4002" ] || {
		echo "# reason '$r', last_error '$e'"
		return 1
	}
}
check "reason names the rejection, last_error its status" reason_rejected
check "dmesg: the override is loud" \
	dmesg_has "$CTRL: HMB: force= (TEST ONLY)"
check "dmesg: the decoded status" \
	dmesg_has "$CTRL: HMB enable (Set Features) failed: Invalid Field in Command (status 0x4002)"
check "the kernel is tainted (U)" \
	sh -c "[ \$((\$(cat /proc/sys/kernel/tainted) & 64)) -ne 0 ]"
check "cmd_failures counted" \
	sh -c "[ \$(cat $SYS/$CTRL/stats/cmd_failures) -gt 0 ]"
check "nvme get-feature 0x0d agrees with the engine (forced)" getfeat_agrees
check "I/O after the refused Set Features" io_ok 64

dmesg_mark
check "nvme reset with the override" nvme reset /dev/$CTRL
check "dmesg: that reset noticed too" wait_for 20 reset_noticed
check "namespace back after that reset" wait_for 20 test -b "$NS"
check "I/O after that reset" io_ok 80

# --- 6. unbind and bind the PCI function ---------------------------------
dmesg_mark
check "unbind $BDF from nvme" \
	sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/unbind"
check "$CTRL directory gone with the unbind" test ! -e $SYS/$CTRL
check "dmesg: detached before nvme-pci's remove" \
	dmesg_has "$CTRL: HMB: nvme_hmb_pci detached"
check "bind $BDF to nvme" sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/bind"
check "$CTRL directory back after the bind" wait_for 30 test -d $SYS/$CTRL
check "namespace back after the bind" wait_for 30 test -b "$NS"
check "I/O after unbind/bind" io_ok 96

# --- 7. rmmod/modprobe cycles --------------------------------------------
cycles() {
	for i in 1 2 3; do
		rmmod nvme_hmb_pci || return 1
		modprobe nvme_hmb_pci || return 1
		[ -d $SYS/$CTRL ] || { echo "# cycle $i: no $CTRL"; return 1; }
		io_ok $((112 + i * 16)) || return 1
	done
}
check "three rmmod/modprobe cycles with I/O" cycles
check "rmmod nvme_hmb_pci nvme_hmb" rmmod nvme_hmb_pci nvme_hmb
check "I/O at the end" io_ok 0

rm -rf "$T"
ksft_end
