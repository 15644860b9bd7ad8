# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb: out-of-tree build (Documentation/kbuild/modules.rst) and the
# project's developer targets.
#
#   make                build the modules against $(KDIR)
#   make install        install the modules in /lib/modules/<kver>/extra/nvme-hmb,
#                       tools/nvme-hmb in $(PREFIX)/sbin and the hand-over
#                       files of packaging/ in /usr/lib (run depmod)
#   make uninstall      remove exactly those files again (run depmod)
#   make install-tools  install tools/nvme-hmb in $(DESTDIR)$(PREFIX)/sbin,
#                       its man page nvme-hmb(8) in $(DESTDIR)$(MANDIR)/man8
#   make install-config install packaging/'s modprobe.d and modules-load.d
#                       files in $(DESTDIR)/usr/lib (after a DKMS install)
#   make dkms-source    copy what DKMS builds from into
#                       $(DESTDIR)/usr/src/nvme-hmb-<version> (dkms.conf)
#   make deb            build the Debian package nvme-hmb-dkms (DKMS, the
#                       tool, its man page and the boot-time files) into
#                       build/deb/ (packaging/debian)
#   make dist           the release tarball of the last commit,
#                       build/dist/nvme-hmb-<version>.tar.xz
#   make check          checkpatch --strict, sparse (C=2) and a W=1 build
#                       against the stock (6.1) and the 6.12 headers and
#                       the debug test kernel (KUnit), and a W=1 build for
#                       arm64 against Debian's arm64 6.1 headers
#   make test           the test suite: KUnit and selftests in QEMU
#   make demo           boot a VM and show what the module does, then the
#                       working-set sweep on the emulated drive
#   make bench          nvme-hmb against Linux's HMB policy in a VM: grants
#                       in fresh and fragmented memory, setup, resize,
#                       reclaim and resume timings, the drop_caches
#                       recipe beside nvme-pci, what TP4104's HMNAR
#                       saves across suspend to idle (scripts/bench)
#   make qemu           build QEMU with the emulated drive (scripts/build-qemu)
#   make modules-stock  build against Debian's stock headers into build/stock
#   make modules-stock-6.12
#                       build against Debian 12's 6.12 headers into
#                       build/stock-6.12
#   make modules-debug  build against the debug test kernel into build/debug
#   make modules-arm64  cross-build against Debian's arm64 headers of the
#                       stock kernel into build/arm64

# The kernel to build and install for: KVER names it (default: the running
# kernel), KDIR is its build tree (default /lib/modules/$(KVER)/build).
# Give either; with KDIR alone, KVER is the release KDIR was configured for.
ifdef KDIR
KVER ?= $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
else
KVER ?= $(shell uname -r)
KDIR := /lib/modules/$(KVER)/build
endif
# Kernel source tree matching KDIR, for the private nvme-core header
# (drivers/nvme/host/nvme.h) that nvme_hmb_pci needs.  Optional.
KSRC ?=
# 1: build the engine only, without nvme_hmb_pci (Kbuild otherwise fails
# when nvme_hmb_pci cannot be built).
NVME_HMB_ENGINE_ONLY ?=
# 1: also build the test modules (the mock controllers, and the KUnit
# suites on a KUnit kernel); make test, demo and bench ask for them.
NVME_HMB_TESTS ?=
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man

# Staging: DESTDIR prefixes every installed path, INSTALL_MOD_PATH (kbuild's
# name, default DESTDIR) the modules' /lib/modules.  A staged install runs
# no depmod: the staging tree's owner does, for the kernel it ends up on.
DESTDIR ?=
INSTALL_MOD_PATH ?= $(DESTDIR)

# The one place the modules go, for every kernel version.  kbuild's own
# default differs between the kernels we build for (INSTALL_MOD_DIR is extra
# in Debian's 6.1 headers, updates in its 6.12 ones), so it is always given.
# DKMS puts its copies elsewhere (updates/dkms on Debian): see dkms.conf.
MOD_SUBDIR := extra/nvme-hmb
MODDIR = $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/$(MOD_SUBDIR)
# Every module a build may make: uninstall removes them all.
MODULES := nvme_hmb nvme_hmb_pci nvme_hmb_mock nvme_hmb_kunit
# The hand-over files, where a package puts its own (the administrator's
# go to /etc/modprobe.d and /etc/modules-load.d, and win over these).
MODPROBE_CONF := $(DESTDIR)/usr/lib/modprobe.d/nvme-hmb.conf
MODLOAD_CONF := $(DESTDIR)/usr/lib/modules-load.d/nvme-hmb.conf

# The version: dkms.conf's PACKAGE_VERSION is the only place it is written.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)

# Signing at install: with CONFIG_MODULE_SIG_ALL (Debian's kernels) kbuild's
# modules_install runs sign-file with the kernel's own key, which only the
# kernel's builder has; without it every module prints OpenSSL errors (and
# stays unsigned, "|| true").  So sign only when the key is there (a kernel
# built here), otherwise switch kbuild's signing off.  Secure Boot machines
# use DKMS and its MOK key instead (Documentation/nvme-hmb-install.rst).
sig_key := $(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$$/\1/p' \
	$(KDIR)/.config 2>/dev/null)
sig_key_file := $(if $(filter /%,$(sig_key)),$(sig_key),$(KDIR)/$(sig_key))
nosign := $(if $(filter pkcs11:%,$(sig_key))$(and $(sig_key),$(wildcard \
	$(sig_key_file))),,CONFIG_MODULE_SIG_ALL=)
# Debian's 6.12 headers (not its 6.1 ones) run depmod at the end of an
# external modules_install, through scripts/depmod.sh, which warns and skips
# without the System.map that headers packages lack; depmod is run here
# instead, and not for a staged install (cmd_depmod is kbuild's name for
# that step in scripts/Makefile.modinst).
nodepmod := cmd_depmod=: quiet_cmd_depmod=

SRC_FILES := Kbuild $(shell find driver kunit -name '*.[ch]' 2>/dev/null)

.PHONY: all modules install modules_install install-tools install-config \
	uninstall dkms-source deb dist clean check test coverage demo bench qemu \
	modules-stock modules-stock-6.12 modules-debug modules-arm64 deps

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) \
		NVME_HMB_ENGINE_ONLY=$(NVME_HMB_ENGINE_ONLY) \
		NVME_HMB_TESTS=$(NVME_HMB_TESTS) modules

# Everything of Documentation/nvme-hmb-install.rst's "make install": the
# modules built by `make` (not rebuilt here, so that `sudo make install`
# leaves no root-owned objects), the tool, and the files that load
# nvme_hmb_pci at boot, these only with nvme_hmb_pci built.
install: modules_install install-tools
	@# modules.order: what the last build made (a stale .ko may remain);
	@# its lines are /path/name.ko (6.1) or name.o (7.3)
	@if grep -Eqs '(^|/)nvme_hmb_pci\.k?o$$' modules.order; then \
		$(MAKE) --no-print-directory install-config; \
	else \
		echo "nvme-hmb: nvme_hmb_pci not built: hand-over files not installed" >&2; \
	fi

# Only what `make` built: with NVME_HMB_ENGINE_ONLY=1 there is no
# nvme_hmb_pci.ko, and kbuild installs what modules.order lists.
modules_install:
	@test -f nvme_hmb.ko || { echo "nvme-hmb: run make (KDIR=$(KDIR)) first" >&2; exit 1; }
	@test -f nvme_hmb_pci.ko || [ "$(NVME_HMB_ENGINE_ONLY)" = 1 ] || { \
		echo "nvme-hmb: nvme_hmb_pci.ko was not built (see make's message); NVME_HMB_ENGINE_ONLY=1 installs the engine alone" >&2; exit 1; }
	@test -d $(KDIR) || { echo "nvme-hmb: no kernel build tree $(KDIR)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) \
		NVME_HMB_ENGINE_ONLY=$(NVME_HMB_ENGINE_ONLY) \
		NVME_HMB_TESTS=$(NVME_HMB_TESTS) \
		INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) INSTALL_MOD_DIR=$(MOD_SUBDIR) \
		$(nosign) $(nodepmod) modules_install
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KVER))
	@# depmod prefers updates/ (DKMS's) over extra/: say so.
	@$(if $(INSTALL_MOD_PATH),true,! ls /lib/modules/$(KVER)/updates/dkms/nvme_hmb.ko* \
		>/dev/null 2>&1 || echo "nvme-hmb: DKMS has nvme-hmb for $(KVER) too, and modprobe loads DKMS's (dkms status nvme-hmb)" >&2)

# The user tool (Documentation/nvme-hmb-sweep.rst): one shell script.
install-tools:
	@test -n "$(VERSION)" || { echo "nvme-hmb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/sbin
	sed 's/^VERSION=@VERSION@$$/VERSION=$(VERSION)/' tools/nvme-hmb \
		>$(DESTDIR)$(PREFIX)/sbin/nvme-hmb
	chmod 0755 $(DESTDIR)$(PREFIX)/sbin/nvme-hmb
	install -d $(DESTDIR)$(MANDIR)/man8
	sed 's/@VERSION@/$(VERSION)/' Documentation/nvme-hmb.8 \
		>$(DESTDIR)$(MANDIR)/man8/nvme-hmb.8
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/nvme-hmb.8

# nvme_hmb_pci loads at boot, after nvme, and takes the HMB over from
# nvme-pci (Documentation/nvme-hmb-install.rst).  Also for DKMS installs,
# which ship modules only.  Nothing of nvme's is changed, so the initramfs
# needs no rebuild.
install-config:
	install -D -m 0644 packaging/modprobe.d/nvme-hmb.conf $(MODPROBE_CONF)
	install -D -m 0644 packaging/modules-load.d/nvme-hmb.conf $(MODLOAD_CONF)
	@# An earlier nvme-hmb's file in /etc wins over these.
	@! grep -qs max_host_mem_size_mb $(DESTDIR)/etc/modprobe.d/nvme-hmb.conf || \
		echo "nvme-hmb: $(DESTDIR)/etc/modprobe.d/nvme-hmb.conf, from an earlier nvme-hmb, keeps nvme-pci's HMB off and wins over $(MODPROBE_CONF): remove it (Documentation/nvme-hmb-install.rst)" >&2

# Removes what install may have put there, for KVER, and nothing else: the
# module directory goes, and extra/ with it when nothing else is in it.
uninstall:
	for m in $(MODULES); do for z in .ko .ko.xz .ko.gz .ko.zst; do \
		rm -f $(MODDIR)/$$m$$z; done; done
	rmdir $(MODDIR) $(dir $(MODDIR)) 2>/dev/null || true
	rm -f $(DESTDIR)$(PREFIX)/sbin/nvme-hmb $(MODPROBE_CONF) $(MODLOAD_CONF) \
		$(DESTDIR)$(MANDIR)/man8/nvme-hmb.8
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KVER))

# DKMS builds from /usr/src/<name>-<version>/; `dkms add .` would copy the
# whole checkout, build/ included.  This copies only the sources.
DKMS_SRC = $(DESTDIR)/usr/src/nvme-hmb-$(VERSION)
dkms-source:
	@test -n "$(VERSION)" || { echo "nvme-hmb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	tar -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='nvme-private' \
		COPYING CHANGELOG dkms.conf Makefile Kbuild driver kunit | \
		tar -C $(DKMS_SRC) -xf -

# The Debian package, built from a copy of what the package needs (never
# in the checkout: dpkg-buildpackage writes next to its source tree).
# Its changelog says the version of dkms.conf; CHANGELOG has the changes.
DEB_TOP := build/deb
DEB_SRC = $(DEB_TOP)/nvme-hmb-$(VERSION)
DEB_DATE = $(shell git log -1 --format=%cD 2>/dev/null || date -R)
deb:
	@test -n "$(VERSION)" || { echo "nvme-hmb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || { \
		echo "nvme-hmb: make deb needs dpkg-dev, debhelper and dh-dkms (apt install dpkg-dev debhelper dh-dkms)" >&2; exit 1; }
	rm -rf $(DEB_TOP)
	mkdir -p $(DEB_SRC)
	tar -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='nvme-private' \
		COPYING CHANGELOG README.md dkms.conf Makefile Kbuild driver \
		kunit packaging tools Documentation | tar -C $(DEB_SRC) -xf -
	cp -r packaging/debian $(DEB_SRC)/debian
	printf '%s\n' "nvme-hmb ($(VERSION)) unstable; urgency=medium" "" \
		"  * nvme-hmb $(VERSION): /usr/share/doc/nvme-hmb-dkms/changelog.gz." "" \
		" -- $$(sed -n 's/^Maintainer: //p' packaging/debian/control)  $(DEB_DATE)" \
		>$(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || { \
		tail -n 30 ../build.log >&2; exit 1; }
	@ls $(DEB_TOP)/*.deb

# The release tarball: the last commit, as git has it.
dist:
	@test -n "$(VERSION)" || { echo "nvme-hmb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	@git rev-parse --git-dir >/dev/null 2>&1 || { echo "nvme-hmb: make dist needs the git checkout" >&2; exit 1; }
	@git diff --quiet HEAD || echo "nvme-hmb: uncommitted changes are not in the tarball (it is the last commit)" >&2
	mkdir -p build/dist
	git archive --format=tar --prefix=nvme-hmb-$(VERSION)/ HEAD | \
		xz -9 >build/dist/nvme-hmb-$(VERSION).tar.xz
	@ls build/dist/nvme-hmb-$(VERSION).tar.xz

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf build

deps:
	scripts/install-deps

# Each kernel gets its own copy of the sources under build/, so that builds
# against different kernels never share objects.
modules-stock: deps
	scripts/build-modules stock

modules-stock-6.12: deps
	scripts/build-modules stock-6.12

modules-debug: deps
	scripts/build-modules debug

modules-arm64: deps
	scripts/build-modules arm64

check: deps
	scripts/check

test: deps
	scripts/run-tests

# The debug kernel's VMs with profiled modules, the per-file summary and
# the marked lines (scripts/coverage), and an HTML report.
coverage: deps
	scripts/run-tests --kernel debug
	scripts/coverage report --src build/debug/src \
		--html build/coverage/html build/coverage/debug*/

demo: deps
	scripts/demo

bench: deps
	scripts/bench

qemu: deps
	scripts/build-qemu
