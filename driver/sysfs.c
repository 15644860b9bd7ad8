// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: /sys/kernel/nvme_hmb/<name>/, one directory per controller.
 * This file only translates between text and the engine's calls.
 *
 * Reads take no lock: each value is a snapshot and may be one update old.
 * Writes go through nvme_hmb_set_limit(), which waits for the command in
 * flight (bounded by the backend's admin timeout) and returns -EBUSY while
 * the HMB is suspended or failed.  The directory is removed before the
 * controller is freed; a file held open after that returns -ENODEV.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "internal.h"

static struct kobject *nvme_hmb_root;

/**
 * nvme_hmb_parse_uint() - a number from user space, strictly
 * @buf: what was written: @count bytes
 * @count: its length
 * @min: the smallest value taken
 * @max: the largest value taken
 * @val: the value, written only on success
 *
 * Decimal digits and an optional trailing newline: a sysfs write or a
 * module parameter.  kstrtouint() would also take a leading '+', and it
 * stops at a NUL byte: "5\0garbage" would be read as 5, so @buf is checked
 * to hold no NUL in its @count bytes.  The kernel's own uint parameters
 * take any base ("010" would be 8).
 *
 * Return: 0, -EINVAL for anything but such a number, -ERANGE outside
 * @min..@max.
 */
int nvme_hmb_parse_uint(const char *buf, size_t count, unsigned int min,
			unsigned int max, unsigned int *val)
{
	unsigned int v;
	int ret;

	if (!count || strnlen(buf, count) != count || buf[0] == '+')
		return -EINVAL;
	ret = kstrtouint(buf, 10, &v);
	if (ret)
		return ret;
	if (v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

#define to_ctrl(k)	container_of(k, struct nvme_hmb_ctrl, kobj)

#define NVME_HMB_ID_ATTR(field, expr)					\
static ssize_t field##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	const struct nvme_hmb_id *id = &to_ctrl(kobj)->id;		\
									\
	return sysfs_emit(buf, "%llu\n", (u64)(expr));			\
}									\
static struct kobj_attribute field##_attr = __ATTR_RO(field)

NVME_HMB_ID_ATTR(hmpre_kib, (u64)id->hmpre * 4);
NVME_HMB_ID_ATTR(hmmin_kib, (u64)id->hmmin * 4);
NVME_HMB_ID_ATTR(hmminds_kib, (u64)id->hmminds * 4);
NVME_HMB_ID_ATTR(hmmaxd, id->hmmaxd);

static ssize_t limit_mib_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_ctrl(kobj)->limit) >> 20);
}

static ssize_t limit_mib_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	unsigned int mib;
	int ret;

	ret = nvme_hmb_parse_uint(buf, count, 0, NVME_HMB_LIMIT_MAX_MIB, &mib);
	if (ret)
		return ret;
	ret = nvme_hmb_set_limit(to_ctrl(kobj), (u64)mib << 20);
	return ret ? ret : count;
}

static struct kobj_attribute limit_mib_attr = __ATTR_RW(limit_mib);

static ssize_t size_kib_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", nvme_hmb_size(to_ctrl(kobj)) >> 10);
}

static struct kobj_attribute size_kib_attr = __ATTR_RO(size_kib);

static ssize_t held_kib_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", nvme_hmb_held(to_ctrl(kobj)) >> 10);
}

static struct kobj_attribute held_kib_attr = __ATTR_RO(held_kib);

static ssize_t nr_descs_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", nvme_hmb_nr_descs(to_ctrl(kobj)));
}

static struct kobj_attribute nr_descs_attr = __ATTR_RO(nr_descs);

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  nvme_hmb_state_str(nvme_hmb_state(to_ctrl(kobj))));
}

static struct kobj_attribute state_attr = __ATTR_RO(state);

static ssize_t reason_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  nvme_hmb_reason_token(nvme_hmb_reason(to_ctrl(kobj))));
}

static struct kobj_attribute reason_attr = __ATTR_RO(reason);

/*
 * The error of the Set Features behind reason set-failed or
 * disable-failed: a negative errno (by name, as %pe prints it) or the
 * NVMe status in hex; 0 for any other reason.
 */
static ssize_t last_error_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct nvme_hmb_ctrl *ctrl = to_ctrl(kobj);
	enum nvme_hmb_reason reason = nvme_hmb_reason(ctrl);
	int status = READ_ONCE(ctrl->last_status);

	if ((reason != NVME_HMB_R_SET_FAILED &&
	     reason != NVME_HMB_R_DISABLE_FAILED) || !status)
		return sysfs_emit(buf, "0\n");
	if (status < 0)
		return sysfs_emit(buf, "%pe\n", ERR_PTR(status));
	return sysfs_emit(buf, "0x%04x\n", status);
}

static struct kobj_attribute last_error_attr = __ATTR_RO(last_error);

/*
 * stats/: one counter per file, as DAMON's sysfs interface does, so that a
 * reader takes the one value it wants without parsing the others.  A named
 * group is a directory of the controller's own kobject: @kobj is the
 * controller's.
 */
/* Every counter of struct nvme_hmb_stats is a u64. */
static ssize_t nvme_hmb_stat_show(struct kobject *kobj, char *buf, size_t off)
{
	const struct nvme_hmb_stats *s = &to_ctrl(kobj)->stats;

	return sysfs_emit(buf, "%llu\n",
			  READ_ONCE(*(const u64 *)((const u8 *)s + off)));
}

#define NVME_HMB_STAT_ATTR(field)					\
static ssize_t field##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return nvme_hmb_stat_show(kobj, buf,				\
				  offsetof(struct nvme_hmb_stats, field)); \
}									\
static struct kobj_attribute stat_##field##_attr = {			\
	.attr = { .name = __stringify(field), .mode = 0444 },		\
	.show = field##_show,						\
}

NVME_HMB_STAT_ATTR(enables);
NVME_HMB_STAT_ATTR(disables);
NVME_HMB_STAT_ATTR(resizes);
NVME_HMB_STAT_ATTR(alloc_failures);
NVME_HMB_STAT_ATTR(cmd_failures);
NVME_HMB_STAT_ATTR(mr_enables);
NVME_HMB_STAT_ATTR(mr_refusals);
NVME_HMB_STAT_ATTR(resets);
NVME_HMB_STAT_ATTR(verify_mismatches);
NVME_HMB_STAT_ATTR(setup_us);
NVME_HMB_STAT_ATTR(reclaims);
NVME_HMB_STAT_ATTR(pages_reclaimed);
NVME_HMB_STAT_ATTR(regrows);
NVME_HMB_STAT_ATTR(suspends);
NVME_HMB_STAT_ATTR(resumes);
NVME_HMB_STAT_ATTR(sleeps_kept);

static struct attribute *nvme_hmb_stats_attrs[] = {
	&stat_enables_attr.attr,
	&stat_disables_attr.attr,
	&stat_resizes_attr.attr,
	&stat_alloc_failures_attr.attr,
	&stat_cmd_failures_attr.attr,
	&stat_mr_enables_attr.attr,
	&stat_mr_refusals_attr.attr,
	&stat_resets_attr.attr,
	&stat_verify_mismatches_attr.attr,
	&stat_setup_us_attr.attr,
	&stat_reclaims_attr.attr,
	&stat_pages_reclaimed_attr.attr,
	&stat_regrows_attr.attr,
	&stat_suspends_attr.attr,
	&stat_resumes_attr.attr,
	&stat_sleeps_kept_attr.attr,
	NULL
};

static ssize_t reclaim_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_ctrl(kobj)->reclaim));
}

static ssize_t reclaim_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	unsigned int on;
	int ret;

	ret = nvme_hmb_parse_uint(buf, count, 0, 1, &on);
	if (ret)
		return ret;
	ret = nvme_hmb_set_reclaim(to_ctrl(kobj), on, -1);
	return ret ? ret : count;
}

static struct kobj_attribute reclaim_attr = __ATTR_RW(reclaim);

static ssize_t reclaim_floor_mib_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  READ_ONCE(to_ctrl(kobj)->reclaim_floor) >> 20);
}

static ssize_t reclaim_floor_mib_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	unsigned int mib;
	int ret;

	ret = nvme_hmb_parse_uint(buf, count, 0, NVME_HMB_LIMIT_MAX_MIB, &mib);
	if (ret)
		return ret;
	ret = nvme_hmb_set_reclaim(to_ctrl(kobj), -1, (s64)mib << 20);
	return ret ? ret : count;
}

static struct kobj_attribute reclaim_floor_mib_attr =
	__ATTR_RW(reclaim_floor_mib);

static struct attribute *nvme_hmb_ctrl_attrs[] = {
	&hmpre_kib_attr.attr,
	&hmmin_kib_attr.attr,
	&hmminds_kib_attr.attr,
	&hmmaxd_attr.attr,
	&limit_mib_attr.attr,
	&size_kib_attr.attr,
	&held_kib_attr.attr,
	&nr_descs_attr.attr,
	&state_attr.attr,
	&reason_attr.attr,
	&last_error_attr.attr,
	&reclaim_attr.attr,
	&reclaim_floor_mib_attr.attr,
	NULL
};

static const struct attribute_group nvme_hmb_ctrl_group = {
	.attrs	= nvme_hmb_ctrl_attrs,
};

static const struct attribute_group nvme_hmb_stats_group = {
	.name	= "stats",
	.attrs	= nvme_hmb_stats_attrs,
};

static const struct attribute_group *nvme_hmb_ctrl_groups[] = {
	&nvme_hmb_ctrl_group,
	&nvme_hmb_stats_group,
	NULL
};

static void nvme_hmb_ctrl_release(struct kobject *kobj)
{
	struct nvme_hmb_ctrl *ctrl = to_ctrl(kobj);

	kfree(ctrl->attr_buf);
	kfree(ctrl);
}

static const struct kobj_type nvme_hmb_ctrl_ktype = {
	.release	= nvme_hmb_ctrl_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= nvme_hmb_ctrl_groups,
};

void nvme_hmb_kobj_init(struct nvme_hmb_ctrl *ctrl)
{
	kobject_init(&ctrl->kobj, &nvme_hmb_ctrl_ktype);
}

/*
 * The directory, and in it "device", a link to the controller's device:
 * a controller's name may be reused once it is gone (a hot-unplug), the
 * link says which device a directory is about.
 */
int nvme_hmb_kobj_add(struct nvme_hmb_ctrl *ctrl)
{
	int ret;

	if (nvme_hmb_fault(NVME_HMB_SITE_KOBJ))
		return -ENOMEM;
	ret = kobject_add(&ctrl->kobj, nvme_hmb_root, "%s", ctrl->name);
	if (ret)
		return ret;
	ret = sysfs_create_link(&ctrl->kobj, &ctrl->port->dev->kobj, "device");
	if (ret)
		kobject_del(&ctrl->kobj);
	return ret;
}

void nvme_hmb_kobj_del(struct nvme_hmb_ctrl *ctrl)
{
	sysfs_remove_link(&ctrl->kobj, "device");
	kobject_del(&ctrl->kobj);
}

void nvme_hmb_kobj_put(struct nvme_hmb_ctrl *ctrl)
{
	kobject_put(&ctrl->kobj);
}

int nvme_hmb_sysfs_init(void)
{
	if (nvme_hmb_fault(NVME_HMB_SITE_SYSFS))
		return -ENOMEM;
	nvme_hmb_root = kobject_create_and_add("nvme_hmb", kernel_kobj);
	return nvme_hmb_root ? 0 : -ENOMEM;
}

void nvme_hmb_sysfs_exit(void)
{
	kobject_put(nvme_hmb_root);
}
