// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: system sleep.
 *
 * The PM notifier runs before tasks are frozen and devices suspended, and
 * after they are resumed and thawed, so admin commands work at both ends.
 *
 *  - suspend (S3, s2idle): disable the HMB and keep the memory; on resume
 *    return it with MR=1 when it is exactly what the controller last had.
 *    If nvme-pci reset the controller on the way, the backend reports the
 *    reset; the buffer is returned all the same (a reset leaves the host's
 *    memory untouched).  Unless the controller stays powered in a
 *    non-operational power state and has promised (TP4104 HMNAR) not to
 *    touch the HMB there: then it stays enabled (nvme_hmb_sleep()).
 *  - hibernation: disable and free before the image is made, so that the
 *    image is smaller and holds no buffer a controller took.  A buffer
 *    whose disable failed is kept (state failed) and goes into the image;
 *    it is never returned with MR=1.  After the image is written, or
 *    restored, set up fresh (MR=0): the restore kernel's controller state
 *    means nothing to us.
 *
 * APST and other autonomous power-state changes are not acted on: the HMB
 * stays enabled across them, as the specification allows, and a
 * controller with HMNAR keeps off it in the non-operational ones.
 *
 * The notifier walks the registry (registry.c); main.c only registers it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/notifier.h>
#include <linux/suspend.h>

#include "internal.h"

static int nvme_hmb_pm_notify(struct notifier_block *nb, unsigned long action,
			      void *unused)
{
	switch (action) {
	case PM_SUSPEND_PREPARE:
		nvme_hmb_sleep_all(false); /* fate: pm-suspend */
		break;
	case PM_HIBERNATION_PREPARE:
		nvme_hmb_sleep_all(true); /* fate: pm-hibernate */
		break;
	case PM_POST_SUSPEND:
		nvme_hmb_wake_all(false); /* fate: pm-resume */
		break;
	case PM_POST_HIBERNATION:
	case PM_POST_RESTORE:
		nvme_hmb_wake_all(true); /* fate: pm-restore */
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block nvme_hmb_pm_nb = {
	.notifier_call = nvme_hmb_pm_notify,
};

int nvme_hmb_pm_init(void)
{
	return register_pm_notifier(&nvme_hmb_pm_nb);
}

void nvme_hmb_pm_exit(void)
{
	unregister_pm_notifier(&nvme_hmb_pm_nb);
}
