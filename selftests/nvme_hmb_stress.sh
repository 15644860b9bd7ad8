#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb stress selftest (TAP 13): for a bounded time, resize writes,
# drop_caches (shrinker and regrow work) and controller resets (the mock's
# reset knob) run at once on two mock controllers.  (System-sleep cycles
# are in nvme_hmb_pm.sh: mixed into this storm, pm_test freeze cycles
# made Debian's 6.1 soft-lock in get_signal() with no nvme_hmb frame on
# the stacks, so they are kept apart.)  Afterwards every controller is consistent with its mock,
# no violation was seen, and a final resize still works.  Sanitizers
# (lockdep, KASAN, kmemleak, DMA-API debug) are checked by the harness.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped.

. "$(dirname "$0")/ksft_lib"

ksft_begin 6

SECS=${NVME_HMB_STRESS_SECS:-30}
modprobe nvme_hmb default_limit_mib=64 regrow_quiet_sec=1
modprobe nvme_hmb_mock nr_ctrls=2 hmpre=16384,8192 hmmin=3584,2048 \
	hmminds=1,256 hmmaxd=1024,16
check "two mocks enabled" sh -c \
	"[ $(val $SYS/mock0/size_kib) -gt 0 ] && [ $(val $SYS/mock1/size_kib) -gt 0 ]"

end=$(( $(cut -d. -f1 /proc/uptime) + SECS ))
running() { [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; }

resizer() { # resizer NAME SEED
	_i=$2
	while running; do
		echo $(( (_i * 37) % 80 )) > $SYS/$1/limit_mib
		_i=$((_i + 1))
	done 2>/dev/null
}
dropper() {
	while running; do
		echo 2 > /proc/sys/vm/drop_caches
		sleep 1
	done
}
resetter() { # resetter NAME
	while running; do
		echo 1 > $DBG/$1/reset
		sleep 1
	done 2>/dev/null
}
resizer mock0 1 & resizer mock0 2 & resizer mock1 3 &
dropper & resetter mock0 & resetter mock1 &
wait
echo "# mock0: $(stats_line mock0)"
echo "# mock1: $(stats_line mock1)"

settled() { # settled NAME: enabled or off, never stuck in between
	_st=$(val $SYS/$1/state)
	[ "$_st" = enabled ] || [ "$_st" = off ] || {
		echo "# $1 state $_st"
		return 1
	}
}
check "mock0 settled (enabled or off)" settled mock0
check "mock1 settled (enabled or off)" settled mock1
final() { # final NAME MIB SIZE_KIB
	echo 0 > $SYS/$1/reclaim
	echo "$2" > $SYS/$1/limit_mib &&
	eq "$(val $SYS/$1/size_kib)" "$3" && agree "$1"
}
check "mock0 resizes to 64 MiB after the storm, agrees" final mock0 64 65536
check "mock1 resizes to 32 MiB after the storm, agrees" final mock1 32 32768
check "no violations" sh -c \
	"[ $(val $DBG/mock0/violations) = 0 ] && [ $(val $DBG/mock1/violations) = 0 ]"

ksft_end
