// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: giving memory back under pressure.
 *
 * The shrinker counts and scans in pages (PAGE_SIZE units) of HMB that
 * could be given back.  It never waits for a controller: scan_objects only
 * records how much each controller should give back and queues that
 * controller's reclaim work on a WQ_MEM_RECLAIM workqueue, which disables
 * the HMB, frees whole buffers from the tail and enables the rest.  It
 * returns the pages so queued (they are freed within a command's time),
 * or SHRINK_STOP when it cannot act: reclaim off, nothing above the floor,
 * system sleep in progress.
 *
 * Deadlock hazards, and why they cannot bite:
 *  - reclaim that needs I/O on the drive whose admin queue the work waits
 *    on: the shrinker itself never waits; the work runs under
 *    memalloc_noio_save(), so nothing it allocates waits for I/O, and the
 *    workqueue has a rescuer, so it runs even when no worker can be made;
 *  - allocation inside the shrink path: the Get Features buffer is
 *    preallocated per controller; trimming frees, it does not allocate;
 *  - locks: the shrinker takes no mutex (the controller list is walked
 *    under RCU), so an attach that allocates with the registry mutex held
 *    cannot deadlock against it.
 *
 * When: only when memory is short.  Not every shrinker call means that:
 * drop_caches (echo 2 or 3 > /proc/sys/vm/drop_caches) and proactive
 * reclaim (memory.reclaim of the root cgroup) call every shrinker on a
 * machine with gigabytes free, and an HMB given back then costs the drive
 * its map cache until regrow_quiet_sec has passed, for nothing.  The
 * signal is the one the page allocator itself acts on, the watermarks:
 * memory is short when, on some node, the free pages of the zones the
 * reclaim is for (those up to gfp_zone() of its gfp_mask) are below the
 * sum of those zones' high watermarks plus their lowmem reserves for that
 * zone, free CMA pages not counted (the HMB is never taken from CMA, and
 * an unmovable allocation cannot use them).  kswapd is woken when an
 * allocation finds every zone it may use below its low watermark, and
 * reclaims until one is above its high watermark again; direct reclaim
 * runs below the min one.  In both, memory is short by this measure, so
 * real pressure takes the HMB back, before the OOM killer.  After
 * drop_caches the free pages are normally far above the high
 * watermarks, and the HMB stays.
 *
 * The other signals were weighed and not taken: the gfp_mask does not
 * tell drop_caches (GFP_KERNEL) from kswapd (GFP_KERNEL) or from direct
 * reclaim; PF_MEMALLOC is set by proactive reclaim as well; PSI memory
 * "some" lags by seconds and stays raised after the pressure is gone; and
 * MemAvailable counts page cache as available, which is what reclaim is
 * about to take, not what is free.  Whoever wants the HMB back at every
 * shrinker call all the same (proactive reclaim that is to take it) sets
 * the module parameter reclaim_plenty.
 *
 * Severity: normally reclaim goes down to HMMIN (or the controller's
 * reclaim floor).  When available memory is below 1/32 of RAM it may go
 * below HMMIN, which means off: an HMB below HMMIN is of no use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/shrinker.h>

#include "internal.h"

unsigned long nvme_hmb_last_pressure;
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_last_pressure);
static struct shrinker *nvme_hmb_shrinker;

static bool nvme_hmb_pressure_severe(void)
{
	return nvme_hmb_fault_severe() ||
	       si_mem_available() < (long)(totalram_pages() / 32);
}

/**
 * nvme_hmb_zones_short() - whether a node's zones are short of memory
 * @zones: the node's managed zones that the reclaim is for
 * @nr: how many
 *
 * Pure, for KUnit: the caller reads the zones.
 *
 * Return: true when their free pages (free CMA pages not counted) are
 * below the sum of their high watermarks and lowmem reserves; false for
 * a node without such a zone.
 */
VISIBLE_IF_KUNIT bool nvme_hmb_zones_short(const struct nvme_hmb_zone_mem *zones,
					   unsigned int nr)
{
	unsigned long free = 0, need = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		free += zones[i].free - min(zones[i].free_cma, zones[i].free);
		need += zones[i].high + zones[i].reserve;
	}
	return free < need;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_zones_short);

/*
 * Whether memory is short for a reclaim asking with @gfp_mask, on any
 * node (the shrinker is not NUMA-aware: it is asked for all of them).
 * The zone counters are read without a lock, as the page allocator's
 * fast path reads them.
 */
static bool nvme_hmb_memory_short(gfp_t gfp_mask)
{
	struct nvme_hmb_zone_mem zones[MAX_NR_ZONES];
	enum zone_type top = gfp_zone(gfp_mask);
	int nid;

	if (READ_ONCE(nvme_hmb_reclaim_plenty) || nvme_hmb_fault_severe())
		return true;
	for_each_online_node(nid) {
		pg_data_t *pgdat = NODE_DATA(nid);
		unsigned int nr = 0;
		int i;

		for (i = 0; i <= top; i++) {
			struct zone *z = &pgdat->node_zones[i];

			if (!managed_zone(z))
				continue;
			zones[nr].free = zone_page_state(z, NR_FREE_PAGES);
			zones[nr].free_cma = zone_page_state(z,
							     NR_FREE_CMA_PAGES);
			zones[nr].high = high_wmark_pages(z);
			zones[nr].reserve = max(z->lowmem_reserve[top], 0L);
			nr++;
		}
		if (nvme_hmb_zones_short(zones, nr))
			return true;
	}
	return false;
}

/* The pages the controllers could give back at @severe. */
VISIBLE_IF_KUNIT unsigned long nvme_hmb_count_pages(bool severe)
{
	struct nvme_hmb_ctrl *ctrl;
	unsigned long pages = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ctrl, &nvme_hmb_ctrls, node)
		pages += nvme_hmb_reclaimable(ctrl, severe) >> PAGE_SHIFT;
	rcu_read_unlock();
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_count_pages);

static unsigned long nvme_hmb_count(struct shrinker *s,
				    struct shrink_control *sc)
{
	if (!nvme_hmb_memory_short(sc->gfp_mask))
		return 0;
	return nvme_hmb_count_pages(nvme_hmb_pressure_severe());
}

/*
 * Queue the reclaim of up to @nr_to_scan pages, at @severe; the time of
 * the pressure is recorded, which holds regrows back.
 */
VISIBLE_IF_KUNIT unsigned long nvme_hmb_scan_pages(unsigned long nr_to_scan,
						   bool severe)
{
	unsigned long left = nr_to_scan, queued = 0;
	struct nvme_hmb_ctrl *ctrl;

	WRITE_ONCE(nvme_hmb_last_pressure, jiffies);
	rcu_read_lock();
	list_for_each_entry_rcu(ctrl, &nvme_hmb_ctrls, node) {
		unsigned long take;

		if (!left)
			break;
		take = min_t(u64, nvme_hmb_reclaimable(ctrl, severe) >>
				  PAGE_SHIFT, left);
		if (!take || READ_ONCE(ctrl->dying))
			continue;
		atomic64_add((u64)take << PAGE_SHIFT, &ctrl->reclaim_pending);
		if (severe) /* fate: shrink-severe, both */
			WRITE_ONCE(ctrl->reclaim_severe, true);
		mod_delayed_work(nvme_hmb_wq, &ctrl->reclaim_work, 0);
		queued += take;
		left -= take;
	}
	rcu_read_unlock();
	return queued ?: SHRINK_STOP;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_scan_pages);

/*
 * Asked again, not only at count: memory may have come back in between,
 * and the shrinker's debugfs scan file calls this without a count.
 */
static unsigned long nvme_hmb_scan(struct shrinker *s,
				   struct shrink_control *sc)
{
	if (!nvme_hmb_memory_short(sc->gfp_mask))
		return SHRINK_STOP;
	return nvme_hmb_scan_pages(sc->nr_to_scan, nvme_hmb_pressure_severe());
}

int nvme_hmb_shrinker_init(void)
{
	if (nvme_hmb_fault(NVME_HMB_SITE_SHRINKER))
		return -ENOMEM;
	/* Rebuilding an HMB costs the drive its map cache: seek cost x4. */
	nvme_hmb_shrinker = nvme_hmb_shrinker_create(nvme_hmb_count,
						     nvme_hmb_scan,
						     4 * DEFAULT_SEEKS,
						     "nvme_hmb");
	return nvme_hmb_shrinker ? 0 : -ENOMEM;
}

void nvme_hmb_shrinker_exit(void)
{
	nvme_hmb_shrinker_destroy(nvme_hmb_shrinker);
}
