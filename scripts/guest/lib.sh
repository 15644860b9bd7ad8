# SPDX-License-Identifier: GPL-2.0
#
# Helpers for nvme-hmb guest programs (busybox sh), installed in the VM as
# /lib/nvme-hmb/lib.sh ($NVME_HMB_LIB).  Use:  . "$NVME_HMB_LIB"
#
# Machine-readable results go to $NVME_HMB_RESULTS (the VM's second serial
# port, /dev/ttyS1), never to the console, in blocks of
#
#   # nvme-hmb-suite: <name> <kind>       kind: ktap (KUnit) or tap (TAP 13)
#   <the suite's KTAP or TAP text>
#   # nvme-hmb-exit-status: <name> <rc>   tap suites only: the script's rc
#
# /init appends the end record "# nvme-hmb-exit: <rc>".  scripts/check-run
# parses it all on the host.

: "${NVME_HMB_RESULTS:=/dev/null}"
NVME_HMB_TMP=${NVME_HMB_TMP:-/tmp/nvme-hmb}

# results_line TEXT...: write one line to the results port.
results_line()
{
	printf '%s\n' "$*" >>"$NVME_HMB_RESULTS"
}

# suite_begin NAME KIND: start a suite block on the results port.
suite_begin()
{
	case "$2" in
	ktap|tap) ;;
	*) echo "suite_begin: bad kind '$2' (ktap or tap)" >&2; return 2 ;;
	esac
	results_line "# nvme-hmb-suite: $1 $2"
}

# emit_file FILE: copy FILE to the results port (with a final newline).
emit_file()
{
	[ -r "$1" ] || { echo "emit_file: cannot read $1" >&2; return 1; }
	{
		cat "$1"
		[ -z "$(tail -c 1 "$1")" ] || echo
	} >>"$NVME_HMB_RESULTS"
}

# run_selftest PATH: run a TAP selftest; its stdout (the TAP) is streamed
# to the console and to the results port, framed as tap suite `basename PATH .sh`;
# stderr goes to the console only.  The exit status is recorded with
# "# nvme-hmb-exit-status:" (kselftest: 0 pass, 4 skip, other = fail) and
# the TAP is kept in $NVME_HMB_TMP/<name>.tap.  Returns 0 if the script
# exited 0 or 4 and printed no top-level "not ok", else 1.
run_selftest()
{
	_st_path=$1
	_st_name=$(basename "$_st_path" .sh)
	mkdir -p "$NVME_HMB_TMP"
	_st_tap=$NVME_HMB_TMP/$_st_name.tap
	_st_rcf=$NVME_HMB_TMP/$_st_name.rc

	echo "nvme-hmb: selftest $_st_name: begin"
	suite_begin "$_st_name" tap || return 1
	# Run from the script's directory, like kselftest's runner does.
	{
		if [ -x "$_st_path" ]; then
			(cd "$(dirname "$_st_path")" && exec "$_st_path") 2>&3 3>&-
		else
			(cd "$(dirname "$_st_path")" && exec sh "$_st_path") 2>&3 3>&-
		fi
		echo $? >"$_st_rcf"
	} 3>&2 </dev/null | tee -a "$NVME_HMB_RESULTS" | tee "$_st_tap"
	# Streamed, so that a crash leaves the partial TAP on the port too.
	[ -z "$(tail -c 1 "$_st_tap")" ] || results_line ""
	_st_rc=$(cat "$_st_rcf" 2>/dev/null || echo 255)
	results_line "# nvme-hmb-exit-status: $_st_name $_st_rc"
	echo "nvme-hmb: selftest $_st_name: exit status $_st_rc"

	case "$_st_rc" in
	0|4) ;;
	*) return 1 ;;
	esac
	! grep -q '^not ok' "$_st_tap"
}

# run_kunit MODULE SUITE...: load a KUnit test module (KUnit runs its
# suites during module init), copy each SUITE's debugfs results to the
# results port as a ktap suite, and unload the module.  A suite without
# results is reported as one failed case.  Returns 0 if the module loaded
# and unloaded and no suite reported "not ok".
run_kunit()
{
	_ku_mod=$1
	shift
	_ku_ret=0
	echo "nvme-hmb: kunit $_ku_mod: modprobe"
	if ! modprobe "$_ku_mod"; then
		echo "nvme-hmb: kunit $_ku_mod: modprobe failed" >&2
		for _ku_s in "$@"; do
			suite_begin "$_ku_s" ktap
			results_line "not ok 1 $_ku_s # modprobe $_ku_mod failed"
		done
		return 1
	fi
	for _ku_s in "$@"; do
		_ku_f=/sys/kernel/debug/kunit/$_ku_s/results
		suite_begin "$_ku_s" ktap
		if [ -r "$_ku_f" ]; then
			emit_file "$_ku_f"
			grep -q 'not ok' "$_ku_f" && _ku_ret=1
		else
			echo "nvme-hmb: kunit: no suite $_ku_s ($_ku_f)" >&2
			results_line "not ok 1 $_ku_s # no $_ku_f"
			_ku_ret=1
		fi
	done
	# modprobe -r also unloads the modules it pulled in (engine, mock).
	echo "nvme-hmb: kunit $_ku_mod: modprobe -r"
	modprobe -r "$_ku_mod" || _ku_ret=1
	return $_ku_ret
}
