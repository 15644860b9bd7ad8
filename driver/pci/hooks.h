/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme_hmb_pci's test hooks (hooks.c): the force= parameter and the
 * debugfs files report_reset, hold_reset_ms, miss_init and refuse.
 *
 * hooks.c is built only into the test build (NVME_HMB_TESTS=1, which
 * defines NVME_HMB_TEST_HOOKS); the module `make` and DKMS build gets the
 * no-op stubs below, and the ops pci.c hands over are optimised away.
 */
#ifndef NVME_HMB_PCI_HOOKS_H
#define NVME_HMB_PCI_HOOKS_H

#include <linux/types.h>

struct device;
struct nvme_hmb_id;

/* What the hooks may ask of nvme_hmb_pci (pci.c). */
struct hmb_pci_hook_ops {
	/* Report a reset of the controller @name; -ENODEV if none. */
	int (*report_reset)(const char *name);
	/* Detach @name if attached, handing its HMB back to nvme-pci. */
	void (*release)(const char *name);
	/* Look for controllers to attach again. */
	void (*rescan)(void);
};

#ifdef NVME_HMB_TEST_HOOKS
int hmb_pci_hooks_init(const struct hmb_pci_hook_ops *ops);
void hmb_pci_hooks_exit(void);
void hmb_pci_hooks_identify(struct device *dev, const char *name,
			    struct nvme_hmb_id *id);
bool hmb_pci_hooks_refused(struct device *dev);
void hmb_pci_hooks_hold_reset(struct device *dev);
bool hmb_pci_hooks_miss_init(void);
#else
static inline int hmb_pci_hooks_init(const struct hmb_pci_hook_ops *ops)
{
	return 0;
}

static inline void hmb_pci_hooks_exit(void)
{
}

static inline void hmb_pci_hooks_identify(struct device *dev,
					  const char *name,
					  struct nvme_hmb_id *id)
{
}

static inline bool hmb_pci_hooks_refused(struct device *dev)
{
	return false;
}

static inline void hmb_pci_hooks_hold_reset(struct device *dev)
{
}

static inline bool hmb_pci_hooks_miss_init(void)
{
	return false;
}
#endif /* NVME_HMB_TEST_HOOKS */

#endif /* NVME_HMB_PCI_HOOKS_H */
