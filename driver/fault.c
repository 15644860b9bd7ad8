// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: fault injection at the engine's allocation sites, and the
 * count of DMA memory it holds.
 *
 * Every place where the engine asks the kernel for memory calls
 * nvme_hmb_fault() with its site first, so a test can make that request
 * fail and watch the engine cope.  The sites share one fault attribute of
 * the kernel's fault-injection framework (Documentation/fault-injection/),
 * in debugfs:
 *
 *   /sys/kernel/debug/nvme_hmb/fail_alloc/	probability, interval, times,
 *						space, verbose, task-filter
 *   /sys/kernel/debug/nvme_hmb/fault_sites	"site hits" per site
 *   /sys/kernel/debug/nvme_hmb/pressure_severe	Y: every memory pressure
 *						is taken as severe
 *   /sys/kernel/debug/nvme_hmb/dma_held	"allocs bytes" held now
 *
 * With probability 100, times 1 and space K, exactly the K-th request
 * from then on fails (the first when K is 0 or 1), in whatever task it is
 * made: a sysfs write, the reclaim or regrow work, a PM notifier.  The
 * module parameter fail_alloc takes the same four numbers as the boot
 * parameters of the framework ("interval,probability,space,times"), so
 * that the requests of module init can fail too.  Failing the Nth request
 * of one task only is what /proc/self/fail-nth does; it covers these
 * sites as well, since should_fail() honours it.
 *
 * This file is built only into the test build (NVME_HMB_TESTS=1, as
 * scripts/build-modules does for make test, demo and bench; Kbuild then
 * defines NVME_HMB_TEST_HOOKS): the module `make` and DKMS build has none
 * of it, and internal.h's stubs stand in.  Without
 * CONFIG_FAULT_INJECTION_DEBUG_FS (Debian's kernels) the fault injection
 * is left out of the test build too and nvme_hmb_fault() is false.  dma_held, the engine's own
 * count of what it took from the DMA API and has not given back, exists
 * whenever debugfs does: a leak shows there whatever the DMA API's own
 * debugging can see (which tracks the mapped pages of the buffers, but not
 * coherent memory allocated with DMA_ATTR_NO_KERNEL_MAPPING).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>

#include "internal.h"

static struct dentry *nvme_hmb_debugfs;

atomic64_t nvme_hmb_dma_allocs = ATOMIC64_INIT(0);
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_dma_allocs);
atomic64_t nvme_hmb_dma_bytes = ATOMIC64_INIT(0);

static int nvme_hmb_dma_held_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%lld %lld\n", (long long)atomic64_read(&nvme_hmb_dma_allocs),
		   (long long)atomic64_read(&nvme_hmb_dma_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvme_hmb_dma_held);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS

static const char * const nvme_hmb_site_names[NVME_HMB_SITE_NR] = {
	[NVME_HMB_SITE_WQ]		= "wq",
	[NVME_HMB_SITE_REGROW_WQ]	= "regrow_wq",
	[NVME_HMB_SITE_SYSFS]		= "sysfs",
	[NVME_HMB_SITE_SHRINKER]	= "shrinker",
	[NVME_HMB_SITE_CTRL]		= "ctrl",
	[NVME_HMB_SITE_ATTR_BUF]	= "attr_buf",
	[NVME_HMB_SITE_KOBJ]		= "kobj",
	[NVME_HMB_SITE_LIST]		= "list",
	[NVME_HMB_SITE_CHUNKS]		= "chunks",
	[NVME_HMB_SITE_CHUNK]		= "chunk",
	[NVME_HMB_SITE_CONTIG]		= "contig",
};

static DECLARE_FAULT_ATTR(nvme_hmb_fail_alloc);
static atomic_t nvme_hmb_site_hits[NVME_HMB_SITE_NR];

/* "interval,probability,space,times", as fail_make_request= takes */
static char nvme_hmb_fail_alloc_str[64];
module_param_string(fail_alloc, nvme_hmb_fail_alloc_str,
		    sizeof(nvme_hmb_fail_alloc_str), 0444);
MODULE_PARM_DESC(fail_alloc,
		 "Fault injection at load: interval,probability,space,times (debugfs nvme_hmb/fail_alloc afterwards)");

/**
 * nvme_hmb_fault() - whether the request at @site is to fail
 * @site: the allocation site about to ask for memory
 *
 * Return: true when the test asked for this request to fail; the caller
 * then acts as if the allocation had returned nothing.
 */
bool nvme_hmb_fault(enum nvme_hmb_site site)
{
	if (!should_fail(&nvme_hmb_fail_alloc, 1))
		return false;
	if (site < NVME_HMB_SITE_NR)
		atomic_inc(&nvme_hmb_site_hits[site]);
	return true;
}

/*
 * Severe pressure (reclaim may go below HMMIN, to off) is MemAvailable
 * below 1/32 of RAM, which a test VM reaches only close to the OOM
 * killer: pressure_severe has drop_caches stand for it.
 */
static bool nvme_hmb_severe;

bool nvme_hmb_fault_severe(void)
{
	return READ_ONCE(nvme_hmb_severe);
}

static int nvme_hmb_fault_sites_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < NVME_HMB_SITE_NR; i++)
		seq_printf(m, "%s %d\n", nvme_hmb_site_names[i],
			   atomic_read(&nvme_hmb_site_hits[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvme_hmb_fault_sites);

static int nvme_hmb_fault_init(void)
{
	struct dentry *dir;

	/* The message without a stack trace for each failure made. */
	nvme_hmb_fail_alloc.verbose = 1;
	if (nvme_hmb_fail_alloc_str[0] &&
	    !setup_fault_attr(&nvme_hmb_fail_alloc, nvme_hmb_fail_alloc_str)) {
		pr_err("fail_alloc=%s: expected interval,probability,space,times\n",
		       nvme_hmb_fail_alloc_str);
		return -EINVAL;
	}
	dir = fault_create_debugfs_attr("fail_alloc", nvme_hmb_debugfs,
					&nvme_hmb_fail_alloc);
	if (IS_ERR(dir))
		pr_warn("no debugfs for fault injection: %pe\n", dir);
	debugfs_create_file("fault_sites", 0444, nvme_hmb_debugfs, NULL,
			    &nvme_hmb_fault_sites_fops);
	debugfs_create_bool("pressure_severe", 0600, nvme_hmb_debugfs,
			    &nvme_hmb_severe);
	return 0;
}

#else

static int nvme_hmb_fault_init(void)
{
	return 0;
}

#endif /* CONFIG_FAULT_INJECTION_DEBUG_FS */

/**
 * nvme_hmb_debugfs_init() - the engine's debugfs directory
 *
 * First thing at module init, so that the requests of init can be failed.
 *
 * Return: 0, or -EINVAL for a fail_alloc parameter that does not parse.
 */
int nvme_hmb_debugfs_init(void)
{
	int ret;

	nvme_hmb_debugfs = debugfs_create_dir("nvme_hmb", NULL);
	debugfs_create_file("dma_held", 0444, nvme_hmb_debugfs, NULL,
			    &nvme_hmb_dma_held_fops);
	ret = nvme_hmb_fault_init();
	if (ret)
		debugfs_remove_recursive(nvme_hmb_debugfs);
	return ret;
}

void nvme_hmb_debugfs_exit(void)
{
	debugfs_remove_recursive(nvme_hmb_debugfs);
}
