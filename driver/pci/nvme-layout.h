/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What nvme_hmb_pci reads of nvme-core's and nvme-pci's private types
 * (struct nvme_ctrl, enum nvme_ctrl_state; struct nvme_dev), checked at
 * compile time against the modules' own BTF (driver/pci/nvme-btf-layout.sh
 * writes nvme-private/btf-layout.h from it; Kbuild defines
 * NVME_HMB_PCI_BTF when it did).  Include after the private headers (the
 * kernel source's drivers/nvme/host/nvme.h and nvme-dev.h, the struct
 * nvme_dev of its drivers/nvme/host/pci.c, or btf-nvme.h generated from
 * the BTF alone).
 *
 * One assertion per member and per enumerator, so that a mismatch fails
 * the build with an error naming it: a struct nvme_ctrl read at the wrong
 * offset sends admin commands to a pointer that is not a queue, a struct
 * nvme_dev one hands the controller a descriptor list that is not its.
 */
#ifndef NVME_HMB_PCI_LAYOUT_H
#define NVME_HMB_PCI_LAYOUT_H

#include <linux/build_bug.h>
#include <linux/stddef.h>

/*
 * Only the compiler's layout counts: sparse computes some of these offsets
 * differently from gcc (all seven asserts fail under it on both kernels),
 * and the build that makes the module checks them.
 */
#if defined(NVME_HMB_PCI_BTF) && !defined(__CHECKER__)
#include "nvme-private/btf-layout.h"

#define NVME_HMB_PCI_CHECK_OFF(m)					\
	static_assert(offsetof(struct nvme_ctrl, m) ==			\
		      NVME_HMB_BTF_OFF_##m,					\
		      "struct nvme_ctrl." #m ": offset differs from the BTF of nvme-core")
#define NVME_HMB_PCI_CHECK_SIZE(m)					\
	static_assert(sizeof_field(struct nvme_ctrl, m) ==		\
		      NVME_HMB_BTF_SIZE_##m,					\
		      "struct nvme_ctrl." #m ": size differs from the BTF of nvme-core")

NVME_HMB_PCI_CHECK_OFF(state);
NVME_HMB_PCI_CHECK_SIZE(state);
NVME_HMB_PCI_CHECK_OFF(admin_q);
NVME_HMB_PCI_CHECK_SIZE(admin_q);
NVME_HMB_PCI_CHECK_OFF(dev);
NVME_HMB_PCI_CHECK_SIZE(dev);
NVME_HMB_PCI_CHECK_OFF(device);
NVME_HMB_PCI_CHECK_SIZE(device);
NVME_HMB_PCI_CHECK_OFF(reset_work);
NVME_HMB_PCI_CHECK_SIZE(reset_work);
NVME_HMB_PCI_CHECK_OFF(hmpre);
NVME_HMB_PCI_CHECK_SIZE(hmpre);
NVME_HMB_PCI_CHECK_OFF(hmmin);
NVME_HMB_PCI_CHECK_SIZE(hmmin);
NVME_HMB_PCI_CHECK_OFF(hmminds);
NVME_HMB_PCI_CHECK_SIZE(hmminds);
NVME_HMB_PCI_CHECK_OFF(hmmaxd);
NVME_HMB_PCI_CHECK_SIZE(hmmaxd);

/* nvme-pci's struct nvme_dev; of ctrl, the offset is for container_of. */
#define NVME_HMB_PCI_CHECK_DEV_OFF(m)					\
	static_assert(offsetof(struct nvme_dev, m) ==			\
		      NVME_HMB_BTF_DEV_OFF_##m,				\
		      "struct nvme_dev." #m ": offset differs from the BTF of nvme-pci")
#define NVME_HMB_PCI_CHECK_DEV_SIZE(m)					\
	static_assert(sizeof_field(struct nvme_dev, m) ==		\
		      NVME_HMB_BTF_DEV_SIZE_##m,			\
		      "struct nvme_dev." #m ": size differs from the BTF of nvme-pci")

NVME_HMB_PCI_CHECK_DEV_OFF(ctrl);
NVME_HMB_PCI_CHECK_DEV_SIZE(ctrl);
NVME_HMB_PCI_CHECK_DEV_OFF(dev);
NVME_HMB_PCI_CHECK_DEV_SIZE(dev);
NVME_HMB_PCI_CHECK_DEV_OFF(host_mem_size);
NVME_HMB_PCI_CHECK_DEV_SIZE(host_mem_size);
NVME_HMB_PCI_CHECK_DEV_OFF(nr_host_mem_descs);
NVME_HMB_PCI_CHECK_DEV_SIZE(nr_host_mem_descs);
NVME_HMB_PCI_CHECK_DEV_OFF(host_mem_descs_dma);
NVME_HMB_PCI_CHECK_DEV_SIZE(host_mem_descs_dma);
NVME_HMB_PCI_CHECK_DEV_OFF(host_mem_descs);
NVME_HMB_PCI_CHECK_DEV_SIZE(host_mem_descs);

#define NVME_HMB_PCI_CHECK_STATE(s)					\
	static_assert((s) == NVME_HMB_BTF_##s,				\
		      "enum nvme_ctrl_state " #s ": value differs from the BTF of nvme-core")

NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_NEW);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_LIVE);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_RESETTING);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_CONNECTING);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_DELETING);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_DELETING_NOIO);
NVME_HMB_PCI_CHECK_STATE(NVME_CTRL_DEAD);

static_assert(sizeof(struct nvme_ctrl) == NVME_HMB_BTF_SIZE_nvme_ctrl,
	      "sizeof(struct nvme_ctrl) differs from the BTF of nvme-core");
static_assert(sizeof(struct nvme_dev) == NVME_HMB_BTF_SIZE_nvme_dev,
	      "sizeof(struct nvme_dev) differs from the BTF of nvme-pci");
/* reset_work is flushed: the kernel's work_struct must be nvme-core's. */
static_assert(sizeof(struct work_struct) == NVME_HMB_BTF_SIZE_work_struct,
	      "sizeof(struct work_struct) differs from the BTF of the kernel (headers of another configuration?)");

#define NVME_HMB_PCI_STATE_MAX	NVME_HMB_BTF_NVME_CTRL_STATE_MAX
#else
/* Source header only (no BTF): the last state nvme_hmb_pci knows. */
#define NVME_HMB_PCI_STATE_MAX	NVME_CTRL_DEAD
#endif

#endif /* NVME_HMB_PCI_LAYOUT_H */
