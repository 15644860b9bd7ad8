#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu
#
# The emulated DRAM-less drive (qemu/) proven against a client nobody here
# wrote: Linux's own nvme-pci, with no nvme-hmb module loaded, enables its
# HMB on the drive and keeps it through I/O, nvme reset, PCI unbind/bind
# and (NVME_HMB_REAL_S3=1) real S3, and the drive sees no violation and no
# DMA error at any step.  nvme-cli's Get Features 0Dh agrees with what
# nvme-pci said it allocated.
#
# The drive's cache of map segments (hmb_cache with hmb_writes, as
# scripts/run-tests sets it up): data written through a cached segment
# reads back the same, and the drive finds its map entries as it wrote
# them, after the segment was evicted (written back to the drive's NAND
# map, loaded again from there) and after a controller reset that
# returned the buffer with MR=1 (the cache kept: no segment loaded).
#
# Destructive to the first 8 MiB of the namespace.  Exit: 0 all passed,
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
do_s3=${NVME_HMB_REAL_S3:-0}
echo "1..42"

modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
BDF=$(basename "$(readlink -f /sys/class/nvme/$CTRL/device)")

# Start from a fresh nvme-pci with its default cap (128 MiB).
dmesg_mark
check "reload nvme (default max_host_mem_size_mb)" reload_nvme

# nvme-pci's own words: "allocated N MiB host memory buffer."
linux_mib() {
	dmesg_new | sed -n 's/.*allocated \([0-9]*\) MiB host memory buffer.*/\1/p' |
		tail -n1
}
check "dmesg: nvme-pci allocated its HMB" dmesg_has "allocated .* MiB host memory buffer"
mib=$(linux_mib)
echo "# nvme-pci allocated ${mib:-?} MiB; hmpre $(nvme id-ctrl /dev/$CTRL | sed -n 's/^hmpre *: //p')"
check "it is HMPRE, 64 MiB (under the 128 MiB cap)" eq "$mib" 64

# linux_agrees: Get Features says what nvme-pci allocated, enabled.
linux_agrees() {
	eq "$(feat ehm)" 1 && eq "$(( $(feat hsize) * 4 / 1024 ))" "$mib" &&
	emu_clean
}
check "Get Features 0Dh: enabled, HSIZE $mib MiB" linux_agrees
check "the drive counted the enable" sh -c "[ $(emu enables) -ge 1 ]"

hits0=$(emu hits)
check "I/O: write and read back 1 MiB" io_ok 0
dd if="$NS" of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null
check "reads hit the map in the HMB" sh -c "[ $(emu hits) -gt $((hits0 + 2048)) ]"
check "no violation, no DMA error after I/O" emu_clean

# nvme reset: the reset disables the HMB; nvme-pci returns it with MR=1.
mr0=$(emu mr_returns)
dmesg_mark
check "nvme reset /dev/$CTRL" nvme reset /dev/$CTRL
check "namespace back after the reset" wait_for 20 test -b "$NS"
check "returned with MR=1 (mr_returns grew)" \
	sh -c "[ $(emu mr_returns) -gt $mr0 ]"
check "no new allocation after the reset" \
	dmesg_none 'allocated .* host memory buffer'
check "Get Features agrees after the reset" linux_agrees
check "I/O after the reset" io_ok 16

# The cache of map segments.  evict: read a segment at a time, 16 more
# segments than the cache has slots, from 16 MiB on (past what this suite
# writes), so that every segment cached before is evicted.
set -- $(emu_cache) 0 0
seg_kib=$1 slots=$2
above() { [ "$(emu "$1")" -gt "$2" ]; }
evict() {
	[ "$seg_kib" -gt 0 ] && _ev=$(emu segment_evictions) || return 1
	dd if="$NS" of=/dev/null bs=${seg_kib}k skip=$((16384 / seg_kib)) \
		count=$((slots + 16)) iflag=direct 2>/dev/null || return 1
	[ "$(emu segment_evictions)" -ge $((_ev + slots)) ] && return 0
	echo "# segment_evictions $_ev -> $(emu segment_evictions), $slots slots"
	return 1
}
# read_back: 1 MiB at 64 KiB block 96 is what io_ok wrote there last
read_back() {
	dd if="$NS" of="$T/back" bs=64k skip=96 count=16 iflag=direct \
		2>/dev/null && cmp -s "$T/pat" "$T/back" && emu_clean
}
echo "# drive: hmb_segment_kib $seg_kib, $slots slots"
check "the drive caches map segments (hmb_cache)" \
	sh -c "[ $seg_kib -gt 0 ] && [ $slots -gt 0 ]"
wb0=$(emu segment_writebacks)
mu0=$(emu map_updates)
write_through() { io_ok 96 && above map_updates "$mu0"; }
check "write 1 MiB through cached segments (map_updates grew)" write_through
check "read $((slots + 16)) segments elsewhere: every cached one evicted" evict
check "dirty segments written back" above segment_writebacks "$wb0"
check "read back after the eviction: same data, no violation" read_back
mr0=$(emu mr_returns)
write_reset() {
	io_ok 96 && nvme reset /dev/$CTRL >/dev/null && wait_for 20 test -b "$NS"
}
check "write 1 MiB again, then nvme reset /dev/$CTRL" write_reset
check "returned with MR=1" above mr_returns "$mr0"
loads0=$(emu segment_loads)
check "read back after the reset: same data, no violation" read_back
check "the cache kept across the reset: the read back loaded no segment" \
	eq "$(emu segment_loads)" "$loads0"
evict_read_back() { evict && read_back; }
check "evict again, read back: same data, no violation" evict_read_back

# nvme-pci's hmb attribute: 0 disables and frees, 1 sets it up again.
# nvme-pci decides whether sysfs shows it with HMPRE still 0: at probe,
# and again only when it registers a CMB, which 6.1 and 6.12 do in the
# first reset before Identify.  Hidden on every kernel here (a CMB, tried
# on the debug kernel, changes nothing): these are skipped, and said so;
# nvme_hmb_emu_pci drives the same store through nvme_hmb_pci's take-over.
HMBF=/sys/class/nvme/$CTRL/hmb
if [ -e "$HMBF" ]; then
	check "$HMBF reads 1" eq "$(val $HMBF)" 1
	check "echo 0 > hmb" sh -c "echo 0 > $HMBF"
	check "Get Features: disabled" eq "$(feat ehm)" 0
	check "echo 1 > hmb" sh -c "echo 1 > $HMBF"
	check "Get Features agrees after hmb 0/1" linux_agrees
else
	for w in "$HMBF reads 1" "echo 0 > hmb" "Get Features: disabled" \
		 "echo 1 > hmb" "Get Features agrees after hmb 0/1"; do
		skip "$w" "no $HMBF on $(uname -r) (nvme-pci decides its visibility before Identify, on 6.1 and 6.12 alike)"
	done
fi

# Unbind and bind: nvme-pci frees the HMB after shutting the controller
# down, and sets up a fresh one on probe.
check "unbind $BDF" sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/unbind"
dmesg_mark
check "bind $BDF" sh -c "echo $BDF > /sys/bus/pci/drivers/nvme/bind"
check "namespace back after the bind" wait_for 30 test -b "$NS"
check "dmesg: allocated again" wait_for 10 dmesg_has "allocated .* MiB host memory buffer"
check "Get Features agrees after unbind/bind" linux_agrees
check "I/O after unbind/bind" io_ok 32

# Real S3: on this drive (no APST) nvme-pci shuts the controller down and
# resets it on resume, then returns the buffer with MR=1.
if [ "$do_s3" = 1 ]; then
	for c in 1 2; do
		mr0=$(emu mr_returns)
		check "real S3 cycle $c, woken by the RTC" real_s3
		check "I/O after S3 cycle $c" wait_for 30 io_ok $((32 + c * 16))
		check "returned with MR=1 after S3 cycle $c" \
			sh -c "[ $(emu mr_returns) -gt $mr0 ]"
	done
else
	# In the plan all the same: a test leaves it only as a declared skip.
	for c in 1 2; do
		for w in "real S3 cycle $c, woken by the RTC" \
			"I/O after S3 cycle $c" "returned with MR=1 after S3 cycle $c"; do
			skip "$w" "real S3 only where NVME_HMB_REAL_S3=1"
		done
	done
fi

check "no violation, no DMA error at the end" emu_clean
echo "# drive: $(for k in $EMU_KEYS; do printf '%s=%s ' $k "$(emu $k)"; done)"
rm -rf "$T"
ksft_end
