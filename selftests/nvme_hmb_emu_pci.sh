#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu emu-iommu
# nvme-hmb-kernel: debug stock stock-6.12 newest arm64
#
# nvme_hmb_pci end to end on the emulated DRAM-less drive (qemu/), a
# controller that takes the HMB and uses it: every access of the drive to
# its map in the buffer is checked, so memory freed or reused while the
# controller may still use it shows up as a violation (or, behind
# intel-iommu, a DMA error).
#
#  1. hand-over with nvme-pci's HMB enabled, I/O running: take_over=0
#     leaves it alone; insmod takes it over (nvme-pci disables and frees
#     its own); nvme reset, a resume and real S3 do not let nvme-pci take
#     it back; rmmod hands it back (nvme-pci sets its own up again); a
#     refused controller (debugfs) is handed back and stays nvme-pci's;
#     with a CMA area, CmaFree shows nvme-pci's HMB taken out of it and
#     nvme-hmb's not;
#  2. hand-over with nvme.max_host_mem_size_mb=0: nvme-hmb sets it up;
#  3. resizes under I/O, data compared;
#  4. nvme reset racing with resizes: nothing is sent while nvme-pci
#     resets the controller;
#  5. a late reset report (the engine already gave the buffer back): the
#     next shrink really disables before it frees;
#  6. reclaim (drop_caches, reclaim_plenty=Y) and regrow; behind an
#     IOMMU, the contiguous buffer that cannot be had (fault injection):
#     at setup, and at a reclaim that must keep the HMB whole;
#  7. system sleep: pm_test levels, and with NVME_HMB_REAL_S3=1 five real
#     S3 cycles in a row (nvme-pci resets the controller on resume);
#  8. PCI unbind/bind and rmmod/modprobe with the HMB enabled;
#  9. resets: one the kretprobe misses (nvme-pci's own HMB taken over
#     again), one reported while the next waits for Identify, one a
#     detach waits for (Identify late), one nvme-pci gives up (Identify
#     fails: the controller is gone, its memory freed without a command).
# After every step, size_kib/nr_descs agree with Get Features 0Dh and the
# drive has seen no violation and no DMA error.
#
# Destructive to the first 16 MiB of the namespace.  Exit: 0 all passed,
# 1 a test failed, 4 skipped (not root, nvme_hmb_pci not installed, or the
# controller is not the emulated drive).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

ksft_header nvme_hmb_pci
device_guard
if ! emu_present; then
	echo "1..0 # SKIP $CTRL is not the emulated DRAM-less drive"
	exit $KSFT_SKIP
fi
NR_S3=5
echo "1..$((148 + 40 + 3 * NR_S3))"

QUIET=10
BDF=$(basename "$(readlink -f /sys/class/nvme/$CTRL/device)")
D=$SYS/$CTRL
modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null

load_hmb() {
	modprobe nvme_hmb default_limit_mib=128 regrow_quiet_sec=$QUIET &&
	modprobe nvme_hmb_pci && wait_for 10 test -d "$D"
}
state_is() { [ "$(val "$D/state")" = "$1" ]; }
reason_is() { [ "$(val "$D/reason")" = "$1" ]; }
size_is() { [ "$(val "$D/size_kib")" = "$1" ]; }
timeline() {
	echo "# $1: state $(val "$D/state") size_kib $(val "$D/size_kib")" \
	     "nr_descs $(val "$D/nr_descs") reason '$(val "$D/reason")'" \
	     "GF ehm $(feat ehm) hsize $(feat hsize) hmdlec $(feat hmdlec)" \
	     "drive hits $(emu hits) violations $(emu violations)" \
	     "dma_errors $(emu dma_errors)"
}
FOREIGN=foreign
io_loop() { # io_loop FIRST COUNT: COUNT io_ok rounds from 64 KiB block FIRST
	_i=0
	while [ $_i -lt "$2" ]; do
		T=$T.bg io_ok $(($1 + (_i % 4) * 16)) || return 1
		_i=$((_i + 1))
	done
}

# --- 1. hand-over from nvme-pci and back, I/O running ---------------------
# Where each driver's HMB comes from, when the kernel has a CMA area (the
# debug kernel's emulated drives boot with cma=64M): nvme-pci's
# dma_alloc_coherent() takes its buffers out of the area first (without
# an IOMMU), nvme-hmb's pages never.  Movable pages may borrow the area
# (the page cache, and the tmpfs files io_ok compares, 2 MiB): CmaFree is
# read with those files gone and the caches dropped.  nvme-pci's HMB takes
# the whole area.  What nvme-hmb's allocation takes out of CmaFree says
# nothing of its own pages: the compaction that builds its large chunks
# may migrate movable pages (the initramfs' tmpfs, which no drop_caches
# frees) into the area's free pages (CmaFree fell by 4 MiB at a take-over
# on Debian's 7.3, by 30 MiB in another run on the same kernel).  Where
# its pages are is told when it frees them: a shrink by 48 MiB gives
# nothing back to the area (section 5).
cma_free() {
	rm -f "$T/pat" "$T/back" "$T.bg/pat" "$T.bg/back"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk '/^CmaFree:/ { print $2 }' /proc/meminfo
}
cma_skip=
[ "$(awk '/^CmaTotal:/ { print $2 }' /proc/meminfo)" -gt 0 ] 2>/dev/null ||
	cma_skip="no CMA area on $(uname -r) (CONFIG_DMA_CMA and cma=)"
check "reload nvme without an HMB (CmaFree with none)" \
	reload_nvme max_host_mem_size_mb=0
cma_none=$(cma_free)
check "reload nvme with its default cap" reload_nvme
cma_linux=$(cma_free)
check "nvme-pci enabled its HMB" eq "$(feat ehm)" 1
linux_hsize=$(feat hsize)
linux_hmdlec=$(feat hmdlec)
# The shape of nvme-pci's own buffer: from Linux 6.13 one IOVA-contiguous
# allocation (dma_alloc_noncontiguous()) where an IOMMU can merge pages,
# so one descriptor; otherwise, and before 6.13 everywhere, blocks of at
# most 4 MiB (the drive's 64 MiB: 16 or more).
pci_shape() {
	_v=$(uname -r | sed -n 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $_v
	if [ -e "/sys/class/nvme/$CTRL/device/iommu_group" ] &&
	   { [ "$1" -gt 6 ] || { [ "$1" = 6 ] && [ "$2" -ge 13 ]; }; }; then
		eq "$linux_hmdlec" 1
	else
		[ "$linux_hmdlec" -ge 16 ] 2>/dev/null ||
			{ echo "# HMDLEC '$linux_hmdlec', 16 or more expected"; return 1; }
	fi
}
check "nvme-pci's HMB: one descriptor behind an IOMMU from 6.13, blocks of 4 MiB else" \
	pci_shape
# theirs: the controller holds nvme-pci's buffer again (the one it set up
# first: same size, same number of entries), nvme-hmb none
theirs() {
	eq "$(feat ehm)" 1 && eq "$(feat hsize)" "$linux_hsize" &&
	eq "$(feat hmdlec)" "$linux_hmdlec" &&
	{ [ ! -d "$D" ] || eq "$(val "$D/size_kib")" 0; } && emu_clean
}
ours() { state_is enabled && size_is 65536 && agree_pci; }
PCI_SETUP="allocated [0-9]+ MiB host memory buffer"
pm_cycle() { # pm_cycle STATE LEVEL
	echo "$2" > /sys/power/pm_test && echo "$1" > /sys/power/state
	_rc=$?
	echo none > /sys/power/pm_test
	[ $_rc = 0 ] || return 1
	wait_for 20 state_is enabled && wait_for 20 test -b "$NS" && agree_pci
}
check "setup: pm_test_delay 1" put 1 /sys/module/suspend/parameters/pm_test_delay

# take_over=0: nvme-pci's is left alone, and dmesg says why
dmesg_mark
check "modprobe nvme_hmb, nvme_hmb_pci take_over=0" \
	sh -c "modprobe nvme_hmb default_limit_mib=128 regrow_quiet_sec=$QUIET && modprobe nvme_hmb_pci take_over=0"
check "nvme-hmb leaves nvme-pci's HMB alone" wait_for 10 reason_is "$FOREIGN"
check "state off while nvme-pci runs it" state_is off
# a user's choice: one line at info level, no warning
said_why() {
	dmesg_has_at 6 "$CTRL: HMB: nvme-pci runs this controller's Host Memory Buffer; nvme-hmb leaves it alone \\(take_over=0\\)" ||
		return 1
	_warn=$(dmesg_ours_at 0-5)
	[ -z "$_warn" ] || { echo "$_warn" | sed 's/^/# /'; return 1; }
}
check "dmesg says so, and why, at info level, no warning" said_why
check "a resize while nvme-pci runs it: refused (busy)" \
	write_refused 64 "$D/limit_mib" "Device or resource busy"
check "nvme-pci's buffer untouched" theirs
check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
check "nvme-pci's buffer untouched by the unload" theirs

# nvme-pci's disable refused by the drive: nvme-pci keeps its HMB
dmesg_mark
check "arm the drive: the next Set Features refused (Invalid Field, DNR)" \
	fault_cmd 1 1 0x4002 0 0
check "modprobe nvme_hmb_pci: nvme-pci's disable is refused" \
	sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "nvme-pci keeps its HMB, and dmesg says why" wait_for 10 dmesg_has \
	"not taken over from nvme-pci: nvme-pci could not let go of it"
check "nvme-hmb sets nothing up beside it" reason_is none
check "nvme-pci's buffer untouched by the refused take-over" theirs
check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
check "nothing handed back: nvme-pci never let go" dmesg_none "handing the Host Memory Buffer back"
# ... carried out, then answered with an error: the controller holds
# nothing, nvme-pci believes its buffer enabled; nothing is set up beside
# it, and nvme-pci's next reset sets its own up again.
dmesg_mark
check "arm the drive: the next Set Features carried out, then Internal Error" \
	fault_cmd 1 1 0x6 1 0
check "modprobe nvme_hmb_pci: nvme-pci's disable carried out, then failed" \
	sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "nvme-pci keeps its HMB (dmesg)" wait_for 10 dmesg_has \
	"not taken over from nvme-pci: nvme-pci could not let go of it"
check "nvme-hmb sets nothing up over the empty controller" \
	sh -c "[ \$(cat $D/state) = off ] && [ \$(cat $D/size_kib) = 0 ]"
check "the controller holds nothing" eq "$(feat ehm)" 0
check "nvme reset: nvme-pci's own again" nvme reset /dev/$CTRL
check "nvme-pci's after the reset" wait_for 20 theirs
check "rmmod nvme_hmb_pci, nvme-pci's left" sh -c "rmmod nvme_hmb_pci"
check "still nvme-pci's" theirs

# nvme-hmb cannot allocate what nvme-pci freed: nvme-pci gets it back
w="no memory for nvme-hmb's: nvme-pci's HMB handed back"
if [ -d $FA ]; then
	# Every request for memory from the N-th on fails: N is raised from
	# 2 until the attach's own requests pass, so that the first to fail
	# is the setup's.  Until then the attach fails, nothing is taken.
	arm_from() { # arm_from N
		put 0 $FA/probability && put 0 $FA/verbose && put 1 $FA/interval &&
		put "$1" $FA/space && put -1 $FA/times && put 100 $FA/probability
	}
	attach_then_fail() {
		_n=2
		while [ $_n -le 10 ]; do
			arm_from $_n || return 1
			modprobe nvme_hmb_pci || return 1
			if [ -d "$D" ]; then
				echo "# the attach's requests passed, the setup's failed (from the ${_n}th)"
				return 0
			fi
			rmmod nvme_hmb_pci || return 1
			_n=$((_n + 1))
		done
		echo "# no attach passed"
		return 1
	}
	dmesg_mark
	check "every request of the setup fails (fault injection)" attach_then_fail
	check "$w" wait_for 20 dmesg_has "no memory for nvme-hmb's; giving nvme-pci its HMB back"
	check "nvme-pci set its own up again" \
		wait_for 20 dmesg_has "allocated 64 MiB host memory buffer"
	disarm_alloc
	check "nvme-pci's after the failed take-over" wait_for 20 theirs
	check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
else
	for t in "every request of the setup fails (fault injection)" \
		 "$w" "nvme-pci set its own up again" \
		 "nvme-pci's after the failed take-over" "rmmod nvme_hmb_pci"; do
		skip "$t" "no fault injection on $(uname -r)"
	done
fi

# insmod takes it over, I/O running
dmesg_mark
dis0=$(emu disables)
en0=$(emu enables)
io_loop 0 6 &
io_pid=$!
check "modprobe nvme_hmb_pci beside I/O" \
	sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "dmesg: nvme-pci let go of its HMB, nvme-hmb takes it over (debug level)" \
	dmesg_has_at 7 "$CTRL: HMB: nvme-pci disabled and freed its 64 MiB Host Memory Buffer; nvme-hmb takes it over"
check "nvme-hmb runs it: enabled, 64 MiB, agreeing" wait_for 10 ours
# like nvme-pci: one line at info level for the controller, what its HMB
# is and why, and nothing else of ours at info level or above
# (16 buffers of 4 MiB, or one IOVA-contiguous buffer behind an IOMMU:
# the count sysfs gives, in the words dmesg uses)
one_info_line() {
	_info=$(dmesg_ours_at 0-6)
	_nd=$(val $D/nr_descs)
	[ "$_nd" = 1 ] && _nd="1 descriptor" || _nd="$_nd descriptors"
	[ "$(echo "$_info" | grep -c .)" = 1 ] &&
		echo "$_info" | grep -qE "^<6>.* $CTRL: HMB enabled: 64 MiB of 64 MiB asked, $_nd, .* \\(granted\\)$" ||
		{ echo "# info and above since the mark:"; echo "$_info" | sed 's/^/#   /'; return 1; }
}
check "dmesg: one line at info level, the HMB and why" one_info_line
check "the drive saw nvme-pci's disable, then nvme-hmb's enable" \
	sh -c "[ $(emu disables) -gt $dis0 ] && [ $(emu enables) -gt $en0 ]"
check "the I/O beside the take-over read back what it wrote" wait $io_pid
timeline "taken over from nvme-pci"
rc_hmb=$(stat_of "$CTRL" reclaims)
cma_hmb=$(cma_free)
# cma_drop AFTER OP KB: the fall of CmaFree from no HMB to AFTER, OP KB
cma_drop() {
	echo "# CmaFree (kB): no HMB ${cma_none:-none}, nvme-pci's ${cma_linux:-none}, nvme-hmb's ${cma_hmb:-none}"
	[ $((cma_none - $1)) "$2" "$3" ]
}
if [ -n "$cma_skip" ]; then
	skip "CMA: nvme-pci's HMB comes out of the CMA area" "$cma_skip"
elif [ -e "/sys/bus/pci/devices/$BDF/iommu_group" ]; then
	skip "CMA: nvme-pci's HMB comes out of the CMA area" \
		"behind an IOMMU nvme-pci's buffer is not CMA's either"
else
	check "CMA: nvme-pci's HMB comes out of the CMA area" \
		cma_drop "$cma_linux" -ge 16384
fi

# nvme-pci does not take it back at a reset or a resume.  Neither is
# news: the same buffer given back is said at debug level only, as
# nvme-pci says nothing of its own then; with our debug messages off, no
# line about the HMB at info level or above.  cma_free's drop_caches
# (sync, echo 3, with plenty of memory free) took nothing: the HMB is
# whole, no reclaim counted, and the drive's Get Features says the same.
HMB_BACK="HMB re-enabled: 64 MiB of 64 MiB asked"
stat_above() { [ "$(stat_of "$CTRL" "$1")" -gt "$2" ]; }
plenty_kept() { ours && eq "$(stat_of "$CTRL" reclaims)" "$rc_hmb"; }
check "drop_caches with plenty free: 64 MiB kept, Get Features agrees" \
	plenty_kept
check "our debug messages off" dyndbg off
dmesg_mark
en0=$(stat_of "$CTRL" enables)
check "nvme reset while nvme-hmb runs it" nvme reset /dev/$CTRL
check "the reset's report gave the buffer back" wait_for 20 stat_above enables "$en0"
check "nvme-hmb's after the reset" wait_for 20 ours
check "dmesg: nothing about the HMB at info level (debug off)" \
	dmesg_none_at 0-6 HMB
check "dmesg: nor at debug level" dmesg_none_at 7 HMB
check "nvme-pci set none of its own up in the reset" dmesg_none "$PCI_SETUP"
check "our debug messages on" dyndbg on
dmesg_mark
en0=$(stat_of "$CTRL" enables)
check "nvme reset, debug messages on" nvme reset /dev/$CTRL
check "the reset noticed (debug level)" \
	wait_for 20 dmesg_has_at 7 "HMB: controller reset noticed"
check "the buffer given back (debug level)" wait_for 20 dmesg_has_at 7 "$HMB_BACK"
check "nvme-hmb's after that reset" wait_for 20 ours
check "dmesg: nothing about the HMB at info level (debug on)" \
	dmesg_none_at 0-6 HMB
check "our debug messages off for a resume" dyndbg off
dmesg_mark
check "mem at pm_test devices while nvme-hmb runs it" pm_cycle mem devices
check "nvme-hmb's after the resume" wait_for 20 ours
check "nvme-pci set none of its own up at the resume" dmesg_none "$PCI_SETUP"
check "dmesg: nothing about the HMB at info level after a resume" \
	dmesg_none_at 0-6 HMB
check "our debug messages on again" dyndbg on
if [ "${NVME_HMB_REAL_S3:-0}" = 1 ]; then
	dmesg_mark
	check "real S3 while nvme-hmb runs it" real_s3
	check "nvme-hmb's after real S3" wait_for 30 ours
	check "nvme-pci set none of its own up after real S3" dmesg_none "$PCI_SETUP"
else
	for w in "real S3 while nvme-hmb runs it" "nvme-hmb's after real S3" \
		 "nvme-pci set none of its own up after real S3"; do
		skip "$w" "real S3 only where NVME_HMB_REAL_S3=1 (the test VM, not behind intel-iommu)"
	done
fi
check "I/O while nvme-hmb runs it" io_ok 64

# The kretprobe misses a reset (all its instances busy; debugfs
# miss_init): nvme-pci sets its own HMB up in it, and the reset's report
# takes it over again before the engine reads what the controller holds.
dmesg_mark
check "the kretprobe lets the next reset go by (debugfs miss_init)" \
	put 1 /sys/kernel/debug/nvme_hmb_pci/miss_init
check "nvme reset" nvme reset "/dev/$CTRL"
check "nvme-pci set its own HMB up in that reset" \
	wait_for 20 dmesg_has "allocated 64 MiB host memory buffer"
check "the reset's report took it over again" wait_for 20 dmesg_has \
	"nvme-pci disabled and freed its 64 MiB Host Memory Buffer; nvme-hmb takes it over"
check "nvme-hmb's again: enabled, 64 MiB, agreeing" wait_for 20 ours
check "miss_init counted down to 0" eq "$(cat /sys/kernel/debug/nvme_hmb_pci/miss_init)" 0
check "I/O after the missed reset" io_ok 80

# rmmod hands it back, I/O running
dmesg_mark
io_loop 0 6 &
io_pid=$!
check "rmmod nvme_hmb_pci beside I/O" rmmod nvme_hmb_pci
check "dmesg: handed back to nvme-pci" \
	dmesg_has "handing the Host Memory Buffer back to nvme-pci"
check "dmesg: nvme-pci set its own up again" \
	wait_for 20 dmesg_has "allocated 64 MiB host memory buffer"
check "nvme-pci's again, as at first" wait_for 20 theirs
check "the I/O beside the hand-back read back what it wrote" wait $io_pid
timeline "handed back to nvme-pci"

# a controller refused is handed back and left with nvme-pci
check "modprobe nvme_hmb_pci: taken over again" \
	sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "nvme-hmb's again" wait_for 10 ours
dmesg_mark
check "refuse $CTRL (debugfs)" put "$CTRL" /sys/kernel/debug/nvme_hmb_pci/refuse
check "refused: detached and handed back" \
	wait_for 20 dmesg_has "allocated 64 MiB host memory buffer"
check "nvme-pci's after the refusal" wait_for 20 theirs
dmesg_mark
check "nvme reset while refused" nvme reset /dev/$CTRL
check "refused again when the reset ends" wait_for 20 dmesg_has "HMB: refused"
check "nvme-pci's after the reset" wait_for 20 theirs
check "lift the refusal" sh -c "echo > /sys/kernel/debug/nvme_hmb_pci/refuse"
check "taken over again" wait_for 20 ours
check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
check "nvme-pci's at the end of the hand-over" wait_for 20 theirs
check "no violation in the hand-over" emu_clean

# --- 2. nvme.max_host_mem_size_mb=0 --------------------------------------
dmesg_mark
check "reload nvme max_host_mem_size_mb=0" reload_nvme max_host_mem_size_mb=0
check "dmesg: nvme-pci's warning about its limit" \
	dmesg_has "min host memory (14 MiB) above limit (0 MiB)"
check "no HMB enabled by nvme-pci" eq "$(feat ehm)" 0
check "modprobe nvme_hmb_pci" sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "nvme-hmb enabled 64 MiB" wait_for 10 size_is 65536
check "sysfs agrees with Get Features" agree_pci
timeline "set up by nvme-hmb"

# --- 3. resizes under I/O -------------------------------------------------
resize_agree() { # resize_agree MIB...: each size, then agreement
	for _m in "$@"; do
		echo "$_m" > "$D/limit_mib" || { echo "# write $_m failed"; return 1; }
		agree_pci || { echo "# after limit_mib $_m"; return 1; }
	done
}
io_loop 64 8 &
io_pid=$!
check "resizes under I/O agree with Get Features" \
	resize_agree 16 48 8 64 24 128 14 32 128
check "the I/O beside them read back what it wrote" wait $io_pid
check "no violation after resizes under I/O" emu_clean

# --- 4. nvme reset racing with resizes ----------------------------------
dmesg_mark
resetter() {
	for _r in 1 2 3 4 5; do
		nvme reset /dev/$CTRL || return 1
		sleep 0.3
	done
}
resetter &
rpid=$!
busy=0 done_=0
# Resize, paced, for as long as the resets go on.
while kill -0 $rpid 2>/dev/null; do
	for m in 16 64 8 128 32 96 24 48; do
		if echo "$m" > "$D/limit_mib" 2>/dev/null; then
			done_=$((done_ + 1))
		else
			busy=$((busy + 1))
		fi
		sleep 0.05
	done
done
echo "# resizes while the controller reset: $done_ done, $busy refused (busy)"
check "five nvme resets beside the resizes" wait $rpid
check "resizes went through between the resets" sh -c "[ $done_ -gt 0 ]"
check "resets noticed" wait_for 20 dmesg_has "HMB: controller reset noticed"
# And resizes aimed at the reset itself: written while nvme-pci says the
# controller is resetting.  Whatever they answer, nothing may reach the
# controller before nvme-pci identified it again (the drive's early_cmds).
aimed=0
tries=0
# Up to ten resets, until three were aimed at: on the debug kernel a
# reset can be over before the loop below sees it.  The state is read
# with the shell's own read and kill (no process started: a fork and exec
# of cat takes longer than the state lasts on the debug kernel).
while [ $aimed -lt 3 ] && [ $tries -lt 10 ]; do
	tries=$((tries + 1))
	nvme reset /dev/$CTRL &
	rpid=$!
	_st=
	# until the reset is seen, or nvme reset (which waits for it) ends
	while kill -0 $rpid 2>/dev/null; do
		read -r _st < /sys/class/nvme/$CTRL/state
		[ "$_st" != resetting ] || break
	done
	if [ "$_st" = resetting ]; then
		aimed=$((aimed + 1))
		echo 16 > "$D/limit_mib" 2>/dev/null
	fi
	wait $rpid
done
echo "# $aimed resizes written while the controller was resetting, in $tries resets"
# On the debug kernel a reset can be over before the loop sees it; the
# resizes refused (busy) above were refused because nvme-pci was
# resetting the controller: aimed at it too.
check "resizes aimed at nvme-pci's resets (written at 'resetting', or refused busy)" \
	sh -c "[ $((aimed + busy)) -gt 0 ]"
check "none of them reached the controller mid-init (early_cmds 0)" \
	eq "$(emu early_cmds)" 0
settle() { echo 128 > "$D/limit_mib" 2>/dev/null && size_is 65536; }
check "back at 64 MiB once the resets are over" wait_for 30 settle
check "sysfs agrees with Get Features after the race" agree_pci
check "no command failed: none sent while nvme-pci was resetting" \
	dmesg_none 'HMB (enable|disable|read-back).* failed'
check "I/O after the race" io_ok 128
timeline "after resets racing resizes"

# --- 5. a late reset report ---------------------------------------------
dmesg_mark
check "report a reset that already passed (debugfs)" \
	sh -c "echo $CTRL > /sys/kernel/debug/nvme_hmb_pci/report_reset"
check "the report came" wait_for 10 dmesg_has "HMB: controller reset noticed"
check "an unknown controller name is refused (no such device)" \
	write_refused nvme99 /sys/kernel/debug/nvme_hmb_pci/report_reset "No such device"
check "the buffer is left enabled" agree_pci
[ -n "$cma_skip" ] || cma_64=$(cma_free)
check "then a shrink to 16 MiB" sh -c "echo 16 > $D/limit_mib"
check "16 MiB in sysfs" eq "$(val "$D/size_kib")" 16384
# cma_back: CmaFree rose by less than 16 MiB when nvme-hmb freed 48 MiB
cma_back() {
	_now=$(cma_free)
	echo "# CmaFree (kB): at 64 MiB $cma_64, at 16 MiB $_now"
	[ $((_now - cma_64)) -lt 16384 ]
}
if [ -n "$cma_skip" ]; then
	skip "CMA: the 48 MiB nvme-hmb freed give nothing back to it" "$cma_skip"
else
	check "CMA: the 48 MiB nvme-hmb freed give nothing back to it" cma_back
fi
check "really disabled, trimmed, enabled: Get Features agrees" agree_pci
check "I/O after the shrink" io_ok 144
check "no violation: nothing was freed under the drive" emu_clean
check "grow back to 128" sh -c "echo 128 > $D/limit_mib && [ \$(cat $D/size_kib) = 65536 ]"
timeline "after the late report"

# --- 6. reclaim and regrow ----------------------------------------------
# Below 64 MiB and enabled again: a reclaim pass disables, trims (or,
# behind an IOMMU, switches to a smaller IOVA-contiguous buffer allocated
# first) and enables, and reads size 0 in the middle; drop_caches may
# queue a second pass.
settled_below() {
	state_is enabled && [ "$(val "$D/size_kib")" -lt 65536 ]
}
# With plenty free only reclaim_plenty=Y has drop_caches reclaim; it
# stays Y for the rest of the suite.
check "setup: reclaim_plenty Y" put Y /sys/module/nvme_hmb/parameters/reclaim_plenty
echo 2 > /proc/sys/vm/drop_caches
check "drop_caches shrinks the HMB" wait_for 10 settled_below
sleep 1
wait_for 10 settled_below
check "sysfs agrees with Get Features after reclaim" agree_pci
check "regrows after $QUIET s of quiet" wait_for 60 size_is 65536
check "sysfs agrees with Get Features after regrow" agree_pci
# steady sizes from here: this part is about sleep
check "setup: reclaim 0" put 0 "$D/reclaim"

# --- 6b. the IOVA-contiguous buffer cannot be had -------------------------
# Behind an IOMMU a fresh set is one IOVA-contiguous buffer, and fault
# injection (the debug kernel's) can fail that allocation, the engine's
# site "contig": the set falls back to buffers of their own, the drive
# takes them and sees nothing wrong.  The K-th allocation of a setup
# from off is failed for K = 1, 2, ... until the failure lands on
# "contig".  nvme_hmb_faults fails the other ten sites on the mock.
contig_hits() {
	awk '$1 == "contig" { print $2 }' /sys/kernel/debug/nvme_hmb/fault_sites
}
contig_fails() {
	_k=1
	while [ $_k -le 4 ]; do
		echo 0 > "$D/limit_mib" || return 1
		_h=$(contig_hits)
		arm_alloc $_k || return 1
		echo 64 > "$D/limit_mib"
		_rc=$?
		disarm_alloc || return 1
		if [ "$(contig_hits)" != "$_h" ]; then
			echo "# allocation $_k of the setup was the contiguous buffer"
			[ $_rc = 0 ] && state_is enabled && size_is 65536 &&
				[ "$(val "$D/nr_descs")" -gt 1 ] && agree_pci &&
				io_ok 160 && emu_clean
			return
		fi
		_k=$((_k + 1))
	done
	echo "# no allocation of the setup was the contiguous buffer"
	return 1
}
# contig_check DESCRIPTION FUNCTION: a test of the IOVA-contiguous
# buffer by fault injection, a skip where either is missing
contig_check() {
	if [ ! -d $FA ]; then
		skip "$1" "no fault injection on $(uname -r)"
	elif [ ! -e "/sys/bus/pci/devices/$BDF/iommu_group" ]; then
		skip "$1" "the drive is not behind an IOMMU here"
	else
		check "$1" "$2"
	fi
}
contig_check "the contiguous buffer failed: buffers of their own instead" \
	contig_fails
check "setup: limit_mib 128" put 128 "$D/limit_mib"

# --- 6c. reclaim with no smaller IOVA-contiguous buffer to be had ---------
# Reclaim replaces the one buffer with a smaller one, allocated first.
# With every engine allocation failing (fault injection), none can be
# had: the HMB stays whole and enabled, and the shrinker is offered
# nothing more until the next enable, so a second drop_caches with
# allocations back leaves it whole too.
site_hits() { awk '{ n += $2 } END { print n + 0 }' /sys/kernel/debug/nvme_hmb/fault_sites; }
contig_kept() {
	put 0 "$D/limit_mib" && put 128 "$D/limit_mib" &&
		eq "$(val "$D/nr_descs")" 1 && size_is 65536 || return 1
	_h=$(site_hits)
	put 1 "$D/reclaim" && arm_alloc 1 -1 || return 1
	echo 2 > /proc/sys/vm/drop_caches
	sleep 2
	disarm_alloc
	[ "$(site_hits)" -gt "$_h" ] ||
		{ echo "# reclaim allocated nothing: no replace was tried"; return 1; }
	state_is enabled && size_is 65536 ||
		{ timeline "after the replace that failed"; return 1; }
	echo 2 > /proc/sys/vm/drop_caches
	sleep 2
	state_is enabled && size_is 65536 && agree_pci && emu_clean ||
		{ timeline "after a second drop_caches"; return 1; }
}
contig_check "reclaim with no smaller contiguous buffer: kept whole, offered no more" \
	contig_kept
# Under severe pressure (debugfs pressure_severe: drop_caches stands for
# MemAvailable below 1/32 of RAM) the same buffer goes instead: below
# HMMIN an HMB is useless.  Disabled first, then freed; the regrow sets
# it up again once the pressure is over.
SEVERE=/sys/kernel/debug/nvme_hmb/pressure_severe
contig_off() {
	put 0 "$D/limit_mib" && put 128 "$D/limit_mib" &&
		eq "$(val "$D/nr_descs")" 1 && size_is 65536 || return 1
	_d=$(emu disables)
	put 1 "$D/reclaim" && put Y $SEVERE && arm_alloc 1 -1 || return 1
	echo 2 > /proc/sys/vm/drop_caches
	sleep 2
	disarm_alloc
	put N $SEVERE || return 1
	state_is off && size_is 0 && reason_is reclaimed &&
		[ "$(feat ehm)" = 0 ] && [ "$(emu disables)" -gt "$_d" ] &&
		emu_clean ||
		{ timeline "after severe reclaim"; return 1; }
	wait_for $((QUIET + 30)) state_is enabled && size_is 65536 &&
		agree_pci && emu_clean ||
		{ timeline "after the regrow"; return 1; }
}
contig_check "reclaim under severe pressure with no smaller contiguous buffer: off, then regrown" \
	contig_off
check "setup: reclaim 0, limit_mib 128" sh -c \
	"echo 0 > $D/reclaim && echo 0 > $D/limit_mib && echo 128 > $D/limit_mib"

# --- 7. system sleep ----------------------------------------------------
for l in freezer devices platform; do
	check "freeze at pm_test $l: back, agrees" pm_cycle freeze $l
done
# mem is suspend to idle where the machine has no deep sleep (arm64's
# virt machine: QEMU 7.2's PSCI has no SYSTEM_SUSPEND), which has no
# pm_test level past platform.
deep=0
grep -qw deep /sys/power/mem_sleep 2>/dev/null && deep=1
for l in devices platform processors core; do
	case $deep:$l in
	0:processors | 0:core)
		skip "mem at pm_test $l: back, agrees" \
		     "no deep sleep here (mem_sleep: $(cat /sys/power/mem_sleep)), none of pm_test $l in s2idle"
		;;
	*) check "mem at pm_test $l: back, agrees" pm_cycle mem $l ;;
	esac
done
after_s3() { wait_for 30 state_is enabled && agree_pci; }
c=1
while [ $c -le $NR_S3 ]; do
	if [ "${NVME_HMB_REAL_S3:-0}" = 1 ]; then
		check "real S3 cycle $c" real_s3
		check "after S3 cycle $c: enabled, agrees" after_s3
		check "I/O after S3 cycle $c" wait_for 20 io_ok $((160 + c * 16))
	else
		for w in "real S3 cycle $c" "after S3 cycle $c" "I/O after S3 cycle $c"; do
			skip "$w" "real S3 only where NVME_HMB_REAL_S3=1 (the test VM, not behind intel-iommu)"
		done
	fi
	c=$((c + 1))
done
timeline "after sleep"

# --- 8. unbind/bind, rmmod/modprobe with the HMB enabled -----------------
dmesg_mark
check "unbind $BDF from nvme" \
	sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/unbind"
check "detached before nvme-pci's remove" \
	dmesg_has "$CTRL: HMB: nvme_hmb_pci detached"
check "bind $BDF to nvme" sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/bind"
check "attached and enabled again" wait_for 30 state_is enabled
check "sysfs agrees with Get Features after the bind" agree_pci
check "I/O after unbind/bind" io_ok 0
disables0=$(emu disables)
check "rmmod nvme_hmb_pci with the HMB enabled" rmmod nvme_hmb_pci
check "the drive was told (EHM=0), nothing left enabled" \
	sh -c "[ $(feat ehm) = 0 ] && [ $(emu disables) -gt $disables0 ]"
check "modprobe nvme_hmb_pci again" \
	sh -c "modprobe nvme_hmb_pci && [ -d $D ]"
check "enabled again" wait_for 10 state_is enabled
check "sysfs agrees with Get Features at the end" agree_pci
check "I/O at the end" io_ok 16
check "no violation, no DMA error after unbind/bind" emu_clean
timeline "after unbind/bind"

# --- 9. resets that nvme-pci waits in, or gives up ----------------------
# The drive answers Identify Controller late, or fails it (qemu/patches
# 0009); nvme-pci's reset sends it first.  An unbind while the reset
# waits sends the controller nothing more, and the detach frees once
# nvme-pci's remove turned the controller and its bus mastering off
# (Documentation/nvme-hmb-pci.rst, "Removal").  A failed reset
# leaves a controller nvme-pci gives up (6.1 removes it with bus
# mastering off; later kernels mark it dead and keep it bound until an
# unbind): the detach sends it nothing and frees, rather than leak.
state_of() { cat "/sys/class/nvme/$CTRL/state" 2>/dev/null; }
connecting() { [ "$(state_of)" = connecting ]; }
# late_reset MS: the drive answers the next Identify Controller MS ms
# late, and nvme reset starts in the background (rpid); returns once
# nvme-pci's reset waits for that Identify
late_reset() {
	fault_cmd 4 1 0 1 "$1" || return 1
	nvme reset "/dev/$CTRL" >/dev/null 2>&1 &
	rpid=$!
	wait_for 10 connecting
}
bound() { [ -e "/sys/bus/pci/devices/$BDF/driver" ]; }
rebind() { # bind BDF to nvme again; CTRL, D and NS follow its name
	echo "$BDF" > /sys/bus/pci/drivers/nvme/bind || return 1
	wait_for 30 sh -c "ls /sys/bus/pci/devices/$BDF/nvme 2>/dev/null | grep -q ." ||
		return 1
	CTRL=$(ls "/sys/bus/pci/devices/$BDF/nvme" | head -n1)
	D=$SYS/$CTRL
	NS=/dev/${CTRL}n1
	echo "# bound again as $CTRL"
}
PDBG=/sys/kernel/debug/nvme_hmb_pci
noticed() { dmesg_new | grep -c "$CTRL: HMB: controller reset noticed"; }

# A reset cancels the engine's Get Features (its guard before a Set
# Features): the disable that follows is not sent, but held back until
# that reset ended, so nothing reaches the controller in the middle of
# nvme-pci's initialisation (the drive's early_cmds); then, the reset
# having dropped the buffer, it is answered as done, and the shrink goes
# on after the reset.
dmesg_mark
inj0=$(emu injected)
check "arm the drive: the next Get Features 0Dh answered 20 s late" \
	fault_cmd 2 1 0 4 20000
( { echo 32 > "$D/limit_mib"; } >"$T.shrink" 2>&1; echo $? >>"$T.shrink" ) &
lpid=$!
injected_above() { [ "$(emu injected)" -gt "$1" ]; }
check "the shrink's guard waits for Get Features" \
	wait_for 10 injected_above "$inj0"
check "nvme reset while it waits" nvme reset "/dev/$CTRL"
wait $lpid
# the write's complaint, if any, then its status
shrunk_after() {
	sed 's/^/# /' "$T.shrink"
	[ "$(tail -n1 "$T.shrink")" = 0 ] && wait_for 30 state_is enabled &&
		eq "$(val "$D/size_kib")" 32768
}
check "the shrink whose guard's Get Features was cancelled goes on after the reset" \
	shrunk_after
check "nothing reached the controller mid-init" emu_clean
check "enabled after the reset" wait_for 30 state_is enabled
check "sysfs agrees with Get Features after the cancelled guard" agree_pci
check "back to 64 MiB" sh -c "echo 0 > $D/limit_mib && echo 128 > $D/limit_mib && [ \$(cat $D/size_kib) = 65536 ]"

# A start reported while the controller is no longer live: the next
# reset already waits for a late Identify.  The report is left to that
# reset's own: only its end is noticed, and it re-enables.
dmesg_mark
check "nvme reset, Identify answered 12 s late: the reset waits (connecting)" \
	late_reset 12000
check "a start reported meanwhile (debugfs report_reset)" \
	put "$CTRL" $PDBG/report_reset
check "the reset ends" wait $rpid
check "enabled after the reset" wait_for 30 state_is enabled
check "only the reset's own end noticed" eq "$(noticed)" 1
check "sysfs agrees with Get Features after the early report" agree_pci
check "I/O after the early report" io_ok 80

dmesg_mark
check "nvme reset, Identify answered 8 s late: the reset waits (connecting)" \
	late_reset 8000
check "unbind $BDF while it waits" \
	sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/unbind"
wait $rpid
detached_clean() {
	dmesg_has "$CTRL: HMB: nvme_hmb_pci detached" &&
		dmesg_none "leaking|HMB disable.* failed"
}
# The driver's link goes before the detach after nvme-pci's remove.
check "closed at the unbind, detached after nvme-pci's remove: nothing leaked" \
	wait_for 10 detached_clean
check "dmesg: nothing sent to it from the unbind on" \
	dmesg_has "$CTRL: HMB: controller not live at its unbind"
check "bind $BDF to nvme" rebind
check "attached and enabled again" wait_for 30 state_is enabled
check "sysfs agrees with Get Features after the delayed reset" agree_pci

# rmmod while a reset waits: the controller stays bound, so the detach
# lets the reset end (at most 60 s), then disables and frees.
dmesg_mark
check "nvme reset, Identify answered 8 s late: the reset waits (connecting)" \
	late_reset 8000
check "rmmod nvme_hmb_pci while it waits" rmmod nvme_hmb_pci
wait $rpid
check "the detach let the reset end, then disabled: nothing leaked" \
	detached_clean
check "modprobe nvme_hmb_pci" modprobe nvme_hmb_pci
check "attached and enabled again after the reload" \
	wait_for 30 state_is enabled
check "I/O after the delayed reset" io_ok 32

dmesg_mark
# Linux 6.1's nvme-pci frees its shadow doorbell buffers (mapped in
# nvme_reset_work) only when the last reference to the controller it gave
# up goes, after the driver's release, and DMA-API debug reports them
# pending then (naming the bus: the driver is gone): that report is
# expected in the judge's bracket for this give-up, any other is a
# finding, and nvme-hmb's own count of what it holds from the DMA API
# (dma_held) must say that it freed everything.
check "arm the drive: the next Identify Controller fails (Internal Error, DNR)" \
	fault_cmd 4 1 0x4006 0 0
dma_pending_expected pci "$BDF" "nvme-pci's shadow doorbell buffers, freed after its release of the controller it gave up (6.1)"
nvme reset "/dev/$CTRL" >/dev/null 2>&1
# 6.1: nvme-pci removes the controller itself; later: dead, unbound here.
gave_up() {
	! bound && return 0
	[ "$(state_of)" = dead ] &&
		echo "$BDF" > /sys/bus/pci/drivers/nvme/unbind && ! bound
}
check "nvme-pci gives the controller up" wait_for 30 gave_up
if bound; then
	# Stuck in the detach (a command sent to a dead controller): the
	# device lock is held, a bind would hang.
	for t in "dmesg: gone, nothing sent to it" "freed, not leaked" \
		 "nvme-hmb holds no DMA memory any more (dma_held)" \
		 "bind $BDF to nvme after the failed reset" \
		 "attached and enabled after the failed reset" \
		 "sysfs agrees with Get Features after the failed reset" \
		 "I/O after the failed reset" \
		 "no violation, no DMA error at the end"; do
		nok "$t"
	done
	echo "# $failed of $n failed; the controller is stuck in its detach"
	exit 1
fi
check "dmesg: gone, nothing sent to it" \
	wait_for 10 dmesg_has "HMB: controller gone (state"
held_none() { # nothing attached: nvme-hmb holds nothing from the DMA API
	[ -z "$(ls "$SYS")" ] || { echo "# attached: $(ls "$SYS")"; return 1; }
	eq "$(cat /sys/kernel/debug/nvme_hmb/dma_held)" "0 0"
}
check "freed, not leaked" dmesg_none "leaking|HMB disable.* failed"
check "nvme-hmb holds no DMA memory any more (dma_held)" wait_for 10 held_none
dma_reports_end
check "bind $BDF to nvme after the failed reset" rebind
check "attached and enabled after the failed reset" \
	wait_for 30 state_is enabled
check "sysfs agrees with Get Features after the failed reset" agree_pci
check "I/O after the failed reset" io_ok 48
check "no violation, no DMA error at the end" emu_clean
timeline "end"
echo "# drive: $(for k in $EMU_KEYS; do printf '%s=%s ' $k "$(emu $k)"; done)"
echo "# stats: $(stats_line "$CTRL")"

rm -rf "$T" "$T.bg" "$T.shrink"
ksft_end
