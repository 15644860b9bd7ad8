// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: the buffers given to a controller and the Host Memory
 * Descriptor List that describes them.
 *
 * The list lives in its own DMA-coherent allocation, sized once for
 * NVME_HMB_MAX_DESCS (or HMMAXD) entries and freed with that recorded size.
 * Buffers are DMA-coherent chunks, largest first: when a size fails, what
 * was already allocated is kept and the size halves, so fragmentation costs
 * size gradually instead of all or nothing.  Behind an IOMMU that merges
 * pages one IOVA-contiguous buffer is tried first; never without one, where
 * dma_alloc_noncontiguous() cannot do better and warns above the largest
 * page order.
 *
 * Nothing here knows whether a controller uses the memory: callers free
 * only what the controller cannot access (ctrl.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "internal.h"

/* Large chunks fail fast rather than push the system into hard reclaim. */
static gfp_t nvme_hmb_chunk_gfp(u64 size)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN;

	if (size > (PAGE_SIZE << PAGE_ALLOC_COSTLY_ORDER))
		gfp |= __GFP_NORETRY;
	return gfp;
}

/* Count an allocation attempt; true when the test seam fails it. */
static bool nvme_hmb_seam_fails(struct nvme_hmb_alloc_ctx *ax, u64 size)
{
	unsigned int nth = ax->nth++;

	return ax->hook && ax->hook->fail && ax->hook->fail(ax->hook->priv,
							     nth, size);
}

/**
 * nvme_hmb_buf_init() - allocate the bookkeeping and the descriptor list
 * @ax: allocation context
 * @buf: the buffer set, empty on return when this fails
 * @max_descs: entries the list must hold
 *
 * Return: 0 or -ENOMEM.
 */
int nvme_hmb_buf_init(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		      u32 max_descs)
{
	memset(buf, 0, sizeof(*buf));
	if (!max_descs || max_descs > NVME_HMB_MAX_DESCS)
		return -EINVAL;

	buf->chunks = kcalloc(max_descs, sizeof(*buf->chunks), GFP_KERNEL);
	if (!buf->chunks)
		return -ENOMEM;
	buf->max_chunks = max_descs;

	buf->descs_bytes = max_descs * sizeof(*buf->descs);
	if (!nvme_hmb_seam_fails(ax, buf->descs_bytes))
		buf->descs = dma_alloc_coherent(ax->dev, buf->descs_bytes,
						&buf->descs_dma, GFP_KERNEL);
	if (!buf->descs) {
		ax->failures++;
		kfree(buf->chunks);
		memset(buf, 0, sizeof(*buf));
		return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_buf_init, NVME_HMB_NS);

static bool nvme_hmb_chunk_alloc(struct nvme_hmb_alloc_ctx *ax,
				 struct nvme_hmb_buf *buf, u64 size)
{
	struct nvme_hmb_chunk *c = &buf->chunks[buf->nr_chunks];

	if (size > SIZE_MAX || nvme_hmb_seam_fails(ax, size))
		return false;
	c->cookie = dma_alloc_attrs(ax->dev, size, &c->dma,
				    nvme_hmb_chunk_gfp(size),
				    DMA_ATTR_NO_KERNEL_MAPPING);
	if (!c->cookie)
		return false;
	c->size = size;
	buf->nr_chunks++;
	buf->size += size;
	return true;
}

/* One IOVA-contiguous buffer of @size, as the only entry. */
static bool nvme_hmb_contig_alloc(struct nvme_hmb_alloc_ctx *ax,
				  struct nvme_hmb_buf *buf, u64 size)
{
	struct sg_table *sgt;

	if (size > SIZE_MAX || nvme_hmb_seam_fails(ax, size))
		return false;
	sgt = dma_alloc_noncontiguous(ax->dev, size, DMA_BIDIRECTIONAL,
				      GFP_KERNEL | __GFP_NOWARN, 0);
	if (!sgt)
		return false;
	if (sgt->nents != 1 || sg_dma_len(sgt->sgl) != size) {
		dma_free_noncontiguous(ax->dev, size, sgt, DMA_BIDIRECTIONAL);
		return false;
	}
	buf->sgt = sgt;
	buf->sgt_size = size;
	buf->chunks[0].dma = sg_dma_address(sgt->sgl);
	buf->chunks[0].size = size;
	buf->nr_chunks = 1;
	buf->size = size;
	return true;
}

/**
 * nvme_hmb_buf_grow() - add buffers until @target or the entries run out
 * @ax: allocation context; failures and descs_exhausted are updated
 * @buf: the buffer set; buffers already in it are kept
 * @host: host constraints
 * @plan: the negotiated plan (chunk sizes, entry limit)
 * @target: total size wanted, bytes
 *
 * An empty set behind a merging IOMMU first tries a single IOVA-contiguous
 * buffer of @target.  Otherwise chunks of plan->first_chunk are allocated;
 * a failed size halves, down to plan->min_chunk, and allocation goes on at
 * the smaller size.  The remainder is covered with smaller chunks as long
 * as entries are left.  Nothing is retried at a size that failed: the
 * number of attempts is bounded by the entries plus the halvings.
 */
void nvme_hmb_buf_grow(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		       const struct nvme_hmb_host *host,
		       const struct nvme_hmb_plan *plan, u64 target)
{
	u32 max_descs = min(plan->max_descs, buf->max_chunks);
	u64 size = plan->first_chunk;

	if (!buf->nr_chunks && host->contig && target >= plan->min_chunk) {
		if (nvme_hmb_contig_alloc(ax, buf, target))
			return;
		ax->failures++;
	}
	if (buf->sgt)
		return;

	while (buf->size < target && buf->nr_chunks < max_descs) {
		u64 want = nvme_hmb_chunk_round(host,
						min(size, target - buf->size));

		if (want < plan->min_chunk)
			break;
		if (nvme_hmb_chunk_alloc(ax, buf, want))
			continue;
		ax->failures++;
		size = nvme_hmb_chunk_round(host, want / 2);
		if (size < plan->min_chunk)
			break;
	}
	ax->descs_exhausted = buf->size < target && buf->nr_chunks >= max_descs;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_buf_grow, NVME_HMB_NS);

/**
 * nvme_hmb_buf_trim() - free buffers from the tail down to @target
 * @dev: the DMA device
 * @buf: the buffer set; the controller must not be using it
 * @target: most bytes to keep
 *
 * Whole buffers only, smallest (last) first.  A single IOVA-contiguous
 * buffer cannot be cut and goes whole when it exceeds @target.
 *
 * Return: the bytes kept.
 */
u64 nvme_hmb_buf_trim(struct device *dev, struct nvme_hmb_buf *buf,
		      u64 target)
{
	if (buf->sgt) {
		if (buf->size > target) {
			dma_free_noncontiguous(dev, buf->sgt_size, buf->sgt,
					       DMA_BIDIRECTIONAL);
			buf->sgt = NULL;
			buf->sgt_size = 0;
			memset(&buf->chunks[0], 0, sizeof(buf->chunks[0]));
			buf->nr_chunks = 0;
			buf->size = 0;
		}
		return buf->size;
	}
	while (buf->nr_chunks && buf->size > target) {
		struct nvme_hmb_chunk *c = &buf->chunks[--buf->nr_chunks];

		dma_free_attrs(dev, c->size, c->cookie, c->dma,
			       DMA_ATTR_NO_KERNEL_MAPPING);
		buf->size -= c->size;
		memset(c, 0, sizeof(*c));
	}
	return buf->size;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_buf_trim, NVME_HMB_NS);

/**
 * nvme_hmb_buf_free() - free everything; safe to call again
 * @dev: the DMA device
 * @buf: the buffer set; the controller must not be using it
 *
 * Every pointer is cleared as it is freed, so a second call (an error path
 * followed by teardown) frees nothing twice.
 */
void nvme_hmb_buf_free(struct device *dev, struct nvme_hmb_buf *buf)
{
	if (buf->chunks)
		nvme_hmb_buf_trim(dev, buf, 0);
	if (buf->descs)
		dma_free_coherent(dev, buf->descs_bytes, buf->descs,
				  buf->descs_dma);
	kfree(buf->chunks);
	memset(buf, 0, sizeof(*buf));
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_buf_free, NVME_HMB_NS);

/**
 * nvme_hmb_buf_write_descs() - write the descriptor list for @buf
 * @buf: the buffer set; the controller must not be using the list
 *
 * Return: HSIZE, the sum of the entries' BSIZE, in memory page units.
 */
u32 nvme_hmb_buf_write_descs(struct nvme_hmb_buf *buf)
{
	u64 pages = 0;
	u32 i;

	for (i = 0; i < buf->nr_chunks; i++) {
		u64 bsize = buf->chunks[i].size >> NVME_HMB_PAGE_SHIFT;

		buf->descs[i].addr = cpu_to_le64(buf->chunks[i].dma);
		buf->descs[i].size = cpu_to_le32(bsize);
		buf->descs[i].rsvd = 0;
		pages += bsize;
	}
	for (; i < buf->max_chunks; i++)
		memset(&buf->descs[i], 0, sizeof(buf->descs[i]));
	return pages;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_buf_write_descs, NVME_HMB_NS);
