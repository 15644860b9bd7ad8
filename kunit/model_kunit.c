// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: never less than Linux.  The engine's negotiation and allocator,
 * run over generated controllers, limits and memory states, against the
 * reference model of Linux 6.1's policy (linux_model.c).
 *
 * Memory is an allocator ceiling: an allocation succeeds when the
 * page-allocator block it needs is at most the ceiling (the largest free
 * block: 4 MiB fresh on x86, less when fragmented), in any number.  The
 * engine runs its own code (nvme_hmb_negotiate(), nvme_hmb_buf_init() and
 * nvme_hmb_buf_grow()) with the DMA API replaced by that rule through the
 * allocation hook, so nothing is allocated and thousands of cases run in
 * seconds.
 */
#include <kunit/test.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include "internal.h"
#include "linux_model.h"

#define KIB(x)	((u64)(x) << 10)
#define MIB(x)	((u64)(x) << 20)

/* The x86 page allocator: 4 KiB pages, 4 MiB largest block. */
#define MODEL_PAGE	SZ_4K
#define MODEL_BUDDY	MIB(4)

static const u64 ceilings[] = { MIB(4), MIB(2), KIB(512), KIB(64), KIB(8) };

static bool ceiling_allows(u64 ceiling, u64 bytes)
{
	return nvme_hmb_linux_fits(MODEL_PAGE, MODEL_BUDDY, ceiling, bytes);
}

static bool model_alloc(void *priv, u64 bytes)
{
	return ceiling_allows(*(u64 *)priv, bytes);
}

struct fake_mem {
	u64 ceiling;
	unsigned long next;	/* fake addresses, never dereferenced */
	u64 held;
};

static void *fake_alloc(void *priv, u64 size, bool list, dma_addr_t *dma)
{
	struct fake_mem *m = priv;

	if (!ceiling_allows(m->ceiling, size))
		return NULL;
	m->next += SZ_4M;
	m->held += size;
	*dma = m->next;
	return (void *)m->next;
}

static void fake_free(void *priv, u64 size, bool list, void *cookie,
		      dma_addr_t dma)
{
	struct fake_mem *m = priv;

	m->held -= size;
}

/* What the engine would enable for @id under @limit in memory @ceiling. */
struct engine_result {
	u64 size;
	u32 nr;
	u64 min_chunk_seen;	/* smallest buffer given */
	bool all_granules;	/* every buffer whole 4 KiB pages */
};

static void engine_grant(struct kunit *test, const struct nvme_hmb_id *id,
			 u64 limit, u64 ceiling, struct engine_result *r)
{
	struct fake_mem mem = { .ceiling = ceiling };
	struct nvme_hmb_alloc_hook hook = {
		.alloc = fake_alloc, .free = fake_free, .priv = &mem,
	};
	struct nvme_hmb_alloc_ctx ax = { .hook = &hook };
	struct nvme_hmb_host host = {
		.limit = limit, .granule = MODEL_PAGE,
		.buddy_chunk = MODEL_BUDDY, .max_chunk = MODEL_BUDDY,
		.max_descs = NVME_HMB_MAX_DESCS,
	};
	struct nvme_hmb_caps caps;
	struct nvme_hmb_plan plan;
	struct nvme_hmb_buf buf;
	enum nvme_hmb_reason reason;
	u32 i;

	memset(r, 0, sizeof(*r));
	nvme_hmb_caps_from_id(id, &caps);
	reason = nvme_hmb_negotiate(&caps, &host, &plan);
	if (reason != NVME_HMB_R_GRANTED && reason != NVME_HMB_R_LIMITED)
		return;
	if (nvme_hmb_buf_init(&ax, &buf, plan.max_descs))
		return;
	nvme_hmb_buf_grow(&ax, &buf, &host, &plan, plan.target);
	if (nvme_hmb_outcome(&caps, &plan, buf.size, buf.nr_chunks) !=
	    NVME_HMB_R_ALLOC_BELOW_MIN) {
		r->size = buf.size;
		r->nr = buf.nr_chunks;
		r->min_chunk_seen = U64_MAX;
		r->all_granules = true;
		for (i = 0; i < buf.nr_chunks; i++) {
			r->min_chunk_seen = min(r->min_chunk_seen,
						buf.chunks[i].size);
			if (buf.chunks[i].size % NVME_HMB_PAGE)
				r->all_granules = false;
		}
	}
	nvme_hmb_buf_free(NULL, &buf);
	KUNIT_EXPECT_EQ(test, mem.held, 0);
}

static void linux_grant(const struct nvme_hmb_id *id, u64 limit, u64 ceiling,
			struct nvme_hmb_linux_grant *g)
{
	struct nvme_hmb_linux_drive d = {
		.hmpre = id->hmpre, .hmmin = id->hmmin,
		.hmminds = id->hmminds, .hmmaxd = id->hmmaxd,
	};

	nvme_hmb_linux_model(&d, limit, MODEL_PAGE, MODEL_BUDDY, model_alloc,
			     &ceiling, g);
}

/* The specification's rules for an enabled HMB, and the host's limit. */
static void expect_spec(struct kunit *test, const struct nvme_hmb_id *id,
			u64 limit, const struct engine_result *r)
{
	u64 pref = (u64)id->hmpre << 12, min = (u64)id->hmmin << 12;

	if (!r->size)
		return;
	KUNIT_EXPECT_TRUE(test, r->all_granules);
	KUNIT_EXPECT_LE(test, r->size, limit);
	KUNIT_EXPECT_LE(test, r->size, max(pref, min));
	KUNIT_EXPECT_GE(test, r->size, min);
	KUNIT_EXPECT_GE(test, r->min_chunk_seen, (u64)id->hmminds << 12);
	if (id->hmmaxd)
		KUNIT_EXPECT_LE(test, r->nr, id->hmmaxd);
}

/* Known answers of the model, checked against Linux 6.1's code by hand. */
static void model_known_answers(struct kunit *test)
{
	static const struct {
		struct nvme_hmb_id id;
		u64 limit, ceiling, size;
		u32 nr;
		bool below_hmminds;
	} cases[] = {
		/* KIOXIA BG5: 16 x 4 MiB. */
		{ { 16384, 3584, 1, 1024 }, MIB(128), MIB(4), MIB(64), 16 },
		/* Crucial P3 Plus: 8 x 4 MiB. */
		{ { 8192, 8192, 512, 16 }, MIB(128), MIB(4), MIB(32), 8 },
		/* The same with nothing above 512 KiB: HMMINDS 2 MiB stops it. */
		{ { 8192, 8192, 512, 16 }, MIB(128), KIB(512), 0, 0 },
		/* HMPRE 80 HMMIN 40 HMMAXD 16: 16 x 4 MiB. */
		{ { 20480, 10240, 0, 16 }, MIB(128), MIB(4), MIB(64), 16 },
		/* HMPRE = HMMIN = 7 MiB, HMMAXD 2: 4 + 3. */
		{ { 1792, 1792, 0, 2 }, MIB(128), MIB(4), MIB(7), 2 },
		/* HMPRE = HMMIN = 3 MiB, HMMINDS 2 MiB: one 3 MiB chunk. */
		{ { 768, 768, 512, 0 }, MIB(128), MIB(4), MIB(3), 1 },
		/* 5 MiB, HMMINDS 2 MiB: 4 + 1, the last below HMMINDS. */
		{ { 1280, 1280, 512, 0 }, MIB(128), MIB(4), MIB(5), 2, true },
		/* HMMIN above the cap: nothing. */
		{ { 65536, 65536, 0, 0 }, MIB(128), MIB(4), 0, 0 },
		/* A 3 MiB pass fails at 2 MiB ceiling: 1.5 MiB chunks. */
		{ { 768, 768, 0, 0 }, MIB(128), MIB(2), MIB(3), 2 },
	};
	struct nvme_hmb_linux_grant g;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		linux_grant(&cases[i].id, cases[i].limit, cases[i].ceiling, &g);
		KUNIT_EXPECT_EQ_MSG(test, g.size, cases[i].size, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, g.nr_descs, cases[i].nr, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, g.below_hmminds,
				    cases[i].below_hmminds, "case %u", i);
	}
}

/*
 * The shapes the review found, each with the grant the engine gave before
 * the fix (in the comment) and at least Linux's now.
 */
static void review_shapes(struct kunit *test)
{
	static const struct {
		const char *what;
		struct nvme_hmb_id id;
		u64 limit, ceiling, size;
	} cases[] = {
		/* Before: 16 x 2 MiB = 32 MiB < HMMIN, off. */
		{ "HMPRE 80 HMMIN 40 HMMAXD 16", { 20480, 10240, 0, 16 },
		  MIB(128), MIB(4), MIB(64) },
		/* Before: 16 MiB (8 x 2 MiB after 12 MiB failed). */
		{ "HMPRE 200 HMMAXD 8 at 96", { 51200, 0, 0, 8 }, MIB(96),
		  MIB(4), MIB(32) },
		{ "HMPRE 200 HMMAXD 8 at 124", { 51200, 0, 0, 8 }, MIB(124),
		  MIB(4), MIB(32) },
		/* Before: 4 + 2 = 6 MiB < HMMIN, off. */
		{ "HMPRE = HMMIN = 7 MiB, HMMAXD 2", { 1792, 1792, 0, 2 },
		  MIB(128), MIB(4), MIB(7) },
		/* Before: 2 MiB chunks only, 2 MiB < HMMIN, off. */
		{ "HMPRE = HMMIN = 3 MiB, HMMINDS 2 MiB", { 768, 768, 512, 0 },
		  MIB(128), MIB(4), MIB(3) },
		/* Linux gives 4 + 1 (below HMMINDS); the engine 3 + 2. */
		{ "5 MiB with HMMINDS 2 MiB", { 1280, 1280, 512, 0 },
		  MIB(128), MIB(4), MIB(5) },
	};
	struct nvme_hmb_linux_grant g;
	struct engine_result r;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		engine_grant(test, &cases[i].id, cases[i].limit,
			     cases[i].ceiling, &r);
		linux_grant(&cases[i].id, cases[i].limit, cases[i].ceiling, &g);
		pr_info("nvme_hmb_model: %s: engine %llu KiB in %u, Linux %llu KiB in %u\n",
			cases[i].what, r.size >> 10, r.nr, g.size >> 10,
			g.nr_descs);
		KUNIT_EXPECT_EQ_MSG(test, r.size, cases[i].size, "%s",
				    cases[i].what);
		KUNIT_EXPECT_GE_MSG(test, r.size, g.size, "%s", cases[i].what);
		expect_spec(test, &cases[i].id, cases[i].limit, &r);
	}
}

/* A fixed-seed generator: the same profiles on every kernel. */
static u32 xorshift(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* HMB fields, 4 KiB units, mixing edge values with random ones. */
static u32 pick_pages(u32 *s, u32 below)
{
	static const u32 edges[] = {
		1, 2, 3, 255, 256, 257, 511, 512, 513, 768, 1023, 1024, 1025,
		1280, 1792, 2048, 3584, 4096, 8192, 10240, 16383, 16384, 16385,
		20480, 32768, 51200, 65536, 0xffffffff,
	};
	u32 r = xorshift(s);

	switch (r % 4) {
	case 0:
		return edges[(r >> 4) % ARRAY_SIZE(edges)];
	case 1:
		return 1 + (r >> 4) % below;
	case 2:
		return 1 + (r >> 4) % 4096;
	default:
		return 1U << ((r >> 4) % 17);
	}
}

static void gen_profile(u32 *s, struct nvme_hmb_id *id)
{
	static const u16 maxds[] = { 0, 1, 2, 3, 5, 8, 16, 32, 64, 256, 1024,
				     1025, 65535 };
	u32 r = xorshift(s);

	id->hmpre = pick_pages(s, 65536);
	switch (r % 5) {
	case 0:
		id->hmmin = 0;
		break;
	case 1:
		id->hmmin = id->hmpre;
		break;
	case 2:		/* inconsistent: above HMPRE */
		id->hmmin = pick_pages(s, 65536);
		break;
	default:
		id->hmmin = 1 + xorshift(s) % id->hmpre;
		break;
	}
	switch ((r >> 8) % 4) {
	case 0:
		id->hmminds = 0;
		break;
	case 1:
		id->hmminds = 1;
		break;
	default:
		id->hmminds = pick_pages(s, 2048);
		break;
	}
	if ((r >> 16) % 3)
		id->hmmaxd = maxds[(r >> 20) % ARRAY_SIZE(maxds)];
	else
		id->hmmaxd = xorshift(s) % 65536;
}

#define MODEL_PROFILES	2000

struct tally {
	unsigned int runs, better, equal, both_off, worse;
	unsigned int linux_invalid, below_invalid, below_best;
};

/*
 * The most any valid HMB can be under the ceiling: n buffers, each from
 * HMMINDS to the largest block, n within HMMAXD, within the entries a list
 * of one block holds, and within what HMMINDS-sized buffers leave of the
 * target.  An upper bound, to see how close the engine comes.
 */
static u64 best_valid(const struct nvme_hmb_id *id, u64 limit, u64 ceiling)
{
	u64 pref = (u64)max(id->hmpre, id->hmmin) << 12;
	u64 min = id->hmmin ? (u64)id->hmmin << 12 : SZ_4K;
	u64 m = max_t(u64, (u64)id->hmminds << 12, SZ_4K);
	u64 chunk = min(ceiling, MODEL_BUDDY);
	u64 target, n;

	if (!id->hmpre || min > limit)
		return 0;
	target = min(pref, limit);
	n = min_t(u64, id->hmmaxd ?: NVME_HMB_MAX_DESCS, NVME_HMB_MAX_DESCS);
	n = min3(n, ceiling / 16, div64_u64(target, m));
	if (!n || m > chunk)
		return 0;
	target = min(target, n * chunk);
	return target >= min ? target : 0;
}

/*
 * Details go to the kernel log only: the KTAP log of a test case holds
 * 512 bytes in 6.1 (KUNIT_LOG_SIZE), and what overflows it takes the
 * case's own result line with it.
 */
static void print_case(const char *what, const struct nvme_hmb_id *id,
		       u64 limit, u64 ceiling, const struct engine_result *r,
		       const struct nvme_hmb_linux_grant *g)
{
	pr_info("nvme_hmb_model: %s: HMPRE %u HMMIN %u HMMINDS %u HMMAXD %u limit %llu MiB ceiling %llu KiB: engine %llu KiB in %u, Linux %llu KiB in %u\n",
		what, id->hmpre, id->hmmin, id->hmminds, id->hmmaxd,
		limit >> 20, ceiling >> 10, r->size >> 10, r->nr,
		g->size >> 10, g->nr_descs);
}

static void compare_one(struct kunit *test, const struct nvme_hmb_id *id,
			u64 limit, u64 ceiling, struct tally *t)
{
	struct nvme_hmb_linux_grant g;
	struct engine_result r;
	bool invalid;

	engine_grant(test, id, limit, ceiling, &r);
	linux_grant(id, limit, ceiling, &g);
	expect_spec(test, id, limit, &r);
	KUNIT_EXPECT_LE(test, r.size, best_valid(id, limit, ceiling));
	if (r.size < best_valid(id, limit, ceiling) &&
	    t->below_best++ < 3)
		print_case("below the best valid", id, limit, ceiling, &r, &g);
	invalid = g.below_hmminds || g.bsize_short;
	t->runs++;
	t->linux_invalid += invalid;
	t->both_off += !r.size && !g.size;
	if (r.size > g.size) {
		t->better++;
	} else if (r.size == g.size) {
		t->equal++;
	} else if (invalid) {
		/*
		 * A controller may refuse Linux's grant: counted apart, and
		 * the engine must then give the most any valid HMB can.
		 */
		if (t->below_invalid++ < 3)
			print_case("Linux breaks HMMINDS", id, limit, ceiling,
				   &r, &g);
		KUNIT_EXPECT_EQ(test, r.size, best_valid(id, limit, ceiling));
	} else {
		t->worse++;
		print_case("WORSE", id, limit, ceiling, &r, &g);
		KUNIT_FAIL(test, "the engine gave less than Linux");
	}
}

/*
 * Every generated profile, under every limit and ceiling: the engine never
 * gives less than the model, and never breaks a rule of the
 * specification.  Where the model gives an entry below HMMINDS (which a
 * controller may refuse: the emulated drive does), a smaller engine grant
 * is counted apart, and the first few are printed.
 */
static void never_less_than_linux(struct kunit *test)
{
	static const u64 limits[] = { MIB(16), MIB(64), MIB(100), MIB(128),
				      MIB(256) };
	ktime_t start = ktime_get();
	u32 seed = 0x6e766d65;	/* "nvme" */
	struct tally t = {};
	struct nvme_hmb_id id;
	unsigned int p, l, c;

	for (p = 0; p < MODEL_PROFILES; p++) {
		cond_resched();
		gen_profile(&seed, &id);
		for (l = 0; l < ARRAY_SIZE(limits); l++)
			for (c = 0; c < ARRAY_SIZE(ceilings); c++)
				compare_one(test, &id, limits[l], ceilings[c],
					    &t);
	}
	pr_info("nvme_hmb_model: %u profiles x %zu limits x %zu ceilings = %u cases in %lld ms\n",
		MODEL_PROFILES, ARRAY_SIZE(limits), ARRAY_SIZE(ceilings),
		t.runs, ktime_ms_delta(ktime_get(), start));
	pr_info("nvme_hmb_model: Linux gave an entry below HMMINDS in %u, of which the engine gave less (the largest valid grant) in %u\n",
		t.linux_invalid, t.below_invalid);
	kunit_info(test, "%u cases: engine better %u, equal %u (both off %u), worse %u, below the largest valid %u\n",
		   t.runs, t.better, t.equal, t.both_off, t.worse,
		   t.below_best);
	KUNIT_EXPECT_EQ(test, t.worse, 0);
	KUNIT_EXPECT_EQ(test, t.below_best, 0);
	/* Not vacuous: most cases must give an HMB on one side. */
	KUNIT_EXPECT_GT(test, t.runs - t.both_off, t.runs / 4);
}

static struct kunit_case nvme_hmb_model_cases[] = {
	KUNIT_CASE(model_known_answers),
	KUNIT_CASE(review_shapes),
	KUNIT_CASE(never_less_than_linux),
	{}
};

static struct kunit_suite nvme_hmb_model_suite = {
	.name = "nvme_hmb_model",
	.test_cases = nvme_hmb_model_cases,
};

kunit_test_suite(nvme_hmb_model_suite);
