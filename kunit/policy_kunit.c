// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: sanity of the Identify fields, negotiation and outcome reasons.
 * Table driven; every row is a controller and a host.
 */
#include <kunit/test.h>
#include <linux/ctype.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "internal.h"

#define KIB(x)	((u64)(x) << 10)
#define MIB(x)	((u64)(x) << 20)

/* An x86 host: 4 KiB pages, 4 MiB largest page-allocator block. */
static const struct nvme_hmb_host x86_host = {
	.limit = MIB(128),
	.granule = SZ_4K,
	.buddy_chunk = MIB(4),
	.max_chunk = U64_MAX,
	.max_descs = NVME_HMB_MAX_DESCS,
};

struct policy_case {
	const char *name;
	struct nvme_hmb_id id;
	u64 limit;
	u64 max_chunk;		/* 0: x86_host's */
	u64 granule;		/* 0: x86_host's */
	bool contig;
	enum nvme_hmb_reason reason;
	u64 target;
	u64 min;
	u64 min_chunk;
	u64 first_chunk;
	u32 max_descs;
};

static const struct policy_case policy_cases[] = {
	{ "KIOXIA BG5 under 128 MiB", { 16384, 3584, 1, 1024 }, MIB(128),
	  .reason = NVME_HMB_R_GRANTED, .target = MIB(64), .min = MIB(14),
	  .min_chunk = KIB(4), .first_chunk = MIB(4), .max_descs = 1024 },
	{ "Crucial P3 Plus under 128 MiB", { 8192, 8192, 512, 16 }, MIB(128),
	  .reason = NVME_HMB_R_GRANTED, .target = MIB(32), .min = MIB(32),
	  .min_chunk = MIB(2), .first_chunk = MIB(4), .max_descs = 16 },
	{ "KIOXIA BG5 under 32 MiB", { 16384, 3584, 1, 1024 }, MIB(32),
	  .reason = NVME_HMB_R_LIMITED, .target = MIB(32), .min = MIB(14),
	  .min_chunk = KIB(4), .first_chunk = MIB(4), .max_descs = 1024 },
	{ "HMPRE 0: not asked", { 0, 3584, 1, 1024 }, MIB(128),
	  .reason = NVME_HMB_R_NOT_ASKED },
	{ "limit 0: off", { 16384, 3584, 1, 1024 }, 0,
	  .reason = NVME_HMB_R_OFF_BY_USER },
	{ "HMMIN above limit", { 16384, 16384, 1, 0 }, MIB(32),
	  .reason = NVME_HMB_R_HMMIN_ABOVE_LIMIT },
	{ "HMMIN above HMPRE: HMMIN preferred", { 1024, 2048, 0, 0 }, MIB(128),
	  .reason = NVME_HMB_R_GRANTED, .target = MIB(8), .min = MIB(8),
	  .min_chunk = KIB(4), .first_chunk = MIB(4),
	  .max_descs = NVME_HMB_MAX_DESCS },
	{ "HMMIN 0: one page", { 256, 0, 0, 0 }, MIB(128),
	  .reason = NVME_HMB_R_GRANTED, .target = MIB(1), .min = KIB(4),
	  .min_chunk = KIB(4), .first_chunk = MIB(1),
	  .max_descs = NVME_HMB_MAX_DESCS },
	{ "HMMAXD 8 wants 16 MiB chunks", { 51200, 823, 0, 8 }, MIB(128),
	  .reason = NVME_HMB_R_LIMITED, .target = MIB(128),
	  .min = KIB(823 * 4), .min_chunk = KIB(4), .first_chunk = MIB(16),
	  .max_descs = 8 },
	{ "HMMAXD 8 behind an IOMMU", { 51200, 823, 0, 8 }, MIB(128),
	  .contig = true, .reason = NVME_HMB_R_LIMITED, .target = MIB(128),
	  .min = KIB(823 * 4), .min_chunk = KIB(4), .first_chunk = MIB(16),
	  .max_descs = 8 },
	{ "HMMAXD 1 cannot reach HMMIN in 4 MiB chunks",
	  { 16384, 16384, 0, 1 }, MIB(128), .max_chunk = MIB(4),
	  .reason = NVME_HMB_R_HMMAXD_TOO_SMALL },
	{ "HMMINDS above the largest chunk", { 16384, 3584, 4096, 0 },
	  MIB(128), .max_chunk = MIB(4),
	  .reason = NVME_HMB_R_HMMINDS_TOO_LARGE },
	{ "HMMINDS above the target", { 1024, 256, 2048, 0 }, MIB(128),
	  .reason = NVME_HMB_R_HMMINDS_TOO_LARGE },
	{ "max_chunk_kib 1024 caps every buffer", { 16384, 3584, 1, 1024 },
	  MIB(128), .max_chunk = MIB(1), .reason = NVME_HMB_R_GRANTED,
	  .target = MIB(64), .min = MIB(14), .min_chunk = KIB(4),
	  .first_chunk = MIB(1), .max_descs = 1024 },
	{ "HMMINDS 3 pages: 12 KiB buffers", { 16384, 3584, 3, 0 }, MIB(128),
	  .reason = NVME_HMB_R_GRANTED, .target = MIB(64), .min = MIB(14),
	  .min_chunk = KIB(12), .first_chunk = MIB(4),
	  .max_descs = NVME_HMB_MAX_DESCS },
	{ "HMPRE 3 MiB: one 3 MiB buffer first, as Linux",
	  { 768, 768, 512, 0 }, MIB(128), .reason = NVME_HMB_R_GRANTED,
	  .target = MIB(3), .min = MIB(3), .min_chunk = MIB(2),
	  .first_chunk = MIB(3), .max_descs = NVME_HMB_MAX_DESCS },
	{ "HMMAXD 16 for 80 MiB: 5 MiB first", { 20480, 10240, 0, 16 },
	  MIB(128), .reason = NVME_HMB_R_GRANTED, .target = MIB(80),
	  .min = MIB(40), .min_chunk = KIB(4), .first_chunk = MIB(5),
	  .max_descs = 16 },
	{ "absurd HMPRE, sane HMMIN", { 0xffffffff, 1, 1, 0 }, MIB(256),
	  .reason = NVME_HMB_R_LIMITED, .target = MIB(256), .min = KIB(4),
	  .min_chunk = KIB(4), .first_chunk = MIB(4),
	  .max_descs = NVME_HMB_MAX_DESCS },
	{ "absurd HMPRE and HMMIN", { 0xffffffff, 0xffffffff, 0xffffffff,
	  0xffff }, (u64)NVME_HMB_LIMIT_MAX_MIB << 20,
	  .reason = NVME_HMB_R_HMMIN_ABOVE_LIMIT },
	{ "absurd HMMINDS", { 16384, 1, 0xffffffff, 0 }, MIB(128),
	  .reason = NVME_HMB_R_HMMINDS_TOO_LARGE },
	{ "HMPRE not whole 16 KiB pages", { 5, 1, 0, 0 }, MIB(128),
	  .granule = SZ_16K, .reason = NVME_HMB_R_LIMITED, .target = KIB(16),
	  .min = KIB(16), .min_chunk = KIB(16), .first_chunk = KIB(16),
	  .max_descs = NVME_HMB_MAX_DESCS },
};

static void policy_case_desc(const struct policy_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(policy, policy_cases, policy_case_desc);

static void negotiate_table(struct kunit *test)
{
	const struct policy_case *c = test->param_value;
	struct nvme_hmb_host host = x86_host;
	struct nvme_hmb_caps caps;
	struct nvme_hmb_plan plan;

	host.limit = c->limit;
	host.contig = c->contig;
	if (c->max_chunk)
		host.max_chunk = c->max_chunk;
	if (c->granule)
		host.granule = c->granule;
	nvme_hmb_caps_from_id(&c->id, &caps);
	KUNIT_EXPECT_EQ_MSG(test, nvme_hmb_negotiate(&caps, &host, &plan),
			    c->reason, "%s",
			    nvme_hmb_reason_str(nvme_hmb_negotiate(&caps, &host,
								   &plan)));
	if (c->reason != NVME_HMB_R_GRANTED && c->reason != NVME_HMB_R_LIMITED)
		return;
	KUNIT_EXPECT_EQ(test, plan.target, c->target);
	KUNIT_EXPECT_EQ(test, plan.min, c->min);
	KUNIT_EXPECT_EQ(test, plan.min_chunk, c->min_chunk);
	KUNIT_EXPECT_EQ(test, plan.first_chunk, c->first_chunk);
	KUNIT_EXPECT_EQ(test, plan.max_descs, c->max_descs);
	/* Invariants of every plan. */
	KUNIT_EXPECT_LE(test, plan.target, max(host.limit, plan.min));
	KUNIT_EXPECT_LE(test, plan.min, plan.target);
	KUNIT_EXPECT_EQ(test, plan.target % host.granule, 0);
	KUNIT_EXPECT_EQ(test, plan.first_chunk % host.granule, 0);
	KUNIT_EXPECT_GE(test, plan.first_chunk, plan.min_chunk);
}

static void caps_rules(struct kunit *test)
{
	struct nvme_hmb_caps caps;
	struct nvme_hmb_id id = { 0xffffffff, 0xffffffff, 0xffffffff, 0xffff };

	/* No u32 overflow: 0xffffffff pages is just under 16 TiB. */
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_EQ(test, caps.pref, 0xffffffffULL << 12);
	KUNIT_EXPECT_EQ(test, caps.min, 0xffffffffULL << 12);
	KUNIT_EXPECT_EQ(test, caps.min_chunk, 0xffffffffULL << 12);
	KUNIT_EXPECT_EQ(test, caps.max_descs, 0xffff);
	KUNIT_EXPECT_FALSE(test, caps.min_above_pref);

	id = (struct nvme_hmb_id){ 1024, 2048, 0, 0 };
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_TRUE(test, caps.min_above_pref);
	KUNIT_EXPECT_EQ(test, caps.pref, MIB(8));

	id = (struct nvme_hmb_id){ 0, 2048, 16, 8 };
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_EQ(test, caps.pref, 0);
}

static void chunk_next(struct kunit *test)
{
	struct nvme_hmb_host host = x86_host;

	/* Above the largest block: halving, but 4 MiB is always tried. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(5)), MIB(4));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(6)), MIB(4));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(12)), MIB(6));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(16)), MIB(8));
	/* Within it: the next order down, whole. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(4)), MIB(2));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, MIB(3)), MIB(2));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, KIB(12)), KIB(8));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, KIB(8)), KIB(4));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_next(&host, KIB(4)), 0);
}

static void chunk_pick(struct kunit *test)
{
	struct nvme_hmb_host host = x86_host;
	struct nvme_hmb_plan plan = { .min_chunk = KIB(4) };

	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(64), 16), MIB(4));
	/* The last piece: its largest power of two first ... */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(3), 5), MIB(2));
	/* ... unless it is the last entry. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(3), 1), MIB(3));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(4), 0), 0);
	plan.min_chunk = MIB(2);
	/* 5 MiB in buffers of 2 MiB at least: 3 + 2, not 4 + 1. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(5), 2), MIB(3));
	/* 12552 KiB, HMMINDS 2976 KiB: 4 x 3138, not 4 + 4 + 4 + 264. */
	plan.min_chunk = KIB(2976);
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  KIB(12552), 8), KIB(3140));
	plan.min_chunk = MIB(2);
	/* With one entry left, 4 MiB is all there is. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(5), 1), MIB(4));
	/* 3 MiB: 2 + 1 would break HMMINDS, so one 3 MiB buffer. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(3), 4), MIB(3));
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(4),
						  MIB(1), 4), 0);
	KUNIT_EXPECT_EQ(test, nvme_hmb_chunk_pick(&host, &plan, MIB(1),
						  MIB(8), 4), 0);
}

struct outcome_case {
	const char *name;
	u64 got;
	u32 nr;
	enum nvme_hmb_reason reason;
};

/* For the BG5 under 32 MiB plan: target 32, min 14, 1024 entries. */
static const struct outcome_case outcome_cases[] = {
	{ "all of the target", MIB(32), 8, NVME_HMB_R_LIMITED },
	{ "short but above HMMIN", MIB(20), 300, NVME_HMB_R_SHORT },
	{ "exactly HMMIN", MIB(14), 14, NVME_HMB_R_SHORT },
	{ "below HMMIN", MIB(14) - KIB(4), 14, NVME_HMB_R_ALLOC_BELOW_MIN },
	{ "nothing", 0, 0, NVME_HMB_R_ALLOC_BELOW_MIN },
};

static void outcome_case_desc(const struct outcome_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(outcome, outcome_cases, outcome_case_desc);

static void outcome_table(struct kunit *test)
{
	const struct outcome_case *c = test->param_value;
	struct nvme_hmb_id id = { 16384, 3584, 1, 1024 };
	struct nvme_hmb_host host = x86_host;
	struct nvme_hmb_caps caps;
	struct nvme_hmb_plan plan;

	host.limit = MIB(32);
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_ASSERT_EQ(test, nvme_hmb_negotiate(&caps, &host, &plan),
			NVME_HMB_R_LIMITED);
	KUNIT_EXPECT_EQ(test, nvme_hmb_outcome(&caps, &plan, c->got, c->nr),
			c->reason);
}

static void outcome_hmmaxd(struct kunit *test)
{
	struct nvme_hmb_id id = { 51200, 823, 0, 8 };
	struct nvme_hmb_host host = x86_host;
	struct nvme_hmb_caps caps;
	struct nvme_hmb_plan plan;

	nvme_hmb_caps_from_id(&id, &caps);
	nvme_hmb_negotiate(&caps, &host, &plan);
	/* 8 entries of 4 MiB: the entries, not the memory, ran out. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_outcome(&caps, &plan, MIB(32), 8),
			NVME_HMB_R_HMMAXD);
	/* 8 entries of 16 MiB reach the limit. */
	KUNIT_EXPECT_EQ(test, nvme_hmb_outcome(&caps, &plan, MIB(128), 8),
			NVME_HMB_R_LIMITED);
}

/*
 * Every reason has its prose (dmesg) and its token (sysfs, an ABI): a
 * token is lower case words joined by '-', and no two reasons share one.
 */
static void reason_strings(struct kunit *test)
{
	const char *t, *p;
	int r, q;

	for (r = 0; r < NVME_HMB_R_NR; r++) {
		KUNIT_EXPECT_STRNEQ(test, nvme_hmb_reason_str(r), "unknown");
		t = nvme_hmb_reason_token(r);
		KUNIT_EXPECT_STRNEQ_MSG(test, t, "unknown", "reason %d", r);
		KUNIT_EXPECT_TRUE_MSG(test, islower(t[0]) &&
				      t[strlen(t) - 1] != '-', "'%s'", t);
		for (p = t; *p; p++)
			KUNIT_EXPECT_TRUE_MSG(test, islower(*p) ||
					      isdigit(*p) || *p == '-',
					      "'%s'", t);
		KUNIT_EXPECT_NULL_MSG(test, strstr(t, "--"), "'%s'", t);
		for (q = 0; q < r; q++)
			KUNIT_EXPECT_STRNEQ_MSG(test, t,
						nvme_hmb_reason_token(q),
						"reasons %d and %d", q, r);
	}
	KUNIT_EXPECT_STREQ(test, nvme_hmb_reason_str(NVME_HMB_R_NR),
			   "unknown");
	KUNIT_EXPECT_STREQ(test, nvme_hmb_reason_token(NVME_HMB_R_NR),
			   "unknown");
}

/*
 * The tokens are an ABI (Documentation/ABI/testing/sysfs-kernel-nvme_hmb):
 * one renamed or swapped breaks user space, and this table.
 */
static void reason_tokens_abi(struct kunit *test)
{
	static const char * const abi[] = {
		[NVME_HMB_R_NONE]		= "none",
		[NVME_HMB_R_GRANTED]		= "granted",
		[NVME_HMB_R_LIMITED]		= "limited",
		[NVME_HMB_R_HMMAXD]		= "hmmaxd",
		[NVME_HMB_R_SHORT]		= "short",
		[NVME_HMB_R_NOT_ASKED]		= "not-asked",
		[NVME_HMB_R_OFF_BY_USER]	= "limit-zero",
		[NVME_HMB_R_HMMIN_ABOVE_LIMIT]	= "hmmin-above-limit",
		[NVME_HMB_R_HMMINDS_TOO_LARGE]	= "hmminds-too-large",
		[NVME_HMB_R_HMMAXD_TOO_SMALL]	= "hmmaxd-too-small",
		[NVME_HMB_R_ALLOC_BELOW_MIN]	= "alloc-below-hmmin",
		[NVME_HMB_R_SET_FAILED]		= "set-failed",
		[NVME_HMB_R_DISABLE_FAILED]	= "disable-failed",
		[NVME_HMB_R_IDENTIFY_FAILED]	= "identify-failed",
		[NVME_HMB_R_GONE]		= "gone",
		[NVME_HMB_R_RECLAIMED]		= "reclaimed",
		[NVME_HMB_R_SLEEP]		= "sleep",
		[NVME_HMB_R_FOREIGN]		= "foreign",
		[NVME_HMB_R_UNKNOWN_OWNER]	= "unknown-owner",
	};
	int r;

	KUNIT_ASSERT_EQ(test, (int)ARRAY_SIZE(abi), NVME_HMB_R_NR);
	for (r = 0; r < NVME_HMB_R_NR; r++)
		KUNIT_EXPECT_STREQ_MSG(test, nvme_hmb_reason_token(r),
				       abi[r] ? abi[r] : "(not in the table)",
				       "reason %d", r);
}

static struct kunit_case nvme_hmb_policy_cases[] = {
	KUNIT_CASE_PARAM(negotiate_table, policy_gen_params),
	KUNIT_CASE(caps_rules),
	KUNIT_CASE(chunk_next),
	KUNIT_CASE(chunk_pick),
	KUNIT_CASE_PARAM(outcome_table, outcome_gen_params),
	KUNIT_CASE(outcome_hmmaxd),
	KUNIT_CASE(reason_strings),
	KUNIT_CASE(reason_tokens_abi),
	{}
};

static struct kunit_suite nvme_hmb_policy_suite = {
	.name = "nvme_hmb_policy",
	.test_cases = nvme_hmb_policy_cases,
};

kunit_test_suite(nvme_hmb_policy_suite);
