#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# driver/pci/nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]
#
# Called by Kbuild: put nvme-core's private header drivers/nvme/host/nvme.h
# (struct nvme_ctrl), from the kernel source matching the kernel built
# against, at OUTDIR/nvme-private/nvme.h, for nvme_hmb_pci.  Nothing of the
# kernel is committed: the header is copied at build time from
#
#   KSRC                               a kernel source tree, if given, else
#   /usr/src/linux-source-X.Y.tar.xz   Debian's linux-source-X.Y package.
#
# KERNELVERSION is VERSION.PATCHLEVEL.SUBLEVEL of the kernel built against
# (Kbuild's $(VERSION).$(PATCHLEVEL).$(SUBLEVEL); Debian's 6.1.0-57 headers
# say 6.1.192).  The source's top Makefile must say the same: struct
# nvme_ctrl changes within a stable series.
#
# Prints one word on stdout: "ok" (header in place), "skip" (no source;
# Kbuild then needs nvme-core's BTF, driver/pci/nvme-btf-layout.sh, or
# fails) or "error" (KSRC given but unusable); the reason goes to stderr.
# The copy is reused while its stamp matches.  NVME_HMB_SRC=none in the
# environment pretends there is no source (to test the BTF-only and
# fail-loudly paths without touching /usr/src).
#
# The header is checked against nvme-core's BTF when the kernel has one
# (driver/pci/nvme-layout.h): the version check below is not the only one.
set -u

out=${1:?usage: nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]}
want=${2:?usage: nvme-private-header.sh OUTDIR KERNELVERSION [KSRC]}
ksrc=${3:-}
dir=$out/nvme-private
hdr=drivers/nvme/host/nvme.h

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
	stamp="$want $ksrc $(stat -c %Y "$ksrc/$hdr" 2>/dev/null)"
else
	tarball=/usr/src/linux-source-${want%.*}.tar.xz
	src=$tarball
	if [ ! -r "$tarball" ]; then
		say "no kernel source for $want (KSRC=, or Debian's linux-source-${want%.*}: $tarball)"
		echo skip
		exit 0
	fi
	stamp="$want $tarball $(stat -c %Y "$tarball")"
fi

if [ -f "$dir/nvme.h" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo ok
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvme-hmb-private.XXXXXX") || { echo error; exit 0; }
trap 'rm -rf "$tmp"' EXIT

if [ -n "$ksrc" ]; then
	if [ ! -r "$ksrc/Makefile" ] || [ ! -r "$ksrc/$hdr" ]; then
		say "KSRC=$ksrc is not a kernel source tree (no Makefile or $hdr)"
		echo error
		exit 0
	fi
	have=$(makefile_version <"$ksrc/Makefile")
	cp "$ksrc/$hdr" "$tmp/nvme.h"
else
	top=linux-source-${want%.*}
	if ! tar -C "$tmp" --occurrence=1 -xf "$tarball" "$top/Makefile" \
		"$top/$hdr" 2>/dev/null; then
		say "$tarball has no $top/Makefile or $top/$hdr; not using it"
		echo skip
		exit 0
	fi
	have=$(makefile_version <"$tmp/$top/Makefile")
	mv "$tmp/$top/$hdr" "$tmp/nvme.h"
fi

if [ "$have" != "$want" ]; then
	say "$src is Linux ${have:-(unknown)}, the kernel built against is $want: refusing its $hdr (struct nvme_ctrl must match)"
	if [ -n "$ksrc" ]; then
		echo error
	else
		say "install the matching linux-source package, or give KSRC=; not using it"
		echo skip
	fi
	exit 0
fi

mkdir -p "$dir"
mv "$tmp/nvme.h" "$dir/nvme.h"
echo "$stamp" >"$dir/stamp"
say "using $hdr of Linux $have from $src"
echo ok
