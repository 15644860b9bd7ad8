// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: the buffers given to a controller and the Host Memory
 * Descriptor List that describes them.
 *
 * The list lives in its own DMA-coherent allocation: one page to start
 * with, doubled when more entries are needed, and freed with the size it
 * was allocated with.  Buffers are chunks, largest first: when a size
 * fails, what was already allocated is kept and the next order down is
 * tried, so fragmentation costs size gradually instead of all or nothing.
 *
 * The host never reads or writes a buffer, so it needs neither coherent
 * memory nor CMA: chunks are pages of the page allocator, mapped for the
 * device.  dma_alloc_coherent() would serve them from the CMA area first,
 * which the devices that need physically contiguous memory (cameras,
 * codecs, audio) depend on; a Raspberry Pi 5 lost its audio that way.  A
 * device whose streaming mappings may be bounced through swiotlb (a DMA
 * mask below the memory, an encrypted guest, an untrusted port) gets
 * coherent memory instead: a bounced buffer is not the memory the
 * controller uses, and would drain the bounce pool.
 * Behind an IOMMU that merges pages one IOVA-contiguous buffer is tried
 * first; never without one, where dma_alloc_noncontiguous() cannot do
 * better and warns above the largest page order.
 *
 * Nothing here knows whether a controller uses the memory: callers free
 * only what the controller cannot access (ctrl.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "internal.h"

/*
 * Every allocation for the HMB is optional and never wakes the OOM
 * killer, whatever its order.  Outside reclaim it tries as hard as
 * Linux's GFP_KERNEL, compaction included (__GFP_RETRY_MAYFAIL: the
 * drive gets no less than nvme-pci would get from the same memory); in
 * reclaim it only takes what comes easily (__GFP_NORETRY).
 */
static gfp_t nvme_hmb_gfp(const struct nvme_hmb_alloc_ctx *ax)
{
	return GFP_KERNEL | __GFP_NOWARN |
	       (ax->light ? __GFP_NORETRY : __GFP_RETRY_MAYFAIL);
}

/* Count an allocation attempt; true when the test seam fails it. */
static bool nvme_hmb_seam_fails(struct nvme_hmb_alloc_ctx *ax, u64 size)
{
	unsigned int nth = ax->nth++;

	return ax->hook && ax->hook->fail && ax->hook->fail(ax->hook->priv,
							     nth, size);
}

/* The test's stand-in for the DMA API, if it set one. */
static const struct nvme_hmb_alloc_hook *
nvme_hmb_fake(const struct nvme_hmb_alloc_hook *hook)
{
	return hook && hook->alloc ? hook : NULL;
}

/*
 * True when pages mapped for @dev reach it as they are: no swiotlb
 * bouncing, whatever the address of the page.
 */
static bool nvme_hmb_direct_pages(struct device *dev)
{
	return dma_max_mapping_size(dev) == SIZE_MAX &&
	       !dma_addressing_limited(dev);
}

/*
 * One chunk of zeroed pages on the device's node, mapped for the device.
 * Never above the largest block of the page allocator: larger requests
 * fail here, and the caller goes on with smaller chunks.  A chunk that
 * is not a power of two takes the whole block it is in, as with
 * dma_alloc_coherent(), and the block goes back whole: freed page by
 * page it would sit in the per-CPU lists, be handed out again one page
 * at a time, and leave no block of that order for the next HMB.
 * GFP_KERNEL is never highmem: the pages have an address.
 */
static void *nvme_hmb_page_alloc(struct nvme_hmb_alloc_ctx *ax, u64 size,
				 dma_addr_t *dma)
{
	unsigned int order = get_order(size);
	struct page *page;

	if (size > (u64)PAGE_SIZE * MAX_ORDER_NR_PAGES)
		return NULL;
	page = alloc_pages_node(dev_to_node(ax->dev),
				nvme_hmb_gfp(ax) | __GFP_ZERO, order);
	if (!page)
		return NULL;
	*dma = dma_map_page(ax->dev, page, 0, size, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(ax->dev, *dma)) {
		__free_pages(page, order);
		return NULL;
	}
	return page_address(page);
}

static void *nvme_hmb_dma_alloc(struct nvme_hmb_alloc_ctx *ax,
				struct nvme_hmb_buf *buf, u64 size, bool list,
				dma_addr_t *dma)
{
	void *cookie;

	if (size > SIZE_MAX || nvme_hmb_seam_fails(ax, size))
		return NULL;
	if (buf->fake)
		return buf->fake->alloc(buf->fake->priv, size, list, dma);
	if (nvme_hmb_fault(list ? NVME_HMB_SITE_LIST : NVME_HMB_SITE_CHUNK))
		return NULL;
	if (list)
		cookie = dma_alloc_coherent(ax->dev, size, dma,
					    nvme_hmb_gfp(ax));
	else if (buf->pages) /* fate: chunk-pages, both */
		cookie = nvme_hmb_page_alloc(ax, size, dma);
	else
		cookie = dma_alloc_attrs(ax->dev, size, dma, nvme_hmb_gfp(ax),
					 DMA_ATTR_NO_KERNEL_MAPPING);
	if (cookie)
		nvme_hmb_dma_account(size, 1);
	return cookie;
}

static void nvme_hmb_dma_free(struct device *dev, struct nvme_hmb_buf *buf,
			      u64 size, bool list, void *cookie, dma_addr_t dma)
{
	if (buf->fake) {
		buf->fake->free(buf->fake->priv, size, list, cookie, dma);
		return;
	}
	if (list) { /* fate: dma-free, both */
		dma_free_coherent(dev, size, cookie, dma);
	} else if (buf->pages) {
		dma_unmap_page(dev, dma, size, DMA_BIDIRECTIONAL);
		free_pages((unsigned long)cookie, get_order(size));
	} else {
		dma_free_attrs(dev, size, cookie, dma,
			       DMA_ATTR_NO_KERNEL_MAPPING);
	}
	nvme_hmb_dma_account(size, -1);
}

/*
 * A list of @n entries in place of the current one, the chunk records
 * carried over.  Only a set not yet sealed gets a new list: the list of a
 * set a controller may hold never changes (nvme_hmb_buf_derive() makes
 * the next set instead).
 */
static bool nvme_hmb_buf_entries(struct nvme_hmb_alloc_ctx *ax,
				 struct nvme_hmb_buf *buf, u32 n)
{
	struct nvme_hmb_chunk *chunks;
	dma_addr_t dma;
	void *descs;

	if (WARN_ON_ONCE(buf->sealed))
		return false;
	descs = nvme_hmb_dma_alloc(ax, buf, n * sizeof(*buf->descs), true,
				   &dma);
	if (!descs) {
		ax->failures++;
		return false;
	}
	/* Host bookkeeping; kvmalloc() does not take __GFP_NORETRY. */
	chunks = nvme_hmb_fault(NVME_HMB_SITE_CHUNKS) ? NULL :
		 kvcalloc(n, sizeof(*chunks), GFP_KERNEL);
	if (!chunks) {
		nvme_hmb_dma_free(ax->dev, buf, n * sizeof(*buf->descs), true,
				  descs, dma);
		ax->failures++;
		return false;
	}
	if (buf->descs) {
		memcpy(chunks, buf->chunks, buf->nr_chunks * sizeof(*chunks));
		kvfree(buf->chunks);
		nvme_hmb_dma_free(ax->dev, buf, buf->descs_bytes, true,
				  buf->descs, buf->descs_dma);
	}
	buf->descs = descs;
	buf->descs_dma = dma;
	buf->descs_bytes = n * sizeof(*buf->descs);
	buf->chunks = chunks;
	buf->max_chunks = n;
	return true;
}

/**
 * nvme_hmb_buf_init() - allocate the bookkeeping and the descriptor list
 * @ax: allocation context
 * @buf: the buffer set, empty on return when this fails
 * @max_descs: the most entries the list may grow to
 *
 * The list is one physically contiguous allocation.  It starts at one
 * page (256 entries, or @max_descs if fewer) and nvme_hmb_buf_grow()
 * enlarges it when memory is so fragmented that more, smaller buffers are
 * needed: the list costs what the buffers need, and under fragmentation
 * it is what the page allocator can give, not a fixed size that fails.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int nvme_hmb_buf_init(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		      u32 max_descs)
{
	u32 page_descs = PAGE_SIZE / sizeof(*buf->descs);

	memset(buf, 0, sizeof(*buf));
	if (!max_descs || max_descs > NVME_HMB_MAX_DESCS)
		return -EINVAL;
	buf->fake = nvme_hmb_fake(ax->hook);
	buf->pages = !buf->fake && nvme_hmb_direct_pages(ax->dev);
	if (!nvme_hmb_buf_entries(ax, buf, min(max_descs, page_descs))) {
		memset(buf, 0, sizeof(*buf));
		return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_init);

static bool nvme_hmb_chunk_alloc(struct nvme_hmb_alloc_ctx *ax,
				 struct nvme_hmb_buf *buf, u64 size)
{
	struct nvme_hmb_chunk *c = &buf->chunks[buf->nr_chunks];

	c->cookie = nvme_hmb_dma_alloc(ax, buf, size, false, &c->dma);
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

	if (buf->fake || size > SIZE_MAX || nvme_hmb_seam_fails(ax, size) ||
	    nvme_hmb_fault(NVME_HMB_SITE_CONTIG))
		return false;
	sgt = dma_alloc_noncontiguous(ax->dev, size, DMA_BIDIRECTIONAL,
				      nvme_hmb_gfp(ax), 0);
	if (!sgt)
		return false;
	if (sgt->nents != 1 || sg_dma_len(sgt->sgl) != size) {
		dma_free_noncontiguous(ax->dev, size, sgt, DMA_BIDIRECTIONAL);
		return false;
	}
	nvme_hmb_dma_account(size, 1);
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
 * buffer of @target.  Otherwise chunks start at plan->first_chunk, sized
 * by nvme_hmb_chunk_pick(); after a failure the size drops to
 * nvme_hmb_chunk_next() and allocation goes on, keeping what it has, the
 * list doubling when its entries run out.  Nothing is retried at a size
 * that failed: the attempts are bounded by the entries plus the sizes
 * tried plus the doublings.
 */
void nvme_hmb_buf_grow(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		       const struct nvme_hmb_host *host,
		       const struct nvme_hmb_plan *plan, u64 target)
{
	u32 max_descs = plan->max_descs;
	u64 cap = plan->first_chunk;

	if (WARN_ON_ONCE(buf->sealed))
		return;
	if (!buf->nr_chunks && host->contig && target >= plan->min_chunk) {
		if (nvme_hmb_contig_alloc(ax, buf, target))
			return;
		ax->failures++;
	}
	if (buf->sgt)
		return;

	while (buf->size < target && buf->nr_chunks < max_descs) {
		u64 want;

		/* Out of entries: a list twice as long, if it can be had. */
		if (buf->nr_chunks == buf->max_chunks &&
		    !nvme_hmb_buf_entries(ax, buf,
					  min_t(u64, max_descs,
						2ULL * buf->max_chunks)))
			break;
		want = nvme_hmb_chunk_pick(host, plan, cap, target - buf->size,
					   max_descs - buf->nr_chunks);
		if (!want)
			break;
		if (nvme_hmb_chunk_alloc(ax, buf, want))
			continue;
		ax->failures++;
		cap = nvme_hmb_chunk_next(host, want);
		if (cap < plan->min_chunk)
			break;
	}
	ax->descs_exhausted = buf->size < target &&
			      buf->nr_chunks >= min(max_descs, buf->max_chunks);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_grow);

/* Free the chunks @buf owns from the tail down to @target. */
static void nvme_hmb_buf_cut(struct device *dev, struct nvme_hmb_buf *buf,
			     u64 target)
{
	if (buf->sgt) { /* fate: trim-contig, both */
		if (buf->size > target) {
			dma_free_noncontiguous(dev, buf->sgt_size, buf->sgt,
					       DMA_BIDIRECTIONAL);
			nvme_hmb_dma_account(buf->sgt_size, -1);
			buf->sgt = NULL; /* fate: contig-freed */
			buf->sgt_size = 0;
			memset(&buf->chunks[0], 0, sizeof(buf->chunks[0]));
			buf->nr_chunks = 0;
			buf->size = 0;
		}
		return;
	}
	while (buf->nr_chunks > buf->borrowed && buf->size > target) {
		struct nvme_hmb_chunk *c = &buf->chunks[--buf->nr_chunks];

		nvme_hmb_dma_free(dev, buf, c->size, false, c->cookie, c->dma);
		buf->size -= c->size; /* fate: chunk-freed */
		memset(c, 0, sizeof(*c));
	}
}

/**
 * nvme_hmb_buf_trim() - free buffers from the tail down to @target
 * @dev: the DMA device
 * @buf: the buffer set, not sealed: no controller holds it
 * @target: most bytes to keep
 *
 * Whole buffers only, smallest (last) first.  A single IOVA-contiguous
 * buffer cannot be cut and goes whole when it exceeds @target: callers
 * replace it rather than trim it (ctrl.c).
 *
 * Return: the bytes kept.
 */
u64 nvme_hmb_buf_trim(struct device *dev, struct nvme_hmb_buf *buf,
		      u64 target)
{
	if (!WARN_ON_ONCE(buf->sealed || buf->borrowed))
		nvme_hmb_buf_cut(dev, buf, target);
	return buf->size;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_trim);

/**
 * nvme_hmb_buf_free() - free everything it owns; safe to call again
 * @dev: the DMA device
 * @buf: the buffer set; no controller may hold it
 *
 * The chunks it borrowed from the set it was derived from stay that set's.
 * Every pointer is cleared as it is freed, so a second call (an error path
 * followed by teardown) frees nothing twice.
 */
void nvme_hmb_buf_free(struct device *dev, struct nvme_hmb_buf *buf)
{
	if (buf->chunks)
		nvme_hmb_buf_cut(dev, buf, 0);
	if (buf->descs)
		nvme_hmb_dma_free(dev, buf, buf->descs_bytes, true, buf->descs,
				  buf->descs_dma);
	kvfree(buf->chunks);
	memset(buf, 0, sizeof(*buf));
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_free);

/**
 * nvme_hmb_buf_write_descs() - seal @buf: write its descriptor list
 * @dev: the DMA device
 * @buf: the buffer set, about to be given to a controller; the
 *	 controller holds no list of it
 *
 * From here on @buf is sealed: a controller may hold it, and neither its
 * list nor its chunks change again.  A sealed set given again (a fresh
 * enable of the same set) keeps the list as it was written.
 *
 * Return: HSIZE, the sum of the entries' BSIZE, in memory page units.
 */
u32 nvme_hmb_buf_write_descs(struct device *dev, struct nvme_hmb_buf *buf)
{
	u64 pages = 0;
	u32 i;

	for (i = 0; i < buf->nr_chunks; i++)
		pages += buf->chunks[i].size >> NVME_HMB_PAGE_SHIFT;
	if (buf->sealed)
		return pages;
	for (i = 0; i < buf->nr_chunks; i++) {
		buf->descs[i].addr = cpu_to_le64(buf->chunks[i].dma);
		buf->descs[i].size =
			cpu_to_le32(buf->chunks[i].size >> NVME_HMB_PAGE_SHIFT);
		buf->descs[i].rsvd = 0;
	}
	for (; i < buf->max_chunks; i++)
		memset(&buf->descs[i], 0, sizeof(buf->descs[i]));
	buf->sealed = true; /* fate: list-sealed */
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_write_descs);

/**
 * nvme_hmb_buf_derive() - the next set, beside one a controller may hold
 * @ax: allocation context
 * @next: the new set, empty on return when this fails
 * @from: the set held; it is not changed
 * @entries: the length of @next's list, at least @from's buffers
 *
 * @next gets a list of its own of @entries, and names every
 * chunk of @from, borrowed: nvme_hmb_buf_grow() may add to it while the
 * controller keeps @from.  Freeing @next frees only what it added; once
 * the controller let go of @from, nvme_hmb_buf_retire() hands the
 * borrowed chunks over.  An IOVA-contiguous buffer cannot be added to.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int nvme_hmb_buf_derive(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *next,
			const struct nvme_hmb_buf *from, u32 entries)
{
	memset(next, 0, sizeof(*next));
	if (WARN_ON_ONCE(from->sgt || !entries || entries < from->nr_chunks ||
			 entries > NVME_HMB_MAX_DESCS))
		return -EINVAL;
	next->fake = from->fake;
	next->pages = from->pages;
	if (!nvme_hmb_buf_entries(ax, next, entries)) {
		memset(next, 0, sizeof(*next));
		return -ENOMEM;
	}
	memcpy(next->chunks, from->chunks,
	       from->nr_chunks * sizeof(*next->chunks));
	next->nr_chunks = from->nr_chunks;
	next->borrowed = from->nr_chunks;
	next->size = from->size;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_derive);

/**
 * nvme_hmb_buf_retire() - free a set the controller let go of
 * @dev: the DMA device
 * @old: the set; no controller holds it any more
 * @next: the set derived from it, which takes over the chunks it names
 *
 * What @next borrowed becomes its own; the rest of @old (its list, its
 * records, chunks @next does not name) is freed.
 */
void nvme_hmb_buf_retire(struct device *dev, struct nvme_hmb_buf *old,
			 struct nvme_hmb_buf *next)
{
	if (WARN_ON_ONCE(next->borrowed > old->nr_chunks))
		return;
	/* Never freed below: the chunks next names. */
	old->borrowed = next->borrowed;
	nvme_hmb_buf_free(dev, old); /* fate: retire-free */
	next->borrowed = 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_retire);

/**
 * nvme_hmb_buf_thaw() - make a set the controller let go of changeable
 * @buf: the set; no controller holds it any more
 *
 * It becomes a new set: its list is written again before it is given,
 * and it is never returned (MR=1) as the set the controller had.
 */
void nvme_hmb_buf_thaw(struct nvme_hmb_buf *buf)
{
	buf->sealed = false;
	buf->returnable = false; /* fate: thaw */
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_buf_thaw);
