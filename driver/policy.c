// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: what the controller asks for, what the host allows, and why
 * the result is what it is.  Pure functions over plain values.
 *
 * Sizes are bytes in u64 throughout: HMPRE = 0xffffffff is 16 TiB, which a
 * u32 of bytes or a 32-bit size_t cannot hold.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>

#include "internal.h"

static const char * const nvme_hmb_reason_strs[] = {
	[NVME_HMB_R_NONE]		= "not set up",
	[NVME_HMB_R_GRANTED]		= "granted",
	[NVME_HMB_R_LIMITED]		= "limited by limit_mib",
	[NVME_HMB_R_HMMAXD]		= "limited by HMMAXD",
	[NVME_HMB_R_SHORT]		= "allocation fell short, above HMMIN",
	[NVME_HMB_R_NOT_ASKED]		= "controller does not ask for HMB (HMPRE 0)",
	[NVME_HMB_R_OFF_BY_USER]	= "turned off (limit_mib 0)",
	[NVME_HMB_R_HMMIN_ABOVE_LIMIT]	= "HMMIN above limit_mib",
	[NVME_HMB_R_HMMINDS_TOO_LARGE]	= "HMMINDS above the largest buffer the host can give",
	[NVME_HMB_R_HMMAXD_TOO_SMALL]	= "HMMAXD buffers cannot reach HMMIN",
	[NVME_HMB_R_ALLOC_BELOW_MIN]	= "allocation failed below HMMIN",
	[NVME_HMB_R_SET_FAILED]		= "controller rejected Set Features",
	[NVME_HMB_R_DISABLE_FAILED]	= "disable failed, memory kept for the controller",
	[NVME_HMB_R_IDENTIFY_FAILED]	= "Identify Controller failed",
	[NVME_HMB_R_GONE]		= "controller removed",
	[NVME_HMB_R_RECLAIMED]		= "reclaimed under memory pressure",
	[NVME_HMB_R_SLEEP]		= "disabled for system sleep",
	[NVME_HMB_R_FOREIGN]		= "another driver (nvme-pci) runs the HMB",
	[NVME_HMB_R_UNKNOWN_OWNER]	= "the controller holds a buffer of unknown owner",
};

/*
 * The reason as sysfs shows it: a stable token, lower case, words joined
 * by '-'.  User space matches these; never rename one, only add.  The
 * set is Documentation/ABI/testing/sysfs-kernel-nvme_hmb's.
 */
static const char * const nvme_hmb_reason_tokens[] = {
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

/*
 * A reason added last without its prose or token fails here; one added
 * in between, KUnit's reason_strings (every reason has both, the tokens
 * distinct).
 */
static_assert(ARRAY_SIZE(nvme_hmb_reason_strs) == NVME_HMB_R_NR);
static_assert(ARRAY_SIZE(nvme_hmb_reason_tokens) == NVME_HMB_R_NR);

/**
 * nvme_hmb_reason_str() - the one-line explanation of a reason
 * @reason: the reason
 *
 * Return: a constant string.
 */
const char *nvme_hmb_reason_str(enum nvme_hmb_reason reason)
{
	if (reason >= NVME_HMB_R_NR || !nvme_hmb_reason_strs[reason])
		return "unknown";
	return nvme_hmb_reason_strs[reason];
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_reason_str);

/**
 * nvme_hmb_reason_token() - the stable token of a reason, for sysfs
 * @reason: the reason
 *
 * Return: a constant string of [a-z0-9-], "unknown" for no reason known.
 */
const char *nvme_hmb_reason_token(enum nvme_hmb_reason reason)
{
	if (reason >= NVME_HMB_R_NR || !nvme_hmb_reason_tokens[reason])
		return "unknown";
	return nvme_hmb_reason_tokens[reason];
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_reason_token);

/**
 * nvme_hmb_caps_from_id() - sanitise the Identify fields
 * @id: raw Identify fields
 * @caps: what the controller asks for, in bytes
 *
 * Rules, each a deliberate answer to a malformed or unusual Identify:
 *  - HMPRE 0: the controller does not ask for HMB (pref 0).
 *  - HMMIN 0: no minimum; one memory page is the least worth enabling.
 *  - HMMIN above HMPRE (inconsistent): the controller cannot use less than
 *    HMMIN, so HMMIN is taken as the preferred size too; flagged.
 *  - HMMINDS 0: no minimum buffer size, one memory page.
 *  - absurd values (HMPRE 0xffffffff is 16 TiB) are not errors here: the
 *    host limit and the allocator bound what is granted.
 *  - CTRATT: bit 17 (HMBR) only, and only for a controller that asks for
 *    an HMB; the other bits mean nothing to the engine.  A controller
 *    that claims HMBR without honouring it is caught later: a refused
 *    HMNARE is dropped, and without HMNAR in Get Features nothing is
 *    trusted to it.
 */
void nvme_hmb_caps_from_id(const struct nvme_hmb_id *id,
			   struct nvme_hmb_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	if (!id->hmpre)
		return;
	caps->pref = (u64)id->hmpre << NVME_HMB_PAGE_SHIFT;
	caps->min = id->hmmin ? (u64)id->hmmin << NVME_HMB_PAGE_SHIFT :
				NVME_HMB_PAGE;
	caps->min_chunk = id->hmminds ?
			  (u64)id->hmminds << NVME_HMB_PAGE_SHIFT :
			  NVME_HMB_PAGE;
	caps->max_descs = id->hmmaxd;
	caps->hmbr = id->ctratt & NVME_HMB_CTRATT_HMBR;
	if (caps->min > caps->pref) {
		caps->min_above_pref = true;
		caps->pref = caps->min;
	}
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_caps_from_id);

/*
 * The page-allocator block a chunk of @size occupies: the smallest power
 * of two of granules that holds it.  Beyond the largest block the chunk
 * can only come from CMA or an IOMMU, and occupies what it asks for.
 */
static u64 nvme_hmb_chunk_block(const struct nvme_hmb_host *host, u64 size)
{
	u64 granules = div64_u64(size + host->granule - 1, host->granule);

	if (granules * host->granule > host->buddy_chunk)
		return granules * host->granule;
	return host->granule * roundup_pow_of_two(granules);
}

/**
 * nvme_hmb_chunk_next() - the chunk size to try after @size failed
 * @host: host constraints
 * @size: the size that could not be allocated
 *
 * Above the page allocator's largest block (tried because HMMAXD asked
 * for large buffers, which CMA or an IOMMU may give) the size halves, but
 * never past that block: the largest block is always tried.  Within the
 * page allocator a failure says that no block of @size's order was free,
 * so the next try is the next order down, whole: a 3 MiB chunk that
 * failed is followed by 2 MiB, not 1.5 MiB.
 *
 * Return: the next size, smaller than @size; 0 below one granule.
 */
u64 nvme_hmb_chunk_next(const struct nvme_hmb_host *host, u64 size)
{
	if (size > host->buddy_chunk)
		return max(host->buddy_chunk,
			   round_down(size / 2, host->granule));
	return round_down(nvme_hmb_chunk_block(host, size) / 2,
			  host->granule);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_chunk_next);

/*
 * Whether @rest bytes can still be given in at most @left chunks, each
 * from HMMINDS up to @cap: spread evenly over as many as it takes, each
 * is HMMINDS at least.
 */
static bool nvme_hmb_rest_fits(const struct nvme_hmb_plan *plan, u64 cap,
			       u64 rest, u32 left)
{
	u64 k;

	if (!rest)
		return true;
	if (!left || rest < plan->min_chunk)
		return false;
	k = div64_u64(rest + cap - 1, cap);
	return k <= left && div64_u64(rest, k) >= plan->min_chunk;
}

/**
 * nvme_hmb_chunk_pick() - the size of the next chunk to allocate
 * @host: host constraints
 * @plan: the negotiated plan
 * @cap: the largest size worth trying now (lowered by failures)
 * @rest: bytes still wanted, whole granules
 * @left: descriptor entries still free
 *
 * Largest first, every chunk from HMMINDS up, no chunk after this one
 * larger than it (so that once it is had, the rest needs no larger
 * block).  In order of preference:
 *  - @cap, when what it leaves fits in the entries left;
 *  - otherwise one chunk such that powers of two make up the rest: 5 MiB
 *    with HMMINDS 2 MiB is 3 + 2 (a power of two wastes nothing in the
 *    page allocator; Linux gives 4 + 1, which a controller may refuse);
 *  - otherwise the rest spread evenly: 12552 KiB with HMMINDS 2976 KiB in
 *    4 MiB blocks is four chunks of 3140 KiB or less;
 *  - otherwise @cap, and the tail is left out.
 * The last piece goes as it is, or its largest power of two first when
 * the rest can follow.
 *
 * Return: bytes, or 0 when no chunk can be added.
 */
u64 nvme_hmb_chunk_pick(const struct nvme_hmb_host *host,
			const struct nvme_hmb_plan *plan, u64 cap, u64 rest,
			u32 left)
{
	u64 g = host->granule;
	u64 pow, want, j, k;

	cap = round_down(cap, g);
	if (!left || cap < plan->min_chunk || rest < plan->min_chunk)
		return 0;
	if (rest <= cap) {
		if (left > 1 && rest <= host->buddy_chunk) {
			pow = g * rounddown_pow_of_two(div64_u64(rest, g));
			if (pow < rest && rest - pow >= plan->min_chunk)
				return pow;
		}
		return rest;
	}
	if (nvme_hmb_rest_fits(plan, cap, rest - cap, left - 1))
		return cap;
	pow = g * rounddown_pow_of_two(div64_u64(min(cap, host->buddy_chunk),
						 g));
	for (; pow >= plan->min_chunk; pow /= 2) {
		j = max_t(u64, 1, div64_u64(rest - cap + pow - 1, pow));
		if (j >= left || j * pow >= rest)
			continue;
		want = rest - j * pow;
		if (want >= pow && want <= cap)
			return want;
	}
	if (nvme_hmb_rest_fits(plan, cap, rest, left)) {
		k = div64_u64(rest + cap - 1, cap);
		return round_up(div64_u64(rest + k - 1, k), g);
	}
	return cap;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_chunk_pick);

/**
 * nvme_hmb_negotiate() - plan an HMB for a controller under host limits
 * @caps: what the controller asks for
 * @host: what the host allows
 * @plan: the plan, valid when the return value is NVME_HMB_R_GRANTED or
 *	  NVME_HMB_R_LIMITED
 *
 * The target is min(HMPRE, limit) rounded down to the granule; the HMB is
 * worth enabling only from HMMIN up.  The first chunk size is the page
 * allocator's largest block, or the target if smaller (whatever its
 * size, as Linux does), unless HMMAXD entries of that size cannot cover
 * the target: then it is the smallest size that can, up to
 * host->max_chunk.  Chunks are whole granules, HMMINDS rounded up to one.
 * Whether HMMAXD did limit the size is known after the allocation:
 * nvme_hmb_outcome() says so.
 *
 * Return: NVME_HMB_R_GRANTED or NVME_HMB_R_LIMITED with a plan, or why
 * there is none.
 */
enum nvme_hmb_reason nvme_hmb_negotiate(const struct nvme_hmb_caps *caps,
					const struct nvme_hmb_host *host,
					struct nvme_hmb_plan *plan)
{
	u64 g = host->granule;
	u64 largest, need, first, reach;

	memset(plan, 0, sizeof(*plan));
	if (!caps->pref)
		return NVME_HMB_R_NOT_ASKED;
	if (!host->limit)
		return NVME_HMB_R_OFF_BY_USER;

	plan->min = round_up(caps->min, g);
	if (plan->min > host->limit)
		return NVME_HMB_R_HMMIN_ABOVE_LIMIT;

	plan->target = round_down(min(caps->pref, host->limit), g);
	/* A preferred size that is not whole granules still gets HMMIN. */
	plan->target = max(plan->target, plan->min);
	plan->limit_reason = plan->target < caps->pref ? NVME_HMB_R_LIMITED :
							 NVME_HMB_R_GRANTED;

	plan->max_descs = host->max_descs;
	if (caps->max_descs && caps->max_descs < plan->max_descs)
		plan->max_descs = caps->max_descs;

	plan->min_chunk = round_up(max(caps->min_chunk, g), g);
	largest = round_down(host->contig ? plan->target :
			     min(host->max_chunk, plan->target), g);
	if (plan->min_chunk > largest)
		return NVME_HMB_R_HMMINDS_TOO_LARGE;

	/* Start from the allocator's largest block ... */
	first = min(round_down(host->buddy_chunk, g), largest);
	/* ... unless the entries allowed cannot cover the target with it. */
	need = round_up(div64_u64(plan->target + plan->max_descs - 1,
				  plan->max_descs), g);
	if (need > first)
		first = min(need, largest);
	plan->first_chunk = max(first, plan->min_chunk);

	/* Even the largest chunks in every entry must reach HMMIN. */
	reach = host->contig ? plan->target : (u64)plan->max_descs * largest;
	if (reach < plan->min)
		return NVME_HMB_R_HMMAXD_TOO_SMALL;

	return plan->limit_reason;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_negotiate);

/**
 * nvme_hmb_outcome() - the reason for what an allocation achieved
 * @caps: what the controller asks for
 * @plan: the plan the allocation worked to
 * @got: bytes allocated
 * @nr_descs: entries used
 *
 * Return: NVME_HMB_R_ALLOC_BELOW_MIN when @got is not worth enabling,
 * otherwise the reason to report for an HMB of @got bytes.
 */
enum nvme_hmb_reason nvme_hmb_outcome(const struct nvme_hmb_caps *caps,
				      const struct nvme_hmb_plan *plan,
				      u64 got, u32 nr_descs)
{
	if (got < plan->min)
		return NVME_HMB_R_ALLOC_BELOW_MIN;
	if (got >= caps->pref)
		return NVME_HMB_R_GRANTED;
	if (got >= plan->target)
		return plan->limit_reason;
	if (nr_descs >= plan->max_descs && plan->max_descs < NVME_HMB_MAX_DESCS)
		return NVME_HMB_R_HMMAXD;
	return NVME_HMB_R_SHORT;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_outcome);
