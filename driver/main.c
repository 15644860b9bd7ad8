// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: module init and exit, module parameters, and the attach and
 * detach of controllers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "internal.h"

/* ---------------------------------------------------------------------
 * Module parameters
 */

#define NVME_HMB_LIMIT_AUTO	UINT_MAX

/*
 * The limit a newly attached controller starts with.  "auto" is nvme-pci's
 * default cap (max_host_mem_size_mb, 128 MiB), raised to 1/64 of RAM up
 * to 256 MiB on machines with more than 8 GiB: out of the box no drive
 * gets less than Linux gives it.  Small machines are protected by
 * reclaim, not by a smaller limit.
 */
#define NVME_HMB_LIMIT_LINUX_MIB	128
unsigned int nvme_hmb_default_limit_mib = NVME_HMB_LIMIT_AUTO;

/* A parameter's number: decimal only, as a sysfs write (sysfs.c). */
static int nvme_hmb_param_dec(const char *val, unsigned int min,
			      unsigned int max, unsigned int *out)
{
	if (!val)
		return -EINVAL;
	return nvme_hmb_parse_uint(val, strlen(val), min, max, out);
}

static int nvme_hmb_limit_param_set(const char *val,
				    const struct kernel_param *kp)
{
	unsigned int mib;
	int ret;

	if (sysfs_streq(val, "auto")) {
		*(unsigned int *)kp->arg = NVME_HMB_LIMIT_AUTO;
		return 0;
	}
	ret = nvme_hmb_param_dec(val, 0, NVME_HMB_LIMIT_MAX_MIB, &mib);
	if (ret)
		return ret;
	*(unsigned int *)kp->arg = mib;
	return 0;
}

static int nvme_hmb_limit_param_get(char *buffer,
				    const struct kernel_param *kp)
{
	unsigned int mib = *(unsigned int *)kp->arg;

	if (mib == NVME_HMB_LIMIT_AUTO)
		return sysfs_emit(buffer, "auto\n");
	return sysfs_emit(buffer, "%u\n", mib);
}

static const struct kernel_param_ops nvme_hmb_limit_param_ops = {
	.set = nvme_hmb_limit_param_set,
	.get = nvme_hmb_limit_param_get,
};

module_param_cb(default_limit_mib, &nvme_hmb_limit_param_ops,
		&nvme_hmb_default_limit_mib, 0644);
MODULE_PARM_DESC(default_limit_mib,
		 "HMB limit in MiB for newly attached controllers, 0 (off) to 1048576, or auto: nvme-pci's 128, or 1/64 of RAM up to 256 if more (default: auto)");

unsigned int nvme_hmb_max_chunk_kib;

static int nvme_hmb_chunk_param_set(const char *val,
				    const struct kernel_param *kp)
{
	return nvme_hmb_param_dec(val, 0, NVME_HMB_LIMIT_MAX_MIB << 10, kp->arg);
}

static const struct kernel_param_ops nvme_hmb_chunk_param_ops = {
	.set = nvme_hmb_chunk_param_set,
	.get = param_get_uint,
};

module_param_cb(max_chunk_kib, &nvme_hmb_chunk_param_ops,
		&nvme_hmb_max_chunk_kib, 0644);
MODULE_PARM_DESC(max_chunk_kib,
		 "Largest single buffer in KiB, never above the page allocator's largest block without an IOMMU; 0: no other cap (default: 0)");

unsigned int nvme_hmb_regrow_quiet_sec = 30;

static int nvme_hmb_quiet_param_set(const char *val,
				    const struct kernel_param *kp)
{
	return nvme_hmb_param_dec(val, 1, 3600, kp->arg);
}

static const struct kernel_param_ops nvme_hmb_quiet_param_ops = {
	.set = nvme_hmb_quiet_param_set,
	.get = param_get_uint,
};

module_param_cb(regrow_quiet_sec, &nvme_hmb_quiet_param_ops,
		&nvme_hmb_regrow_quiet_sec, 0644);
MODULE_PARM_DESC(regrow_quiet_sec,
		 "Seconds without memory pressure before a reclaimed HMB grows back, 1-3600 (default 30)");

bool nvme_hmb_reclaim_plenty;
module_param_named(reclaim_plenty, nvme_hmb_reclaim_plenty, bool, 0644);
MODULE_PARM_DESC(reclaim_plenty,
		 "Give HMB back at every shrinker call, also with plenty of memory free (drop_caches, proactive reclaim), not only when memory is short (default: N)");

/* The limit, in bytes, that a controller attached now starts with. */
static u64 nvme_hmb_initial_limit(void)
{
	unsigned int mib = READ_ONCE(nvme_hmb_default_limit_mib);
	u64 auto_mib;

	if (mib != NVME_HMB_LIMIT_AUTO)
		return (u64)mib << 20;
	auto_mib = ((u64)totalram_pages() << PAGE_SHIFT >> 20) / 64;
	return clamp_t(u64, auto_mib, NVME_HMB_LIMIT_LINUX_MIB, 256) << 20;
}

/* ---------------------------------------------------------------------
 * Attach and detach
 */

/*
 * Reclaim work, WQ_MEM_RECLAIM: it runs under memory pressure.  Regrow
 * allocates and may wait in the page allocator, so it has a queue of its
 * own: a regrow never holds up reclaim, on this controller or another.
 */
struct workqueue_struct *nvme_hmb_wq;
struct workqueue_struct *nvme_hmb_regrow_wq;

static void nvme_hmb_describe(struct nvme_hmb_ctrl *ctrl)
{
	const struct nvme_hmb_caps *caps = &ctrl->caps;
	struct nvme_hmb_sz a, b, c, d;

	if (!caps->pref)
		return;
	/* Info level is the one line of what it got (nvme_hmb_report()). */
	dev_dbg(ctrl->port->dev,
		"HMB asked: preferred %s, minimum %s, buffers of at least %s, at most %u descriptors%s%s; limit %s\n",
		nvme_hmb_sz_str(&a, caps->pref),
		nvme_hmb_sz_str(&b, caps->min),
		nvme_hmb_sz_str(&c, caps->min_chunk),
		caps->max_descs, caps->max_descs ? "" : " (no limit)",
		caps->hmbr ? ", HMBR (TP4104)" : "",
		nvme_hmb_sz_str(&d, ctrl->limit));
	if (caps->min_above_pref)
		dev_warn(ctrl->port->dev,
			 "HMB: Identify says HMMIN (%u pages) above HMPRE (%u pages); taking HMMIN as preferred\n",
			 ctrl->id.hmmin, ctrl->id.hmpre);
}

/**
 * nvme_hmb_attach() - hand a controller's HMB over to the engine
 * @port: the backend's view of the controller; must outlive the attach
 *
 * Reads the HMB fields of Identify Controller and creates the controller's
 * sysfs directory.  Does not allocate or enable anything: nvme_hmb_start()
 * does, once the backend is ready.
 *
 * Return: the engine's controller, or an ERR_PTR(): -EINVAL for a port
 * without name, devices or ops, -EEXIST for a name already attached,
 * -ENOMEM.
 */
struct nvme_hmb_ctrl *nvme_hmb_attach(struct nvme_hmb_port *port)
{
	struct nvme_hmb_ctrl *ctrl;
	int ret;

	if (!port || !port->name[0] || !port->dev || !port->dma_dev ||
	    !port->ops || !port->ops->identify || !port->ops->set_features ||
	    !port->ops->get_features)
		return ERR_PTR(-EINVAL);

	ctrl = nvme_hmb_fault(NVME_HMB_SITE_CTRL) ? NULL :
	       kzalloc(sizeof(*ctrl), GFP_KERNEL);
	if (!ctrl)
		return ERR_PTR(-ENOMEM);
	nvme_hmb_ctrl_init(ctrl);
	ctrl->port = port;
	strscpy(ctrl->name, port->name, sizeof(ctrl->name));
	ctrl->limit = nvme_hmb_limit_for(port, nvme_hmb_initial_limit());
	nvme_hmb_kobj_init(ctrl);
	if (!nvme_hmb_fault(NVME_HMB_SITE_ATTR_BUF))
		ctrl->attr_buf = kmalloc(NVME_HMB_ATTR_LEN, GFP_KERNEL);
	if (!ctrl->attr_buf) {
		nvme_hmb_kobj_put(ctrl);
		return ERR_PTR(-ENOMEM);
	}

	ret = port->ops->identify(port, &ctrl->id);
	if (ret) {
		ctrl->reason = NVME_HMB_R_IDENTIFY_FAILED;
		dev_warn(port->dev, "HMB: Identify Controller failed: %pe; leaving the HMB alone\n",
			 ERR_PTR(ret < 0 ? ret : -EIO));
	} else {
		nvme_hmb_caps_from_id(&ctrl->id, &ctrl->caps);
		nvme_hmb_describe(ctrl);
	}

	ret = nvme_hmb_registry_add(ctrl);
	if (ret) {
		nvme_hmb_kobj_put(ctrl);
		return ERR_PTR(ret);
	}
	return ctrl;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_attach, NVME_HMB_NS);

/**
 * nvme_hmb_detach() - take a controller back from the engine
 * @ctrl: the controller
 *
 * Disables the HMB and frees it.  When the controller does not confirm the
 * disable, the memory is deliberately leaked: the controller may still
 * write to it.  After return the engine never touches the port again; the
 * controller's sysfs files, if still open, return -ENODEV.
 */
void nvme_hmb_detach(struct nvme_hmb_ctrl *ctrl)
{
	struct nvme_hmb_sz a;
	u64 size;

	/* No shrinker walk queues work for it after the grace period. */
	WRITE_ONCE(ctrl->dying, true);
	synchronize_rcu();
	nvme_hmb_ctrl_stop_work(ctrl);

	mutex_lock(&ctrl->lock);
	size = ctrl->buf.size;
	if (ctrl->state != NVME_HMB_OFF && !nvme_hmb_teardown_locked(ctrl)) {
		dev_err(ctrl->port->dev,
			"HMB: controller did not confirm the disable; leaking %s rather than freeing memory it may still use\n",
			nvme_hmb_sz_str(&a, size));
		nvme_hmb_forget_locked(ctrl); /* fate: detach-leak */
	}
	ctrl->gone = true;
	ctrl->reason = NVME_HMB_R_GONE;
	ctrl->port = NULL;
	mutex_unlock(&ctrl->lock);

	nvme_hmb_registry_del(ctrl);
	nvme_hmb_kobj_put(ctrl);
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_detach, NVME_HMB_NS);

/* ---------------------------------------------------------------------
 * Init and exit
 */

static int __init nvme_hmb_init(void)
{
	int ret;

	ret = nvme_hmb_debugfs_init();
	if (ret)
		return ret;
	ret = -ENOMEM;
	if (!nvme_hmb_fault(NVME_HMB_SITE_WQ))
		nvme_hmb_wq = alloc_workqueue("nvme_hmb",
					      WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!nvme_hmb_wq)
		goto err_debugfs;
	if (!nvme_hmb_fault(NVME_HMB_SITE_REGROW_WQ))
		nvme_hmb_regrow_wq = alloc_workqueue("nvme_hmb_regrow",
						     WQ_UNBOUND, 0);
	if (!nvme_hmb_regrow_wq)
		goto err_wq;
	ret = nvme_hmb_sysfs_init();
	if (ret)
		goto err_regrow_wq;
	ret = nvme_hmb_pm_init();
	if (ret)
		goto err_sysfs;
	/* Register with the outside world last. */
	ret = nvme_hmb_shrinker_init();
	if (ret)
		goto err_pm;
	/* Nothing at info level: a controller's HMB gets a line of its own. */
	pr_debug("loaded; default limit %llu MiB\n",
		 nvme_hmb_initial_limit() >> 20);
	return 0;

err_pm:
	nvme_hmb_pm_exit();
err_sysfs:
	nvme_hmb_sysfs_exit();
err_regrow_wq:
	destroy_workqueue(nvme_hmb_regrow_wq);
err_wq:
	destroy_workqueue(nvme_hmb_wq);
err_debugfs:
	nvme_hmb_debugfs_exit();
	return ret;
}

static void __exit nvme_hmb_exit(void)
{
	nvme_hmb_shrinker_exit();
	nvme_hmb_pm_exit();
	nvme_hmb_sysfs_exit();
	destroy_workqueue(nvme_hmb_regrow_wq);
	destroy_workqueue(nvme_hmb_wq);
	nvme_hmb_debugfs_exit();
}

module_init(nvme_hmb_init);
module_exit(nvme_hmb_exit);

MODULE_DESCRIPTION("NVMe Host Memory Buffer manager");
MODULE_AUTHOR("nvme-hmb developers <maintainers@users.noreply.a-seed-3aadf4a1.example>");
MODULE_LICENSE("GPL");
MODULE_VERSION(NVME_HMB_VERSION);
