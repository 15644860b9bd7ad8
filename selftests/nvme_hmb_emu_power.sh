#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu
# nvme-hmb-kernel: stock
#
# nvme-hmb across the power states of the emulated DRAM-less drive
# (qemu/, patch 0012: hmb_power_states, hmbr), through nvme_hmb_pci:
#
#  1. HMNAR is on exactly when the drive reports HMBR, and the drive
#     refused no Set Features (HMNARE goes only to a drive with HMBR; to
#     any other it is a reserved bit);
#  2. a suspend to idle (mem with mem_sleep s2idle, pm_test devices:
#     nvme-pci's nvme_suspend() runs): with HMNAR, on nvme-pci's
#     host-managed path (the drive has non-operational power states and
#     ASPM is on its link), the HMB stays enabled through it (sleeps_kept,
#     no disable, no return, the drive put in PS4 and back, no access to
#     the HMB there); on any other drive or path the round trip (a
#     disable, then a return);
#  3. with hmb_power_states: Linux's APST takes the idle drive to a
#     non-operational state, I/O takes it back; without HMNAR the drive
#     uses the HMB there (nonop_accesses), with HMNAR never.
# After every step sysfs agrees with Get Features 0Dh, and at the end the
# drive has seen no violation and no DMA error.
#
# Destructive to the first 16 MiB of the namespace.  Exit: 0 all passed,
# 1 a test failed, 4 skipped (not root, nvme_hmb_pci not installed, the
# controller is not the emulated drive, or no /sys/power/pm_test).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

ksft_header nvme_hmb_pci
device_guard
if ! emu_present; then
	echo "1..0 # SKIP $CTRL is not the emulated DRAM-less drive"
	exit $KSFT_SKIP
fi
if [ ! -w /sys/power/pm_test ]; then
	echo "1..0 # SKIP no /sys/power/pm_test (CONFIG_PM_DEBUG)"
	exit $KSFT_SKIP
fi

BDF=$(basename "$(readlink -f /sys/class/nvme/$CTRL/device)")
D=$SYS/$CTRL
pw=$(emu_power) || pw="0 0"
POWER=$((${pw#* } & 1))
HMBR=$(((${pw#* } >> 2) & 1))
echo "1..$((9 + 4 * POWER))"
echo "# drive: hmb_power_states $POWER, hmbr $HMBR, PS${pw% *}"
modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null

state_is() { [ "$(val "$D/state")" = "$1" ]; }
load_hmb() {
	modprobe nvme_hmb default_limit_mib=128 && modprobe nvme_hmb_pci &&
	wait_for 10 test -d "$D" && wait_for 10 state_is enabled
}
power_flag() { # power_flag BIT: that bit of the drive's power flags
	_pw=$(emu_power) || return 1
	echo $(((${_pw#* } >> $1) & 1))
}
above() { [ "$(emu "$1")" -gt "$2" ]; }

# 1. HMNARE and HMNAR
rej=$(emu rejected)
check "modprobe nvme_hmb, nvme_hmb_pci: the HMB enabled" load_hmb
check "sysfs agrees with Get Features" agree_pci
check "HMNAR on exactly when the drive reports HMBR" \
	eq "$(power_flag 3)" "$HMBR"
check "the drive refused no Set Features" eq "$(emu rejected)" "$rej"

# 2. A suspend to idle.  nvme_suspend() keeps the drive powered, in its
# deepest power state, when the drive has non-operational power states
# and ASPM is on its link; nvme_hmb_pci says so before the devices
# suspend when suspend is s2idle by default (mem_sleep).
aspm=0
for f in l0s_aspm l1_aspm; do
	[ "$(val "/sys/bus/pci/devices/$BDF/link/$f")" = 1 ] && aspm=1
done
kept=0
[ "$HMBR" = 1 ] && [ "$POWER" = 1 ] && [ $aspm = 1 ] && kept=1
echo "# ASPM on the link: $aspm; expected: $([ $kept = 1 ] && echo 'kept' || echo 'round trip')"

sleep_cycle() {
	_k=$(stat_of "$CTRL" sleeps_kept)
	_s=$(stat_of "$CTRL" suspends)
	_dis=$(emu disables)
	_mr=$(emu mr_returns)
	_pc=$(emu ps_changes)
	_no=$(emu nonop_accesses)
	_old=$(sed -n 's/.*\[\([a-z0-9]*\)\].*/\1/p' /sys/power/mem_sleep)
	put s2idle /sys/power/mem_sleep || return 1
	_rc=0
	echo devices > /sys/power/pm_test && echo mem > /sys/power/state ||
		_rc=1
	echo none > /sys/power/pm_test
	put "$_old" /sys/power/mem_sleep
	[ $_rc = 0 ] || { echo "# echo mem > /sys/power/state failed"; return 1; }
	wait_for 20 state_is enabled && wait_for 20 test -b "$NS" || return 1
	eq "$(stat_of "$CTRL" suspends)" $((_s + 1)) || return 1
	if [ $kept = 1 ]; then
		eq "$(stat_of "$CTRL" sleeps_kept)" $((_k + 1)) &&
		eq "$(emu disables)" "$_dis" &&
		eq "$(emu mr_returns)" "$_mr" &&
		above ps_changes "$_pc" &&
		eq "$(emu nonop_accesses)" "$_no"
	else
		eq "$(stat_of "$CTRL" sleeps_kept)" "$_k" &&
		above disables "$_dis" &&
		wait_for 20 above mr_returns "$_mr"
	fi
}
check "setup: pm_test_delay 1" put 1 /sys/module/suspend/parameters/pm_test_delay
if [ $kept = 1 ]; then
	check "s2idle at pm_test devices: the HMB stays enabled (HMNAR)" sleep_cycle
else
	check "s2idle at pm_test devices: disabled, then returned" sleep_cycle
fi
check "after the suspend: sysfs agrees with Get Features" agree_pci
check "I/O after the suspend" io_ok 0

# 3. APST as Linux set it up (nvme_configure_apst() at the controller's
# start): PS3 after 100 ms of idle time, PS4 after 2 s more.
if [ "$POWER" = 1 ]; then
	check "Linux enabled APST on the drive" eq "$(power_flag 1)" 1
	nonop=$(emu nonop_accesses)
	apst=$(emu apst_transitions)
	check "APST: the idle drive went to a non-operational state" \
		wait_for 10 above apst_transitions "$apst"
	wake=$(emu ps_wakeups)
	woken() { io_ok 16 && above ps_wakeups "$wake"; }
	check "I/O takes it back to an operational state" woken
	if [ "$HMBR" = 1 ]; then
		check "HMNAR: no HMB access in a non-operational state" \
			eq "$(emu nonop_accesses)" "$nonop"
	else
		check "no HMNAR: the drive used the HMB in a non-operational state" \
			above nonop_accesses "$nonop"
	fi
fi

check "no violation, no DMA error at the end" emu_clean
keys="$EMU_KEYS ps_changes apst_transitions ps_wakeups nonop_accesses"
echo "# drive: $(for k in $keys; do printf '%s=%s ' $k "$(emu $k)"; done)power=$(emu_power)"
echo "# stats: $(stats_line "$CTRL")"
rm -rf "$T"
ksft_end
