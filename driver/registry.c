// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: the registry of attached controllers, and the walks over it
 * around system sleep.
 *
 * The list changes under nvme_hmb_ctrls_lock; the shrinker walks it under
 * RCU only, since reclaim may run while the mutex is held by an allocating
 * attach.  Calls go one way: main.c (attach, detach) and pm.c (the PM
 * notifier) call in here; this file calls the per-controller code of
 * ctrl.c and sysfs.c, never back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/string.h>

#include "internal.h"

struct list_head nvme_hmb_ctrls = LIST_HEAD_INIT(nvme_hmb_ctrls);
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_ctrls);
static DEFINE_MUTEX(nvme_hmb_ctrls_lock);
/* One sleep or wake walk at a time: they share the controllers' pm_node. */
static DEFINE_MUTEX(nvme_hmb_walk_lock);

/*
 * From the PM notifier's prepare to its post: under nvme_hmb_ctrls_lock.
 * A controller attached meanwhile (hot-plug, a rebind, a backend loaded
 * late) starts asleep and is set up on wake-up, like the others.
 */
static bool nvme_hmb_asleep;

static struct nvme_hmb_ctrl *nvme_hmb_find_locked(const char *name)
{
	struct nvme_hmb_ctrl *ctrl;

	list_for_each_entry(ctrl, &nvme_hmb_ctrls, node)
		if (!strcmp(ctrl->name, name))
			return ctrl;
	return NULL;
}

/**
 * nvme_hmb_registry_add() - make a new controller known
 * @ctrl: the controller, seen by no one yet
 *
 * Creates its sysfs directory and puts it on the list.
 *
 * Return: 0, -EEXIST for a name already attached, or the error of the
 * sysfs directory.
 */
int nvme_hmb_registry_add(struct nvme_hmb_ctrl *ctrl)
{
	int ret;

	mutex_lock(&nvme_hmb_ctrls_lock);
	if (nvme_hmb_asleep) {
		/* Not yet seen by anyone: no lock needed. */
		ctrl->sleeping = true;
		if (ctrl->reason == NVME_HMB_R_NONE)
			ctrl->reason = NVME_HMB_R_SLEEP;
	}
	if (nvme_hmb_find_locked(ctrl->name)) {
		ret = -EEXIST;
	} else {
		ret = nvme_hmb_kobj_add(ctrl);
		if (!ret)
			list_add_tail_rcu(&ctrl->node, &nvme_hmb_ctrls);
	}
	mutex_unlock(&nvme_hmb_ctrls_lock);
	return ret;
}

/**
 * nvme_hmb_registry_del() - forget a controller
 * @ctrl: the controller, detached
 *
 * The name stays taken until its sysfs directory is gone.  After return no
 * walk sees it, RCU ones included.
 */
void nvme_hmb_registry_del(struct nvme_hmb_ctrl *ctrl)
{
	nvme_hmb_kobj_del(ctrl);
	mutex_lock(&nvme_hmb_ctrls_lock);
	list_del_rcu(&ctrl->node);
	mutex_unlock(&nvme_hmb_ctrls_lock);
	synchronize_rcu();
}

/*
 * The controllers attached now, each with a reference, on @walk; the
 * registry lock is not held while they are taken to sleep or woken, so
 * that an attach or detach (a device's unbind, under its device lock)
 * never waits for another controller's commands or reset.  A controller
 * detached meanwhile is gone to nvme_hmb_sleep() and nvme_hmb_wake(),
 * which then do nothing.  The caller holds nvme_hmb_walk_lock.
 */
static void nvme_hmb_walk_begin(struct list_head *walk, bool asleep)
{
	struct nvme_hmb_ctrl *ctrl;

	mutex_lock(&nvme_hmb_ctrls_lock);
	nvme_hmb_asleep = asleep;
	list_for_each_entry(ctrl, &nvme_hmb_ctrls, node) {
		kobject_get(&ctrl->kobj);
		list_add_tail(&ctrl->pm_node, walk);
	}
	mutex_unlock(&nvme_hmb_ctrls_lock);
}

static struct nvme_hmb_ctrl *nvme_hmb_walk_next(struct list_head *walk)
{
	struct nvme_hmb_ctrl *ctrl;

	ctrl = list_first_entry_or_null(walk, struct nvme_hmb_ctrl, pm_node);
	if (ctrl)
		list_del_init(&ctrl->pm_node);
	return ctrl;
}

/**
 * nvme_hmb_sleep_all() - take every HMB away before system sleep
 * @hibernate: for hibernation: free the memory too
 *
 * A controller attached from here until nvme_hmb_wake_all() starts asleep.
 */
void nvme_hmb_sleep_all(bool hibernate)
{
	struct nvme_hmb_ctrl *ctrl;
	LIST_HEAD(walk);

	mutex_lock(&nvme_hmb_walk_lock);
	nvme_hmb_walk_begin(&walk, true);
	while ((ctrl = nvme_hmb_walk_next(&walk))) {
		nvme_hmb_sleep(ctrl, hibernate);
		nvme_hmb_kobj_put(ctrl);
	}
	mutex_unlock(&nvme_hmb_walk_lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_sleep_all);

/**
 * nvme_hmb_wake_all() - give every HMB back after system sleep
 * @fresh: after hibernation or restore: never MR
 */
void nvme_hmb_wake_all(bool fresh)
{
	struct nvme_hmb_ctrl *ctrl;
	LIST_HEAD(walk);

	mutex_lock(&nvme_hmb_walk_lock);
	nvme_hmb_walk_begin(&walk, false);
	while ((ctrl = nvme_hmb_walk_next(&walk))) {
		nvme_hmb_wake(ctrl, fresh);
		nvme_hmb_kobj_put(ctrl);
	}
	mutex_unlock(&nvme_hmb_walk_lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_wake_all);
