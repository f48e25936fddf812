// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: kernel-stack trimming (kmod/kstack.c): the sampler's own frames
 * before the interrupted IP are cut off.
 */
#include <kunit/test.h>

#include "spulse.h"

static void kstack_trim_finds_interrupted_ip(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x20, 0x30, 0x40, 0x50 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x30), 2);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x10), 0);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x50), 4);
}

static void kstack_trim_takes_first_occurrence(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x30, 0x20, 0x30 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x30), 1);
}

static void kstack_trim_missing_ip_is_enoent(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x20 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x31),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, 0, 0x10), -ENOENT);
	/* the search stays inside n */
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, 1, 0x20), -ENOENT);
}

static struct kunit_case spulse_kstack_cases[] = {
	KUNIT_CASE(kstack_trim_finds_interrupted_ip),
	KUNIT_CASE(kstack_trim_takes_first_occurrence),
	KUNIT_CASE(kstack_trim_missing_ip_is_enoent),
	{}
};

static struct kunit_suite spulse_kstack_suite = {
	.name = "spulse_kstack",
	.test_cases = spulse_kstack_cases,
};
kunit_test_suite(spulse_kstack_suite);
