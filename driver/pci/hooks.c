// SPDX-License-Identifier: GPL-2.0
/*
 * nvme_hmb_pci's test hooks, built only into the test build
 * (NVME_HMB_TESTS=1, as scripts/build-modules builds for make test, demo
 * and bench); the module `make` and DKMS build has none of them
 * (hooks.h's stubs stand in):
 *
 *   force=			module parameter: controllers show other
 *				Identify HMB fields (taints the kernel)
 *   nvme_hmb_pci/report_reset	debugfs, 0200: a reset report, late
 *   nvme_hmb_pci/hold_reset_ms	debugfs, 0600: every reset report waits
 *   nvme_hmb_pci/miss_init	debugfs, 0600: the kretprobe misses
 *   nvme_hmb_pci/refuse		debugfs, 0200: a controller not to run
 *
 * What they do to a controller goes through the ops pci.c hands over
 * (struct hmb_pci_hook_ops), under pci.c's own locks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "nvme_hmb.h"
#include "hooks.h"

#define HMB_PCI_MAX_FORCE	8
#define HMB_PCI_HOLD_MAX_MS	60000

/* One force= entry: the Identify fields a controller is made to show. */
struct hmb_pci_force {
	char name[16];
	struct nvme_hmb_id id;
	unsigned int given;		/* HMB_PCI_F_* of the fields given */
};

#define HMB_PCI_F_HMPRE		BIT(0)
#define HMB_PCI_F_HMMIN		BIT(1)
#define HMB_PCI_F_HMMINDS	BIT(2)
#define HMB_PCI_F_HMMAXD	BIT(3)

static const struct hmb_pci_hook_ops *hmb_pci_ops;
static DEFINE_MUTEX(hmb_pci_hooks_lock);	/* hmb_pci_refused */
static struct dentry *hmb_pci_debugfs;

/* debugfs hold_reset_ms: how long a reset report waits. */
static u32 hmb_pci_hold_reset_ms;

/*
 * debugfs miss_init: how many calls of nvme_init_ctrl_finish() the
 * kretprobe lets go by, as when all its instances are busy; under
 * hmb_pci_evt_lock once set.
 */
static u32 hmb_pci_miss_init;

/* debugfs refuse: a controller not to run; under hmb_pci_hooks_lock. */
static char hmb_pci_refused[sizeof(((struct nvme_hmb_port *)0)->name)];

static struct hmb_pci_force hmb_pci_forces[HMB_PCI_MAX_FORCE];
static unsigned int hmb_pci_nr_forces;

/* ---------------------------------------------------------------------
 * Module parameter: force=
 */

static char force[256];
module_param_string(force, force, sizeof(force), 0400);
MODULE_PARM_DESC(force,
		 "TEST ONLY, taints the kernel: make controllers show these Identify HMB fields, e.g. nvme0:hmpre=4096,hmmin=1024[,hmminds=N,hmmaxd=N][;nvme1:...] (4 KiB units, decimal)");

/* A decimal number, digits only (no sign, no space, no newline). */
static int __init hmb_pci_parse_u32(const char *s, u32 max, u32 *val)
{
	const char *p;

	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (!isdigit(*p))
			return -EINVAL;
	if (kstrtou32(s, 10, val))
		return -EINVAL;
	return *val > max ? -EINVAL : 0;
}

/* "nvme" followed by decimal digits, shorter than the port's name. */
static bool __init hmb_pci_valid_name(const char *name)
{
	const char *p;

	if (strncmp(name, "nvme", 4) || !name[4] ||
	    strlen(name) >= sizeof(((struct nvme_hmb_port *)0)->name))
		return false;
	for (p = name + 4; *p; p++)
		if (!isdigit(*p))
			return false;
	return true;
}

static int __init hmb_pci_parse_entry(char *ent, struct hmb_pci_force *f)
{
	static const struct {
		const char *key;
		unsigned int flag;
		u32 max;
	} keys[] = {
		{ "hmpre",	HMB_PCI_F_HMPRE,	U32_MAX },
		{ "hmmin",	HMB_PCI_F_HMMIN,	U32_MAX },
		{ "hmminds",	HMB_PCI_F_HMMINDS,	U32_MAX },
		{ "hmmaxd",	HMB_PCI_F_HMMAXD,	U16_MAX },
	};
	char *name, *kv, *val;
	unsigned int i;
	u32 v;

	name = strsep(&ent, ":");
	if (!ent || !hmb_pci_valid_name(name)) {
		pr_err("force: '%s' is not 'nvmeN:key=value,...'\n", name);
		return -EINVAL;
	}
	strscpy(f->name, name, sizeof(f->name));
	while ((kv = strsep(&ent, ",")) != NULL) {
		val = kv;
		kv = strsep(&val, "=");
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strcmp(kv, keys[i].key))
				break;
		if (i == ARRAY_SIZE(keys) || !val) {
			pr_err("force: %s: '%s' is not one of hmpre=, hmmin=, hmminds=, hmmaxd=\n",
			       f->name, kv);
			return -EINVAL;
		}
		if (f->given & keys[i].flag) {
			pr_err("force: %s: %s given twice\n", f->name, kv);
			return -EINVAL;
		}
		if (hmb_pci_parse_u32(val, keys[i].max, &v)) {
			pr_err("force: %s: %s='%s' is not a decimal number 0-%u\n",
			       f->name, kv, val, keys[i].max);
			return -EINVAL;
		}
		f->given |= keys[i].flag;
		switch (keys[i].flag) {
		case HMB_PCI_F_HMPRE:
			f->id.hmpre = v;
			break;
		case HMB_PCI_F_HMMIN:
			f->id.hmmin = v;
			break;
		case HMB_PCI_F_HMMINDS:
			f->id.hmminds = v;
			break;
		default:
			f->id.hmmaxd = v;
			break;
		}
	}
	return 0;
}

static int __init hmb_pci_parse_force(void)
{
	char *copy, *s, *ent;
	unsigned int i;
	int ret = 0;

	if (!force[0])
		return 0;
	copy = kstrdup(force, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	s = copy;
	while ((ent = strsep(&s, ";")) != NULL) {
		struct hmb_pci_force *f;

		if (hmb_pci_nr_forces == HMB_PCI_MAX_FORCE) {
			pr_err("force: more than %u controllers\n",
			       HMB_PCI_MAX_FORCE);
			ret = -EINVAL;
			break;
		}
		f = &hmb_pci_forces[hmb_pci_nr_forces];
		ret = hmb_pci_parse_entry(ent, f);
		if (ret)
			break;
		for (i = 0; i < hmb_pci_nr_forces; i++) {
			if (!strcmp(hmb_pci_forces[i].name, f->name)) {
				pr_err("force: %s given twice\n", f->name);
				ret = -EINVAL;
			}
		}
		if (ret)
			break;
		hmb_pci_nr_forces++;
	}
	kfree(copy);
	if (ret) {
		memset(hmb_pci_forces, 0, sizeof(hmb_pci_forces));
		hmb_pci_nr_forces = 0;
	}
	return ret;
}

static const struct hmb_pci_force *hmb_pci_find_force(const char *name)
{
	unsigned int i;

	for (i = 0; i < hmb_pci_nr_forces; i++)
		if (!strcmp(hmb_pci_forces[i].name, name))
			return &hmb_pci_forces[i];
	return NULL;
}

/**
 * hmb_pci_hooks_identify() - apply force= to what Identify said
 * @dev: the controller's device, for the message
 * @name: its name (nvme0)
 * @id: the fields nvme-core cached, changed as force= says
 */
void hmb_pci_hooks_identify(struct device *dev, const char *name,
			    struct nvme_hmb_id *id)
{
	const struct hmb_pci_force *f = hmb_pci_find_force(name);

	if (!f)
		return;
	dev_warn(dev,
		 "HMB: force= (TEST ONLY): Identify says HMPRE %u HMMIN %u HMMINDS %u HMMAXD %u; using HMPRE %u HMMIN %u HMMINDS %u HMMAXD %u\n",
		 id->hmpre, id->hmmin, id->hmminds, id->hmmaxd,
		 f->given & HMB_PCI_F_HMPRE ? f->id.hmpre : id->hmpre,
		 f->given & HMB_PCI_F_HMMIN ? f->id.hmmin : id->hmmin,
		 f->given & HMB_PCI_F_HMMINDS ? f->id.hmminds : id->hmminds,
		 f->given & HMB_PCI_F_HMMAXD ? f->id.hmmaxd : id->hmmaxd);
	if (f->given & HMB_PCI_F_HMPRE)
		id->hmpre = f->id.hmpre;
	if (f->given & HMB_PCI_F_HMMIN)
		id->hmmin = f->id.hmmin;
	if (f->given & HMB_PCI_F_HMMINDS)
		id->hmminds = f->id.hmminds;
	if (f->given & HMB_PCI_F_HMMAXD)
		id->hmmaxd = f->id.hmmaxd;
}

/**
 * hmb_pci_hooks_refused() - whether debugfs refuse names a controller
 * @dev: the controller's device (nvme0)
 *
 * Return: true if it is not to be attached.
 */
bool hmb_pci_hooks_refused(struct device *dev)
{
	bool refused;

	mutex_lock(&hmb_pci_hooks_lock);
	refused = hmb_pci_refused[0] && !strcmp(hmb_pci_refused, dev_name(dev));
	mutex_unlock(&hmb_pci_hooks_lock);
	if (refused)
		dev_info(dev, "HMB: refused (debugfs nvme_hmb_pci/refuse); nvme-pci keeps the HMB\n");
	return refused;
}

/**
 * hmb_pci_hooks_hold_reset() - hold a reset report back (hold_reset_ms)
 * @dev: the controller's device, for the message
 *
 * The report then comes late, whatever ran meanwhile.
 */
void hmb_pci_hooks_hold_reset(struct device *dev)
{
	u32 hold = min(READ_ONCE(hmb_pci_hold_reset_ms), HMB_PCI_HOLD_MAX_MS);

	if (!hold)
		return;
	dev_dbg(dev, "HMB: reset report held for %u ms (debugfs hold_reset_ms)\n",
		hold);
	msleep(hold);
}

/**
 * hmb_pci_hooks_miss_init() - whether the kretprobe misses this call
 *
 * Under hmb_pci_evt_lock.  Return: true while miss_init counts down; the
 * reset's report then takes nvme-pci's HMB over again.
 */
bool hmb_pci_hooks_miss_init(void)
{
	if (!hmb_pci_miss_init)
		return false;
	hmb_pci_miss_init--;
	return true;
}

/*
 * A controller's name written to a debugfs file of ours, into @buf of
 * @size bytes.  Return: the name, trimmed, or an ERR_PTR.
 */
static char *hmb_pci_user_name(const char __user *ubuf, size_t count,
			       char *buf, size_t size)
{
	if (!count || count >= size)
		return ERR_PTR(-EINVAL);
	if (copy_from_user(buf, ubuf, count))
		return ERR_PTR(-EFAULT);
	buf[count] = '\0';
	return strim(buf);
}

/*
 * debugfs nvme_hmb_pci/report_reset (0200): writing a controller's
 * name reports a reset of it as the kprobe does.  With no reset behind
 * it, the report is a late one: the engine finds its buffer still enabled,
 * as last sent, and must leave it as it is.
 */
static ssize_t hmb_pci_report_reset_write(struct file *file,
					  const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	char buf[sizeof(hmb_pci_refused)];
	char *name;
	int ret;

	name = hmb_pci_user_name(ubuf, count, buf, sizeof(buf));
	if (IS_ERR(name))
		return PTR_ERR(name);
	ret = hmb_pci_ops->report_reset(name);
	return ret ? ret : count;
}

static const struct file_operations hmb_pci_report_reset_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= hmb_pci_report_reset_write,
	.llseek	= noop_llseek,
};

/*
 * debugfs nvme_hmb_pci/refuse (0200): writing a controller's name
 * refuses it, as a controller that fails its checks is refused: if it is
 * attached it is detached and its HMB handed back to nvme-pci, and it is
 * not attached again.  Writing an empty line lifts the refusal.
 */
static ssize_t hmb_pci_refuse_write(struct file *file,
				    const char __user *ubuf, size_t count,
				    loff_t *ppos)
{
	char buf[sizeof(hmb_pci_refused)];
	char *name;

	name = hmb_pci_user_name(ubuf, count, buf, sizeof(buf));
	if (IS_ERR(name))
		return PTR_ERR(name);

	mutex_lock(&hmb_pci_hooks_lock);
	strscpy(hmb_pci_refused, name, sizeof(hmb_pci_refused));
	mutex_unlock(&hmb_pci_hooks_lock);
	if (*name)
		hmb_pci_ops->release(name);
	else
		hmb_pci_ops->rescan();
	return count;
}

static const struct file_operations hmb_pci_refuse_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= hmb_pci_refuse_write,
	.llseek	= noop_llseek,
};

/**
 * hmb_pci_hooks_init() - parse force= and add the debugfs files
 * @ops: what the hooks may ask of nvme_hmb_pci; kept until exit
 *
 * Return: 0, or -EINVAL for a force= that does not parse.
 */
int __init hmb_pci_hooks_init(const struct hmb_pci_hook_ops *ops)
{
	int ret;

	ret = hmb_pci_parse_force();
	if (ret)
		return ret;
	if (hmb_pci_nr_forces) {
		pr_warn("force=%s: TEST ONLY, controllers will show Identify values they do not have; tainting the kernel\n",
			force);
		add_taint(TAINT_USER, LOCKDEP_STILL_OK);
	}

	hmb_pci_ops = ops;
	hmb_pci_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("report_reset", 0200, hmb_pci_debugfs, NULL,
			    &hmb_pci_report_reset_fops);
	debugfs_create_u32("hold_reset_ms", 0600, hmb_pci_debugfs,
			   &hmb_pci_hold_reset_ms);
	debugfs_create_u32("miss_init", 0600, hmb_pci_debugfs,
			   &hmb_pci_miss_init);
	debugfs_create_file("refuse", 0200, hmb_pci_debugfs, NULL,
			    &hmb_pci_refuse_fops);
	return 0;
}

/* Before anything the ops reach goes away. */
void hmb_pci_hooks_exit(void)
{
	debugfs_remove(hmb_pci_debugfs);
}
