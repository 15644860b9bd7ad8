/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-hmb: every kernel-version difference, in one place.
 *
 * The project is built and tested on Debian's 6.1.  Each shim names the
 * upstream release (and commit) that changed the interface it covers, so
 * that the shims can be dropped once the oldest supported kernel passes it.
 * Runtime code never tests LINUX_VERSION_CODE itself.
 */
#ifndef _NVME_HMB_COMPAT_H
#define _NVME_HMB_COMPAT_H

#include <linux/version.h>

/* ---------------------------------------------------------------------
 * <linux/export.h>, <linux/module.h>
 *
 * 6.13, commit cdd30ebb1b9f ("module: Convert symbol namespace to string
 * literal"): EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS() take a string
 * literal instead of a bare identifier.  Before it, __stringify() turns the
 * macro below into the same string.
 */
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
#define NVME_HMB_NS	"NVME_HMB"
#else
#define NVME_HMB_NS	NVME_HMB
#endif

#endif /* _NVME_HMB_COMPAT_H */
