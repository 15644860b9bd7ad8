#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# driver/pci/nvme-btf-layout.sh OUTDIR KERNELRELEASE KDIR
#
# Called by Kbuild: read what nvme_hmb_pci uses of nvme-core's and
# nvme-pci's private types (struct nvme_ctrl of nvme-core and struct
# nvme_dev of nvme-pci: the offset and size of each member it reads, the
# structs' sizes; enum nvme_ctrl_state) from the BTF the target kernel
# carries about itself, and write them to OUTDIR/nvme-private/:
#
#   btf-layout.h  the numbers, as NVME_HMB_BTF_* macros; driver/pci/
#                 nvme-layout.h checks the compiled structs against them,
#                 one static_assert per member (a mismatch fails the
#                 build with an error that names the member);
#   btf-nvme.h    a minimal private header built from the numbers alone
#                 (the members at their BTF offsets, the enum, the
#                 prototypes), used when no kernel source is at hand.
#
# The BTF is nvme-core's and nvme-pci's (module nvme) split BTF
# (CONFIG_DEBUG_INFO_BTF_MODULES) read with pahole on top of the kernel's
# base BTF, which must be the very kernel's (type ids of split BTF continue
# those of the base).  Each module is read on its own: struct nvme_ctrl
# and enum nvme_ctrl_state from nvme-core, struct nvme_dev from nvme
# (whose split BTF has its own copy of struct nvme_ctrl, not used).  A
# module built into the kernel (modules.builtin lists it: the usual Ubuntu
# and Raspberry Pi OS setup) has no split BTF: its types are read from the
# base itself.  Each module's split BTF, the first found of:
#
#   /sys/kernel/btf/nvme_core, nvme   KERNELRELEASE running, module loaded;
#   /lib/modules/KREL/kernel/drivers/nvme/host/MOD.ko{,.xz,.zst,.gz}
#                                     the module's .BTF section;
#   KDIR/modroot/lib/modules/KREL/... the debug test kernel's
#                                     (scripts/build-kernel);
#   KDIR/drivers/nvme/host/MOD.ko     a kernel built in place.
#
# The base, the first of these that holds the kernel's BTF:
#
#   /sys/kernel/btf/vmlinux           KERNELRELEASE running;
#   KDIR/vmlinux                      Debian's 6.12 headers ship one;
#   /boot/vmlinuz-KREL                every distribution's image;
#   /lib/modules/KREL/vmlinuz         Fedora's and Arch's;
#   /boot/vmlinux-KREL{,.xz,.gz,.zst}, /boot/Image-KREL{,.gz}
#                                     SUSE's, and a board's;
#   /usr/lib/debug/boot/vmlinux-KREL, /usr/lib/debug/lib/modules/KREL/vmlinux
#                                     debug-symbol packages.
#
# Each is taken as it is if it is an ELF file with a .BTF section (x86's
# vmlinux) or holds a BTF blob (a raw arm64 Image: the blob is found by its
# header, magic 0xeb9f, checked and cut out); else every compressed stream
# in it that the kernel can be packed with (gzip, xz, lzma, bzip2, lzo,
# lz4 in its legacy framing and as a frame, zstd; a bzImage's payload, an
# Image.gz) is found by its magic, as the kernel's scripts/extract-vmlinux
# does, unpacked, and taken the same way.  When none serves, the refusal
# names each file tried and what it lacked, and the package of a
# decompressor that is missing.
#
# NVME_HMB_BTF=none pretends there is no BTF (to test the source-only and
# fail-loudly paths); NVME_HMB_BTF_ROOT=DIR reads every path above that
# starts at / (and the running release, proc/sys/kernel/osrelease) under
# DIR instead (scripts/test-btf-sources).
#
# Prints one word on stdout: "btf" (files written) or "none" (no usable
# BTF of either module: the reason, and what to install, go to stderr).
# The files are reused while their stamp matches.
set -u

out=${1:?usage: nvme-btf-layout.sh OUTDIR KERNELRELEASE KDIR}
krel=${2:?usage: nvme-btf-layout.sh OUTDIR KERNELRELEASE KDIR}
kdir=${3:?usage: nvme-btf-layout.sh OUTDIR KERNELRELEASE KDIR}
dir=$out/nvme-private
self=$(dirname "$0")/nvme-btf-layout.sh
root=${NVME_HMB_BTF_ROOT:-}
running=$(cat "$root/proc/sys/kernel/osrelease" 2>/dev/null)

# The members of struct nvme_ctrl and of struct nvme_dev that
# driver/pci/pci.c reads (of nvme_dev's ctrl: its offset, for container_of).
members="state admin_q dev device reset_work hmpre hmmin hmminds hmmaxd"
dev_members="ctrl dev host_mem_size nr_host_mem_descs host_mem_descs_dma host_mem_descs"

say() { echo "nvme_hmb_pci: $*" >&2; }
none() {
	say "$*"
	echo none
	exit 0
}

[ "${NVME_HMB_BTF:-}" = none ] && none "NVME_HMB_BTF=none: not using BTF"

command -v pahole >/dev/null 2>&1 ||
	none "pahole not found, cannot read $krel's BTF (Debian/Ubuntu/Fedora/Arch: install the package dwarves; SUSE: dwarves)"
command -v readelf >/dev/null 2>&1 ||
	none "readelf not found, cannot read $krel's modules (install binutils)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvme-hmb-btf.XXXXXX") ||
	none "cannot make a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# has_btf FILE: FILE is an ELF file with a .BTF section.
has_btf() {
	readelf -S "$1" 2>/dev/null | grep -q '\.BTF '
}

# is_elf FILE
is_elf() {
	[ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]
}

# find_mod NAME SYSNAME: the split BTF of module NAME (nvme-core, nvme),
# SYSNAME in /sys/kernel/btf (nvme_core, nvme): its path on stdout.
find_mod() {
	if [ "$krel" = "$running" ] && [ -r "$root/sys/kernel/btf/$2" ]; then
		echo "$root/sys/kernel/btf/$2"
		return
	fi
	for m in "$root"/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko \
		 "$root"/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.xz \
		 "$root"/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.zst \
		 "$root"/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.gz \
		 "$kdir"/modroot/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko \
		 "$kdir"/modroot/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.xz \
		 "$kdir"/modroot/lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.zst \
		 "$kdir"/drivers/nvme/host/"$1".ko; do
		if [ -r "$m" ]; then
			echo "$m"
			return
		fi
	done
}

# builtin NAME: module NAME (nvme-core, nvme) is built into the kernel,
# as modules.builtin of the kernel's module directory or of its build tree
# says (then its types are in the kernel's own BTF, the base below).
builtin() {
	for b in "$root"/lib/modules/"$krel"/modules.builtin \
		 "$kdir"/modroot/lib/modules/"$krel"/modules.builtin \
		 "$kdir"/modules.builtin; do
		[ -r "$b" ] || continue
		grep -qx "kernel/drivers/nvme/host/$1.ko" "$b"
		return
	done
	return 1
}

# need TOOL PACKAGE: TOOL is on the PATH, else "TOOL (package PACKAGE)"
# goes into the list of what is missing, and the call fails.
missing=
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	case " $missing " in
	*" $1 (package $2)"*) ;;
	*) missing="$missing${missing:+, }$1 (package $2)" ;;
	esac
	return 1
}

# Each module's types come from its own split BTF, or from the base when
# it is built in; "builtin" stands for the module's file then.
if builtin nvme-core; then
	mod=builtin
else
	mod=$(find_mod nvme-core nvme_core)
	[ -n "$mod" ] ||
		none "no nvme-core.ko of $krel in $root/lib/modules/$krel or $kdir, no $root/sys/kernel/btf/nvme_core, and no modules.builtin that lists it (its linux-image package not installed?)"
fi
if builtin nvme; then
	pmod=builtin
else
	pmod=$(find_mod nvme nvme)
	[ -n "$pmod" ] ||
		none "no nvme.ko (nvme-pci) of $krel in $root/lib/modules/$krel or $kdir, no $root/sys/kernel/btf/nvme, and no modules.builtin that lists it (its linux-image package not installed?)"
fi

# unpack MODULE FILE: MODULE's split BTF at FILE (an ELF file with .BTF,
# or the raw BTF of /sys/kernel/btf).  The modules first: without .BTF in
# them, nothing else matters.
unpack() {
	case "$1" in
	"$root"/sys/kernel/btf/*)
		cp "$1" "$2" || none "cannot read $1"
		return
		;;
	*.xz) need xz xz-utils && xz -dc "$1" >"$2" ;;
	*.zst) need zstd zstd && zstd -q -dc "$1" >"$2" ;;
	*.gz) need gzip gzip && gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac || none "cannot decompress $1${missing:+: $missing not found}"
	has_btf "$2" ||
		none "$1 has no .BTF (kernel built without CONFIG_DEBUG_INFO_BTF_MODULES)"
}
[ "$mod" = builtin ] || unpack "$mod" "$tmp/nvme-core.ko"
[ "$pmod" = builtin ] || unpack "$pmod" "$tmp/nvme.ko"

# The base candidates, in order (see above); KDIR/vmlinux only with .BTF.
bases=
if [ "$krel" = "$running" ]; then
	bases="$root/sys/kernel/btf/vmlinux"
fi
bases="$bases $kdir/vmlinux $root/boot/vmlinuz-$krel $root/lib/modules/$krel/vmlinuz"
for b in vmlinux-"$krel" vmlinux-"$krel".xz vmlinux-"$krel".gz \
	 vmlinux-"$krel".zst Image-"$krel" Image-"$krel".gz; do
	bases="$bases $root/boot/$b"
done
bases="$bases $root/usr/lib/debug/boot/vmlinux-$krel $root/usr/lib/debug/lib/modules/$krel/vmlinux"

stamp="$krel $running $mod $pmod $(for f in $mod $pmod $bases "$self"; do
	[ -e "$f" ] && stat -L -c '%n %Y %s' "$f"; done 2>/dev/null | tr '\n' ' ')"
if [ -f "$dir/btf-layout.h" ] && [ -f "$dir/btf-nvme.h" ] &&
   [ "$(cat "$dir/btf-stamp" 2>/dev/null)" = "$stamp" ]; then
	echo btf
	exit 0
fi

# offsets MAGIC TR-SET FILE [REST]: the 1-based offset in FILE of each
# occurrence of MAGIC followed by what the regular expression REST
# matches, for tail -c+ (the kernel's scripts/extract-vmlinux: tr turns
# MAGIC's first byte into a newline and the rest into TR-SET, so that
# grep -b finds them).
offsets() {
	tr "$1\n$2" "\n$2=" <"$3" | LC_ALL=C grep -abo "^$2${4:-}" | cut -d: -f1
}

# raw_btf FILE OUT: the largest well-formed BTF blob in FILE (a
# little-endian header: magic 0xeb9f, version 1, flags 0, hdr_len 24;
# the type and string sections inside the blob, the strings starting and
# ending with a NUL) cut out to OUT.
raw_btf() {
	best=0
	bpos=
	flen=$(stat -L -c %s "$1")
	for pos in $(offsets '\237\353\001\000\030\000\000\000' abcdccc "$1"); do
		# shellcheck disable=SC2046 # six numbers
		set -- "$1" "$2" $(od -An -t u4 -j $((pos - 1)) -N 24 "$1")
		[ $# -eq 8 ] && [ "$4" -eq 24 ] || continue
		toff=$5 tlen=$6 soff=$7 slen=$8
		len=$((24 + soff + slen))
		[ $((24 + toff + tlen)) -gt "$len" ] && len=$((24 + toff + tlen))
		[ "$slen" -gt 0 ] && [ "$tlen" -gt 0 ] || continue
		[ $((pos - 1 + len)) -le "$flen" ] || continue
		[ $((toff + tlen)) -le "$soff" ] ||
			[ $((soff + slen)) -le "$toff" ] || continue
		[ "$(od -An -t u1 -j $((pos - 1 + 24 + soff)) -N 1 "$1" | tr -d ' ')" = 0 ] &&
			[ "$(od -An -t u1 -j $((pos - 1 + 24 + soff + slen - 1)) -N 1 "$1" | tr -d ' ')" = 0 ] ||
			continue
		if [ "$len" -gt "$best" ]; then
			best=$len
			bpos=$pos
		fi
	done
	[ -n "$bpos" ] || return 1
	tail -c+"$bpos" "$1" | head -c "$best" >"$2"
}

# take FILE: FILE's BTF as base, at $base: FILE itself if it is an ELF
# file with .BTF, else the blob cut out of it (to $tmp/base.N).  Fails,
# with the reason in $why, when it has neither.
nbase=0
take() {
	if is_elf "$1"; then
		if has_btf "$1"; then
			base=$1
			return 0
		fi
		why="an ELF file without .BTF"
		return 1
	fi
	nbase=$((nbase + 1))
	if raw_btf "$1" "$tmp/base.$nbase"; then
		base=$tmp/base.$nbase
		return 0
	fi
	why="no BTF in it"
	return 1
}

# unpack_image FILE: every compressed stream in an image of no known kind
# tried, by its magic, until one unpacks to something take() accepts; $why
# says what was found.
# The magics are those of the kernel's compressors (scripts/Makefile.lib):
# bzip2's with its block header, lzma's with the unknown size (all ones)
# that a stream from a pipe has, lzop's with its NUL, so that bytes which
# merely look like one are not taken for a stream (nor its decompressor
# asked for).
unpack_image() {
	found=
	while read -r name magic set rest pkg cmd; do
		[ "$rest" != - ] || rest=
		rest=$(printf '%b' "$rest")
		[ -n "$(offsets "$magic" "$set" "$1" "$rest" | head -n 1)" ] ||
			continue
		found="$found${found:+, }$name"
		need "${cmd%% *}" "$pkg" || continue
		for pos in $(offsets "$magic" "$set" "$1" "$rest"); do
			# shellcheck disable=SC2086 # the command and its options
			tail -c+"$pos" "$1" | $cmd >"$tmp/unpacked" 2>/dev/null
			[ -s "$tmp/unpacked" ] || continue
			nbase=$((nbase + 1))
			mv "$tmp/unpacked" "$tmp/image.$nbase"
			take "$tmp/image.$nbase" && return 0
			rm -f "$tmp/image.$nbase"
		done
	done <<-'EOF'
	gzip \037\213\010 xy - gzip gzip -dc
	xz \3757zXZ\000 abcde - xz-utils xz -dc
	bzip2 BZh xy [1-9]1AY&SY bzip2 bzip2 -dc
	lzma \135\000 x ...\0377\0377\0377\0377\0377\0377\0377\0377 xz-utils xz --format=lzma -dc
	lzo \211LZO\000 abcd - lzop lzop -dc
	lz4-legacy \002!L\030 abc - lz4 lz4 -dc
	lz4 \004"M\030 abc - lz4 lz4 -dc
	zstd (\265/\375 abc - zstd zstd -dc
	EOF
	if [ -z "$found" ]; then
		why="no BTF, and no compressed stream in it"
	else
		why="no BTF in it nor behind its $found magic(s)"
	fi
	return 1
}

# u32 FILE OFFSET, u8 FILE OFFSET: a little-endian number in FILE.
u32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u8() { od -An -t u1 -j "$2" -N 1 "$1" | tr -d ' '; }

# payload FILE: where the image FILE keeps its compressed kernel, as its
# header says: "OFFSET LENGTH" (OFFSET 1-based, for tail -c+), "raw" for
# an arm64 Image (not compressed), nothing for an image of another kind.
# An x86 bzImage (boot protocol 2.08 on: "HdrS", payload_offset and
# payload_length after the setup sectors) and an EFI zboot image ("zimg",
# arm64's and others' vmlinuz.efi).
payload() {
	if [ "$(tail -c+515 "$1" | head -c 4)" = HdrS ]; then
		ss=$(u8 "$1" 497)
		[ "$ss" != 0 ] || ss=4
		echo "$(((ss + 1) * 512 + $(u32 "$1" 584) + 1)) $(u32 "$1" 588)"
	elif [ "$(tail -c+5 "$1" | head -c 4)" = zimg ]; then
		echo "$(($(u32 "$1" 8) + 1)) $(u32 "$1" 12)"
	elif [ "$(tail -c+57 "$1" | head -c 4)" = ARMd ]; then
		echo raw
	fi
}

# codec FILE POS: the compression of the stream at POS (1-based) of FILE,
# by its magic: "NAME PACKAGE COMMAND...", nothing if none.
codec() {
	case $(tail -c+"$2" "$1" | head -c 6 | od -An -t x1 | tr -d ' \n') in
	1f8b08*) echo gzip gzip gzip -dc ;;
	fd377a585a00) echo xz xz-utils xz -dc ;;
	425a68*) echo bzip2 bzip2 bzip2 -dc ;;
	5d0000*) echo lzma xz-utils xz --format=lzma -dc ;;
	894c5a4f00*) echo lzo lzop lzop -dc ;;
	02214c18*) echo lz4-legacy lz4 lz4 -dc ;;
	04224d18*) echo lz4 lz4 lz4 -dc ;;
	28b52ffd*) echo zstd zstd zstd -dc ;;
	esac
}

# unpack_at FILE POS LENGTH WHAT: the stream of LENGTH bytes (all the rest
# if empty) at POS of FILE, WHAT (its payload, it), unpacked and taken.
unpack_at() {
	c=$(codec "$1" "$2")
	if [ -z "$c" ]; then
		why="$4 is in no compression the kernel uses"
		return 1
	fi
	uf=$1 upos=$2 ulen=$3 uwhat=$4
	# shellcheck disable=SC2086 # the name, package and command
	set -- $c
	why="$uwhat is $1"
	need "$3" "$2" || return 1
	uname=$1
	shift 2
	if [ -n "$ulen" ]; then
		tail -c+"$upos" "$uf" | head -c "$ulen"
	else
		tail -c+"$upos" "$uf"
	fi | "$@" >"$tmp/unpacked" 2>/dev/null
	nbase=$((nbase + 1))
	mv "$tmp/unpacked" "$tmp/image.$nbase"
	take "$tmp/image.$nbase" && return 0
	why="no BTF in $uwhat ($uname)"
	return 1
}

# image FILE: FILE's BTF, from the payload its header places, from the
# compressed stream it is, or, for an image of no known kind, from any
# stream in it (unpack_image).
image() {
	loc=$(payload "$1")
	case "$loc" in
	raw)
		why="an arm64 Image without BTF"
		return 1
		;;
	"")
		if [ -n "$(codec "$1" 1)" ]; then
			unpack_at "$1" 1 "" it
		else
			unpack_image "$1"
		fi
		;;
	*) unpack_at "$1" "${loc% *}" "${loc#* }" "its payload" ;;
	esac
}

# The base: the first candidate that yields the kernel's BTF.
base=
tried=
found_one=
for b in $bases; do
	if [ ! -e "$b" ]; then
		case "$b" in
		"$root"/sys/*|"$kdir"/*|"$root"/boot/vmlinuz-*|"$root"/lib/modules/*)
			tried="$tried${tried:+; }$b: absent" ;;
		esac
		continue
	fi
	found_one=1
	missing_before=$missing
	if take "$b" || { ! is_elf "$b" && image "$b"; }; then
		base_name=$b
		break
	fi
	[ "$missing" = "$missing_before" ] ||
		why="$why: cannot unpack without ${missing#"$missing_before"}"
	tried="$tried${tried:+; }$b: $why"
	base=
done
if [ -z "$base" ]; then
	if [ "$krel" != "$running" ]; then
		tried="$root/sys/kernel/btf/vmlinux: $krel is not running (${running:-unknown} is); $tried"
	fi
	if [ -n "$missing" ]; then
		hint="Install $missing and build again."
	elif [ -z "$found_one" ]; then
		hint="No image of $krel is installed (Debian, Ubuntu: package linux-image-$krel)."
	else
		hint="None of them holds BTF: $krel was built without CONFIG_DEBUG_INFO_BTF."
	fi
	none "no BTF of the kernel $krel found. Tried: $tried. $hint"
fi
# types TYPES MODULE KO OUT: pahole's text of TYPES into OUT, from
# MODULE's split BTF (its unpacked copy KO) on the base, or from the base
# alone when MODULE is built in.  Once per module, so that each type is
# the one of the module named.
types() {
	if [ "$2" = builtin ]; then
		pahole -F btf -C "$1" "$base" >"$4" 2>"$tmp/err" ||
			none "pahole cannot read $base_name: $(head -n 1 "$tmp/err")"
	else
		pahole -F btf --btf_base="$base" -C "$1" "$3" >"$4" 2>"$tmp/err" ||
			none "pahole cannot read $2 with base $base_name: $(head -n 1 "$tmp/err")"
	fi
}
types nvme_ctrl,nvme_ctrl_state,work_struct "$mod" "$tmp/nvme-core.ko" \
	"$tmp/types"
types nvme_dev "$pmod" "$tmp/nvme.ko" "$tmp/types-pci"
[ "$mod" != builtin ] || mod="$base_name (nvme-core built in)"
[ "$pmod" != builtin ] || pmod="$base_name (nvme-pci built in)"

# parse FILE: the pahole text: "\ttype name;  /* offset size */" per member
# of a struct, "/* size: N, ..." at its end, "\tNAME = value," per
# enumerator.  Emits "kind name value..." lines.
parse() {
	awk '
	/^struct [a-z_]+ \{/ { s = $2; next }
	/^enum [a-z_]+ \{/ { e = $2; next }
	/^\};/ { s = ""; e = ""; next }
	s != "" && /\/\* size: / {
		sub(/.*size: /, ""); sub(/,.*/, ""); print "size", s, $0; next
	}
	s != "" && /;[ \t]*\/\*[ \t]*[0-9]+[ \t]+[0-9]+[ \t]*\*\// {
		line = $0
		sub(/;[ \t]*\/\*.*/, "", line)
		n = split(line, w, /[ \t*]+/)
		name = w[n]
		sub(/\[.*/, "", name)
		split($0, c, "/\\*")
		split(c[2], v, /[ \t]+/)
		print "member", s, name, v[2], v[3]
		next
	}
	e != "" && /=/ {
		gsub(/[ \t,]/, "")
		split($0, kv, "=")
		print "enum", e, kv[1], kv[2]
	}' "$1"
}

# struct nvme_ctrl, work_struct and the enum of nvme-core.ko; struct
# nvme_dev of nvme.ko alone.
{
	parse "$tmp/types" | awk '$2 != "nvme_dev"'
	parse "$tmp/types-pci" | awk '$2 == "nvme_dev"'
} >"$tmp/parsed"

get() { awk -v k="$1" -v s="$2" -v n="$3" -v f="$4" \
	'$1 == k && $2 == s && $3 == n { print $f; exit }' "$tmp/parsed"; }

size=$(awk '$1 == "size" && $2 == "nvme_ctrl" { print $3; exit }' "$tmp/parsed")
wsize=$(awk '$1 == "size" && $2 == "work_struct" { print $3; exit }' "$tmp/parsed")
if [ -z "$size" ] || [ -z "$wsize" ]; then
	none "$mod's BTF has no struct nvme_ctrl or struct work_struct"
fi
grep -q '^enum nvme_ctrl_state ' "$tmp/parsed" ||
	none "$mod's BTF has no enum nvme_ctrl_state"

for f in $members; do
	[ -n "$(get member nvme_ctrl "$f" 4)" ] ||
		none "$mod's struct nvme_ctrl has no member '$f'"
done

dsize=$(awk '$1 == "size" && $2 == "nvme_dev" { print $3; exit }' "$tmp/parsed")
[ -n "$dsize" ] ||
	none "$pmod's BTF has no struct nvme_dev"
for f in $dev_members; do
	[ -n "$(get member nvme_dev "$f" 4)" ] ||
		none "$pmod's struct nvme_dev has no member '$f'"
done

{
	echo "/* Generated by driver/pci/nvme-btf-layout.sh from the BTF of"
	echo " * $mod and"
	echo " * $pmod (base $base_name) */"
	echo "#define NVME_HMB_BTF_KERNELRELEASE \"$krel\""
	echo "#define NVME_HMB_BTF_SIZE_nvme_ctrl $size"
	echo "#define NVME_HMB_BTF_SIZE_work_struct $wsize"
	for f in $members; do
		off=$(get member nvme_ctrl "$f" 4)
		sz=$(get member nvme_ctrl "$f" 5)
		echo "#define NVME_HMB_BTF_OFF_$f $off"
		echo "#define NVME_HMB_BTF_SIZE_$f $sz"
	done
	echo "#define NVME_HMB_BTF_SIZE_nvme_dev $dsize"
	for f in $dev_members; do
		off=$(get member nvme_dev "$f" 4)
		sz=$(get member nvme_dev "$f" 5)
		echo "#define NVME_HMB_BTF_DEV_OFF_$f $off"
		echo "#define NVME_HMB_BTF_DEV_SIZE_$f $sz"
	done
	max=0
	awk '$1 == "enum" && $2 == "nvme_ctrl_state" { print $3, $4 }' \
		"$tmp/parsed" >"$tmp/enum"
	while read -r name val; do
		echo "#define NVME_HMB_BTF_$name $val"
		[ "$val" -gt "$max" ] && max=$val
	done <"$tmp/enum"
	echo "#define NVME_HMB_BTF_NVME_CTRL_STATE_MAX $max"
} >"$tmp/btf-layout.h" || exit 0

# The C type of each member, as nvme_hmb_pci uses it (the BTF sizes are
# checked against these by driver/pci/nvme-layout.h).
ctype() {
	case $1 in
	state) echo "enum nvme_ctrl_state state" ;;
	admin_q) echo "struct request_queue *admin_q" ;;
	dev | device) echo "struct device *$1" ;;
	reset_work) echo "struct work_struct reset_work" ;;
	hmmaxd) echo "u16 hmmaxd" ;;
	*) echo "u32 $1" ;;
	esac
}
dev_ctype() {
	case $1 in
	ctrl) echo "struct nvme_ctrl ctrl" ;;
	dev) echo "struct device *dev" ;;
	host_mem_size) echo "u64 host_mem_size" ;;
	nr_host_mem_descs) echo "u32 nr_host_mem_descs" ;;
	host_mem_descs_dma) echo "dma_addr_t host_mem_descs_dma" ;;
	host_mem_descs) echo "struct nvme_host_mem_buf_desc *host_mem_descs" ;;
	esac
}

# padded STRUCT SIZE CTYPE MEMBER...: struct STRUCT with the members in
# offset order, each at its BTF offset and typed by the function CTYPE,
# padding between them and up to SIZE.
padded() {
	ps=$1 psize=$2 pctype=$3
	shift 3
	printf 'struct %s {\n' "$ps"
	for f in "$@"; do
		echo "$(get member "$ps" "$f" 4) $f"
	done | sort -n | {
		pos=0
		n=0
		while read -r off f; do
			if [ "$off" -gt "$pos" ]; then
				printf '\tu8 __pad%d[%d];\n' "$n" $((off - pos))
				n=$((n + 1))
			fi
			printf '\t%s;\n' "$($pctype "$f")"
			pos=$((off + $(get member "$ps" "$f" 5)))
		done
		if [ "$psize" -gt "$pos" ]; then
			printf '\tu8 __pad%d[%d];\n' "$n" $((psize - pos))
		fi
	}
	printf '};\n'
}

# The minimal header.
{
	cat <<-EOF
	/* SPDX-License-Identifier: GPL-2.0 */
	/*
	 * Generated by driver/pci/nvme-btf-layout.sh from the BTF of $krel's
	 * nvme-core and nvme-pci: the part of drivers/nvme/host/nvme.h and of
	 * drivers/nvme/host/pci.c's struct nvme_dev that nvme_hmb_pci uses,
	 * each member at the module's offset.  Only ever used through
	 * pointers that nvme-core and nvme-pci hand out.
	 */
	#ifndef NVME_HMB_BTF_NVME_H
	#define NVME_HMB_BTF_NVME_H

	#include <linux/blk-mq.h>
	#include <linux/device.h>
	#include <linux/nvme.h>
	#include <linux/types.h>
	#include <linux/workqueue.h>

	enum nvme_ctrl_state {
	EOF
	while read -r name val; do
		printf '\t%s = %s,\n' "$name" "$val"
	done <"$tmp/enum"
	printf '};\n\n'
	# shellcheck disable=SC2086 # the member lists are split on purpose
	padded nvme_ctrl "$size" ctype $members
	echo
	echo "/* nvme-pci's, private to drivers/nvme/host/pci.c. */"
	# shellcheck disable=SC2086
	padded nvme_dev "$dsize" dev_ctype $dev_members
	cat <<EOF

static inline enum nvme_ctrl_state nvme_ctrl_state(struct nvme_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state);
}

/*
 * Exported by nvme-core from 6.1 on (nvme_get_features()'s @result is a
 * void * after 6.12 (seen in 7.3), where it still stores a u32: a pointer
 * either way).
 */
int nvme_submit_sync_cmd(struct request_queue *q, struct nvme_command *cmd,
			 void *buf, unsigned int bufflen);
int nvme_get_features(struct nvme_ctrl *dev, unsigned int fid,
		      unsigned int dword11, void *buffer, size_t buflen,
		      u32 *result);
int nvme_reset_ctrl(struct nvme_ctrl *ctrl);
void nvme_cancel_admin_tagset(struct nvme_ctrl *ctrl);

#endif
EOF
} >"$tmp/btf-nvme.h" || exit 0

mkdir -p "$dir"
mv "$tmp/btf-layout.h" "$dir/btf-layout.h"
mv "$tmp/btf-nvme.h" "$dir/btf-nvme.h"
echo "$stamp" >"$dir/btf-stamp"
say "struct nvme_ctrl layout of $krel from the BTF of $mod, struct nvme_dev from $pmod"
echo btf
