// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb mock controllers: software NVMe controllers that ask for a Host
 * Memory Buffer and use it the way a DRAM-less controller's firmware would.
 *
 * Each mock is a platform device (for DMA) with a port attached to the
 * engine.  It validates every Set Features 0Dh as the specification
 * requires and answers with its status codes; while enabled it writes its
 * own pattern into the host's buffers and keeps checking it from a work
 * item, like a controller caching its map; on a return (MR=1) it checks
 * that the list is the one it had and the pattern survived.
 *
 * violations counts breaches of the host's side of the contract:
 *  - a buffer changed or freed while the controller owns it,
 *  - enabling while enabled,
 *  - a return (MR=1) of a different list, or of changed memory,
 *  - a malformed command (list alignment, HSIZE against the entries,
 *    HMMAXD, HMMINDS, HMMIN, reserved fields, overlapping buffers).
 * A correct engine leaves it at 0.  Malformed commands are also answered
 * with an error status and counted in rejected.
 *
 * Stricter than the specification, on purpose: HSIZE above HMPRE (or
 * HMMIN, when a drive says HMMIN > HMPRE and the engine takes HMMIN) is
 * rejected, so that an engine which over-allocates is caught; so is a
 * disable (EHM=0) that sets MR, which no host has reason to send.
 *
 * While enabled the work item also reads the descriptor list again: a
 * list changed under the controller is a violation, whatever changed it.
 *
 * Power states and TP4104: a mock whose Identify says HMBR (CTRATT bit
 * 17) accepts HMNARE (CDW11 bit 2) on an enable and then reports HMNAR
 * (bit 3 of Get Features' dword 0); to any other, bit 2 is reserved.
 * Armed, it reports HMBR but refuses HMNARE, as a controller that claims
 * more than it does.  nvme_hmb_mock_power_state() puts it in, and takes
 * it out of, the non-operational power state of a suspend in which its
 * driver keeps it powered (the path nvme_hmb_mock_sleep_firmware()
 * turns off): entering it with the HMB enabled without HMNAR is a
 * violation (host memory may be unreachable then), and with HMNAR it
 * touches nothing until it leaves, when it checks the whole buffer.
 *
 * The mock reads the host's memory through the linear map, translating the
 * DMA addresses it is given: it needs dma-direct, which its platform
 * device always has.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nvme.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "mock.h"

#define MOCK_MAX_CTRLS		16
#define MOCK_TOUCH_MS		100
#define MOCK_TOUCH_PAGES	256
#define MOCK_WORDS_PER_PAGE	(NVME_HMB_PAGE / sizeof(u64))
#define MOCK_INVALID_FIELD	(NVME_SC_INVALID_FIELD | NVME_HMB_STATUS_DNR)
#define MOCK_SEQ_ERROR		(NVME_SC_CMD_SEQ_ERROR | NVME_HMB_STATUS_DNR)
#define MOCK_NOT_SAVEABLE	(NVME_SC_FEATURE_NOT_SAVEABLE | NVME_HMB_STATUS_DNR)

struct nvme_hmb_mock {
	struct nvme_hmb_port port;
	struct platform_device *pdev;
	struct nvme_hmb_ctrl *hmb;
	struct dentry *dir;
	struct nvme_hmb_id id;

	struct mutex lock;		/* the firmware's: everything below */
	bool ehm;
	u32 hsize;
	u64 hmdla;
	u32 hmdlec;
	struct nvme_host_mem_buf_desc *list;	/* copy taken at enable */
	u64 seed;			/* pattern of the current buffer */
	u64 cursor;			/* next page the touch work checks */
	struct delayed_work touch;

	struct nvme_hmb_mock_view stats;
	unsigned int fail_set_skip;
	unsigned int fail_set_nr;
	int fail_set_status;
	bool fail_set_executed;		/* carry the failed commands out */
	unsigned int ignore_sets;	/* succeed without carrying them out */
	int fail_get_status;
	unsigned int fail_get_skip;	/* Get Features to let through first */
	unsigned int fail_get_nr;	/* ... and to fail then */

	/* Misbehaviour of real controllers, armed from debugfs */
	unsigned int late_ms;		/* the next Set Features: late */
	bool late_pending;		/* ... taken, not yet carried out */
	struct nvme_hmb_set_cmd late_cmd;
	struct delayed_work late;	/* carries it out */
	unsigned int get_lies;		/* Get Features to answer wrongly */
	unsigned int hide_ehm;		/* ... to answer EHM=0 while enabled */
	bool die_next;			/* die during the next command */
	bool dead;			/* answers no command any more */
	bool unsure;			/* the last Set Features failed: the
					 * host may not know whether the
					 * controller still uses its memory
					 */

	/* TP4104 and power states (see the top of this file) */
	bool hmnar;			/* the enabled HMB was set with HMNARE */
	bool refuse_hmnare;		/* HMBR reported, HMNARE refused */
	bool sleep_firmware;		/* READ_ONCE: suspends shut it down */
	bool nonop;			/* in a non-operational power state */

	/*
	 * Shared with another driver (as nvme-pci shares a controller with
	 * nvme_hmb_pci): that driver's buffer, as it recorded it, and
	 * whether the controller holds it now (ehm set too).  The mock
	 * never touches it: it is a record, not memory.
	 */
	bool other;
	u64 other_hmdla;		/* READ_ONCE: read by the engine's op */
	u32 other_hsize;
	u32 other_hmdlec;
};

/* Where the other driver's list stands: a record, never dereferenced. */
#define MOCK_OTHER_HMDLA	0x4d0c4000ULL

/*
 * The firmware's own work runs here: WQ_MEM_RECLAIM, since the engine's
 * reclaim work (itself WQ_MEM_RECLAIM) cancels it when disabling.
 */
static struct workqueue_struct *mock_wq;
static struct dentry *mock_debugfs;
static struct nvme_hmb_mock *mock_ctrls[MOCK_MAX_CTRLS];

/* ---------------------------------------------------------------------
 * Module parameters: what the module-created mocks advertise
 */

static unsigned int nr_ctrls = 1;
module_param(nr_ctrls, uint, 0444);
MODULE_PARM_DESC(nr_ctrls, "Mock controllers to create at load, 0-16 (default 1)");

/* Defaults: a KIOXIA BG5-like drive. */
static unsigned int hmpre[MOCK_MAX_CTRLS] = { 16384 };
static unsigned int hmmin[MOCK_MAX_CTRLS] = { 3584 };
static unsigned int hmminds[MOCK_MAX_CTRLS] = { 1 };
static unsigned int hmmaxd[MOCK_MAX_CTRLS] = { 1024 };
static unsigned int ctratt[MOCK_MAX_CTRLS];
static unsigned int nr_hmpre = 1, nr_hmmin = 1, nr_hmminds = 1, nr_hmmaxd = 1;
static unsigned int nr_ctratt = 1;
module_param_array(hmpre, uint, &nr_hmpre, 0444);
MODULE_PARM_DESC(hmpre, "HMPRE per mock, 4 KiB units; the last value repeats (default 16384)");
module_param_array(hmmin, uint, &nr_hmmin, 0444);
MODULE_PARM_DESC(hmmin, "HMMIN per mock, 4 KiB units (default 3584)");
module_param_array(hmminds, uint, &nr_hmminds, 0444);
MODULE_PARM_DESC(hmminds, "HMMINDS per mock, 4 KiB units (default 1)");
module_param_array(hmmaxd, uint, &nr_hmmaxd, 0444);
MODULE_PARM_DESC(hmmaxd, "HMMAXD per mock, 0-65535, 0 = no limit (default 1024)");
module_param_array(ctratt, uint, &nr_ctratt, 0444);
MODULE_PARM_DESC(ctratt, "CTRATT per mock; bit 17 (0x20000) is HMBR (default 0)");

/* ---------------------------------------------------------------------
 * The firmware's view of host memory
 */

/* The kernel address of host memory at @dma, or NULL if it is not RAM. */
static void *mock_map(struct nvme_hmb_mock *mock, u64 dma)
{
	phys_addr_t phys = dma_to_phys(&mock->pdev->dev, dma);

	if (!pfn_valid(PHYS_PFN(phys)))
		return NULL;
	return phys_to_virt(phys);
}

/*
 * The pattern of a page: its word w holds this ^ w, distinct for every
 * word of a list (w < 512 takes the low 9 bits, desc < 65536 the top 16).
 */
static u64 mock_pattern(u64 seed, u32 desc, u64 page)
{
	return (seed * 0x9e3779b97f4a7c15ULL) ^ ((u64)desc << 48) ^
	       (page << 9);
}

/*
 * One page of the pattern (mock_pattern()).  Not
 * instrumented by KASAN: the pattern is the check here (a buffer freed
 * under the controller is caught by its page reference below, and its
 * contents by the test VMs' init_on_free), and instrumenting every word
 * made a 64 MiB enable take over a second on the debug kernel.
 */
static void __no_sanitize_address mock_page_fill(u64 *word, u64 base)
{
	unsigned int w;

	for (w = 0; w < MOCK_WORDS_PER_PAGE; w++)
		word[w] = base ^ w;
}

static bool __no_sanitize_address mock_page_same(const u64 *word, u64 base)
{
	unsigned int w;

	for (w = 0; w < MOCK_WORDS_PER_PAGE; w++) {
		if (word[w] != (base ^ w))
			return false;
	}
	return true;
}

/*
 * Check (and with @write, first write) the pattern of every page of entry
 * @i, or of @nr pages from @first: every 64-bit word of the page, each
 * with its own value, so that any byte the host changes (a small object
 * of a freed page, a header, one stray store) is seen.  Called with the
 * lock held and the buffer owned by the controller.
 */
static void mock_touch_desc(struct nvme_hmb_mock *mock, u32 i, u64 first,
			    u64 nr, bool write)
{
	u64 addr = le64_to_cpu(mock->list[i].addr);
	u64 pages = le32_to_cpu(mock->list[i].size);
	struct page *head;
	u64 p, base, *word;
	void *va;

	va = mock_map(mock, addr);
	if (!va) {
		mock->stats.violations++;
		return;
	}
	/* A freed buffer has lost its page reference: never touch it. */
	head = virt_to_page(va);
	if (!page_count(head)) {
		mock->stats.violations++;
		pr_err("%s: entry %u freed while the controller owns it\n",
		       mock->port.name, i);
		return;
	}
	for (p = first; p < pages && p < first + nr; p++) {
		word = va + (p << NVME_HMB_PAGE_SHIFT);
		base = mock_pattern(mock->seed, i, p);
		if (write) {
			mock_page_fill(word, base);
			continue;
		}
		if (!mock_page_same(word, base)) {
			mock->stats.violations++;
			pr_err("%s: entry %u page %llu changed while the controller owns it\n",
			       mock->port.name, i, p);
			return;
		}
		mock->stats.pages_checked++;
	}
}

static void mock_touch_all(struct nvme_hmb_mock *mock, bool write)
{
	u32 i;

	for (i = 0; i < mock->hmdlec; i++)
		mock_touch_desc(mock, i, 0, U64_MAX, write);
}

/* Check the next MOCK_TOUCH_PAGES pages, round robin over the buffer. */
static void mock_touch_some(struct nvme_hmb_mock *mock)
{
	u64 left = MOCK_TOUCH_PAGES, start = 0, pages;
	u32 i;

	if (mock->cursor >= mock->hsize)
		mock->cursor = 0;
	for (i = 0; i < mock->hmdlec && left; i++) {
		pages = le32_to_cpu(mock->list[i].size);
		if (mock->cursor < start + pages) {
			u64 first = mock->cursor - start;
			u64 nr = min(left, pages - first);

			mock_touch_desc(mock, i, first, nr, false);
			mock->cursor += nr;
			left -= nr;
		}
		start += pages;
	}
}

/* The list in host memory is still the one taken at enable. */
static void mock_check_list(struct nvme_hmb_mock *mock)
{
	const struct nvme_host_mem_buf_desc *src = mock_map(mock, mock->hmdla);

	if (src && !memcmp(src, mock->list, mock->hmdlec * sizeof(*src)))
		return;
	mock->stats.violations++;
	pr_err("%s: descriptor list changed while the controller owns it\n",
	       mock->port.name);
}

static void mock_touch_work(struct work_struct *work)
{
	struct nvme_hmb_mock *mock = container_of(to_delayed_work(work),
						  struct nvme_hmb_mock, touch);

	mutex_lock(&mock->lock);
	if (mock->ehm && !mock->other) {
		/* HMNAR: not a byte while non-operational. */
		if (!mock->nonop || !mock->hmnar) {
			mock_check_list(mock);
			mock_touch_some(mock);
		}
		queue_delayed_work(mock_wq, &mock->touch,
				   msecs_to_jiffies(MOCK_TOUCH_MS));
	}
	mutex_unlock(&mock->lock);
}

/* ---------------------------------------------------------------------
 * Admin commands
 */

static int mock_reject(struct nvme_hmb_mock *mock, int status,
		       const char *why)
{
	mock->stats.rejected++;
	mock->stats.violations++;
	mock->stats.why = why;
	pr_warn("%s: Set Features rejected: %s\n", mock->port.name, why);
	return status;
}

/* Validate the list at @hmdla and copy it; NULL (and a status) if bad. */
static struct nvme_host_mem_buf_desc *
mock_read_list(struct nvme_hmb_mock *mock, u32 hsize, u64 hmdla, u32 hmdlec,
	       const char **why)
{
	struct nvme_host_mem_buf_desc *list, *src;
	u64 sum = 0;
	u32 i, j;

	src = mock_map(mock, hmdla);
	if (!src) {
		*why = "descriptor list not in host memory";
		return NULL;
	}
	list = kmemdup(src, hmdlec * sizeof(*list), GFP_KERNEL);
	if (!list) {
		*why = "out of memory";
		return NULL;
	}
	for (i = 0; i < hmdlec; i++) {
		u64 addr = le64_to_cpu(list[i].addr);
		u32 size = le32_to_cpu(list[i].size);

		if (addr & (NVME_HMB_PAGE - 1))
			*why = "buffer address not page aligned";
		else if (!size)
			*why = "empty buffer";
		else if (mock->id.hmminds && size < mock->id.hmminds)
			*why = "buffer smaller than HMMINDS";
		else if (list[i].rsvd)
			*why = "reserved field set";
		else if (!mock_map(mock, addr))
			*why = "buffer not in host memory";
		if (*why)
			goto bad;
		for (j = 0; j < i; j++) {
			u64 a = le64_to_cpu(list[j].addr);
			u64 b = a + ((u64)le32_to_cpu(list[j].size) <<
				     NVME_HMB_PAGE_SHIFT);

			if (addr < b &&
			    a < addr + ((u64)size << NVME_HMB_PAGE_SHIFT)) {
				*why = "buffers overlap";
				goto bad;
			}
		}
		sum += size;
	}
	if (sum != hsize) {
		*why = "HSIZE is not the sum of the entries";
		goto bad;
	}
	return list;
bad:
	kfree(list);
	return NULL;
}

static bool mock_same_buffer(struct nvme_hmb_mock *mock, u32 hsize, u64 hmdla,
			     u32 hmdlec, const struct nvme_host_mem_buf_desc *l)
{
	return mock->list && mock->hsize == hsize && mock->hmdla == hmdla &&
	       mock->hmdlec == hmdlec &&
	       !memcmp(mock->list, l, hmdlec * sizeof(*l));
}

static int mock_enable(struct nvme_hmb_mock *mock,
		       const struct nvme_hmb_set_cmd *cmd)
{
	struct nvme_host_mem_buf_desc *list;
	bool mr = cmd->cdw11 & NVME_HOST_MEM_RETURN;
	u64 hmdla = cmd->cdw13 | (u64)cmd->cdw14 << 32;
	u32 hsize = cmd->cdw12, hmdlec = cmd->cdw15;
	const char *why = NULL;
	u64 before;

	if (mock->ehm)
		return mock_reject(mock, MOCK_SEQ_ERROR, "enable while enabled");
	if (hmdla & 0xf)
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "list address not 16-byte aligned");
	if (!hmdlec || (mock->id.hmmaxd && hmdlec > mock->id.hmmaxd))
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "entry count 0 or above HMMAXD");
	/* This firmware's own limit, so that it never reads past a list. */
	if (hmdlec > NVME_HMB_MAX_DESCS)
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "entry count above 65535");
	if (hsize < mock->id.hmmin)
		return mock_reject(mock, MOCK_INVALID_FIELD, "HSIZE below HMMIN");
	if (hsize > max(mock->id.hmpre, mock->id.hmmin))
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "HSIZE above HMPRE and HMMIN");

	if (mr && (!mock->list || mock->hsize != hsize ||
		   mock->hmdla != hmdla || mock->hmdlec != hmdlec))
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "returned (MR) a different buffer");

	list = mock_read_list(mock, hsize, hmdla, hmdlec, &why);
	if (!list)
		return mock_reject(mock, MOCK_INVALID_FIELD, why);

	if (mr) {
		if (!mock_same_buffer(mock, hsize, hmdla, hmdlec, list)) {
			kfree(list);
			return mock_reject(mock, MOCK_INVALID_FIELD,
					   "returned (MR) a different buffer");
		}
		kfree(list);
		before = mock->stats.violations;
		mock_touch_all(mock, false);
		if (mock->stats.violations != before)
			pr_err("%s: returned (MR) buffer was modified\n",
			       mock->port.name);
		mock->stats.mr_returns++;
	} else {
		kfree(mock->list);
		mock->list = list;
		mock->hsize = hsize;
		mock->hmdla = hmdla;
		mock->hmdlec = hmdlec;
		mock->seed++;
		mock_touch_all(mock, true);
	}
	mock->ehm = true;
	mock->hmnar = cmd->cdw11 & NVME_HMB_HMNARE;
	if (mock->hmnar)
		mock->stats.hmnare_sets++;
	mock->cursor = 0;
	queue_delayed_work(mock_wq, &mock->touch,
			   msecs_to_jiffies(MOCK_TOUCH_MS));
	return 0;
}

/* Stop using the buffer: check it one last time, then never touch it. */
static void mock_disable_locked(struct nvme_hmb_mock *mock)
{
	if (!mock->ehm)
		return;
	if (!mock->other) {
		mock_check_list(mock);
		mock_touch_all(mock, false);
	}
	mock->ehm = false;
	mock->other = false;
	mock->hmnar = false;
}

static int mock_execute_locked(struct nvme_hmb_mock *mock,
			       const struct nvme_hmb_set_cmd *cmd);

static int mock_set_features_locked(struct nvme_hmb_mock *mock,
				    const struct nvme_hmb_set_cmd *cmd)
{
	int status;

	mock->stats.set_cmds++;
	if (mock->ignore_sets) {
		/* Success, and nothing done: firmware that says it did. */
		mock->ignore_sets--;
		return 0;
	}
	if (mock->fail_set_status) {
		if (!mock->fail_set_skip) {
			status = mock->fail_set_status;
			if (!--mock->fail_set_nr)
				mock->fail_set_status = 0;
			if (status > 0) {
				/*
				 * Completed with an error: not executed, or
				 * (an Internal Error after the fact, say)
				 * executed all the same.
				 */
				if (mock->fail_set_executed)
					mock_execute_locked(mock, cmd);
				mock->stats.rejected++;
				return status;
			}
			/*
			 * -ETIMEDOUT: executed, but the completion was lost;
			 * any other errno: lost before the controller saw it.
			 */
			if (status == -ETIMEDOUT)
				mock_execute_locked(mock, cmd);
			return status;
		}
		mock->fail_set_skip--;
	}
	return mock_execute_locked(mock, cmd);
}

static int mock_execute_locked(struct nvme_hmb_mock *mock,
			       const struct nvme_hmb_set_cmd *cmd)
{
	u32 known = NVME_HOST_MEM_ENABLE | NVME_HOST_MEM_RETURN;

	if (mock->id.ctratt & NVME_HMB_CTRATT_HMBR)
		known |= NVME_HMB_HMNARE;
	if (cmd->cdw10 & BIT(31))
		return mock_reject(mock, MOCK_NOT_SAVEABLE, "save (SV) requested");
	if ((cmd->cdw10 & 0xff) != NVME_FEAT_HOST_MEM_BUF)
		return mock_reject(mock, MOCK_INVALID_FIELD, "not FID 0Dh");
	if (cmd->cdw11 & ~known)
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "reserved bits of CDW11 set");
	/* Armed to refuse it: the host is right to retry without. */
	if ((cmd->cdw11 & NVME_HMB_HMNARE) && mock->refuse_hmnare) {
		mock->stats.rejected++;
		return MOCK_INVALID_FIELD;
	}
	if (cmd->cdw11 & NVME_HOST_MEM_ENABLE)
		return mock_enable(mock, cmd);
	if (cmd->cdw11 & NVME_HOST_MEM_RETURN)
		return mock_reject(mock, MOCK_INVALID_FIELD,
				   "memory return (MR) on a disable");
	mock_disable_locked(mock);
	return 0;
}

static struct nvme_hmb_mock *to_mock(struct nvme_hmb_port *port)
{
	return container_of(port, struct nvme_hmb_mock, port);
}

static int mock_identify(struct nvme_hmb_port *port, struct nvme_hmb_id *id)
{
	*id = to_mock(port)->id;
	return 0;
}

/*
 * A command that completes late: the host was told it timed out (it
 * may have been carried out, as far as the host knows), and the
 * controller carries it out @late_ms later.  The admin queue is served
 * in order, so whatever the host sends next waits for it.
 */
static void mock_late_work(struct work_struct *work)
{
	struct nvme_hmb_mock *mock = container_of(to_delayed_work(work),
						  struct nvme_hmb_mock, late);

	mutex_lock(&mock->lock);
	if (mock->late_pending) {
		mock->late_pending = false;
		mock_execute_locked(mock, &mock->late_cmd);
		mock->stats.late_done++;
	}
	mutex_unlock(&mock->lock);
}

/*
 * Before a command is taken (the late one, flushed by the caller before
 * it took the lock, has gone first): a dead controller takes nothing; one
 * that dies now takes this command and never completes it.
 * Return: 0 to go on, or the backend's errno.
 */
static int mock_admit(struct nvme_hmb_mock *mock, bool *execute)
{
	*execute = false;
	if (mock->dead)
		return -ENODEV;
	if (mock->die_next) {
		mock->die_next = false;
		mock->dead = true;
		*execute = true;
		return -ETIMEDOUT;
	}
	return 0;
}

static int mock_set_features(struct nvme_hmb_port *port,
			     const struct nvme_hmb_set_cmd *cmd)
{
	struct nvme_hmb_mock *mock = to_mock(port);
	bool off, execute;
	int status;

	flush_delayed_work(&mock->late);
	mutex_lock(&mock->lock);
	status = mock_admit(mock, &execute);
	if (status) {
		mock->stats.set_cmds++;
		if (execute)
			mock_execute_locked(mock, cmd);
	} else if (mock->late_ms) {
		mock->stats.set_cmds++;
		mock->late_cmd = *cmd;
		mock->late_pending = true;
		queue_delayed_work(mock_wq, &mock->late,
				   msecs_to_jiffies(mock->late_ms));
		mock->late_ms = 0;
		status = -ETIMEDOUT;
	} else {
		status = mock_set_features_locked(mock, cmd);
	}
	mock->unsure = status != 0;
	off = !mock->ehm;
	mutex_unlock(&mock->lock);
	/* A disable that failed leaves the buffer watched, as it is owned. */
	if (off)
		cancel_delayed_work_sync(&mock->touch);
	return status;
}

static int mock_get_features(struct nvme_hmb_port *port, void *data, u32 *cdw0)
{
	struct nvme_hmb_mock *mock = to_mock(port);
	__le32 *attrs = data;
	int status = 0;

	bool execute;

	flush_delayed_work(&mock->late);
	mutex_lock(&mock->lock);
	mock->stats.get_cmds++;
	status = mock_admit(mock, &execute);
	if (status)
		goto out;
	if (mock->fail_get_status && mock->fail_get_skip) {
		mock->fail_get_skip--;
	} else if (mock->fail_get_status) {
		status = mock->fail_get_status;
		if (!--mock->fail_get_nr)
			mock->fail_get_status = 0;
		goto out;
	}
	memset(data, 0, NVME_HMB_ATTR_LEN);
	/* One that says it holds nothing, holding its buffer. */
	if (mock->hide_ehm && mock->ehm) {
		mock->hide_ehm--;
		mock->stats.lies++;
		*cdw0 = 0;
		goto out;
	}
	/* A controller that misreports: one page more than it holds. */
	attrs[0] = cpu_to_le32(mock->ehm ? mock->hsize + !!mock->get_lies : 0);
	if (mock->get_lies && mock->ehm) {
		mock->get_lies--;
		mock->stats.lies++;
	}
	attrs[1] = cpu_to_le32(mock->ehm ? lower_32_bits(mock->hmdla) : 0);
	attrs[2] = cpu_to_le32(mock->ehm ? upper_32_bits(mock->hmdla) : 0);
	attrs[3] = cpu_to_le32(mock->ehm ? mock->hmdlec : 0);
	*cdw0 = mock->ehm ? NVME_HOST_MEM_ENABLE : 0;
	if (mock->ehm && mock->hmnar)
		*cdw0 |= NVME_HMB_HMNAR;
out:
	mutex_unlock(&mock->lock);
	return status;
}

/* Whether a suspend keeps it powered in a non-operational power state. */
static bool mock_sleep_powered(struct nvme_hmb_port *port)
{
	return !READ_ONCE(to_mock(port)->sleep_firmware);
}

static const struct nvme_hmb_port_ops mock_port_ops = {
	.identify	= mock_identify,
	.set_features	= mock_set_features,
	.get_features	= mock_get_features,
	.sleep_powered	= mock_sleep_powered,
};

/* Whether @attrs are the other driver's buffer, as that driver recorded it. */
static bool mock_foreign_list(struct nvme_hmb_port *port,
			      const struct nvme_hmb_attrs *attrs)
{
	struct nvme_hmb_mock *mock = to_mock(port);
	u64 hmdla = READ_ONCE(mock->other_hmdla);

	return hmdla && attrs->hmdla == hmdla &&
	       attrs->hsize == READ_ONCE(mock->other_hsize) &&
	       attrs->hmdlec == READ_ONCE(mock->other_hmdlec);
}

/* A controller that another driver may give a buffer of its own. */
static const struct nvme_hmb_port_ops mock_shared_port_ops = {
	.identify	= mock_identify,
	.set_features	= mock_set_features,
	.get_features	= mock_get_features,
	.foreign_list	= mock_foreign_list,
	.sleep_powered	= mock_sleep_powered,
};

/* ---------------------------------------------------------------------
 * Test interface (KUnit and debugfs)
 */

/**
 * nvme_hmb_mock_view() - what the mock controller sees
 * @mock: the mock
 * @view: filled in
 */
void nvme_hmb_mock_view(struct nvme_hmb_mock *mock,
			struct nvme_hmb_mock_view *view)
{
	mutex_lock(&mock->lock);
	*view = mock->stats;
	view->ehm = mock->ehm;
	view->hsize = mock->ehm ? mock->hsize : 0;
	view->hmdla = mock->ehm ? mock->hmdla : 0;
	view->hmdlec = mock->ehm ? mock->hmdlec : 0;
	view->hmnar = mock->ehm && mock->hmnar;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_view);

/**
 * nvme_hmb_mock_check() - verify the whole pattern now
 * @mock: the mock; does nothing unless its HMB is enabled
 */
void nvme_hmb_mock_check(struct nvme_hmb_mock *mock)
{
	mutex_lock(&mock->lock);
	if (mock->ehm && !mock->other) {
		mock_check_list(mock);
		mock_touch_all(mock, false);
	}
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_check);

/**
 * nvme_hmb_mock_other() - the other driver enables or disables its buffer
 * @mock: a mock made by nvme_hmb_mock_create_shared()
 * @enable: enable the other driver's buffer (recorded by that driver from
 *	    now on), or disable it and forget it
 *
 * As nvme-pci does at a reset or through its hmb attribute.  An enable
 * while the controller holds a buffer fails as the controller would.
 *
 * Return: 0 or the status the controller answers the other driver with.
 */
int nvme_hmb_mock_other(struct nvme_hmb_mock *mock, bool enable)
{
	int status = 0;

	mutex_lock(&mock->lock);
	if (!enable) {
		if (mock->other)
			mock_disable_locked(mock);
		WRITE_ONCE(mock->other_hmdla, 0);
	} else if (mock->ehm) {
		status = MOCK_SEQ_ERROR;
	} else {
		kfree(mock->list);
		mock->list = NULL;
		mock->hsize = max(mock->id.hmmin, 1U);
		mock->hmdla = MOCK_OTHER_HMDLA;
		mock->hmdlec = 1;
		mock->ehm = true;
		mock->other = true;
		WRITE_ONCE(mock->other_hsize, mock->hsize);
		WRITE_ONCE(mock->other_hmdlec, mock->hmdlec);
		WRITE_ONCE(mock->other_hmdla, mock->hmdla);
	}
	mutex_unlock(&mock->lock);
	if (!enable)
		cancel_delayed_work_sync(&mock->touch);
	return status;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_other);

/**
 * nvme_hmb_mock_other_held() - whether the controller holds the other
 *	driver's buffer
 * @mock: the mock
 *
 * Return: true while it does.
 */
bool nvme_hmb_mock_other_held(struct nvme_hmb_mock *mock)
{
	bool held;

	mutex_lock(&mock->lock);
	held = mock->ehm && mock->other;
	mutex_unlock(&mock->lock);
	return held;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_other_held);

/* Arm the failure of coming Set Features (fail_sets, KUnit). */
static void mock_arm_sets(struct nvme_hmb_mock *mock, unsigned int skip,
			  unsigned int nr, int status, bool executed)
{
	mutex_lock(&mock->lock);
	mock->fail_set_skip = skip;
	mock->fail_set_nr = nr;
	mock->fail_set_status = nr ? status : 0;
	mock->fail_set_executed = executed;
	mutex_unlock(&mock->lock);
}

/**
 * nvme_hmb_mock_fail_sets() - fail coming Set Features commands
 * @mock: the mock
 * @skip: Set Features commands to let through first
 * @nr: how many to fail then, in a row
 * @status: NVMe status (> 0: not executed) or negative errno
 *	    (-ETIMEDOUT: executed, completion lost; any other: not executed)
 *	    to answer with; 0 cancels
 */
void nvme_hmb_mock_fail_sets(struct nvme_hmb_mock *mock, unsigned int skip,
			     unsigned int nr, int status)
{
	mock_arm_sets(mock, skip, nr, status, false);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_sets);

/**
 * nvme_hmb_mock_fail_set_executed() - carry out a Set Features, then fail it
 * @mock: the mock
 * @skip: Set Features commands to let through first
 * @status: NVMe status (> 0) to complete the executed command with
 *
 * What a controller does that hits an Internal Error or a Data Transfer
 * Error after it acted on the command.
 */
void nvme_hmb_mock_fail_set_executed(struct nvme_hmb_mock *mock,
				     unsigned int skip, int status)
{
	mock_arm_sets(mock, skip, 1, status, status > 0);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_set_executed);

/**
 * nvme_hmb_mock_ignore_sets() - succeed without carrying out Set Features
 * @mock: the mock
 * @nr: how many of the coming Set Features to complete with success
 *	without acting on them; 0 cancels
 */
void nvme_hmb_mock_ignore_sets(struct nvme_hmb_mock *mock, unsigned int nr)
{
	mutex_lock(&mock->lock);
	mock->ignore_sets = nr;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_ignore_sets);

/**
 * nvme_hmb_mock_fail_set() - fail one coming Set Features
 * @mock: the mock
 * @skip: Set Features commands to let through first
 * @status: as for nvme_hmb_mock_fail_sets(); 0 cancels
 */
void nvme_hmb_mock_fail_set(struct nvme_hmb_mock *mock, unsigned int skip,
			    int status)
{
	nvme_hmb_mock_fail_sets(mock, skip, 1, status);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_set);

/**
 * nvme_hmb_mock_fail_gets() - fail coming Get Features commands
 * @mock: the mock
 * @skip: Get Features commands to let through first
 * @nr: how many to fail then, in a row (UINT_MAX: until cancelled, as a
 *	backend answers -EAGAIN while the controller is being reset)
 * @status: NVMe status (> 0) or negative errno; 0 cancels
 */
void nvme_hmb_mock_fail_gets(struct nvme_hmb_mock *mock, unsigned int skip,
			     unsigned int nr, int status)
{
	mutex_lock(&mock->lock);
	mock->fail_get_skip = skip;
	mock->fail_get_nr = nr;
	mock->fail_get_status = nr ? status : 0;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_gets);

/**
 * nvme_hmb_mock_fail_get_skip() - fail one coming Get Features
 * @mock: the mock
 * @skip: Get Features commands to let through first (a guard's read
 *	  before a disable, say, to fail the one before the enable)
 * @status: NVMe status (> 0) or negative errno; 0 cancels
 */
void nvme_hmb_mock_fail_get_skip(struct nvme_hmb_mock *mock,
				 unsigned int skip, int status)
{
	nvme_hmb_mock_fail_gets(mock, skip, 1, status);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_get_skip);

/**
 * nvme_hmb_mock_fail_get() - fail the next Get Features
 * @mock: the mock
 * @status: NVMe status (> 0) or negative errno; 0 cancels
 */
void nvme_hmb_mock_fail_get(struct nvme_hmb_mock *mock, int status)
{
	nvme_hmb_mock_fail_get_skip(mock, 0, status);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_fail_get);

/**
 * nvme_hmb_mock_raw_set() - send a Set Features as the host would
 * @mock: the mock
 * @cmd: the command, possibly malformed
 *
 * Return: the status the mock answers with.
 */
int nvme_hmb_mock_raw_set(struct nvme_hmb_mock *mock,
			  const struct nvme_hmb_set_cmd *cmd)
{
	return mock_set_features(&mock->port, cmd);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_raw_set);

/**
 * nvme_hmb_mock_reset() - a Controller Level Reset
 * @mock: the mock
 *
 * The controller stops using the HMB (EHM=0) and remembers the buffer it
 * had, then tells the engine, which returns it.
 */
void nvme_hmb_mock_reset(struct nvme_hmb_mock *mock)
{
	nvme_hmb_mock_silent_reset(mock);
	nvme_hmb_report_reset(mock->hmb);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_reset);

/**
 * nvme_hmb_mock_silent_reset() - a reset nobody reports (yet)
 * @mock: the mock
 *
 * As nvme_hmb_mock_reset(), without telling the engine: a controller
 * reset the host's driver has not noticed.  A command taken but not
 * completed is dropped, and a controller that had died works again.
 */
void nvme_hmb_mock_silent_reset(struct nvme_hmb_mock *mock)
{
	cancel_delayed_work_sync(&mock->late);
	mutex_lock(&mock->lock);
	mock->late_pending = false;
	mock->dead = false;
	mock->die_next = false;
	mock->ehm = false;
	mock->other = false;
	mock->hmnar = false;
	mock->nonop = false;
	mutex_unlock(&mock->lock);
	cancel_delayed_work_sync(&mock->touch);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_silent_reset);

/**
 * nvme_hmb_mock_refuse_hmnare() - report HMBR but refuse HMNARE
 * @mock: the mock; its Identify should say HMBR
 * @refuse: refuse every enable with HMNARE (Invalid Field), or stop
 */
void nvme_hmb_mock_refuse_hmnare(struct nvme_hmb_mock *mock, bool refuse)
{
	mutex_lock(&mock->lock);
	mock->refuse_hmnare = refuse;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_refuse_hmnare);

/**
 * nvme_hmb_mock_sleep_firmware() - which way its driver suspends it
 * @mock: the mock
 * @firmware: true: shut down, as nvme-pci does when the firmware takes
 *	      part in the suspend; false (the default): kept powered in a
 *	      non-operational power state
 */
void nvme_hmb_mock_sleep_firmware(struct nvme_hmb_mock *mock, bool firmware)
{
	WRITE_ONCE(mock->sleep_firmware, firmware);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_sleep_firmware);

/**
 * nvme_hmb_mock_power_state() - enter or leave the deepest power state
 * @mock: the mock
 * @nonop: enter it (as nvme_suspend() does after the engine's PM
 *	   notifier), or go back to an operational one (resume)
 *
 * Entering it with the HMB enabled and no HMNAR is a violation: host
 * memory may be unreachable in a system suspend state.  With HMNAR the
 * mock touches nothing until it leaves, then checks the whole buffer.
 */
void nvme_hmb_mock_power_state(struct nvme_hmb_mock *mock, bool nonop)
{
	mutex_lock(&mock->lock);
	if (nonop && !mock->nonop && mock->ehm && !mock->other &&
	    !mock->hmnar) {
		mock->stats.violations++;
		pr_err("%s: HMB enabled without HMNAR in a suspend's non-operational power state\n",
		       mock->port.name);
	}
	if (!nonop && mock->nonop && mock->ehm && !mock->other) {
		mock_check_list(mock);
		mock_touch_all(mock, false);
	}
	mock->nonop = nonop;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_power_state);

/**
 * nvme_hmb_mock_misbehave() - arm the misbehaviour of real controllers
 * @mock: the mock
 * @late_ms: the next Set Features times out and is carried out this much
 *	     later (0: none)
 * @get_lies: Get Features answers to give wrongly, while enabled
 * @die: die during the next command: carry it out, never complete it,
 *	 take no command after it until a reset
 */
void nvme_hmb_mock_misbehave(struct nvme_hmb_mock *mock, unsigned int late_ms,
			     unsigned int get_lies, bool die)
{
	mutex_lock(&mock->lock);
	mock->late_ms = late_ms;
	mock->get_lies = get_lies;
	mock->die_next = die;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_misbehave);

/**
 * nvme_hmb_mock_hide_ehm() - the next Get Features deny the buffer
 * @mock: the mock
 * @nr: Get Features, while enabled, to answer EHM=0 (all attributes 0)
 *	though the buffer stays enabled and in use
 */
void nvme_hmb_mock_hide_ehm(struct nvme_hmb_mock *mock, unsigned int nr)
{
	mutex_lock(&mock->lock);
	mock->hide_ehm = nr;
	mutex_unlock(&mock->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_hide_ehm);

struct nvme_hmb_ctrl *nvme_hmb_mock_ctrl(struct nvme_hmb_mock *mock)
{
	return mock->hmb;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_ctrl);

/* ---------------------------------------------------------------------
 * System sleep, as the controller sees it
 *
 * Nothing in user space runs while the system sleeps, so the selftests
 * cannot look at the HMB then.  The mock looks for them, once per sleep:
 * its PM notifier runs last (lowest priority) at PM_SUSPEND_PREPARE and
 * PM_HIBERNATION_PREPARE, after the engine's has taken the HMB away and
 * before tasks are frozen.  From there the engine's sleeping flag keeps
 * resizes, reclaim and regrow from enabling it again until its wake-up
 * notifier; what happens later in the sleep is not sampled.  Each sample
 * records whether host memory was still enabled (it must not be, but for
 * a suspend that keeps the controller powered and an HMB with HMNAR:
 * sleep_kept) and whether the engine still held a buffer (kept for MR=1
 * across suspend, freed for hibernation).
 */

static void mock_sleep_sample(struct nvme_hmb_mock *mock)
{
	struct nvme_hmb_ctrl *ctrl = mock->hmb;
	bool held;

	/* The engine's lock first, as when it calls the mock's ops. */
	mutex_lock(&ctrl->lock);
	held = ctrl->buf.size != 0;
	mutex_lock(&mock->lock);
	mock->stats.sleep_samples++;
	/* Kept with HMNAR for a powered suspend: as the engine should. */
	if (mock->ehm && mock->hmnar && !READ_ONCE(mock->sleep_firmware))
		mock->stats.sleep_kept++;
	else if (mock->ehm)
		mock->stats.sleep_ehm++;
	if (held)
		mock->stats.sleep_held++;
	mutex_unlock(&mock->lock);
	mutex_unlock(&ctrl->lock);
}

static int mock_pm_notify(struct notifier_block *nb, unsigned long action,
			  void *unused)
{
	unsigned int i;

	if (action != PM_SUSPEND_PREPARE && action != PM_HIBERNATION_PREPARE)
		return NOTIFY_DONE;
	for (i = 0; i < MOCK_MAX_CTRLS; i++) {
		if (mock_ctrls[i])
			mock_sleep_sample(mock_ctrls[i]);
	}
	return NOTIFY_DONE;
}

static struct notifier_block mock_pm_nb = {
	.notifier_call = mock_pm_notify,
	.priority = INT_MIN,
};

/* debugfs: nvme_hmb_mock/<name>/ */

#define MOCK_VIEW_ATTR(field)						\
static int mock_##field##_get(void *data, u64 *val)			\
{									\
	struct nvme_hmb_mock_view v;					\
									\
	nvme_hmb_mock_view(data, &v);					\
	*val = v.field;							\
	return 0;							\
}									\
DEFINE_DEBUGFS_ATTRIBUTE(mock_##field##_fops, mock_##field##_get, NULL, \
			 "%llu\n")

MOCK_VIEW_ATTR(ehm);
MOCK_VIEW_ATTR(hsize);
MOCK_VIEW_ATTR(hmdlec);
MOCK_VIEW_ATTR(set_cmds);
MOCK_VIEW_ATTR(get_cmds);
MOCK_VIEW_ATTR(rejected);
MOCK_VIEW_ATTR(mr_returns);
MOCK_VIEW_ATTR(violations);
MOCK_VIEW_ATTR(pages_checked);
MOCK_VIEW_ATTR(sleep_samples);
MOCK_VIEW_ATTR(sleep_ehm);
MOCK_VIEW_ATTR(sleep_held);
MOCK_VIEW_ATTR(sleep_kept);
MOCK_VIEW_ATTR(hmnare_sets);
MOCK_VIEW_ATTR(late_done);
MOCK_VIEW_ATTR(lies);

static int mock_fail_set_get(void *data, u64 *val)
{
	struct nvme_hmb_mock *mock = data;

	*val = (u64)(s64)READ_ONCE(mock->fail_set_status);
	return 0;
}

static int mock_fail_set_set(void *data, u64 val)
{
	if ((s64)val < -MAX_ERRNO || (s64)val > 0xffff)
		return -ERANGE;
	nvme_hmb_mock_fail_set(data, 0, (int)(s64)val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_fail_set_fops, mock_fail_set_get,
			 mock_fail_set_set, "%lld\n");

static int mock_fail_get_get(void *data, u64 *val)
{
	struct nvme_hmb_mock *mock = data;

	*val = (u64)(s64)READ_ONCE(mock->fail_get_status);
	return 0;
}

static int mock_fail_get_set(void *data, u64 val)
{
	if ((s64)val < -MAX_ERRNO || (s64)val > 0xffff)
		return -ERANGE;
	nvme_hmb_mock_fail_get(data, (int)(s64)val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_fail_get_fops, mock_fail_get_get,
			 mock_fail_get_set, "%lld\n");

/*
 * fail_sets: "SKIP NR STATUS [executed]" fails NR Set Features in a row
 * after letting SKIP through, with STATUS (an NVMe status, 0x4002 say,
 * or a negative errno); "executed" carries them out first.  Reads back
 * what is still armed: "0 0 0" once done.
 */
static ssize_t mock_fail_sets_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct nvme_hmb_mock *mock = file->private_data;
	char buf[48];
	int len;

	mutex_lock(&mock->lock);
	len = scnprintf(buf, sizeof(buf), "%u %u %d%s\n",
			mock->fail_set_status ? mock->fail_set_skip : 0,
			mock->fail_set_status ? mock->fail_set_nr : 0,
			mock->fail_set_status,
			mock->fail_set_status && mock->fail_set_executed ?
			" executed" : "");
	mutex_unlock(&mock->lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t mock_fail_sets_write(struct file *file,
				    const char __user *ubuf, size_t count,
				    loff_t *ppos)
{
	struct nvme_hmb_mock *mock = file->private_data;
	unsigned int skip, nr;
	int status, end = 0;
	char buf[48], *rest;
	bool executed;

	if (*ppos || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (strlen(buf) != count ||
	    sscanf(buf, "%u %u %i%n", &skip, &nr, &status, &end) != 3)
		return -EINVAL;
	rest = strim(buf + end);
	executed = !strcmp(rest, "executed");
	if ((*rest && !executed) || status < -MAX_ERRNO || status > 0xffff ||
	    (executed && status <= 0))
		return -EINVAL;
	mock_arm_sets(mock, skip, nr, status, executed);
	return count;
}

static const struct file_operations mock_fail_sets_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= mock_fail_sets_read,
	.write	= mock_fail_sets_write,
	.llseek	= default_llseek,
};

static int mock_reset_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	nvme_hmb_mock_reset(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_reset_fops, NULL, mock_reset_set, "%llu\n");

static int mock_silent_reset_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	nvme_hmb_mock_silent_reset(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_silent_reset_fops, NULL, mock_silent_reset_set,
			 "%llu\n");

/* A knob of the misbehaviour: a number up to @max, set under the lock. */
static int mock_knob_set(struct nvme_hmb_mock *mock, unsigned int *knob,
			 u64 val, u64 max)
{
	if (val > max)
		return -ERANGE;
	mutex_lock(&mock->lock);
	*knob = val;
	mutex_unlock(&mock->lock);
	return 0;
}

static int mock_late_ms_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct nvme_hmb_mock *)data)->late_ms);
	return 0;
}

static int mock_late_ms_set(void *data, u64 val)
{
	struct nvme_hmb_mock *mock = data;

	return mock_knob_set(mock, &mock->late_ms, val, 60000);
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_late_ms_fops, mock_late_ms_get,
			 mock_late_ms_set, "%llu\n");

static int mock_get_lies_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct nvme_hmb_mock *)data)->get_lies);
	return 0;
}

static int mock_get_lies_set(void *data, u64 val)
{
	struct nvme_hmb_mock *mock = data;

	return mock_knob_set(mock, &mock->get_lies, val, 1000);
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_get_lies_fops, mock_get_lies_get,
			 mock_get_lies_set, "%llu\n");

/* die: 1 arms a death during the next command; reads 2 once dead. */
static int mock_die_get(void *data, u64 *val)
{
	struct nvme_hmb_mock *mock = data;

	mutex_lock(&mock->lock);
	*val = mock->dead ? 2 : mock->die_next;
	mutex_unlock(&mock->lock);
	return 0;
}

static int mock_die_set(void *data, u64 val)
{
	struct nvme_hmb_mock *mock = data;

	if (val != 1)
		return -EINVAL;
	mutex_lock(&mock->lock);
	mock->die_next = true;
	mutex_unlock(&mock->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_die_fops, mock_die_get, mock_die_set, "%llu\n");

static int mock_check_set(void *data, u64 val)
{
	if (val != 1)
		return -EINVAL;
	nvme_hmb_mock_check(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mock_check_fops, NULL, mock_check_set, "%llu\n");

static void mock_debugfs_add(struct nvme_hmb_mock *mock)
{
	struct dentry *d;

	d = debugfs_create_dir(mock->port.name, mock_debugfs);
	mock->dir = d;
	debugfs_create_file_unsafe("ehm", 0400, d, mock, &mock_ehm_fops);
	debugfs_create_file_unsafe("hsize", 0400, d, mock, &mock_hsize_fops);
	debugfs_create_file_unsafe("hmdlec", 0400, d, mock, &mock_hmdlec_fops);
	debugfs_create_file_unsafe("set_cmds", 0400, d, mock,
				   &mock_set_cmds_fops);
	debugfs_create_file_unsafe("get_cmds", 0400, d, mock,
				   &mock_get_cmds_fops);
	debugfs_create_file_unsafe("rejected", 0400, d, mock,
				   &mock_rejected_fops);
	debugfs_create_file_unsafe("mr_returns", 0400, d, mock,
				   &mock_mr_returns_fops);
	debugfs_create_file_unsafe("violations", 0400, d, mock,
				   &mock_violations_fops);
	debugfs_create_file_unsafe("pages_checked", 0400, d, mock,
				   &mock_pages_checked_fops);
	debugfs_create_file_unsafe("sleep_samples", 0400, d, mock,
				   &mock_sleep_samples_fops);
	debugfs_create_file_unsafe("sleep_ehm", 0400, d, mock,
				   &mock_sleep_ehm_fops);
	debugfs_create_file_unsafe("sleep_held", 0400, d, mock,
				   &mock_sleep_held_fops);
	debugfs_create_file_unsafe("sleep_kept", 0400, d, mock,
				   &mock_sleep_kept_fops);
	debugfs_create_file_unsafe("hmnare_sets", 0400, d, mock,
				   &mock_hmnare_sets_fops);
	debugfs_create_file_unsafe("fail_next_set", 0600, d, mock,
				   &mock_fail_set_fops);
	debugfs_create_file_unsafe("fail_next_get", 0600, d, mock,
				   &mock_fail_get_fops);
	debugfs_create_file_unsafe("late_done", 0400, d, mock,
				   &mock_late_done_fops);
	debugfs_create_file_unsafe("lies", 0400, d, mock, &mock_lies_fops);
	debugfs_create_file("fail_sets", 0600, d, mock, &mock_fail_sets_fops);
	debugfs_create_file_unsafe("late_ms", 0600, d, mock,
				   &mock_late_ms_fops);
	debugfs_create_file_unsafe("get_lies", 0600, d, mock,
				   &mock_get_lies_fops);
	debugfs_create_file_unsafe("die", 0600, d, mock, &mock_die_fops);
	debugfs_create_file_unsafe("silent_reset", 0200, d, mock,
				   &mock_silent_reset_fops);
	debugfs_create_file_unsafe("reset", 0200, d, mock, &mock_reset_fops);
	debugfs_create_file_unsafe("check", 0200, d, mock, &mock_check_fops);
}

/* ---------------------------------------------------------------------
 * Creation and removal
 */

/* A mock controller whose port has @ops, attached to the engine. */
static struct nvme_hmb_mock *
mock_create(const char *name, const struct nvme_hmb_id *id,
	    const struct nvme_hmb_port_ops *ops)
{
	struct platform_device_info info = {
		.name		= "nvme_hmb_mock",
		/* The core's ids: a device kept past unload keeps its own. */
		.id		= PLATFORM_DEVID_AUTO,
		.dma_mask	= DMA_BIT_MASK(64),
	};
	struct nvme_hmb_mock *mock;
	int ret;

	mock = kzalloc(sizeof(*mock), GFP_KERNEL);
	if (!mock)
		return ERR_PTR(-ENOMEM);
	mutex_init(&mock->lock);
	INIT_DELAYED_WORK(&mock->touch, mock_touch_work);
	INIT_DELAYED_WORK(&mock->late, mock_late_work);
	mock->id = *id;
	strscpy(mock->port.name, name, sizeof(mock->port.name));

	mock->pdev = platform_device_register_full(&info);
	if (IS_ERR(mock->pdev)) {
		ret = PTR_ERR(mock->pdev);
		goto err_free;
	}

	mock->port.dev = &mock->pdev->dev;
	mock->port.dma_dev = &mock->pdev->dev;
	mock->port.ops = ops;
	mock->hmb = nvme_hmb_attach(&mock->port);
	if (IS_ERR(mock->hmb)) {
		ret = PTR_ERR(mock->hmb);
		goto err_pdev;
	}
	mock_debugfs_add(mock);
	dev_info(&mock->pdev->dev, "%s: mock controller, HMPRE %u HMMIN %u HMMINDS %u HMMAXD %u%s\n",
		 name, id->hmpre, id->hmmin, id->hmminds, id->hmmaxd,
		 id->ctratt & NVME_HMB_CTRATT_HMBR ? " HMBR" : "");
	return mock;

err_pdev:
	platform_device_unregister(mock->pdev);
err_free:
	kfree(mock);
	return ERR_PTR(ret);
}

/**
 * nvme_hmb_mock_create() - create a mock controller and attach it
 * @name: its name, "mock0" style
 * @id: what it advertises in Identify Controller
 *
 * The HMB is not set up: call nvme_hmb_start() on nvme_hmb_mock_ctrl().
 *
 * Return: the mock or an ERR_PTR().
 */
struct nvme_hmb_mock *nvme_hmb_mock_create(const char *name,
					   const struct nvme_hmb_id *id)
{
	return mock_create(name, id, &mock_port_ops);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_create);

/**
 * nvme_hmb_mock_create_shared() - a mock controller shared with a driver
 * @name: as nvme_hmb_mock_create()
 * @id: as nvme_hmb_mock_create()
 *
 * Its port identifies the other driver's buffer (nvme_hmb_mock_other()),
 * as nvme_hmb_pci identifies nvme-pci's: the engine guards every command.
 *
 * Return: the mock or an ERR_PTR().
 */
struct nvme_hmb_mock *nvme_hmb_mock_create_shared(const char *name,
						  const struct nvme_hmb_id *id)
{
	return mock_create(name, id, &mock_shared_port_ops);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_create_shared);

/**
 * nvme_hmb_mock_destroy() - detach and remove a mock controller
 * @mock: the mock; may be NULL or an ERR_PTR()
 */
void nvme_hmb_mock_destroy(struct nvme_hmb_mock *mock)
{
	struct nvme_hmb_ctrl *ctrl;
	bool held;

	if (IS_ERR_OR_NULL(mock))
		return;
	debugfs_remove_recursive(mock->dir);
	/* Whether the engine holds memory for us before it lets go. */
	ctrl = mock->hmb;
	mutex_lock(&ctrl->lock);
	held = !!ctrl->buf.descs;
	mutex_unlock(&ctrl->lock);
	nvme_hmb_detach(ctrl);
	/* A command still to complete late never will: it is dropped. */
	cancel_delayed_work_sync(&mock->late);
	mutex_lock(&mock->lock);
	/* ... and still does, if the disable of the detach failed. */
	held = (mock->ehm && !mock->other) || (held && mock->unsure);
	if (mock->ehm && mock->other) {
		mock->ehm = false;
		mock->other = false;
	} else if (mock->ehm) {
		/*
		 * The engine could not disable and left the buffer with us,
		 * as it must: it has to be intact and still allocated.
		 */
		mock_touch_all(mock, false);
		mock->ehm = false;
	}
	mutex_unlock(&mock->lock);
	cancel_delayed_work_sync(&mock->touch);
	if (held) { /* fate: mock-device-kept, both */
		/*
		 * The engine left memory with the device (its disable
		 * failed): the device stays, and its name, so that nothing
		 * the DMA API keeps of that memory points to a freed device.
		 */
		dev_warn(&mock->pdev->dev, "%s: removed with host memory left to it; the device stays\n",
			 mock->port.name);
	} else {
		platform_device_unregister(mock->pdev);
	}
	kfree(mock->list);
	kfree(mock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_mock_destroy);

static unsigned int mock_param(const unsigned int *vals, unsigned int nr,
			       unsigned int i)
{
	return vals[min(i, nr ? nr - 1 : 0)];
}

static void mock_destroy_all(void)
{
	int i;

	for (i = MOCK_MAX_CTRLS - 1; i >= 0; i--) {
		nvme_hmb_mock_destroy(mock_ctrls[i]);
		mock_ctrls[i] = NULL;
	}
}

static int __init mock_init(void)
{
	struct nvme_hmb_id id;
	char name[16];
	unsigned int i;
	int ret;

	if (nr_ctrls > MOCK_MAX_CTRLS)
		return -ERANGE;
	for (i = 0; i < nr_ctrls; i++) {
		if (mock_param(hmmaxd, nr_hmmaxd, i) > U16_MAX)
			return -ERANGE;
	}

	/* Unbound: no work of the mock needs a CPU of its own. */
	mock_wq = alloc_workqueue("nvme_hmb_mock", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!mock_wq)
		return -ENOMEM;
	mock_debugfs = debugfs_create_dir("nvme_hmb_mock", NULL);
	nvme_hmb_mock_bench_init(mock_debugfs);
	for (i = 0; i < nr_ctrls; i++) {
		id.hmpre = mock_param(hmpre, nr_hmpre, i);
		id.hmmin = mock_param(hmmin, nr_hmmin, i);
		id.hmminds = mock_param(hmminds, nr_hmminds, i);
		id.hmmaxd = mock_param(hmmaxd, nr_hmmaxd, i);
		id.ctratt = mock_param(ctratt, nr_ctratt, i);
		snprintf(name, sizeof(name), "mock%u", i);
		mock_ctrls[i] = nvme_hmb_mock_create(name, &id);
		if (IS_ERR(mock_ctrls[i])) {
			ret = PTR_ERR(mock_ctrls[i]);
			mock_ctrls[i] = NULL;
			goto fail;
		}
		nvme_hmb_start(mock_ctrls[i]->hmb);
	}
	ret = register_pm_notifier(&mock_pm_nb);
	if (ret)
		goto fail;
	return 0;

fail:
	mock_destroy_all();
	debugfs_remove_recursive(mock_debugfs);
	nvme_hmb_mock_bench_exit();
	destroy_workqueue(mock_wq);
	return ret;
}

static void __exit mock_exit(void)
{
	unregister_pm_notifier(&mock_pm_nb);
	mock_destroy_all();
	debugfs_remove_recursive(mock_debugfs);
	nvme_hmb_mock_bench_exit();
	destroy_workqueue(mock_wq);
}

module_init(mock_init);
module_exit(mock_exit);

MODULE_DESCRIPTION("Mock NVMe controllers for the nvme-hmb engine");
MODULE_AUTHOR("nvme-hmb developers <maintainers@users.noreply.a-seed-3aadf4a1.example>");
MODULE_LICENSE("GPL");
MODULE_VERSION(NVME_HMB_VERSION);
MODULE_IMPORT_NS(NVME_HMB_NS);
