#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu
# nvme-hmb-kernel: stock
# nvme-hmb-last: the drive's dma_errors and violations counters are not 0 after it
#
# A guest that points the Host Memory Buffer at the controller's own
# registers.  With nvme-pci's HMB off (max_host_mem_size_mb=0, no nvme-hmb
# module), Set Features 0Dh with EHM=1 is sent by hand (nvme-cli
# admin-passthru):
#
#   1. the descriptor list (HMDLA) at BAR0's address;
#   2. a list in a page of this guest (its physical address from
#      /proc/PID/pagemap: no IOMMU in this VM, so it is the DMA address)
#      whose one entry (BADD) is BAR0's address;
#   3. then a valid buffer of this guest's own huge pages, whose list is
#      changed in place while it is enabled: the drive's scrub, which
#      reads the list again, must count each changed entry as a
#      violation (in the judge's bracket), and none once it is put back.
#
# The emulated drive (qemu/README.md) must refuse both as a DMA error,
# without the access: Data Transfer Error (0004h), one DMA error and one
# refused Set Features counted each.  Then the drive is still there and
# does I/O, and nvme-pci's own buffer enables with no DMA error more.  A
# drive that made the access would read its registers as the list, or
# write its map into CC and the doorbells from inside the command.
#
# The two refusals and the violations are bracketed for the judge
# (scripts/check-run), and the drive's dma_errors stays 2 and its
# violations above 0, which every other suite's emu_clean would take for
# a fault: this suite runs last in its VM, after
# nvme_hmb_emu_faults, also last (run-tests runs the last ones in the
# order of their names), and on one kernel only: the drive is QEMU, the
# same under every kernel, and the stock kernel lets root send the
# command (on the newest kernel, 7.3.4, nvme-cli's admin-passthru of it
# failed with "Permission denied").
#
# Destructive to the first 2 MiB of the namespace.  Exit: 0 all passed,
# 1 a test failed, 4 skipped (not root, or the controller is not the
# emulated drive).

. "$(dirname "$0")/ksft_lib"
. "$(dirname "$0")/nvme_lib"

ksft_header
device_guard
if ! emu_present; then
	echo "1..0 # SKIP $CTRL is not the emulated DRAM-less drive"
	exit $KSFT_SKIP
fi
echo "1..27"

modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
mkdir -p "$T"

# setf_status CDW12 CDW13 CDW14 CDW15: Set Features 0Dh, EHM=1, MR=0;
# prints the command's status as nvme-cli reports it (0x0 on success;
# "none" without one), nvme-cli's words left in $T/setf.out
setf_status() {
	_o=$(nvme admin-passthru "/dev/$CTRL" --opcode=0x09 --cdw10=0x0d \
		--cdw11=1 --cdw12="$1" --cdw13="$2" --cdw14="$3" \
		--cdw15="$4" 2>&1)
	echo "$_o" >"$T/setf.out"
	case "$_o" in
	*"NVMe status"*)
		echo "$_o" | sed -n 's/.*NVMe status.*(\(0x[0-9a-fA-F]*\)).*/\1/p' |
			tail -n1 ;;
	*"NVMe command result"* | *"is Success"*) echo 0x0 ;;
	*) echo "none" ;;
	esac
}

# le BYTES VALUE: VALUE as BYTES little-endian bytes, as printf's octal
# escapes
le() {
	_i=0 _v=$2 _s=
	while [ $_i -lt "$1" ]; do
		_s="$_s\\$(printf '%03o' $((_v & 255)))"
		_v=$((_v >> 8))
		_i=$((_i + 1))
	done
	echo "$_s"
}

# list_page BADD BSIZE: a page holding the descriptor entry (BADD, BSIZE)
# at every 16-byte boundary; prints its physical address.  The page is
# the anonymous buffer of a dd stuck writing 1 MiB of such entries into a
# FIFO that nobody reads (the shell holds its other end open): it stays
# mapped and filled until list_done.
list_page() {
	# shellcheck disable=SC2059 # the format is the entry's octal escapes
	printf "$(le 8 "$1")$(le 4 "$2")$(le 4 0)" >"$T/list" || return 1
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		cat "$T/list" "$T/list" >"$T/list2" && mv "$T/list2" "$T/list"
	done
	rm -f "$T/fifo"
	mkfifo "$T/fifo" || return 1
	exec 3<>"$T/fifo"
	dd if="$T/list" of="$T/fifo" bs=1M count=1 2>/dev/null &
	DDPID=$!
	# blocked in write(2), its buffer filled
	wait_for 10 grep -q pipe_write "/proc/$DDPID/wchan" || sleep 2
	# dd's buffer: the anonymous mapping of at least 1 MiB
	_start=$(awk '$6 == "" { split($1, a, "-"); print a[1], a[2] }' \
		"/proc/$DDPID/maps" |
		while read -r _a _b; do
			[ $((0x$_b - 0x$_a)) -ge 1048576 ] && { echo "$_a"; break; }
		done)
	[ -n "$_start" ] || { echo "# no 1 MiB anonymous mapping in dd's maps"; return 1; }
	# a page well inside the buffer, whose every 16 bytes are an entry
	_va=$((0x$_start + 8192))
	if [ "$(dd if="/proc/$DDPID/mem" bs=4096 skip=$((_va / 4096)) \
		count=1 2>/dev/null | od -An -tx1 | head -n1)" != \
		"$(od -An -tx1 -N16 "$T/list")" ]; then
		echo "# dd's page at 0x$_start + 8192 does not hold the entry"
		return 1
	fi
	_e=$(dd if="/proc/$DDPID/pagemap" bs=8 skip=$((_va / 4096)) count=1 \
		2>/dev/null | od -An -tx8 | tr -d ' ')
	case "$_e" in
	''|*[!0-9a-f]*) echo "# cannot read dd's pagemap ('$_e')"; return 1 ;;
	esac
	if [ $((0x$_e >> 63 & 1)) != 1 ]; then
		echo "# the page is not present (pagemap entry $_e)"
		return 1
	fi
	LIST_PA=$(((0x$_e & 0x7fffffffffffff) * 4096))
	[ "$LIST_PA" != 0 ] || { echo "# pagemap gives no frame (not root?)"; return 1; }
}

list_done() {
	[ -z "${DDPID:-}" ] || kill "$DDPID" 2>/dev/null
	wait 2>/dev/null
	exec 3<&-
	DDPID=
}

# refused WHAT HMDLA: Set Features with the list at HMDLA is refused as a
# DMA error (0004h), counted once as such and once as a refusal, without
# enabling anything, and the drive still does I/O
refused() {
	_dma=$(emu dma_errors) _rej=$(emu rejected) _viol=$(emu violations)
	echo "nvme-hmb-selftest: drive refusals expected: 1 dma_errors=1 $1" >/dev/kmsg
	_st=$(setf_status "$HSIZE" $(($2 & 0xffffffff)) $(($2 >> 32)) 1)
	echo "nvme-hmb-selftest: drive refusals end" >/dev/kmsg
	sed 's/^/# nvme-cli: /' "$T/setf.out"
	check "$1: Data Transfer Error (0x4)" eq "$_st" 0x4
	check "$1: the drive answers (QEMU runs)" emu_present
	check "$1: one DMA error counted" eq "$(emu dma_errors)" $((_dma + 1))
	check "$1: one refused Set Features counted" eq "$(emu rejected)" $((_rej + 1))
	check "$1: no violation, the buffer still disabled" \
		eq "$(emu violations):$(feat ehm)" "$_viol:0"
	check "$1: I/O still works" io_ok $((N_IO * 16))
	N_IO=$((N_IO + 1))
}
N_IO=0

check "reload nvme with max_host_mem_size_mb=0" reload_nvme max_host_mem_size_mb=0
check "no HMB enabled by nvme-pci" eq "$(feat ehm)" 0

# BAR0: the first line of the PCI function's resource file, in hex
read -r bar0 bar0_end _ <"/sys/class/nvme/$CTRL/device/resource"
bar0=$(printf '%d' "$bar0")
HSIZE=$(nvme id-ctrl "/dev/$CTRL" | sed -n 's/^hmmin *: *//p')
[ "${HSIZE:-0}" != 0 ] || HSIZE=1
printf '# BAR0 0x%x-%s, HSIZE %s pages\n' "$bar0" "$bar0_end" "$HSIZE"

refused "the descriptor list at BAR0" "$bar0"

if check "a list page of this guest found in pagemap" list_page "$bar0" "$HSIZE"; then
	printf '# list at 0x%x\n' "$LIST_PA"
	refused "a descriptor entry at BAR0" "$LIST_PA"
else
	for w in "Data Transfer Error (0x4)" "the drive answers (QEMU runs)" \
		"one DMA error counted" "one refused Set Features counted" \
		"no violation, the buffer still disabled" "I/O still works"; do
		nok "a descriptor entry at BAR0: $w"
	done
fi
list_done

# 3. A list changed while its buffer is enabled.  This guest lends the
# drive a buffer of its own huge pages (nvme_hmb_admin lend: the list in
# the first page, an entry for each huge page), then exchanges the list's
# first two entries in place, which the host shall not do while the
# buffer is enabled.  The drive reads the list again at each scrub (every
# second, qemu/ patch 0015) and counts each changed entry as a violation,
# in the judge's bracket; with the entries put back its scrubs find the
# list as recorded.  Reads meanwhile load map segments into the lent
# buffer (hmb_cache), which the disable's map check finds whole.
HUGE=$(((HSIZE + 1 + 511) / 512))
huge_was=$(cat /proc/sys/vm/nr_hugepages)
LENDPID=
# a lender that has gone makes a write to its FIFO fail, not kill us
trap '' PIPE
lend_say() { # lend_say CMD ANSWER: a command to the lender, and its answer
	echo "$1" >&5 && wait_for 10 grep -qx "$2" "$T/lend.out"
}
lend_start() {
	put $((huge_was + HUGE)) /proc/sys/vm/nr_hugepages || return 1
	_free=$(sed -n 's/^HugePages_Free: *//p' /proc/meminfo)
	[ "${_free:-0}" -ge "$HUGE" ] ||
		{ echo "# only ${_free:-0} huge pages free of $HUGE asked"; return 1; }
	rm -f "$T/lend.in" && mkfifo "$T/lend.in" || return 1
	"$NVME_HMB_ADMIN" lend "/dev/$CTRL" $HUGE <"$T/lend.in" \
		>"$T/lend.out" 2>&1 &
	LENDPID=$!
	exec 5>"$T/lend.in"
	wait_for 20 grep -qx enabled "$T/lend.out" || { sed 's/^/# lend: /' "$T/lend.out"; return 1; }
	sed -n 's/^list=/# lent: list=/p' "$T/lend.out"
	eq "$(feat ehm)" 1
}
# scrubs_by N: the drive read its list again at N more scrubs
scrubs_by() {
	_lc=$(emu list_checks) || return 1
	wait_for 20 above list_checks $((_lc + $1 - 1))
}
above() { [ "$(emu "$1")" -gt "$2" ]; }
# lent_reads: 4 MiB read with the lent buffer enabled load map segments
lent_reads() {
	_sl=$(emu segment_loads) || return 1
	dd if="$NS" of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null &&
		above segment_loads "$_sl"
}
n0="reads load map segments into the lent buffer"
n1="the list's first two entries exchanged in place"
n2="each scrub of the changed list: two violations"
n3="the entries put back: two scrubs find the list as recorded"
n4="no violation since"
n5="the disable completes"
n6="the disable's map check found the lent buffer's segments whole"
if check "a buffer of this guest's $HUGE huge pages enabled by hand" lend_start; then
	check "$n0" lent_reads
	v0=$(emu violations) lv0=$(emu list_violations)
	mc0=$(emu map_checks) mf0=$(emu map_check_failures)
	viol_begin list_violations "the list's first two entries exchanged while the buffer is enabled"
	check "$n1" lend_say swap swapped
	# from here the list is changed whole: a scrub reads it at least
	# once (a scrub during the exchange may have read it half done)
	va=$(emu violations)
	scrubs_by 1
	vb=$(emu violations)
	lend_say restore restored
	v1=$(emu violations) lv1=$(emu list_violations)
	viol_end
	echo "# violations $v0, swapped $va -> $vb, restored $v1; list_violations $lv0 -> $lv1"
	check "$n2" \
		eq "$(((vb - va) % 2)):$((vb > va)):$((v1 - v0))" "0:1:$((lv1 - lv0))"
	check "$n3" scrubs_by 2
	check "$n4" eq "$(emu violations)" "$v1"
	check "$n5" lend_say end disabled
	check "$n6" eq "$(emu map_check_failures):$(($(emu map_checks) > mc0))" "$mf0:1"
else
	for w in "$n0" "$n1" "$n2" "$n3" "$n4" "$n5" "$n6"; do
		nok "$w"
	done
fi
exec 5>&-
[ -z "$LENDPID" ] || wait_for 10 sh -c "! kill -0 $LENDPID 2>/dev/null" ||
	echo "# the lender did not end"
trap - PIPE
put "$huge_was" /proc/sys/vm/nr_hugepages

# nvme-pci's own buffer still enables, and is used without a DMA error.
dma=$(emu dma_errors) viol=$(emu violations)
check "reload nvme: nvme-pci's own HMB" reload_nvme
check "Get Features 0Dh: enabled" eq "$(feat ehm)" 1
check "I/O with nvme-pci's HMB" io_ok 64
check "no DMA error and no violation since" \
	eq "$(emu dma_errors):$(emu violations)" "$dma:$viol"
rm -rf "$T"
ksft_end
