// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: building and freeing the buffers and the descriptor list, with an
 * allocation failure injected at every position.
 */
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "internal.h"

#define KIB(x)	((u64)(x) << 10)
#define MIB(x)	((u64)(x) << 20)

struct hmdl_test {
	struct platform_device *pdev;
	struct nvme_hmb_host host;
	struct nvme_hmb_caps caps;
	struct nvme_hmb_plan plan;
	struct nvme_hmb_buf buf;
	struct nvme_hmb_alloc_hook hook;
	struct nvme_hmb_alloc_ctx ax;
	/* seam settings */
	int fail_nth;		/* fail this attempt, -1 for none */
	u64 fail_above;		/* fail every chunk larger, 0 for none */
	u64 budget;		/* fail once this much is allocated, 0 = none */
	u64 granted;
};

static bool hmdl_seam(void *priv, unsigned int nth, u64 size)
{
	struct hmdl_test *t = priv;

	if (t->fail_nth >= 0 && nth == t->fail_nth)
		return true;
	if (nth && t->fail_above && size > t->fail_above)
		return true;
	if (nth && t->budget && t->granted + size > t->budget)
		return true;
	if (nth)
		t->granted += size;
	return false;
}

static int hmdl_test_init(struct kunit *test)
{
	struct platform_device_info info = {
		.name = "nvme_hmb_kunit",
		.id = PLATFORM_DEVID_AUTO,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct hmdl_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	t->pdev = platform_device_register_full(&info);
	if (IS_ERR(t->pdev))
		return PTR_ERR(t->pdev);
	t->host = (struct nvme_hmb_host){
		.limit = MIB(128), .granule = PAGE_SIZE,
		.buddy_chunk = (u64)PAGE_SIZE * MAX_ORDER_NR_PAGES,
		.max_chunk = U64_MAX, .max_descs = NVME_HMB_MAX_DESCS,
	};
	t->fail_nth = -1;
	t->hook.fail = hmdl_seam;
	t->hook.priv = t;
	t->ax.dev = &t->pdev->dev;
	t->ax.hook = &t->hook;
	test->priv = t;
	return 0;
}

static void hmdl_test_exit(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	nvme_hmb_buf_free(&t->pdev->dev, &t->buf);
	platform_device_unregister(t->pdev);
}

static void plan_for(struct kunit *test, struct nvme_hmb_id id, u64 limit)
{
	struct hmdl_test *t = test->priv;
	enum nvme_hmb_reason r;

	t->host.limit = limit;
	nvme_hmb_caps_from_id(&id, &t->caps);
	r = nvme_hmb_negotiate(&t->caps, &t->host, &t->plan);
	KUNIT_ASSERT_TRUE(test,
			  r == NVME_HMB_R_GRANTED || r == NVME_HMB_R_LIMITED);
}

/* Build to the plan's target; returns nvme_hmb_buf_init()'s result. */
static int build(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	int ret;

	ret = nvme_hmb_buf_init(&t->ax, &t->buf, t->plan.max_descs);
	if (!ret)
		nvme_hmb_buf_grow(&t->ax, &t->buf, &t->host, &t->plan,
				  t->plan.target);
	return ret;
}

/* What must hold of any buffer set, whatever failed while building it. */
static void check_invariants(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	struct nvme_hmb_buf *b = &t->buf;
	u64 sum = 0, prev = U64_MAX;
	u32 hsize, i;

	KUNIT_EXPECT_LE(test, b->size, t->plan.target);
	KUNIT_EXPECT_LE(test, b->nr_chunks, t->plan.max_descs);
	KUNIT_EXPECT_EQ(test, b->descs_dma % 16, 0);
	KUNIT_EXPECT_EQ(test, b->descs_bytes,
			b->max_chunks * sizeof(*b->descs));
	KUNIT_EXPECT_LE(test, b->max_chunks, t->plan.max_descs);
	hsize = nvme_hmb_buf_write_descs(&t->pdev->dev, b);
	for (i = 0; i < b->nr_chunks; i++) {
		u64 addr = le64_to_cpu(b->descs[i].addr);
		u64 bsize = le32_to_cpu(b->descs[i].size);

		KUNIT_EXPECT_EQ(test, addr, b->chunks[i].dma);
		KUNIT_EXPECT_EQ(test, addr % NVME_HMB_PAGE, 0);
		KUNIT_EXPECT_EQ(test, b->chunks[i].size % NVME_HMB_PAGE, 0);
		KUNIT_EXPECT_EQ(test, bsize << NVME_HMB_PAGE_SHIFT,
				b->chunks[i].size);
		KUNIT_EXPECT_GE(test, b->chunks[i].size, t->plan.min_chunk);
		/* Largest first. */
		KUNIT_EXPECT_LE(test, b->chunks[i].size, prev);
		KUNIT_EXPECT_EQ(test, b->descs[i].rsvd, 0);
		prev = b->chunks[i].size;
		sum += b->chunks[i].size;
	}
	KUNIT_EXPECT_EQ(test, sum, b->size);
	KUNIT_EXPECT_EQ(test, (u64)hsize << NVME_HMB_PAGE_SHIFT, b->size);
}

static void build_bg5(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	/*
	 * 64 MiB in 4 MiB chunks: 16 entries.  Under memory pressure the
	 * allocator may give less, which the invariants allow; a VM with
	 * RAM to spare gives all.
	 */
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 16);
	KUNIT_EXPECT_EQ(test, t->ax.failures, 0);
}

static void build_mixed_remainder(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	/* 14 MiB: 4 + 4 + 4 + 2, mixing sizes to cover the remainder. */
	plan_for(test, (struct nvme_hmb_id){ 3584, 3584, 1, 0 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(14));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 4);
	KUNIT_EXPECT_EQ(test, t->buf.chunks[3].size, MIB(2));
}

static void build_fragmented_keeps_partial(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	/*
	 * HMMIN = HMPRE = 64 MiB, and nothing above 1 MiB can be had: all or
	 * nothing would end with nothing; 64 chunks of 1 MiB reach it.
	 */
	plan_for(test, (struct nvme_hmb_id){ 16384, 16384, 0, 0 }, MIB(128));
	t->fail_above = MIB(1);
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 64);
	/* 4 MiB and 2 MiB failed once each; no size was retried. */
	KUNIT_EXPECT_EQ(test, t->ax.failures, 2);
}

static void build_hmmaxd_limited(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	/* HMMAXD 8 asks for 16 MiB chunks; only 4 MiB blocks exist here. */
	plan_for(test, (struct nvme_hmb_id){ 51200, 823, 0, 8 }, MIB(128));
	t->fail_above = MIB(4);
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(32));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 8);
	KUNIT_EXPECT_TRUE(test, t->ax.descs_exhausted);
	KUNIT_EXPECT_EQ(test, nvme_hmb_outcome(&t->caps, &t->plan,
					       t->buf.size, t->buf.nr_chunks),
			NVME_HMB_R_HMMAXD);
}

static void build_budget_below_min(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	/* Only 40 MiB to be had for a 64 MiB HMMIN: the outcome says no. */
	plan_for(test, (struct nvme_hmb_id){ 16384, 16384, 0, 0 }, MIB(128));
	t->budget = MIB(40);
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(40));
	KUNIT_EXPECT_EQ(test, nvme_hmb_outcome(&t->caps, &t->plan,
					       t->buf.size, t->buf.nr_chunks),
			NVME_HMB_R_ALLOC_BELOW_MIN);
}

/*
 * Fail attempt n, for every n up to the last attempt of an unfailed build
 * of the P3 Plus (list + 8 chunks of 4 MiB): attempt 0 is the list.
 */
static void build_fail_every_position(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	int n;

	for (n = 0; n <= 9; n++) {
		t->fail_nth = n;
		t->granted = 0;
		memset(&t->ax, 0, sizeof(t->ax));
		t->ax.dev = &t->pdev->dev;
		t->ax.hook = &t->hook;
		plan_for(test, (struct nvme_hmb_id){ 8192, 8192, 512, 16 },
			 MIB(128));
		if (build(test)) {
			KUNIT_EXPECT_EQ(test, n, 0);
			KUNIT_EXPECT_NULL(test, t->buf.descs);
			KUNIT_EXPECT_NULL(test, t->buf.chunks);
			continue;
		}
		check_invariants(test);
		if (n == 0)
			continue;
		KUNIT_EXPECT_EQ(test, t->ax.failures, n == 9 ? 0 : 1);
		/* One failed 4 MiB chunk is made up with 2 MiB ones. */
		KUNIT_EXPECT_EQ_MSG(test, t->buf.size, MIB(32), "n=%d", n);
		nvme_hmb_buf_free(&t->pdev->dev, &t->buf);
		KUNIT_EXPECT_NULL(test, t->buf.descs);
		KUNIT_EXPECT_EQ(test, t->buf.size, 0);
	}
}

/*
 * Behind a merging IOMMU one contiguous buffer is tried first; when it
 * cannot be had, the list still takes chunks, as many as the plan allows.
 */
static void contig_falls_back_to_chunks(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	t->host.contig = true;
	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(128));
	t->fail_nth = 1;	/* the contiguous attempt, after the list */
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_NULL(test, t->buf.sgt);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(64));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 16);
	KUNIT_EXPECT_EQ(test, t->ax.failures, 1);
}

static void trim_and_free_twice(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	struct device *dev = &t->pdev->dev;

	plan_for(test, (struct nvme_hmb_id){ 3584, 3584, 1, 0 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	/* 4+4+4+2: down to 9 MiB leaves 4+4. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_buf_trim(dev, &t->buf, MIB(9)), MIB(8));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 2);
	KUNIT_EXPECT_EQ(test, nvme_hmb_buf_write_descs(dev, &t->buf), 2048);
	/* The entries past the end are cleared. */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->buf.descs[2].size), 0);
	/* Written, it is sealed; a controller let go: thawed, a new set. */
	KUNIT_EXPECT_TRUE(test, t->buf.sealed);
	nvme_hmb_buf_thaw(&t->buf);
	KUNIT_EXPECT_FALSE(test, t->buf.sealed);
	KUNIT_EXPECT_FALSE(test, t->buf.returnable);
	KUNIT_EXPECT_EQ(test, nvme_hmb_buf_trim(dev, &t->buf, 0), 0);
	nvme_hmb_buf_free(dev, &t->buf);
	/* Idempotent: an error path followed by teardown frees nothing twice. */
	nvme_hmb_buf_free(dev, &t->buf);
	KUNIT_EXPECT_NULL(test, t->buf.chunks);
	KUNIT_EXPECT_NULL(test, t->buf.descs);
	KUNIT_EXPECT_EQ(test, t->buf.descs_bytes, 0);
}

/*
 * The next set beside a sealed one: a list of its own, the held buffers
 * borrowed.  Freed, it gives back only what it added; retired into, the
 * old set gives back only its list, and the next set owns every buffer.
 * The sealed set is never written meanwhile.
 */
static void derive_then_free_or_retire(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	struct device *dev = &t->pdev->dev;
	struct nvme_host_mem_buf_desc held[4];
	struct nvme_hmb_buf next;
	s64 allocs;

	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(16));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	KUNIT_ASSERT_EQ(test, t->buf.nr_chunks, 4);
	nvme_hmb_buf_write_descs(dev, &t->buf);
	memcpy(held, t->buf.descs, sizeof(held));
	allocs = atomic64_read(&nvme_hmb_dma_allocs);

	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(30));
	KUNIT_ASSERT_EQ(test, nvme_hmb_buf_derive(&t->ax, &next, &t->buf,
						  t->buf.max_chunks), 0);
	KUNIT_EXPECT_EQ(test, next.borrowed, 4);
	KUNIT_EXPECT_FALSE(test, next.sealed);
	KUNIT_EXPECT_NE(test, next.descs_dma, t->buf.descs_dma);
	nvme_hmb_buf_grow(&t->ax, &next, &t->host, &t->plan, t->plan.target);
	KUNIT_EXPECT_EQ(test, next.size, MIB(30));
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs + 5);
	/* Abandoned: its list and its four buffers go, the held ones stay. */
	nvme_hmb_buf_free(dev, &next);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(16));
	KUNIT_EXPECT_EQ(test, memcmp(held, t->buf.descs, sizeof(held)), 0);

	KUNIT_ASSERT_EQ(test, nvme_hmb_buf_derive(&t->ax, &next, &t->buf,
						  t->buf.max_chunks), 0);
	nvme_hmb_buf_grow(&t->ax, &next, &t->host, &t->plan, t->plan.target);
	/* Retired into next: only the old list goes. */
	nvme_hmb_buf_retire(dev, &t->buf, &next);
	KUNIT_EXPECT_EQ(test, next.borrowed, 0);
	KUNIT_EXPECT_NULL(test, t->buf.descs);
	KUNIT_EXPECT_EQ(test, atomic64_read(&nvme_hmb_dma_allocs), allocs + 4);
	t->buf = next;
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 8);
}

static void grow_appends(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(16));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(16));
	plan_for(test, (struct nvme_hmb_id){ 16384, 3584, 1, 1024 }, MIB(30));
	nvme_hmb_buf_grow(&t->ax, &t->buf, &t->host, &t->plan, t->plan.target);
	check_invariants(test);
	/* 4 more of 4 MiB, then 2 MiB: 16 + 14. */
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(30));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 8);
}

/*
 * Nothing above 8 KiB is free: the list starts at one page (256 entries),
 * doubles to 512 (8 KiB) as 8 KiB buffers fill it, and stops when 1024
 * entries (16 KiB) cannot be had: 512 buffers of 8 KiB are still an HMB.
 */
static void list_grows_on_demand(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	if (PAGE_SIZE != SZ_4K)
		kunit_skip(test, "for 4 KiB pages");
	plan_for(test, (struct nvme_hmb_id){ 16384, 256, 0, 0 }, MIB(128));
	t->fail_above = KIB(8);
	t->fail_nth = 0;	/* not the first list of one page */
	KUNIT_ASSERT_EQ(test, build(test), -ENOMEM);
	t->fail_nth = -1;
	memset(&t->ax, 0, sizeof(t->ax));
	t->ax.dev = &t->pdev->dev;
	t->ax.hook = &t->hook;
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.max_chunks, 512);
	KUNIT_EXPECT_EQ(test, t->buf.descs_bytes, KIB(8));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 512);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(4));
	KUNIT_EXPECT_TRUE(test, t->ax.descs_exhausted);
}

/*
 * Chunks are zeroed pages of the page allocator, mapped for the device
 * as they are (this device has no IOMMU and no DMA offset): never
 * coherent memory, which comes from CMA first, and nothing of the host's
 * earlier data is shown to the controller.
 */
static void check_mapped_pages(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	u32 i;

	KUNIT_EXPECT_TRUE(test, t->buf.pages);
	for (i = 0; i < t->buf.nr_chunks; i++) {
		struct nvme_hmb_chunk *c = &t->buf.chunks[i];

		KUNIT_ASSERT_TRUE(test, virt_addr_valid(c->cookie));
		KUNIT_EXPECT_EQ(test, (u64)c->dma,
				(u64)page_to_phys(virt_to_page(c->cookie)));
		KUNIT_EXPECT_NULL(test, memchr_inv(c->cookie, 0, c->size));
	}
}

/* 8 MiB in two blocks of the largest order; then three pages in one. */
static void chunks_are_mapped_pages(struct kunit *test)
{
	struct hmdl_test *t = test->priv;

	plan_for(test, (struct nvme_hmb_id){ 2048, 2048, 1, 0 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_EQ(test, t->buf.size, MIB(8));
	KUNIT_EXPECT_EQ(test, t->buf.nr_chunks, 2);
	check_mapped_pages(test);
	nvme_hmb_buf_free(&t->pdev->dev, &t->buf);

	if (PAGE_SIZE != SZ_4K)
		return;
	plan_for(test, (struct nvme_hmb_id){ 3, 3, 1, 1 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_ASSERT_EQ(test, t->buf.nr_chunks, 1);
	KUNIT_EXPECT_EQ(test, t->buf.chunks[0].size, KIB(12));
	check_mapped_pages(test);
}

/*
 * A device that cannot reach all memory (a 16 MiB DMA mask) would have
 * its mapped pages bounced through swiotlb, or not mapped at all: it gets
 * coherent memory it can reach, as nvme-pci gives it.
 */
static void limited_device_gets_coherent_chunks(struct kunit *test)
{
	struct hmdl_test *t = test->priv;
	u32 i;

	KUNIT_ASSERT_EQ(test, dma_set_mask_and_coherent(&t->pdev->dev,
							DMA_BIT_MASK(24)), 0);
	if (!dma_addressing_limited(&t->pdev->dev))
		kunit_skip(test, "all of this machine's memory is below 16 MiB");
	plan_for(test, (struct nvme_hmb_id){ 16, 16, 1, 0 }, MIB(128));
	KUNIT_ASSERT_EQ(test, build(test), 0);
	check_invariants(test);
	KUNIT_EXPECT_FALSE(test, t->buf.pages);
	KUNIT_EXPECT_EQ(test, t->buf.size, KIB(64));
	for (i = 0; i < t->buf.nr_chunks; i++)
		KUNIT_EXPECT_LE(test, t->buf.chunks[i].dma +
				t->buf.chunks[i].size, MIB(16));
}

static struct kunit_case nvme_hmb_hmdl_cases[] = {
	KUNIT_CASE(build_bg5),
	KUNIT_CASE(build_mixed_remainder),
	KUNIT_CASE(build_fragmented_keeps_partial),
	KUNIT_CASE(build_hmmaxd_limited),
	KUNIT_CASE(build_budget_below_min),
	KUNIT_CASE(build_fail_every_position),
	KUNIT_CASE(contig_falls_back_to_chunks),
	KUNIT_CASE(trim_and_free_twice),
	KUNIT_CASE(grow_appends),
	KUNIT_CASE(derive_then_free_or_retire),
	KUNIT_CASE(list_grows_on_demand),
	KUNIT_CASE(chunks_are_mapped_pages),
	KUNIT_CASE(limited_device_gets_coherent_chunks),
	{}
};

static struct kunit_suite nvme_hmb_hmdl_suite = {
	.name = "nvme_hmb_hmdl",
	.init = hmdl_test_init,
	.exit = hmdl_test_exit,
	.test_cases = nvme_hmb_hmdl_cases,
};

kunit_test_suite(nvme_hmb_hmdl_suite);
