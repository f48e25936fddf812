// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: module span lookup (kmod/meta.c spulse_span_lookup()), the NMI-safe
 * "is this user address inside a known mapping of this process" check, a
 * binary search over spans sorted by spulse_span_sort().
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "meta.h"

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

static bool span_linear(const struct spulse_span *s, u32 n, u32 pid,
			u64 addr)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (s[i].pid == pid && addr >= s[i].start && addr < s[i].end)
			return true;
	return false;
}

#define SPAN_BIG	4096

/*
 * A full table (4096 spans of 97 pids, shuffled, then sorted): both edges
 * of every span answer right, random probes as a linear scan does.
 */
static void span_lookup_full_table_matches_linear(struct kunit *test)
{
	struct spulse_span *s;
	u32 i, bad = 0;

	s = kunit_kcalloc(test, SPAN_BIG, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < SPAN_BIG; i++) {
		/* pid i % 97, spans of one pid 64 KiB apart, 4..60 KiB long */
		s[i].pid = 1000 + i % 97;
		s[i].start = 0x400000ULL + (u64)(i / 97) * 0x10000;
		s[i].end = s[i].start + 0x1000 * (1 + i % 15);
	}
	for (i = SPAN_BIG - 1; i > 0; i--) {
		u32 j = get_random_u32_below(i + 1);

		swap(s[i], s[j]);
	}
	spulse_span_sort(s, SPAN_BIG);
	for (i = 1; i < SPAN_BIG; i++)
		KUNIT_ASSERT_TRUE(test, s[i - 1].pid < s[i].pid ||
				  (s[i - 1].pid == s[i].pid &&
				   s[i - 1].start < s[i].start));
	/* spans of a pid are 64 KiB apart and shorter: both edges known */
	for (i = 0; i < SPAN_BIG; i++) {
		bad += !spulse_span_lookup(s, SPAN_BIG, s[i].pid, s[i].start);
		bad += !spulse_span_lookup(s, SPAN_BIG, s[i].pid, s[i].end - 1);
		bad += spulse_span_lookup(s, SPAN_BIG, s[i].pid, s[i].end);
		bad += spulse_span_lookup(s, SPAN_BIG, s[i].pid, s[i].start - 1);
	}
	/* random probes against a linear scan (kept few: KASAN under TCG) */
	for (i = 0; i < 1000; i++) {
		u32 pid = 999 + get_random_u32_below(99);
		u64 addr = 0x3f0000ULL + get_random_u32_below(0x3000000);

		bad += spulse_span_lookup(s, SPAN_BIG, pid, addr) !=
		       span_linear(s, SPAN_BIG, pid, addr);
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	/* first and last pid, below and above everything */
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(s, SPAN_BIG, 0, 0x400000));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(s, SPAN_BIG, ~0U, ~0ULL));
	KUNIT_EXPECT_FALSE(test, spulse_span_lookup(s, SPAN_BIG, 1000, 0));
}

/* Garbage (unsorted, overlapping) never reads outside the n entries. */
static void span_lookup_garbage_stays_in_bounds(struct kunit *test)
{
	struct spulse_span *s;
	u32 n = 257, i;

	s = kunit_kcalloc(test, n, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	get_random_bytes(s, n * sizeof(*s));
	for (i = 0; i < 2000; i++)
		spulse_span_lookup(s, n, get_random_u32(), get_random_u64());
	/* KASAN reports any out-of-bounds read of the kcalloc'd array */
	KUNIT_SUCCEED(test);
}

static struct kunit_case spulse_span_cases[] = {
	KUNIT_CASE(span_lookup_inside_and_edges),
	KUNIT_CASE(span_lookup_is_per_process),
	KUNIT_CASE(span_lookup_respects_count),
	KUNIT_CASE(span_lookup_full_table_matches_linear),
	KUNIT_CASE(span_lookup_garbage_stays_in_bounds),
	{}
};

static struct kunit_suite spulse_span_suite = {
	.name = "spulse_span",
	.test_cases = spulse_span_cases,
};
kunit_test_suite(spulse_span_suite);
