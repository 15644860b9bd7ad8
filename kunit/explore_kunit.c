// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a seeded random explorer of the controller state machine.
 *
 * Each sequence creates a mock controller (plain, or shared with another
 * driver, of one of a few Identify profiles) and takes random steps drawn
 * from the engine's entry points: resizes up and down, reclaim at either
 * severity, regrow, controller resets reported at once, late or never,
 * suspend and hibernation, the other driver taking and releasing a shared
 * controller, surprise removal.  Before a step, faults may be armed: Set
 * and Get Features failing as a resetting backend, a lost completion or
 * every class of error status makes them fail, and allocations failing
 * (the n-th of a build, all above a size for a while, or all).  After
 * every step a shadow checks:
 *
 *  (a) the mock saw no breach of the host's contract (nothing it holds
 *      changed or freed, MR=1 only for exactly what it last held);
 *  (b) the descriptor list fits its allocation, and what the controller
 *      holds at the engine's list address is the engine's set;
 *  (c) sysfs says what the controller holds while enabled (unless a
 *      reset was not reported yet); off holds no memory;
 *  (d) the engine's DMA allocations are exactly what its set holds;
 *  (e) at detach everything is given back, with no violation.
 *
 * The seed alone decides a sequence: profile, mock, steps and faults.  A
 * failure prints the seed, the sequence, the step, the last operations
 * and the module parameters that replay it.
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nvme.h>
#include <linux/prandom.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "mock/mock.h"

/*
 * The default budget: 32 sequences of at most 60 steps each, the first
 * ones the seeds that found defects (below); see make test's figures in
 * Documentation/nvme-hmb-testing.rst.
 */
#define EXPLORE_SEQS		32
#define EXPLORE_STEPS		60
#define EXPLORE_MAX_SEQS	4096
#define EXPLORE_MAX_STEPS	100000
#define EXPLORE_LOG		10	/* operations a failure shows */
#define EXPLORE_LINE		200
#define EXPLORE_AFTER_GONE	3	/* steps still taken once gone */

#define INVALID_FIELD	(NVME_SC_INVALID_FIELD | NVME_HMB_STATUS_DNR)
#define SEQ_ERROR	(NVME_SC_CMD_SEQ_ERROR | NVME_HMB_STATUS_DNR)

/* ---------------------------------------------------------------------
 * Parameters and seeds
 */

static unsigned int explore_seed;
module_param(explore_seed, uint, 0444);
MODULE_PARM_DESC(explore_seed,
		 "nvme_hmb_explore: first seed, counting up; 0 = the default list");

static int explore_set_seqs(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, EXPLORE_MAX_SEQS);
}

static int explore_set_steps(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, EXPLORE_MAX_STEPS);
}

static const struct kernel_param_ops explore_seqs_ops = {
	.set = explore_set_seqs,
	.get = param_get_uint,
};

static const struct kernel_param_ops explore_steps_ops = {
	.set = explore_set_steps,
	.get = param_get_uint,
};

static unsigned int explore_seqs = EXPLORE_SEQS;
module_param_cb(explore_seqs, &explore_seqs_ops, &explore_seqs, 0444);
MODULE_PARM_DESC(explore_seqs,
		 "nvme_hmb_explore: sequences to run, 1-4096 (default 32)");

static unsigned int explore_steps = EXPLORE_STEPS;
module_param_cb(explore_steps, &explore_steps_ops, &explore_steps, 0444);
MODULE_PARM_DESC(explore_steps,
		 "nvme_hmb_explore: steps of each sequence, 1-100000 (default 60)");

static bool explore_trace;
module_param(explore_trace, bool, 0444);
MODULE_PARM_DESC(explore_trace,
		 "nvme_hmb_explore: print every step, for a replay (default N)");

/*
 * The seeds of explore_seed=0.  Those that found a defect stay first, as
 * regression tests (with this generator: a change to it changes what a
 * seed does).
 */
static const u32 explore_default_seeds[] = {
	30128,	/* 290 entries in a list of 256 (a grow's list put back) */
	30281,	/* MR=1 of a set the controller never held (shared) */
	30039,	/* MR=1 after a failed disable and an unreported reset */
	30017,	/* the list at the controller named another set (grow) */
	30063, 30068, 30158, 30329, 30023,	/* the same */
};

static u32 explore_seq_seed(unsigned int seq)
{
	if (explore_seed)
		return explore_seed + seq;
	if (seq < ARRAY_SIZE(explore_default_seeds))
		return explore_default_seeds[seq];
	return seq + 1;
}

/* ---------------------------------------------------------------------
 * The explorer's state and its shadow of the engine
 */

struct explore_profile {
	const char *name;
	struct nvme_hmb_id id;
};

/* Identify profiles: HMPRE, HMMIN, HMMINDS (4 KiB units), HMMAXD. */
static const struct explore_profile explore_profiles[] = {
	{ "bg5", { 16384, 3584, 1, 1024 } },
	{ "p3plus", { 8192, 8192, 512, 16 } },
	{ "hmmaxd8", { 51200, 823, 0, 8 } },
	{ "small", { 4096, 256, 1, 512 } },	/* lists enlarge at 1 MiB */
};

/* What memory is like for a while, as the allocation seam sees it. */
enum explore_alloc {
	EXPLORE_ALLOC_OK,
	EXPLORE_ALLOC_ABOVE,	/* nothing above a size: fragmented */
	EXPLORE_ALLOC_ALL,	/* nothing at all */
};

struct explore {
	struct kunit *test;
	struct nvme_hmb_mock *mock;
	struct nvme_hmb_ctrl *ctrl;
	const struct explore_profile *prof;
	bool shared;
	struct rnd_state rnd;
	u32 seed;
	unsigned int seq;
	unsigned int step;
	s64 dma_start;		/* nvme_hmb_dma_allocs before the mock */
	bool failed;

	/* The shadow: what the engine cannot know */
	bool reset_unreported;	/* a reset happened, or is under way */
	bool resetting;		/* under way: no command is sent */
	unsigned int reset_steps;	/* steps it still lasts */
	bool other_on;		/* the other driver runs its HMB */
	bool gone;
	unsigned int after_gone;	/* steps taken since */

	/* Faults armed for this step */
	bool set_armed, get_armed;
	unsigned int set_skip, get_skip;
	bool set_eagain, get_eagain;
	enum explore_alloc alloc;
	u64 alloc_above;
	unsigned int alloc_steps;	/* steps it stays so */
	bool nth_armed;		/* this step, also fail ... */
	unsigned int alloc_nth;	/* ... the n-th allocation of each build */

	/* What the last steps did, oldest first from log_next */
	char line[EXPLORE_LINE];
	size_t len;
	char log[EXPLORE_LOG][EXPLORE_LINE];
	unsigned int logged;
};

static __printf(2, 3) void explore_log(struct explore *x, const char *fmt,
				       ...)
{
	va_list args;

	va_start(args, fmt);
	x->len += vscnprintf(x->line + x->len, sizeof(x->line) - x->len, fmt,
			     args);
	va_end(args);
}

/* A size for the log: M when whole MiB, else K. */
static void explore_log_size(struct explore *x, u64 bytes)
{
	if (bytes & (SZ_1M - 1))
		explore_log(x, "%lluK", bytes >> 10);
	else
		explore_log(x, "%lluM", bytes >> 20);
}

/* A return value for the log: an errno by name, an NVMe status in hex. */
static void explore_log_ret(struct explore *x, int ret)
{
	if (ret < 0)
		explore_log(x, " = %pe", ERR_PTR(ret));
	else if (ret)
		explore_log(x, " = status %#x", ret);
	else
		explore_log(x, " = 0");
}

static u32 explore_rnd(struct explore *x, u32 n)
{
	return n ? prandom_u32_state(&x->rnd) % n : 0;
}

static u64 explore_min(struct explore *x)
{
	return max_t(u64, (u64)x->prof->id.hmmin << 12, SZ_4K);
}

static u64 explore_pref(struct explore *x)
{
	return max_t(u64, (u64)x->prof->id.hmpre << 12, explore_min(x));
}

/*
 * What the engine's own allocations are now, from its set: the list,
 * the buffers (or one IOVA-contiguous buffer).  The one place that knows
 * the layout of struct nvme_hmb_buf.
 */
static s64 engine_allocs(const struct nvme_hmb_buf *buf)
{
	return (buf->descs ? 1 : 0) + (buf->sgt ? 1 : buf->nr_chunks);
}

/* ---------------------------------------------------------------------
 * Operations: the engine's entry points and the controller's doings
 */

/* When an operation applies. */
#define EXPLORE_SHARED	BIT(0)	/* a controller shared with a driver */
#define EXPLORE_AWAKE	BIT(1)	/* not in system sleep */
#define EXPLORE_ASLEEP	BIT(2)	/* in system sleep */

/* A limit: off, below HMMIN, HMMIN, near what is held, up to HMPRE, above. */
static u64 explore_limit(struct explore *x)
{
	u64 min = explore_min(x), pref = explore_pref(x);
	u64 held = nvme_hmb_held(x->ctrl), delta;
	u64 unit = explore_rnd(x, 4) ? SZ_1M : SZ_4K;

	switch (explore_rnd(x, 12)) {
	case 0:
		return 0;
	case 1:
		return round_down(explore_rnd(x, min), SZ_4K);
	case 2:
		return min;
	case 3:
		return pref + SZ_1M * explore_rnd(x, 2 * (pref >> 20) + 1);
	case 4:
	case 5:
	case 6:
		/* A little more or less than held: small grows, shrinks. */
		delta = (1 + explore_rnd(x, 8)) *
			(explore_rnd(x, 2) ? SZ_64K : SZ_1M);
		if (explore_rnd(x, 2))
			return held + delta;
		return held > delta ? held - delta : 0;
	default:
		return round_down(min + explore_rnd(x, pref - min + 1), unit);
	}
}

static void op_set_limit(struct explore *x)
{
	u64 limit = explore_limit(x);

	explore_log(x, " ");
	explore_log_size(x, limit);
	explore_log_ret(x, nvme_hmb_set_limit(x->ctrl, limit));
}

static void op_start(struct explore *x)
{
	explore_log_ret(x, nvme_hmb_start(x->ctrl));
}

/*
 * The reclaim work, called as the shrinker's work calls it.  Reclaim is
 * allowed for this call only: the real shrinker stays away from the
 * controller, so that the seed alone decides what happens.
 */
static void explore_reclaim(struct explore *x, bool severe)
{
	struct nvme_hmb_ctrl *ctrl = x->ctrl;
	u64 want;

	switch (explore_rnd(x, 4)) {
	case 0:
		want = SZ_4K;
		break;
	case 1:
		want = nvme_hmb_held(ctrl);
		break;
	default:
		want = SZ_1M * (1 + explore_rnd(x, 32));
		break;
	}
	explore_log(x, " ");
	explore_log_size(x, want);
	mutex_lock(&ctrl->lock);
	WRITE_ONCE(ctrl->reclaim, true);
	ctrl->reclaiming = true;
	nvme_hmb_reclaim_locked(ctrl, want, severe);
	ctrl->reclaiming = false;
	WRITE_ONCE(ctrl->reclaim, false);
	mutex_unlock(&ctrl->lock);
}

static void op_reclaim(struct explore *x)
{
	explore_reclaim(x, false);
}

static void op_reclaim_severe(struct explore *x)
{
	explore_reclaim(x, true);
}

static void op_reclaim_floor(struct explore *x)
{
	u64 floor = explore_rnd(x, 2) ? 0 :
		    explore_min(x) + SZ_1M * explore_rnd(x, 16);

	explore_log(x, " ");
	explore_log_size(x, floor);
	explore_log_ret(x, nvme_hmb_set_reclaim(x->ctrl, -1, floor));
}

/* The regrow work, its quiet period long over (as in ctrl_kunit.c). */
static void op_regrow(struct explore *x)
{
	struct nvme_hmb_ctrl *ctrl = x->ctrl;
	unsigned long long_ago = jiffies - 3600 * HZ;

	mutex_lock(&ctrl->lock);
	ctrl->last_reclaim = long_ago;
	WRITE_ONCE(nvme_hmb_last_pressure, long_ago);
	nvme_hmb_regrow_locked(ctrl);
	mutex_unlock(&ctrl->lock);
}

/*
 * A controller reset, not reported yet; one under way is done.  The
 * other driver, while it runs its HMB, sets its buffer up again in every
 * reset, as nvme-pci does.
 */
static void explore_reset(struct explore *x)
{
	if (x->resetting) {
		x->resetting = false;
		nvme_hmb_mock_fail_set(x->mock, 0, 0);
		nvme_hmb_mock_fail_get(x->mock, 0);
	}
	nvme_hmb_mock_silent_reset(x->mock);
	x->reset_unreported = true;
	if (x->other_on && nvme_hmb_mock_other(x->mock, true))
		explore_log(x, " (other driver refused)");
}

/* A reset, reported at once. */
static void op_reset(struct explore *x)
{
	explore_reset(x);
	nvme_hmb_report_reset(x->ctrl);
	x->reset_unreported = false;
}

/* A reset nobody reports yet, perhaps never. */
static void op_silent_reset(struct explore *x)
{
	explore_reset(x);
}

/*
 * A report: of a silent reset, late, of none at all, or of an earlier
 * reset while another is under way.
 */
static void op_report_reset(struct explore *x)
{
	nvme_hmb_report_reset(x->ctrl);
	x->reset_unreported = x->resetting;
}

static void op_suspend(struct explore *x)
{
	nvme_hmb_sleep(x->ctrl, false);
}

static void op_resume(struct explore *x)
{
	nvme_hmb_wake(x->ctrl, false);
}

static void op_hibernate(struct explore *x)
{
	nvme_hmb_sleep(x->ctrl, true);
}

static void op_restore(struct explore *x)
{
	nvme_hmb_wake(x->ctrl, true);
}

/* The other driver enables its buffer: refused while one is enabled. */
static void op_other_take(struct explore *x)
{
	int ret = nvme_hmb_mock_other(x->mock, true);

	x->other_on |= !ret;
	explore_log_ret(x, ret);
}

/* A reset in which the other driver sets its own buffer up. */
static void op_other_in_reset(struct explore *x)
{
	x->other_on = true;
	explore_reset(x);
}

/* The other driver disables its buffer, if enabled, and stops. */
static void op_other_release(struct explore *x)
{
	x->other_on = false;
	explore_log_ret(x, nvme_hmb_mock_other(x->mock, false));
}

/* Surprise removal: the controller stops, then the engine is told. */
static void op_gone(struct explore *x)
{
	x->other_on = false;
	explore_reset(x);
	nvme_hmb_report_gone(x->ctrl);
	x->gone = true;
}

struct explore_op {
	const char *name;
	unsigned int weight;
	unsigned int when;	/* EXPLORE_*: 0 = always */
	void (*fn)(struct explore *x);
};

static const struct explore_op explore_ops[] = {
	{ "set_limit", 35, 0, op_set_limit },
	{ "start", 2, 0, op_start },
	{ "reclaim", 7, 0, op_reclaim },
	{ "reclaim_severe", 4, 0, op_reclaim_severe },
	{ "reclaim_floor", 2, 0, op_reclaim_floor },
	{ "regrow", 6, 0, op_regrow },
	{ "reset", 6, 0, op_reset },
	{ "silent_reset", 4, 0, op_silent_reset },
	{ "report_reset", 6, 0, op_report_reset },
	{ "suspend", 4, EXPLORE_AWAKE, op_suspend },
	{ "resume", 10, EXPLORE_ASLEEP, op_resume },
	{ "hibernate", 3, EXPLORE_AWAKE, op_hibernate },
	{ "restore", 8, EXPLORE_ASLEEP, op_restore },
	{ "other_take", 3, EXPLORE_SHARED, op_other_take },
	{ "other_in_reset", 3, EXPLORE_SHARED, op_other_in_reset },
	{ "other_release", 5, EXPLORE_SHARED, op_other_release },
	{ "gone", 1, 0, op_gone },
};

static bool explore_op_applies(struct explore *x, const struct explore_op *op)
{
	bool asleep = READ_ONCE(x->ctrl->sleeping);

	if ((op->when & EXPLORE_SHARED) && !x->shared)
		return false;
	if ((op->when & EXPLORE_AWAKE) && asleep)
		return false;
	return !(op->when & EXPLORE_ASLEEP) || asleep;
}

static const struct explore_op *explore_pick_op(struct explore *x)
{
	unsigned int i, total = 0, r;

	for (i = 0; i < ARRAY_SIZE(explore_ops); i++) {
		if (explore_op_applies(x, &explore_ops[i]))
			total += explore_ops[i].weight;
	}
	r = explore_rnd(x, total);
	for (i = 0; i < ARRAY_SIZE(explore_ops); i++) {
		if (!explore_op_applies(x, &explore_ops[i]))
			continue;
		if (r < explore_ops[i].weight)
			break;
		r -= explore_ops[i].weight;
	}
	return &explore_ops[i];
}

/* ---------------------------------------------------------------------
 * Faults, armed before a step and disarmed after it
 */

enum explore_fault_kind {
	EXPLORE_F_SET,		/* one Set Features, not carried out */
	EXPLORE_F_SETS,		/* two or three in a row */
	EXPLORE_F_SET_EXECUTED,	/* carried out, then the error status */
	EXPLORE_F_GET,		/* one Get Features */
	EXPLORE_F_ALLOC_NTH,	/* the n-th allocation of every build */
	EXPLORE_F_ALLOC_ABOVE,	/* memory fragmented for some steps */
	EXPLORE_F_ALLOC_ALL,	/* memory exhausted for some steps */
	EXPLORE_F_ALLOC_OK,	/* memory back */
};

struct explore_fault {
	const char *name;
	unsigned int weight;
	enum explore_fault_kind kind;
	int status;		/* negative errno or NVMe status */
};

/*
 * -EAGAIN: the backend did not send it, a reset is under way.  -EINTR,
 * -EIO: lost before the controller saw it.  -ETIMEDOUT: carried out, the
 * completion lost.  Statuses: refused (Invalid Field) or maybe carried
 * out (the others).
 */
static const struct explore_fault explore_faults[] = {
	{ "set -EAGAIN", 8, EXPLORE_F_SET, -EAGAIN },
	{ "set -EINTR", 2, EXPLORE_F_SET, -EINTR },
	{ "set -EIO", 1, EXPLORE_F_SET, -EIO },
	{ "set -ETIMEDOUT", 3, EXPLORE_F_SET, -ETIMEDOUT },
	{ "set Invalid Field", 4, EXPLORE_F_SET, INVALID_FIELD },
	{ "set Internal Error", 2, EXPLORE_F_SET, NVME_SC_INTERNAL },
	{ "set Command Sequence Error", 2, EXPLORE_F_SET, SEQ_ERROR },
	{ "set Data Transfer Error", 1, EXPLORE_F_SET,
	  NVME_SC_DATA_XFER_ERROR },
	{ "set Abort Requested", 1, EXPLORE_F_SET, NVME_SC_ABORT_REQ },
	{ "sets -EIO", 1, EXPLORE_F_SETS, -EIO },
	{ "sets Invalid Field", 1, EXPLORE_F_SETS, INVALID_FIELD },
	{ "set executed, Internal Error", 2, EXPLORE_F_SET_EXECUTED,
	  NVME_SC_INTERNAL },
	{ "set executed, Data Transfer Error", 1, EXPLORE_F_SET_EXECUTED,
	  NVME_SC_DATA_XFER_ERROR },
	{ "get -EAGAIN", 8, EXPLORE_F_GET, -EAGAIN },
	{ "get Invalid Field", 2, EXPLORE_F_GET, INVALID_FIELD },
	{ "get -EIO", 1, EXPLORE_F_GET, -EIO },
	{ "alloc nth", 4, EXPLORE_F_ALLOC_NTH },
	{ "alloc above", 10, EXPLORE_F_ALLOC_ABOVE },
	{ "alloc all", 6, EXPLORE_F_ALLOC_ALL },
	{ "alloc ok", 3, EXPLORE_F_ALLOC_OK },
};

/* Commands to let through first: mostly none, up to three. */
static unsigned int explore_skip(struct explore *x)
{
	static const u8 skips[] = { 0, 0, 0, 0, 0, 1, 1, 1, 2, 3 };

	return skips[explore_rnd(x, ARRAY_SIZE(skips))];
}

static bool explore_alloc_fails(void *priv, unsigned int nth, u64 size)
{
	struct explore *x = priv;

	if (x->nth_armed && nth == x->alloc_nth)
		return true;
	switch (x->alloc) {
	case EXPLORE_ALLOC_ABOVE:
		return size > x->alloc_above;
	case EXPLORE_ALLOC_ALL:
		return true;
	default:
		return false;
	}
}

static void explore_arm(struct explore *x, const struct explore_fault *f)
{
	static const u64 above[] = { SZ_4K, SZ_16K, SZ_64K, SZ_128K, SZ_1M };
	unsigned int skip = explore_skip(x), nr;

	switch (f->kind) {
	case EXPLORE_F_SET:
	case EXPLORE_F_SETS:
	case EXPLORE_F_SET_EXECUTED:
		if (x->set_armed)
			return;
		x->set_armed = true;
		x->set_skip = skip;
		x->set_eagain = f->status == -EAGAIN;
		nr = f->kind == EXPLORE_F_SETS ? 2 + explore_rnd(x, 2) : 1;
		if (f->kind == EXPLORE_F_SET_EXECUTED)
			nvme_hmb_mock_fail_set_executed(x->mock, skip,
							f->status);
		else
			nvme_hmb_mock_fail_sets(x->mock, skip, nr, f->status);
		explore_log(x, " [%s", f->name);
		if (nr > 1)
			explore_log(x, " x%u", nr);
		break;
	case EXPLORE_F_GET:
		if (x->get_armed)
			return;
		x->get_armed = true;
		x->get_skip = skip;
		x->get_eagain = f->status == -EAGAIN;
		nvme_hmb_mock_fail_get_skip(x->mock, skip, f->status);
		explore_log(x, " [%s", f->name);
		break;
	case EXPLORE_F_ALLOC_NTH:
		x->nth_armed = true;
		x->alloc_nth = explore_rnd(x, 8);
		explore_log(x, " [alloc #%u]", x->alloc_nth);
		return;
	case EXPLORE_F_ALLOC_ABOVE:
		x->alloc = EXPLORE_ALLOC_ABOVE;
		x->alloc_above = above[explore_rnd(x, ARRAY_SIZE(above))];
		x->alloc_steps = 1 + explore_rnd(x, 12);
		explore_log(x, " [alloc above ");
		explore_log_size(x, x->alloc_above);
		explore_log(x, " for %u]", x->alloc_steps);
		return;
	case EXPLORE_F_ALLOC_ALL:
		x->alloc = EXPLORE_ALLOC_ALL;
		x->alloc_steps = 1 + explore_rnd(x, 8);
		explore_log(x, " [alloc all for %u]", x->alloc_steps);
		return;
	case EXPLORE_F_ALLOC_OK:
		x->alloc = EXPLORE_ALLOC_OK;
		x->alloc_steps = 0;
		explore_log(x, " [alloc ok]");
		return;
	}
	if (skip)
		explore_log(x, " after %u", skip);
	explore_log(x, "]");
}

/* No fault, one or two (of different kinds) before a step. */
static void explore_arm_faults(struct explore *x)
{
	unsigned int i, n, total = 0, r;
	u32 dice = explore_rnd(x, 100);

	n = dice < 40 ? 0 : dice < 80 ? 1 : 2;
	for (i = 0; i < ARRAY_SIZE(explore_faults); i++)
		total += explore_faults[i].weight;
	while (n--) {
		r = explore_rnd(x, total);
		for (i = 0; r >= explore_faults[i].weight; i++)
			r -= explore_faults[i].weight;
		explore_arm(x, &explore_faults[i]);
	}
}

/*
 * While a reset is under way the backend sends nothing: every Set and Get
 * Features answers -EAGAIN, for as many steps as the reset lasts.
 */
static void explore_arm_resetting(struct explore *x)
{
	if (!x->resetting)
		return;
	nvme_hmb_mock_fail_sets(x->mock, 0, UINT_MAX, -EAGAIN);
	nvme_hmb_mock_fail_gets(x->mock, 0, UINT_MAX, -EAGAIN);
	x->set_armed = true;
	x->get_armed = true;
	explore_log(x, " [resetting]");
}

/*
 * After a step: every command fault is disarmed.  One that answered
 * -EAGAIN said a reset is under way: it lasts up to five more steps,
 * then is done (EHM=0), and the engine is told when the explorer
 * reports a reset, if ever.
 */
static void explore_disarm(struct explore *x,
			   const struct nvme_hmb_mock_view *before)
{
	struct nvme_hmb_mock_view v;
	bool begun;

	nvme_hmb_mock_view(x->mock, &v);
	begun = (x->set_eagain && v.set_cmds - before->set_cmds >
				  x->set_skip) ||
		(x->get_eagain && v.get_cmds - before->get_cmds >
				  x->get_skip);
	nvme_hmb_mock_fail_set(x->mock, 0, 0);
	nvme_hmb_mock_fail_get(x->mock, 0);
	x->set_armed = false;
	x->get_armed = false;
	x->set_eagain = false;
	x->get_eagain = false;
	x->nth_armed = false;
	if (x->alloc_steps && !--x->alloc_steps)
		x->alloc = EXPLORE_ALLOC_OK;
	if (begun && !x->resetting) {
		x->resetting = true;
		x->reset_steps = explore_rnd(x, 6);
		x->reset_unreported = true;
		explore_log(x, " (reset under way)");
	}
	if (!x->resetting)
		return;
	if (x->reset_steps) {
		x->reset_steps--;
		return;
	}
	explore_log(x, " (reset done)");
	explore_reset(x);
}

/* ---------------------------------------------------------------------
 * Steps, invariants, failures
 */

static const char * const explore_states[] = {
	[NVME_HMB_OFF]		= "off",
	[NVME_HMB_ENABLED]	= "enabled",
	[NVME_HMB_SUSPENDED]	= "suspended",
	[NVME_HMB_FAILED]	= "failed",
};

static const char *explore_state(enum nvme_hmb_state state)
{
	return state < ARRAY_SIZE(explore_states) ? explore_states[state] :
						    "?";
}

/* The step's line ends with what the engine and the controller hold. */
static void explore_log_state(struct explore *x)
{
	struct nvme_hmb_ctrl *ctrl = x->ctrl;
	struct nvme_hmb_mock_view v;
	enum nvme_hmb_state state;
	u32 nr, max;
	u64 size;

	mutex_lock(&ctrl->lock);
	state = ctrl->state;
	size = ctrl->buf.size;
	nr = ctrl->buf.nr_chunks;
	max = ctrl->buf.max_chunks;
	mutex_unlock(&ctrl->lock);
	nvme_hmb_mock_view(x->mock, &v);
	explore_log(x, " | %s ", explore_state(state));
	explore_log_size(x, size);
	explore_log(x, " %u/%u", nr, max);
	if (v.ehm) {
		explore_log(x, "; ctrl ");
		explore_log_size(x, (u64)v.hsize << 12);
		explore_log(x, " %u", v.hmdlec);
	}
}

static void explore_push_log(struct explore *x)
{
	strscpy(x->log[x->logged++ % EXPLORE_LOG], x->line, EXPLORE_LINE);
}

static __printf(2, 3) void explore_fail(struct explore *x, const char *fmt,
					...)
{
	struct kunit *test = x->test;
	unsigned int i, first;
	char why[160];
	va_list args;

	va_start(args, fmt);
	vscnprintf(why, sizeof(why), fmt, args);
	va_end(args);
	x->failed = true;
	KUNIT_FAIL(test, "seed %u seq %u step %u (%s, %s): %s", x->seed,
		   x->seq, x->step, x->prof->name,
		   x->shared ? "shared" : "plain", why);
	kunit_err(test,
		  "replay: nvme_hmb_kunit.explore_seed=%u explore_seqs=1 explore_steps=%u\n",
		  x->seed, x->step);
	first = x->logged > EXPLORE_LOG ? x->logged - EXPLORE_LOG : 0;
	kunit_err(test, "the last %u operations:\n", x->logged - first);
	for (i = first; i < x->logged; i++)
		kunit_err(test, "  %s\n", x->log[i % EXPLORE_LOG]);
}

/* Invariants (a) to (d); false, and the failure said, when one breaks. */
static bool explore_check(struct explore *x)
{
	struct nvme_hmb_ctrl *ctrl = x->ctrl;
	struct nvme_hmb_mock_view v;
	enum nvme_hmb_state state;
	struct nvme_hmb_buf buf;
	s64 held, allocs;

	nvme_hmb_mock_check(x->mock);
	nvme_hmb_mock_view(x->mock, &v);
	if (v.violations) {
		explore_fail(x, "(a) the mock counted %llu violation(s)%s%s",
			     v.violations, v.why ? "; last rejected: " : "",
			     v.why ?: "");
		return false;
	}

	mutex_lock(&ctrl->lock);
	state = ctrl->state;
	buf = ctrl->buf;
	held = engine_allocs(&ctrl->buf);
	allocs = atomic64_read(&nvme_hmb_dma_allocs) - x->dma_start;
	mutex_unlock(&ctrl->lock);

	if (buf.descs && (buf.nr_chunks > buf.max_chunks ||
			  buf.max_chunks * sizeof(*buf.descs) >
			  buf.descs_bytes)) {
		explore_fail(x, "(b) %u entries in a list of %u (%zu bytes)",
			     buf.nr_chunks, buf.max_chunks, buf.descs_bytes);
		return false;
	}
	if (v.ehm && buf.descs && v.hmdla == buf.descs_dma &&
	    (v.hmdlec != buf.nr_chunks ||
	     (u64)v.hsize << 12 != buf.size)) {
		explore_fail(x, "(b) at the list: the controller %llu KiB/%u, the set %llu KiB/%u",
			     (u64)v.hsize << 2, v.hmdlec, buf.size >> 10,
			     buf.nr_chunks);
		return false;
	}

	if (state == NVME_HMB_ENABLED && !x->reset_unreported &&
	    (!v.ehm || (u64)v.hsize << 12 != nvme_hmb_size(ctrl) ||
	     v.hmdlec != nvme_hmb_nr_descs(ctrl))) {
		explore_fail(x, "(c) enabled: sysfs %llu KiB/%u, the controller %llu KiB/%u%s",
			     nvme_hmb_size(ctrl) >> 10, nvme_hmb_nr_descs(ctrl),
			     (u64)v.hsize << 2, v.hmdlec,
			     v.ehm ? "" : " (nothing enabled)");
		return false;
	}
	if (state == NVME_HMB_OFF && (held || buf.size)) {
		explore_fail(x, "(c) off, yet the engine holds %lld allocations, %llu KiB",
			     held, buf.size >> 10);
		return false;
	}

	if (allocs != held) {
		explore_fail(x, "(d) %lld DMA allocations held, the engine's set has %lld",
			     allocs, held);
		return false;
	}
	return true;
}

/* One step: faults, an operation, the faults' aftermath. */
static void explore_step(struct explore *x)
{
	const struct explore_op *op = explore_pick_op(x);
	struct nvme_hmb_mock_view before;

	x->len = 0;
	x->line[0] = '\0';
	explore_log(x, "#%u", x->step);
	nvme_hmb_mock_view(x->mock, &before);
	explore_arm_resetting(x);
	explore_arm_faults(x);
	explore_log(x, " %s", op->name);
	op->fn(x);
	explore_disarm(x, &before);
	/* The regrow work is the explorer's regrow step: never on its own. */
	cancel_delayed_work_sync(&x->ctrl->regrow_work);
	explore_log_state(x);
	explore_push_log(x);
	if (explore_trace)
		kunit_info(x->test, "%s\n", x->line);
}

/*
 * The end of a sequence: faults disarmed, a failed controller reset so
 * that it can let go, then detach.  (e): nothing left, no violation.
 */
static void explore_detach(struct explore *x)
{
	struct nvme_hmb_mock_view v;
	s64 left;

	nvme_hmb_mock_fail_set(x->mock, 0, 0);
	nvme_hmb_mock_fail_get(x->mock, 0);
	x->resetting = false;
	x->alloc = EXPLORE_ALLOC_OK;
	if (nvme_hmb_state(x->ctrl) == NVME_HMB_FAILED) {
		explore_reset(x);
		nvme_hmb_report_reset(x->ctrl);
	}
	nvme_hmb_mock_check(x->mock);
	nvme_hmb_mock_view(x->mock, &v);
	nvme_hmb_mock_destroy(x->mock);
	x->mock = NULL;
	x->ctrl = NULL;
	left = atomic64_read(&nvme_hmb_dma_allocs) - x->dma_start;
	if (x->failed) {
		if (left)
			kunit_info(x->test, "after the failure, detach left %lld DMA allocations\n",
				   left);
		return;
	}
	if (v.violations || left)
		explore_fail(x, "(e) detach: %llu violation(s), %lld DMA allocations left",
			     v.violations, left);
}

/* ---------------------------------------------------------------------
 * The suite
 */

static const char explore_slots[EXPLORE_MAX_SEQS];

/* One case per sequence: "seq N seed S". */
static const void *explore_gen_params(const void *prev, char *desc)
{
	unsigned int seq = prev ? (const char *)prev - explore_slots + 1 : 0;

	if (seq >= explore_seqs)
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "seq %u seed %u", seq,
		 explore_seq_seed(seq));
	return &explore_slots[seq];
}

/*
 * KUnit runs a module's suites while the module is coming, before its
 * parameters are parsed (6.1: kunit_module_notify() at
 * MODULE_STATE_COMING, ahead of parse_args() in load_module()): apply
 * ours from the module's arguments here, with their own ops, so that
 * modprobe's options and the kernel command line's take effect.
 */
static int explore_suite_init(struct kunit_suite *suite)
{
#ifdef MODULE
	const struct module *mod = THIS_MODULE;
	char *args, *rest, *word, *val;
	unsigned int i;
	int ret = 0;

	if (!mod->args || !*mod->args)
		return 0;
	args = kstrdup(mod->args, GFP_KERNEL);
	if (!args)
		return -ENOMEM;
	rest = args;
	while (!ret && (word = strsep(&rest, " \t\n"))) {
		val = strchr(word, '=');
		if (!val)
			continue;
		*val++ = '\0';
		for (i = 0; i < mod->num_kp; i++) {
			const struct kernel_param *kp = &mod->kp[i];

			if (!strcmp(kp->name, word) && kp->ops->set)
				ret = kp->ops->set(val, kp);
		}
	}
	kfree(args);
	return ret;
#else
	return 0;
#endif
}

static int explore_init(struct kunit *test)
{
	struct explore *x;

	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	x->test = test;
	test->priv = x;
	return 0;
}

/* Only when a sequence was cut short by an assertion. */
static void explore_exit(struct kunit *test)
{
	struct explore *x = test->priv;

	if (!IS_ERR_OR_NULL(x->mock)) {
		nvme_hmb_mock_fail_set(x->mock, 0, 0);
		nvme_hmb_mock_fail_get(x->mock, 0);
		x->alloc = EXPLORE_ALLOC_OK;
		nvme_hmb_mock_destroy(x->mock);
	}
}

/*
 * A sequence.  Its seed picks the profile and alternates plain and
 * shared mocks; the mock's engine never reclaims on its own (reclaim is
 * the explorer's step) and allocates through the explorer's seam.
 */
static void explore_sequence(struct kunit *test)
{
	const char *slot = test->param_value;
	struct explore *x = test->priv;
	struct nvme_hmb_alloc_hook hook = {
		.fail = explore_alloc_fails, .priv = x,
	};
	ktime_t start = ktime_get();

	x->seq = slot - explore_slots;
	x->seed = explore_seq_seed(x->seq);
	prandom_seed_state(&x->rnd, x->seed);
	x->shared = x->seed & 1;
	x->prof = &explore_profiles[(x->seed >> 1) %
				    ARRAY_SIZE(explore_profiles)];
	x->dma_start = atomic64_read(&nvme_hmb_dma_allocs);
	x->mock = x->shared ?
		  nvme_hmb_mock_create_shared("explore0", &x->prof->id) :
		  nvme_hmb_mock_create("explore0", &x->prof->id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, x->mock);
	x->ctrl = nvme_hmb_mock_ctrl(x->mock);
	nvme_hmb_set_alloc_hook(x->ctrl, &hook);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_reclaim(x->ctrl, 0, -1), 0);

	for (x->step = 1; x->step <= explore_steps; x->step++) {
		explore_step(x);
		if (!explore_check(x))
			break;
		if (x->gone && x->after_gone++ == EXPLORE_AFTER_GONE)
			break;
	}
	explore_detach(x);
	kunit_info(test, "seed %u (%s, %s): %u steps, %lld ms\n", x->seed,
		   x->prof->name, x->shared ? "shared" : "plain",
		   min(x->step, explore_steps),
		   ktime_ms_delta(ktime_get(), start));
}

static struct kunit_case explore_cases[] = {
	KUNIT_CASE_PARAM(explore_sequence, explore_gen_params),
	{}
};

static struct kunit_suite explore_suite = {
	.name = "nvme_hmb_explore",
	.suite_init = explore_suite_init,
	.init = explore_init,
	.exit = explore_exit,
	.test_cases = explore_cases,
};

kunit_test_suite(explore_suite);
