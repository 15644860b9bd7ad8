#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb system-sleep selftest (TAP 13): suspend (pm_test levels of
# freeze and mem) disables the HMB, keeps it, and returns it with MR=1,
# pattern intact; hibernation (pm_test levels of disk) disables and frees
# it before the image and sets it up fresh (MR=0); with NVME_HMB_REAL_S3=1
# also a real S3 cycle woken by the RTC.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped (not root, modules or
# /sys/power/pm_test absent).

. "$(dirname "$0")/ksft_lib"

if [ ! -w /sys/power/pm_test ] && [ "$(id -u)" = 0 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no /sys/power/pm_test (CONFIG_PM_DEBUG)"
	exit $KSFT_SKIP
fi

# The pm_test levels of each state.  The engine acts in its PM notifier,
# which runs the same way at every level; the levels differ in how much
# of the rest of the kernel sleeps.  NVME_HMB_PM_DEEPEST=1 (make test sets
# it on the debug kernel, where each cycle takes a minute) runs only the
# deepest level of each state, which goes through the shallower ones.
pm_levels() { # pm_levels STATE
	case $1 in
	freeze) echo freezer devices platform ;;
	*) echo freezer devices platform processors core ;;
	esac
}
pm_deepest() { # pm_deepest STATE
	case $1 in freeze) echo platform ;; *) echo core ;; esac
}
states=$(cat /sys/power/state 2>/dev/null)
# The plan is the same everywhere: every level of freeze, mem and disk
# (3 + 5 + 5), a skip where /sys/power/state lacks the state or
# NVME_HMB_PM_DEEPEST=1 leaves the level out; the real S3 test, also
# where it skips; the mock, 2 setup writes and the last check.
ksft_begin 18

C=mock0
modprobe nvme_hmb default_limit_mib=128
modprobe nvme_hmb_mock nr_ctrls=1 hmpre=16384 hmmin=3584 hmminds=1 \
	hmmaxd=1024
check "BG5-like mock at 64 MiB" eq "$(val $SYS/$C/size_kib)" 65536
# keep sizes steady: this test is about sleep
check "setup: reclaim 0" put 0 $SYS/$C/reclaim
check "setup: pm_test_delay 1" put 1 /sys/module/suspend/parameters/pm_test_delay

# "During" a sleep is what the mock sampled when it began, after the
# engine's notifier and before tasks froze (mock.c, "System sleep").
# mark_sleep notes the mock's sleep counters; slept HELD then checks that
# one sleep was sampled since, with host memory disabled, and the buffer
# kept (HELD 1: suspend) or freed (HELD 0: hibernation).
mark_sleep() {
	_smp=$(val $DBG/$C/sleep_samples)
	_ehm=$(val $DBG/$C/sleep_ehm)
	_held=$(val $DBG/$C/sleep_held)
}
slept() {
	eq "$(val $DBG/$C/sleep_samples)" $((_smp + 1)) &&
	eq "$(val $DBG/$C/sleep_ehm)" "$_ehm" &&
	eq "$(val $DBG/$C/sleep_held)" $((_held + $1))
}

# cycle STATE LEVEL: one pm_test cycle, then what must hold after it.
cycle() {
	_mr=$(val $DBG/$C/mr_returns)
	_sus=$(stat_of $C suspends)
	_res=$(stat_of $C resumes)
	_set=$(val $DBG/$C/set_cmds)
	mark_sleep
	echo "$2" > /sys/power/pm_test || return 1
	echo "$1" > /sys/power/state || {
		echo "# echo $1 > /sys/power/state failed at level $2"
		return 1
	}
	echo none > /sys/power/pm_test
	eq "$(stat_of $C suspends)" $((_sus + 1)) &&
	eq "$(stat_of $C resumes)" $((_res + 1)) &&
	eq "$(val $SYS/$C/size_kib)" 65536 &&
	eq "$(val $SYS/$C/reason)" granted &&
	eq "$(val $DBG/$C/set_cmds)" $((_set + 2)) &&
	agree $C || return 1
	# Suspend returns the buffer (MR=1); hibernation frees it before the
	# image and sets up a fresh one (MR=0) after.
	if [ "$1" = disk ]; then
		slept 0 && eq "$(val $DBG/$C/mr_returns)" "$_mr"
	else
		slept 1 && eq "$(val $DBG/$C/mr_returns)" $((_mr + 1))
	fi
}

# A routine sleep is no news: what the engine says of it (disabled,
# given back, set up again at the same size after hibernation) is at
# debug level only; nothing about the HMB at info level or above.
quiet_cycle() {
	dmesg_mark
	cycle "$@" && dmesg_none_at 0-6 HMB
}

for s in freeze mem disk; do
	for l in $(pm_levels $s); do
		w="$s at pm_test $l: HMB off during, back after"
		case " $states " in
		*" $s "*) ;;
		*) skip "$w" "no $s in /sys/power/state"; continue ;;
		esac
		if [ "${NVME_HMB_PM_DEEPEST:-0}" = 1 ] && [ "$l" != "$(pm_deepest $s)" ]; then
			skip "$w" "NVME_HMB_PM_DEEPEST=1: the deepest level only, which goes through this one"
			continue
		fi
		check "$w" quiet_cycle $s $l
	done
done

if [ "${NVME_HMB_REAL_S3:-0}" = 1 ]; then
	s3_returns() {
		_mr=$(val $DBG/$C/mr_returns)
		mark_sleep
		real_s3 || return 1
		slept 1 && eq "$(val $DBG/$C/mr_returns)" $((_mr + 1)) &&
		agree $C
	}
	check "real S3, woken by the RTC: off during, returned with MR=1" \
		s3_returns
else
	skip "real S3, woken by the RTC: off during, returned with MR=1" \
		"real S3 only where NVME_HMB_REAL_S3=1"
fi

check "no violation after every cycle" eq "$(val $DBG/$C/violations)" 0
echo "# stats: $(stats_line $C)"
ksft_end
