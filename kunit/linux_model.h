/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reference model of Linux 6.1's Host Memory Buffer policy, for tests
 * and benchmarks to compare the engine with.  Builds in the kernel (the
 * KUnit module) and in userspace (the bench's host program), where the
 * kernel's short types come from the UAPI ones.
 */
#ifndef _NVME_HMB_LINUX_MODEL_H
#define _NVME_HMB_LINUX_MODEL_H

#include <linux/types.h>
#ifndef __KERNEL__
#include <stdbool.h>
typedef __u64 u64;
typedef __u32 u32;
typedef __u16 u16;
#endif

/* The HMB fields of Identify Controller, raw (4 KiB units). */
struct nvme_hmb_linux_drive {
	u32 hmpre;
	u32 hmmin;
	u32 hmminds;
	u16 hmmaxd;
};

/* What nvme_setup_host_mem() ends with; all zero when no HMB. */
struct nvme_hmb_linux_grant {
	u64 size;		/* host_mem_size: HSIZE in bytes */
	u32 nr_descs;		/* descriptor entries */
	u64 chunk;		/* chunk size of the pass that was kept */
	bool below_hmminds;	/* an entry shorter than HMMINDS was given */
	bool bsize_short;	/* the entries' BSIZE sum is below HSIZE */
};

bool nvme_hmb_linux_fits(u64 page_size, u64 max_order_bytes, u64 ceiling,
			 u64 bytes);
void nvme_hmb_linux_model(const struct nvme_hmb_linux_drive *d, u64 cap,
			  u64 page_size, u64 max_order_bytes,
			  bool (*alloc)(void *priv, u64 bytes), void *priv,
			  struct nvme_hmb_linux_grant *g);

#endif /* _NVME_HMB_LINUX_MODEL_H */
