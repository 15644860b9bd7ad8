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
# The BTF is nvme-core.ko's and nvme.ko's (nvme-pci) .BTF (split BTF,
# CONFIG_DEBUG_INFO_BTF_MODULES) read with pahole on top of the kernel's
# base BTF, which must be the very kernel's (type ids of split BTF continue
# those of the base).  Each module is read on its own: struct nvme_ctrl
# and enum nvme_ctrl_state from nvme-core.ko, struct nvme_dev from nvme.ko
# (whose split BTF has its own copy of struct nvme_ctrl, not used).  A
# module built into the kernel (modules.builtin lists it: the usual Ubuntu
# and Raspberry Pi OS setup) has no file: its types are read from the base
# itself, the kernel's own BTF.  The base:
#
#   /sys/kernel/btf/vmlinux   only when KERNELRELEASE is the running kernel;
#   KDIR/vmlinux              if it has .BTF (Debian's 6.12 headers ship one);
#   /boot/vmlinuz-KREL        the ELF vmlinux inside the compressed image
#                             (found and unpacked as the kernel's
#                             scripts/extract-vmlinux does; x86 keeps .BTF).
#
# nvme-core.ko and nvme.ko: /lib/modules/KREL/kernel/drivers/nvme/host/
# (plain, .xz, .zst or .gz), else KDIR/modroot/lib/modules/KREL/... (the
# debug test kernel's, scripts/build-kernel) or KDIR/drivers/nvme/host/ (a
# kernel built in place).  NVME_HMB_BTF=none pretends there is no BTF (to
# test the source-only and fail-loudly paths).
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
	none "pahole not found, cannot read $krel's BTF (Debian/Ubuntu: apt-get install dwarves; Fedora/Arch: dwarves / pahole)"

# find_mod NAME: the path of module NAME (nvme-core, nvme) of the kernel.
find_mod() {
	for m in /lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko \
		 /lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.xz \
		 /lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.zst \
		 /lib/modules/"$krel"/kernel/drivers/nvme/host/"$1".ko.gz \
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
	for b in /lib/modules/"$krel"/modules.builtin \
		 "$kdir"/modroot/lib/modules/"$krel"/modules.builtin \
		 "$kdir"/modules.builtin; do
		[ -r "$b" ] || continue
		grep -qx "kernel/drivers/nvme/host/$1.ko" "$b"
		return
	done
	return 1
}

# Each module's types come from its own split BTF, or from the base when
# it is built in; "builtin" stands for the module's file then.
if builtin nvme-core; then
	mod=builtin
else
	mod=$(find_mod nvme-core)
	[ -n "$mod" ] ||
		none "no nvme-core.ko of $krel in /lib/modules/$krel or $kdir, and no modules.builtin that lists it (its linux-image package not installed?)"
fi
if builtin nvme; then
	pmod=builtin
else
	pmod=$(find_mod nvme)
	[ -n "$pmod" ] ||
		none "no nvme.ko (nvme-pci) of $krel in /lib/modules/$krel or $kdir, and no modules.builtin that lists it (its linux-image package not installed?)"
fi

# The modules first: without .BTF in them, nothing else matters.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvme-hmb-btf.XXXXXX") ||
	none "cannot make a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# unpack MODULE FILE: MODULE, decompressed, at FILE, which must have .BTF.
unpack() {
	case "$1" in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -q -dc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac || none "cannot decompress $1 (xz-utils, zstd or gzip missing?)"
	readelf -S "$2" 2>/dev/null | grep -q '\.BTF ' ||
		none "$1 has no .BTF (kernel built without CONFIG_DEBUG_INFO_BTF_MODULES)"
}
[ "$mod" = builtin ] || unpack "$mod" "$tmp/nvme-core.ko"
[ "$pmod" = builtin ] || unpack "$pmod" "$tmp/nvme.ko"

# The base: see above.  A vmlinuz is only named here; it is unpacked below.
base=
if [ "$krel" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	base=/sys/kernel/btf/vmlinux
elif [ -r "$kdir/vmlinux" ] &&
     readelf -S "$kdir/vmlinux" 2>/dev/null | grep -q '\.BTF '; then
	base=$kdir/vmlinux
elif [ -r "/boot/vmlinuz-$krel" ]; then
	base=/boot/vmlinuz-$krel
else
	none "no base BTF for $krel (not running, no $kdir/vmlinux with .BTF, no /boot/vmlinuz-$krel)"
fi

stamp="$krel $mod $pmod $(stat -L -c '%n %Y %s' "$mod" "$pmod" "$base" "$self" 2>/dev/null | tr '\n' ' ')"
if [ -f "$dir/btf-layout.h" ] && [ -f "$dir/btf-nvme.h" ] &&
   [ "$(cat "$dir/btf-stamp" 2>/dev/null)" = "$stamp" ]; then
	echo btf
	exit 0
fi

base_name=$base

# try_unpack MAGIC TR-SET COMMAND: every occurrence of MAGIC in the image
# is tried until COMMAND unpacks an ELF with .BTF from there (the kernel's
# scripts/extract-vmlinux: tr turns MAGIC's first byte into a newline and
# the rest into TR-SET, so grep -b finds the offsets).
try_unpack() {
	for pos in $(tr "$1\n$2" "\n$2=" <"$base" | grep -abo "^$2"); do
		pos=${pos%%:*}
		tail -c+"$pos" "$base" | $3 >"$tmp/vmlinux" 2>/dev/null
		readelf -S "$tmp/vmlinux" 2>/dev/null | grep -q '\.BTF ' &&
			return 0
	done
	return 1
}

case "$base" in
/boot/vmlinuz-*)
	if command -v xz >/dev/null && try_unpack '\3757zXZ\000' abcde 'xz -dc'; then
		:
	elif command -v zstd >/dev/null && try_unpack '(\265/\375' xxx 'zstd -dc'; then
		:
	elif try_unpack '\037\213\010' xy 'gzip -dc'; then
		:
	else
		none "found no ELF vmlinux with .BTF in $base (xz-utils or zstd missing, or a kernel without CONFIG_DEBUG_INFO_BTF)"
	fi
	base=$tmp/vmlinux
	;;
esac

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
