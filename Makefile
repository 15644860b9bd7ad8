# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb: out-of-tree build (Documentation/kbuild/modules.rst) and the
# project's developer targets.
#
#   make                build the modules against $(KDIR)
#   make install        install them under /lib/modules/<kver>/extra
#   make install-tools  install tools/nvme-hmb in $(DESTDIR)$(PREFIX)/sbin
#   make check          checkpatch --strict, sparse (C=2) and a W=1 build
#                       against the stock (6.1) and the 6.12 headers
#   make test           the test suite: KUnit and selftests in QEMU
#   make demo           boot a VM and show what the module does, then the
#                       working-set sweep on the emulated drive
#   make bench          nvme-hmb against Linux's HMB policy in a VM: grants
#                       in fresh and fragmented memory, setup, resize,
#                       reclaim and resume timings (scripts/bench)
#   make qemu           build QEMU with the emulated drive (scripts/build-qemu)
#   make modules-stock  build against Debian's stock headers into build/stock
#   make modules-stock-6.12
#                       build against Debian 12's 6.12 headers into
#                       build/stock-6.12
#   make modules-debug  build against the debug test kernel into build/debug

KDIR ?= /lib/modules/$(shell uname -r)/build
# Kernel source tree matching KDIR, for the private nvme-core header
# (drivers/nvme/host/nvme.h) that nvme_hmb_pci needs.  Optional.
KSRC ?=
PREFIX ?= /usr/local

SRC_FILES := Kbuild $(shell find driver kunit -name '*.[ch]' 2>/dev/null)

.PHONY: all modules install modules_install install-tools clean check test \
	demo bench qemu modules-stock modules-stock-6.12 modules-debug deps

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) modules

install modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) modules_install

# The user tool (Documentation/nvme-hmb-sweep.rst): one shell script.
install-tools:
	install -D -m 0755 tools/nvme-hmb $(DESTDIR)$(PREFIX)/sbin/nvme-hmb

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

check: deps
	scripts/check

test: deps
	scripts/run-tests

demo: deps
	scripts/demo

bench: deps
	scripts/bench

qemu: deps
	scripts/build-qemu
