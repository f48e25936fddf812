// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: module span lookup (kmod/meta.c spulse_span_lookup()), the NMI-safe
 * "is this user address inside a known mapping of this process" check.
 */
#include <kunit/test.h>

#include "spulse.h"

static const struct spulse_span spans[] = {
	{ .pid = 10, .start = 0x400000, .end = 0x401000 },
	{ .pid = 10, .start = 0x7f0000000000ULL, .end = 0x7f0000200000ULL },
	{ .pid = 20, .start = 0x400000, .end = 0x500000 },
};

static void span_lookup_inside_and_edges(struct kunit *test)
{
	u32 n = ARRAY_SIZE(spans);

	KUNIT_EXPECT_TRUE(test, spulse_span_lookup(spans, n, 10, 0x400000));
	KUNIT_EXPECT_TRUE(test, spulse_span_lookup(spans, n, 10, 0x400fff));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, n, 10, 0x401000));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, n, 10, 0x3fffff));
	KUNIT_EXPECT_TRUE(test, spulse_span_lookup(spans, n, 10,
						   0x7f00001fffffULL));
}

static void span_lookup_is_per_process(struct kunit *test)
{
	u32 n = ARRAY_SIZE(spans);

	/* 0x480000 is mapped in pid 20 only */
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, n, 10, 0x480000));
	KUNIT_EXPECT_TRUE(test, spulse_span_lookup(spans, n, 20, 0x480000));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, n, 30, 0x400000));
}

static void span_lookup_respects_count(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, 0, 10, 0x400000));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(spans, 2, 20, 0x480000));
}

static struct kunit_case spulse_span_cases[] = {
	KUNIT_CASE(span_lookup_inside_and_edges),
	KUNIT_CASE(span_lookup_is_per_process),
	KUNIT_CASE(span_lookup_respects_count),
	{}
};

static struct kunit_suite spulse_span_suite = {
	.name = "spulse_span",
	.test_cases = spulse_span_cases,
};
kunit_test_suite(spulse_span_suite);
