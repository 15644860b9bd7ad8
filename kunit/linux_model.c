// SPDX-License-Identifier: GPL-2.0
/*
 * A reference model of Linux 6.1's Host Memory Buffer policy: a port of
 * nvme_setup_host_mem(), nvme_alloc_host_mem() and __nvme_alloc_host_mem()
 * of drivers/nvme/host/pci.c (v6.1, unchanged in its logic up to v6.12),
 * with the DMA allocations replaced by a callback that says whether an
 * allocation of a given size succeeds.  Nothing is allocated; a pass that
 * Linux frees again is simply forgotten.
 *
 * Faithful on purpose, quirks included: chunk sizes halve from
 * min(preferred, the largest page-allocator block) without rounding, the
 * last entry of a pass is whatever remains (possibly below HMMINDS), the
 * first pass that reaches HMMIN is kept even when a smaller chunk size
 * would give more, the descriptor list is sized for the pass, and HMMINDS
 * is multiplied in 32 bits.  The engine is compared with this, never
 * built from it.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include "linux_model.h"

static u64 lm_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

/**
 * nvme_hmb_linux_fits() - the memory state the model and the tests assume
 * @page_size: PAGE_SIZE
 * @max_order_bytes: the page allocator's largest block
 * @ceiling: the largest free block, with every smaller one plentiful
 * @bytes: the size asked for
 *
 * An allocation takes the power-of-two block of pages that holds it and
 * succeeds when that block is no larger than @ceiling (no CMA, no IOMMU:
 * nothing above the largest block).
 *
 * Return: whether an allocation of @bytes succeeds.
 */
bool nvme_hmb_linux_fits(u64 page_size, u64 max_order_bytes, u64 ceiling,
			 u64 bytes)
{
	u64 block = page_size;

	if (!bytes || bytes > max_order_bytes)
		return false;
	while (block < bytes)
		block <<= 1;
	return block <= ceiling;
}

/* __nvme_alloc_host_mem(): one pass at @chunk_size; false as -ENOMEM. */
static bool lm_pass(const struct nvme_hmb_linux_drive *d, u64 preferred,
		    u32 chunk_size, bool (*alloc)(void *priv, u64 bytes),
		    void *priv, u64 hmminds, struct nvme_hmb_linux_grant *g)
{
	u64 tmp = preferred + chunk_size - 1;
	u32 max_entries, len = 0, i = 0;
	u64 size;

	max_entries = (u32)(tmp / chunk_size);
	if (d->hmmaxd && d->hmmaxd < max_entries)
		max_entries = d->hmmaxd;

	/* dma_alloc_coherent() of the list: max_entries * 16 bytes. */
	if (!alloc(priv, (u64)max_entries * 16))
		return false;

	memset(g, 0, sizeof(*g));
	for (size = 0; size < preferred && i < max_entries; size += len) {
		len = (u32)lm_min(chunk_size, preferred - size);
		if (!alloc(priv, len))
			break;
		if (len < hmminds)
			g->below_hmminds = true;
		/* descs[i].size = len / NVME_CTRL_PAGE_SIZE */
		if (len % 4096)
			g->bsize_short = true;
		i++;
	}
	if (!size)
		return false;
	g->size = size;
	g->nr_descs = i;
	g->chunk = chunk_size;
	return true;
}

/**
 * nvme_hmb_linux_model() - what Linux 6.1 grants a controller
 * @d: the controller's HMB fields, raw
 * @cap: max_host_mem_size_mb in bytes (nvme-pci's default: 128 MiB)
 * @page_size: PAGE_SIZE
 * @max_order_bytes: PAGE_SIZE * MAX_ORDER_NR_PAGES (4 MiB on x86)
 * @alloc: whether an allocation of @bytes succeeds (list and buffers)
 * @priv: passed to @alloc
 * @g: the grant; all zero when Linux runs the controller without HMB
 *
 * HMMINDS, the spec's minimum buffer size, is the loop's floor only (as
 * in Linux): @g says when an entry below it was given, which a controller
 * may refuse.
 */
void nvme_hmb_linux_model(const struct nvme_hmb_linux_drive *d, u64 cap,
			  u64 page_size, u64 max_order_bytes,
			  bool (*alloc)(void *priv, u64 bytes), void *priv,
			  struct nvme_hmb_linux_grant *g)
{
	u64 preferred = (u64)d->hmpre * 4096;
	u64 min = (u64)d->hmmin * 4096;
	u64 min_chunk, hmminds, chunk_size, spec_minds;
	u32 a, b;

	memset(g, 0, sizeof(*g));
	/* nvme_setup_io_queues(): "if (dev->ctrl.hmpre)" */
	if (!d->hmpre)
		return;
	/* nvme_setup_host_mem() */
	preferred = lm_min(preferred, cap);
	if (min > cap)
		return;
	/* nvme_alloc_host_mem() */
	min_chunk = lm_min(preferred, max_order_bytes);
	a = d->hmminds * 4096;		/* u32 arithmetic, as in Linux */
	b = (u32)(page_size * 2);
	hmminds = a > b ? a : b;
	spec_minds = (u64)d->hmminds * 4096;
	for (chunk_size = min_chunk; chunk_size >= hmminds; chunk_size /= 2) {
		if (lm_pass(d, preferred, (u32)chunk_size, alloc, priv,
			    spec_minds, g)) {
			if (!min || g->size >= min)
				return;
			memset(g, 0, sizeof(*g));	/* nvme_free_host_mem() */
		}
	}
}
