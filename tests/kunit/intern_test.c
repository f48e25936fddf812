// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: per-CPU intern tables (kmod/intern.c) - hit, miss, full table,
 * probe exhaustion, reset and generation wrap.
 */
#include <kunit/test.h>

#include "intern.h"

#define T_SHIFT 4	/* 16 entries */

static struct spulse_intern *new_table(struct kunit *test, u32 shift)
{
	struct spulse_intern *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct spulse_intern_ent *ent =
		kunit_kcalloc(test, 1U << shift, sizeof(*ent), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, ent);
	spulse_intern_init(t, ent, shift);
	return t;
}

static void key(u64 k[3], u64 n)
{
	k[0] = n;
	k[1] = ~n;
	k[2] = n * 3;
}

/* Insert key n under id; returns the find result before the insert. */
static int insert(struct spulse_intern *t, u64 n, u32 id)
{
	struct spulse_intern_ent *slot = NULL;
	u64 k[3];
	u32 got;
	int r;

	key(k, n);
	r = spulse_intern_find(t, k, &got, &slot);
	if (r == 0)
		spulse_intern_set(t, slot, k, id);
	return r;
}

static int lookup(struct spulse_intern *t, u64 n, u32 *id)
{
	struct spulse_intern_ent *slot;
	u64 k[3];

	key(k, n);
	return spulse_intern_find(t, k, id, &slot);
}

static void intern_miss_gives_free_slot_in_table(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	struct spulse_intern_ent *slot = NULL;
	u64 k[3];
	u32 id = 77;

	key(k, 1);
	KUNIT_EXPECT_EQ(test, spulse_intern_find(t, k, &id, &slot), 0);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	KUNIT_EXPECT_TRUE(test, slot >= t->ent && slot < t->ent + (1 << T_SHIFT));
	KUNIT_EXPECT_EQ(test, id, 77U);	/* not written on a miss */
	KUNIT_EXPECT_EQ(test, t->count, 0U);
}

static void intern_hit_returns_stored_id(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	u32 id = 0, n;

	for (n = 0; n < 8; n++)
		KUNIT_ASSERT_EQ(test, insert(t, n, 100 + n), 0);
	KUNIT_EXPECT_EQ(test, t->count, 8U);
	for (n = 0; n < 8; n++) {
		KUNIT_EXPECT_EQ(test, lookup(t, n, &id), 1);
		KUNIT_EXPECT_EQ(test, id, 100 + n);
	}
	/* a key differing only in k[2] is a different key */
	{
		struct spulse_intern_ent *slot;
		u64 k[3];

		key(k, 3);
		k[2]++;
		KUNIT_EXPECT_EQ(test, spulse_intern_find(t, k, &id, &slot), 0);
	}
}

static void intern_full_at_three_quarters(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	u32 n, limit = (3U << T_SHIFT) / 4;

	for (n = 0; n < limit; n++) {
		KUNIT_EXPECT_FALSE_MSG(test, spulse_intern_full(t),
				       "full after %u of %u", n, 1U << T_SHIFT);
		KUNIT_ASSERT_EQ(test, insert(t, n, n), 0);
	}
	KUNIT_EXPECT_TRUE(test, spulse_intern_full(t));
}

static void intern_exhausted_probe_returns_enospc(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	u32 n, id;

	/* fill every slot (ignoring the load limit) */
	for (n = 0; t->count < (1U << T_SHIFT); n++) {
		KUNIT_ASSERT_LT(test, n, 100000U);
		KUNIT_ASSERT_GE(test, insert(t, n, n), 0);
	}
	KUNIT_EXPECT_EQ(test, lookup(t, 1000000, &id), -ENOSPC);
	/* every stored key is still found */
	KUNIT_EXPECT_EQ(test, lookup(t, 0, &id), 1);
	KUNIT_EXPECT_EQ(test, id, 0U);
}

static void intern_reset_forgets_everything(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	u32 n, id;

	for (n = 0; n < 10; n++)
		KUNIT_ASSERT_EQ(test, insert(t, n, n), 0);
	spulse_intern_reset(t);
	KUNIT_EXPECT_EQ(test, t->count, 0U);
	KUNIT_EXPECT_FALSE(test, spulse_intern_full(t));
	for (n = 0; n < 10; n++)
		KUNIT_EXPECT_EQ_MSG(test, lookup(t, n, &id), 0,
				    "key %u survived reset", n);
	/* and the table is usable again, with new ids */
	KUNIT_EXPECT_EQ(test, insert(t, 4, 40), 0);
	KUNIT_EXPECT_EQ(test, lookup(t, 4, &id), 1);
	KUNIT_EXPECT_EQ(test, id, 40U);
}

static void intern_generation_wrap_clears_stale_entries(struct kunit *test)
{
	struct spulse_intern *t = new_table(test, T_SHIFT);
	u32 id;

	/* an entry of generation 1 ... */
	KUNIT_ASSERT_EQ(test, t->gen, 1U);
	KUNIT_ASSERT_EQ(test, insert(t, 5, 55), 0);
	/* ... 2^32 - 1 resets later the generation wraps back to 1 */
	t->gen = 0xffffffffU;
	spulse_intern_reset(t);
	KUNIT_EXPECT_NE(test, t->gen, 0U);
	KUNIT_EXPECT_EQ_MSG(test, lookup(t, 5, &id), 0,
			    "stale entry looks current after wrap (id %u)", id);
}

/*
 * The keys the encoder makes (frames: kind and an address, often 16-byte
 * aligned and dense; stack nodes: parent + 1 and a small frame id;
 * threads: pid:tid and comm) spread over the table like random ones:
 * each kind fills half of a 2^13-entry table (where a uniform hash's
 * longest probe run is about 15) without ever exhausting the 32 probes,
 * and the last one is then found under its id. (A hash that clusters
 * aligned or small keys runs out of probes here.)
 */
static void intern_encoder_keys_fill_to_the_limit(struct kunit *test)
{
	const u32 shift = 13, limit = 1U << (shift - 1);
	struct spulse_intern_ent *slot;
	struct spulse_intern *t;
	u32 kind, n, id, bad;
	u64 k[3];
	int r;

	for (kind = 0; kind < 4; kind++) {
		t = new_table(test, shift);
		bad = 0;
		for (n = 0; n < limit; n++) {
			if (kind == 0) {	/* user frames, every 16 bytes */
				k[0] = 1;
				k[1] = 0x401000 + 16ULL * n;
				k[2] = 0;
			} else if (kind == 1) {	/* kernel frames, mixed kinds */
				k[0] = 2 + (n & 1);
				k[1] = 0xffffffff81000000ULL + 64ULL * (n >> 1);
				k[2] = 0;
			} else if (kind == 2) {	/* stack nodes: a tree */
				k[0] = n / 8;
				k[1] = n % 8 + 3 * (n / 64);
				k[2] = 0;
			} else {		/* threads of one process */
				k[0] = 1000ULL << 32 | (1000 + n);
				k[1] = 0x6b726f77;	/* "work" */
				k[2] = 0;
			}
			r = spulse_intern_find(t, k, &id, &slot);
			if (r != 0) {
				bad++;
				continue;
			}
			spulse_intern_set(t, slot, k, n);
		}
		KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "key kind %u", kind);
		KUNIT_EXPECT_EQ(test, t->count, limit);
		/* the last key inserted is found under its id */
		KUNIT_EXPECT_EQ(test, spulse_intern_find(t, k, &id, &slot), 1);
		KUNIT_EXPECT_EQ(test, id, limit - 1);
	}
}

static struct kunit_case spulse_intern_cases[] = {
	KUNIT_CASE(intern_miss_gives_free_slot_in_table),
	KUNIT_CASE(intern_hit_returns_stored_id),
	KUNIT_CASE(intern_full_at_three_quarters),
	KUNIT_CASE(intern_exhausted_probe_returns_enospc),
	KUNIT_CASE(intern_reset_forgets_everything),
	KUNIT_CASE(intern_generation_wrap_clears_stale_entries),
	KUNIT_CASE(intern_encoder_keys_fill_to_the_limit),
	{}
};

static struct kunit_suite spulse_intern_suite = {
	.name = "spulse_intern",
	.test_cases = spulse_intern_cases,
};

kunit_test_suite(spulse_intern_suite);
