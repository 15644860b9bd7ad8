/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-hmb: engine internals shared by the engine's files and its KUnit
 * suites.  Backends use nvme_hmb.h only.
 */
#ifndef _NVME_HMB_INTERNAL_H
#define _NVME_HMB_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/nvme.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "nvme_hmb.h"

struct device;
struct nvme_hmb_alloc_hook;
struct sg_table;

/* The controller memory page size: Linux always programs CC.MPS for 4 KiB. */
#define NVME_HMB_PAGE		SZ_4K
#define NVME_HMB_PAGE_SHIFT	12

/*
 * Most descriptor entries the engine ever uses: HMMAXD's largest value.
 * The list is one DMA-coherent allocation, as long as a build needs (a
 * page to start with; 1 MiB at most).
 */
#define NVME_HMB_MAX_DESCS	65535

/* Most a limit may be set to, in MiB (1 TiB): keeps HSIZE within 32 bits. */
#define NVME_HMB_LIMIT_MAX_MIB	1048576U

/* ---------------------------------------------------------------------
 * cmd.c: Identify parsing, Set/Get Features 0Dh encoding, status names
 */

void nvme_hmb_encode_set(struct nvme_hmb_set_cmd *cmd, bool enable, bool mr,
			 u32 hsize, u64 hmdla, u32 hmdlec);
void nvme_hmb_encode_hmnare(struct nvme_hmb_set_cmd *cmd);
const char *nvme_hmb_status_str(int status);
bool nvme_hmb_status_refused(int status);

/* ---------------------------------------------------------------------
 * policy.c: sanity of the Identify fields, negotiation, reasons
 */

/*
 * Why the HMB is what it is.  Keep nvme_hmb_reason_str() (the prose, for
 * dmesg) and nvme_hmb_reason_token() (sysfs, a stable ABI) in sync.
 */
enum nvme_hmb_reason {
	NVME_HMB_R_NONE,		/* not set up yet */
	NVME_HMB_R_GRANTED,		/* all of HMPRE */
	NVME_HMB_R_LIMITED,		/* capped by limit_mib */
	NVME_HMB_R_HMMAXD,		/* descriptor count capped the size */
	NVME_HMB_R_SHORT,		/* allocation fell short, above HMMIN */
	NVME_HMB_R_NOT_ASKED,		/* HMPRE = 0 */
	NVME_HMB_R_OFF_BY_USER,		/* limit_mib = 0 */
	NVME_HMB_R_HMMIN_ABOVE_LIMIT,	/* HMMIN > limit */
	NVME_HMB_R_HMMINDS_TOO_LARGE,	/* no chunk can satisfy HMMINDS */
	NVME_HMB_R_HMMAXD_TOO_SMALL,	/* HMMAXD chunks cannot reach HMMIN */
	NVME_HMB_R_ALLOC_BELOW_MIN,	/* allocation failed below HMMIN */
	NVME_HMB_R_SET_FAILED,		/* controller rejected Set Features */
	NVME_HMB_R_DISABLE_FAILED,	/* disable failed: memory kept */
	NVME_HMB_R_IDENTIFY_FAILED,	/* Identify could not be read */
	NVME_HMB_R_GONE,		/* controller removed */
	NVME_HMB_R_RECLAIMED,		/* shrunk under memory pressure */
	NVME_HMB_R_SLEEP,		/* disabled for system sleep */
	NVME_HMB_R_FOREIGN,		/* another driver runs the HMB */
	NVME_HMB_R_UNKNOWN_OWNER,	/* a buffer nobody recognises is enabled */
	NVME_HMB_R_NR
};

/* What the controller asks for, sanitised, in bytes. */
struct nvme_hmb_caps {
	u64 pref;		/* HMPRE; raised to HMMIN when below it */
	u64 min;		/* HMMIN; one page when 0 */
	u64 min_chunk;		/* HMMINDS; one page when 0 */
	u32 max_descs;		/* HMMAXD; 0 = no limit */
	bool min_above_pref;	/* Identify said HMMIN > HMPRE */
	bool hmbr;		/* CTRATT.HMBR: HMNARE may be sent */
};

/* What the host allows, in bytes. */
struct nvme_hmb_host {
	u64 limit;		/* this controller's limit */
	u64 granule;		/* chunk granule: max(PAGE_SIZE, 4 KiB) */
	u64 buddy_chunk;	/* largest chunk the page allocator gives */
	u64 max_chunk;		/* largest chunk ever tried */
	u32 max_descs;		/* the engine's own entry cap */
	bool contig;		/* one IOVA-contiguous buffer is possible */
};

/* The negotiated plan the allocator works to. */
struct nvme_hmb_plan {
	u64 target;		/* most to allocate */
	u64 min;		/* least that is worth enabling */
	u64 min_chunk;		/* smallest chunk to allocate */
	u64 first_chunk;	/* chunk size to start with */
	u32 max_descs;		/* entries allowed */
	enum nvme_hmb_reason limit_reason; /* GRANTED or LIMITED */
};

void nvme_hmb_caps_from_id(const struct nvme_hmb_id *id,
			   struct nvme_hmb_caps *caps);
enum nvme_hmb_reason nvme_hmb_negotiate(const struct nvme_hmb_caps *caps,
					const struct nvme_hmb_host *host,
					struct nvme_hmb_plan *plan);
u64 nvme_hmb_chunk_next(const struct nvme_hmb_host *host, u64 size);
u64 nvme_hmb_chunk_pick(const struct nvme_hmb_host *host,
			const struct nvme_hmb_plan *plan, u64 cap, u64 rest,
			u32 left);
enum nvme_hmb_reason nvme_hmb_outcome(const struct nvme_hmb_caps *caps,
				      const struct nvme_hmb_plan *plan,
				      u64 got, u32 nr_descs);
const char *nvme_hmb_reason_str(enum nvme_hmb_reason reason);
const char *nvme_hmb_reason_token(enum nvme_hmb_reason reason);

/* ---------------------------------------------------------------------
 * hmdl.c: the buffers and the descriptor list
 */

struct nvme_hmb_chunk {
	void *cookie;		/* the pages, or a dma_alloc_attrs() cookie */
	dma_addr_t dma;
	u64 size;
};

/*
 * A set of buffers for a controller and the descriptor list that names
 * them.  Either chunks[] (pages mapped for the device, or DMA-coherent
 * memory where a mapping could be bounced), or (behind a merging IOMMU)
 * one IOVA-contiguous buffer in sgt.  descs_bytes and the chunk sizes
 * record exactly what was allocated, and free uses them: nothing is
 * recomputed.
 *
 * A set is built, then sealed: nvme_hmb_buf_write_descs() writes its list
 * for an enable (EHM=1), and from then on nothing in it changes, list or
 * chunks, while a controller may hold it.  A resize that adds buffers
 * derives the next set beside it (nvme_hmb_buf_derive(): a list of its
 * own, the held chunks borrowed), and only once the controller provably
 * let go of the old set does nvme_hmb_buf_retire() free what the next
 * one does not name.  A sealed set the controller let go of may be
 * changed only after nvme_hmb_buf_thaw(), which makes it a new set: it is
 * never returned (MR=1) as the one the controller had.
 */
struct nvme_hmb_buf {
	const struct nvme_hmb_alloc_hook *fake;	/* KUnit's allocator */
	bool pages;		/* chunks are mapped pages, not coherent */
	bool sealed;		/* its list was written for an enable */
	bool returnable;	/* the controller took it (EHM=1 completed),
				 * and it is unchanged since: MR=1 may give
				 * it back
				 */
	struct nvme_host_mem_buf_desc *descs;
	dma_addr_t descs_dma;
	size_t descs_bytes;
	struct nvme_hmb_chunk *chunks;
	u32 nr_chunks;
	u32 max_chunks;
	u32 borrowed;		/* chunks[0..borrowed) are another set's */
	struct sg_table *sgt;
	u64 sgt_size;
	u64 size;
};

/*
 * Allocation seam: a test may fail any allocation.  @nth counts the
 * allocation attempts of one build, from 0 (the descriptor list first).
 * A KUnit suite may also stand in for the DMA API with @alloc and @free
 * (both or neither), to run the allocator over thousands of profiles
 * without allocating; never set outside KUnit.
 */
struct nvme_hmb_alloc_hook {
	bool (*fail)(void *priv, unsigned int nth, u64 size);
	void *(*alloc)(void *priv, u64 size, bool list, dma_addr_t *dma);
	void (*free)(void *priv, u64 size, bool list, void *cookie,
		     dma_addr_t dma);
	void *priv;
};

struct nvme_hmb_alloc_ctx {
	struct device *dev;
	const struct nvme_hmb_alloc_hook *hook;
	unsigned int nth;
	unsigned int failures;
	bool descs_exhausted;
	bool light;		/* in reclaim: take only what comes easily */
};

int nvme_hmb_buf_init(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		      u32 max_descs);
void nvme_hmb_buf_grow(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *buf,
		       const struct nvme_hmb_host *host,
		       const struct nvme_hmb_plan *plan, u64 target);
int nvme_hmb_buf_derive(struct nvme_hmb_alloc_ctx *ax, struct nvme_hmb_buf *next,
			const struct nvme_hmb_buf *from, u32 entries);
void nvme_hmb_buf_retire(struct device *dev, struct nvme_hmb_buf *old,
			 struct nvme_hmb_buf *next);
void nvme_hmb_buf_thaw(struct nvme_hmb_buf *buf);
u64 nvme_hmb_buf_trim(struct device *dev, struct nvme_hmb_buf *buf,
		      u64 target);
void nvme_hmb_buf_free(struct device *dev, struct nvme_hmb_buf *buf);
u32 nvme_hmb_buf_write_descs(struct device *dev, struct nvme_hmb_buf *buf);

/* ---------------------------------------------------------------------
 * ctrl.c: per-controller state machine
 */

enum nvme_hmb_state {
	NVME_HMB_OFF,		/* no memory held */
	NVME_HMB_ENABLED,	/* memory held, EHM=1 */
	NVME_HMB_SUSPENDED,	/* memory held, EHM=0 confirmed */
	NVME_HMB_FAILED,	/* memory held, controller state unknown */
};

/*
 * Statistics.  Updated under the controller lock, read without it: a
 * reader may see a value one update old.
 */
struct nvme_hmb_stats {
	u64 enables;
	u64 disables;
	u64 resizes;
	u64 alloc_failures;
	u64 cmd_failures;
	u64 mr_enables;
	u64 mr_refusals;
	u64 resets;
	u64 verify_mismatches;
	u64 setup_us;
	u64 reclaims;
	u64 pages_reclaimed;		/* 4 KiB pages */
	u64 regrows;
	u64 suspends;
	u64 resumes;
	u64 sleeps_kept;		/* suspends with the HMB left enabled */
};

struct nvme_hmb_ctrl {
	struct kobject kobj;
	struct list_head node;		/* on nvme_hmb_ctrls, RCU */
	struct list_head pm_node;	/* on a sleep or wake walk */
	struct delayed_work reclaim_work;
	struct delayed_work regrow_work;
	atomic64_t reclaim_pending;	/* bytes the shrinker asked for */
	bool reclaim_severe;		/* ... and it may go below HMMIN */
	bool dying;			/* being detached: queue no work */
	struct mutex lock;		/* protects everything below */
	struct nvme_hmb_port *port;	/* NULL once detached */
	bool gone;			/* controller cannot be reached */
	bool foreign;			/* another buffer is enabled: nvme-pci's
					 * or one nobody recognises
					 */
	char name[16];
	struct nvme_hmb_id id;
	struct nvme_hmb_caps caps;
	u64 limit;			/* bytes */
	enum nvme_hmb_state state;
	enum nvme_hmb_reason reason;
	int last_status;		/* behind SET_FAILED, DISABLE_FAILED */
	struct nvme_hmb_buf buf;	/* the set the engine holds */
	/*
	 * Whether buf is lent: the controller may hold it.  Set before an
	 * enable is sent, cleared only when the controller is known to hold
	 * none of it (a disable completed, a refusal that left it untouched,
	 * Get Features showed it holds nothing or another driver's buffer, a
	 * reset, or it is gone).  buf is sealed and never changes while lent:
	 * every decision about the controller's buffer is made against it,
	 * under the lock.
	 */
	bool lent;
	bool resize_pending;		/* a resize met a reset: the reset's
					 * report finishes it
					 */
	bool enable_deferred;		/* held for an enable the backend could
					 * not send (reset under way); the
					 * reset report sends it
					 */
	struct nvme_hmb_stats stats;
	struct nvme_hmb_alloc_hook hook;
	void *attr_buf;			/* Get Features data, preallocated */
	bool reclaim;			/* the shrinker may take memory */
	u64 reclaimable[2];		/* whole buffers above the floor:
					 * [0] normally, [1] under severe
					 * pressure; kept by the lock holder
					 */
	u64 reclaim_floor;		/* bytes reclaim never goes below */
	bool shrunk;			/* below the limit because of reclaim */
	unsigned long last_reclaim;	/* jiffies */
	unsigned int regrow_backoff;	/* quiet period multiplier */
	bool sleeping;			/* disabled for system sleep */
	bool reclaiming;		/* in the reclaim work */
	enum nvme_hmb_reason enabled_reason; /* of the last enabled HMB */
	u64 shown;			/* the size dmesg last gave at info
					 * level; 0: off, or nothing said
					 */
	unsigned long last_regrow;	/* jiffies, 0 before the first */
	/*
	 * TP4104.  hmnare_refused: the controller reports HMBR but refused
	 * an enable with HMNARE; it is not sent again while attached.
	 * hmnar: the enabled HMB was set with HMNARE and the Get Features
	 * that followed reported HMNAR; cleared before every Set Features.
	 */
	bool hmnare_refused;
	bool hmnar;
	bool kept_asleep;		/* left enabled for this suspend */
};

/* Module parameters and work queues (main.c). */
extern unsigned int nvme_hmb_default_limit_mib;
extern unsigned int nvme_hmb_max_chunk_kib;
extern unsigned int nvme_hmb_regrow_quiet_sec;
extern struct workqueue_struct *nvme_hmb_wq;
extern struct workqueue_struct *nvme_hmb_regrow_wq;

/* The registry of attached controllers (registry.c). */
extern struct list_head nvme_hmb_ctrls;
int nvme_hmb_registry_add(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_registry_del(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_sleep_all(bool hibernate);
void nvme_hmb_wake_all(bool fresh);

const char *nvme_hmb_state_str(enum nvme_hmb_state state);

/* A size for messages (ctrl.c): MiB, KiB below 1 MiB. */
struct nvme_hmb_sz {
	char s[24];
};

const char *nvme_hmb_sz_str(struct nvme_hmb_sz *b, u64 bytes);
bool nvme_hmb_teardown_locked(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_forget_locked(struct nvme_hmb_ctrl *ctrl);
int nvme_hmb_set_limit(struct nvme_hmb_ctrl *ctrl, u64 limit);
u64 nvme_hmb_size(struct nvme_hmb_ctrl *ctrl);
u64 nvme_hmb_held(struct nvme_hmb_ctrl *ctrl);
u32 nvme_hmb_nr_descs(struct nvme_hmb_ctrl *ctrl);
enum nvme_hmb_state nvme_hmb_state(struct nvme_hmb_ctrl *ctrl);
enum nvme_hmb_reason nvme_hmb_reason(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_ctrl_init(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_ctrl_stop_work(struct nvme_hmb_ctrl *ctrl);
u64 nvme_hmb_reclaimable(struct nvme_hmb_ctrl *ctrl, bool severe);
void nvme_hmb_sleep(struct nvme_hmb_ctrl *ctrl, bool hibernate);
void nvme_hmb_wake(struct nvme_hmb_ctrl *ctrl, bool fresh);
int nvme_hmb_set_reclaim(struct nvme_hmb_ctrl *ctrl, int on, s64 floor);

/* ---------------------------------------------------------------------
 * limits.c: limits per controller (the module parameter ctrl_limit_mib)
 */

#define NVME_HMB_MAX_RULES	16
#define NVME_HMB_RULE_KEY_LEN	32

struct nvme_hmb_limit_rule {
	char key[NVME_HMB_RULE_KEY_LEN];	/* a controller or DMA device */
	unsigned int mib;
};

u64 nvme_hmb_limit_for(const struct nvme_hmb_port *port, u64 dflt);

/*
 * Seen by the KUnit suites only (VISIBLE_IF_KUNIT, EXPORT_SYMBOL_IF_KUNIT):
 * without CONFIG_KUNIT they are static or absent, and nothing of the
 * engine's inside is exported.
 */
#if IS_ENABLED(CONFIG_KUNIT)
void nvme_hmb_id_parse(const void *id_ctrl, struct nvme_hmb_id *id);
void nvme_hmb_set_alloc_hook(struct nvme_hmb_ctrl *ctrl,
			     const struct nvme_hmb_alloc_hook *hook);
void nvme_hmb_reclaim_locked(struct nvme_hmb_ctrl *ctrl, u64 want,
			     bool severe);
void nvme_hmb_regrow_locked(struct nvme_hmb_ctrl *ctrl);
struct nvme_hmb_zone_mem;
unsigned long nvme_hmb_count_pages(bool severe);
unsigned long nvme_hmb_scan_pages(unsigned long nr_to_scan, bool severe);
bool nvme_hmb_zones_short(const struct nvme_hmb_zone_mem *zones,
			  unsigned int nr);
int nvme_hmb_limits_parse(const char *val, struct nvme_hmb_limit_rule *rules,
			  unsigned int *nr);
bool nvme_hmb_limits_match(const struct nvme_hmb_limit_rule *rules,
			   unsigned int nr, const char *name,
			   const char *dma_name, u64 *limit);
#endif

/* ---------------------------------------------------------------------
 * fault.c (test build only): fault injection at the allocation sites,
 * DMA accounting
 */

/* Where the engine asks for memory.  Keep nvme_hmb_site_names in sync. */
enum nvme_hmb_site {
	NVME_HMB_SITE_WQ,		/* init: the reclaim work queue */
	NVME_HMB_SITE_REGROW_WQ,	/* init: the regrow work queue */
	NVME_HMB_SITE_SYSFS,		/* init: /sys/kernel/nvme_hmb */
	NVME_HMB_SITE_SHRINKER,		/* init: the shrinker */
	NVME_HMB_SITE_CTRL,		/* attach: the controller */
	NVME_HMB_SITE_ATTR_BUF,		/* attach: the Get Features buffer */
	NVME_HMB_SITE_KOBJ,		/* attach: its sysfs directory */
	NVME_HMB_SITE_LIST,		/* build: a descriptor list */
	NVME_HMB_SITE_CHUNKS,		/* build: the chunk records */
	NVME_HMB_SITE_CHUNK,		/* build: one buffer */
	NVME_HMB_SITE_CONTIG,		/* build: one IOVA-contiguous buffer */
	NVME_HMB_SITE_NR
};

/*
 * fault.c is built only into the test build (NVME_HMB_TESTS=1, which
 * defines NVME_HMB_TEST_HOOKS): the module a user builds has no debugfs
 * files, no fail_alloc parameter and no DMA accounting.
 */
#if defined(NVME_HMB_TEST_HOOKS) && defined(CONFIG_FAULT_INJECTION_DEBUG_FS)
bool nvme_hmb_fault(enum nvme_hmb_site site);
bool nvme_hmb_fault_severe(void);
#else
static inline bool nvme_hmb_fault(enum nvme_hmb_site site)
{
	return false;
}

static inline bool nvme_hmb_fault_severe(void)
{
	return false;
}
#endif

#ifdef NVME_HMB_TEST_HOOKS
/* What the engine holds from the DMA API, all controllers together. */
extern atomic64_t nvme_hmb_dma_allocs;
extern atomic64_t nvme_hmb_dma_bytes;

static inline void nvme_hmb_dma_account(u64 bytes, int n)
{
	atomic64_add(n, &nvme_hmb_dma_allocs);
	atomic64_add(n * (s64)bytes, &nvme_hmb_dma_bytes);
}

int nvme_hmb_debugfs_init(void);
void nvme_hmb_debugfs_exit(void);
#else
static inline void nvme_hmb_dma_account(u64 bytes, int n)
{
}

static inline int nvme_hmb_debugfs_init(void)
{
	return 0;
}

static inline void nvme_hmb_debugfs_exit(void)
{
}
#endif

/* ---------------------------------------------------------------------
 * shrinker.c and pm.c
 */

extern unsigned long nvme_hmb_last_pressure;	/* jiffies of the last scan */
extern bool nvme_hmb_reclaim_plenty;		/* main.c: not only when short */

/* One zone as the shrinker weighs it, in pages (nvme_hmb_zones_short()). */
struct nvme_hmb_zone_mem {
	unsigned long free;		/* NR_FREE_PAGES */
	unsigned long free_cma;		/* NR_FREE_CMA_PAGES, part of free */
	unsigned long high;		/* high watermark, with any boost */
	unsigned long reserve;		/* lowmem reserve for the reclaim's zone */
};

int nvme_hmb_shrinker_init(void);
void nvme_hmb_shrinker_exit(void);
int nvme_hmb_pm_init(void);
void nvme_hmb_pm_exit(void);

/* ---------------------------------------------------------------------
 * sysfs.c: /sys/kernel/nvme_hmb/<name>/
 */

int nvme_hmb_parse_uint(const char *buf, size_t count, unsigned int min,
			unsigned int max, unsigned int *val);
int nvme_hmb_sysfs_init(void);
void nvme_hmb_sysfs_exit(void);
void nvme_hmb_kobj_init(struct nvme_hmb_ctrl *ctrl);
int nvme_hmb_kobj_add(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_kobj_del(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_kobj_put(struct nvme_hmb_ctrl *ctrl);

#endif /* _NVME_HMB_INTERNAL_H */
