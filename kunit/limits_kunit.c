// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the rules of the module parameter ctrl_limit_mib, parsed strictly
 * (bad input changes nothing), and which rule a controller gets.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "internal.h"

struct limits_case {
	const char *val;
	int ret;
	unsigned int nr;
	const char *key0;
	unsigned int mib0;
};

static const struct limits_case limits_cases[] = {
	{ "", 0, 0 },
	{ "\n", 0, 0 },
	{ "nvme0=32", 0, 1, "nvme0", 32 },
	{ "nvme0=32\n", 0, 1, "nvme0", 32 },
	{ "0000:01:00.0=64,nvme1=0", 0, 2, "0000:01:00.0", 64 },
	{ "a_b-c.d:e=1048576", 0, 1, "a_b-c.d:e", 1048576 },
	{ "nvme0=1048577", -ERANGE, 0 },
	{ "nvme0=4294967296", -ERANGE, 0 },
	{ "nvme0", -EINVAL, 0 },
	{ "=32", -EINVAL, 0 },
	{ "nvme0=", -EINVAL, 0 },
	{ "nvme0=+32", -EINVAL, 0 },
	{ "nvme0=0x20", -EINVAL, 0 },
	{ "nvme0=32,", -EINVAL, 0 },
	{ ",nvme0=32", -EINVAL, 0 },
	{ "nvme0=32,,nvme1=3", -EINVAL, 0 },
	{ "nvme0=32,nvme0=64", -EINVAL, 0 },
	{ "nvme 0=32", -EINVAL, 0 },
	{ "nvme0=32 ", -EINVAL, 0 },
	{ "nvme0=32\n\n", -EINVAL, 0 },
	{ "nvme0=32\n,nvme1=3", -EINVAL, 0 },
	{ "nvme/0=32", -EINVAL, 0 },
	{ "nvme0=3=2", -EINVAL, 0 },
	{ "0123456789012345678901234567890=1", 0, 1,
	  "0123456789012345678901234567890", 1 },
	{ "01234567890123456789012345678901=1", -EINVAL, 0 },
	{ "a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,p=1",
	  0, 16, "a", 1 },
	{ "a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,p=1,q=1",
	  -E2BIG, 0 },
};

/* The value, a newline written as \n: a description is one line. */
static void limits_case_desc(const struct limits_case *c, char *desc)
{
	const char *p;
	int n = 0;

	for (p = c->val; *p && n < KUNIT_PARAM_DESC_SIZE - 3; p++) {
		if (*p == '\n') {
			desc[n++] = '\\';
			desc[n++] = 'n';
		} else {
			desc[n++] = *p;
		}
	}
	desc[n] = '\0';
	if (!n)
		strscpy(desc, "(empty)", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(limits, limits_cases, limits_case_desc);

static void limits_parse(struct kunit *test)
{
	const struct limits_case *c = test->param_value;
	struct nvme_hmb_limit_rule *rules;
	unsigned int nr = 99;

	rules = kunit_kcalloc(test, NVME_HMB_MAX_RULES, sizeof(*rules),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rules);
	KUNIT_EXPECT_EQ(test, nvme_hmb_limits_parse(c->val, rules, &nr),
			c->ret);
	if (c->ret) {
		KUNIT_EXPECT_EQ(test, nr, 99U);
		return;
	}
	KUNIT_EXPECT_EQ(test, nr, c->nr);
	if (c->nr) {
		KUNIT_EXPECT_STREQ(test, rules[0].key, c->key0);
		KUNIT_EXPECT_EQ(test, rules[0].mib, c->mib0);
	}
}

static void limits_match(struct kunit *test)
{
	static const struct nvme_hmb_limit_rule rules[] = {
		{ "0000:01:00.0", 64 },
		{ "nvme1", 0 },
		{ "0000:02:00.0", 8 },
		{ "nvme2", 24 },
	};
	u64 limit = 1;

	/* By the DMA device, when no rule names the controller. */
	KUNIT_EXPECT_TRUE(test, nvme_hmb_limits_match(rules, 4, "nvme0",
						      "0000:01:00.0", &limit));
	KUNIT_EXPECT_EQ(test, limit, 64ULL << 20);
	/* By name, 0 (off) included. */
	KUNIT_EXPECT_TRUE(test, nvme_hmb_limits_match(rules, 4, "nvme1",
						      "0000:03:00.0", &limit));
	KUNIT_EXPECT_EQ(test, limit, 0ULL);
	/* The name wins over the DMA device, whichever rule comes first. */
	KUNIT_EXPECT_TRUE(test, nvme_hmb_limits_match(rules, 4, "nvme2",
						      "0000:02:00.0", &limit));
	KUNIT_EXPECT_EQ(test, limit, 24ULL << 20);
	/* No rule: the limit is left alone. */
	limit = 7;
	KUNIT_EXPECT_FALSE(test, nvme_hmb_limits_match(rules, 4, "nvme3",
						       "0000:04:00.0", &limit));
	KUNIT_EXPECT_FALSE(test, nvme_hmb_limits_match(rules, 4, "nvme3",
						       NULL, &limit));
	KUNIT_EXPECT_FALSE(test, nvme_hmb_limits_match(rules, 0, "nvme1",
						       NULL, &limit));
	KUNIT_EXPECT_EQ(test, limit, 7ULL);
	/* A prefix is not a match. */
	KUNIT_EXPECT_FALSE(test, nvme_hmb_limits_match(rules, 4, "nvme",
						       "0000:01:00", &limit));
}

static struct kunit_case nvme_hmb_limits_cases[] = {
	KUNIT_CASE_PARAM(limits_parse, limits_gen_params),
	KUNIT_CASE(limits_match),
	{}
};

static struct kunit_suite nvme_hmb_limits_suite = {
	.name = "nvme_hmb_limits",
	.test_cases = nvme_hmb_limits_cases,
};

kunit_test_suite(nvme_hmb_limits_suite);
