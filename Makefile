# SPDX-License-Identifier: GPL-2.0
#
# nvme-hmb: out-of-tree build (Documentation/kbuild/modules.rst) and the
# project's developer targets.
#
#   make                build the modules against $(KDIR)
#   make install        install them under /lib/modules/<kver>/extra
#   make check          checkpatch --strict, sparse (C=2) and a W=1 build
#   make test           the test suite: KUnit and selftests in QEMU
#   make demo           boot a VM and show what the module does
#   make bench          nvme-pci and nvme-hmb side by side on the emulated
#                       DRAM-less drives (scripts/bench-side-by-side)
#   make qemu           build QEMU with the emulated drive (scripts/build-qemu)
#   make modules-stock  build against Debian's stock headers into build/stock
#   make modules-debug  build against the debug test kernel into build/debug

KDIR ?= /lib/modules/$(shell uname -r)/build
# Kernel source tree matching KDIR, for the private nvme-core header
# (drivers/nvme/host/nvme.h) that nvme_hmb_pci needs.  Optional.
KSRC ?=

SRC_FILES := Kbuild $(shell find driver kunit -name '*.[ch]' 2>/dev/null)

.PHONY: all modules install modules_install clean check test demo bench \
	qemu modules-stock modules-debug deps

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) modules

install modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KSRC=$(KSRC) modules_install

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf build

deps:
	scripts/install-deps

# Each kernel gets its own copy of the sources under build/, so that builds
# against different kernels never share objects.
modules-stock: deps
	scripts/build-modules stock

modules-debug: deps
	scripts/build-modules debug

check: deps
	scripts/check

test: deps
	scripts/run-tests

demo: deps
	scripts/demo

bench: deps
	scripts/bench-side-by-side

qemu: deps
	scripts/build-qemu
