#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: emu
# nvme-hmb-kernel: stock stock-6.12
#
# tools/nvme-hmb sweep on the emulated DRAM-less drive (qemu/), with a
# stand-in fio that records its arguments and prints a fixed terse line
# (the test VMs carry no fio; `make demo` runs the real one):
#
#  1. usage: no command, unknown command or option, help;
#  2. hostile and wrong devices: missing, /dev/null, the controller's char
#     device, a look-alike block node, a block device that is not NVMe,
#     shell metacharacters; a controller nvme-hmb does not manage;
#  3. wrong numbers: letters, signs, fractions, empty lists, out of range,
#     spans beyond the namespace, --from above --to, a quote in --out;
#     no fio;
#  4. a sweep: every fio run read-only, direct, 4 KiB random reads over
#     the span asked; the CSV has a row per point with the HMB granted;
#     the default HMB sizes and spans; limit_mib restored;
#  5. fio failing, SIGTERM and SIGINT in the middle of a point (sent by
#     the stand-in fio): limit_mib restored.
# Every refused command changes nothing and runs no fio.  At the end the
# drive has seen no violation, no DMA error and no controller reset.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped (not root, nvme_hmb_pci
# not installed, or the controller is not the emulated drive).

# shellcheck source=selftests/ksft_lib
. "$(dirname "$0")/ksft_lib"
# shellcheck source=selftests/nvme_lib
. "$(dirname "$0")/nvme_lib"

ksft_header nvme_hmb_pci
device_guard
if ! emu_present; then
	echo "1..0 # SKIP $CTRL is not the emulated DRAM-less drive"
	exit "$KSFT_SKIP"
fi
TOOL=$(command -v nvme-hmb || echo "$(cd "$(dirname "$0")/.." && pwd)/tools/nvme-hmb")
if [ ! -x "$TOOL" ]; then
	echo "1..0 # SKIP no nvme-hmb tool"
	exit "$KSFT_SKIP"
fi
echo "1..80"

D=$SYS/$CTRL
modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
mkdir -p "$T/bin" "$T/nofio"
OUT=$T/out
LOG=$T/fio.log
FAKE=$T/bin/fio
cat >"$FAKE" <<'EOF'
#!/bin/sh
# stand-in fio: records its arguments, prints one terse v3 line
case " $* " in
*" --enghelp "*) printf 'Available IO engines:\n\tpsync\n\tlibaio\n'; exit 0 ;;
*" --version "*) echo fio-3.33-fake; exit 0 ;;
esac
printf '%s\n' "$*" >>"$FAKE_FIO_LOG"
if [ -n "${FAKE_FIO_FAIL:-}" ]; then
	echo "fio: stand-in told to fail" >&2
	exit 1
fi
# FAKE_FIO_SIGNAL=INT|TERM: signal the sweep (the oldest nvme-hmb sweep
# process above this one; the ones between are its subshells), as a
# Ctrl-C or a kill would in the middle of a point
if [ -n "${FAKE_FIO_SIGNAL:-}" ]; then
	p=$PPID top=
	while [ "${p:-1}" -gt 1 ]; do
		case "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" in
		*nvme-hmb*sweep*) top=$p ;;
		esac
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
	done
	[ -n "$top" ] && kill -"$FAKE_FIO_SIGNAL" "$top"
fi
p='1.000000%=90;5.000000%=91;10.000000%=92;20.000000%=93;30.000000%=94'
p="$p;40.000000%=95;50.000000%=96;60.000000%=97;70.000000%=98;80.000000%=99"
p="$p;90.000000%=120;95.000000%=150;99.000000%=250;99.500000%=300"
p="$p;99.900000%=400;99.950000%=500;99.990000%=600;0%=0;0%=0;0%=0"
echo "3;fio-3.33-fake;nvme-hmb-sweep;0;0;4000;4000;1000;1000;0;0;0.0;0.0;10;900;100.0;5.0;$p;11;901;101.5;5.1;0;0;0;0"
EOF
chmod +x "$FAKE"
export FAKE_FIO_LOG="$LOG"
SPATH=$T/bin:$PATH

# shellcheck disable=SC2317 # called through check and refused
sweep() { PATH=$SPATH "$TOOL" sweep "$@"; }
# shellcheck disable=SC2317
lim() { val "$D/limit_mib"; }
# shellcheck disable=SC2317
ran_fio() { [ -s "$LOG" ]; }

# show_said: $T/said (what the tool printed) as TAP comments, and in SAID.
# Builtins only, here and in refused: forks cost 0.1 s each on the debug
# kernel under TCG.
show_said() {
	SAID=
	while IFS= read -r _line || [ -n "$_line" ]; do
		echo "# $_line"
		SAID="$SAID$_line
"
	done <"$T/said"
}

# now_l: NOW="limit_mib size_kib" ("none" without the directory)
# shellcheck disable=SC2317
now_l() {
	_a=none _b=none
	{ read -r _a <"$D/limit_mib"; } 2>/dev/null
	{ read -r _b <"$D/size_kib"; } 2>/dev/null
	NOW="$_a $_b"
}

# refused RC TEXT COMMAND...: COMMAND exits RC saying TEXT, leaves
# limit_mib and the HMB as they were, and runs no fio
# shellcheck disable=SC2317
refused() {
	_rc=$1 _pat=$2
	shift 2
	now_l
	_before=$NOW
	: >"$LOG"
	"$@" >"$T/said" 2>&1
	_got=$?
	show_said
	now_l
	eq "$_got" "$_rc" && eq "$NOW" "$_before" && ! ran_fio &&
	case $SAID in
	*"$_pat"*) ;;
	*) echo "# it did not say '$_pat'"; false ;;
	esac
}

# --- setup: the hand-over, as on a user's machine ---------------------------
check "reload nvme max_host_mem_size_mb=0" reload_nvme max_host_mem_size_mb=0
check "load nvme_hmb (limit 32 MiB) and nvme_hmb_pci" sh -c \
	"modprobe nvme_hmb default_limit_mib=32 && modprobe nvme_hmb_pci"
check "nvme-hmb enabled 32 MiB" wait_for 10 sh -c "[ \"\$(cat $D/size_kib 2>/dev/null)\" = 32768 ]"
# The drive's count of disables done by a controller reset, before the
# sweeps: a page that cannot be read leaves it empty, and the check at the
# end fails (an empty count equal to another proves nothing).
r0=$(emu reset_disables)
NS_MIB=$(($(cat "/sys/block/${CTRL}n1/size") / 2048))
echo "# namespace $NS_MIB MiB, HMPRE $(val "$D/hmpre_kib") KiB, HMMIN $(val "$D/hmmin_kib") KiB"

# --- 1. usage ---------------------------------------------------------------
check "no command: usage, exit 2" refused 2 "Usage: nvme-hmb" "$TOOL"
check "unknown command: exit 2" refused 2 "unknown command 'frob'" "$TOOL" frob
check "help sweep" sh -c "'$TOOL' help sweep | grep -q -- --runtime"
check "sweep without a device: exit 2" refused 2 "no device given" sweep
check "sweep with an unknown option: exit 2" refused 2 "unknown option '--write'" \
	sweep "/dev/${CTRL}n1" --write
check "sweep with two devices: exit 2" refused 2 "one device only" \
	sweep "/dev/${CTRL}n1" "/dev/${CTRL}n1"
check "an option without its value: exit 2" refused 2 "needs a value" \
	sweep "/dev/${CTRL}n1" --hmb

# --- 2. devices -------------------------------------------------------------
check "a missing device" refused 1 "no such device" sweep /dev/nvme9n9
check "/dev/null" refused 1 "not a block device" sweep /dev/null
check "the controller's char device" refused 1 "not a block device" \
	sweep "/dev/$CTRL"
echo x >"$T/nvme0n1.file"
check "a regular file" refused 1 "not a block device" sweep "$T/nvme0n1.file"
mkdir -p "$T/fake"
mknod "$T/fake/${CTRL}n1" b 1 0
check "a look-alike node named ${CTRL}n1 (another device number)" \
	refused 1 "but ${CTRL}n1 is" sweep "$T/fake/${CTRL}n1"
mknod "$T/fake/sda" b 8 0
check "a block device that is not NVMe" refused 1 "not an NVMe namespace" \
	sweep "$T/fake/sda"
mknod "$T/fake/${CTRL}n1p1" b 259 99
check "a partition" refused 1 "is a partition" sweep "$T/fake/${CTRL}n1p1"
check "shell metacharacters in the name" refused 1 "no such device" \
	sweep "/dev/${CTRL}n1; touch $T/pwned"
check "a command substitution in the name" refused 1 "no such device" \
	sweep "\$(touch $T/pwned)"
check "nothing ran from those names" test ! -e "$T/pwned"
check "a relative path to the namespace works as far as the checks" \
	refused 1 "fio is not installed" \
	sh -c "cd /dev && PATH=$T/nofio:/usr/sbin:/usr/bin:/sbin:/bin '$TOOL' sweep ${CTRL}n1"
check "rmmod nvme_hmb_pci" rmmod nvme_hmb_pci
check "a controller nvme-hmb does not manage" refused 1 "not managed by nvme-hmb" \
	sweep "/dev/${CTRL}n1"
check "modprobe nvme_hmb_pci again" sh -c \
	"modprobe nvme_hmb_pci && [ -d $D ] && echo 32 > $D/limit_mib"

# --- 3. numbers -------------------------------------------------------------
dev=/dev/${CTRL}n1
check "--hmb with letters" refused 1 "'abc' is not a whole number" sweep "$dev" --hmb abc
check "--hmb negative" refused 1 "'-1' is not a whole number" sweep "$dev" --hmb 0,-1
check "--hmb fraction" refused 1 "'1.5' is not a whole number" sweep "$dev" --hmb 1.5
check "--hmb hex" refused 1 "'0x10' is not a whole number" sweep "$dev" --hmb 0x10
check "--hmb above the engine's range" refused 1 "out of range" sweep "$dev" --hmb 1048577
check "--hmb huge" refused 1 "out of range" sweep "$dev" --hmb 99999999999999999999999
check "--hmb empty" refused 1 "not a comma-separated list" sweep "$dev" --hmb ''
check "--hmb with an empty item" refused 1 "not a comma-separated list" sweep "$dev" --hmb 1,,2
check "--hmb with a space" refused 1 "not a whole number" sweep "$dev" --hmb '1, 2'
check "--spans 0" refused 1 "out of range" sweep "$dev" --spans 0
check "--spans beyond the namespace" refused 1 "out of range (1 to $NS_MIB)" \
	sweep "$dev" --spans 256,$((NS_MIB + 1))
check "--to beyond the namespace" refused 1 "the namespace is $NS_MIB MiB" \
	sweep "$dev" --to $((NS_MIB * 2))
check "--from above --to" refused 1 "above --to" sweep "$dev" --from 1024 --to 512
check "--spans with --from" refused 2 "not both" sweep "$dev" --spans 256 --from 256
check "--runtime 0" refused 1 "--runtime: 0 is out of range" sweep "$dev" --runtime 0
check "--runtime 3601" refused 1 "out of range" sweep "$dev" --runtime 3601
check "--ramp with letters" refused 1 "not a whole number" sweep "$dev" --ramp 1s
check "--iodepth 0" refused 1 "out of range" sweep "$dev" --iodepth 0
check "--seed negative" refused 1 "not a whole number" sweep "$dev" --seed -5
check "--out with a quote" refused 1 "without quotes" sweep "$dev" --out "a'b"
check "no fio" refused 1 "fio is not installed" \
	env PATH="$T/nofio:/usr/sbin:/usr/bin:/sbin:/bin" "$TOOL" sweep "$dev"

# --- 4. a sweep -------------------------------------------------------------
: >"$LOG"
sweep "$dev" --hmb 0,16,64 --spans 256,2048 --runtime 1 --ramp 0 --out "$OUT" \
	>"$T/said" 2>&1
rc=$?
show_said
check "sweep --hmb 0,16,64 --spans 256,2048: exit 0" eq "$rc" 0
check "fio ran once a point" eq "$(wc -l <"$LOG" | tr -d ' ')" 6
# every_run WORD...: each fio run had every WORD
# shellcheck disable=SC2317
every_run() {
	for _w in "$@"; do
		_n=$(grep -c -- " $_w\( \|$\)" "$LOG")
		eq "$_n" "$(wc -l <"$LOG" | tr -d ' ')" || { echo "# for $_w"; return 1; }
	done
}
check "every fio run: read-only, direct, 4 KiB random reads, from offset 0" \
	every_run --readonly --direct=1 --rw=randread --bs=4k --offset=0 \
	--time_based --runtime=1 --randseed=4242 "--filename=$dev"
check "no fio run could write" sh -c "! grep -qE -- '--rw=(write|randwrite|rw|randrw|trim)|--verify|--create' $LOG"
check "the spans asked: 256 MiB and 2 GiB" sh -c \
	"[ \$(grep -c -- '--size=268435456 ' $LOG) = 3 ] && [ \$(grep -c -- '--size=2147483648 ' $LOG) = 3 ]"
check "the CSV's header" eq "$(head -n1 "$OUT/sweep.csv")" \
	"hmb_mib,size_kib,nr_descs,span_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms"
check "the CSV's rows: HMB asked and granted, span, IOPS" eq \
	"$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1,2,4,5,7,8 | tr '\n' ' ')" \
	"0,0,256,1000.0,250,1000 0,0,2048,1000.0,250,1000 16,16384,256,1000.0,250,1000 16,16384,2048,1000.0,250,1000 64,65536,256,1000.0,250,1000 64,65536,2048,1000.0,250,1000 "
check "the description file" grep -q "^device=$dev controller=$CTRL" "$OUT/sweep.txt"
check "limit_mib restored to 32" eq "$(lim)" 32
check "the HMB is 32 MiB again" eq "$(val "$D/size_kib")" 32768
check "it said so" grep -q "limit_mib of $CTRL restored to 32" "$T/said"
check "no gnuplot here: it says how to draw later" grep -q "nvme-hmb plot $OUT/sweep.csv" "$T/said"
{
	echo "hmb_mib,size_kib,nr_descs,span_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms"
	echo "1,1024,1,1024,4000.5,250,400,8000,2000"
	echo "1,1024,1,2048,2000,500,900,4000,2000"
}>"$T/marks.csv"
check "plot --text: the table from the CSV, '>' past the coverage" sh -c \
	"'$TOOL' plot '$T/marks.csv' --text | tee /dev/stderr | grep -q '^2 GiB  *2000>'"
check "plot refuses a file that is not a sweep CSV" refused 1 "not a sweep CSV" \
	"$TOOL" plot "$T/nvme0n1.file" --text
sed -i '3s/.*/0,0,0,512,lots,1,1,1,1/' "$OUT/sweep.csv"
check "plot refuses a CSV with a bad row" refused 1 "line 3" \
	"$TOOL" plot "$OUT/sweep.csv" --text

: >"$LOG"
sweep "$dev" --spans 256 --runtime 1 --ramp 0 --out "$OUT" >"$T/said" 2>&1
rc=$?
show_said
check "sweep with the default sizes: exit 0" eq "$rc" 0
# 0, 1/4, 1/2 and all of the current limit (32 < HMPRE 64), at least HMMIN
# (14 MiB)
check "default HMB sizes: 0, 14 (HMMIN), 16, 32" eq \
	"$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | uniq | tr '\n' ' ')" "0 14 16 32 "
check "limit_mib restored to 32 after the defaults" eq "$(lim)" 32
sweep "$dev" --hmb 0 --runtime 1 --ramp 0 --out "$OUT" >"$T/said" 2>&1
rc=$?
show_said
# spans from 256 MiB doubling to the namespace
spans=$(awk -v t=$NS_MIB 'BEGIN { for (s = 256; s < t; s *= 2) printf "%d ", s; printf "%d ", t }')
check "default spans: 256 MiB doubling to $NS_MIB" eq \
	"$rc $(tail -n +2 "$OUT/sweep.csv" | cut -d, -f4 | tr '\n' ' ')" "0 $spans"
echo 8 >"$D/limit_mib" 2>/dev/null
sweep "$dev" --spans 256 --runtime 1 --ramp 0 --out "$OUT" >"$T/said" 2>&1
rc=$?
show_said
# a limit below HMMIN means off: the defaults go up to HMPRE then
check "limit 8 MiB (below HMMIN): default sizes 0, 16, 32, 64" eq \
	"$rc $(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | tr '\n' ' ')" "0 0 16 32 64 "
check "limit_mib restored to 8, HMB off" eq "$(lim) $(val "$D/size_kib")" "8 0"

# --- 5. interrupted ---------------------------------------------------------
echo 16 >"$D/limit_mib"
FAKE_FIO_FAIL=1 PATH=$SPATH "$TOOL" sweep "$dev" --hmb 64 --spans 256 \
	--runtime 1 --out "$OUT" >"$T/said" 2>&1
rc=$?
show_said
check "fio failing: exit 1, says so" sh -c "[ $rc = 1 ] && grep -q 'fio failed' $T/said"
check "fio failing: limit_mib restored to 16" eq "$(lim)" 16
# The signal comes from the stand-in fio of the first point (limit_mib is
# 64 then); the sweep stops there.
for sig in TERM INT; do
	: >"$LOG"
	FAKE_FIO_SIGNAL=$sig PATH=$SPATH "$TOOL" sweep "$dev" --hmb 64,32 \
		--spans 256,512 --runtime 1 --out "$OUT" >"$T/said" 2>&1
	rc=$?
	show_said
	want=143
	[ $sig = TERM ] || want=130
	check "SIG$sig in the middle: exit $want after one point" \
		eq "$rc $(wc -l <"$LOG" | tr -d ' ')" "$want 1"
	check "SIG$sig: limit_mib restored to 16" eq "$(lim)" 16
	check "SIG$sig: the HMB is 16 MiB again" eq "$(val "$D/size_kib")" 16384
	check "SIG$sig: it said so" grep -q "limit_mib of $CTRL restored to 16" "$T/said"
done

no_reset() {
	_r=$(emu reset_disables) && [ -n "$r0" ] ||
		{ echo "# the drive's log page could not be read (before: '$r0', after: '${_r:-}')"; return 1; }
	eq "$_r" "$r0"
}
check "the drive saw no reset during the sweeps" no_reset
check "no violation, no DMA error" emu_clean
check "rmmod nvme_hmb_pci nvme_hmb" rmmod nvme_hmb_pci nvme_hmb
check "reload nvme with its defaults" reload_nvme
rm -rf "$T"
[ "$failed" -eq 0 ] || exit 1
exit 0
