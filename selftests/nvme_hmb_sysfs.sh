#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb sysfs selftest (TAP 13): the per-controller files of
# /sys/kernel/nvme_hmb/<name>/ on three mock controllers, checked against
# the mock's own view in debugfs (/sys/kernel/debug/nvme_hmb_mock/<name>/).
#
# Exit: 0 all passed, 1 a test failed, 4 skipped (not root, or the modules
# are not installed).

. "$(dirname "$0")/ksft_lib"

ksft_begin 64

# Three drives: KIOXIA BG5-like, Crucial P3 Plus-like, and one HMMAXD 8.
# reclaim_plenty=Y: drop_caches is the races' reclaim work.
modprobe nvme_hmb default_limit_mib=128 reclaim_plenty=Y
modprobe nvme_hmb_mock nr_ctrls=3 hmpre=16384,8192,51200 \
	hmmin=3584,8192,823 hmminds=1,512,0 hmmaxd=1024,16,8
check "three controller directories" \
	test -d $SYS/mock0 -a -d $SYS/mock1 -a -d $SYS/mock2

modes_ok() {
	for f in hmpre_kib hmmin_kib hmminds_kib hmmaxd size_kib held_kib \
		 nr_descs state reason last_error; do
		eq "$(stat -c %a $SYS/mock0/$f)" 444 || return 1
	done
	for f in limit_mib reclaim reclaim_floor_mib; do
		eq "$(stat -c %a $SYS/mock0/$f)" 644 || return 1
	done
}
check "file modes (0444; limit_mib, reclaim, reclaim_floor_mib 0644)" \
	modes_ok

# device: each directory links to its own controller's device (the mock's
# platform device), one device per directory.
devices_ok() {
	_seen=
	for _c in mock0 mock1 mock2; do
		[ -L $SYS/$_c/device ] || { echo "# $_c: no device link"; return 1; }
		_d=$(readlink -f $SYS/$_c/device)
		case "$_d" in
		/sys/devices/platform/nvme_hmb_mock.*) ;;
		*) echo "# $_c: device is $_d"; return 1 ;;
		esac
		[ -d "$_d" ] && [ "${_seen#* $_d }" = "$_seen" ] ||
			{ echo "# $_c: $_d missing or shared"; return 1; }
		_seen="$_seen $_d "
	done
}
check "a device link per controller, to its own device" devices_ok

ident_ok() {
	eq "$(val $SYS/mock1/hmpre_kib)" 32768 &&
	eq "$(val $SYS/mock1/hmmin_kib)" 32768 &&
	eq "$(val $SYS/mock1/hmminds_kib)" 2048 &&
	eq "$(val $SYS/mock1/hmmaxd)" 16
}
check "Identify fields agree with the mock parameters" ident_ok

profile() { # profile NAME SIZE_KIB NR_DESCS REASON
	eq "$(val $SYS/$1/size_kib)" "$2" &&
	eq "$(val $SYS/$1/held_kib)" "$2" &&
	eq "$(val $SYS/$1/nr_descs)" "$3" &&
	eq "$(val $SYS/$1/reason)" "$4" && agree "$1"
}
check "BG5-like: 64 MiB in 16 descriptors, granted" \
	profile mock0 65536 16 granted
check "P3 Plus-like: 32 MiB in 8 descriptors, granted" \
	profile mock1 32768 8 granted
check "HMMAXD 8: 8 descriptors of 4 MiB, limited by HMMAXD" \
	profile mock2 32768 8 hmmaxd

# reason is one token and a newline (Documentation/ABI/testing/
# sysfs-kernel-nvme_hmb); last_error is 0 unless a Set Features failed.
tokens_ok() {
	for _c in mock0 mock1 mock2; do
		_r=$(cat $SYS/$_c/reason) || return 1
		case $_r in
		[a-z]*[!a-z0-9-]* | [!a-z]* | *- | '')
			echo "# $_c: reason '$_r' is not a token"; return 1 ;;
		esac
		eq "$(wc -l < $SYS/$_c/reason)" 1 &&
		eq "$(val $SYS/$_c/last_error)" 0 || return 1
	done
}
check "reason is one token a line, last_error 0" tokens_ok

resize() { # resize NAME MIB SIZE_KIB STATE
	echo "$2" > $SYS/$1/limit_mib || return 1
	eq "$(val $SYS/$1/limit_mib)" "$2" &&
	eq "$(val $SYS/$1/size_kib)" "$3" &&
	eq "$(val $SYS/$1/state)" "$4" && agree "$1"
}
check "resize down to 32 MiB" resize mock0 32 32768 enabled
check "resize down to 20 MiB" resize mock0 20 20480 enabled
check "resize to 0: off" resize mock0 0 0 off
check "off holds nothing" eq "$(val $SYS/mock0/held_kib)" 0
check "limit 0 gives its reason" eq "$(val $SYS/mock0/reason)" limit-zero
check "resize back up to 48 MiB" resize mock0 48 49152 enabled
check "resize up to 128 MiB: all of HMPRE" resize mock0 128 65536 enabled
check "P3 Plus below HMMIN: off" resize mock1 16 0 off
check "below HMMIN gives its reason" eq "$(val $SYS/mock1/reason)" \
	hmmin-above-limit
check "P3 Plus back at 32 MiB" resize mock1 32 32768 enabled
check "back enabled: granted again" eq "$(val $SYS/mock1/reason)" granted

stats_ok() {
	for k in enables disables resizes alloc_failures cmd_failures \
		 mr_enables mr_refusals resets verify_mismatches setup_us \
		 reclaims pages_reclaimed regrows suspends resumes \
		 sleeps_kept; do
		grep -qx "[0-9][0-9]*" $SYS/mock0/stats/$k || {
			echo "# stats/$k: missing or not a number"
			return 1
		}
		eq "$(stat -c %a $SYS/mock0/stats/$k)" 444 || return 1
	done
	eq "$(ls $SYS/mock0/stats | wc -l)" 16 &&
	eq "$(stat_of mock0 resizes)" 3
}
check "stats has every key, resizes counted" stats_ok

# Hostile writes: each must fail and change nothing.
snapshot() {
	echo "$(val $SYS/mock0/limit_mib) $(val $SYS/mock0/size_kib)" \
	     "$(val $SYS/mock0/state) $(val $DBG/mock0/hsize)" \
	     "$(val $DBG/mock0/set_cmds) $(val $SYS/mock0/reclaim)" \
	     "$(val $SYS/mock0/reclaim_floor_mib)"
}
long=$(head -c 3000 /dev/zero | tr '\0' 9)
hostile() { # hostile DESCRIPTION VALUE [FILE]
	before=$(snapshot)
	if printf '%s' "$2" > $SYS/mock0/${3:-limit_mib} 2>/dev/null; then
		echo "# write of $1 succeeded"
		return 1
	fi
	eq "$(snapshot)" "$before"
}
check "rejects a bare newline" hostile newline "
"
check "rejects letters" hostile letters abc
check "rejects trailing garbage" hostile garbage 12abc
check "rejects a negative number" hostile negative -1
check "rejects 2^64" hostile 2^64 18446744073709551616
check "rejects a 3000-digit number" hostile huge "$long"
check "rejects hex" hostile hex 0x10
check "rejects a plus sign" hostile plus +5
check "rejects leading space" hostile space " 5"
check "rejects above 1 TiB (1048577)" hostile range 1048577
check "rejects a float" hostile float 1.5
check "reclaim rejects 2" hostile "reclaim 2" 2 reclaim
check "reclaim rejects 'yes'" hostile "reclaim yes" yes reclaim
check "reclaim_floor_mib rejects -5" hostile floor-neg -5 reclaim_floor_mib
check "reclaim_floor_mib rejects 2^64" hostile floor-big \
	18446744073709551616 reclaim_floor_mib
# Bytes a shell variable cannot hold, written with printf's octal escapes.
# (A write of zero bytes never reaches the store method: sysfs returns 0
# before calling it, so there is nothing to test there.)
hostile_raw() { # hostile_raw DESCRIPTION PRINTF-FORMAT [FILE]
	before=$(snapshot)
	if printf "$2" > $SYS/mock0/${3:-limit_mib} 2>/dev/null; then
		echo "# write of $1 succeeded"
		return 1
	fi
	eq "$(snapshot)" "$before"
}
check "rejects a lone NUL byte" hostile_raw NUL '\000'
check "rejects a number followed by NUL and garbage" \
	hostile_raw "5 NUL abc" '5\000abc'
check "reclaim rejects 0 followed by NUL" hostile_raw "reclaim 0 NUL" \
	'0\000' reclaim
check "read-only files refuse writes" \
	write_refused 1 $SYS/mock0/size_kib "Permission denied"
check "module parameter rejects garbage" \
	write_refused 12abc /sys/module/nvme_hmb/parameters/default_limit_mib \
	"Invalid argument"
# Decimal only: "010" is ten, never eight; hex and signs are refused, and
# a refused write leaves the value as it was.
P=/sys/module/nvme_hmb/parameters
param_dec() { # param_dec FILE: decimal only, the old value kept on refusal
	_old=$(cat $P/$1)
	write_refused 0x10 $P/$1 "Invalid argument" &&
	write_refused +16 $P/$1 "Invalid argument" &&
	eq "$(cat $P/$1)" "$_old" &&
	put 010 $P/$1 && eq "$(cat $P/$1)" 10 && put "$_old" $P/$1
}
check "default_limit_mib is decimal only" param_dec default_limit_mib
check "max_chunk_kib is decimal only" param_dec max_chunk_kib
check "regrow_quiet_sec is decimal only" param_dec regrow_quiet_sec
check "regrow_quiet_sec refuses 0" \
	write_refused 0 $P/regrow_quiet_sec "out of range"
check "no violations after hostile input" eq "$(val $DBG/mock0/violations)" 0

# Races: resizes from four writers at once, with the engine's own reclaim
# work (drop_caches) in between; the end state must be consistent.
racer() { # racer SEED
	_i=0
	while [ $_i -lt 25 ]; do
		echo $(( (_i * 7 + $1 * 13) % 80 )) > $SYS/mock0/limit_mib
		cat $SYS/mock0/size_kib $SYS/mock0/stats/* > /dev/null
		_i=$((_i + 1))
	done 2>/dev/null
}
race_ok() {
	racer 1 & racer 2 & racer 3 & racer 4 &
	echo 2 > /proc/sys/vm/drop_caches
	wait
	# The shrinker only queues its request; the reclaim work, which
	# retries while a resize holds the lock, may still shrink mock0 after
	# the writers are done.  Turning reclaim off takes the lock, and the
	# work finds it off from then on: the end state is the limit's.
	echo 0 > $SYS/mock0/reclaim &&
	echo 64 > $SYS/mock0/limit_mib &&
	eq "$(val $SYS/mock0/size_kib)" 65536 && agree mock0 &&
	echo 1 > $SYS/mock0/reclaim
}
check "concurrent resizes and reclaim end consistent" race_ok

# Controllers removed while a reader holds a file open.
exec 3< $SYS/mock0/size_kib
exec 4< $SYS/mock2/stats/resizes
racer 5 &
check "rmmod with files held open, a writer running" rmmod nvme_hmb_mock
wait
check "directories gone" test ! -e $SYS/mock0 -a ! -e $SYS/mock2
# held_read_gone: a read of the file held open (fd 3) fails with ENODEV
held_read_gone() {
	if _err=$(cat <&3 2>&1 >/dev/null); then
		echo "# the read succeeded"
		return 1
	fi
	case "$_err" in
	*"No such device"*) return 0 ;;
	esac
	echo "# the read failed, but not with ENODEV: $_err"
	return 1
}
check "reading a held file after removal fails with ENODEV" held_read_gone
exec 3<&- 4<&-

# Out of the box: no default_limit_mib.  "auto" is at least nvme-pci's
# 128 MiB cap on any machine (this guest has 2 GiB, whose 1/64 is 32), so
# no drive gets less than Linux gives it.
check "rmmod nvme_hmb" rmmod nvme_hmb
modprobe nvme_hmb
modprobe nvme_hmb_mock nr_ctrls=3 hmpre=16384,8192,51200 \
	hmmin=3584,8192,823 hmminds=1,512,0 hmmaxd=1024,16,8
check "default_limit_mib is auto" \
	eq "$(cat /sys/module/nvme_hmb/parameters/default_limit_mib)" auto
check "auto limit is at least 128 MiB" \
	test "$(val $SYS/mock0/limit_mib)" -ge 128
check "out of the box, BG5-like and P3 Plus-like get what Linux gives" \
	sh -c "[ \$(cat $SYS/mock0/size_kib) = 65536 ] &&
	       [ \$(cat $SYS/mock1/size_kib) = 32768 ]"
# Grown with HMMAXD 8 from 26 MiB (6 x 4 + 2, 7 descriptors): a fresh set
# of 8 x 4 MiB, not 30 MiB from adding one more buffer.
check "HMMAXD 8 at 26 MiB: 7 descriptors" \
	sh -c "echo 26 > $SYS/mock2/limit_mib &&
	       [ \$(cat $SYS/mock2/nr_descs) = 7 ]"
check "grown to 128 MiB: 32 MiB in 8, as a fresh setup" \
	sh -c "echo 128 > $SYS/mock2/limit_mib &&
	       [ \$(cat $SYS/mock2/size_kib) = 32768 ] &&
	       [ \$(cat $SYS/mock2/nr_descs) = 8 ]"
mock2_dev=$(basename "$(readlink -f $SYS/mock2/device)")
rmmod nvme_hmb_mock

# ctrl_limit_mib: limits per controller that hold from the attach on (what
# /etc/modprobe.d keeps across reboots), by the controller's name or by
# the device it does DMA through; a bad list is refused whole.
R=/sys/module/nvme_hmb/parameters/ctrl_limit_mib
check "rmmod nvme_hmb (ctrl_limit_mib)" rmmod nvme_hmb
modprobe nvme_hmb default_limit_mib=128 ctrl_limit_mib=mock0=32,mock1=0
modprobe nvme_hmb_mock nr_ctrls=3 hmpre=16384,8192,51200 \
	hmmin=3584,8192,823 hmminds=1,512,0 hmmaxd=1024,16,8
check "ctrl_limit_mib reads back its rules" eq "$(cat $R)" "mock0=32,mock1=0"
check "ctrl_limit_mib by name: mock0 attached at 32 MiB, mock1 off" \
	sh -c "[ \$(cat $SYS/mock0/limit_mib) = 32 ] &&
	       [ \$(cat $SYS/mock0/size_kib) = 32768 ] &&
	       [ \$(cat $SYS/mock0/stats/enables) = 1 ] &&
	       [ \$(cat $SYS/mock1/limit_mib) = 0 ] &&
	       [ \$(cat $SYS/mock1/size_kib) = 0 ] &&
	       [ \$(cat $SYS/mock1/reason) = limit-zero ]"
check "ctrl_limit_mib: a controller no rule names gets default_limit_mib" \
	eq "$(val $SYS/mock2/limit_mib)" 128
rules_refused() { # rules_refused: every bad list refused, the rules kept
	for _v in mock0 =32 mock0= mock0=0x20 mock0=+1 "mock0=32," ",mock0=32" \
		"mock0=32,,mock1=1" "mock0=32,mock0=64" "mock 0=32" \
		"mock/0=32" "mock0=3=2"; do
		write_refused "$_v" $R "Invalid argument" || return 1
	done
	write_refused mock0=1048577 $R "out of range" &&
	write_refused a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,p=1,q=1 \
		$R "Argument list too long" &&
	eq "$(cat $R)" "mock0=32,mock1=0"
}
check "ctrl_limit_mib refuses bad lists and keeps its rules" rules_refused
# A rule set now applies to controllers attached from now on; by the DMA
# device's name (the mock's platform device; its automatic id is the
# lowest free one, so the same as mock2's before).
check "ctrl_limit_mib set at run time" put "$mock2_dev=16" $R
check "ctrl_limit_mib leaves attached controllers alone" \
	eq "$(val $SYS/mock0/limit_mib)" 32
rmmod nvme_hmb_mock
modprobe nvme_hmb_mock nr_ctrls=3 hmpre=16384,8192,51200 \
	hmmin=3584,8192,823 hmminds=1,512,0 hmmaxd=1024,16,8
check "ctrl_limit_mib by DMA device: $mock2_dev attached at 16 MiB" \
	sh -c "[ \$(basename \$(readlink -f $SYS/mock2/device)) = $mock2_dev ] &&
	       [ \$(cat $SYS/mock2/limit_mib) = 16 ] &&
	       [ \$(cat $SYS/mock2/size_kib) = 16384 ] &&
	       [ \$(cat $SYS/mock0/limit_mib) = 128 ]"
check "ctrl_limit_mib cleared by an empty write" \
	sh -c "echo > $R && [ -z \"\$(cat $R)\" ]"
rmmod nvme_hmb_mock

ksft_end
