// SPDX-License-Identifier: GPL-2.0
/*
 * nvme_hmb_kunit: the KUnit suites of the nvme-hmb engine.  Loading the
 * module runs them (the kernel needs CONFIG_KUNIT); results are in dmesg
 * and under /sys/kernel/debug/kunit/.
 */
#include <linux/module.h>

#include "compat.h"

MODULE_DESCRIPTION("KUnit suites for the nvme-hmb engine");
MODULE_AUTHOR("nvme-hmb developers <maintainers@users.noreply.a-seed-3aadf4a1.example>");
MODULE_LICENSE("GPL");
MODULE_VERSION(NVME_HMB_VERSION);
MODULE_IMPORT_NS(NVME_HMB_NS);
MODULE_IMPORT_NS(NVME_HMB_KUNIT_NS);
