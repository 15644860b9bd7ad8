#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# driver/pci/nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]
#
# Called by Kbuild: put nvme-core's private header drivers/nvme/host/nvme.h
# (struct nvme_ctrl), from the kernel source matching the kernel built
# against, at OUTDIR/nvme-private/nvme.h, and nvme-pci's private struct
# nvme_dev, which is defined in drivers/nvme/host/pci.c and in no header,
# in a header generated from that pci.c, OUTDIR/nvme-private/nvme-dev.h,
# for nvme_hmb_pci (which includes it after nvme.h).  Nothing of the
# kernel is committed: both are made at build time from
#
#   KSRC                               a kernel source tree, if given, else
#   /usr/src/linux-source-X.Y.tar.xz   Debian's linux-source-X.Y package.
#
# KERNELVERSION is VERSION.PATCHLEVEL.SUBLEVEL of the kernel built against
# (Kbuild's $(VERSION).$(PATCHLEVEL).$(SUBLEVEL); Debian's 6.1.0-57 headers
# say 6.1.192).  The source's top Makefile must say the same: struct
# nvme_ctrl and struct nvme_dev change within a stable series.
#
# Prints one word on stdout: "ok" (both headers in place), "skip" (no
# source, or its pci.c has no struct nvme_dev; Kbuild then needs the BTF,
# driver/pci/nvme-btf-layout.sh, or fails) or "error" (KSRC given but
# unusable); the reason goes to stderr.  Both headers are written or
# neither; they are reused while the stamp matches.  NVME_HMB_SRC=none in
# the environment pretends there is no source (to test the BTF-only and
# fail-loudly paths without touching /usr/src).
#
# The headers are checked against nvme-core's and nvme-pci's BTF when the
# kernel has one (driver/pci/nvme-layout.h): the version check below is not
# the only one.
set -u

out=${1:?usage: nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]}
want=${2:?usage: nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]}
ksrc=${3:-}
dir=$out/nvme-private
hdr=drivers/nvme/host/nvme.h
pcic=drivers/nvme/host/pci.c
# nvme-dev.h is this script's text too: a new one makes it again.
self="$0 $(stat -c %Y "$0" 2>/dev/null)"

say() { echo "nvme_hmb_pci: $*" >&2; }

# makefile_version: VERSION.PATCHLEVEL.SUBLEVEL of a top Makefile on stdin.
makefile_version() {
	awk -F' *= *' '
		$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 }
		END { if (v != "" && p != "" && s != "") print v "." p "." s }'
}

case "$want" in
[0-9]*.[0-9]*.[0-9]*) ;;
*)
	say "cannot tell the kernel version ('$want'); not using a kernel source"
	echo skip
	exit 0
	;;
esac

if [ -z "$ksrc" ] && [ "${NVME_HMB_SRC:-}" = none ]; then
	say "NVME_HMB_SRC=none: not using a kernel source"
	echo skip
	exit 0
fi

if [ -n "$ksrc" ]; then
	src="KSRC=$ksrc"
	stamp="$want $ksrc $(stat -c %Y "$ksrc/$hdr" "$ksrc/$pcic" 2>/dev/null | tr '\n' ' ')$self"
else
	tarball=/usr/src/linux-source-${want%.*}.tar.xz
	src=$tarball
	if [ ! -r "$tarball" ]; then
		say "no kernel source for $want (KSRC=, or Debian's linux-source-${want%.*}: $tarball)"
		echo skip
		exit 0
	fi
	stamp="$want $tarball $(stat -c %Y "$tarball") $self"
fi

if [ -f "$dir/nvme.h" ] && [ -f "$dir/nvme-dev.h" ] &&
   [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo ok
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvme-hmb-private.XXXXXX") || { echo error; exit 0; }
trap 'rm -rf "$tmp"' EXIT

if [ -n "$ksrc" ]; then
	if [ ! -r "$ksrc/Makefile" ] || [ ! -r "$ksrc/$hdr" ] ||
	   [ ! -r "$ksrc/$pcic" ]; then
		say "KSRC=$ksrc is not a kernel source tree (no Makefile, $hdr or $pcic)"
		echo error
		exit 0
	fi
	have=$(makefile_version <"$ksrc/Makefile")
	cp "$ksrc/$hdr" "$tmp/nvme.h"
	cp "$ksrc/$pcic" "$tmp/pci.c"
else
	top=linux-source-${want%.*}
	if ! tar -C "$tmp" --occurrence=1 -xf "$tarball" "$top/Makefile" \
		"$top/$hdr" "$top/$pcic" 2>/dev/null; then
		say "$tarball has no $top/Makefile, $top/$hdr or $top/$pcic; not using it"
		echo skip
		exit 0
	fi
	have=$(makefile_version <"$tmp/$top/Makefile")
	mv "$tmp/$top/$hdr" "$tmp/nvme.h"
	mv "$tmp/$top/$pcic" "$tmp/pci.c"
fi

if [ "$have" != "$want" ]; then
	say "$src is Linux ${have:-(unknown)}, the kernel built against is $want: refusing its $hdr and $pcic (struct nvme_ctrl and struct nvme_dev must match)"
	if [ -n "$ksrc" ]; then
		echo error
	else
		say "install the matching linux-source package, or give KSRC=; not using it"
		echo skip
	fi
	exit 0
fi

# struct nvme_dev, as pci.c defines it: everything in it but struct
# nvme_ctrl (nvme.h, which pci.c includes before), the pointer to pci.c's
# own struct nvme_queue and, after 6.12 (seen in 7.3), the array of pci.c's
# struct nvme_descriptor_pools (copied first) is in public headers.
awk '/^struct nvme_descriptor_pools \{/ { p = 1 } p { print } p && /^\};/ { print ""; exit }' \
	"$tmp/pci.c" >"$tmp/struct"
awk '/^struct nvme_dev \{/ { p = 1 } p { print } p && /^\};/ { exit }' \
	"$tmp/pci.c" >>"$tmp/struct"
if ! grep -q '^};' "$tmp/struct"; then
	say "$src: $pcic of Linux $have has no struct nvme_dev { ... }; (nvme-pci changed?): not using it"
	if [ -n "$ksrc" ]; then
		echo error
	else
		echo skip
	fi
	exit 0
fi
{
	cat <<-EOF
	/* SPDX-License-Identifier: GPL-2.0 */
	/*
	 * Generated by driver/pci/nvme-private-header.sh: nvme-pci's private
	 * struct nvme_dev, as $pcic of Linux $have defines it
	 * (from $src).
	 * Include after nvme.h (struct nvme_ctrl).
	 */
	#ifndef NVME_HMB_NVME_DEV_H
	#define NVME_HMB_NVME_DEV_H

	#include <linux/blk-mq.h>
	#include <linux/dmapool.h>
	#include <linux/mempool.h>
	#include <linux/mutex.h>
	#include <linux/nvme.h>
	#include <linux/workqueue.h>

	struct nvme_queue;

	EOF
	cat "$tmp/struct"
	printf '\n#endif /* NVME_HMB_NVME_DEV_H */\n'
} >"$tmp/nvme-dev.h" || { echo error; exit 0; }

# Both or neither: the stamp goes last, and without it neither is reused.
if ! { mkdir -p "$dir" && rm -f "$dir/stamp" &&
	mv "$tmp/nvme.h" "$dir/nvme.h" &&
	mv "$tmp/nvme-dev.h" "$dir/nvme-dev.h" &&
	echo "$stamp" >"$dir/stamp"; }; then
	rm -f "$dir/nvme.h" "$dir/nvme-dev.h"
	say "cannot write the headers to $dir"
	echo error
	exit 0
fi
say "using $hdr and struct nvme_dev of $pcic of Linux $have from $src"
echo ok
