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
#     spans beyond the namespace, --from above --to, a quote in --dir,
#     bad --repeat, --zipf and --offset (usage errors); no fio, an fio
#     without random_distribution;
#  4. a sweep of one run a point from the start (--repeat 1 --zipf 0
#     --offset first, the sweeps before repeats): every fio run read-only,
#     direct, 4 KiB random reads over the span asked; the CSV has a row
#     per point with the HMB granted; the default HMB sizes and spans;
#     limit_mib restored; a sweep with the defaults (2 runs): seeds,
#     offsets 1 MiB-aligned within the namespace, the zipf runs over the
#     namespace, sweep.csv and sweep-runs.csv, the grants in sweep.txt as
#     status gives them;
#  5. fio failing, SIGTERM and SIGINT in the middle of a point (sent by
#     the stand-in fio): limit_mib restored;
#  6. the tool's functions on made-up input (tool_tests, which need no VM,
#     no root and no drive: NVME_HMB_SWEEP_TOOL_ONLY=1 sh
#     selftests/nvme_hmb_sweep.sh runs them alone): the median, min and max
#     of made-up runs, the offsets, the zipf theta, and plotting an older
#     nine-column CSV and a new one (tables and gnuplot scripts).
# Every refused command changes nothing and runs no fio.  At the end the
# drive has seen no violation, no DMA error and no controller reset.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped (not root, nvme_hmb_pci
# not installed, or the controller is not the emulated drive).

# shellcheck source=selftests/ksft_lib
. "$(dirname "$0")/ksft_lib"
# shellcheck source=selftests/nvme_lib
. "$(dirname "$0")/nvme_lib"

# the tests of sections 1-5, and of section 6 (tool_tests)
PLAN=107
TOOL_TESTS=16

# tf FUNCTION ARGS...: a function of the tool, on its own (sourced in a
# shell of its own: the tool sets -eu)
tf() {
	sh -c 'NVME_HMB_SOURCE=1 . "$0"; "$@"' "$TOOL" "$@"
}

# tfs SCRIPT: SCRIPT in a shell that has the tool's functions
tfs() {
	sh -c 'NVME_HMB_SOURCE=1 . "$0"; eval "$1"' "$TOOL" "$1"
}

# tool_tests: section 6, the functions on made-up input ($TOOL_TESTS tests)
tool_tests() {
	mkdir -p "$T/tool"
	R=$T/tool/runs.csv
	cat >"$R" <<'EOF'
hmb_mib,size_kib,span_mib,workload,run,offset_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms
0,0,256,span,1,100,300.0,10,20,600,2000
0,0,256,span,2,50,100.0,11,21,200,2000
0,0,256,span,3,7,200.0,12,22,400,2000
0,0,2048,zipf:1.2,1,0,50.0,1,2,100,2000
0,0,2048,zipf:1.2,2,0,70.0,3,4,140,2000
16,16384,256,span,1,100,900.5,5,6,1800,2000
16,16384,256,span,2,50,800.0,7,8,1600,2000
16,16384,256,span,3,7,5.0,9,9,10,2000
16,16384,256,span,4,9,4000.0,1,1,8000,2000
16,16384,2048,zipf:1.2,1,0,600.0,1,2,100,2000
0,0,4096,span,1,9,90.0,1,2,100,2000
16,16384,4096,span,1,9,700.0,1,2,100,2000
EOF
	printf '0 0\n16 3\n16 5\n' >"$T/tool/descs"
	tf aggregate "$R" "$T/tool/descs" random >"$T/tool/agg" 2>&1
	sed 's/^/# /' "$T/tool/agg"
	check "aggregate: the header, nine columns as before and five more" eq \
		"$(sed -n 1p "$T/tool/agg")" \
		"hmb_mib,size_kib,nr_descs,span_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms,iops_min,iops_max,runs,workload,offset"
	check "aggregate: 3 runs: the median run's figures, min, max" eq \
		"$(sed -n 2p "$T/tool/agg")" "0,0,0,256,200.0,12,22,400,2000,100.0,300.0,3,span,random"
	check "aggregate: 2 runs: the lower middle one; zipf rows read from the start" eq \
		"$(sed -n 3p "$T/tool/agg")" "0,0,0,2048,50.0,1,2,100,2000,50.0,70.0,2,zipf:1.2,first"
	check "aggregate: 4 unordered runs: the lower middle one; nr_descs of the first round" eq \
		"$(sed -n 4,5p "$T/tool/agg" | tr '\n' ' ')" \
		"16,16384,3,256,800.0,7,8,1600,2000,5.0,4000.0,4,span,random 16,16384,3,2048,600.0,1,2,100,2000,600.0,600.0,1,zipf:1.2,first "
	# shellcheck disable=SC2016 # the inner shell's
	tfs 'for m in 0 1 255 16128 1048575; do r=1; while [ $r -le 99 ]; do
		echo "$m $r $(offset_mib 4242 $r $m) $(offset_mib 4242 $r $m) $(offset_mib 1 $r $m)"
		r=$((r + 1)); done; done' >"$T/tool/offs" 2>&1
	# shellcheck disable=SC2016 # awk's
	check "offset_mib: whole MiB within 0..max, 5 ranges x 99 runs x 2 seeds" \
		awk '$3 !~ /^[0-9]+$/ || $3 > $1 || $5 !~ /^[0-9]+$/ || $5 > $1 { print "# " $0; bad = 1 }
		     END { exit bad || NR != 495 }' "$T/tool/offs"
	# shellcheck disable=SC2016 # awk's
	check "offset_mib: the same for the same seed and run; spread over the range" \
		awk '$3 != $4 { print "# not reproducible: " $0; bad = 1 }
		     $1 == 16128 { seen[$3] = 1; if ($3 < 8064) lo++; else hi++ }
		     END { n = 0; for (o in seen) n++
			   if (n < 90 || lo < 25 || hi < 25) { print "# " n " distinct, " lo " low, " hi " high"; bad = 1 }
			   exit bad }' "$T/tool/offs"
	check "theta: numbers taken and written as fio reads them" eq \
		"$(for t in 1.2 1.20 0 0.0 10 0.5 2; do tf theta "$t" || echo bad; done | tr '\n' ' ')" \
		"1.2 1.2 0 0 10 0.5 2 "
	check "theta: 1 (fio refuses it), negative, above 10, exponents, bare dots, words refused" eq \
		"$(for t in 1 1.0 1.00000001 -1 10.5 1e3 .5 1. abc '' 1.2.3 ' 1'; do tf theta "$t" >/dev/null 2>&1 && echo "took '$t'"; done)" ""

	# run_point reads fio's JSON (jq): a stand-in fio whose strings hold
	# ',{}[]"' and a member named as the ones read
	mkdir -p "$T/tool/bin"
	cat >"$T/tool/bin/fio" <<-'EOF'
	#!/bin/sh
	for a; do case $a in --output=*) out=${a#--output=} ;; esac; done
	cat >"$out" <<'JSON'
	{"fio version": "x,{}[]", "jobs": [{"jobname": "j,{\"io_kbytes\": 1}[",
	 "error": 0, "read": {"io_kbytes": 8000, "runtime": 2000,
	 "lat_ns": {"mean": 123456.7}, "clat_ns": {"percentile":
	 {"50.000000": 100000, "99.000000": 345678}}}}]}
	JSON
	EOF
	chmod +x "$T/tool/bin/fio"
	check "run_point: fio's JSON read: IOPS, mean and p99 latency (us), reads, runtime" eq \
		"$(PATH=$T/tool/bin:$PATH tfs "TMPD='$T/tool' NODE=/dev/nvme0n1 ENGINE=psync RUNTIME=2 RAMP=0; run_point 256 0 1" 2>&1)" \
		"1000.0 123.5 345 2000 2000"

	# An older sweep's CSV (nine columns, one run a point, no zipf)
	{
		echo "hmb_mib,size_kib,nr_descs,span_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms"
		echo "0,0,0,1024,100,1,1,1,1"
		echo "1,1024,1,1024,4000.5,250,400,8000,2000"
		echo "1,1024,1,2048,2000,500,900,4000,2000"
	} >"$T/tool/old.csv"
	"$TOOL" plot "$T/tool/old.csv" --text >"$T/tool/old.txt" 2>&1
	sed 's/^/# /' "$T/tool/old.txt"
	check "plot --text of an older CSV: the table as before, no spread, no hot set" eq \
		"$(cat "$T/tool/old.txt")" \
		"span            HMB off    HMB 1 MiB
1 GiB              100         4000 
2 GiB                 -        2000>
IOPS; \">\": the span is beyond that HMB's coverage (1 MiB of HMB maps 1 GiB)"
	tf gp_script "$T/tool/old.csv" t '' '' >"$T/tool/old.gp" 2>&1
	tf gp_zipf "$T/tool/old.csv" t '' '' >"$T/tool/oldz.gp" 2>&1
	check "gnuplot script of an older CSV: lines without bars, no hot-set chart" sh -c \
		"grep -q 'using 1:2 with linespoints' '$T/tool/old.gp' &&
		 ! grep -q 'yerrorlines\\|grant' '$T/tool/old.gp' && [ ! -s '$T/tool/oldz.gp' ]"

	# This sweep's CSV, and its grants (KiB)
	cp "$T/tool/agg" "$T/tool/new.csv"
	tf gp_script "$T/tool/new.csv" t 4096 262144 >"$T/tool/new.gp" 2>&1
	check "gnuplot script: median, min, max with yerrorlines; nvme-pci's grant at 4 GiB of span" sh -c \
		"grep -qx '256 200.0 100.0 300.0' '$T/tool/new.gp' &&
		 grep -q 'using 1:2:3:4 with yerrorlines' '$T/tool/new.gp' &&
		 grep -q '^set arrow from 4096, graph 0 to 4096, graph 1 nohead dashtype 3' '$T/tool/new.gp' &&
		 grep -q \"nvme-pci's grant: 4 MiB\" '$T/tool/new.gp' &&
		 grep -q \"nvme-hmb's grant: 256 MiB (maps 256 GiB: off the chart)\" '$T/tool/new.gp'"
	tf gp_zipf "$T/tool/new.csv" t 4096 262144 >"$T/tool/zipf.gp" 2>&1
	check "gnuplot script of the hot set: IOPS against the HMB size, bars min-max, the grants" sh -c \
		"grep -qx '0 50.0 50.0 70.0' '$T/tool/zipf.gp' && grep -qx '16 600.0 600.0 600.0' '$T/tool/zipf.gp' &&
		 grep -q '^set arrow from 4.000, graph 0' '$T/tool/zipf.gp' &&
		 grep -q '^set arrow from 256.000, graph 0' '$T/tool/zipf.gp' &&
		 grep -q 'using 1:2:3:4 with yerrorlines' '$T/tool/zipf.gp'"
	"$TOOL" plot "$T/tool/new.csv" --text >"$T/tool/new.txt" 2>&1
	sed 's/^/# /' "$T/tool/new.txt"
	check "plot --text: medians with '>', min-max, the hot set" sh -c \
		"grep -q '^256 MiB  *200  *800 *\$' '$T/tool/new.txt' &&
		 grep -q '^256 MiB  *100-300  *5-4000\$' '$T/tool/new.txt' &&
		 grep -q '^HMB 16 MiB  *600  *600-600\$' '$T/tool/new.txt' &&
		 grep -q '^HMB off  *50  *50-70\$' '$T/tool/new.txt'"
	if command -v gnuplot >/dev/null 2>&1; then
		cp "$T/tool/new.csv" "$T/tool/sweep.csv"
		echo "grant_linux_kib=4096 grant_nvme_hmb_kib=" >"$T/tool/sweep.txt"
		check "plot with gnuplot: the span chart and the hot-set chart" sh -c \
			"'$TOOL' plot '$T/tool/sweep.csv' >/dev/null &&
			 [ -s '$T/tool/sweep.svg' ] && [ -s '$T/tool/sweep.png' ] &&
			 [ -s '$T/tool/sweep-zipf.svg' ] && [ -s '$T/tool/sweep-zipf.png' ] &&
			 grep -q \"nvme-pci's grant: 4 MiB\" '$T/tool/sweep.gp' '$T/tool/sweep-zipf.gp'"
	else
		# (the test VMs have no gnuplot)
		check "plot without gnuplot: the tables, no image, how to get gnuplot" sh -c \
			"! '$TOOL' plot '$T/tool/new.csv' >'$T/tool/nognuplot.txt' 2>&1 &&
			 grep -q '^HMB 16 MiB  *600  *600-600\$' '$T/tool/nognuplot.txt' &&
			 grep -q 'gnuplot is not installed: no images' '$T/tool/nognuplot.txt' &&
			 [ ! -e '$T/tool/new.svg' ] && [ ! -e '$T/tool/new-zipf.gp' ]"
	fi
	sed '3s/zipf:1.2/zipf:high/' "$T/tool/new.csv" >"$T/tool/bad.csv"
	check "plot refuses a new CSV with a bad workload" sh -c \
		"! '$TOOL' plot '$T/tool/bad.csv' --text >'$T/tool/bad.txt' 2>&1 && grep -q 'line 3' '$T/tool/bad.txt'"
}

if [ "${NVME_HMB_SWEEP_TOOL_ONLY:-0}" = 1 ]; then
	TOOL=${NVME_HMB_TOOL:-$(cd "$(dirname "$0")/.." && pwd)/tools/nvme-hmb}
	T=${TMPDIR:-/tmp}/nvme_hmb_sweep.$$
	mkdir -p "$T"
	echo "TAP version 13"
	echo "1..$TOOL_TESTS"
	tool_tests
	rm -rf "$T"
	[ "$failed" -eq 0 ] || exit 1
	exit 0
fi

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
echo "1..$((PLAN + TOOL_TESTS))"

D=$SYS/$CTRL
modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
mkdir -p "$T/bin" "$T/nofio"
OUT=$T/out
LOG=$T/fio.log
FAKE=$T/bin/fio
cat >"$FAKE" <<'EOF'
#!/bin/sh
# stand-in fio: records its arguments, writes its JSON result
case " $* " in
*" --enghelp "*) printf 'Available IO engines:\n\tpsync\n\tlibaio\n'; exit 0 ;;
*" --version "*) echo fio-3.33-fake; exit 0 ;;
*" --cmdhelp=random_distribution "*)
	# FAKE_FIO_NO_RD: an fio without the option
	if [ -n "${FAKE_FIO_NO_RD:-}" ]; then
		echo "No such command: random_distribution"
	else
		echo " random_distribution: Random offset distribution generator"
	fi
	exit 0 ;;
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
# fio's JSON (--output-format=json) into the file of --output=, with
# strings that a hand parser would trip on
for a; do
	case $a in --output=*) out=${a#--output=} ;; esac
done
cat >"$out" <<'JSON'
{"fio version": "fio-3.33-fake, {}[]", "jobs": [{"jobname": "a,{\"b\"}[c]",
 "error": 0, "read": {"io_kbytes": 4000, "runtime": 1000, "iops": 1000.0,
 "lat_ns": {"mean": 101500.0}, "clat_ns": {"mean": 100000.0,
 "percentile": {"1.000000": 90000, "50.000000": 96000,
  "99.000000": 250000, "99.900000": 400000}}}}]}
JSON
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
check "--hmb with letters" refused 2 "'abc' is not a whole number" sweep "$dev" --hmb abc
check "--hmb negative" refused 2 "'-1' is not a whole number" sweep "$dev" --hmb 0,-1
check "--hmb fraction" refused 2 "'1.5' is not a whole number" sweep "$dev" --hmb 1.5
check "--hmb hex" refused 2 "'0x10' is not a whole number" sweep "$dev" --hmb 0x10
check "--hmb above the engine's range" refused 2 "out of range" sweep "$dev" --hmb 1048577
check "--hmb huge" refused 2 "out of range" sweep "$dev" --hmb 99999999999999999999999
check "--hmb empty" refused 2 "not a comma-separated list" sweep "$dev" --hmb ''
check "--hmb with an empty item" refused 2 "not a comma-separated list" sweep "$dev" --hmb 1,,2
check "--hmb with a space" refused 2 "not a whole number" sweep "$dev" --hmb '1, 2'
check "--spans 0" refused 2 "out of range" sweep "$dev" --spans 0
check "--spans beyond the namespace" refused 2 "out of range (1 to $NS_MIB)" \
	sweep "$dev" --spans 256,$((NS_MIB + 1))
check "--to beyond the namespace" refused 2 "the namespace is $NS_MIB MiB" \
	sweep "$dev" --to $((NS_MIB * 2))
check "--from above --to" refused 2 "above --to" sweep "$dev" --from 1024 --to 512
check "--spans with --from" refused 2 "not both" sweep "$dev" --spans 256 --from 256
check "--runtime 0" refused 2 "--runtime: 0 is out of range" sweep "$dev" --runtime 0
check "--runtime 3601" refused 2 "out of range" sweep "$dev" --runtime 3601
check "--ramp with letters" refused 2 "not a whole number" sweep "$dev" --ramp 1s
check "--iodepth 0" refused 2 "out of range" sweep "$dev" --iodepth 0
check "--seed negative" refused 2 "not a whole number" sweep "$dev" --seed -5
check "--dir with a quote: exit 2" refused 2 "without quotes" sweep "$dev" --dir "a'b"
check "-o, the old spelling of --dir: still taken, with a deprecation note" \
	refused 2 "'-o' is deprecated and goes in the next release: use --dir DIR" \
	sweep "$dev" -o "a'b"
check "--runtime=0, the option=value form: exit 2" refused 2 \
	"--runtime: 0 is out of range" sweep "$dev" --runtime=0
check "no fio" refused 1 "fio is not installed" \
	env PATH="$T/nofio:/usr/sbin:/usr/bin:/sbin:/bin" "$TOOL" sweep "$dev"
check "--repeat 0: exit 2" refused 2 "--repeat: 1 to 99" sweep "$dev" --repeat 0
check "--repeat 100: exit 2" refused 2 "--repeat: 1 to 99" sweep "$dev" --repeat 100
check "--repeat with letters: exit 2" refused 2 "--repeat 'two'" sweep "$dev" --repeat two
check "--repeat negative: exit 2" refused 2 "--repeat '-3'" sweep "$dev" --repeat -3
check "--zipf 1 (fio refuses it): exit 2" refused 2 "--zipf '1'" sweep "$dev" --zipf 1
check "--zipf above 10: exit 2" refused 2 "--zipf '10.5'" sweep "$dev" --zipf 10.5
check "--zipf negative: exit 2" refused 2 "--zipf '-1.2'" sweep "$dev" --zipf -1.2
check "--zipf with an exponent: exit 2" refused 2 "--zipf '1e1'" sweep "$dev" --zipf 1e1
check "--zipf empty: exit 2" refused 2 "--zipf ''" sweep "$dev" --zipf ''
check "--offset middle: exit 2" refused 2 "--offset 'middle': random or first" \
	sweep "$dev" --offset middle
check "--offset without its value: exit 2" refused 2 "--offset needs a value" \
	sweep "$dev" --offset
check "an fio without random_distribution" refused 1 "no random_distribution option" \
	env FAKE_FIO_NO_RD=1 PATH="$SPATH" "$TOOL" sweep "$dev"

# --- 4. a sweep -------------------------------------------------------------
# One run a point from the start, as the sweeps before --repeat
: >"$LOG"
sweep "$dev" --hmb 0,16,64 --spans 256,2048 --runtime 1 --ramp 0 --dir "$OUT" \
	--repeat 1 --zipf 0 --offset first >"$T/said" 2>&1
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
	--time_based --runtime=1 --randseed=4242 "--filename=$dev" \
	--output-format=json
check "no fio run could write" sh -c "! grep -qE -- '--rw=(write|randwrite|rw|randrw|trim)|--verify|--create' $LOG"
check "the spans asked: 256 MiB and 2 GiB" sh -c \
	"[ \$(grep -c -- '--size=268435456 ' $LOG) = 3 ] && [ \$(grep -c -- '--size=2147483648 ' $LOG) = 3 ]"
check "the CSV's header" eq "$(head -n1 "$OUT/sweep.csv")" \
	"hmb_mib,size_kib,nr_descs,span_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms,iops_min,iops_max,runs,workload,offset"
check "the CSV's added columns: one run, spans from the start" eq \
	"$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f10- | sort | uniq -c | tr -s ' ')" \
	" 6 1000.0,1000.0,1,span,first"
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
sweep "$dev" --spans 256 --runtime 1 --ramp 0 --dir "$OUT" --repeat 1 --zipf 0 \
	>"$T/said" 2>&1
rc=$?
show_said
check "sweep with the default sizes: exit 0" eq "$rc" 0
# 0, 1/4, 1/2 and all of the current limit (32 < HMPRE 64), at least HMMIN
# (14 MiB)
check "default HMB sizes: 0, 14 (HMMIN), 16, 32" eq \
	"$(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | uniq | tr '\n' ' ')" "0 14 16 32 "
check "limit_mib restored to 32 after the defaults" eq "$(lim)" 32
sweep "$dev" --hmb 0 --runtime 1 --ramp 0 --dir "$OUT" --repeat 1 --zipf 0 \
	>"$T/said" 2>&1
rc=$?
show_said
# spans from 256 MiB doubling to the namespace
spans=$(awk -v t=$NS_MIB 'BEGIN { for (s = 256; s < t; s *= 2) printf "%d ", s; printf "%d ", t }')
check "default spans: 256 MiB doubling to $NS_MIB" eq \
	"$rc $(tail -n +2 "$OUT/sweep.csv" | cut -d, -f4 | tr '\n' ' ')" "0 $spans"
echo 8 >"$D/limit_mib" 2>/dev/null
sweep "$dev" --spans 256 --runtime 1 --ramp 0 --dir "$OUT" --repeat 1 --zipf 0 \
	>"$T/said" 2>&1
rc=$?
show_said
# a limit below HMMIN means off: the defaults go up to HMPRE then
check "limit 8 MiB (below HMMIN): default sizes 0, 16, 32, 64" eq \
	"$rc $(tail -n +2 "$OUT/sweep.csv" | cut -d, -f1 | tr '\n' ' ')" "0 0 16 32 64 "
check "limit_mib restored to 8, HMB off" eq "$(lim) $(val "$D/size_kib")" "8 0"

# The defaults: random offsets, zipf 1.2; two runs a point
echo 32 >"$D/limit_mib"
OUT2=$T/out2
: >"$LOG"
# Spans below the namespace (2 GiB in the VM): a span as large as the
# namespace can only start at 0.
sweep "$dev" --hmb 0,16 --spans 256,1024 --repeat 2 --runtime 1 --ramp 0 \
	--dir "$OUT2" >"$T/said" 2>&1
rc=$?
show_said
check "sweep --repeat 2: exit 0" eq "$rc" 0
check "fio ran 12 times: 2 runs x 2 HMB sizes x (2 spans + the hot set)" \
	eq "$(wc -l <"$LOG" | tr -d ' ')" 12
check "run 1 with seed 4242, run 2 with 4243" eq \
	"$(grep -c -- ' --randseed=4242 ' "$LOG") $(grep -c -- ' --randseed=4243 ' "$LOG")" "6 6"
# offsets: "span offset size" of each span run, in bytes
sed -n '/random_distribution/d; s/.* --offset=\([0-9]*\) --size=\([0-9]*\) .*/\1 \2/p' "$LOG" >"$T/offs"
sed 's/^/# offset, size: /' "$T/offs"
# shellcheck disable=SC2016 # awk's
check "span runs: 1 MiB-aligned offsets, within the namespace" awk -v ns=$((NS_MIB * 1048576)) '
	$1 % 1048576 || $1 + $2 > ns { print "# " $0; bad = 1 }
	END { exit bad || NR != 8 }' "$T/offs"
check "span runs: the two runs read at different offsets, the same for both HMB sizes" \
	eq "$(sort -u "$T/offs" | wc -l | tr -d ' ')" 4
check "hot-set runs: zipf:1.2 over the whole namespace" eq \
	"$(grep -c -- "--offset=0 --size=$((NS_MIB * 1048576)) .*--random_distribution=zipf:1.2" "$LOG")" 4
check "sweep.csv: the median of 2 runs, span rows at random offsets, hot-set rows" eq \
	"$(tail -n +2 "$OUT2/sweep.csv" | cut -d, -f1,4,5,10- | tr '\n' ' ')" \
	"0,256,1000.0,1000.0,1000.0,2,span,random 0,1024,1000.0,1000.0,1000.0,2,span,random 0,$NS_MIB,1000.0,1000.0,1000.0,2,zipf:1.2,first 16,256,1000.0,1000.0,1000.0,2,span,random 16,1024,1000.0,1000.0,1000.0,2,span,random 16,$NS_MIB,1000.0,1000.0,1000.0,2,zipf:1.2,first "
check "sweep-runs.csv: the header and a row a run" eq \
	"$(head -n 1 "$OUT2/sweep-runs.csv") $(($(wc -l <"$OUT2/sweep-runs.csv") - 1))" \
	"hmb_mib,size_kib,span_mib,workload,run,offset_mib,iops,lat_mean_us,lat_p99_us,reads,runtime_ms 12"
check "sweep-runs.csv: each span run's offset as fio read it" eq \
	"$(awk -F, '$4 == "span" { printf "%.0f %.0f\n", $6 * 1048576, $3 * 1048576 }' "$OUT2/sweep-runs.csv")" \
	"$(cat "$T/offs")"
json=$("$TOOL" status --json --no-nvme-cli "$CTRL" | tr -d ' \n')
gl=$(printf '%s\n' "$json" | sed -n 's/.*"nvme_pci_kib":\([0-9]*\).*/\1/p')
gh=$(printf '%s\n' "$json" | sed -n 's/.*"nvme_hmb_kib":\([0-9]*\).*/\1/p')
check "sweep.txt: the grants status gives (nvme-pci ${gl:-?}, nvme-hmb ${gh:-?} KiB)" \
	grep -qx "grant_linux_kib=$gl grant_nvme_hmb_kib=$gh" "$OUT2/sweep.txt"
check "plot --text: the medians, the min-max, the hot set" sh -c \
	"'$TOOL' plot '$OUT2/sweep.csv' --text | tee /dev/stderr | grep -q '^HMB 16 MiB  *1000  *1000-1000\$'"
check "limit_mib restored to 32 after the defaults" eq "$(lim)" 32

# --- 5. interrupted ---------------------------------------------------------
echo 16 >"$D/limit_mib"
FAKE_FIO_FAIL=1 PATH=$SPATH "$TOOL" sweep "$dev" --hmb 64 --spans 256 \
	--runtime 1 --dir "$OUT" >"$T/said" 2>&1
rc=$?
show_said
check "fio failing: exit 1, says so" sh -c "[ $rc = 1 ] && grep -q 'fio failed' $T/said"
check "fio failing: limit_mib restored to 16" eq "$(lim)" 16
# The signal comes from the stand-in fio of the first point (limit_mib is
# 64 then); the sweep stops there.
for sig in TERM INT; do
	: >"$LOG"
	FAKE_FIO_SIGNAL=$sig PATH=$SPATH "$TOOL" sweep "$dev" --hmb 64,32 \
		--spans 256,512 --runtime 1 --dir "$OUT" >"$T/said" 2>&1
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

# --- 6. the tool's functions --------------------------------------------------
tool_tests
check "rmmod nvme_hmb_pci nvme_hmb" rmmod nvme_hmb_pci nvme_hmb
check "reload nvme with its defaults" reload_nvme
rm -rf "$T"
[ "$failed" -eq 0 ] || exit 1
exit 0
