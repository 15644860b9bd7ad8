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
 * Severity: normally reclaim goes down to HMMIN (or the controller's
 * reclaim floor).  When available memory is below 1/32 of RAM it may go
 * below HMMIN, which means off: an HMB below HMMIN is of no use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
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

VISIBLE_IF_KUNIT unsigned long nvme_hmb_count(struct shrinker *s,
					      struct shrink_control *sc)
{
	bool severe = nvme_hmb_pressure_severe();
	struct nvme_hmb_ctrl *ctrl;
	unsigned long pages = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ctrl, &nvme_hmb_ctrls, node)
		pages += nvme_hmb_reclaimable(ctrl, severe) >> PAGE_SHIFT;
	rcu_read_unlock();
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_count);

VISIBLE_IF_KUNIT unsigned long nvme_hmb_scan(struct shrinker *s,
					     struct shrink_control *sc)
{
	bool severe = nvme_hmb_pressure_severe();
	unsigned long left = sc->nr_to_scan, queued = 0;
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
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_scan);

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
