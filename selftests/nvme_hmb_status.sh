#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nvme-hmb-vm: main emu
# nvme-hmb-kernel: stock stock-6.12 newest
#
# `nvme-hmb status` and `nvme-hmb status --json` (tools/nvme-hmb) checked
# against sysfs.  The JSON is parsed by a strict JSON parser in awk (the
# guest has no other), which also checks that numbers are numbers.
#
# Mock controllers (the main VM, or any machine without the emulated
# drive): three shapes, one granted, one off below HMMIN, one limited by
# limit_mib; every field, the owner and the next step, in JSON and text;
# one controller by name; errors; escaping of hostile strings (a made-up
# sysfs); no controllers at all; QEMU's own NVMe (HMPRE 0) through
# nvme-cli in the VM.
#
# The emulated DRAM-less drive (emu VM, or NVME_HMB_TEST_DEVICE naming
# it): nvme-pci owning the HMB with no nvme-hmb module, nvme-pci owning it
# beside nvme_hmb_pci (the engine's reason), nobody (nvme-pci's
# max_host_mem_size_mb=0, nvme_hmb_pci not loaded), nvme-hmb owning it
# (Get Features agrees), off below HMMIN and limited; nvme-pci is
# reloaded with its defaults at the end.
#
# Exit: 0 all passed, 1 a test failed, 4 skipped (not root, the modules
# or the tool not installed, or nvme_hmb_pci loaded on a real machine).

# shellcheck source=selftests/ksft_lib
. "$(dirname "$0")/ksft_lib"
# shellcheck source=selftests/nvme_lib
. "$(dirname "$0")/nvme_lib"

TOOL=$(command -v nvme-hmb || echo "$(cd "$(dirname "$0")/.." && pwd)/tools/nvme-hmb")
ksft_header nvme_hmb_mock
if [ ! -x "$TOOL" ]; then
	echo "1..0 # SKIP no nvme-hmb tool"
	exit "$KSFT_SKIP"
fi
mkdir -p "$T"
J=$T/status.json
FL=$T/status.flat

# json_flat: strict JSON on stdin, an array of objects; prints a line per
# leaf, "INDEX<TAB>KEY<TAB>s:STRING|n:NUMBER|null|true|false" (nested keys
# joined with '.'), or "error at OFFSET: ..." and exits 1.
json_flat() {
	awk '
	function err(m) { print "error at " p ": " m; bad = 1; exit 1 }
	function ws() { while (p <= L && index(" \t\n\r", substr(s, p, 1))) p++ }
	function str(   o, c, h) {
		if (substr(s, p, 1) != "\"") err("expected a string")
		p++; o = ""
		while (1) {
			if (p > L) err("unterminated string")
			c = substr(s, p, 1)
			if (c == "\"") { p++; return o }
			if (c == "\\") {
				c = substr(s, p + 1, 1)
				if (c == "u") {
					h = substr(s, p + 2, 4)
					if (h !~ /^[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]$/)
						err("bad \\u escape")
					o = o "\\u" h; p += 6; continue
				}
				if (c == "" || index("\"\\/bfnrt", c) == 0) err("bad escape")
				o = o (c == "t" ? "\\t" : c == "n" ? "\\n" : c == "r" ? "\\r" : c == "b" ? "\\b" : c == "f" ? "\\f" : c)
				p += 2; continue
			}
			if (c < " ") err("raw control character in a string")
			o = o c; p++
		}
	}
	function val(path,   c, t) {
		ws(); c = substr(s, p, 1)
		if (c == "{") return obj(path)
		if (c == "[") return arr(path)
		if (c == "\"") { t = str(); leaf(path, "s:" t); return }
		t = substr(s, p)
		if (match(t, /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) {
			leaf(path, "n:" substr(t, 1, RLENGTH)); p += RLENGTH; return
		}
		if (substr(t, 1, 4) == "null") { leaf(path, "null"); p += 4; return }
		if (substr(t, 1, 4) == "true") { leaf(path, "true"); p += 4; return }
		if (substr(t, 1, 5) == "false") { leaf(path, "false"); p += 5; return }
		err("expected a value")
	}
	function obj(path,   k, c) {
		p++; ws()
		if (substr(s, p, 1) == "}") { p++; return }
		while (1) {
			ws(); k = str(); ws()
			if (substr(s, p, 1) != ":") err("expected :")
			p++
			if ((path SUBSEP k) in seen) err("duplicate key " k)
			seen[path SUBSEP k] = 1
			val(path == "" ? k : path "." k); ws()
			c = substr(s, p, 1); p++
			if (c == "}") return
			if (c != ",") err("expected , or }")
		}
	}
	function arr(path,   i, c) {
		p++; ws(); i = 0
		if (substr(s, p, 1) == "]") { p++; return }
		while (1) {
			val(depth++ == 0 ? i "\t" : path "." i); depth--; ws(); i++
			c = substr(s, p, 1); p++
			if (c == "]") return
			if (c != ",") err("expected , or ]")
		}
	}
	function leaf(path, v) {
		if (path !~ /\t./) err("not an array of objects")
		sub(/\t\./, "\t", path)
		print path "\t" v
	}
	{ s = s $0 "\n" }
	END {
		if (bad) exit 1
		L = length(s); p = 1; depth = 0
		ws()
		if (substr(s, p, 1) != "[") err("not an array")
		val("")
		ws()
		if (p <= L) err("trailing characters")
	}'
}

# status_json [ARGS]: `nvme-hmb status --json ARGS` into $J, exit 0,
# nothing on stderr, valid JSON, flattened into $FL; $J and $FL are
# removed first, so that a failed run leaves no older answer to read.
# fresh_json CHECK...: status_json, then CHECK on its answer
fresh_json() { status_json && "$@"; }
status_json() {
	rm -f "$J" "$FL"
	"$TOOL" status --json $CLI "$@" >"$J" 2>"$T/err" || {
		echo "# nvme-hmb status --json $*: exit $?: $(cat "$T/err")"
		return 1
	}
	[ ! -s "$T/err" ] || { echo "# stderr: $(cat "$T/err")"; return 1; }
	json_flat <"$J" >"$FL" || {
		echo "# invalid JSON: $(tail -n 1 "$FL")"
		sed 's/^/# | /' "$J"
		return 1
	}
}

# jget NAME KEY: the flattened value of KEY in the object named NAME
jget() {
	awk -F'\t' -v n="$1" -v k="$2" '
	$2 == "name" && $3 == "s:" n { i = $1 }
	{ key[$1, $2] = $0 }
	END {
		if (i == "" || !((i, k) in key)) { print "(missing)"; exit }
		v = key[i, k]; sub(/^[^\t]*\t[^\t]*\t/, "", v); print v
	}' "$FL"
}

# json_agrees NAME OWNER: the object of NAME is what sysfs says, as
# numbers and strings, with OWNER
json_agrees() {
	for _k in hmpre_kib hmmin_kib hmminds_kib hmmaxd limit_mib size_kib \
		  nr_descs; do
		eq "$(jget "$1" $_k)" "n:$(val "$SYS/$1/$_k")" ||
			{ echo "# $1 $_k"; return 1; }
	done
	eq "$(jget "$1" state)" "s:$(val "$SYS/$1/state")" &&
	eq "$(jget "$1" reason)" "s:$(val "$SYS/$1/reason")" &&
	eq "$(jget "$1" owner)" "s:$2"
}

# next_is NAME TEXT: the next step of NAME (JSON) starts with TEXT
next_is() {
	case "$(jget "$1" next)" in
	"s:$2"*) return 0 ;;
	esac
	echo "# next of $1: '$(jget "$1" next)', expected 's:$2...'"
	return 1
}

# text_agrees NAME OWNER WORDS: `nvme-hmb status NAME` says what sysfs
# says, the reason (a token in sysfs and the JSON) in WORDS
text_agrees() {
	"$TOOL" status $CLI "$1" >"$T/text" 2>&1 || return 1
	_s=$(val "$SYS/$1/size_kib")
	if [ "$_s" = 0 ]; then
		_h="none, limit_mib $(val "$SYS/$1/limit_mib")"
	else
		_h="($_s KiB) in $(val "$SYS/$1/nr_descs") descriptors, limit_mib $(val "$SYS/$1/limit_mib")"
	fi
	for _l in "$1: " "  owner:  $2" \
		  "  state:  $(val "$SYS/$1/state") ($3)" \
		  "HMMAXD $(val "$SYS/$1/hmmaxd")" "$_h" "  next:   "; do
		grep -q -F -- "$_l" "$T/text" || {
			echo "# no '$_l' in:"
			sed 's/^/# | /' "$T/text"
			return 1
		}
	done
}

# names_ok: one object per controller: nvme-hmb's and the NVMe class's
names_ok() {
	_want=$(for _p in "$SYS"/* /sys/class/nvme/nvme*; do
		[ -d "$_p" ] && echo "s:${_p##*/}"
	done | sort -u)
	_got=$(awk -F'\t' '$2 == "name" { print $3 }' "$FL" | sort)
	eq "$_got" "$_want" &&
	eq "$(awk -F'\t' '$2 == "name"' "$FL" | wc -l)" \
	   "$(awk -F'\t' '{ print $1 }' "$FL" | sort -u | wc -l)"
}

# refused RC COMMAND...: COMMAND exits RC and prints nothing on stdout
refused() {
	_rc=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	_r=$?
	eq "$_r" "$_rc" && eq "$(cat "$T/out")" "" &&
		[ -s "$T/err" ] || { echo "# stderr: $(cat "$T/err")"; return 1; }
}

# settle FILE: FILE (the tool's output) without the count of free
# page-allocator blocks, which moves between two runs
settle() {
	sed -i -e 's/"free_blocks": [0-9][0-9]*/"free_blocks": N/' \
		-e 's/, [0-9][0-9]* free now)/, N free now)/' "$1"
}

# --- the emulated DRAM-less drive ------------------------------------------
# The newest nvme-cli Debian serves, beside Debian 12's in the test VM
# (scripts/newest-nvme-cli): it answers in JSON where Debian 12's 2.3
# has only text (Get Features).  The tool must read the same through
# either.
NEWCLI=$(command -v nvme-newest 2>/dev/null || true)

# same_newest: `status --json` of the drive through the newest nvme-cli
# is byte for byte what it is through Debian 12's, and says what Get
# Features returned
same_newest() {
	[ -n "$NEWCLI" ] || { echo "# no nvme-newest in this VM"; return 1; }
	"$TOOL" status --json "$CTRL" >"$T/old.json" 2>&1 &&
	NVME_HMB_NVME_CLI=$NEWCLI "$TOOL" status --json "$CTRL" \
		>"$T/new.json" 2>&1 || return 1
	jq -e '.[0].get_features | .ehm == 0 or .ehm == 1 and
		(.hsize_kib | type) == "number"' "$T/new.json" >/dev/null || {
		echo "# no Get Features through $NEWCLI: $(cat "$T/new.json")"
		return 1
	}
	settle "$T/old.json" && settle "$T/new.json" &&
	cmp -s "$T/old.json" "$T/new.json" || {
		echo "# nvme-cli 2.3:   $(cat "$T/old.json")"
		echo "# nvme-newest:    $(cat "$T/new.json")"
		return 1
	}
}

# newest_json: the newest nvme-cli answers Get Features 0Dh in JSON
# (so that same_newest tests the tool's JSON path, not its text one)
newest_json() {
	[ -n "$NEWCLI" ] || { echo "# no nvme-newest in this VM"; return 1; }
	echo "# $("$NEWCLI" version | head -n 1)"
	"$NEWCLI" get-feature "/dev/$CTRL" -f 0x0d -H -o json >"$T/gf.json" &&
	grep -q '"Enable Host Memory (EHM)"' "$T/gf.json" &&
	grep -q '"Host Memory Buffer Size (HSIZE)"' "$T/gf.json" || {
		sed 's/^/# | /' "$T/gf.json"
		return 1
	}
}

emu_mode() {
	echo "1..36"
	modprobe -r nvme_hmb_pci nvme_hmb_mock nvme_hmb 2>/dev/null
	D=$SYS/$CTRL
	# unload_reload [PARAM=V]: our modules out, nvme-pci reloaded
	unload_reload() {
		rmmod nvme_hmb_pci && rmmod nvme_hmb && reload_nvme "$@"
	}
	HMBP=/sys/kernel/nvme_hmb/$CTRL/limit_mib

	check "reload nvme with its default cap, no nvme-hmb module" reload_nvme
	"$TOOL" status "$CTRL" 2>&1 | sed 's/^/# /'
	check "status --json: valid" status_json
	pci_owns() {
		feat_read &&
		eq "$(jget "$CTRL" owner)" s:nvme-pci &&
		eq "$(jget "$CTRL" state)" s:enabled &&
		eq "$(jget "$CTRL" size_kib)" "n:$((FEAT_HSIZE * 4))" &&
		eq "$(jget "$CTRL" nr_descs)" "n:$FEAT_HMDLEC" &&
		eq "$(jget "$CTRL" get_features.ehm)" n:1 &&
		eq "$(jget "$CTRL" limit_mib)" null &&
		eq "$(jget "$CTRL" reason)" s:pci-runs
	}
	check "nvme-pci owns it: owner, size and descriptors of Get Features" \
		pci_owns
	asks_ok() {
		eq "$(jget "$CTRL" hmpre_kib) $(jget "$CTRL" hmmin_kib)" \
		   "n:65536 n:14336" &&
		eq "$(jget "$CTRL" hmminds_kib) $(jget "$CTRL" hmmaxd)" \
		   "n:4 n:1024"
	}
	check "what it asks, from Identify through nvme-cli (BG5-like)" asks_ok
	fresh_ok() {
		eq "$(jget "$CTRL" fresh_memory.nvme_pci_kib) $(jget "$CTRL" fresh_memory.nvme_hmb_kib)" \
		   "n:65536 n:65536" &&
		"$TOOL" status "$CTRL" >"$T/text" 2>&1 &&
		grep -qx '  ours:   64 MiB in fresh memory (nvme-hmb, limit_mib 128)' "$T/text" ||
		{ sed 's/^/# | /' "$T/text"; return 1; }
	}
	check "what nvme-pci and nvme-hmb give it in fresh memory: 64 MiB each" \
		fresh_ok
	# linux_now: where nvme-pci runs the HMB, the linux: line is what
	# it holds, from Get Features, not a prediction
	linux_now() {
		feat_read &&
		eq "$(jget "$CTRL" linux.kib) $(jget "$CTRL" linux.from)" \
		   "n:$((FEAT_HSIZE * 4)) s:get-features" &&
		grep -qx "  linux:  $((FEAT_HSIZE * 4 / 1024)) MiB: what nvme-pci holds now (Get Features 0Dh; max_host_mem_size_mb 128)" "$T/text" ||
		{ sed 's/^/# | /' "$T/text"; return 1; }
	}
	check "linux: what nvme-pci holds now, from Get Features" linux_now
	ids_ok() {
		eq "$(jget "$CTRL" serial)" \
		   "s:$(sed 's/ *$//' "/sys/class/nvme/$CTRL/serial")" &&
		eq "$(jget "$CTRL" model)" \
		   "s:$(sed 's/ *$//' "/sys/class/nvme/$CTRL/model")"
	}
	check "model and serial from sysfs" ids_ok
	check "next: nothing needed, nvme-pci gives it all of HMPRE" \
		next_is "$CTRL" "nothing needed: nvme-pci gives it all it asks for (HMPRE); for resizing at run time and giving memory back under pressure, modprobe nvme_hmb_pci takes it over"
	check "text: owner nvme-pci" sh -c \
		"'$TOOL' status $CTRL | grep -qx '  owner:  nvme-pci'"
	check "the newest nvme-cli answers Get Features 0Dh in JSON" newest_json
	check "nvme-pci owns it: the same status through the newest nvme-cli" \
		same_newest

	check "load nvme_hmb, nvme_hmb_pci take_over=0 beside nvme-pci's HMB" \
		sh -c "modprobe nvme_hmb default_limit_mib=128 && modprobe nvme_hmb_pci take_over=0 && [ -d $D ]"
	check "the engine says nvme-pci runs it: owner nvme-pci, JSON = sysfs" \
		fresh_json json_agrees "$CTRL" nvme-pci
	check "the engine's reason is the foreign one" eq "$(jget "$CTRL" reason)" \
		s:foreign
	check "text agrees with sysfs" text_agrees "$CTRL" nvme-pci \
		"another driver (nvme-pci) runs the HMB"
	check "next: take_over=0, reload nvme_hmb_pci" \
		next_is "$CTRL" "nvme-pci runs it: nvme_hmb_pci was loaded with take_over=0"

	check "rmmod nvme_hmb_pci nvme_hmb; reload nvme max_host_mem_size_mb=0" \
		unload_reload max_host_mem_size_mb=0
	nobody() {
		eq "$(jget "$CTRL" owner)" s:nobody &&
		eq "$(jget "$CTRL" state)" s:off &&
		eq "$(jget "$CTRL" size_kib)" n:0 &&
		eq "$(jget "$CTRL" get_features.ehm)" n:0 &&
		eq "$(jget "$CTRL" reason)" s:pci-none
	}
	check "nobody owns it (nvme-pci at 0, nvme-hmb not loaded)" \
		fresh_json nobody
	"$TOOL" status "$CTRL" 2>&1 | sed 's/^/# /'
	check "nobody: the same status through the newest nvme-cli" same_newest
	check "next: modprobe nvme_hmb_pci" \
		next_is "$CTRL" "nvme_hmb_pci is not loaded: modprobe nvme_hmb_pci"

	check "modprobe nvme_hmb default_limit_mib=128, nvme_hmb_pci" \
		sh -c "modprobe nvme_hmb default_limit_mib=128 && modprobe nvme_hmb_pci && [ -d $D ]"
	wait_for 10 sh -c "[ \$(cat $D/size_kib) = 65536 ]"
	"$TOOL" status "$CTRL" 2>&1 | sed 's/^/# /'
	check "nvme-hmb owns it: JSON = sysfs (64 MiB, granted)" \
		fresh_json json_agrees "$CTRL" nvme-hmb
	gf_ok() {
		eq "$(jget "$CTRL" get_features.hsize_kib)" "n:$(val "$D/size_kib")" &&
		eq "$(jget "$CTRL" get_features.hmdlec)" "n:$(val "$D/nr_descs")"
	}
	check "Get Features in the JSON: what sysfs says" gf_ok
	check "nothing to do next" eq "$(jget "$CTRL" next)" s:
	# linux_pred: nvme-hmb runs it: the linux: line is a prediction
	# for nvme-pci as loaded (max_host_mem_size_mb 0 here: none), with
	# the largest order of /proc/buddyinfo (no IOMMU here)
	linux_pred() {
		_b=$(awk '$3 == "zone" { n = NF - 4; if (n > o) o = n; f[n] += $NF }
			END { b = 4; for (i = 1; i < o; i++) b *= 2; print b, f[o] }' \
			/proc/buddyinfo)
		echo "# /proc/buddyinfo: largest block, free now (KiB, count): $_b"
		rm -f "$T/text"
		eq "$(jget "$CTRL" linux.from) $(jget "$CTRL" linux.allocator) $(jget "$CTRL" linux.kib) $(jget "$CTRL" linux.cap_mib)" \
		   "s:prediction s:blocks n:0 n:0" &&
		eq "$(jget "$CTRL" linux.block_kib)" "n:${_b% *}" &&
		case $(jget "$CTRL" linux.free_blocks) in
		n:[0-9]*) ;;
		*) echo "# free_blocks: $(jget "$CTRL" linux.free_blocks)"; false ;;
		esac &&
		"$TOOL" status "$CTRL" >"$T/text" 2>&1 &&
		grep -q "^  linux:  none in fresh memory (a prediction for nvme-pci on this kernel: max_host_mem_size_mb 0, blocks of at most $((${_b% *} / 1024)) MiB, [0-9]* free now)$" "$T/text" ||
		{ [ ! -f "$T/text" ] || sed 's/^/# | /' "$T/text"; return 1; }
	}
	check "linux: a prediction from /proc/buddyinfo while nvme-hmb runs it" \
		linux_pred
	text_gf_ok() {
		text_agrees "$CTRL" nvme-hmb granted &&
		grep -q "Get Features 0Dh: enabled, 64 MiB in $(val "$D/nr_descs") descriptors (agrees)" "$T/text"
	}
	check "text agrees with sysfs, and says Get Features agrees" text_gf_ok
	check "nvme-hmb owns it: the same status through the newest nvme-cli" \
		same_newest

	check "limit_mib 8, below HMMIN (14 MiB): off" sh -c "echo 8 > $HMBP"
	check "off below HMMIN: JSON = sysfs, owner nobody" \
		fresh_json json_agrees "$CTRL" nobody
	# off_really: sysfs and the drive itself (Get Features) say off
	off_really() {
		eq "$(val "$D/state")" off && eq "$(val "$D/size_kib")" 0 &&
		eq "$(feat ehm)" 0
	}
	check "off below HMMIN: sysfs off, Get Features disabled" off_really
	check "next: raise limit_mib" next_is "$CTRL" \
		"limit_mib 8 is below HMMIN 14 MiB: echo 64 > $HMBP"
	limited_ok() { put 32 "$HMBP" && fresh_json json_agrees "$CTRL" nvme-hmb; }
	check "limit_mib 32: limited, JSON = sysfs" limited_ok
	check "next: all of HMPRE" next_is "$CTRL" \
		"limit_mib 32 gives 32 of the 64 MiB the drive prefers (HMPRE): echo 64 > $HMBP"
	check "text agrees with sysfs (limited)" text_agrees "$CTRL" nvme-hmb \
		"limited by limit_mib"

	echo 128 > "$HMBP"
	check "no violation, no DMA error" emu_clean
	check "unload, nvme-pci back to its defaults" \
		unload_reload
	rm -rf "$T"
	ksft_end
}

# The emulated drive, where it may be touched: the test VM, or the user
# named the controller.
if { in_test_vm || [ "${NVME_HMB_TEST_DEVICE:-}" = "$CTRL" ]; } &&
	emu_present; then
	CLI=
	emu_mode
fi

# --- mock controllers -------------------------------------------------------
# Outside the test VM, sysfs only: no command to a real drive.
CLI=
in_test_vm || CLI=--no-nvme-cli
ksft_mock_begin 35

modprobe nvme_hmb default_limit_mib=128
modprobe nvme_hmb_mock nr_ctrls=3 hmpre=16384,8192,16384 \
	hmmin=3584,8192,3584 hmminds=1,512,1 hmmaxd=1024,16,1024
echo 16 > $SYS/mock1/limit_mib	# below HMMIN: off
echo 32 > $SYS/mock2/limit_mib	# limited
"$TOOL" status $CLI 2>&1 | sed 's/^/# /'

check "status --json: exit 0, valid JSON" status_json
check "one object per controller (nvme-hmb's and /sys/class/nvme's)" \
	names_ok
check "mock0 (granted): JSON = sysfs, owner nvme-hmb" \
	json_agrees mock0 nvme-hmb
check "mock0: nothing to do next" eq "$(jget mock0 next)" s:
check "mock1 (off, below HMMIN): JSON = sysfs, owner nobody" \
	json_agrees mock1 nobody
check "mock1: the reason is the HMMIN one" \
	eq "$(jget mock1 reason)" s:hmmin-above-limit
check "mock1: next raises limit_mib to HMPRE" next_is mock1 \
	"limit_mib 16 is below HMMIN 32 MiB: echo 32 > $SYS/mock1/limit_mib"
check "mock2 (limited): JSON = sysfs, owner nvme-hmb" \
	json_agrees mock2 nvme-hmb
check "mock2: the reason is the limit" \
	eq "$(jget mock2 reason)" s:limited
# tokens_ok: every reason in the JSON is a token (a controller nvme-hmb
# does not manage too: the tool's own, Documentation/nvme-hmb-status.rst)
tokens_ok() {
	awk -F'\t' '$2 == "reason" { print $1 "\t" $3 }' "$FL" >"$T/reasons"
	[ -s "$T/reasons" ] || return 1
	if grep -q -v -E '	s:[a-z][a-z0-9-]*[a-z0-9]$' "$T/reasons"; then
		grep -v -E '	s:[a-z][a-z0-9-]*[a-z0-9]$' "$T/reasons" |
			sed 's/^/# not a token: /'
		return 1
	fi
}
check "every reason is a token" tokens_ok
check "mock2: next raises limit_mib to HMPRE" next_is mock2 \
	"limit_mib 32 gives 32 of the 64 MiB the drive prefers (HMPRE): echo 64 > $SYS/mock2/limit_mib"
check "mock: no model, no serial, no Get Features" eq \
	"$(jget mock0 model) $(jget mock0 serial) $(jget mock0 get_features)" \
	"s: s: null"
check "text: mock0 agrees with sysfs" text_agrees mock0 nvme-hmb granted
check "text: mock1 agrees with sysfs" text_agrees mock1 nobody \
	"HMMIN above limit_mib"
check "text: mock2 agrees with sysfs" text_agrees mock2 nvme-hmb \
	"limited by limit_mib"

one_ok() {
	status_json mock1 &&
	eq "$(awk -F'\t' '$2 == "name" { print $3 }' "$FL")" s:mock1
}
check "status mock1 --json: mock1 alone" one_ok
check "no such controller: exit 1" refused 1 "$TOOL" status nosuch0
check "unknown option: exit 2" refused 2 "$TOOL" status --frob
# nvme-cli's spelling: -o json is --json, -o normal the text
same_out() { # same_out ARGS -- ARGS: both give the same output, exit 0
	_a= _b=
	while [ "$1" != -- ]; do _a="$_a $1"; shift; done
	shift
	"$TOOL" status $_a >"$T/a" 2>&1 && "$TOOL" status "$@" >"$T/b" 2>&1 &&
		settle "$T/a" && settle "$T/b" && cmp -s "$T/a" "$T/b" ||
		{ echo "# 'status$_a' and 'status $*' differ"; return 1; }
}
json_spellings() {
	same_out --json --no-nvme-cli -- -o json --no-nvme-cli &&
	same_out --json --no-nvme-cli -- -ojson --no-nvme-cli &&
	same_out --json --no-nvme-cli -- --output-format=json --no-nvme-cli
}
check "-o json, -ojson and --output-format=json are --json" json_spellings
check "-o normal is the text" same_out --no-nvme-cli -- -o normal --no-nvme-cli
check "-o xml: exit 2" refused 2 "$TOOL" status -o xml
check "-o without its value: exit 2" refused 2 "$TOOL" status -o
check "a controller name that cannot be one: exit 2" refused 2 "$TOOL" \
	status 'nvme0;x'
check "help of no such command: exit 2" refused 2 "$TOOL" help frob
check "help status" sh -c "'$TOOL' help status | grep -q -- --json"

off_ok() { put 0 $SYS/mock0/limit_mib && fresh_json json_agrees mock0 nobody; }
check "mock0 turned off: JSON = sysfs, owner nobody" off_ok
check "mock0: next turns it on" next_is mock0 \
	"turned off with limit_mib 0: echo 64 > $SYS/mock0/limit_mib"

if in_test_vm && [ -e "/sys/class/nvme/$CTRL" ]; then
	# QEMU's own NVMe: Identify through nvme-cli, HMPRE 0
	qemu_ok() {
		status_json &&
		eq "$(jget "$CTRL" hmpre_kib) $(jget "$CTRL" owner)" "n:0 s:nobody"
	}
	check "$CTRL (QEMU's NVMe, not managed): HMPRE 0 through nvme-cli" \
		qemu_ok
	check "$CTRL: the reason says it asks for none" eq "$(jget "$CTRL" reason)" \
		s:not-asked
else
	skip "QEMU's NVMe: HMPRE 0 through nvme-cli" "the test VM only"
	skip "QEMU's NVMe: the reason" "the test VM only"
fi

# Hostile strings: a made-up sysfs (NVME_HMB_SYSROOT) whose model, serial
# and reason hold quotes, backslashes, tabs and control characters.
FAKE=$T/sysroot
fake_ok() {
	_c=$FAKE/sys/class/nvme/nvme7 _d=$FAKE/sys/kernel/nvme_hmb/nvme7
	mkdir -p "$_c" "$_d" || return 1
	printf 'A "quoted" \\ model\twith tab, {x}[y]  \n' >"$_c/model"
	printf 'S\001N\037\n' >"$_c/serial"
	echo pcie >"$_c/transport"
	for _k in hmpre_kib hmmin_kib hmminds_kib hmmaxd limit_mib size_kib \
		  nr_descs; do
		echo 4 >"$_d/$_k"
	done
	echo enabled >"$_d/state"
	printf 'why \\"not\\"\n' >"$_d/reason"
	# a subshell: the variables must not outlive the call
	(
		export NVME_HMB_SYSROOT="$FAKE"
		export NVME_HMB_SYSFS="$FAKE/sys/kernel/nvme_hmb"
		status_json --no-nvme-cli
	) || return 1
	eq "$(jget nvme7 model)" 's:A "quoted" \ model\twith tab, {x}[y]' &&
	eq "$(jget nvme7 serial)" 's:S\u0001N\u001f' &&
	eq "$(jget nvme7 reason)" 's:why \"not\"' &&
	eq "$(jget nvme7 owner)" s:nvme-hmb
}
check "quotes, backslashes, control characters: escaped, valid JSON" fake_ok

# nvme-cli's JSON read with jq: a stand-in nvme-cli whose strings hold
# ',{}[]"' and the names of the fields read, for a controller nvme-hmb
# does not manage (on the made-up sysfs: no command reaches a drive)
cli_ok() {
	_r=$FAKE/cli _c=$FAKE/cli/sys/class/nvme/nvme8
	mkdir -p "$_c" "$_r/dev" "$_r/sys/module/nvme/parameters" || return 1
	: >"$_r/dev/nvme8"
	echo pcie >"$_c/transport"
	echo 1 >"$_c/hmb"
	printf 'M, {"hmpre": 1}[]\n' >"$_c/model"
	echo 128 >"$_r/sys/module/nvme/parameters/max_host_mem_size_mb"
	cat >"$FAKE/nvme" <<-'EOF'
	#!/bin/sh
	case "$1 $*" in
	*id-ctrl*"-o json"*) cat <<'JSON' ;;
	{"sn": "S,{\"hmpre\": 2}[", "mn": "M, {\"hmpre\": 1}[]",
	 "hmpre": 16384, "hmmin": 3584, "hmminds": 1, "hmmaxd": 1024}
	JSON
	*get-feature*"-o json"*) cat <<'JSON' ;;
	{"Feature": "Host Memory Buffer, {0x0d}[]", "Current value": "0x1",
	 "Enable Host Memory (EHM)": "Enabled",
	 "Host Memory Buffer Size (HSIZE)": 8192,
	 "Host Memory Descriptor List Entry Count (HMDLEC)": 3}
	JSON
	*) exit 1 ;;
	esac
	EOF
	chmod +x "$FAKE/nvme"
	(
		export NVME_HMB_SYSROOT="$_r" NVME_HMB_SYSFS="$_r/nvme_hmb"
		export NVME_HMB_NVME_CLI="$FAKE/nvme"
		CLI=
		status_json nvme8
	) || return 1
	eq "$(jget nvme8 hmpre_kib) $(jget nvme8 hmmin_kib) $(jget nvme8 hmmaxd)" \
	   "n:65536 n:14336 n:1024" &&
	eq "$(jget nvme8 get_features.ehm) $(jget nvme8 get_features.hsize_kib) $(jget nvme8 get_features.hmdlec)" \
	   "n:1 n:32768 n:3" &&
	eq "$(jget nvme8 owner) $(jget nvme8 size_kib) $(jget nvme8 linux.from)" \
	   "s:nvme-pci n:32768 s:get-features" &&
	eq "$(jget nvme8 model)" 's:M, {"hmpre": 1}[]'
}
check "nvme-cli's JSON with ',{}[]\"' in its strings: the fields read" cli_ok

# What each driver's policy gives in fresh memory (the linux: and ours:
# lines), on a made-up sysfs: one managed PCIe controller per case.
# grant_case KREL IOMMU PCI_MAX LIMIT HMPRE HMMIN HMMINDS HMMAXD PCI HMB
# (KiB; IOMMU: the group's type, - for none; PCI_MAX - for no nvme module)
grant_case() {
	_r=$FAKE/g _c=$FAKE/g/sys/class/nvme/nvme9 _d=$FAKE/g/nvme_hmb/nvme9
	rm -rf "$_r"
	mkdir -p "$_c/device" "$_d" "$_r/sys/module/nvme/parameters" || return 1
	echo pcie >"$_c/transport"
	if [ "$2" != - ]; then
		mkdir -p "$_c/device/iommu_group" && echo "$2" >"$_c/device/iommu_group/type"
	fi
	if [ "$3" = - ]; then rm -rf "$_r/sys/module/nvme"
	else echo "$3" >"$_r/sys/module/nvme/parameters/max_host_mem_size_mb"; fi
	echo "$4" >"$_d/limit_mib"
	echo "$5" >"$_d/hmpre_kib"; echo "$6" >"$_d/hmmin_kib"
	echo "$7" >"$_d/hmminds_kib"; echo "$8" >"$_d/hmmaxd"
	echo 0 >"$_d/size_kib"; echo 0 >"$_d/nr_descs"; echo off >"$_d/state"
	echo none >"$_d/reason"
	(
		export NVME_HMB_SYSROOT="$_r" NVME_HMB_SYSFS="$_r/nvme_hmb" NVME_HMB_KREL="$1"
		status_json --no-nvme-cli nvme9
	) || return 1
	_got="$(jget nvme9 fresh_memory.nvme_pci_kib) $(jget nvme9 fresh_memory.nvme_hmb_kib)"
	[ "$_got" = "n:$9 n:${10}" ] && return 0
	echo "# $*: got $_got"
	return 1
}
grants_ok() {
	_bad=0
	while read -r _k _i _m _l _p _n _s _x _lx _hx; do
		case $_k in '#'*|'') continue ;; esac
		grant_case "$_k" "$_i" "$_m" "$_l" "$_p" "$_n" "$_s" "$_x" \
			"$_lx" "$_hx" || _bad=1
	done <<-EOF
	# kernel  iommu   max  limit hmpre  hmmin  hmminds hmmaxd pci    hmb
	6.1.0-9   -       128  128   65536  14336  4       1024   65536  65536
	6.1.0-9   -       -    128   65536  14336  4       1024   65536  65536
	6.1.0-9   -       128  256   262144 0      4       0      131072 262144
	6.1.0-9   -       128  128   65536  8192   4       8      32768  32768
	6.1.0-9   DMA-FQ  128  128   65536  8192   4       8      32768  65536
	6.13.2    DMA     128  128   65536  8192   4       8      65536  65536
	7.3.4+deb identity 128 128   65536  8192   4       8      32768  32768
	6.1.0-9   -       128  256   204800 163840 4       0      0      204800
	6.1.0-9   -       128  128   65536  40960  4       8      0      0
	6.1.0-9   -       0    128   65536  14336  4       1024   0      65536
	6.1.0-9   -       128  128   65536  14336  8192    1024   0      0
	6.1.0-9   -       128  0     65536  0      4       1024   65536  0
	EOF
	return $_bad
}
check "fresh memory: nvme-pci's and nvme-hmb's policies, case by case" \
	grants_ok
none_ok() {
	mkdir -p "$T/empty" &&
	eq "$(NVME_HMB_SYSROOT=$T/empty NVME_HMB_SYSFS=$T/empty/nvme_hmb \
		"$TOOL" status --json)" "[]"
}
check "no controllers at all: []" none_ok

check "rmmod nvme_hmb_mock" rmmod nvme_hmb_mock
gone_ok() {
	status_json &&
	eq "$(awk -F'\t' '$2 == "name" && $3 ~ /^s:mock/' "$FL")" ""
}
check "the mocks are gone from the JSON" gone_ok

rm -rf "$T"
ksft_end
