// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb mock: tools for `make bench` (scripts/guest/bench), in debugfs
 * under nvme_hmb_mock/.
 *
 * fragment: fragment the page allocator's free memory so that no free
 * block larger than a given size is left, the way a long-running machine's
 * memory looks, and hold it that way.  Write a size in KiB (a power of
 * two, 4 to half the largest buddy block); 0 gives everything back.
 * Read: the size, what is held, and the largest block that could still be
 * allocated after the last pass.
 *
 * How: take every free block above the target order, largest first, with
 * allocations that never reclaim, compact, wake kswapd or dip into the
 * reserves (so they take only what is free and cannot cause an OOM kill),
 * split it into pages and give all of them back but the first of every
 * naturally aligned run of twice the target size.  That one pinned,
 * unmovable kernel page keeps its run from ever merging above the target
 * again, and compaction cannot move it.  Repeat until no allocation above
 * the target succeeds.  The cost is one page in 2^(order + 1) of the free
 * memory (1/32 of it at 64 KiB).  Memory that was in use during the pass
 * (page cache, user pages) is not covered; compaction may still build
 * larger blocks out of it later.  ZONE_DMA gets the same treatment, so that
 * /proc/buddyinfo shows no larger block in any zone.
 *
 * memset_bench: the yardstick for the HMB setup time.  Write a size in
 * MiB; that much memory is vmalloc()ed, memset() once under ktime_get(),
 * and freed.  Read: the nanoseconds the last memset took.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "mock.h"

/* Never reclaim, compact, wake kswapd or use the reserves; never warn. */
#define FRAG_GFP	(__GFP_NOWARN | __GFP_NORETRY | __GFP_NOMEMALLOC)

/* Largest memset_bench, MiB. */
#define MEMSET_MAX_MIB	1024

static DEFINE_MUTEX(frag_lock);		/* protects everything below */
static LIST_HEAD(frag_held);		/* pinned pages, on page->lru */
static unsigned long frag_nr_held;
static unsigned int frag_kib;		/* target, 0 when none */
static int frag_largest = -1;		/* order, after the last pass */
static u64 memset_ns;

static unsigned int frag_top_order(void)
{
	return ilog2(MAX_ORDER_NR_PAGES);
}

static void frag_release_locked(void)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &frag_held, lru) {
		list_del(&page->lru);
		__free_page(page);
		cond_resched();
	}
	frag_nr_held = 0;
	frag_kib = 0;
	frag_largest = -1;
}

/* Keep the first page of every 2^(order + 1) pages of @page; free the rest. */
static void frag_split_locked(struct page *page, unsigned int alloc_order,
			      unsigned int order)
{
	unsigned long i, nr = 1UL << alloc_order, span = 2UL << order;

	split_page(page, alloc_order);
	for (i = 0; i < nr; i++) {
		if (i % span) {
			__free_page(page + i);
			continue;
		}
		list_add(&page[i].lru, &frag_held);
		frag_nr_held++;
	}
}

/* One zone class (@gfp): take blocks above @order until none is left. */
static void frag_pass_locked(gfp_t gfp, unsigned int order)
{
	unsigned int o, top = frag_top_order();
	struct page *page;
	bool progress;

	do {
		progress = false;
		for (o = top; o > order; o--) {
			while ((page = alloc_pages(gfp, o))) {
				frag_split_locked(page, o, order);
				progress = true;
				cond_resched();
			}
		}
	} while (progress);
}

/* The largest order one allocation can get now, or -1. */
static int frag_probe_largest(gfp_t gfp)
{
	struct page *page;
	int o;

	for (o = frag_top_order(); o >= 0; o--) {
		page = alloc_pages(gfp, o);
		if (page) {
			__free_pages(page, o);
			return o;
		}
	}
	return -1;
}

static int frag_set_locked(unsigned int kib)
{
	unsigned int order;

	if (!kib) {
		frag_release_locked();
		return 0;
	}
	if (!is_power_of_2(kib) || kib < PAGE_SIZE / SZ_1K)
		return -EINVAL;
	order = ilog2(kib / (PAGE_SIZE / SZ_1K));
	if (order >= frag_top_order())
		return -ERANGE;
	/* A new, larger target starts over; the same or a smaller one adds. */
	if (frag_kib && kib > frag_kib)
		frag_release_locked();
	frag_kib = frag_kib ? min(frag_kib, kib) : kib;
	order = ilog2(frag_kib / (PAGE_SIZE / SZ_1K));
	frag_pass_locked(FRAG_GFP, order);
	if (IS_ENABLED(CONFIG_ZONE_DMA))
		frag_pass_locked(FRAG_GFP | __GFP_DMA, order);
	frag_largest = frag_probe_largest(FRAG_GFP);
	pr_info("fragment: no free block above %u KiB; holding %lu pages (%lu KiB)\n",
		frag_kib, frag_nr_held, frag_nr_held * (PAGE_SIZE / SZ_1K));
	return 0;
}

static ssize_t frag_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	unsigned int kib;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 10, &kib);
	if (ret)
		return ret;
	mutex_lock(&frag_lock);
	ret = frag_set_locked(kib);
	mutex_unlock(&frag_lock);
	return ret ? ret : count;
}

static int frag_show(struct seq_file *m, void *unused)
{
	mutex_lock(&frag_lock);
	seq_printf(m, "target_kib %u\n", frag_kib);
	seq_printf(m, "held_pages %lu\n", frag_nr_held);
	seq_printf(m, "held_kib %lu\n", frag_nr_held * (PAGE_SIZE / SZ_1K));
	if (frag_largest < 0)
		seq_puts(m, "largest_free_kib -1\n");
	else
		seq_printf(m, "largest_free_kib %lu\n",
			   (PAGE_SIZE / SZ_1K) << frag_largest);
	mutex_unlock(&frag_lock);
	return 0;
}

static int frag_open(struct inode *inode, struct file *file)
{
	return single_open(file, frag_show, inode->i_private);
}

static const struct file_operations frag_fops = {
	.owner		= THIS_MODULE,
	.open		= frag_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= frag_write,
};

static int memset_bench_get(void *data, u64 *val)
{
	mutex_lock(&frag_lock);
	*val = memset_ns;
	mutex_unlock(&frag_lock);
	return 0;
}

static int memset_bench_set(void *data, u64 val)
{
	size_t size;
	ktime_t t0;
	void *p;

	if (!val || val > MEMSET_MAX_MIB)
		return -ERANGE;
	size = (size_t)val << 20;
	p = vmalloc(size);
	if (!p)
		return -ENOMEM;
	mutex_lock(&frag_lock);
	t0 = ktime_get();
	memset(p, 0x5a, size);
	memset_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	mutex_unlock(&frag_lock);
	vfree(p);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(memset_bench_fops, memset_bench_get,
			 memset_bench_set, "%llu\n");

/**
 * nvme_hmb_mock_bench_init() - add the bench's tools to the mock's debugfs
 * @dir: the nvme_hmb_mock debugfs directory
 */
void nvme_hmb_mock_bench_init(struct dentry *dir)
{
	debugfs_create_file("fragment", 0600, dir, NULL, &frag_fops);
	debugfs_create_file_unsafe("memset_bench", 0600, dir, NULL,
				   &memset_bench_fops);
}

/**
 * nvme_hmb_mock_bench_exit() - give back every page the fragmenter holds
 *
 * Call after the debugfs files are gone.
 */
void nvme_hmb_mock_bench_exit(void)
{
	mutex_lock(&frag_lock);
	frag_release_locked();
	mutex_unlock(&frag_lock);
}
