// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the controller lifecycle against mock controllers.  After every
 * test the mock has seen no violation of the host's contract; kmemleak and
 * DMA-API debug watch that nothing leaks.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/dma-direct.h>
#include <linux/err.h>
#include <linux/nvme.h>
#include <linux/shrinker.h>
#include <linux/sizes.h>

#include "internal.h"
#include "mock/mock.h"

#define MIB(x)	((u64)(x) << 20)

static const struct nvme_hmb_id bg5 = { 16384, 3584, 1, 1024 };
static const struct nvme_hmb_id p3plus = { 8192, 8192, 512, 16 };
static const struct nvme_hmb_id hmmaxd8 = { 51200, 823, 0, 8 };
static const struct nvme_hmb_id min_is_pref = { 16384, 16384, 0, 0 };

#define INVALID_FIELD	(NVME_SC_INVALID_FIELD | NVME_HMB_STATUS_DNR)

struct ctrl_test {
	struct nvme_hmb_mock *mock;
	struct nvme_hmb_ctrl *ctrl;
	u64 fail_above;
	s64 dma_allocs;		/* the engine's DMA allocations at start */
};

static int ctrl_test_init(struct kunit *test)
{
	struct ctrl_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->dma_allocs = atomic64_read(&nvme_hmb_dma_allocs);
	test->priv = t;
	return 0;
}

/*
 * Every test ends here: no violation, a clean detach, and every DMA
 * allocation the engine made given back (its own count, since the DMA
 * API's debugging does not see buffers without a kernel mapping).
 */
static void ctrl_test_exit(struct kunit *test)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_mock_view v;

	if (!IS_ERR_OR_NULL(t->mock)) {
		nvme_hmb_mock_check(t->mock);
		nvme_hmb_mock_view(t->mock, &v);
		KUNIT_EXPECT_EQ(test, v.violations, 0);
		nvme_hmb_mock_destroy(t->mock);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
}

static void new_mock(struct kunit *test, const struct nvme_hmb_id *id)
{
	struct ctrl_test *t = test->priv;

	t->mock = nvme_hmb_mock_create("kunit0", id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->mock);
	t->ctrl = nvme_hmb_mock_ctrl(t->mock);
}

/* A mock of @id with its HMB set up under @limit. */
static struct ctrl_test *enabled_mock(struct kunit *test,
				      const struct nvme_hmb_id *id, u64 limit)
{
	struct ctrl_test *t = test->priv;

	new_mock(test, id);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, limit), 0);
	return t;
}

/* The engine and the mock agree on what is enabled. */
static void expect_agree(struct kunit *test)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_mock_view v;

	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.violations, 0);
	KUNIT_EXPECT_EQ(test, v.ehm, nvme_hmb_state(t->ctrl) ==
				     NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, (u64)v.hsize << 12, nvme_hmb_size(t->ctrl));
	KUNIT_EXPECT_EQ(test, v.hmdlec, nvme_hmb_nr_descs(t->ctrl));
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.verify_mismatches, 0);
}

/* The controller stops using the buffer behind the engine's back. */
static void controller_lets_go(struct ctrl_test *t,
			       struct nvme_hmb_mock_view *view)
{
	nvme_hmb_mock_raw_set(t->mock, &(struct nvme_hmb_set_cmd){
		.cdw10 = NVME_FEAT_HOST_MEM_BUF });
	nvme_hmb_mock_view(t->mock, view);
}

static void enable_bg5(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(128));
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_GRANTED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.enables, 1);
	expect_agree(test);
}

static void enable_p3plus_limited(struct kunit *test)
{
	struct ctrl_test *t;

	new_mock(test, &p3plus);
	t = test->priv;
	/* HMMIN is 32 MiB: a 16 MiB limit leaves it off, and says why. */
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_HMMIN_ABOVE_LIMIT);
	expect_agree(test);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(32));
	KUNIT_EXPECT_LE(test, nvme_hmb_nr_descs(t->ctrl), 16);
	expect_agree(test);
}

static bool fail_above_seam(void *priv, unsigned int nth, u64 size)
{
	struct ctrl_test *t = priv;

	return nth && size > t->fail_above;
}

/* A mock of @id whose allocations above @fail_above fail. */
static struct ctrl_test *seamed_mock(struct kunit *test,
				     const struct nvme_hmb_id *id,
				     u64 fail_above)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_alloc_hook hook = {
		.fail = fail_above_seam, .priv = t,
	};

	new_mock(test, id);
	t->fail_above = fail_above;
	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	return t;
}

/* The page allocator's largest block, as on x86 without CMA. */
#define BUDDY_MAX	((u64)PAGE_SIZE * MAX_ORDER_NR_PAGES)

static void hmmaxd8_under_128(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &hmmaxd8, BUDDY_MAX);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(128)), 0);
	kunit_info(test, "HMPRE 51200 HMMIN 823 HMMAXD 8, limit 128 MiB: %llu MiB in %u descriptors (%s)\n",
		   nvme_hmb_size(t->ctrl) >> 20, nvme_hmb_nr_descs(t->ctrl),
		   nvme_hmb_reason_str(nvme_hmb_reason(t->ctrl)));
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), 8 * t->fail_above);
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 8);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_HMMAXD);
	expect_agree(test);
}

static void min_is_pref_fragmented(struct kunit *test)
{
	/* Nothing above 512 KiB: 128 buffers, still all of HMMIN. */
	struct ctrl_test *t = seamed_mock(test, &min_is_pref, SZ_512K);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(128)), 0);
	kunit_info(test, "HMMIN = HMPRE = 16384, nothing above 512 KiB: %llu MiB in %u descriptors (%s)\n",
		   nvme_hmb_size(t->ctrl) >> 20, nvme_hmb_nr_descs(t->ctrl),
		   nvme_hmb_reason_str(nvme_hmb_reason(t->ctrl)));
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 128);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_GRANTED);
	expect_agree(test);
}

/*
 * Grown from 26 MiB (6 x 4 + 2, 7 entries) to 128 MiB with HMMAXD 8:
 * adding to the buffers held reaches 30 MiB; a fresh set, 8 x 4 MiB,
 * reaches 32 MiB, which is what a fresh setup and Linux give.
 */
static void grow_rebuilds_when_hmmaxd_binds(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &hmmaxd8, BUDDY_MAX);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(26)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(26));
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 7);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(128)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), 8 * t->fail_above);
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 8);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_HMMAXD);
	expect_agree(test);
}

/* Fails every allocation: no memory to be had. */
/*
 * A controller reset: the controller gets the set it held back (MR=1),
 * its first return, nothing refused, and agrees with the engine.
 */
static void reset_returns_it(struct kunit *test)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_mock_view v;

	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, v.rejected, 0);
	expect_agree(test);
}

static bool fail_all_seam(void *priv, unsigned int nth, u64 size)
{
	return true;
}

/*
 * A grow that gets no buffer at all: the controller keeps the list it
 * holds, untouched.  Nothing is sent or disabled, the size stays, and the
 * buffer can still be returned (MR=1) after a reset.
 */
static void grow_gets_nothing(struct kunit *test)
{
	struct nvme_hmb_alloc_hook hook = { .fail = fail_all_seam };
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;
	dma_addr_t list;

	t = enabled_mock(test, &bg5, MIB(16));
	list = t->ctrl->buf.descs_dma;
	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	nvme_hmb_mock_view(t->mock, &before);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.descs_dma, list);
	KUNIT_EXPECT_GT(test, t->ctrl->stats.alloc_failures, 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resizes, 0);
	KUNIT_EXPECT_TRUE(test, t->ctrl->buf.returnable);
	expect_agree(test);
	reset_returns_it(test);
	/* Memory is back: the next resize grows. */
	nvme_hmb_set_alloc_hook(t->ctrl, NULL);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * A grow whose buffers are small (nothing above 64 KiB): the list the
 * controller holds is full at 256 entries, so the next set's list is
 * enlarged before any buffer is added; then no buffer comes.  The next
 * set, never written, goes, and the set lent to the controller is
 * untouched: nothing is sent, no DMA memory is left behind, and a return
 * (MR=1) after a reset gives the controller exactly the list it had.
 */
static void grow_enlarged_list_gets_nothing(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &bg5, SZ_64K);
	struct nvme_hmb_mock_view before, after;
	dma_addr_t list;
	s64 allocs;

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 256);
	KUNIT_ASSERT_EQ(test, t->ctrl->buf.max_chunks, 256);
	list = t->ctrl->buf.descs_dma;
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	t->fail_above = 0;		/* the new list, then no buffer */
	nvme_hmb_mock_view(t->mock, &before);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.descs_dma, list);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.max_chunks, 256);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	expect_agree(test);
	reset_returns_it(test);
	/* Buffers again: the list is enlarged and the grow goes through. */
	t->fail_above = SZ_64K;
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 1024);
	expect_agree(test);
}

/*
 * 16 MiB in 256 buffers of 64 KiB, then a grow to 64 MiB whose disable
 * answers @status: the set lent to the controller comes through it as it
 * was, list and buffers, and the set built beside it leaves no DMA memory
 * behind.
 */
static void grow_with_failed_disable(struct kunit *test, int status,
				     int expect)
{
	struct ctrl_test *t = test->priv;
	dma_addr_t list;
	s64 allocs;

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 256);
	list = t->ctrl->buf.descs_dma;
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	nvme_hmb_mock_fail_set(t->mock, 0, status);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), expect);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.descs_dma, list);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(16));
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.nr_chunks, 256);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.max_chunks, 256);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
}

/*
 * Two grows around a reset: the first one's disable cannot be sent (a
 * reset is under way), the second gets no buffer.  The set lent to the
 * controller stays exactly as the controller has it through both: the
 * reset's report returns it (MR=1), its HMDLEC within its list, and no
 * DMA memory is left behind by either grow.
 */
static void grows_around_reset(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &bg5, SZ_64K);
	s64 allocs;

	grow_with_failed_disable(test, -EAGAIN, -EBUSY);
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	expect_agree(test);

	t->fail_above = 0;		/* the next set's list, no buffer */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.nr_chunks, 256);
	KUNIT_EXPECT_LE(test, (u64)t->ctrl->buf.nr_chunks *
			sizeof(*t->ctrl->buf.descs), t->ctrl->buf.descs_bytes);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	expect_agree(test);

	reset_returns_it(test);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
}

static const struct nvme_hmb_id hmmaxd2 = { 4096, 1280, 0, 2 };

/*
 * HMMAXD 2 and 4 MiB buffers: 8 MiB.  Down to 6 MiB, cutting a whole
 * buffer would leave 4 MiB, below HMMIN (5 MiB): a smaller set (4 + 2) is
 * built first.  When none can be had the HMB and its limit stay.
 */
static void shrink_builds_before_switching(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &hmmaxd2, MIB(4));

	if (t->fail_above > BUDDY_MAX)
		kunit_skip(test, "needs 4 MiB page-allocator blocks");
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_size(t->ctrl), MIB(8));
	KUNIT_ASSERT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 2);

	t->fail_above = 0;	/* nothing more can be had */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(6)), -ENOMEM);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(8));
	KUNIT_EXPECT_EQ(test, t->ctrl->limit, MIB(16));
	expect_agree(test);

	t->fail_above = MIB(4);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(6)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(6));
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 2);
	expect_agree(test);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(5)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(5));
	expect_agree(test);
}

static void resize_both_ways(struct kunit *test)
{
	static const u64 limits[] = { 128, 32, 20, 0, 48, 64, 64, 16, 128 };
	static const u64 sizes[] = { 64, 32, 20, 0, 48, 64, 64, 16, 64 };
	struct ctrl_test *t;
	unsigned int i;

	new_mock(test, &bg5);
	t = test->priv;
	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl,
							 MIB(limits[i])), 0);
		KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_size(t->ctrl),
				    MIB(sizes[i]), "limit %llu MiB", limits[i]);
		expect_agree(test);
	}
	/* 16 MiB is still above HMMIN (14 MiB): enabled. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_GE(test, t->ctrl->stats.resizes, 5);
}

static void suspend_resume_mr(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	/* Suspended: a resize waits for resume. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_enables, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_refusals, 0);
	expect_agree(test);
}

static void mr_refused_falls_back(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_refusals, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

static void reset_returns_buffer(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resets, 1);
	expect_agree(test);
}

/*
 * A reset report that arrives after the engine already gave the
 * controller a new buffer (a resize raced the reset): nothing to do, and
 * above all no enable of a list the controller holds.
 */
static void late_reset_report(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	controller_lets_go(t, &before);		/* the reset itself */
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);		/* ... reported late */
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(32));
	expect_agree(test);
}

/*
 * The backend could not send a disable (-EAGAIN: the controller is being
 * reset): nothing changed and the resize is refused for now (-EBUSY);
 * once the reset is reported the same buffer is returned (MR=1), and the
 * report then finishes the resize.
 */
static void resetting_disable_not_sent(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 0, -EAGAIN);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.cmd_failures, 0);
	expect_agree(test);
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	/* The report returned it, then finished the shrink. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(32));
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resizes, 1);
	KUNIT_EXPECT_FALSE(test, t->ctrl->resize_pending);
	expect_agree(test);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	expect_agree(test);
}

/*
 * Off (limit 0) while the controller resets: the disable cannot be sent,
 * so the HMB stays as it is, -EBUSY says the limit waits, and the reset's
 * report finishes the job: off, nothing held.
 */
static void resetting_off_not_sent(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 0, -EAGAIN);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_TRUE(test, t->ctrl->resize_pending);
	expect_agree(test);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_held(t->ctrl), 0ULL);
	KUNIT_EXPECT_FALSE(test, t->ctrl->resize_pending);
	expect_agree(test);
}

/*
 * A shrink whose enable could not be sent (-EAGAIN): the trimmed buffer
 * stays held, disabled, and the reset report enables it.  It is never
 * freed for that, nor disabled again.
 */
static void resetting_enable_deferred(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 1, -EAGAIN);	/* after the disable */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(32));
	KUNIT_EXPECT_TRUE(test, t->ctrl->enable_deferred);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	/* Setup, the disable, and the enable it was told to fail. */
	KUNIT_EXPECT_EQ(test, v.set_cmds, 3);
	/* Busy until the controller is back; the limit is kept for then. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), -EBUSY);
	KUNIT_EXPECT_EQ(test, t->ctrl->limit, MIB(16));
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_FALSE(test, t->ctrl->enable_deferred);
	KUNIT_EXPECT_FALSE(test, t->ctrl->resize_pending);
	/* The 32 MiB set enabled (fresh: the list changed), then shrunk. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 6);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 0);
	expect_agree(test);
}

static void set_rejected_frees(struct kunit *test)
{
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SET_FAILED);
	KUNIT_EXPECT_NULL(test, t->ctrl->buf.descs);
	KUNIT_EXPECT_EQ(test, t->ctrl->last_status, INVALID_FIELD);
	expect_agree(test);
	/* The controller works without HMB, and a later try can succeed. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	expect_agree(test);
}

/*
 * An Internal Error that ends an enable the controller carried out: the
 * buffer may be in use, so it is disabled before it is freed.
 */
static void set_error_after_execution(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	nvme_hmb_mock_fail_set_executed(t->mock, 0, NVME_SC_INTERNAL);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SET_FAILED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);	/* the enable, the disable */
	expect_agree(test);
}

/*
 * A Command Sequence Error on a return (MR=1) at wake-up: the controller
 * holds a buffer, here this very one.  The list it may read is not
 * written again, and no fresh enable is sent until a disable completed.
 */
static void mr_seq_error_disables_first(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct nvme_hmb_set_cmd cmd;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_view(t->mock, &v);	/* the list it holds */
	nvme_hmb_encode_set(&cmd, true, true, v.hsize, v.hmdla, v.hmdlec);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	/* The controller takes the buffer back on its own. */
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_raw_set(t->mock, &cmd), 0);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.rejected, 1);	/* the return, only */
	KUNIT_EXPECT_EQ(test, v.violations, 1);	/* the same, counted */
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_refusals, 0);
	/* The one violation is the test's doing: no exit check. */
	nvme_hmb_mock_destroy(t->mock);
	t->mock = NULL;
}

static void set_lost_completion(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	/* The controller enabled, but the host never heard: disable first. */
	nvme_hmb_mock_fail_set(t->mock, 0, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);
	expect_agree(test);
}

/*
 * The misbehaviour of real controllers.  An enable that times out and is
 * carried out later (the admin queue is served in order: before the
 * disable that follows it): the engine frees only after that disable.
 */
static void late_enable_disabled_first(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	nvme_hmb_mock_misbehave(t->mock, 50, 0, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.late_done, 1);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	expect_agree(test);
}

/* A disable that times out and is carried out later: memory kept. */
static void late_disable_keeps_memory(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_misbehave(t->mock, 50, 0, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	msleep(200);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.late_done, 1);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

/*
 * An enable the controller completes with success without making it: Get
 * Features then says EHM=0.  Neither answer is taken at its word: the
 * buffer counts as lent until a disable completes, then it is given again,
 * fresh; after a second such answer it goes, once a disable completes.  A
 * disable that fails keeps it until the controller resets.
 */
static void enable_not_made(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	nvme_hmb_mock_ignore_sets(t->mock, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 3);	/* enable, disable, enable */
	expect_agree(test);

	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	nvme_hmb_mock_ignore_sets(t->mock, 3);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SET_FAILED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), 0ULL);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 8);	/* 4, then three, a disable */

	/* The second time, the disable that would free it fails: kept. */
	nvme_hmb_mock_ignore_sets(t->mock, 3);
	nvme_hmb_mock_fail_set(t->mock, 0, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_DISABLE_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);

	/* The first time, the disable before the second enable fails: kept. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	nvme_hmb_mock_ignore_sets(t->mock, 1);
	nvme_hmb_mock_fail_set(t->mock, 0, -ETIMEDOUT);
	KUNIT_EXPECT_NE(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

/* Get Features that misreports: counted and said, nothing changed. */
static void get_lies_counted(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.verify_mismatches, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.lies, 1);
	KUNIT_EXPECT_EQ(test, (u64)v.hsize << 12, MIB(32));
	KUNIT_EXPECT_EQ(test, v.violations, 0);
}

/* A controller that dies during a disable, then is reset. */
static void dies_mid_command(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_misbehave(t->mock, 0, 0, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	/* held_kib says what is kept; size_kib counts enabled memory only. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_held(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), 0ULL);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), -EBUSY);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

/* Resets nobody reported, or reported late. */
static void silent_resets(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	expect_agree(test);
	nvme_hmb_mock_silent_reset(t->mock);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

static void disable_fails_keeps_memory(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	/* The shrink's disable fails: nothing may be freed. */
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EIO);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), -EBUSY);
	/* The mock still owns and checks the whole buffer. */
	nvme_hmb_mock_check(t->mock);
	/* A reset takes the HMB away from the controller: the engine re-arms. */
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	/* Recovered: the reason is the HMB's again, not the failure's. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_GRANTED);
	expect_agree(test);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	expect_agree(test);
	KUNIT_EXPECT_EQ(test, nvme_hmb_held(t->ctrl), MIB(32));
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_held(t->ctrl), 0ULL);
}

/*
 * A shrink whose enable is lost before the controller saw it (-EIO), and
 * whose follow-up disable is lost too: memory kept (failed).  The list
 * changed, so the reset after must bring it back fresh, never with MR=1.
 */
static void lost_commands_then_reset_is_fresh(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_sets(t->mock, 1, 2, -EIO);
	KUNIT_EXPECT_LT(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(32));
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_LIMITED);
	expect_agree(test);
}

static void get_features_fails(struct kunit *test)
{
	struct ctrl_test *t;

	new_mock(test, &bg5);
	t = test->priv;
	nvme_hmb_mock_fail_get(t->mock, INVALID_FIELD);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	/* A read-back that fails is reported, not fatal. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.cmd_failures, 1);
	expect_agree(test);
}

/*
 * What fail_each_step() expects when the n-th Set Features of its scenario
 * fails: what each of the three resizes returns, the state after the
 * sleep, and the state at the end.  The scenario sends #0 enable (64
 * MiB), #1 disable and #2 enable (shrink to 32), #3 disable and #4 enable
 * (grow to 48), #5 disable (suspend), #6 enable with MR=1 (resume).
 *  - A refused enable frees the buffer (-EIO, off); the next resize sets
 *    up afresh.  After #4 nothing does: the HMB stays off through sleep.
 *  - A refused disable leaves the controller owning the memory (-EIO,
 *    failed): resizes are refused (-EBUSY) and sleep changes nothing until
 *    the controller is reset.
 *  - A refused return (MR=1) is followed by a fresh enable.
 */
struct fail_step {
	int ret[3];
	enum nvme_hmb_state asleep;
	enum nvme_hmb_state end;
	unsigned int rejected;		/* failures the mock made */
	unsigned int mr_refusals;	/* returns (MR=1) refused */
};

static const struct fail_step fail_steps[] = {
	{ { -EIO, 0, 0 }, NVME_HMB_SUSPENDED, NVME_HMB_ENABLED, 1, 0 },
	{ { 0, -EIO, -EBUSY }, NVME_HMB_FAILED, NVME_HMB_ENABLED, 1, 0 },
	{ { 0, -EIO, 0 }, NVME_HMB_SUSPENDED, NVME_HMB_ENABLED, 1, 0 },
	{ { 0, 0, -EIO }, NVME_HMB_FAILED, NVME_HMB_ENABLED, 1, 0 },
	{ { 0, 0, -EIO }, NVME_HMB_OFF, NVME_HMB_OFF, 1, 0 },
	{ { 0, 0, 0 }, NVME_HMB_FAILED, NVME_HMB_ENABLED, 1, 0 },
	{ { 0, 0, 0 }, NVME_HMB_SUSPENDED, NVME_HMB_ENABLED, 1, 1 },
	{ { 0, 0, 0 }, NVME_HMB_SUSPENDED, NVME_HMB_ENABLED, 0, 0 },
};

/*
 * While the state is failed the controller still owns the memory the
 * engine keeps: the mock has it enabled and saw no breach.
 */
static void expect_agree_or_owned(struct kunit *test)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_mock_view v;

	if (nvme_hmb_state(t->ctrl) != NVME_HMB_FAILED) {
		expect_agree(test);
		return;
	}
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_TRUE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, v.violations, 0);
}

/*
 * The scenario above, failing the n-th command with an error status that
 * says it was not carried out (n = 7: none fails).  Every step is checked
 * against the table; throughout, the engine and the mock agree and
 * nothing the controller owns was freed.  A failed state is ended by a
 * controller reset, after which the HMB is enabled again.
 */
static void fail_each_step(struct kunit *test)
{
	static const u64 limits[] = { MIB(64), MIB(32), MIB(48) };
	const struct fail_step *f;
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;
	unsigned int n, i;
	int ret;

	for (n = 0; n < ARRAY_SIZE(fail_steps); n++) {
		f = &fail_steps[n];
		new_mock(test, &bg5);
		t = test->priv;
		nvme_hmb_mock_fail_set(t->mock, n, INVALID_FIELD);
		for (i = 0; i < ARRAY_SIZE(limits); i++) {
			ret = nvme_hmb_set_limit(t->ctrl, limits[i]);
			KUNIT_EXPECT_EQ_MSG(test, ret, f->ret[i], "n=%u step %u",
					    n, i);
			if (!ret)
				KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_size(t->ctrl),
						    limits[i], "n=%u step %u",
						    n, i);
			expect_agree_or_owned(test);
		}

		nvme_hmb_sleep(t->ctrl, false);
		KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_state(t->ctrl), f->asleep,
				    "n=%u", n);
		expect_agree_or_owned(test);

		nvme_hmb_wake(t->ctrl, false);
		if (f->asleep == NVME_HMB_FAILED) {
			KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_state(t->ctrl),
					    NVME_HMB_FAILED, "n=%u", n);
			nvme_hmb_mock_reset(t->mock);
		} else if (f->end == NVME_HMB_ENABLED) {
			KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_size(t->ctrl),
					    MIB(48), "n=%u", n);
		}
		KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_state(t->ctrl), f->end,
				    "n=%u", n);
		KUNIT_EXPECT_EQ_MSG(test, t->ctrl->stats.mr_refusals,
				    f->mr_refusals, "n=%u", n);
		expect_agree(test);
		/* The one failure asked for happened, and no other. */
		nvme_hmb_mock_view(t->mock, &v);
		KUNIT_EXPECT_EQ_MSG(test, v.rejected, f->rejected, "n=%u", n);
		/* A failure never reached must not hit the detach's disable. */
		nvme_hmb_mock_fail_set(t->mock, 0, 0);
		ctrl_test_exit(test);
		t->mock = NULL;
	}
}

static void double_teardown(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_OFF_BY_USER);
	mutex_lock(&t->ctrl->lock);
	KUNIT_EXPECT_TRUE(test, nvme_hmb_teardown_locked(t->ctrl));
	KUNIT_EXPECT_TRUE(test, nvme_hmb_teardown_locked(t->ctrl));
	mutex_unlock(&t->ctrl->lock);
	expect_agree(test);
}

static void gone_frees_without_commands(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	/* Surprise removal: the controller stops, as a dead link does. */
	controller_lets_go(t, &before);
	nvme_hmb_report_gone(t->ctrl);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -ENODEV);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
}

/*
 * A grow whose disable failed: the next set goes, and the set lent to the
 * controller stays exactly as the controller has it, list and buffers.
 * A late reset report finds the controller still holding it: enabled
 * again, nothing rewritten or freed; a real reset then returns it (MR=1)
 * unchanged, which the mock checks entry by entry.
 */
static void late_report_after_failed_grow(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = seamed_mock(test, &bg5, SZ_64K);
	s64 allocs;

	grow_with_failed_disable(test, INVALID_FIELD, -EIO);
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);		/* no reset behind it */
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_NE(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_DISABLE_FAILED);
	KUNIT_EXPECT_GT(test, nvme_hmb_reclaimable(t->ctrl, false), 0);
	expect_agree(test);
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.mr_returns, before.mr_returns + 1);
	KUNIT_EXPECT_EQ(test, after.rejected, before.rejected);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	expect_agree(test);
}

/*
 * A reset report whose Get Features fails: the engine cannot tell whether
 * the reset took the buffer away, so it disables first, then returns it;
 * it never enables over a buffer the controller may still hold.
 */
static void reset_report_unsure_disables_first(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_mock_fail_get(t->mock, INVALID_FIELD);
	nvme_hmb_report_reset(t->ctrl);		/* late: still enabled */
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 2);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, after.mr_returns, before.mr_returns + 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

/*
 * A reset report that finds the controller resetting again (Get Features
 * answers -EAGAIN): nothing is sent and nothing changes; the report of
 * that reset, which follows, returns the buffer.
 */
static void reset_report_while_resetting(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_silent_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_mock_fail_get(t->mock, -EAGAIN);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.get_cmds, before.get_cmds + 1);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_FALSE(test, after.ehm);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.cmd_failures, 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_EQ(test, after.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resets, 2);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
}

/*
 * A late reset report (the controller still holds the buffer) whose Get
 * Features misreports HSIZE: a list nobody knows.  EHM=0 goes first, and
 * only once it completed is the buffer returned.  When that disable fails
 * the memory stays with the controller (failed): nothing is freed or
 * enabled until a real reset.
 */
static void reset_report_finds_unknown(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;
	s64 allocs;

	t = enabled_mock(test, &bg5, MIB(64));
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.lies, 1);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 2);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, after.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);

	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.lies, 2);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_TRUE(test, after.ehm);
	KUNIT_EXPECT_EQ(test, (u64)after.hsize << 12, MIB(64));
	KUNIT_EXPECT_EQ(test, after.mr_returns, before.mr_returns);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_DISABLE_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	/* A real reset ends it: the same buffer comes back. */
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * A reset reported while the system sleeps, the memory still held after
 * the suspend's disable failed: the reset took the buffer away, and
 * nothing is enabled before the wake-up, which gives it back fresh
 * (MR=0): after a failed disable, what the controller did with the
 * buffer cannot be known.
 */
static void reset_report_while_asleep(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_FALSE(test, after.ehm);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	KUNIT_EXPECT_FALSE(test, t->ctrl->lent);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_EQ(test, after.mr_returns, 0);
	KUNIT_EXPECT_EQ(test, after.rejected, before.rejected);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/* A controller shared with another driver (nvme_hmb_pci's case). */
static struct ctrl_test *shared_mock(struct kunit *test,
				     const struct nvme_hmb_id *id)
{
	struct ctrl_test *t = test->priv;

	t->mock = nvme_hmb_mock_create_shared("kunit0", id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->mock);
	t->ctrl = nvme_hmb_mock_ctrl(t->mock);
	return t;
}

/*
 * On a shared controller, an enable carried out whose Get Features says
 * EHM=0: the guard of the next command then finds the list as sent but
 * not lent, which it would take for a buffer nobody knows, and free.  The
 * buffer stays lent: the disable goes first, then the enable again.
 */
static void shared_enable_denied(struct kunit *test)
{
	struct ctrl_test *t = shared_mock(test, &bg5);
	struct nvme_hmb_mock_view v;

	nvme_hmb_mock_hide_ehm(t->mock, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 3);	/* enable, disable, enable */
	KUNIT_EXPECT_EQ(test, v.violations, 0);
	expect_agree(test);
}

/* The controller holds the other driver's buffer, untouched. */
static void expect_other_holds(struct kunit *test)
{
	struct ctrl_test *t = test->priv;
	struct nvme_hmb_mock_view v;

	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_TRUE(test, v.ehm);
	KUNIT_EXPECT_TRUE(test, nvme_hmb_mock_other_held(t->mock));
	KUNIT_EXPECT_EQ(test, v.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_FOREIGN);
}

/*
 * A shrink on a shared controller whose enable finds a reset under way
 * (its guard's Get Features answers -EAGAIN): the trimmed set waits for
 * the reset's report, which gives it fresh.  The controller never held
 * that set, so it is never returned with MR=1 as if it had.
 */
static void shrink_deferred_by_reset_is_fresh(struct kunit *test)
{
	struct ctrl_test *t = shared_mock(test, &bg5);
	struct nvme_hmb_mock_view before, after;

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	/* The disable's guard reads; the enable's finds the reset. */
	nvme_hmb_mock_fail_get_skip(t->mock, 1, -EAGAIN);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(40)), -EBUSY);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_TRUE(test, t->ctrl->enable_deferred);
	KUNIT_EXPECT_FALSE(test, t->ctrl->buf.returnable);
	nvme_hmb_mock_view(t->mock, &before);
	KUNIT_EXPECT_FALSE(test, before.ehm);
	nvme_hmb_mock_reset(t->mock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.mr_returns, before.mr_returns);
	KUNIT_EXPECT_EQ(test, after.rejected, before.rejected);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_refusals, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(40));
	expect_agree(test);
}

/* Counts the engine's allocation attempts, failing none. */
static bool count_allocs_seam(void *priv, unsigned int nth, u64 size)
{
	unsigned int *n = priv;

	(*n)++;
	return false;
}

/* Attached while the other driver runs the HMB: nothing is allocated. */
static void shared_attach_stays_back(struct kunit *test)
{
	unsigned int allocs = 0;
	struct nvme_hmb_alloc_hook hook = {
		.fail = count_allocs_seam, .priv = &allocs,
	};
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t = shared_mock(test, &bg5);

	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_start(t->ctrl), 0);
	KUNIT_EXPECT_EQ(test, allocs, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	expect_other_holds(test);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 0);
	/* The other driver lets go: the next resize takes it. */
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_GT(test, allocs, 0);
	nvme_hmb_set_alloc_hook(t->ctrl, NULL);
	expect_agree(test);
}

/*
 * Attached while the controller holds a buffer that is not, provably, the
 * other driver's (Get Features misreports HSIZE): never taken for that
 * driver's by elimination, and left alone all the same.
 */
static void shared_attach_unknown_owner(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t = shared_mock(test, &bg5);

	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_start(t->ctrl), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_UNKNOWN_OWNER);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.lies, 1);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 0);
	/* Read again without the lie: it is the other driver's. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	expect_other_holds(test);
}

/*
 * A reset, after which the other driver set its own buffer up: ours is
 * not in use and is freed without a command; a late report of a reset
 * that changed nothing leaves ours alone.
 */
static void shared_reset_reports(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = shared_mock(test, &bg5);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);		/* late */
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);

	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	expect_other_holds(test);

	/* A reset in which the other driver gave its buffer up. */
	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	nvme_hmb_report_reset(t->ctrl);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * A shared mock at 64 MiB, then a reset in which the other driver set its
 * own buffer up, not reported yet.
 */
static struct ctrl_test *other_took_over(struct kunit *test)
{
	struct ctrl_test *t = shared_mock(test, &bg5);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	return t;
}

/*
 * A resize that finds the other driver's buffer enabled (its reset came,
 * its report not yet): the disable is not sent, the other driver's
 * buffer stays, and ours is freed without a command.
 */
static void shared_resize_never_disables_other(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = other_took_over(test);

	nvme_hmb_mock_view(t->mock, &before);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	expect_other_holds(test);
}

/* other_took_over(), and its reset reported: the engine stepped back. */
static struct ctrl_test *stepped_back(struct kunit *test)
{
	struct ctrl_test *t = other_took_over(test);

	nvme_hmb_report_reset(t->ctrl);
	KUNIT_ASSERT_TRUE(test, t->ctrl->foreign);
	expect_other_holds(test);
	return t;
}

/*
 * Stepped back (stepped_back()), a reset report whose Get Features fails:
 * what the controller holds is unknown, so the engine stays back, and
 * allocates and sends nothing.  The report of a reset in which the other
 * driver let go sets the HMB up.
 */
static void shared_stepped_back_report_unread(struct kunit *test)
{
	unsigned int allocs = 0;
	struct nvme_hmb_alloc_hook hook = {
		.fail = count_allocs_seam, .priv = &allocs,
	};
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = stepped_back(test);

	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_mock_fail_get(t->mock, INVALID_FIELD);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, allocs, 0);
	KUNIT_EXPECT_TRUE(test, t->ctrl->foreign);
	expect_other_holds(test);

	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	nvme_hmb_report_reset(t->ctrl);
	KUNIT_EXPECT_GT(test, allocs, 0);
	KUNIT_EXPECT_FALSE(test, t->ctrl->foreign);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	nvme_hmb_set_alloc_hook(t->ctrl, NULL);
	expect_agree(test);
}

/*
 * Stepped back, a reset report that finds a buffer that is neither
 * nothing nor, provably, the other driver's (Get Features misreports its
 * HSIZE): never taken for free.  The engine stays back, now for an
 * unknown owner, and allocates and sends nothing; read again without the
 * lie, it is the other driver's.
 */
static void shared_stepped_back_report_unknown(struct kunit *test)
{
	unsigned int allocs = 0;
	struct nvme_hmb_alloc_hook hook = {
		.fail = count_allocs_seam, .priv = &allocs,
	};
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = stepped_back(test);

	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.lies, before.lies + 1);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, allocs, 0);
	KUNIT_EXPECT_TRUE(test, t->ctrl->foreign);
	KUNIT_EXPECT_TRUE(test, nvme_hmb_mock_other_held(t->mock));
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_UNKNOWN_OWNER);

	nvme_hmb_report_reset(t->ctrl);
	KUNIT_EXPECT_EQ(test, allocs, 0);
	nvme_hmb_set_alloc_hook(t->ctrl, NULL);
	expect_other_holds(test);
}

/*
 * A reset reported during a suspend whose disable failed, the other
 * driver's buffer set up in that reset: Get Features fails, so EHM=0 goes
 * first, and its guard finds the other driver's buffer.  The engine's
 * memory is the host's again but stays held, disabled, for the wake-up,
 * which finds the controller resetting and defers the enable.  That
 * reset's report finds that the other driver let go: the buffer held is
 * enabled, fresh (the controller had another since), and nothing is set
 * up or allocated anew.
 */
static void shared_reset_in_suspend_finds_other(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = shared_mock(test, &bg5);
	s64 allocs;

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	allocs = atomic64_read(&nvme_hmb_dma_allocs);

	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	nvme_hmb_mock_fail_get(t->mock, INVALID_FIELD);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_TRUE(test, nvme_hmb_mock_other_held(t->mock));
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_FOREIGN);
	KUNIT_EXPECT_TRUE(test, t->ctrl->foreign);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);

	/* The wake-up finds the controller resetting: the enable waits. */
	nvme_hmb_mock_fail_get(t->mock, -EAGAIN);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_TRUE(test, t->ctrl->enable_deferred);
	KUNIT_EXPECT_TRUE(test, t->ctrl->foreign);

	/* In that reset the other driver let go. */
	nvme_hmb_mock_silent_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	nvme_hmb_report_reset(t->ctrl);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_EQ(test, after.mr_returns, 0);
	KUNIT_EXPECT_EQ(test, after.rejected, before.rejected);
	KUNIT_EXPECT_FALSE(test, t->ctrl->foreign);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	expect_agree(test);
}

/*
 * A reset in which the other driver set its own buffer up, then a
 * suspend before the reset's report: the disable finds the other
 * driver's buffer, so ours is not in the controller and goes.  Once the
 * other driver let go, the wake-up must not return (MR=1) a buffer the
 * controller did not last hold.
 */
static void shared_sleep_finds_other(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = other_took_over(test);

	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_EXPECT_FALSE(test, t->ctrl->buf.returnable);
	expect_other_holds(test);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_refusals, 0);
	/* A reset that finds nothing brings nvme-hmb's own back. */
	nvme_hmb_report_reset(t->ctrl);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * An enable that the controller carried out and then failed (Internal
 * Error), and a Get Features that misreports HSIZE: the controller may
 * hold the buffer, so the disable is sent before anything is freed,
 * whatever the guard makes of the lie.
 */
static void shared_executed_error_disables(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t = shared_mock(test, &bg5);

	nvme_hmb_mock_fail_set_executed(t->mock, 0,
					NVME_SC_INTERNAL | NVME_HMB_STATUS_DNR);
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);
	KUNIT_EXPECT_EQ(test, v.lies, 1);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SET_FAILED);
	KUNIT_EXPECT_FALSE(test, t->ctrl->lent);
	expect_agree(test);
}

/*
 * A wake-up that finds a buffer nobody recognises enabled: the other
 * driver set its own up during the suspend, and Get Features misreports
 * its HSIZE.  The return (MR=1) is not sent over it; the engine, whose
 * own buffer the suspend disabled, steps back and frees that without a
 * command.
 */
static void shared_wake_finds_unknown(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = shared_mock(test, &bg5);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_ASSERT_FALSE(test, t->ctrl->lent);
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, true), 0);
	nvme_hmb_mock_misbehave(t->mock, 0, 1, false);
	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.lies, 1);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_TRUE(test, nvme_hmb_mock_other_held(t->mock));
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_UNKNOWN_OWNER);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_enables, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	/* The other driver lets go: the next resize takes the controller. */
	KUNIT_ASSERT_EQ(test, nvme_hmb_mock_other(t->mock, false), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * The engine believes it disabled its buffer for a suspend, while its
 * record of what it sent, and the controller, say that is still enabled:
 * a disable it lost track of.  No path of the engine leaves this today
 * (it enables only when nothing of its own is recorded at the
 * controller), so it is forged, under the lock, for the guard that stands
 * behind that: no enable goes over a list the controller holds, and
 * nothing it holds is freed.
 */
static void believes_suspended(struct kunit *test, struct ctrl_test *t)
{
	mutex_lock(&t->ctrl->lock);
	t->ctrl->sleeping = true;
	t->ctrl->state = NVME_HMB_SUSPENDED;
	mutex_unlock(&t->ctrl->lock);
	KUNIT_ASSERT_TRUE(test, t->ctrl->lent);
}

/* A shared mock at 64 MiB, then believes_suspended(). */
static struct ctrl_test *disable_lost_in_suspend(struct kunit *test)
{
	struct ctrl_test *t = shared_mock(test, &bg5);

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	believes_suspended(test, t);
	KUNIT_ASSERT_TRUE(test, t->ctrl->buf.returnable);
	return t;
}

/*
 * The return (MR=1) at wake-up of the buffer the controller still holds,
 * list and all (disable_lost_in_suspend()): nothing is sent (an enable
 * would be a Command Sequence Error), the buffer is the engine's, enabled,
 * again, and a shrink after disables it before it frees.
 */
static void shared_return_finds_it_held(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = disable_lost_in_suspend(test);

	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);
	KUNIT_EXPECT_GT(test, after.get_cmds, before.get_cmds);
	KUNIT_EXPECT_EQ(test, after.mr_returns, 0);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, after.hmdla, before.hmdla);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.mr_enables, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resumes, 1);
	KUNIT_EXPECT_TRUE(test, t->ctrl->buf.returnable);
	expect_agree(test);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	expect_agree(test);
}

/*
 * A fresh enable (after hibernation: never MR=1) while the controller
 * still holds the engine's last list (disable_lost_in_suspend()): the
 * guard has that disabled first, and only then is the buffer freed.  No
 * enable goes over it, and its list is not rewritten while it is held.
 */
static void shared_fresh_enable_disables_ours_first(struct kunit *test)
{
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = disable_lost_in_suspend(test);

	nvme_hmb_mock_view(t->mock, &before);
	nvme_hmb_wake(t->ctrl, true);
	nvme_hmb_mock_view(t->mock, &after);
	/* One command, the disable; its last check found the buffer whole. */
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_FALSE(test, after.ehm);
	KUNIT_EXPECT_EQ(test, after.rejected, 0);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SET_FAILED);
	KUNIT_EXPECT_FALSE(test, t->ctrl->lent);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	/* Nothing is stuck: the next resize sets the HMB up afresh. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * A grow whose disable failed: the next set goes, and the engine holds
 * exactly the 16 MiB set the controller holds.  What the controller did
 * after the failure cannot be known, so the set is no longer returnable.
 * Forged as in believes_suspended(), the wake-up's fresh enable finds the
 * controller still holding it: the guard has it disabled first, and only
 * then is anything freed; nothing is left behind.
 */
static void shared_return_after_failed_grow(struct kunit *test)
{
	struct nvme_hmb_alloc_hook hook = {
		.fail = fail_above_seam, .priv = test->priv,
	};
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t = shared_mock(test, &bg5);
	dma_addr_t list;
	s64 allocs;

	t->fail_above = SZ_64K;
	nvme_hmb_set_alloc_hook(t->ctrl, &hook);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 256);
	list = t->ctrl->buf.descs_dma;
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EIO);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(16));
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.descs_dma, list);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	KUNIT_EXPECT_FALSE(test, t->ctrl->buf.returnable);
	believes_suspended(test, t);
	nvme_hmb_mock_view(t->mock, &before);
	KUNIT_ASSERT_EQ(test, before.hmdla, list);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds + 1);
	KUNIT_EXPECT_FALSE(test, after.ehm);
	KUNIT_EXPECT_EQ(test, after.mr_returns, before.mr_returns);
	KUNIT_EXPECT_EQ(test, after.rejected, before.rejected);
	KUNIT_EXPECT_EQ(test, after.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	nvme_hmb_set_alloc_hook(t->ctrl, NULL);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

static void reclaim(struct nvme_hmb_ctrl *ctrl, u64 want, bool severe)
{
	mutex_lock(&ctrl->lock);
	nvme_hmb_reclaim_locked(ctrl, want, severe);
	mutex_unlock(&ctrl->lock);
}

/*
 * dmesg gives a size at info level only when it is news: ctrl->shown,
 * the size it last gave, decides.  A reset, a suspend and a hibernation
 * give back the same size (debug level); a resize, a reclaim, and the
 * recovery from a failed disable are news.
 */
static void dmesg_news_only(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(64));
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(64));
	nvme_hmb_sleep(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_held(t->ctrl), 0ULL);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(64));
	nvme_hmb_wake(t->ctrl, true);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(64));
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(32));
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(16)), -EIO);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, 0ULL);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, MIB(32));
	reclaim(t->ctrl, MIB(16), false);
	KUNIT_EXPECT_LT(test, nvme_hmb_size(t->ctrl), MIB(32));
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, nvme_hmb_size(t->ctrl));
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->shown, 0ULL);
}

/* Sizes in messages: MiB, one decimal unless whole; KiB below 1 MiB. */
static void sizes_for_messages(struct kunit *test)
{
	struct nvme_hmb_sz b;

	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, 0), "0 MiB");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, SZ_4K), "4 KiB");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, SZ_1M - SZ_4K),
			   "1020 KiB");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, MIB(64)), "64 MiB");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, 50688ULL << 10),
			   "49.5 MiB");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_sz_str(&b, MIB(14) + SZ_4K),
			   "14.0 MiB");
}

/*
 * Severe pressure takes the HMB below HMMIN, so off.  When the disable of
 * that teardown fails, the controller keeps the memory (failed) and
 * nothing counts as reclaimed.  After the reset that ends it, the same
 * pressure turns the HMB off.
 */
static void reclaim_to_off_disable_fails(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;
	s64 allocs;

	t = enabled_mock(test, &bg5, MIB(64));
	allocs = atomic64_read(&nvme_hmb_dma_allocs);
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	reclaim(t->ctrl, MIB(64), true);
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);	/* the enable, the disable */
	KUNIT_EXPECT_TRUE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, (u64)v.hsize << 12, MIB(64));
	KUNIT_EXPECT_EQ(test, v.violations, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_DISABLE_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.reclaims, 0);
	KUNIT_EXPECT_FALSE(test, t->ctrl->shrunk);

	nvme_hmb_mock_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	expect_agree(test);
	reclaim(t->ctrl, MIB(64), true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_RECLAIMED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.reclaims, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs),
			t->dma_allocs);
	expect_agree(test);
}

/* What a malformed command changes of a valid enable of the held buffer. */
enum raw_tweak {
	RAW_NONE,
	RAW_WHILE_ENABLED,	/* sent while the buffer is enabled */
	RAW_DISABLE,		/* EHM=0 instead of an enable */
	RAW_ADDR_UNALIGNED,	/* entry 0 not page aligned */
	RAW_EMPTY,		/* entry 7 of size 0 */
	RAW_BELOW_HMMINDS,	/* entry 7 of 1 MiB, HMMINDS 2 MiB */
	RAW_RSVD,		/* entry 3's reserved field set */
	RAW_NOT_RAM,		/* entry 5 outside host memory */
	RAW_OVERLAP,		/* entry 1 the same as entry 0 */
	RAW_LIST_NOT_RAM,	/* the list outside host memory */
	RAW_LIST_CHANGED,	/* the list changed since (for MR) */
};

struct raw_case {
	const char *name;
	const char *why;	/* the mock's rule that refuses it */
	u32 cdw10;
	bool mr;
	u32 hsize;		/* 0: the engine's */
	u64 hmdla_off;		/* added to the engine's list address */
	int hmdlec;		/* -1: the engine's */
	int status;
	u32 cdw11_or;		/* extra bits in CDW11 */
	enum raw_tweak tweak;
};

#define SEQ_ERROR	(NVME_SC_CMD_SEQ_ERROR | NVME_HMB_STATUS_DNR)

/* Every rule the mock rejects a command for, one case each. */
static const struct raw_case raw_cases[] = {
	{ "list not 16-byte aligned", "list address not 16-byte aligned",
	  0x0d, false, 0, 8, -1, INVALID_FIELD },
	{ "HSIZE one page short", "HSIZE below HMMIN",
	  0x0d, false, 8191, 0, -1, INVALID_FIELD },
	{ "HSIZE one page over", "HSIZE above HMPRE and HMMIN",
	  0x0d, false, 8193, 0, -1, INVALID_FIELD },
	{ "no entries", "entry count 0 or above HMMAXD",
	  0x0d, false, 0, 0, 0, INVALID_FIELD },
	{ "more entries than HMMAXD", "entry count 0 or above HMMAXD",
	  0x0d, false, 0, 0, 17, INVALID_FIELD },
	{ "entries not matching HSIZE", "HSIZE is not the sum of the entries",
	  0x0d, false, 0, 0, 7, INVALID_FIELD },
	{ "save bit", "save (SV) requested",
	  0x8000000d, false, 0, 0, -1,
	  NVME_SC_FEATURE_NOT_SAVEABLE | NVME_HMB_STATUS_DNR },
	{ "MR of another list", "returned (MR) a different buffer",
	  0x0d, true, 0, 0, 7, INVALID_FIELD },
	{ "MR of a changed list", "returned (MR) a different buffer",
	  0x0d, true, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_LIST_CHANGED },
	{ "enable while enabled", "enable while enabled",
	  0x0d, false, 0, 0, -1, SEQ_ERROR, 0,
	  RAW_WHILE_ENABLED },
	{ "not FID 0Dh", "not FID 0Dh",
	  0x0c, false, 0, 0, -1, INVALID_FIELD },
	{ "reserved bits of CDW11", "reserved bits of CDW11 set",
	  0x0d, false, 0, 0, -1, INVALID_FIELD,
	  BIT(2) },
	{ "MR on a disable", "memory return (MR) on a disable",
	  0x0d, true, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_DISABLE },
	{ "entry not page aligned", "buffer address not page aligned",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_ADDR_UNALIGNED },
	{ "empty entry", "empty buffer",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0, RAW_EMPTY },
	{ "entry below HMMINDS", "buffer smaller than HMMINDS",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_BELOW_HMMINDS },
	{ "entry reserved field", "reserved field set",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_RSVD },
	{ "entry not in host memory", "buffer not in host memory",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_NOT_RAM },
	{ "entries overlap", "buffers overlap",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_OVERLAP },
	{ "list not in host memory", "descriptor list not in host memory",
	  0x0d, false, 0, 0, -1, INVALID_FIELD, 0,
	  RAW_LIST_NOT_RAM },
};

static void raw_case_desc(const struct raw_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(raw, raw_cases, raw_case_desc);

#define FAR_AWAY	BIT_ULL(46)	/* above any RAM of the test VM */

/* Change the held (disabled) buffer's list as @tweak says. */
static void raw_tweak_list(struct nvme_hmb_buf *buf, enum raw_tweak tweak)
{
	struct nvme_host_mem_buf_desc *d = buf->descs;

	switch (tweak) {
	case RAW_ADDR_UNALIGNED:
		le64_add_cpu(&d[0].addr, 8);
		break;
	case RAW_EMPTY:
		d[7].size = 0;
		break;
	case RAW_BELOW_HMMINDS:
		d[7].size = cpu_to_le32(256);
		break;
	case RAW_RSVD:
		d[3].rsvd = 1;	/* __u32 in <linux/nvme.h>: any value but 0 */
		break;
	case RAW_NOT_RAM:
		d[5].addr = cpu_to_le64(FAR_AWAY);
		break;
	case RAW_OVERLAP:
		d[1].addr = d[0].addr;
		break;
	case RAW_LIST_CHANGED:
		swap(d[0].addr, d[1].addr);
		break;
	default:
		break;
	}
}

/*
 * The mock itself: with the engine's buffer held but disabled (8 entries
 * of 4 MiB, HSIZE 8192), a malformed command is rejected and counted.
 */
static void mock_rejects(struct kunit *test)
{
	const struct raw_case *c = test->param_value;
	bool enabled = c->tweak == RAW_WHILE_ENABLED;
	struct nvme_hmb_mock_view v;
	struct nvme_hmb_set_cmd cmd;
	struct ctrl_test *t;
	u64 hmdla;

	t = enabled_mock(test, &p3plus, MIB(32));
	KUNIT_ASSERT_EQ(test, t->ctrl->buf.nr_chunks, 8);
	if (!enabled) {
		nvme_hmb_sleep(t->ctrl, false);
		KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl),
				NVME_HMB_SUSPENDED);
	}
	raw_tweak_list(&t->ctrl->buf, c->tweak);
	hmdla = c->tweak == RAW_LIST_NOT_RAM ? FAR_AWAY :
		t->ctrl->buf.descs_dma + c->hmdla_off;
	nvme_hmb_encode_set(&cmd, c->tweak != RAW_DISABLE, c->mr,
			    c->hsize ?: 8192, hmdla,
			    c->hmdlec < 0 ? 8 : c->hmdlec);
	if (c->tweak == RAW_DISABLE)
		cmd.cdw11 |= NVME_HOST_MEM_RETURN;
	cmd.cdw10 = c->cdw10;
	cmd.cdw11 |= c->cdw11_or;
	KUNIT_EXPECT_EQ(test, nvme_hmb_mock_raw_set(t->mock, &cmd), c->status);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_STREQ(test, v.why, c->why);
	KUNIT_EXPECT_EQ(test, v.ehm, enabled);
	KUNIT_EXPECT_EQ(test, v.rejected, 1);
	KUNIT_EXPECT_EQ(test, v.violations, 1);
	/* Deliberate violations: leave without the exit check. */
	nvme_hmb_mock_destroy(t->mock);
	t->mock = NULL;
}

/*
 * The mock's own ceiling: with no HMMAXD (0, no limit) a list of more
 * than 65535 entries is refused before the mock reads it, as a firmware
 * that never reads past its own limit would.
 */
static void mock_rejects_65536_entries(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct nvme_hmb_set_cmd cmd;
	struct ctrl_test *t;

	t = enabled_mock(test, &min_is_pref, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_encode_set(&cmd, true, false,
			    t->ctrl->buf.size >> NVME_HMB_PAGE_SHIFT,
			    t->ctrl->buf.descs_dma, NVME_HMB_MAX_DESCS + 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_mock_raw_set(t->mock, &cmd),
			INVALID_FIELD);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_STREQ(test, v.why, "entry count above 65535");
	KUNIT_EXPECT_FALSE(test, v.ehm);
	KUNIT_EXPECT_EQ(test, v.rejected, 1);
	KUNIT_EXPECT_EQ(test, v.violations, 1);
	/* A deliberate violation: leave without the exit check. */
	nvme_hmb_mock_destroy(t->mock);
	t->mock = NULL;
}

/*
 * The mock's watch: a list changed while the controller holds it is a
 * violation, and so is memory changed after a disable that failed (the
 * buffer is still the controller's).
 */
static void mock_sees_list_change(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &p3plus, MIB(32));
	swap(t->ctrl->buf.descs[0].addr, t->ctrl->buf.descs[1].addr);
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.violations, 1);
	swap(t->ctrl->buf.descs[0].addr, t->ctrl->buf.descs[1].addr);
	nvme_hmb_mock_destroy(t->mock);
	t->mock = NULL;
}

static void mock_watches_after_failed_disable(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;
	u32 i;
	u64 p;

	t = enabled_mock(test, &p3plus, MIB(32));
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	KUNIT_EXPECT_NE(test, nvme_hmb_set_limit(t->ctrl, 0), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	/*
	 * Stray stores in the middle of every page, where the first word
	 * of a page does not show them; wherever the mock's round robin
	 * stands, its next round meets one.
	 */
	for (i = 0; i < t->ctrl->buf.nr_chunks; i++) {
		struct nvme_hmb_chunk *c = &t->ctrl->buf.chunks[i];
		void *va = phys_to_virt(dma_to_phys(t->ctrl->port->dma_dev,
						    c->dma));

		for (p = 0; p < c->size >> NVME_HMB_PAGE_SHIFT; p++) {
			u64 *word = va + (p << NVME_HMB_PAGE_SHIFT) + 1536;

			WRITE_ONCE(*word, ~READ_ONCE(*word));
		}
	}
	msleep(300);			/* the mock's own work runs */
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_GE(test, v.violations, 1);
	nvme_hmb_mock_destroy(t->mock);
	t->mock = NULL;
}

/* ---------------------------------------------------------------------
 * TP4104: HMNARE with HMBR, and a suspend that keeps the controller
 * powered in a non-operational power state
 */

static const struct nvme_hmb_id bg5_hmbr = {
	16384, 3584, 1, 1024, NVME_HMB_CTRATT_HMBR
};

/* Without HMBR the bit is reserved: the mock counts it as a violation. */
static void hmnare_not_without_hmbr(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.hmnare_sets, 0);
	KUNIT_EXPECT_EQ(test, v.rejected, 0);
	KUNIT_EXPECT_FALSE(test, v.hmnar);
	KUNIT_EXPECT_FALSE(test, t->ctrl->hmnar);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.sleeps_kept, 0);
	expect_agree(test);
}

/* With HMBR, on every enable: the first, and a reset's return. */
static void hmnare_on_every_enable(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5_hmbr, MIB(64));
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.hmnare_sets, 1);
	KUNIT_EXPECT_TRUE(test, v.hmnar);
	KUNIT_EXPECT_TRUE(test, t->ctrl->hmnar);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, v.hmnare_sets, 2);
	KUNIT_EXPECT_TRUE(test, t->ctrl->hmnar);
	expect_agree(test);
}

/*
 * A controller that reports HMBR but refuses HMNARE still gets its HMB,
 * by a second enable without the bit, and is not sent it again.
 */
static void hmnare_refused_retries_without(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	new_mock(test, &bg5_hmbr);
	t = test->priv;
	nvme_hmb_mock_refuse_hmnare(t->mock, true);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 2);
	KUNIT_EXPECT_EQ(test, v.rejected, 1);
	KUNIT_EXPECT_EQ(test, v.hmnare_sets, 0);
	KUNIT_EXPECT_TRUE(test, t->ctrl->hmnare_refused);
	KUNIT_EXPECT_FALSE(test, t->ctrl->hmnar);
	/* The return after a reset goes without it at once. */
	nvme_hmb_mock_reset(t->mock);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds, 3);
	KUNIT_EXPECT_EQ(test, v.rejected, 1);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	expect_agree(test);
}

/*
 * One suspend and resume.  The driver puts a controller it keeps powered
 * in its deepest power state after the engine's notifier (the mock
 * counts an HMB left enabled there without HMNAR), and takes it out
 * before the engine's wake-up.
 *
 *   kept:   EHM=1 ----- power state 4 ----- EHM=1      no command
 *   else:   EHM=0 ----- power state 4 ----- EHM=1 MR=1  (fresh after
 *           hibernation)
 */
struct keep_case {
	const char *name;
	bool hmbr;		/* Identify says HMBR */
	bool refuse;		/* ... but HMNARE is refused */
	bool firmware;		/* the driver shuts it down instead */
	bool hibernate;
	int get_status;		/* the Get Features at the suspend fails */
	bool kept;		/* the HMB stays enabled */
};

static const struct keep_case keep_cases[] = {
	{ "HMNAR, powered: kept", true, false, false, false, 0, true },
	{ "no HMBR: round trip", false, false, false, false, 0, false },
	{ "HMNARE refused: round trip", true, true, false, false, 0, false },
	{ "firmware path: round trip", true, false, true, false, 0, false },
	{ "hibernation: freed", true, false, false, true, 0, false },
	{ "Get Features fails: round trip", true, false, false, false,
	  -EIO, false },
	{ "Get Features refused: round trip", true, false, false, false,
	  INVALID_FIELD, false },
};

static void keep_case_desc(const struct keep_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(keep, keep_cases, keep_case_desc);

static void sleep_keeps_with_hmnar(struct kunit *test)
{
	const struct keep_case *c = test->param_value;
	bool powered = !c->firmware && !c->hibernate;
	struct nvme_hmb_mock_view v0, v;
	enum nvme_hmb_state asleep;
	struct ctrl_test *t;

	new_mock(test, c->hmbr ? &bg5_hmbr : &bg5);
	t = test->priv;
	nvme_hmb_mock_refuse_hmnare(t->mock, c->refuse);
	nvme_hmb_mock_sleep_firmware(t->mock, c->firmware);
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	if (c->get_status)
		nvme_hmb_mock_fail_get(t->mock, c->get_status);
	nvme_hmb_mock_view(t->mock, &v0);

	nvme_hmb_sleep(t->ctrl, c->hibernate);
	if (powered)
		nvme_hmb_mock_power_state(t->mock, true);
	asleep = c->kept ? NVME_HMB_ENABLED :
		 c->hibernate ? NVME_HMB_OFF : NVME_HMB_SUSPENDED;
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), asleep);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.ehm, c->kept);
	KUNIT_EXPECT_EQ(test, v.set_cmds - v0.set_cmds, c->kept ? 0 : 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.sleeps_kept, c->kept ? 1 : 0);
	/* Asleep, kept or not: a resize waits for the wake-up. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	if (powered)
		nvme_hmb_mock_power_state(t->mock, false);

	nvme_hmb_wake(t->ctrl, c->hibernate);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.set_cmds - v0.set_cmds, c->kept ? 0 : 2);
	KUNIT_EXPECT_EQ(test, v.mr_returns - v0.mr_returns,
			(c->kept || c->hibernate) ? 0 : 1);
	KUNIT_EXPECT_EQ(test, v.hmnar, c->hmbr && !c->refuse);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.suspends, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resumes, 1);
	expect_agree(test);
}

/*
 * Kept for a powered suspend, but the driver reset the controller after
 * all (a power state it refused, a shutdown): the reset report finds it
 * holding nothing, and the wake-up returns the buffer.
 */
static void kept_then_reset_returns(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5_hmbr, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, t->ctrl->stats.sleeps_kept, 1);
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_TRUE(test, v.hmnar);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resumes, 1);
	expect_agree(test);
}

static struct kunit_case nvme_hmb_ctrl_cases[] = {
	KUNIT_CASE(enable_bg5),
	KUNIT_CASE(enable_p3plus_limited),
	KUNIT_CASE(hmmaxd8_under_128),
	KUNIT_CASE(grow_rebuilds_when_hmmaxd_binds),
	KUNIT_CASE(grow_gets_nothing),
	KUNIT_CASE(grow_enlarged_list_gets_nothing),
	KUNIT_CASE(grows_around_reset),
	KUNIT_CASE(shrink_builds_before_switching),
	KUNIT_CASE(min_is_pref_fragmented),
	KUNIT_CASE(resize_both_ways),
	KUNIT_CASE(suspend_resume_mr),
	KUNIT_CASE(dmesg_news_only),
	KUNIT_CASE(sizes_for_messages),
	KUNIT_CASE(mr_refused_falls_back),
	KUNIT_CASE(reset_returns_buffer),
	KUNIT_CASE(late_reset_report),
	KUNIT_CASE(resetting_disable_not_sent),
	KUNIT_CASE(resetting_off_not_sent),
	KUNIT_CASE(resetting_enable_deferred),
	KUNIT_CASE(shrink_deferred_by_reset_is_fresh),
	KUNIT_CASE(set_rejected_frees),
	KUNIT_CASE(set_error_after_execution),
	KUNIT_CASE(mr_seq_error_disables_first),
	KUNIT_CASE(set_lost_completion),
	KUNIT_CASE(disable_fails_keeps_memory),
	KUNIT_CASE(lost_commands_then_reset_is_fresh),
	KUNIT_CASE(get_features_fails),
	KUNIT_CASE(late_enable_disabled_first),
	KUNIT_CASE(late_disable_keeps_memory),
	KUNIT_CASE(enable_not_made),
	KUNIT_CASE(shared_enable_denied),
	KUNIT_CASE(get_lies_counted),
	KUNIT_CASE(dies_mid_command),
	KUNIT_CASE(silent_resets),
	KUNIT_CASE(fail_each_step),
	KUNIT_CASE(double_teardown),
	KUNIT_CASE(gone_frees_without_commands),
	KUNIT_CASE(late_report_after_failed_grow),
	KUNIT_CASE(reset_report_unsure_disables_first),
	KUNIT_CASE(reset_report_while_resetting),
	KUNIT_CASE(reset_report_finds_unknown),
	KUNIT_CASE(reset_report_while_asleep),
	KUNIT_CASE(shared_attach_stays_back),
	KUNIT_CASE(shared_attach_unknown_owner),
	KUNIT_CASE(shared_reset_reports),
	KUNIT_CASE(shared_resize_never_disables_other),
	KUNIT_CASE(shared_stepped_back_report_unread),
	KUNIT_CASE(shared_stepped_back_report_unknown),
	KUNIT_CASE(shared_reset_in_suspend_finds_other),
	KUNIT_CASE(shared_executed_error_disables),
	KUNIT_CASE(shared_sleep_finds_other),
	KUNIT_CASE(shared_wake_finds_unknown),
	KUNIT_CASE(shared_return_finds_it_held),
	KUNIT_CASE(shared_fresh_enable_disables_ours_first),
	KUNIT_CASE(shared_return_after_failed_grow),
	KUNIT_CASE(reclaim_to_off_disable_fails),
	KUNIT_CASE_PARAM(mock_rejects, raw_gen_params),
	KUNIT_CASE(mock_rejects_65536_entries),
	KUNIT_CASE(mock_sees_list_change),
	KUNIT_CASE(mock_watches_after_failed_disable),
	KUNIT_CASE(hmnare_not_without_hmbr),
	KUNIT_CASE(hmnare_on_every_enable),
	KUNIT_CASE(hmnare_refused_retries_without),
	KUNIT_CASE_PARAM(sleep_keeps_with_hmnar, keep_gen_params),
	KUNIT_CASE(kept_then_reset_returns),
	{}
};

static struct kunit_suite nvme_hmb_ctrl_suite = {
	.name = "nvme_hmb_ctrl",
	.init = ctrl_test_init,
	.exit = ctrl_test_exit,
	.test_cases = nvme_hmb_ctrl_cases,
};

kunit_test_suite(nvme_hmb_ctrl_suite);

/* ---------------------------------------------------------------------
 * Memory pressure and system sleep (suite nvme_hmb_reclaim)
 */

static void reclaim_from_tail(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	/* HMMIN is 14 MiB: twelve 4 MiB buffers can go, not 50 MiB. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_reclaimable(t->ctrl, false), MIB(48));
	KUNIT_EXPECT_EQ(test, nvme_hmb_reclaimable(t->ctrl, true), MIB(64));
	/* 6 MiB asked: whole 4 MiB buffers, so 8 MiB go. */
	reclaim(t->ctrl, MIB(6), false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(56));
	KUNIT_EXPECT_EQ(test, nvme_hmb_nr_descs(t->ctrl), 14);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_RECLAIMED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.reclaims, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.pages_reclaimed, MIB(8) >> 12);
	expect_agree(test);
}

static void reclaim_stops_at_hmmin(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	/* HMMIN is 14 MiB: 16 MiB (four buffers) is the least kept. */
	reclaim(t->ctrl, MIB(1024), false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_EXPECT_EQ(test, nvme_hmb_reclaimable(t->ctrl, false), 0);
	expect_agree(test);
	/* Severe pressure: below HMMIN means off. */
	reclaim(t->ctrl, MIB(4), true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_RECLAIMED);
	expect_agree(test);
}

static void reclaim_floor_and_opt_out(struct kunit *test)
{
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_reclaim(t->ctrl, true, MIB(40)), 0);
	reclaim(t->ctrl, MIB(1024), true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(40));
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_reclaim(t->ctrl, false, 0), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reclaimable(t->ctrl, true), 0);
	reclaim(t->ctrl, MIB(1024), true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(40));
	expect_agree(test);
}

static void regrow_after_quiet(struct kunit *test)
{
	unsigned long long_ago = jiffies - 3600 * HZ;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	reclaim(t->ctrl, MIB(1024), false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));

	/* Pressure just now: no regrow. */
	mutex_lock(&t->ctrl->lock);
	nvme_hmb_regrow_locked(t->ctrl);
	mutex_unlock(&t->ctrl->lock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));

	/* An hour of quiet: back to the limit. */
	mutex_lock(&t->ctrl->lock);
	t->ctrl->last_reclaim = long_ago;
	WRITE_ONCE(nvme_hmb_last_pressure, long_ago);
	nvme_hmb_regrow_locked(t->ctrl);
	mutex_unlock(&t->ctrl->lock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.regrows, 1);
	expect_agree(test);
}

/*
 * A resize gave back what reclaim took before the quiet period ended: the
 * regrow has nothing to do, and must neither send a command nor back
 * off.  Only the first reclaim after a regrow judges it: soon after, the
 * wait doubles; a regrow that held long enough resets it.
 */
static void regrow_after_resize_back(struct kunit *test)
{
	unsigned long long_ago = jiffies - 3600 * HZ;
	struct nvme_hmb_mock_view before, after;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	reclaim(t->ctrl, MIB(1024), false);
	KUNIT_ASSERT_EQ(test, nvme_hmb_size(t->ctrl), MIB(16));
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));

	nvme_hmb_mock_view(t->mock, &before);
	mutex_lock(&t->ctrl->lock);
	t->ctrl->last_reclaim = long_ago;
	WRITE_ONCE(nvme_hmb_last_pressure, long_ago);
	nvme_hmb_regrow_locked(t->ctrl);
	mutex_unlock(&t->ctrl->lock);
	nvme_hmb_mock_view(t->mock, &after);
	KUNIT_EXPECT_FALSE(test, t->ctrl->shrunk);
	KUNIT_EXPECT_EQ(test, t->ctrl->regrow_backoff, 0);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.regrows, 0);
	KUNIT_EXPECT_EQ(test, after.set_cmds, before.set_cmds);

	/* Backed off once, then a regrow that held an hour: forgotten. */
	mutex_lock(&t->ctrl->lock);
	t->ctrl->regrow_backoff = 8;
	t->ctrl->last_regrow = long_ago;
	mutex_unlock(&t->ctrl->lock);
	reclaim(t->ctrl, MIB(8), false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(56));
	KUNIT_EXPECT_EQ(test, t->ctrl->regrow_backoff, 0);

	/*
	 * A regrow just now, reclaimed at once: twice the wait.  The next
	 * reclaim without a regrow in between judges nothing.
	 */
	mutex_lock(&t->ctrl->lock);
	t->ctrl->shrunk = false;
	t->ctrl->last_regrow = jiffies;
	mutex_unlock(&t->ctrl->lock);
	reclaim(t->ctrl, MIB(8), false);
	KUNIT_EXPECT_EQ(test, t->ctrl->regrow_backoff, 2);
	mutex_lock(&t->ctrl->lock);
	t->ctrl->shrunk = false;	/* as a regrow with nothing to do */
	mutex_unlock(&t->ctrl->lock);
	reclaim(t->ctrl, MIB(8), false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(40));
	KUNIT_EXPECT_EQ(test, t->ctrl->regrow_backoff, 2);
	expect_agree(test);
}

static void suspend_keeps_and_returns(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SLEEP);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(32)), -EBUSY);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reclaimable(t->ctrl, true), 0);
	/* nvme-pci reset the controller on the way back: still returned. */
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_wake(t->ctrl, false);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 1);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_GRANTED);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.suspends, 1);
	KUNIT_EXPECT_EQ(test, t->ctrl->stats.resumes, 1);
	expect_agree(test);
}

static void hibernation_frees_and_rebuilds(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_sleep(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_NULL(test, t->ctrl->buf.descs);
	nvme_hmb_wake(t->ctrl, true);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/* A setup that fails after hibernation is tried again later. */
static void hibernation_setup_retried(struct kunit *test)
{
	struct ctrl_test *t = seamed_mock(test, &bg5, MIB(128));

	KUNIT_ASSERT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), 0);
	nvme_hmb_sleep(t->ctrl, true);
	t->fail_above = 0;			/* memory is short on restore */
	nvme_hmb_wake(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl),
			NVME_HMB_R_ALLOC_BELOW_MIN);
	KUNIT_EXPECT_TRUE(test, t->ctrl->shrunk);
	KUNIT_EXPECT_TRUE(test, delayed_work_pending(&t->ctrl->regrow_work));
	/* The retry is a regrow: it sets the HMB up once memory is back. */
	t->fail_above = MIB(128);
	mutex_lock(&t->ctrl->lock);
	t->ctrl->last_reclaim = jiffies - 3600 * HZ;
	WRITE_ONCE(nvme_hmb_last_pressure, t->ctrl->last_reclaim);
	nvme_hmb_regrow_locked(t->ctrl);
	mutex_unlock(&t->ctrl->lock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

/*
 * A controller attached while the system goes to sleep is not enabled
 * until the system wakes up: it would stay enabled through suspend.
 */
static void attach_while_asleep(struct kunit *test)
{
	struct ctrl_test *t = test->priv;

	nvme_hmb_sleep_all(false);
	new_mock(test, &bg5);
	KUNIT_EXPECT_EQ(test, nvme_hmb_start(t->ctrl), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_SLEEP);
	KUNIT_EXPECT_EQ(test, nvme_hmb_set_limit(t->ctrl, MIB(64)), -EBUSY);
	expect_agree(test);
	nvme_hmb_wake_all(false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	expect_agree(test);
}

static void sleep_with_failed_disable(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 0, INVALID_FIELD);
	/* Even for hibernation, memory the controller may use is kept. */
	nvme_hmb_sleep(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	nvme_hmb_mock_check(t->mock);
	nvme_hmb_wake(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_FAILED);
	/* The reset after restore makes it safe, and it is given fresh. */
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_GRANTED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 0);
	expect_agree(test);
}

/*
 * Hibernation while the controller is being reset: the disable cannot be
 * sent (-EAGAIN), so the memory stays, enabled as far as the engine
 * knows.  The reset's report, arriving while asleep, finds it disabled;
 * the wake-up after restore enables the same memory, never with MR=1.
 */
static void hibernate_while_resetting(struct kunit *test)
{
	struct nvme_hmb_mock_view v;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	nvme_hmb_mock_fail_set(t->mock, 0, -EAGAIN);
	nvme_hmb_sleep(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, t->ctrl->buf.size, MIB(64));
	nvme_hmb_mock_reset(t->mock);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_SUSPENDED);
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_FALSE(test, v.ehm);
	nvme_hmb_wake(t->ctrl, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));
	nvme_hmb_mock_view(t->mock, &v);
	KUNIT_EXPECT_EQ(test, v.mr_returns, 0);
	expect_agree(test);
}

/*
 * A controller attached just before the sleep walk, its start after it
 * (it waits for the wake-up, as one attached during the sleep does): the
 * wake-up sets its HMB up.  No limit was ever written for it.
 */
static void attach_before_sleep_walk(struct kunit *test)
{
	struct ctrl_test *t = test->priv;

	new_mock(test, &bg5);
	nvme_hmb_sleep(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_start(t->ctrl), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_OFF);
	nvme_hmb_wake(t->ctrl, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_state(t->ctrl), NVME_HMB_ENABLED);
	KUNIT_EXPECT_GT(test, nvme_hmb_size(t->ctrl), 0);
	expect_agree(test);
}

/*
 * Keep the controllers other than @self (the mock module's own mock0,
 * enabled at its load) out of a shrinker scan, @out, and let them back
 * in: their reclaim switch is off meanwhile, @mask records which had it
 * on.  Otherwise the scan takes their memory, and their regrow later
 * changes the DMA count another test reads.
 */
static void others_out_of_reclaim(struct nvme_hmb_ctrl *self,
				  unsigned long *mask, bool out)
{
	struct nvme_hmb_ctrl *ctrl;
	unsigned int i = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ctrl, &nvme_hmb_ctrls, node) {
		if (ctrl == self || i >= BITS_PER_LONG)
			continue;
		if (out) {
			if (READ_ONCE(ctrl->reclaim))
				__set_bit(i, mask);
			WRITE_ONCE(ctrl->reclaim, false);
		} else if (test_bit(i, mask)) {
			WRITE_ONCE(ctrl->reclaim, true);
		}
		i++;
	}
	rcu_read_unlock();
}

/*
 * The shrinker asks, the reclaim work gives back.  With a reclaim floor
 * of 40 MiB above HMMIN (14 MiB), 24 MiB of the 64 can go at either
 * severity.  A controller being detached (dying) is asked for nothing:
 * its reclaim work, cancelled by the detach, must not be queued again.
 */
static void shrinker_scan_queues_reclaim(struct kunit *test)
{
	const unsigned long pages = MIB(24) >> PAGE_SHIFT;
	unsigned long others = 0;
	struct ctrl_test *t;

	t = enabled_mock(test, &bg5, MIB(64));
	KUNIT_ASSERT_EQ(test, nvme_hmb_set_reclaim(t->ctrl, true, MIB(40)), 0);
	KUNIT_ASSERT_EQ(test, nvme_hmb_reclaimable(t->ctrl, false), MIB(24));
	KUNIT_ASSERT_EQ(test, nvme_hmb_reclaimable(t->ctrl, true), MIB(24));
	others_out_of_reclaim(t->ctrl, &others, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_count_pages(false), pages);

	WRITE_ONCE(t->ctrl->dying, true);
	KUNIT_EXPECT_EQ(test, nvme_hmb_scan_pages(pages, false), SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->ctrl->reclaim_pending), 0);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&t->ctrl->reclaim_work));
	WRITE_ONCE(t->ctrl->dying, false);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(64));

	KUNIT_EXPECT_EQ(test, nvme_hmb_scan_pages(pages, false), pages);
	flush_delayed_work(&t->ctrl->reclaim_work);
	KUNIT_EXPECT_EQ(test, nvme_hmb_size(t->ctrl), MIB(40));
	KUNIT_EXPECT_EQ(test, nvme_hmb_reason(t->ctrl), NVME_HMB_R_RECLAIMED);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->ctrl->reclaim_pending), 0);
	expect_agree(test);

	/* At the floor: nothing more to offer, nothing queued. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_count_pages(false), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_scan_pages(pages, false), SHRINK_STOP);
	others_out_of_reclaim(t->ctrl, &others, false);
}

/*
 * Whether memory is short, as the shrinker's count and scan ask before
 * offering anything: a node's free pages, free CMA pages not counted,
 * against the sum of its zones' high watermarks and lowmem reserves.  A
 * machine just after drop_caches (plenty free) is not short; one where
 * kswapd runs (every zone below its low watermark) is.
 */
static void memory_short_by_watermarks(struct kunit *test)
{
	/* 1 GiB: DMA (16 MiB) and DMA32, min_free_kbytes 8 MiB, in pages. */
	struct nvme_hmb_zone_mem plenty[] = {
		{ .free = 3800, .high = 30, .reserve = 1000 },
		{ .free = 200000, .high = 2600 },
	};
	struct nvme_hmb_zone_mem kswapd[] = {
		{ .free = 20, .high = 30, .reserve = 1000 },
		{ .free = 2000, .high = 2600 },
	};
	/* Free above the high watermarks only by counting free CMA. */
	struct nvme_hmb_zone_mem cma[] = {
		{ .free = 5000, .free_cma = 3000, .high = 2600 },
	};
	/* Exactly at the high watermarks: kswapd would stop, so do we. */
	struct nvme_hmb_zone_mem at_high[] = {
		{ .free = 1030, .high = 30, .reserve = 1000 },
		{ .free = 2600, .high = 2600 },
	};
	/* The counters are read without a lock: CMA may read above free. */
	struct nvme_hmb_zone_mem torn[] = {
		{ .free = 100, .free_cma = 200, .high = 30 },
	};

	KUNIT_EXPECT_FALSE(test, nvme_hmb_zones_short(plenty,
						      ARRAY_SIZE(plenty)));
	KUNIT_EXPECT_TRUE(test, nvme_hmb_zones_short(kswapd,
						     ARRAY_SIZE(kswapd)));
	KUNIT_EXPECT_TRUE(test, nvme_hmb_zones_short(cma, ARRAY_SIZE(cma)));
	cma[0].free_cma = 0;
	KUNIT_EXPECT_FALSE(test, nvme_hmb_zones_short(cma, ARRAY_SIZE(cma)));
	KUNIT_EXPECT_FALSE(test, nvme_hmb_zones_short(at_high,
						      ARRAY_SIZE(at_high)));
	at_high[1].free--;
	KUNIT_EXPECT_TRUE(test, nvme_hmb_zones_short(at_high,
						     ARRAY_SIZE(at_high)));
	KUNIT_EXPECT_TRUE(test, nvme_hmb_zones_short(torn, ARRAY_SIZE(torn)));
	/* A node without a zone the reclaim is for is not short. */
	KUNIT_EXPECT_FALSE(test, nvme_hmb_zones_short(plenty, 0));
}

static struct kunit_case nvme_hmb_pressure_cases[] = {
	KUNIT_CASE(reclaim_from_tail),
	KUNIT_CASE(reclaim_stops_at_hmmin),
	KUNIT_CASE(reclaim_floor_and_opt_out),
	KUNIT_CASE(regrow_after_quiet),
	KUNIT_CASE(regrow_after_resize_back),
	KUNIT_CASE(suspend_keeps_and_returns),
	KUNIT_CASE(hibernation_frees_and_rebuilds),
	KUNIT_CASE(hibernation_setup_retried),
	KUNIT_CASE(attach_while_asleep),
	KUNIT_CASE(attach_before_sleep_walk),
	KUNIT_CASE(sleep_with_failed_disable),
	KUNIT_CASE(hibernate_while_resetting),
	KUNIT_CASE(shrinker_scan_queues_reclaim),
	KUNIT_CASE(memory_short_by_watermarks),
	{}
};

static struct kunit_suite nvme_hmb_pressure_suite = {
	.name = "nvme_hmb_reclaim",
	.init = ctrl_test_init,
	.exit = ctrl_test_exit,
	.test_cases = nvme_hmb_pressure_cases,
};

kunit_test_suite(nvme_hmb_pressure_suite);
