#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-kernel: debug
#
# nvme-hmb fault selftest (TAP 13): every allocation of the engine and
# every command it sends is made to fail, one at a time, over each thing
# the engine does: load, setup, resize down and up (adding buffers, or
# building a fresh set), reclaim, regrow, reset, suspend, hibernation and
# detach.  Then the mock misbehaves as real controllers do: Get Features
# failing or answering wrongly, a command completing after the host gave
# up, a reset nobody reports, a controller dying during a command.
#
# After each failure: no violation (the mock watched every buffer it was
# given, and checks each one as it goes), a state with a reason that fits
# it, the engine's count of the DMA memory it holds equal to what the
# controllers hold, and the controller working again once the fault is
# gone.  Lockdep, KASAN, kmemleak and DMA-API debug are checked by the
# harness on the console.
#
# The allocations fail through the kernel's fault-injection framework:
# the engine's fail_alloc attribute (driver/fault.c) with probability 100,
# times 1 and space K fails exactly the K-th request from then on, for K
# = 1, 2, ... until the operation makes fewer than K.  The commands fail
# through the mock's fail_sets knob ("SKIP 1 STATUS"), SKIP = 0, 1, ...
# the same way, for each status class.  It needs a kernel with
# CONFIG_FAULT_INJECTION_DEBUG_FS (the debug test kernel): elsewhere it
# skips, which make test runs it only where it does not.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped.

. "$(dirname "$0")/ksft_lib"

FI=/sys/kernel/debug/nvme_hmb
ENGINE="default_limit_mib=16 max_chunk_kib=4096 regrow_quiet_sec=4 reclaim_plenty=Y"
# mock0: 16 MiB in 4 MiB buffers; mock1: HMMAXD 2, so that growing it
# builds a fresh set.
MOCK="nr_ctrls=2 hmpre=4096 hmmin=1024 hmminds=1 hmmaxd=1024,2"
# Set Features answers, one of each kind the engine tells apart: refused
# (Invalid Field, DNR), Internal Error without DNR, Command Sequence
# Error, Internal Error after the command was carried out, a lost
# completion (carried out, -ETIMEDOUT), a command that never reached the
# controller (-EIO).
STATUSES="0x4002 0x6 0x400c 0x6x -110 -5"
LEAKED=0	# DMA allocations deliberately left with a dead controller

# The debug kernel forks slowly (KASAN, lockdep, TCG): the helpers below
# read with the shell's read and keep results in variables.
r() { read -r "$1" < "$2"; }		# r VAR FILE
loaded() { [ -d /sys/module/$1 ]; }
unload() {
	for _m in nvme_hmb_mock nvme_hmb; do
		! loaded $_m || rmmod $_m || return 1
	done
}

ksft_header nvme_hmb_mock
ksft_mock_begin 29
modprobe nvme_hmb $ENGINE
if [ ! -d $FA ]; then
	echo "# SKIP the engine has no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	rmmod nvme_hmb
	exit $KSFT_SKIP
fi
echo 0 > /sys/module/suspend/parameters/pm_test_delay 2>/dev/null

# --- the fault knobs ---

alloc_injected() { r _t $FA/times && [ "$_t" = 0 ]; }
hits() { tr '\n' ' ' < $FI/fault_sites; }
# sites_hit BEFORE: the sites whose count moved since BEFORE (hits)
sites_hit() {
	hits | awk -v before="$1" '{
		n = split(before, b, " "); for (i = 1; i < n; i += 2) was[b[i]] = b[i + 1]
		for (i = 1; i < NF; i += 2) if ($(i + 1) > was[$i]) printf "%s:%d ", $i, $(i + 1) - was[$i]
	}'
}

arm_cmd() { # arm_cmd C SKIP STATUS: fail C's (SKIP+1)-th Set Features
	case $3 in
	*x) put "$2 1 ${3%x} executed" $DBG/$1/fail_sets ;;
	*) put "$2 1 $3" $DBG/$1/fail_sets ;;
	esac
}
cmd_injected() { r _f $DBG/$1/fail_sets && [ "$_f" = "0 0 0" ]; }
disarm_cmd() { put "0 0 0" $DBG/$1/fail_sets; }

# --- what must hold after every fault ---

# look C: C as the engine and its mock see it
look() {
	r ST $SYS/$1/state && r RS $SYS/$1/reason && r SZ $SYS/$1/size_kib &&
	r LE $SYS/$1/last_error &&
	r HK $SYS/$1/held_kib &&
	r ND $SYS/$1/nr_descs && r HS $DBG/$1/hsize && r HC $DBG/$1/hmdlec &&
	r EHM $DBG/$1/ehm && r VIO $DBG/$1/violations
}
said() { echo "# $1: $ST ($RS, last_error $LE), $SZ KiB in $ND, $HK KiB held; mock: ehm $EHM, $((HS * 4)) KiB in $HC, violations $VIO"; }
# fits C: no violation, and a state with a reason (a token) that fits it;
# enabled as the mock sees it, off holding nothing; last_error names the
# failed command for a failed Set Features only
fits() {
	look $1 && [ "$VIO" = 0 ] || { said $1; return 1; }
	case "$RS:$LE" in
	set-failed:0 | disable-failed:0) said $1; return 1 ;;
	set-failed:* | disable-failed:*) ;;
	*:0) ;;
	*) said $1; return 1 ;;
	esac
	case "$ST:$RS" in
	enabled:granted | enabled:limited | enabled:hmmaxd | \
	enabled:short | enabled:reclaimed)
		[ "$EHM" = 1 ] && [ $((HS * 4)) = "$SZ" ] && [ "$HC" = "$ND" ] &&
		[ "$HK" = "$SZ" ] ;;
	off:alloc-below-hmmin | off:set-failed | off:limit-zero)
		[ "$EHM" = 0 ] && [ "$HK" = 0 ] ;;
	# Memory kept for the controller (size_kib counts enabled memory
	# only, held_kib what is kept): while the mock still has the HMB
	# enabled, exactly the set it holds, which it watches (a grow whose
	# disable failed frees the set it built beside it).  A disable the
	# mock executed but that failed on the way back leaves it with none,
	# and the engine cannot know: then anything.
	failed:disable-failed)
		[ "$SZ" = 0 ] && [ "$HK" -gt 0 ] &&
		{ [ "$EHM" = 0 ] || [ "$HK" = $((HS * 4)) ]; } ;;
	*) false ;;
	esac && return 0
	said $1
	return 1
}

# held_ok: the engine's own count of DMA allocations is what the
# controllers hold (a list and its buffers each), plus any leaked on
# purpose.  A controller that keeps memory for a failed disable holds at
# least a list and one buffer, and at least the mock's list and buffers
# while the mock still has the HMB enabled (sysfs does not count kept
# descriptors; recover() then checks it exactly).
held_ok() {
	_exp=$LEAKED _kept=0
	for _c in mock0 mock1; do
		[ -d $SYS/$_c ] || continue
		r _sz $SYS/$_c/size_kib && r _nd $SYS/$_c/nr_descs &&
		r _st $SYS/$_c/state && r _ehm $DBG/$_c/ehm &&
		r _hc $DBG/$_c/hmdlec
		[ "$_sz" = 0 ] || _exp=$((_exp + _nd + 1))
		[ "$_st" = failed ] || continue
		_kept=1
		if [ "$_ehm" = 1 ]; then
			_exp=$((_exp + _hc + 1))
		else
			_exp=$((_exp + 2))
		fi
	done
	read -r _allocs _bytes < $FI/dma_held
	[ "$_allocs" = "$_exp" ] && return 0
	[ $_kept = 1 ] && [ "$_allocs" -gt "$_exp" ] && return 0
	echo "# engine holds $_allocs DMA allocations ($_bytes bytes), the controllers $_exp"
	return 1
}

sane() {
	for _c in mock0 mock1; do
		[ ! -d $SYS/$_c ] || fits $_c || return 1
	done
	held_ok
}

# recover C: the faults gone, a failed controller reset, C back at full
# size (limit 16 MiB: mock0 16 MiB, mock1 8 MiB under its HMMAXD)
recover() {
	disarm_alloc && disarm_cmd $1 && put 0 $DBG/$1/fail_next_get || return 1
	r ST $SYS/$1/state
	[ "$ST" != failed ] || put 1 $DBG/$1/reset
	put 16 $SYS/$1/limit_mib
	fits $1 && [ "$ST" = enabled ] || return 1
	case $1 in mock0) [ "$SZ" = 16384 ] ;; *) [ "$SZ" = 8192 ] ;; esac ||
		{ said $1; return 1; }
}

# fresh: both mocks loaded, at full size, reclaim off (only the reclaim
# tests turn it on)
fresh() {
	disarm_alloc
	_lim=
	loaded nvme_hmb_mock || modprobe nvme_hmb_mock $MOCK || return 1
	for _c in mock0 mock1; do
		put 0 $SYS/$_c/reclaim && recover $_c || return 1
	done
}

# after WHAT C: sane, and C recovers; says what was seen when not
after() {
	limit_ok && sane && recover "$2" && held_ok && return 0
	echo "# ... after $1"
	return 1
}

# --- the operations, each with what it starts from ---

prep_full() { fresh; }
prep_small() { fresh && put 5 $SYS/$OPC/limit_mib; }
prep_off() { fresh && put 0 $SYS/$OPC/limit_mib; }
stat() { r "$1" $SYS/$OPC/stats/$2; }	# stat VAR COUNTER (of OPC)
reclaimed_since() { stat _n reclaims && [ "$_n" -gt "$1" ]; }
regrown_since() { stat _n regrows && [ "$_n" -gt "$1" ]; }
prep_reclaimed() {
	fresh && put 1 $SYS/$OPC/reclaim && stat _rc reclaims || return 1
	echo 2 > /proc/sys/vm/drop_caches
	wait_for 10 reclaimed_since "$_rc" && wait_for 10 quiet
}

# The operations themselves may fail: what counts is what they leave.
# A load that failed is judged by alloc_loop (injected, ENOMEM, nothing
# left): _loaderr holds what modprobe said.
do_load() { _loaderr=$(modprobe nvme_hmb_mock $MOCK 2>&1) || return 0; _loaderr=; }
# do_limit N: write OPC's limit_mib; limit_ok (in after) judges the write.
do_limit() {
	r _lim0 $SYS/$OPC/limit_mib
	_lim=$1 _limrc=0
	_limerr=$( { echo "$1" > $SYS/$OPC/limit_mib; } 2>&1 ) || _limrc=1
	r _lim1 $SYS/$OPC/limit_mib && r _limst $SYS/$OPC/state
}
# limit_ok: the last do_limit's write did what nvme_hmb_set_limit()
# promises.  Taken: the limit reads what was written.  Failed: with an
# error the engine gives for a controller or allocator that failed (a
# lost completion times out), and with ENOMEM while enabled (no memory
# for a smaller set) the HMB and the limit as they were.
limit_ok() {
	[ -n "${_lim:-}" ] || return 0
	_l=$_lim
	_lim=
	if [ "$_limrc" = 0 ]; then
		[ "$_lim1" = "$_l" ] && return 0
		echo "# limit_mib $_l accepted, but it reads $_lim1"
		return 1
	fi
	case $_limerr in
	*"Cannot allocate memory"*)
		[ "$_limst" != enabled ] || [ "$_lim1" = "$_lim0" ] && return 0
		echo "# ENOMEM with the HMB enabled, but limit_mib $_lim0 -> $_lim1"
		return 1 ;;
	*"Input/output error"* | *"Device or resource busy"* | \
	*"Connection timed out"*)
		return 0 ;;
	esac
	echo "# limit_mib $_l failed: '$_limerr'"
	return 1
}
do_down() { do_limit 5; }
do_up() { do_limit 16; }
do_setup() { do_limit 16; }
# quiet: OPC's reclaim work done: no reclaim for a second, in a state
# that is not the middle of one
quiet() {
	stat _q0 reclaims
	sleep 1
	stat _q1 reclaims && r _qs $SYS/$OPC/state
	[ "$_q0" = "$_q1" ] && [ "$_qs" != suspended ]
}
do_reclaim() {
	stat _rc reclaims
	put 1 $SYS/$OPC/reclaim
	echo 2 > /proc/sys/vm/drop_caches
	wait_for 10 reclaimed_since "$_rc"
	wait_for 10 quiet
	true
}
# The regrow comes regrow_quiet_sec (4) after the reclaim, and twice
# that when the regrow gained nothing (an allocation made to fail); each
# reclaim soon after a regrow doubles the wait (up to 16 times), so each
# round starts from a fresh attach (prep_regrow): no back-off left by the
# round before.  Waiting less than the regrow let the check below read
# sysfs in the middle of a late regrow (state and size_kib are read one
# file at a time).
prep_regrow() {
	{ ! loaded nvme_hmb_mock || rmmod nvme_hmb_mock; } && prep_reclaimed
}
do_regrow() {
	stat _rg regrows
	wait_for 140 regrown_since "$_rg" ||
		echo "# $OPC: no regrow in 140 s"
	put 0 $SYS/$OPC/reclaim
	wait_for 10 quiet
	true
}
do_reset() { put 1 $DBG/$OPC/reset; }
pm_cycle() { # pm_cycle STATE
	put freezer /sys/power/pm_test && put "$1" /sys/power/state
	_rc=$?
	put none /sys/power/pm_test
	return $_rc
}
do_suspend() { pm_cycle freeze; }
do_hibernate() { pm_cycle disk; }
do_detach() { rmmod nvme_hmb_mock; }

# alloc_loop WHAT PREP DO [MAXK]: for K = 1, 2, ...: PREP, fail the
# engine's K-th allocation from then, DO; everything sane and recovered
# after each.  Ends at the first K that DO did not reach (ALLOCS is then
# how many allocations DO made), or after MAXK.
alloc_loop() {
	_what=$1 _k=1 _bad=0 _h0=$(hits)
	while [ -z "${4:-}" ] || [ $_k -le "$4" ]; do
		$2 || { echo "# $_what: cannot prepare for K=$_k"; return 1; }
		arm_alloc $_k
		_limrc=0
		$3
		alloc_injected && _inj=1 || _inj=0
		disarm_alloc
		if [ "$_limrc" = 1 ] && [ "$_inj" = 0 ]; then
			echo "# $_what K=$_k: limit_mib failed with nothing injected: '$_limerr'"
			_bad=1
		fi
		if ! loaded nvme_hmb_mock; then
			# A load that failed must have failed for the
			# allocation made to fail, and left nothing.
			if [ "$3" = do_load ] && { [ "$_inj" = 0 ] ||
			   [ -d $SYS/mock0 ] || ! held_ok ||
			   [ "${_loaderr#*Cannot allocate memory}" = "$_loaderr" ]; }; then
				echo "# $_what K=$_k: the load failed uninjected, or not with ENOMEM, or left state: '$_loaderr'"
				_bad=1
			fi
			fresh || _bad=1
		fi
		after "$_what K=$_k" $OPC || _bad=1
		[ $_inj = 1 ] || break
		_k=$((_k + 1))
		if [ $_k -gt 40 ]; then
			echo "# $_what: allocation $_k still reached"
			return 1
		fi
	done
	ALLOCS=$((_k - 1))
	echo "# $_what: $ALLOCS allocation(s) failed in turn; sites $(sites_hit "$_h0")"
	[ $_bad = 0 ]
}

# cmd_loop WHAT PREP DO [STATUS...]: for each status (default: all) and
# SKIP = 0, 1, ...: PREP, fail OPC's (SKIP+1)-th Set Features with it,
# DO; everything sane and recovered after each.  The first status runs
# until a SKIP that DO does not reach, which gives the count of commands
# DO sends; the others fail each of those (with _loose=1, those that DO
# reaches: reclaim makes one round or more, as the shrinker asks).
_loose=0
cmd_loop() {
	_what=$1 _prep=$2 _do=$3 _bad=0 _runs=0 _nr=''
	shift 3
	for _s in ${*:-$STATUSES}; do
		_k=0
		while [ -z "$_nr" ] || [ $_k -lt "$_nr" ]; do
			$_prep || { echo "# $_what: cannot prepare"; return 1; }
			arm_cmd $OPC $_k $_s
			_limrc=0
			$_do
			cmd_injected $OPC && _inj=1 || _inj=0
			disarm_cmd $OPC
			if [ "$_limrc" = 1 ] && [ "$_inj" = 0 ]; then
				echo "# $_what: limit_mib failed with nothing injected: '$_limerr'"
				_bad=1
			fi
			_runs=$((_runs + 1))
			after "$_what, command $((_k + 1)) answered $_s" $OPC ||
				_bad=1
			if [ $_inj = 0 ]; then
				[ -z "$_nr" ] || [ "$_loose" = 1 ] ||
					{ echo "# $_what: command $((_k + 1)) not reached with $_s"; _bad=1; }
				break
			fi
			_k=$((_k + 1))
			[ $_k -le 10 ] || { echo "# $_what: command $_k still reached"; return 1; }
		done
		[ -n "$_nr" ] || _nr=$_k
	done
	echo "# $_what: $_nr Set Features, each failed with: ${*:-$STATUSES} ($_runs runs)"
	[ $_bad = 0 ] && [ "$_nr" -gt 0 ]
}

# --- allocations ---

# Module init: each allocation failed makes the load fail, cleanly.  The
# four sites of init (wq, regrow_wq, sysfs, shrinker) come in that order.
init_loop() {
	_k=1
	while :; do
		unload || return 1
		if modprobe nvme_hmb $ENGINE fail_alloc=1,100,$_k,1 2>/dev/null; then
			alloc_injected && { echo "# load survived failure $_k"; return 1; }
			disarm_alloc
			break
		fi
		if [ -d $SYS ] || [ -d $FI ] || loaded nvme_hmb; then
			echo "# failed load $_k left $SYS, $FI or the module behind"
			return 1
		fi
		_k=$((_k + 1))
		[ $_k -le 20 ] || return 1
	done
	echo "# module init: $((_k - 1)) allocation(s) failed in turn, each failing the load cleanly"
	eq $((_k - 1)) 4
}
check "load: each of the 4 init allocations failed in turn fails the load cleanly" \
	init_loop
H0=$(hits)

prep_unloaded() { disarm_alloc && { ! loaded nvme_hmb_mock || rmmod nvme_hmb_mock; }; }
some() { alloc_loop "$@" && [ "$ALLOCS" -gt 0 ]; }
none() { alloc_loop "$@" && eq "$ALLOCS" 0; }
OPC=mock0
check "setup at load (attach, build): each allocation failed in turn" \
	some setup prep_unloaded do_load
check "resize down: each allocation failed in turn" \
	some "resize down" prep_full do_down
check "resize up, adding buffers: each allocation failed in turn" \
	some "resize up" prep_small do_up
OPC=mock1
check "resize up, building a fresh set (HMMAXD): each allocation failed in turn" \
	some "fresh set" prep_small do_up
OPC=mock0
check "reclaim: each allocation failed in turn (trims only: none)" \
	none reclaim prep_full do_reclaim
check "regrow: each allocation failed in turn" \
	some regrow prep_regrow do_regrow
check "reset: returns the buffer without allocating" none reset prep_full do_reset
check "suspend and resume: no allocation" none suspend prep_full do_suspend
# Twenty seconds a cycle on the debug kernel (the image is preallocated,
# and five seconds of pm_test delay): the first three allocations of the
# wake-up, which are its three sites (list, chunks, chunk).
check "hibernation: the wake-up's first three allocations failed in turn" \
	alloc_loop hibernation prep_full do_hibernate 3
check "detach: no allocation" none detach prep_full do_detach

every_site() {
	echo "# faults made per site since load: $(sites_hit "$H0")"
	_miss=$(hits | awk '{ for (i = 1; i < NF; i += 2)
		if ($(i + 1) == 0 && $i !~ /^(wq|regrow_wq|sysfs|shrinker|contig)$/)
			printf "%s ", $i }')
	[ -z "$_miss" ] || { echo "# never failed: $_miss"; return 1; }
}
check "every site of attach and build failed at least once (contig: nvme_hmb_emu_pci, behind an IOMMU)" \
	every_site

# --- commands ---

OPC=mock0
check "setup: each command failed with each status" \
	cmd_loop setup prep_off do_setup
check "resize down: each command failed with each status" \
	cmd_loop "resize down" prep_full do_down
check "resize up: each command failed with each status" \
	cmd_loop "resize up" prep_small do_up
OPC=mock1
check "resize up by a fresh set: each command failed with each status" \
	cmd_loop "fresh set" prep_small do_up
OPC=mock0
loose() { _loose=1; "$@"; _lr=$?; _loose=0; return $_lr; }
check "reclaim: each command failed with each status" \
	loose cmd_loop reclaim prep_full do_reclaim
check "reset: each command failed with each status" \
	cmd_loop reset prep_full do_reset
check "suspend and resume: each command failed with each status" \
	cmd_loop suspend prep_full do_suspend
# Twenty seconds a cycle: two kinds only, refused and lost (the wake-up's
# enable is setup's, failed above with every kind).
check "hibernation: each command failed, refused and lost" \
	cmd_loop hibernation prep_full do_hibernate 0x4002 -110

# A removal whose disable fails leaves the memory with the controller for
# good, and the mock keeps its device; the other controller's is freed.
# At 4 MiB, so that what stays behind is small.
# stays MARK: the mocks that kept their device since MARK, a line of the
# kernel log (counts of lines stop moving once the ring buffer is full)
stays() {
	dmesg | awk -v m="$1" 'seen && /the device stays/ { n++ }
		index($0, m) { seen = 1 } END { print n + 0 }'
}
leaves() { # leaves HOW...: remove the mocks after HOW; mock0's memory stays
	fresh && put 4 $SYS/mock0/limit_mib || return 1
	_mk="nvme-hmb-faults-mark $$.$LEAKED"
	echo "$_mk" > /dev/kmsg
	"$@"
	# What mock0 holds: all but mock1's (enabled, so sysfs sizes it).
	r _nd1 $SYS/mock1/nr_descs
	read -r _a0 _b0 < $FI/dma_held
	_kept=$((_a0 - LEAKED - _nd1 - 1))
	rmmod nvme_hmb_mock || return 1
	read -r _a1 _b1 < $FI/dma_held
	[ $_kept -ge 2 ] && eq $((_a1 - LEAKED)) $_kept &&
	eq "$(stays "$_mk")" 1 || return 1
	LEAKED=$_a1
}
detach_cmd() {
	for _s in 0x6 -110 -5; do
		leaves arm_cmd mock0 0 "$_s" || { echo "# ... answered $_s"; return 1; }
	done
	echo "# leaked on purpose: $LEAKED allocations"
}
check "removal whose disable fails: the memory stays with the controller" detach_cmd

# --- misbehaving controllers ---

OPC=mock0
get_fails() {
	fresh && stat _cf cmd_failures && put 0x6 $DBG/mock0/fail_next_get || return 1
	do_limit 4
	stat _cf1 cmd_failures
	r _fg $DBG/mock0/fail_next_get
	eq "$_fg" 0 && eq "$_cf1" $((_cf + 1)) && fits mock0 && eq "$ST" enabled &&
	sane && recover mock0
}
check "Get Features failing after an enable: counted, the HMB stays" get_fails

get_lies() {
	fresh && stat _vm verify_mismatches && put 1 $DBG/mock0/get_lies || return 1
	do_limit 4
	stat _vm1 verify_mismatches
	r _l $DBG/mock0/lies
	eq "$_l" 1 && eq "$_vm1" $((_vm + 1)) && sane && recover mock0
}
check "Get Features answering wrong attributes: counted, nothing changes" get_lies

late_disable() {
	fresh && r _ld $DBG/mock0/late_done && put 500 $DBG/mock0/late_ms ||
		return 1
	read -r _a0 _b0 < $FI/dma_held
	do_limit 4
	# Until the reset, the memory is the controller's: nothing freed.
	read -r _a1 _b1 < $FI/dma_held
	fits mock0 && eq "$ST" failed && eq "$_b1" "$_b0" || return 1
	sleep 1
	r _ld1 $DBG/mock0/late_done && r _e $DBG/mock0/ehm
	eq "$_ld1" $((_ld + 1)) && eq "$_e" 0 && sane && recover mock0
}
check "a disable completing after the host gave up: memory kept until the reset" \
	late_disable

late_enable() {
	prep_off && r _ld $DBG/mock0/late_done && put 500 $DBG/mock0/late_ms ||
		return 1
	do_limit 16
	# Taken back before freed: the late enable went first, then the
	# engine's disable.
	r _ld1 $DBG/mock0/late_done
	eq "$_ld1" $((_ld + 1)) && fits mock0 && eq "$ST" off && sane &&
	recover mock0
}
check "an enable completing after the host gave up: disabled before freed" \
	late_enable

silent_never() {
	fresh && put 1 $DBG/mock0/silent_reset || return 1
	do_limit 4
	sane && recover mock0
}
check "a reset never reported: resizes still work" silent_never

silent_late() {
	fresh && r _mr $DBG/mock0/mr_returns && put 1 $DBG/mock0/silent_reset ||
		return 1
	sleep 1
	put 1 $DBG/mock0/reset
	r _mr1 $DBG/mock0/mr_returns
	eq "$_mr1" $((_mr + 1)) && sane && recover mock0
}
check "a reset reported late: the buffer returned (MR=1)" silent_late

die_reset() {
	fresh && put 1 $DBG/mock0/die || return 1
	do_limit 4
	r _d $DBG/mock0/die
	eq "$_d" 2 && fits mock0 && eq "$ST" failed || return 1
	if echo 16 > $SYS/mock0/limit_mib 2>/dev/null; then
		echo "# resized a failed HMB"
		return 1
	fi
	sane && recover mock0
}
check "a controller dying mid-command: memory kept, back after a reset" die_reset

# Dying while turned off (the disable taken, never completed): what stays
# behind is the 4 MiB set, not a grown one; every byte leaked here is
# missing for the memory hog of nvme_hmb_pressure, later in the same VM.
dies() { put 1 $DBG/mock0/die && do_limit 0; }
check "a controller dying, then removed: its memory is never freed" leaves dies

ksft_end
