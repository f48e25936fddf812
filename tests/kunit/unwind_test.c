// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: table-driven user unwinding (kmod/unwind.c, kmod/unwind_table.c).
 * Suite spulse_unwind: the row and mapping lookups (edges, gaps, one-row
 * tables, a large table), every row kind's step over crafted stacks held
 * in a kernel buffer standing in for user memory, lying tables (CFA below
 * SP, kernel return addresses, loops, garbage) that truncate and never
 * read outside user memory. Suite spulse_unwind_table: the message
 * validator refusing each malformed field (one case per rule, nothing
 * kept), the memory bound, DEL/MAP/forget/retire, and publication while
 * readers walk under RCU (KASAN and lockdep watch).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/threads.h>

#include "unwind.h"

#define FAKE_BASE	0x7ffff0000000ULL	/* "user" address of word 0 */
#define FAKE_WORDS	512
#define TASK_SZ		0x7ffffffff000ULL	/* x86-64 TASK_SIZE (4 levels) */
#define KADDR		0xffffffff81000000ULL
#define TEXT		0x400000ULL		/* table range [TEXT, TEXT_END) */
#define TEXT_END	0x500000ULL

struct fake_stack {
	u64 w[FAKE_WORDS];
	unsigned int reads;
	bool wild;	/* a read at or above TASK_SZ was attempted */
};

static int fake_read(void *ctx, u64 addr, void *dst, size_t len)
{
	struct fake_stack *fs = ctx;

	fs->reads++;
	if (addr >= TASK_SZ || addr + len > TASK_SZ)
		fs->wild = true;
	if (addr < FAKE_BASE || addr + len > FAKE_BASE + sizeof(fs->w) ||
	    addr + len < addr)
		return -EFAULT;
	memcpy(dst, (u8 *)fs->w + (addr - FAKE_BASE), len);
	return 0;
}

static u64 at(unsigned int word)
{
	return FAKE_BASE + 8ULL * word;
}

static struct fake_stack *new_stack(struct kunit *test)
{
	struct fake_stack *fs = kunit_kzalloc(test, sizeof(*fs), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fs);
	return fs;
}

/* A table over [lo, hi) with @n rows, in test memory. */
static struct spulse_ut_tab *new_tab(struct kunit *test, u64 lo, u64 hi,
				     const struct spulse_ut_row *rows, u32 n)
{
	struct spulse_ut_tab *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct spulse_ut_row *r = kunit_kcalloc(test, n, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, r);
	memcpy(r, rows, n * sizeof(*r));
	t->lo = lo;
	t->hi = hi;
	t->rows = r;
	t->n_rows = n;
	return t;
}

/* A map set of one mapping [TEXT, TEXT_END) onto @t with bias 0. */
static struct spulse_ut_pset *one_map(struct kunit *test,
				      const struct spulse_ut_tab *t)
{
	struct spulse_ut_pset *ps = kunit_kzalloc(test, struct_size(ps, map, 1),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ps);
	ps->n = 1;
	ps->map[0] = (struct spulse_ut_ment){ TEXT, TEXT_END, 0, t };
	return ps;
}

#define ROW(s, k, c, b) { .start = (s), .cfa_off = (c), .bp_off = (b), \
			  .kind = SPULSE_UT_##k }

/*
 * The standard text for step tests (table = user addresses):
 *   0x000 leaf functions without a frame (CFA_SP 8)
 *   0x100 after push %rbp (CFA_SP 16, bp at CFA-16)
 *   0x200 frame on BP (CFA_BP 16, bp at CFA-16)
 *   0x300 PLT stub
 *   0x400 realigned stack (DEREF_BP: CFA = *(BP - 8), caller's bp *(BP))
 *   0x500 signal trampoline
 *   0x600 outermost (END)
 *   0x700 unknown CFI
 *   0x800 no CFI (NONE)
 *   0x900 frame with CFA_SP 24 keeping bp
 */
static const struct spulse_ut_row std_rows[] = {
	ROW(0x000, CFA_SP, 8, 0),
	ROW(0x100, CFA_SP, 16, -16),
	ROW(0x200, CFA_BP, 16, -16),
	ROW(0x300, PLT, 8, 0),
	ROW(0x400, CFA_DEREF_BP, -8, 0),
	ROW(0x500, SIGNAL, 0, 0),
	ROW(0x600, END, 0, 0),
	ROW(0x700, UNKNOWN, 0, 0),
	ROW(0x800, NONE, 0, 0),
	ROW(0x900, CFA_SP, 24, 0),
};

#define PC_LEAF		(TEXT + 0x010)
#define PC_PUSHED	(TEXT + 0x110)
#define PC_BPFRAME	(TEXT + 0x210)
#define PC_PLT		(TEXT + 0x300)
#define PC_DRAP		(TEXT + 0x410)
#define PC_SIG		(TEXT + 0x500)
#define PC_END		(TEXT + 0x610)
#define PC_UNKNOWN	(TEXT + 0x710)
#define PC_NONE		(TEXT + 0x810)
#define PC_SP24		(TEXT + 0x910)
#define RA(pc)		((pc) + 1)	/* a return address whose - 1 is pc */

static const struct spulse_ut_pset *std_pset(struct kunit *test)
{
	return one_map(test, new_tab(test, TEXT, TEXT_END, std_rows,
				     ARRAY_SIZE(std_rows)));
}

static int uwalk(struct fake_stack *fs, const struct spulse_ut_pset *ps,
		 bool fb, u64 ip, u64 sp, u64 bp, u64 *out, u32 max,
		 struct spulse_uw_res *res)
{
	struct spulse_uregs r = { .ip = ip, .sp = sp, .bp = bp };

	return spulse_unwind_walk(&r, TASK_SZ, fake_read, fs, ps, fb, out, max,
				  res);
}

/* ---- lookup ---- */

static void lookup_first_last_gaps_and_out_of_range(struct kunit *test)
{
	static const struct spulse_ut_row rows[] = {
		ROW(0x0, CFA_SP, 8, 0), ROW(0x10, CFA_SP, 16, -16),
		ROW(0x100, NONE, 0, 0), ROW(0x200, END, 0, 0),
	};
	struct spulse_ut_tab *t = new_tab(test, 0x1000, 0x2000, rows, 4);

	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1000), &t->rows[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x100f), &t->rows[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1010), &t->rows[1]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x10ff), &t->rows[1]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1100), &t->rows[2]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1200), &t->rows[3]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1fff), &t->rows[3]);
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, 0x0fff));
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, 0x2000));
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, 0));
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, ~0ULL));
}

static void lookup_one_row_table_and_leading_gap(struct kunit *test)
{
	static const struct spulse_ut_row one[] = { ROW(0, CFA_SP, 8, 0) };
	static const struct spulse_ut_row late[] = { ROW(0x20, CFA_SP, 8, 0) };
	struct spulse_ut_tab *t = new_tab(test, 0x1000, 0x1001, one, 1);
	struct spulse_ut_tab *u = new_tab(test, 0x1000, 0x1100, late, 1);

	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0x1000), &t->rows[0]);
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, 0x1001));
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, 0xfff));
	/* addresses before the first row's start are not covered */
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(u, 0x101f));
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(u, 0x1020), &u->rows[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(u, 0x10ff), &u->rows[0]);
}

static void lookup_large_table_finds_every_row(struct kunit *test)
{
	const u32 n = 100000;
	struct spulse_ut_row *rows = kunit_kcalloc(test, n, sizeof(*rows),
						   GFP_KERNEL);
	struct spulse_ut_tab *t;
	u32 i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, rows);
	for (i = 0; i < n; i++) {
		rows[i].start = i * 7 + (i & 1);
		rows[i].kind = SPULSE_UT_CFA_SP;
		rows[i].cfa_off = 8;
	}
	t = new_tab(test, 0x10000, 0x10000 + 7ULL * n + 7, rows, n);
	for (i = 0; i < n; i++) {
		u64 a = 0x10000 + rows[i].start;
		u64 e = 0x10000 + (i + 1 < n ? rows[i + 1].start : 7ULL * n + 7);

		if (spulse_ut_row_find(t, a) != &t->rows[i] ||
		    spulse_ut_row_find(t, e - 1) != &t->rows[i])
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/* Give @t a block index like an ADD does (test memory). */
static void index_tab(struct kunit *test, struct spulse_ut_tab *t)
{
	u8 shift;
	u32 len = spulse_ut_index_len(t->hi - t->lo, t->n_rows, &shift);

	t->idx = kunit_kcalloc(test, len, sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->idx);
	spulse_ut_index_fill(t->rows, t->n_rows, shift, t->idx, len);
	t->idx_len = len;
	t->shift = shift;
}

static void lookup_block_index_matches_plain_search(struct kunit *test)
{
	const u32 n = 20000;
	struct spulse_ut_row *rows = kunit_kcalloc(test, n, sizeof(*rows),
						   GFP_KERNEL);
	struct spulse_ut_tab *plain, *fast;
	u64 start = 0, span, a;
	u32 i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, rows);
	for (i = 0; i < n; i++) {
		rows[i].start = start;
		rows[i].kind = SPULSE_UT_CFA_SP;
		/* row sizes 1 .. 5000 bytes, some long runs */
		start += 1 + (i % 7 == 0 ? get_random_u32() % 5000 :
			      get_random_u32() % 40);
	}
	span = start + 1 + get_random_u32() % 3000;
	plain = new_tab(test, 0x10000, 0x10000 + span, rows, n);
	fast = new_tab(test, 0x10000, 0x10000 + span, rows, n);
	index_tab(test, fast);
	KUNIT_EXPECT_GE(test, fast->shift, (u8)SPULSE_UT_BLOCK_SHIFT_MIN);
	KUNIT_EXPECT_LE(test, fast->idx_len, n + 1);	/* <= 4 bytes a row */
	for (i = 0; i < n; i++) {
		a = 0x10000 + rows[i].start;
		if (spulse_ut_row_find(fast, a) - fast->rows !=
		    spulse_ut_row_find(plain, a) - plain->rows ||
		    spulse_ut_row_find(fast, a) - fast->rows != i)
			bad++;
		if (i && spulse_ut_row_find(fast, a - 1) - fast->rows != i - 1)
			bad++;
	}
	for (i = 0; i < 100000; i++) {
		a = 0x10000 + get_random_u64() % span;
		if (spulse_ut_row_find(fast, a) - fast->rows !=
		    spulse_ut_row_find(plain, a) - plain->rows)
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(fast, 0x10000 + span - 1),
			    &fast->rows[n - 1]);
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(fast, 0x10000 + span));
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(fast, 0xffff));
}

static void lookup_block_index_one_row_over_4gib(struct kunit *test)
{
	static const struct spulse_ut_row one[] = { ROW(0, END, 0, 0) };
	struct spulse_ut_tab *t = new_tab(test, 0, U32_MAX, one, 1);

	index_tab(test, t);
	KUNIT_EXPECT_EQ(test, t->idx_len, 2U);		/* one block */
	KUNIT_EXPECT_EQ(test, t->shift, (u8)32);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, 0), &t->rows[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_row_find(t, U32_MAX - 1),
			    &t->rows[0]);
	KUNIT_EXPECT_NULL(test, spulse_ut_row_find(t, U32_MAX));
}

static void lookup_maps_edges_gaps_and_bias(struct kunit *test)
{
	static const struct spulse_ut_row rows[] = {
		ROW(0, CFA_SP, 8, 0), ROW(0x800, END, 0, 0),
	};
	struct spulse_ut_tab *t = new_tab(test, 0x1000, 0x2000, rows, 2);
	struct spulse_ut_pset *ps = kunit_kzalloc(test, struct_size(ps, map, 3),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ps);
	ps->n = 3;
	/* the same file at three places; bias = start - 0x1000 */
	ps->map[0] = (struct spulse_ut_ment){ 0x10000, 0x11000, 0xf000, t };
	ps->map[1] = (struct spulse_ut_ment){ 0x20000, 0x21000, 0x1f000, t };
	ps->map[2] = (struct spulse_ut_ment){ 0x21000, 0x22000, 0x20000, t };
	KUNIT_EXPECT_NULL(test, spulse_ut_map_find(ps, 0xffff));
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_map_find(ps, 0x10000), &ps->map[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_map_find(ps, 0x10fff), &ps->map[0]);
	KUNIT_EXPECT_NULL(test, spulse_ut_map_find(ps, 0x11000));	/* gap */
	KUNIT_EXPECT_NULL(test, spulse_ut_map_find(ps, 0x1ffff));
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_map_find(ps, 0x20fff), &ps->map[1]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_map_find(ps, 0x21000), &ps->map[2]);
	KUNIT_EXPECT_NULL(test, spulse_ut_map_find(ps, 0x22000));
	/* bias: user 0x10800 is table 0x1800 = row 1 */
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_lookup(ps, 0x10800), &t->rows[1]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_lookup(ps, 0x107ff), &t->rows[0]);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_lookup(ps, 0x21800), &t->rows[1]);
	KUNIT_EXPECT_NULL(test, spulse_ut_lookup(ps, 0x11000));
	KUNIT_EXPECT_NULL(test, spulse_ut_lookup(NULL, 0x10800));
	ps->n = 0;
	KUNIT_EXPECT_NULL(test, spulse_ut_map_find(ps, 0x10000));
}

/* ---- the step, kind by kind ---- */

static void step_cfa_sp_then_end_is_complete(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	fs->w[0] = RA(PC_END);		/* leaf: CFA = sp + 8, ra at sp */
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0x1234, out, 8, &res), 2);
	KUNIT_EXPECT_EQ(test, out[0], PC_LEAF);		/* exact leaf */
	KUNIT_EXPECT_EQ(test, out[1], PC_END);		/* ra - 1 */
	KUNIT_EXPECT_TRUE(test, res.complete);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.table_steps, 1U);
	KUNIT_EXPECT_EQ(test, res.fp_steps, 0U);
}

static void step_saved_bp_feeds_a_bp_frame(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* leaf after push %rbp: CFA = sp + 16, bp saved at sp, ra at sp + 8 */
	fs->w[0] = at(10);		/* caller's bp */
	fs->w[1] = RA(PC_BPFRAME);
	/* caller frames on bp: CFA = bp + 16, ra at bp + 8, bp at bp */
	fs->w[10] = at(20);
	fs->w[11] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_PUSHED,
				    at(0), 0, out, 8, &res), 3);
	KUNIT_EXPECT_EQ(test, out[1], PC_BPFRAME);
	KUNIT_EXPECT_EQ(test, out[2], PC_END);
	KUNIT_EXPECT_TRUE(test, res.complete);
	KUNIT_EXPECT_EQ(test, res.table_steps, 2U);
}

static void step_unchanged_bp_is_kept(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* CFA_SP 24 with bp_off 0: bp (at(30)) passes through unchanged */
	fs->w[2] = RA(PC_BPFRAME);
	fs->w[30] = at(40);
	fs->w[31] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_SP24, at(0),
				    at(30), out, 8, &res), 3);
	KUNIT_EXPECT_EQ(test, out[1], PC_BPFRAME);
	KUNIT_EXPECT_EQ(test, out[2], PC_END);
	KUNIT_EXPECT_TRUE(test, res.complete);
}

static void step_plt_expression_depends_on_pc(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	fs->w[0] = RA(PC_END);
	fs->w[1] = RA(PC_END);
	/* pc & 15 < 11: CFA = sp + 8 */
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_PLT + 10,
				    at(0), 0, out, 8, &res), 2);
	KUNIT_EXPECT_TRUE(test, res.complete);
	/* pc & 15 >= 11 (after the push of the lazy stub): CFA = sp + 16 */
	fs->w[1] = RA(PC_UNKNOWN);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_PLT + 11,
				    at(0), 0, out, 8, &res), 2);
	KUNIT_EXPECT_EQ(test, out[1], PC_UNKNOWN);
	KUNIT_EXPECT_TRUE(test, res.truncated);
}

static void step_deref_bp_realigned_frame(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* DRAP: CFA = *(bp - 8); ra at CFA - 8; caller's bp at *(bp) */
	fs->w[19] = at(40);	/* bp = at(20): *(bp - 8) */
	fs->w[20] = at(60);	/* *(bp): the caller's bp */
	fs->w[38] = at(99);	/* CFA - 16: not the caller's bp here */
	fs->w[39] = RA(PC_BPFRAME);
	fs->w[60] = 0;
	fs->w[61] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_DRAP, at(0),
				    at(20), out, 8, &res), 3);
	KUNIT_EXPECT_EQ(test, out[1], PC_BPFRAME);
	KUNIT_EXPECT_EQ(test, out[2], PC_END);
	KUNIT_EXPECT_TRUE(test, res.complete);
	/* a bp below sp is not dereferenced */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), false, PC_DRAP, at(30),
				    at(20), out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
}

static void step_signal_frame_gives_exact_ip(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* handler (leaf, no frame) returns into __restore_rt */
	fs->w[0] = RA(PC_SIG);		/* ra - 1 = PC_SIG: SIGNAL row */
	/* struct ucontext at sp = at(1) */
	fs->w[1 + SPULSE_UC_BP / 8] = at(100);
	fs->w[1 + SPULSE_UC_SP / 8] = at(90);
	fs->w[1 + SPULSE_UC_IP / 8] = PC_LEAF + 3;	/* interrupted, exact */
	fs->w[90] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), false, PC_LEAF, at(0),
				    0, out, 8, &res), 4);
	KUNIT_EXPECT_EQ(test, out[1], PC_SIG);
	KUNIT_EXPECT_EQ(test, out[2], PC_LEAF + 3);	/* not - 1 */
	KUNIT_EXPECT_EQ(test, out[3], PC_END);
	KUNIT_EXPECT_TRUE(test, res.complete);
	KUNIT_EXPECT_EQ(test, res.table_steps, 3U);
}

static void step_signal_frame_lies_are_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];
	const struct spulse_ut_pset *ps = std_pset(test);

	/* interrupted SP not above the signal frame */
	fs->w[20 + SPULSE_UC_SP / 8] = at(10);
	fs->w[20 + SPULSE_UC_IP / 8] = PC_LEAF;
	KUNIT_EXPECT_EQ(test, uwalk(fs, ps, true, PC_SIG, at(20), 0, out, 8,
				    &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	/* a kernel IP in the signal frame */
	fs->w[20 + SPULSE_UC_SP / 8] = at(200);
	fs->w[20 + SPULSE_UC_IP / 8] = KADDR;
	KUNIT_EXPECT_EQ(test, uwalk(fs, ps, true, PC_SIG, at(20), 0, out, 8,
				    &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	/* the ucontext is not readable */
	KUNIT_EXPECT_EQ(test, uwalk(fs, ps, true, PC_SIG, at(FAKE_WORDS - 4),
				    0, out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_FALSE(test, fs->wild);
}

static void step_unknown_truncates(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	fs->w[0] = RA(PC_UNKNOWN);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 8, &res), 2);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_FALSE(test, res.complete);
	/* the leaf itself in an UNKNOWN range */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_UNKNOWN,
				    at(0), 0, out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
}

static void step_none_row_takes_the_fp_step(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* leaf in a NONE range, frame-pointer chain to an END range */
	fs->w[4] = at(10);
	fs->w[5] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), true, PC_NONE, at(0),
				    at(4), out, 8, &res), 2);
	KUNIT_EXPECT_EQ(test, out[1], PC_END);
	KUNIT_EXPECT_EQ(test, res.fp_steps, 1U);
	KUNIT_EXPECT_EQ(test, res.table_steps, 0U);
	KUNIT_EXPECT_TRUE(test, res.complete);
	/* unwind=tables: no FP step */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), false, PC_NONE, at(0),
				    at(4), out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.fp_steps, 0U);
}

static void step_unmapped_pc_takes_the_fp_step(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* leaf outside every mapping, its caller in the table */
	fs->w[4] = at(10);
	fs->w[5] = RA(PC_LEAF);
	/* after the FP step sp = bp + 16 = at(6): ra 0 there ends it */
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), true, 0x1000, at(0),
				    at(4), out, 8, &res), 2);
	/* CFA_SP 8 from sp = at(6): ra at at(6) */
	fs->w[6] = RA(PC_END);
	KUNIT_ASSERT_EQ(test, uwalk(fs, std_pset(test), true, 0x1000, at(0),
				    at(4), out, 8, &res), 3);
	KUNIT_EXPECT_EQ(test, out[1], PC_LEAF);
	KUNIT_EXPECT_EQ(test, out[2], PC_END);
	KUNIT_EXPECT_EQ(test, res.fp_steps, 1U);
	KUNIT_EXPECT_EQ(test, res.table_steps, 1U);
	KUNIT_EXPECT_TRUE(test, res.complete);
}

static void step_without_tables_equals_the_fp_walker(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uregs r = { .ip = 0x401000, .sp = at(0), .bp = at(4) };
	struct spulse_uw_res res;
	u64 a[16], b[16];
	bool trunc;
	int na, nb, i;

	fs->w[4] = at(10);
	fs->w[5] = 0x401100;
	fs->w[10] = at(20);
	fs->w[11] = 0x401200;
	fs->w[20] = at(20);		/* self loop: cut */
	fs->w[21] = 0x401300;
	na = spulse_ustack_walk(&r, TASK_SZ, fake_read, fs, a, 16, &trunc);
	nb = uwalk(fs, NULL, true, r.ip, r.sp, r.bp, b, 16, &res);
	KUNIT_ASSERT_EQ(test, na, nb);
	KUNIT_EXPECT_EQ(test, trunc, res.truncated);
	for (i = 0; i < na; i++)
		KUNIT_EXPECT_EQ(test, a[i], b[i]);
	KUNIT_EXPECT_EQ(test, res.fp_steps, (u32)na - 1);
	/* clean end at bp 0 and at ra 0: neither complete nor truncated */
	fs->w[20] = 0;
	nb = uwalk(fs, NULL, true, r.ip, r.sp, r.bp, b, 16, &res);
	KUNIT_EXPECT_EQ(test, nb, 4);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_FALSE(test, res.complete);
	fs->w[11] = 0;
	KUNIT_EXPECT_EQ(test, uwalk(fs, NULL, true, r.ip, r.sp, r.bp, b, 16,
				    &res), 2);
	KUNIT_EXPECT_FALSE(test, res.truncated);
}

static void step_zero_return_address_ends_cleanly(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	fs->w[0] = 0;
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 8, &res), 1);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_FALSE(test, res.complete);
}

static void step_depth_limit_truncates(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[32];
	int i;

	/* a chain of frameless leaves: each CFA = sp + 8 */
	for (i = 0; i < 20; i++)
		fs->w[i] = RA(PC_LEAF);
	fs->w[20] = RA(PC_END);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 3, &res), 3);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	/* exactly at the limit: the END row still makes it complete */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 22, &res), 22);
	KUNIT_EXPECT_TRUE(test, res.complete);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 1, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
}

static void step_kernel_ip_gives_no_frames(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[4];

	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, KADDR, at(0), 0,
				    out, 4, &res), 0);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, fs->reads, 0U);
}

/* ---- lying tables ---- */

/*
 * A table whose rows each break one safety rule at SP = at(100), BP =
 * at(10) (rows 0x100 apart, the PC 8 into one)
 */
static const struct spulse_ut_pset *lie_pset(struct kunit *test)
{
	static const struct spulse_ut_row rows[] = {
		ROW(0x000, CFA_SP, 0, 0),	/* CFA == SP */
		ROW(0x100, CFA_SP, -64, 0),	/* CFA below SP */
		ROW(0x200, CFA_BP, 16, 0),	/* BP below SP */
		ROW(0x300, CFA_SP, 12, 0),	/* misaligned CFA */
		ROW(0x400, CFA_SP, 0x7ffffff8, 0),	/* past user memory */
		ROW(0x500, CFA_SP, 16, -2048),	/* saved bp below SP */
	};

	return one_map(test, new_tab(test, TEXT, TEXT_END, rows,
				     ARRAY_SIZE(rows)));
}

static void lie_cfa_at_or_below_sp_truncates(struct kunit *test)
{
	const struct spulse_ut_pset *ps = lie_pset(test);
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8], pc;
	int i;

	for (i = 0; i < FAKE_WORDS; i++)
		fs->w[i] = RA(TEXT);	/* every slot "returns" into row 0 */
	for (pc = TEXT; pc < TEXT + 0x600; pc += 0x100) {
		KUNIT_EXPECT_EQ_MSG(test, uwalk(fs, ps, true, pc + 8, at(100),
						at(10), out, 8, &res), 1,
				    "pc %llx", pc);
		KUNIT_EXPECT_TRUE_MSG(test, res.truncated, "pc %llx", pc);
	}
	KUNIT_EXPECT_FALSE(test, fs->wild);
}

static void lie_kernel_return_address_not_followed(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];
	int n, i;

	fs->w[0] = RA(PC_LEAF);
	fs->w[1] = KADDR;
	n = uwalk(fs, std_pset(test), true, PC_LEAF, at(0), 0, out, 8, &res);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_LT(test, out[i], TASK_SZ);
}

static void lie_loops_are_bounded(struct kunit *test)
{
	static const struct spulse_ut_row rows[] = {
		ROW(0x000, CFA_BP, 16, 0),	/* bp never changes */
		ROW(0x100, CFA_SP, 16, -16),	/* saved bp points back down */
	};
	const struct spulse_ut_pset *ps =
		one_map(test, new_tab(test, TEXT, TEXT_END, rows, 2));
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[64];
	int n, i;

	/* CFA = bp + 16 with bp fixed: the second frame has CFA == SP */
	fs->w[11] = RA(TEXT);
	n = uwalk(fs, ps, true, TEXT, at(0), at(10), out, 64, &res);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	/* saved bps pointing at the start of the stack, ra back into it */
	for (i = 0; i < FAKE_WORDS; i += 2) {
		fs->w[i] = at(0);
		fs->w[i + 1] = RA(TEXT + 0x100);
	}
	fs->reads = 0;
	n = uwalk(fs, ps, true, TEXT + 0x100, at(0), at(0), out, 64, &res);
	KUNIT_EXPECT_LE(test, n, 64);
	KUNIT_EXPECT_LE(test, fs->reads, 2U * 64 + 2);
	KUNIT_EXPECT_TRUE(test, res.truncated);
}

static void lie_unreadable_memory_truncates(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	/* sp near the end of readable memory: ra slot unreadable */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF,
				    at(FAKE_WORDS), 0, out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	/* DEREF_BP through a bp at the top of user memory */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_DRAP, at(0),
				    TASK_SZ - 8, out, 8, &res), 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_FALSE(test, fs->wild);
}

static void lie_garbage_tables_never_escape(struct kunit *test)
{
	struct spulse_ut_row *rows = kunit_kcalloc(test, 64, sizeof(*rows),
						   GFP_KERNEL);
	struct fake_stack *fs = new_stack(test);
	const struct spulse_ut_pset *ps;
	struct spulse_ut_tab *t;
	struct spulse_uw_res res;
	u64 out[32];
	u32 iter, i, bad = 0;
	int n;

	KUNIT_ASSERT_NOT_NULL(test, rows);
	t = new_tab(test, TEXT, TEXT + 64 * 16, rows, 64);
	rows = (struct spulse_ut_row *)t->rows;	/* new_tab() copied them */
	ps = one_map(test, t);
	for (iter = 0; iter < 3000; iter++) {
		for (i = 0; i < 64; i++) {
			rows[i].start = i * 16;
			rows[i].kind = get_random_u32() % 8;
			rows[i].cfa_off = (s32)(get_random_u32() % 256) - 64;
			rows[i].bp_off = -8 * (s16)(get_random_u32() % 4);
		}
		for (i = 0; i < FAKE_WORDS; i++) {
			u32 c = get_random_u32() % 4;

			fs->w[i] = c == 0 ? TEXT + get_random_u32() % 1100 :
				   c == 1 ? at(get_random_u32() % FAKE_WORDS) :
				   c == 2 ? KADDR : get_random_u64();
		}
		n = uwalk(fs, ps, iter & 1, TEXT + get_random_u32() % 1024,
			  at(get_random_u32() % FAKE_WORDS),
			  at(get_random_u32() % FAKE_WORDS), out, 32, &res);
		if (n < 1 || n > 32 || (res.complete && res.truncated))
			bad++;
		/* a cut walk names one cause, a whole one none */
		if (res.truncated != (res.cut != SPULSE_UW_CUT_NONE) ||
		    res.cut >= SPULSE_UW_CUT_NR)
			bad++;
		for (i = 0; i < n; i++)
			bad += out[i] >= TASK_SZ;
		cond_resched();	/* slow under TCG: no RCU stall warnings */
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_FALSE(test, fs->wild);
}

/* ---- the one-read standard frame and the memo against the plain step ---- */

/* A stack with unreadable words: a read touching one fails whole. */
struct hole_stack {
	struct fake_stack fs;
	bool hole[FAKE_WORDS];
};

static int hole_read(void *ctx, u64 addr, void *dst, size_t len)
{
	struct hole_stack *hs = ctx;
	u64 i;

	if (fake_read(&hs->fs, addr, dst, len))
		return -EFAULT;
	for (i = (addr - FAKE_BASE) / 8; i <= (addr + len - 1 - FAKE_BASE) / 8;
	     i++)
		if (hs->hole[i])
			return -EFAULT;
	return 0;
}

/* One 8-byte word, as the plain step reads them. */
static bool ref_word(struct hole_stack *hs, u64 addr, u64 *v)
{
	if (addr >= TASK_SZ || TASK_SZ - addr < 8)
		return false;
	return !hole_read(hs, addr, v, 8);
}

/*
 * The step of docs/UNWIND.md for CFA_SP, CFA_BP, PLT, END, UNKNOWN and
 * NONE rows (frame-pointer step with fallback), written out plainly: the
 * caller's BP and the return address are two separate 8-byte reads.
 */
static int ref_walk(struct hole_stack *hs, const struct spulse_ut_pset *ps,
		    u64 ip, u64 sp, u64 bp, u64 *out, u32 max,
		    struct spulse_uw_res *res)
{
	const struct spulse_ut_row *row;
	u64 pc = ip, cfa, nbp, ra, w0, w1;
	u8 kind, why = SPULSE_UW_CUT_BAD_FRAME, miss;
	u32 n = 0;

	memset(res, 0, sizeof(*res));
	if (!max || ip >= TASK_SZ)
		goto cut;
	out[n++] = ip;
	for (;;) {
		row = spulse_ut_lookup_why(ps, pc, &miss);
		kind = row ? row->kind : SPULSE_UT_NONE;
		if (kind == SPULSE_UT_NONE) {
			why = miss;
			if (!bp)
				return n;
			if ((bp & 7) || bp < sp || bp > TASK_SZ - 16 ||
			    !ref_word(hs, bp, &w0) || !ref_word(hs, bp + 8, &w1))
				goto cut;
			if (!w1)
				return n;
			if (w1 >= TASK_SZ)
				goto cut;
			if (n >= max) {
				why = SPULSE_UW_CUT_DEPTH;
				goto cut;
			}
			out[n++] = w1 - 1;
			res->fp_steps++;
			sp = bp + 16;
			bp = w0;
			pc = w1 - 1;
			continue;
		}
		if (kind == SPULSE_UT_END) {
			res->complete = true;
			return n;
		}
		if (kind != SPULSE_UT_CFA_SP && kind != SPULSE_UT_CFA_BP &&
		    kind != SPULSE_UT_PLT) {
			why = SPULSE_UW_CUT_UNKNOWN;
			goto cut;
		}
		cfa = (kind == SPULSE_UT_CFA_BP ? bp : sp) + (s64)row->cfa_off;
		if (kind == SPULSE_UT_PLT && (pc & 15) >= 11)
			cfa += 8;
		why = SPULSE_UW_CUT_BAD_FRAME;
		if (cfa <= sp || (cfa & 7) || cfa > TASK_SZ)
			goto cut;
		nbp = bp;
		if (row->bp_off) {
			if (cfa + (s64)row->bp_off < sp)
				goto cut;
			why = SPULSE_UW_CUT_UNREADABLE;
			if (!ref_word(hs, cfa + (s64)row->bp_off, &nbp))
				goto cut;
		}
		why = SPULSE_UW_CUT_UNREADABLE;
		if (!ref_word(hs, cfa - 8, &ra))
			goto cut;
		if (!ra)
			return n;
		why = SPULSE_UW_CUT_BAD_FRAME;
		if (ra >= TASK_SZ)
			goto cut;
		if (n >= max) {
			why = SPULSE_UW_CUT_DEPTH;
			goto cut;
		}
		out[n++] = ra - 1;
		res->table_steps++;
		sp = cfa;
		bp = nbp;
		pc = ra - 1;
	}
cut:
	res->truncated = true;
	res->cut = why;
	res->cut_pc = n ? pc : 0;
	return n;
}

static bool same_walk(const u64 *a, int na, const struct spulse_uw_res *ra,
		      const u64 *b, int nb, const struct spulse_uw_res *rb)
{
	return na == nb && !memcmp(a, b, na * sizeof(*a)) &&
	       ra->table_steps == rb->table_steps &&
	       ra->fp_steps == rb->fp_steps && ra->complete == rb->complete &&
	       ra->truncated == rb->truncated && ra->cut == rb->cut &&
	       ra->cut_pc == rb->cut_pc;
}

/*
 * Random tables of standard frames (bp_off -16: one 16-byte read), other
 * saved-BP slots, frames on BP, NONE, END and UNKNOWN rows, over random
 * plausible stacks (return addresses into the text, frame pointers above,
 * zeros, garbage) with unreadable words: the walk, with and without the
 * memo (kept across walks, so most lookups are its hits), gives exactly
 * the plain step's frames, counts, ending and cut, read two words apart.
 */
/* xorshift64: cheap randomness for the long loops (KASAN under TCG) */
static u32 rnd(u64 *st)
{
	u64 x = *st;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*st = x;
	return (u32)(x >> 32);
}

/* a row the walk's inner run steps (a frame-pointer body) */
static bool is_run_row(const struct spulse_ut_row *w)
{
	return w && w->kind == SPULSE_UT_CFA_BP && w->cfa_off == 16 &&
	       w->bp_off == -16;
}

/*
 * The random-walk tests' memory: a stack with holes, a memo, a table of
 * rows 0x40 apart that the test rewrites in place (@rows, the table's own
 * copy) and its map set; @st seeds rnd().
 */
struct rand_fix {
	struct hole_stack *hs;
	struct spulse_ut_memo *memo;
	struct spulse_ut_row *rows;
	struct spulse_ut_pset *ps;
	u64 st;
};

static void rand_fix_init(struct kunit *test, struct rand_fix *f, u32 nrows)
{
	struct spulse_ut_row *rows = kunit_kcalloc(test, nrows, sizeof(*rows),
						   GFP_KERNEL);
	struct spulse_ut_tab *t;

	f->hs = kunit_kzalloc(test, sizeof(*f->hs), GFP_KERNEL);
	f->memo = kunit_kzalloc(test, sizeof(*f->memo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rows);
	KUNIT_ASSERT_NOT_NULL(test, f->hs);
	KUNIT_ASSERT_NOT_NULL(test, f->memo);
	t = new_tab(test, TEXT, TEXT + 0x40 * nrows, rows, nrows);
	f->rows = (struct spulse_ut_row *)t->rows;
	f->ps = one_map(test, t);
	f->st = get_random_u64() | 1;
}

/*
 * How rand_stack() draws a word (c = rnd() % @n): below @ra a return
 * address into the text or just past it, below @link a link 1 .. @up
 * words up, below @zero 0, else a kernel address or garbage; below @fp
 * (0: never) a frame-pointer chain instead (even words link 2 or 4 words
 * up, odd ones are return addresses into the text). One word in @hole is
 * unreadable.
 */
struct stack_mix {
	u32 n, ra, link, zero, up, fp, hole;
};

static void rand_stack(struct rand_fix *f, u32 span, const struct stack_mix *m)
{
	struct hole_stack *hs = f->hs;
	u64 *st = &f->st;
	u32 i;

	for (i = 0; i < FAKE_WORDS; i++) {
		u32 c = rnd(st) % m->n;

		hs->fs.w[i] = c < m->ra ? RA(TEXT + rnd(st) % (span + 0x100)) :
			      c < m->link ? at(min(i + 1 + rnd(st) % m->up,
						   FAKE_WORDS - 1U)) :
			      c < m->zero ? 0 :
			      rnd(st) & 1 ? KADDR :
			      (u64)rnd(st) << 32 | rnd(st);
		if (c < m->fp)
			hs->fs.w[i] = i & 1 ? RA(TEXT + rnd(st) % span) :
				      at(min(i + 2 + 2 * (rnd(st) % 2),
					     FAKE_WORDS - 1U));
		hs->hole[i] = rnd(st) % m->hole == 0;
	}
}

/*
 * @r's walk (at most @max frames, <= 24) without a memo, then @times with
 * @memo (cleared first when @clear), each against the plain step's, which
 * fills @ref, *@nr and @rr: the number of walks that differ from it.
 */
static u32 walks_differ(struct hole_stack *hs, const struct spulse_ut_pset *ps,
			struct spulse_ut_memo *memo,
			const struct spulse_uregs *r, u32 max, u32 times,
			bool clear, u64 *ref, int *nr, struct spulse_uw_res *rr)
{
	struct spulse_uw_res rg;
	u32 bad = 0, i;
	u64 got[24];
	int n;

	*nr = ref_walk(hs, ps, r->ip, r->sp, r->bp, ref, max, rr);
	n = spulse_unwind_walk(r, TASK_SZ, hole_read, hs, ps, true, got, max,
			       &rg);
	bad += !same_walk(ref, *nr, rr, got, n, &rg);
	if (clear)
		memset(memo, 0, sizeof(*memo));
	for (i = 0; i < times; i++) {
		n = spulse_unwind_walk_memo(r, TASK_SZ, hole_read, hs, ps, memo,
					    true, got, max, &rg);
		bad += !same_walk(ref, *nr, rr, got, n, &rg);
	}
	return bad;
}

static void fast_frame_and_memo_equal_the_plain_step(struct kunit *test)
{
	/* words: 11 in 20 return addresses, 7 links, 1 zero, 1 else */
	static const struct stack_mix mix = { 20, 11, 18, 19, 6, 0, 64 };
	/* odd rounds: 17 in 20 of a frame-pointer chain */
	static const struct stack_mix fp_mix = { 20, 11, 18, 19, 6, 17, 64 };
	const u32 nrows = 64, span = 0x40 * 64;
	u32 iter, i, bad = 0, deep = 0, std_steps = 0, runs = 0, round;
	struct spulse_ut_row *rows;
	struct spulse_uw_res rr;
	struct rand_fix f;
	struct spulse_uregs r;
	u64 ref[24];
	int nr;

	rand_fix_init(test, &f, nrows);
	rows = f.rows;
	for (round = 0; round < 20; round++) {
		for (i = 0; i < nrows; i++) {
			/* odd rounds: mostly frame-pointer bodies */
			u32 c = round & 1 && rnd(&f.st) % 4 ? 0 :
				rnd(&f.st) % 16;

			rows[i] = (struct spulse_ut_row){ .start = 0x40 * i };
			if (c < 7) {
				rows[i].kind = SPULSE_UT_CFA_BP;
				rows[i].cfa_off = 16;
				rows[i].bp_off = c < 6 ? -16 : 0;
			} else if (c < 14) {
				static const s16 bo[] = { 0, -8, -16, -16, -24 };

				rows[i].kind = SPULSE_UT_CFA_SP;
				rows[i].cfa_off = 8 * (1 + rnd(&f.st) % 5);
				rows[i].bp_off = bo[rnd(&f.st) % 5];
			} else {
				rows[i].kind = c == 14 ? SPULSE_UT_NONE :
					       i & 1 ? SPULSE_UT_END :
					       SPULSE_UT_UNKNOWN;
			}
		}
		/* new rows: a new set as far as the memo is concerned */
		f.ps->serial = spulse_ut_serial_next();
		for (iter = 0; iter < 150; iter++) {
			rand_stack(&f, span, round & 1 ? &fp_mix : &mix);
			i = rnd(&f.st) % 64;
			r = (struct spulse_uregs){
				.ip = TEXT + rnd(&f.st) % span,
				.sp = at(i),
				.bp = at((i + rnd(&f.st) % 4) & ~(round & 1)),
			};
			/* the memo kept across walks: mostly hits */
			bad += walks_differ(f.hs, f.ps, f.memo, &r, 24, 1, false,
					    ref, &nr, &rr);
			deep += nr >= 4;
			/* steps taken from a row with bp_off -16 */
			for (i = 0; i + 1 < (u32)nr; i++) {
				const struct spulse_ut_row *w =
					spulse_ut_lookup(f.ps, ref[i]);

				std_steps += w && w->kind != SPULSE_UT_NONE &&
					     w->bp_off == -16;
				runs += is_run_row(w) && i + 2 < (u32)nr &&
					is_run_row(spulse_ut_lookup(f.ps,
								    ref[i + 1]));
			}
		}
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	/* the cases were there: deep walks, many one-read frames */
	KUNIT_EXPECT_GT(test, deep, 100U);
	KUNIT_EXPECT_GT(test, std_steps, 500U);
	/* frame-pointer bodies one after the other: the walk's inner run */
	KUNIT_EXPECT_GT(test, runs, 200U);
	kunit_info(test,
		   "3000 walks: %u of 4+ frames, %u one-read frames, %u run steps\n",
		   deep, std_steps, runs);
}

/*
 * The run's edges, one by one: a chain of frame-pointer bodies (row 0x200)
 * whose last link is each way a link can fail (a BP misaligned, below the
 * SP, past user memory, at the last readable-looking word, wrapping; a
 * return address of 0, 1, past user memory, at its end; an unreadable
 * frame; the depth limit at each depth) gives the plain step's frames,
 * counts, ending and cut, with and without a memo, cold and warm. The
 * run checks a BP once for all of the table step's checks and a return
 * address once for both 0 and not a user address: each case here is one
 * that the single check must send to the right cut.
 */
static void run_edges_cut_as_the_plain_step(struct kunit *test)
{
	const struct spulse_ut_pset *cps = std_pset(test);
	struct spulse_ut_pset *ps;
	struct hole_stack *hs = kunit_kzalloc(test, sizeof(*hs), GFP_KERNEL);
	struct spulse_ut_memo *memo = kunit_kzalloc(test, sizeof(*memo),
						    GFP_KERNEL);
	static const u64 bps[] = {
		4, 8, 16, 0x1000, TASK_SZ - 32, TASK_SZ - 24, TASK_SZ - 16,
		TASK_SZ - 8, TASK_SZ, TASK_SZ + 8, KADDR, ~0ULL - 15,
		~0ULL - 7, ~0ULL, 0,
	};
	static const u64 ras[] = {
		0, 1, 2, TEXT, RA(TEXT + 0x210), RA(TEXT + 0x610),
		RA(TEXT + 0x110), TASK_SZ - 1, TASK_SZ, TASK_SZ + 1, KADDR,
		~0ULL,
	};
	struct spulse_uw_res rr, rm;
	u64 ref[12], got[12];
	u32 i, k, max, bad = 0, cases = 0;
	struct spulse_uregs r;
	int nr;

	KUNIT_ASSERT_NOT_NULL(test, hs);
	KUNIT_ASSERT_NOT_NULL(test, memo);
	ps = kunit_kzalloc(test, struct_size(ps, map, 1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	memcpy(ps, cps, struct_size(ps, map, 1));
	ps->serial = spulse_ut_serial_next();
	/* frames at words 8, 12, 16, 20: [bp] = next bp, [bp + 8] = ra */
	for (k = 0; k < ARRAY_SIZE(bps) + ARRAY_SIZE(ras) + 2; k++) {
		memset(hs, 0, sizeof(*hs));
		for (i = 0; i < 3; i++) {
			hs->fs.w[8 + 4 * i] = at(12 + 4 * i);
			hs->fs.w[9 + 4 * i] = RA(TEXT + 0x210 + 8 * i);
		}
		/* the last link: word 20 */
		hs->fs.w[20] = at(24);
		hs->fs.w[21] = RA(TEXT + 0x230);
		hs->fs.w[24] = 0;
		hs->fs.w[25] = 0;
		if (k < ARRAY_SIZE(bps)) {
			hs->fs.w[20] = bps[k] ? bps[k] : at(16);  /* below */
		} else if (k < ARRAY_SIZE(bps) + ARRAY_SIZE(ras)) {
			hs->fs.w[21] = ras[k - ARRAY_SIZE(bps)];
		} else if (k == ARRAY_SIZE(bps) + ARRAY_SIZE(ras)) {
			hs->fs.w[20] = at(20) + 4;	/* misaligned */
		} else {
			hs->hole[21] = true;		/* unreadable */
		}
		for (max = 1; max <= 8; max++) {
			r = (struct spulse_uregs){
				.ip = TEXT + 0x208, .sp = at(4), .bp = at(8),
			};
			bad += walks_differ(hs, ps, memo, &r, max, 2, false,
					    ref, &nr, &rr);
			cases++;
		}
	}
	/* the first frame's own BP (from registers) wrapping, SP 0 and up */
	for (k = 0; k < ARRAY_SIZE(bps); k++) {
		for (i = 0; i < 24; i += 4) {
			r = (struct spulse_uregs){
				.ip = TEXT + 0x208, .sp = i, .bp = bps[k],
			};
			bad += walks_differ(hs, ps, memo, &r, 8, 1, false, ref,
					    &nr, &rr);
			cases++;
		}
	}
	/* spot checks of the causes themselves */
	r = (struct spulse_uregs){ .ip = TEXT + 0x208, .sp = 0, .bp = ~0ULL - 7 };
	KUNIT_EXPECT_EQ(test, spulse_unwind_walk_memo(&r, TASK_SZ, hole_read,
						      hs, ps, memo, true, got,
						      8, &rm), 1);
	KUNIT_EXPECT_EQ(test, rm.cut, SPULSE_UW_CUT_UNREADABLE);
	r.bp = ~0ULL - 15;
	spulse_unwind_walk_memo(&r, TASK_SZ, hole_read, hs, ps, memo, true, got,
				8, &rm);
	KUNIT_EXPECT_EQ(test, rm.cut, SPULSE_UW_CUT_BAD_FRAME);
	KUNIT_EXPECT_EQ(test, bad, 0U);
	kunit_info(test, "%u walks compared\n", cases);
}

/*
 * The run's loop steps a CFA_SP or PLT row only from an aligned SP and
 * only when cfa_off is a positive multiple of 8 and the caller's BP slot
 * is at or above the SP; other such rows it hands to the walk's own step.
 * Two frame-pointer bodies (the run's first step, then one in its loop)
 * return into each kind of row the loop must refuse, and into one it
 * takes: the walk, without a memo, cold and warm, equals the plain step,
 * and each row ends as the plain step says (a PLT row whose slot is below
 * the SP in the stub's first half and not in its second: cut, then
 * stepped).
 */
static void run_hands_refused_rows_to_the_walk(struct kunit *test)
{
	static const struct spulse_ut_row rows[] = {
		ROW(0x000, CFA_BP, 16, -16),	/* frame-pointer body */
		ROW(0x100, CFA_SP, 0, 0),	/* CFA == SP */
		ROW(0x200, CFA_SP, -64, 0),	/* CFA below SP */
		ROW(0x300, CFA_SP, 12, 0),	/* misaligned CFA */
		ROW(0x400, CFA_SP, 16, -24),	/* BP slot below SP */
		ROW(0x500, PLT, 8, -16),	/* slot below SP, 1st half */
		ROW(0x600, CFA_SP, 0x7ffffff8, 0),	/* past user memory */
		ROW(0x700, CFA_SP, 24, -16),	/* taken by the loop */
		ROW(0x800, END, 0, 0),
	};
	static const struct {
		u64 pc;		/* the row the second body returns into */
		u8 cut;		/* the plain step's cut (NONE: complete) */
	} cases[] = {
		{ TEXT + 0x108, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x208, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x308, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x408, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x503, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x50c, SPULSE_UW_CUT_NONE },
		{ TEXT + 0x608, SPULSE_UW_CUT_BAD_FRAME },
		{ TEXT + 0x708, SPULSE_UW_CUT_NONE },
	};
	struct spulse_ut_pset *ps = one_map(test, new_tab(test, TEXT, TEXT_END,
							  rows,
							  ARRAY_SIZE(rows)));
	struct hole_stack *hs = kunit_kzalloc(test, sizeof(*hs), GFP_KERNEL);
	struct spulse_ut_memo *memo = kunit_kzalloc(test, sizeof(*memo),
						    GFP_KERNEL);
	struct spulse_uw_res rr;
	struct spulse_uregs r;
	u32 i, bad = 0;
	u64 ref[12];
	int nr;

	KUNIT_ASSERT_NOT_NULL(test, hs);
	KUNIT_ASSERT_NOT_NULL(test, memo);
	ps->serial = spulse_ut_serial_next();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(hs, 0, sizeof(*hs));
		/* bodies at words 8 and 12; the row's frame SP at word 14 */
		hs->fs.w[8] = at(12);
		hs->fs.w[9] = RA(TEXT + 0x10);
		hs->fs.w[12] = at(40);
		hs->fs.w[13] = RA(cases[i].pc);
		/* the return addresses the stepping rows read: the END */
		hs->fs.w[15] = RA(TEXT + 0x800);
		hs->fs.w[16] = RA(TEXT + 0x800);
		r = (struct spulse_uregs){
			.ip = TEXT + 0x20, .sp = at(4), .bp = at(8),
		};
		bad += walks_differ(hs, ps, memo, &r, 12, 2, true, ref, &nr,
				    &rr);
		KUNIT_EXPECT_EQ_MSG(test, rr.cut, cases[i].cut, "pc %llx",
				    cases[i].pc);
		KUNIT_EXPECT_EQ_MSG(test, rr.complete, !cases[i].cut,
				    "pc %llx", cases[i].pc);
		/* the leaf, both bodies' return addresses, then the row's */
		KUNIT_EXPECT_EQ_MSG(test, nr, cases[i].cut ? 3 : 4, "pc %llx",
				    cases[i].pc);
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/* a row the walk's run steps by its cfa_off and bp_off (not a FP body) */
static bool is_table_run_row(const struct spulse_ut_row *w)
{
	return w && (w->kind == SPULSE_UT_CFA_SP || w->kind == SPULSE_UT_PLT ||
		     (w->kind == SPULSE_UT_CFA_BP && !is_run_row(w)));
}

/*
 * The table run (CFA_SP, CFA_BP and PLT rows stepped in the run's loop
 * from the memo's copy of cfa_off and bp_off) against the plain step:
 * random tables of such rows with every bp_off shape (0, -16: one 16-byte
 * read, other slots, a slot above the CFA that no valid table has), odd
 * CFA offsets, PLT rows at both halves of a stub, a few frame-pointer
 * bodies, NONE, END and UNKNOWN rows; random stacks with holes; SPs near
 * 0 (CFA - 16 and CFA + bp_off wrapping) and every depth limit. No memo,
 * a cold memo (cleared before the walk) and a warm one (the same walk
 * twice) all give the plain step's frames, counts, ending and cut; every
 * cut reason and a clean end occur.
 */
static void table_run_equals_the_plain_step(struct kunit *test)
{
	/* words: 15 in 24 return addresses, 6 links, 1 zero, 2 else */
	static const struct stack_mix mix = { 24, 15, 21, 22, 8, 0, 96 };
	static const s16 bo[] = { 0, 0, -16, -16, -8, -24, -48, -56, 8 };
	const u32 nrows = 64, span = 0x40 * 64;
	u32 iter, i, bad = 0, runs = 0, round, max, ends = 0;
	u32 cuts[SPULSE_UW_CUT_NR] = { 0 };
	struct spulse_ut_row *rows;
	struct spulse_uw_res rr;
	struct rand_fix f;
	struct spulse_uregs r;
	u64 ref[24];
	int nr;

	rand_fix_init(test, &f, nrows);
	rows = f.rows;
	for (round = 0; round < 16; round++) {
		for (i = 0; i < nrows; i++) {
			u32 c = rnd(&f.st) % 32;

			rows[i] = (struct spulse_ut_row){
				.start = 0x40 * i,
				.bp_off = bo[rnd(&f.st) % ARRAY_SIZE(bo)],
				.cfa_off = 8 * (1 + rnd(&f.st) % 8),
			};
			if (c < 14) {
				rows[i].kind = SPULSE_UT_CFA_SP;
			} else if (c < 20) {
				rows[i].kind = SPULSE_UT_CFA_BP;
				rows[i].cfa_off -= 16;
			} else if (c < 25) {
				rows[i].kind = SPULSE_UT_PLT;
				rows[i].cfa_off = 8 * (1 + rnd(&f.st) % 2);
			} else if (c < 28) {
				rows[i].kind = SPULSE_UT_CFA_BP;
				rows[i].cfa_off = 16;
				rows[i].bp_off = -16;
			} else {
				rows[i].kind = c == 28 ? SPULSE_UT_NONE :
					       c == 29 ? SPULSE_UT_END :
					       SPULSE_UT_UNKNOWN;
				rows[i].cfa_off = 0;
				rows[i].bp_off = 0;
			}
			if (rnd(&f.st) % 16 == 0)
				rows[i].cfa_off += 4;	/* misaligned CFA */
		}
		f.ps->serial = spulse_ut_serial_next();
		for (iter = 0; iter < 120; iter++) {
			rand_stack(&f, span, &mix);
			i = rnd(&f.st) % 64;
			r = (struct spulse_uregs){
				.ip = TEXT + rnd(&f.st) % span,
				.sp = iter % 8 ? at(i) : 8 * (rnd(&f.st) % 4),
				.bp = at((i + rnd(&f.st) % 6)),
			};
			max = iter % 3 ? 24 : 1 + rnd(&f.st) % 8;
			/* a cold memo, then the same walk warm */
			bad += walks_differ(f.hs, f.ps, f.memo, &r, max, 2, true,
					    ref, &nr, &rr);
			if (rr.truncated)
				cuts[rr.cut < SPULSE_UW_CUT_NR ? rr.cut : 0]++;
			else
				ends++;
			for (i = 0; i + 1 < (u32)nr; i++)
				runs += is_table_run_row(spulse_ut_lookup(f.ps,
									  ref[i]));
		}
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_GT(test, runs, 500U);
	KUNIT_EXPECT_GT(test, ends, 20U);
	KUNIT_EXPECT_GT(test, cuts[SPULSE_UW_CUT_BAD_FRAME], 20U);
	KUNIT_EXPECT_GT(test, cuts[SPULSE_UW_CUT_UNREADABLE], 20U);
	KUNIT_EXPECT_GT(test, cuts[SPULSE_UW_CUT_DEPTH], 10U);
	KUNIT_EXPECT_GT(test, cuts[SPULSE_UW_CUT_UNKNOWN], 5U);
	kunit_info(test,
		   "1920 walks: %u table-run steps, %u ends, cuts bad %u unreadable %u depth %u unknown %u\n",
		   runs, ends, cuts[SPULSE_UW_CUT_BAD_FRAME],
		   cuts[SPULSE_UW_CUT_UNREADABLE], cuts[SPULSE_UW_CUT_DEPTH],
		   cuts[SPULSE_UW_CUT_UNKNOWN]);
}

/*
 * The memo's tag has 255 values: after 255 set changes it comes back to
 * where it started, and the entries stored under it then must be gone
 * (cleared on the wrap), not answer for the set of 255 changes later.
 * Two PCs in one set of the memo (hashes that meet) both stay.
 */
static void memo_tag_wrap_forgets(struct kunit *test)
{
	static const struct spulse_ut_row end_rows[] = {
		ROW(0x000, END, 0, 0),
	};
	const struct spulse_ut_pset *a = std_pset(test);
	const struct spulse_ut_tab *tb = new_tab(test, TEXT, TEXT_END, end_rows,
						 1);
	struct spulse_ut_memo *memo = kunit_kzalloc(test, sizeof(*memo),
						    GFP_KERNEL);
	struct spulse_ut_pset *ps;
	const struct spulse_ut_row *row;
	u64 tag0, pc2 = 0;
	u32 i, h;
	u8 miss;

	KUNIT_ASSERT_NOT_NULL(test, memo);
	ps = kunit_kzalloc(test, struct_size(ps, map, 1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	memcpy(ps, a, struct_size(ps, map, 1));
	ps->serial = spulse_ut_serial_next();
	spulse_ut_memo_begin(memo, ps);
	tag0 = memo->tag;
	row = spulse_ut_memo_lookup(memo, ps, TEXT + 0x210, &miss);
	KUNIT_EXPECT_EQ(test, row ? row->kind : 0, SPULSE_UT_CFA_BP);
	/* the same memory, other rows: only a new serial says so */
	ps->map[0].tab = tb;
	for (i = 0; i < 255; i++) {
		ps->serial = spulse_ut_serial_next();
		spulse_ut_memo_begin(memo, ps);
	}
	KUNIT_EXPECT_EQ(test, memo->tag, tag0);
	row = spulse_ut_memo_lookup(memo, ps, TEXT + 0x210, &miss);
	KUNIT_EXPECT_EQ(test, row ? row->kind : 0, SPULSE_UT_END);

	/* a PC whose set is TEXT + 0x210's: both answer, again and again */
	ps->map[0].tab = a->map[0].tab;
	ps->serial = spulse_ut_serial_next();
	spulse_ut_memo_begin(memo, ps);
	h = spulse_ut_memo_set(TEXT + 0x210);
	for (i = 1; i < 1U << 20 && !pc2; i++)
		if (spulse_ut_memo_set(TEXT + 0x210 + i) == h)
			pc2 = TEXT + 0x210 + i;
	KUNIT_ASSERT_NE(test, pc2, 0ULL);
	for (i = 0; i < 3; i++) {
		row = spulse_ut_memo_lookup(memo, ps, TEXT + 0x210, &miss);
		KUNIT_EXPECT_PTR_EQ(test, row, spulse_ut_lookup(ps,
								TEXT + 0x210));
		row = spulse_ut_memo_lookup(memo, ps, pc2, &miss);
		KUNIT_EXPECT_PTR_EQ(test, row, spulse_ut_lookup(ps, pc2));
	}
	KUNIT_EXPECT_LT(test, h, SPULSE_UT_MEMO_SETS);
	KUNIT_EXPECT_EQ(test, memo->key[h], pc2 + memo->tag);
	KUNIT_EXPECT_EQ(test, memo->key[h + SPULSE_UT_MEMO_SETS],
			TEXT + 0x210 + memo->tag);
	/* PCs past 2^56 are not remembered, and still answered */
	KUNIT_EXPECT_NULL(test, spulse_ut_memo_lookup(memo, ps, 1ULL << 60,
						      &miss));
	KUNIT_EXPECT_EQ(test, miss, SPULSE_UW_CUT_NO_MAP);
}

/* ---- why a walk was cut (res.cut, the ustack_cut_* causes) ---- */

/*
 * An FP-less leaf (BP = 1: not a frame pointer) that no row covers: the
 * cause is why no row covers it (no map set, no mapping, a NONE row), in
 * auto (FP step tried and failed) and tables mode (no FP step) alike.
 */
static void cut_no_rule_says_why_there_is_none(struct kunit *test)
{
	const struct spulse_ut_pset *ps = std_pset(test);
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];
	int fb;

	for (fb = 0; fb <= 1; fb++) {
		KUNIT_EXPECT_EQ(test, uwalk(fs, NULL, fb, 0x1000, at(0), 1,
					    out, 8, &res), 1);
		KUNIT_EXPECT_TRUE(test, res.truncated);
		KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_SET);
		KUNIT_EXPECT_EQ(test, res.cut_pc, 0x1000ULL);
		KUNIT_EXPECT_EQ(test, uwalk(fs, ps, fb, 0x1000, at(0), 1,
					    out, 8, &res), 1);
		KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_MAP);
		KUNIT_EXPECT_EQ(test, uwalk(fs, ps, fb, PC_NONE, at(0), 1,
					    out, 8, &res), 1);
		KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_ROW);
		KUNIT_EXPECT_EQ(test, res.cut_pc, PC_NONE);
	}
	/* a mapping the set says has no table (tab NULL): no lookup */
	{
		struct spulse_ut_pset *nt = kunit_kzalloc(test,
							  struct_size(nt, map, 1),
							  GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, nt);
		nt->n = 1;
		nt->map[0] = (struct spulse_ut_ment){ TEXT, TEXT_END, 0, NULL };
		KUNIT_EXPECT_PTR_EQ(test, spulse_ut_lookup(nt, PC_LEAF),
				    (const struct spulse_ut_row *)NULL);
		KUNIT_EXPECT_EQ(test, uwalk(fs, nt, true, PC_LEAF, at(0), 1,
					    out, 8, &res), 1);
		KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_TAB);
		/* its frame-pointer step still works */
		fs->w[4] = 0;
		fs->w[5] = 0x1001;
		KUNIT_EXPECT_EQ(test, uwalk(fs, nt, true, PC_LEAF, at(0), at(4),
					    out, 8, &res), 2);
		KUNIT_EXPECT_FALSE(test, res.truncated);
		KUNIT_EXPECT_EQ(test, res.fp_steps, 1U);
		fs->w[5] = 0;
	}
	/* an FP step whose frame is unreadable: still the missing rule */
	KUNIT_EXPECT_EQ(test, uwalk(fs, NULL, true, 0x1000, at(0),
				    at(FAKE_WORDS), out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_SET);
	/* a caller in a NONE range, reached by a table step */
	fs->w[0] = RA(PC_NONE);
	KUNIT_EXPECT_EQ(test, uwalk(fs, ps, true, PC_LEAF, at(0), 1, out, 8,
				    &res), 2);
	KUNIT_EXPECT_EQ(test, res.table_steps, 1U);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_ROW);
	KUNIT_EXPECT_EQ(test, res.cut_pc, PC_NONE);
	/* the same with a frame pointer there: the FP step leads on, no cut */
	fs->w[4] = 0;
	fs->w[5] = RA(PC_END);
	KUNIT_EXPECT_EQ(test, uwalk(fs, ps, true, PC_LEAF, at(0), at(4), out,
				    8, &res), 3);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NONE);
	KUNIT_EXPECT_EQ(test, res.cut_pc, 0ULL);
}

static void cut_unknown_row(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	fs->w[0] = RA(PC_UNKNOWN);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 8, &res), 2);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_UNKNOWN);
	KUNIT_EXPECT_EQ(test, res.cut_pc, PC_UNKNOWN);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), false, PC_UNKNOWN,
				    at(0), 0, out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_UNKNOWN);
}

static void cut_depth_limit_table_and_fp_steps(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];
	int i;

	for (i = 0; i < 20; i++)
		fs->w[i] = RA(PC_LEAF);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 3, &res), 3);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_DEPTH);
	/* a frame-pointer chain without tables, cut by the limit */
	memset(fs->w, 0, sizeof(fs->w));
	for (i = 0; i < 10; i++) {
		fs->w[10 * i + 4] = at(10 * i + 14);
		fs->w[10 * i + 5] = 0x401000 + i;
	}
	KUNIT_EXPECT_EQ(test, uwalk(fs, NULL, true, 0x401000, at(0), at(4),
				    out, 3, &res), 3);
	KUNIT_EXPECT_EQ(test, res.fp_steps, 2U);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_DEPTH);
}

static void cut_unreadable_stack(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8];

	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF,
				    at(FAKE_WORDS), 0, out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_UNREADABLE);
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_DRAP, at(0),
				    TASK_SZ - 8, out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_UNREADABLE);
	/* a signal frame whose ucontext is not readable */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_SIG,
				    at(FAKE_WORDS - 4), 0, out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_UNREADABLE);
}

static void cut_bad_frames(struct kunit *test)
{
	const struct spulse_ut_pset *ps = lie_pset(test);
	struct fake_stack *fs = new_stack(test);
	struct spulse_uw_res res;
	u64 out[8], pc;

	for (pc = TEXT; pc < TEXT + 0x600; pc += 0x100) {
		uwalk(fs, ps, true, pc + 8, at(100), at(10), out, 8, &res);
		KUNIT_EXPECT_EQ_MSG(test, res.cut, SPULSE_UW_CUT_BAD_FRAME,
				    "pc %llx", pc);
	}
	/* a kernel return address */
	fs->w[0] = KADDR;
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, PC_LEAF, at(0),
				    0, out, 8, &res), 1);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_BAD_FRAME);
	/* the IP itself not a user address: no frames */
	KUNIT_EXPECT_EQ(test, uwalk(fs, std_pset(test), true, KADDR, at(0), 0,
				    out, 8, &res), 0);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_BAD_FRAME);
	KUNIT_EXPECT_EQ(test, res.cut_pc, 0ULL);
}

static struct kunit_case spulse_unwind_cases[] = {
	KUNIT_CASE(lookup_first_last_gaps_and_out_of_range),
	KUNIT_CASE(lookup_one_row_table_and_leading_gap),
	KUNIT_CASE(lookup_large_table_finds_every_row),
	KUNIT_CASE(lookup_block_index_matches_plain_search),
	KUNIT_CASE(lookup_block_index_one_row_over_4gib),
	KUNIT_CASE(lookup_maps_edges_gaps_and_bias),
	KUNIT_CASE(step_cfa_sp_then_end_is_complete),
	KUNIT_CASE(step_saved_bp_feeds_a_bp_frame),
	KUNIT_CASE(step_unchanged_bp_is_kept),
	KUNIT_CASE(step_plt_expression_depends_on_pc),
	KUNIT_CASE(step_deref_bp_realigned_frame),
	KUNIT_CASE(step_signal_frame_gives_exact_ip),
	KUNIT_CASE(step_signal_frame_lies_are_truncated),
	KUNIT_CASE(step_unknown_truncates),
	KUNIT_CASE(step_none_row_takes_the_fp_step),
	KUNIT_CASE(step_unmapped_pc_takes_the_fp_step),
	KUNIT_CASE(step_without_tables_equals_the_fp_walker),
	KUNIT_CASE(step_zero_return_address_ends_cleanly),
	KUNIT_CASE(step_depth_limit_truncates),
	KUNIT_CASE(step_kernel_ip_gives_no_frames),
	KUNIT_CASE(lie_cfa_at_or_below_sp_truncates),
	KUNIT_CASE(lie_kernel_return_address_not_followed),
	KUNIT_CASE(lie_loops_are_bounded),
	KUNIT_CASE(lie_unreadable_memory_truncates),
	KUNIT_CASE(lie_garbage_tables_never_escape),
	KUNIT_CASE(fast_frame_and_memo_equal_the_plain_step),
	KUNIT_CASE(run_edges_cut_as_the_plain_step),
	KUNIT_CASE(run_hands_refused_rows_to_the_walk),
	KUNIT_CASE(table_run_equals_the_plain_step),
	KUNIT_CASE(memo_tag_wrap_forgets),
	KUNIT_CASE(cut_no_rule_says_why_there_is_none),
	KUNIT_CASE(cut_unknown_row),
	KUNIT_CASE(cut_depth_limit_table_and_fp_steps),
	KUNIT_CASE(cut_unreadable_stack),
	KUNIT_CASE(cut_bad_frames),
	{}
};

static struct kunit_suite spulse_unwind_suite = {
	.name = "spulse_unwind",
	.test_cases = spulse_unwind_cases,
};

/* ==== messages, registry, publication ==== */

#define HDR	sizeof(struct spulse_ut_msg)

static struct spulse_ut_reg *new_reg(struct kunit *test, u64 limit)
{
	struct spulse_ut_reg *reg = kunit_kzalloc(test, sizeof(*reg),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, reg);
	spulse_ut_reg_init(reg, limit);
	return reg;
}

static void *msg_new(u16 op, size_t len)
{
	struct spulse_ut_msg *h = kvzalloc(len, GFP_KERNEL);

	if (h) {
		h->magic = SPULSE_UT_MAGIC;
		h->version = SPULSE_UT_VERSION;
		h->op = op;
		h->len = len;
	}
	return h;
}

/* ADD of @n standard-ish rows over [0x1000, 0x1000 + 16 * n). */
static void *msg_add(u32 id, u32 n, size_t *len)
{
	struct spulse_ut_add *a;
	struct spulse_ut_row *r;
	void *m;
	u32 i;

	*len = HDR + sizeof(*a) + n * sizeof(*r);
	m = msg_new(SPULSE_UT_OP_ADD, *len);
	if (!m)
		return NULL;
	a = m + HDR;
	r = m + HDR + sizeof(*a);
	a->table_id = id;
	a->n_rows = n;
	a->lo = 0x1000;
	a->hi = 0x1000 + 16ULL * n;
	a->build_id_len = 2;
	a->build_id[0] = 0xab;
	a->build_id[1] = 0xcd;
	for (i = 0; i < n; i++) {
		r[i].start = 16 * i;
		r[i].kind = i + 1 == n ? SPULSE_UT_END : SPULSE_UT_CFA_SP;
		r[i].cfa_off = r[i].kind == SPULSE_UT_END ? 0 : 16;
		r[i].bp_off = r[i].kind == SPULSE_UT_END ? 0 : -16;
	}
	return m;
}

static void *msg_del(u32 id, size_t *len)
{
	struct spulse_ut_del *d;
	void *m;

	*len = HDR + sizeof(*d);
	m = msg_new(SPULSE_UT_OP_DEL, *len);
	if (m) {
		d = m + HDR;
		d->table_id = id;
	}
	return m;
}

/* MAP of @pid: @n mappings of 0x10000 bytes each, table ids @ids. */
static void *msg_map(u32 pid, u32 n, const u32 *ids, size_t *len)
{
	struct spulse_ut_mapset *ms;
	struct spulse_ut_map *mp;
	void *m;
	u32 i;

	*len = HDR + sizeof(*ms) + n * sizeof(*mp);
	m = msg_new(SPULSE_UT_OP_MAP, *len);
	if (!m)
		return NULL;
	ms = m + HDR;
	mp = m + HDR + sizeof(*ms);
	ms->pid = pid;
	ms->n = n;
	for (i = 0; i < n; i++) {
		mp[i].start = 0x400000 + 0x10000ULL * i;
		mp[i].end = mp[i].start + 0x10000;
		mp[i].bias = mp[i].start - 0x1000;
		mp[i].table_id = ids ? ids[i] : 1;
	}
	return m;
}

static ssize_t apply(struct spulse_ut_reg *reg, void *m, size_t len)
{
	return m ? spulse_ut_apply(reg, m, len) : -ENOMEM;
}

static ssize_t add(struct spulse_ut_reg *reg, u32 id, u32 n)
{
	size_t len;
	void *m = msg_add(id, n, &len);

	return apply(reg, m, len);
}

static ssize_t map1(struct spulse_ut_reg *reg, u32 pid, u32 id)
{
	size_t len;
	void *m = msg_map(pid, 1, &id, &len);

	return apply(reg, m, len);
}

static void msg_good_add_map_del_round_trip(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);
	const struct spulse_ut_pset *ps;
	size_t len;
	void *m;

	m = msg_add(7, 4, &len);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, spulse_ut_apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_EQ(test, reg->ntables, 1U);
	KUNIT_EXPECT_EQ(test, reg->rows, 4ULL);
	KUNIT_EXPECT_GT(test, reg->bytes, (u64)len);
	KUNIT_EXPECT_EQ(test, map1(reg, 42, 7), (ssize_t)(HDR + 16 + 32));
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 42);
	KUNIT_EXPECT_NOT_NULL(test, ps);
	if (ps) {
		KUNIT_EXPECT_EQ(test, ps->n, 1U);
		/* user 0x400010 = table 0x1010 = row 1 */
		KUNIT_EXPECT_EQ(test, spulse_ut_lookup(ps, 0x400010)->start,
				16U);
	}
	KUNIT_EXPECT_NULL(test, spulse_ut_pset_find(reg, 43));
	rcu_read_unlock();
	m = msg_del(7, &len);
	KUNIT_EXPECT_EQ(test, apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_EQ(test, reg->ntables, 0U);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 0U);	/* its only table went */
	KUNIT_EXPECT_EQ(test, reg->bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, reg->refused_invalid, 0ULL);
	spulse_ut_reg_free(reg);
}

/* Apply a mutated message; expect @want and that nothing changed. */
static void expect_refused(struct kunit *test, struct spulse_ut_reg *reg,
			   void *m, size_t len, ssize_t want, const char *what)
{
	u64 bytes = reg->bytes, inval = reg->refused_invalid;
	u32 nt = reg->ntables, np = reg->nprocs;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ_MSG(test, spulse_ut_apply(reg, m, len), want, "%s",
			    what);
	KUNIT_EXPECT_EQ_MSG(test, reg->bytes, bytes, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, reg->ntables, nt, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, reg->nprocs, np, "%s", what);
	if (want == -EINVAL || want == -E2BIG)
		KUNIT_EXPECT_EQ_MSG(test, reg->refused_invalid, inval + 1,
				    "%s", what);
}

#define ADD_CASE(what, mutate) do {					\
	size_t len;							\
	void *m = msg_add(9, 4, &len);					\
	struct spulse_ut_msg *h = m;					\
	struct spulse_ut_add *a = m + HDR;				\
	struct spulse_ut_row *r = m + HDR + sizeof(*a);			\
									\
	KUNIT_ASSERT_NOT_NULL(test, m);					\
	(void)h; (void)a; (void)r;					\
	mutate;								\
	expect_refused(test, reg, m, len, -EINVAL, what);		\
} while (0)

static void msg_header_rules(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);

	ADD_CASE("magic", h->magic ^= 1);
	ADD_CASE("version", h->version = 2);
	ADD_CASE("op 0", h->op = 0);
	ADD_CASE("op 4", h->op = 4);
	ADD_CASE("len above write", h->len = len + 1);
	ADD_CASE("len below write", h->len = len - 12);
	ADD_CASE("header rsvd", h->rsvd = 1);
	ADD_CASE("short write", len = HDR - 1);
	ADD_CASE("header only", len = HDR; h->len = HDR);
	KUNIT_EXPECT_EQ(test, reg->refused_invalid, 9ULL);
	spulse_ut_reg_free(reg);
}

static void msg_add_rules(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);

	ADD_CASE("table id 0", a->table_id = 0);
	ADD_CASE("n_rows 0", a->n_rows = 0);
	ADD_CASE("n_rows above max", a->n_rows = SPULSE_UT_ROWS_MAX + 1);
	ADD_CASE("n_rows vs len", a->n_rows = 3);
	ADD_CASE("cut row", len -= 4; h->len = len);
	ADD_CASE("lo == hi", a->hi = a->lo);
	ADD_CASE("lo > hi", a->lo = a->hi + 1);
	ADD_CASE("range 2^32", a->lo = 0; a->hi = 1ULL << 32);
	ADD_CASE("build-id 21", a->build_id_len = SPULSE_UT_BUILD_ID_MAX + 1);
	ADD_CASE("add rsvd", a->rsvd[2] = 1);
	ADD_CASE("kind 8", r[1].kind = SPULSE_UT_KIND_MAX + 1);
	ADD_CASE("flags", r[2].flags = 1);
	ADD_CASE("bp_off positive", r[0].bp_off = 8);
	ADD_CASE("bp_off unaligned", r[0].bp_off = -12);
	ADD_CASE("bp_off below -2048", r[0].bp_off = -2056);
	ADD_CASE("bp_off on DEREF_BP", r[1].kind = SPULSE_UT_CFA_DEREF_BP);
	ADD_CASE("cfa_off on END", r[3].cfa_off = 8);
	ADD_CASE("bp_off on UNKNOWN", r[1].kind = SPULSE_UT_UNKNOWN;
		 r[1].cfa_off = 0);
	ADD_CASE("cfa_off on NONE", r[1].kind = SPULSE_UT_NONE; r[1].bp_off = 0);
	ADD_CASE("cfa_off on SIGNAL", r[1].kind = SPULSE_UT_SIGNAL;
		 r[1].bp_off = 0);
	ADD_CASE("first start not 0", r[0].start = 1);
	ADD_CASE("starts equal", r[2].start = r[1].start);
	ADD_CASE("starts decreasing", r[3].start = r[1].start - 1);
	ADD_CASE("start past range", r[3].start = a->hi - a->lo);
	KUNIT_EXPECT_EQ(test, reg->ntables, 0U);
	/* the edges that are allowed */
	KUNIT_EXPECT_EQ(test, add(reg, 1, 1), (ssize_t)(HDR + sizeof(struct spulse_ut_add) + 12));
	spulse_ut_reg_free(reg);
}

/* spulse_ut_check_rows()'s per-row rules as first written, branch by branch */
static int ref_check_rows(const struct spulse_ut_add *a,
			  const struct spulse_ut_row *rows)
{
	u64 span = a->hi - a->lo;
	u32 i;

	for (i = 0; i < a->n_rows; i++) {
		const struct spulse_ut_row *r = &rows[i];

		if (r->kind > SPULSE_UT_KIND_MAX || r->flags)
			return -EINVAL;
		if (r->bp_off > 0 || r->bp_off < -2048 || (r->bp_off & 7) ||
		    (r->kind == SPULSE_UT_CFA_DEREF_BP && r->bp_off))
			return -EINVAL;
		if (r->start >= span || (i && r->start <= rows[i - 1].start) ||
		    (!i && r->start))
			return -EINVAL;
		if ((r->kind == SPULSE_UT_NONE || r->kind >= SPULSE_UT_SIGNAL) &&
		    (r->cfa_off || r->bp_off))
			return -EINVAL;
	}
	return 0;
}

/*
 * The branch-free row check refuses exactly what the rules refuse: random
 * small tables of near-valid rows (every field drawn around its edges),
 * against the rules written out one by one.
 */
static void check_rows_matches_rules(struct kunit *test)
{
	static const s16 bps[] = { 0, -8, -16, -2048, -2056, -12, 8, -32768,
				   32767, -1 };
	static const s32 cfas[] = { 0, 8, 16, -8, 0x7fffffff };
	struct spulse_ut_add a = { .table_id = 1, .lo = 0x1000, .hi = 0x1100 };
	struct spulse_ut_row r[6];
	u32 i, j, bad = 0;
	struct rnd_state rnd;

	prandom_seed_state(&rnd, 5);
	for (i = 0; i < 20000; i++) {
		a.n_rows = 1 + prandom_u32_state(&rnd) % ARRAY_SIZE(r);
		for (j = 0; j < a.n_rows; j++) {
			u32 x = prandom_u32_state(&rnd);

			r[j].start = j * 16 + (x % 8 == 0 ? (x >> 8) % 40 : 0);
			if (x % 97 == 0)
				r[j].start = 0x100;
			r[j].kind = (x >> 4) % 9;
			r[j].flags = x % 53 == 0;
			r[j].bp_off = x % 3 ? 0 : bps[(x >> 12) % ARRAY_SIZE(bps)];
			r[j].cfa_off = x % 2 ? 0 : cfas[(x >> 16) % ARRAY_SIZE(cfas)];
		}
		KUNIT_ASSERT_EQ_MSG(test, spulse_ut_check_rows(&a, r),
				    ref_check_rows(&a, r), "table %u", i);
		bad += !!ref_check_rows(&a, r);
	}
	/* both verdicts were drawn often */
	KUNIT_EXPECT_GT(test, bad, 2000U);
	KUNIT_EXPECT_LT(test, bad, 18000U);
}

static void msg_add_edges_accepted(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);
	size_t len;
	void *m = msg_add(5, 4, &len);
	struct spulse_ut_add *a = m + HDR;
	struct spulse_ut_row *r = m + HDR + sizeof(*a);

	KUNIT_ASSERT_NOT_NULL(test, m);
	a->lo = 0;
	a->hi = U32_MAX;		/* hi - lo = 2^32 - 1 */
	a->build_id_len = SPULSE_UT_BUILD_ID_MAX;
	r[0].bp_off = -2048;
	r[1].kind = SPULSE_UT_KIND_MAX;
	r[1].cfa_off = 0;
	r[1].bp_off = 0;
	r[2].cfa_off = S32_MIN;		/* not restricted for CFA kinds */
	r[3].start = U32_MAX - 1;
	KUNIT_EXPECT_EQ(test, spulse_ut_apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_EQ(test, add(reg, 5, 4), (ssize_t)-EEXIST);
	KUNIT_EXPECT_EQ(test, reg->ntables, 1U);
	KUNIT_EXPECT_EQ(test, reg->refused_other, 1ULL);
	spulse_ut_reg_free(reg);
}

#define MAP_CASE(what, want, mutate) do {				\
	u32 ids[3] = { 1, 1, 1 };					\
	size_t len;							\
	void *m = msg_map(100, 3, ids, &len);				\
	struct spulse_ut_msg *h = m;					\
	struct spulse_ut_mapset *ms = m + HDR;				\
	struct spulse_ut_map *mp = m + HDR + sizeof(*ms);		\
									\
	KUNIT_ASSERT_NOT_NULL(test, m);					\
	(void)h; (void)ms; (void)mp;					\
	mutate;								\
	expect_refused(test, reg, m, len, want, what);			\
} while (0)

static void msg_map_rules(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);
	size_t len;
	void *m;

	KUNIT_ASSERT_EQ(test, add(reg, 1, 4), (ssize_t)(HDR + sizeof(struct spulse_ut_add) + 48));
	MAP_CASE("pid 0", -EINVAL, ms->pid = 0);
	MAP_CASE("pid above max", -EINVAL, ms->pid = PID_MAX_LIMIT + 1);
	MAP_CASE("mapset rsvd", -EINVAL, ms->rsvd = 1);
	MAP_CASE("n vs len", -EINVAL, ms->n = 2);
	MAP_CASE("n above max", -E2BIG, ms->n = SPULSE_UT_MAPS_MAX + 1);
	MAP_CASE("start == end", -EINVAL, mp[1].end = mp[1].start);
	MAP_CASE("end past user", -EINVAL, mp[2].end = TASK_SIZE_MAX + 1);
	MAP_CASE("unsorted", -EINVAL, swap(mp[0], mp[1]));
	MAP_CASE("overlapping", -EINVAL, mp[1].start = mp[0].end - 1);
	MAP_CASE("table id 0", -EINVAL, mp[0].table_id = 0);
	MAP_CASE("map rsvd", -EINVAL, mp[2].rsvd = 1);
	MAP_CASE("table not loaded", -ENOENT, mp[1].table_id = 2);
	MAP_CASE("cut entry", -EINVAL, len -= 8; h->len = len);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 0U);
	/* edges: touching mappings, end == TASK_SIZE_MAX */
	m = msg_map(100, 2, NULL, &len);
	KUNIT_ASSERT_NOT_NULL(test, m);
	((struct spulse_ut_map *)(m + HDR + 16))[1].end = TASK_SIZE_MAX;
	KUNIT_EXPECT_EQ(test, apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 1U);
	/* DEL rules */
	m = msg_del(3, &len);
	expect_refused(test, reg, m, len, -ENOENT, "del unknown");
	m = msg_del(1, &len);
	((struct spulse_ut_del *)(m + HDR))->rsvd = 1;
	expect_refused(test, reg, m, len, -EINVAL, "del rsvd");
	m = msg_del(0, &len);
	expect_refused(test, reg, m, len, -EINVAL, "del id 0");
	m = msg_del(1, &len);
	((struct spulse_ut_msg *)m)->len = len + 8;
	expect_refused(test, reg, m, len, -EINVAL, "del len");
	spulse_ut_reg_free(reg);
}

static void mem_bound_refuses_and_recovers(struct kunit *test)
{
	/*
	 * a 150-row table costs 64 + 1800 bytes, its 11-entry block index
	 * and the descriptor (~2 KB): two fit in 5000 bytes, three do not
	 */
	struct spulse_ut_reg *reg = new_reg(test, 5000);
	u32 ids[2] = { 1, 2 };
	size_t len;
	void *m;

	KUNIT_ASSERT_GT(test, add(reg, 1, 150), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 2, 150), 0L);
	KUNIT_EXPECT_EQ(test, add(reg, 3, 150), (ssize_t)-ENOSPC);
	KUNIT_EXPECT_EQ(test, reg->refused_nomem, 1ULL);
	KUNIT_EXPECT_EQ(test, reg->ntables, 2U);
	KUNIT_EXPECT_LE(test, reg->bytes, 5000ULL);
	/* a map set that does not fit either */
	m = msg_map(5, 2, ids, &len);
	KUNIT_ASSERT_GT(test, apply(reg, m, len), 0L);
	m = msg_map(6, SPULSE_UT_MAPS_MAX, NULL, &len);
	KUNIT_EXPECT_EQ(test, apply(reg, m, len), (ssize_t)-ENOSPC);
	KUNIT_EXPECT_EQ(test, reg->refused_nomem, 2ULL);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 1U);
	/* DEL gives the room back */
	m = msg_del(1, &len);
	KUNIT_EXPECT_EQ(test, apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_GT(test, add(reg, 3, 150), 0L);
	KUNIT_EXPECT_LE(test, reg->bytes, 5000ULL);
	spulse_ut_reg_free(reg);
	KUNIT_EXPECT_EQ(test, reg->bytes, 0ULL);
}

static void del_drops_the_table_from_every_map_set(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);
	const struct spulse_ut_pset *ps;
	u32 ids[3] = { 1, 2, 1 };
	size_t len;
	void *m;

	KUNIT_ASSERT_GT(test, add(reg, 1, 4), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 2, 4), 0L);
	m = msg_map(10, 3, ids, &len);
	KUNIT_ASSERT_GT(test, apply(reg, m, len), 0L);
	KUNIT_ASSERT_GT(test, map1(reg, 11, 1), 0L);
	KUNIT_ASSERT_GT(test, map1(reg, 12, 2), 0L);
	KUNIT_EXPECT_EQ(test, reg->nmaps, 5U);
	m = msg_del(1, &len);
	KUNIT_ASSERT_EQ(test, apply(reg, m, len), (ssize_t)len);
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 10);
	KUNIT_EXPECT_NOT_NULL(test, ps);
	if (ps) {
		KUNIT_EXPECT_EQ(test, ps->n, 1U);
		KUNIT_EXPECT_EQ(test, ps->map[0].start, 0x410000ULL);
	}
	KUNIT_EXPECT_NULL(test, spulse_ut_pset_find(reg, 11));
	KUNIT_EXPECT_NOT_NULL(test, spulse_ut_pset_find(reg, 12));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, reg->nprocs, 2U);
	KUNIT_EXPECT_EQ(test, reg->nmaps, 2U);
	/* MAP with n = 0 forgets, forget() and retirement too */
	m = msg_map(12, 0, NULL, &len);
	KUNIT_EXPECT_EQ(test, apply(reg, m, len), (ssize_t)len);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 1U);
	spulse_ut_forget(reg, 10);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 0U);
	KUNIT_ASSERT_GT(test, map1(reg, 13, 2), 0L);
	spulse_ut_mark_dead(reg, 13);
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, spulse_ut_pset_find(reg, 13));
	rcu_read_unlock();
	flush_work(&reg->reap);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 0U);
	KUNIT_EXPECT_EQ(test, reg->ntables, 1U);	/* tables stay */
	/* a new MAP (pid reuse) is live again */
	KUNIT_ASSERT_GT(test, map1(reg, 13, 2), 0L);
	rcu_read_lock();
	KUNIT_EXPECT_NOT_NULL(test, spulse_ut_pset_find(reg, 13));
	rcu_read_unlock();
	spulse_ut_reg_free(reg);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 0U);
	KUNIT_EXPECT_EQ(test, reg->ntables, 0U);
}

static void many_processes_hash_and_replace(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 16 << 20);
	const struct spulse_ut_pset *ps;
	u32 pid, bad = 0;

	KUNIT_ASSERT_GT(test, add(reg, 1, 8), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 2, 8), 0L);
	for (pid = 1; pid <= 3000; pid++)
		bad += map1(reg, pid, 1) <= 0;
	for (pid = 1; pid <= 3000; pid += 2)	/* replace every other */
		bad += map1(reg, pid, 2) <= 0;
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, reg->nprocs, 3000U);
	rcu_read_lock();
	for (pid = 1; pid <= 3000; pid++) {
		ps = spulse_ut_pset_find(reg, pid);
		if (!ps || ps->n != 1 || ps->map[0].tab->id != (pid & 1 ? 2 : 1))
			bad++;
	}
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, bad, 0U);
	spulse_ut_reg_free(reg);
}

/*
 * Map sets per hash bucket are bounded: pids a writer picks to collide get
 * SPULSE_UT_BUCKET_MAX sets into one bucket, the next is refused (and
 * counted); a full bucket still takes replacements, and readers find every
 * accepted set.
 */
static void map_sets_per_bucket_bounded(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 16 << 20);
	const u32 want = 2 * SPULSE_UT_BUCKET_MAX;
	u32 *pids = kunit_kcalloc(test, want, sizeof(*pids), GFP_KERNEL);
	u32 b0 = hash_32(1, SPULSE_UT_HASH_SHIFT), n = 0, ok = 0, pid, i;
	ssize_t r;

	KUNIT_ASSERT_NOT_NULL(test, pids);
	for (pid = 1; pid < PID_MAX_LIMIT && n < want; pid++)
		if (hash_32(pid, SPULSE_UT_HASH_SHIFT) == b0)
			pids[n++] = pid;
	KUNIT_ASSERT_EQ(test, n, want);
	KUNIT_ASSERT_GT(test, add(reg, 1, 8), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 2, 8), 0L);
	for (i = 0; i < n; i++) {
		r = map1(reg, pids[i], 1);
		if (r > 0)
			ok++;
		else
			KUNIT_EXPECT_EQ(test, r, (ssize_t)-ENOSPC);
	}
	KUNIT_EXPECT_EQ(test, ok, (u32)SPULSE_UT_BUCKET_MAX);
	KUNIT_EXPECT_EQ(test, reg->refused_nomem, (u64)(n - ok));
	KUNIT_EXPECT_GT(test, map1(reg, pids[0], 2), 0L);	/* replace */
	rcu_read_lock();
	for (i = 0; i < SPULSE_UT_BUCKET_MAX; i++)
		KUNIT_EXPECT_NOT_NULL(test, spulse_ut_pset_find(reg, pids[i]));
	KUNIT_EXPECT_NULL(test, spulse_ut_pset_find(reg, pids[n - 1]));
	rcu_read_unlock();
	spulse_ut_reg_free(reg);
}

/*
 * The memo remembers lookups per map set: a MAP that replaces the set (a
 * table with other rows at the same addresses), a DEL that rebuilds it
 * without a table, and a new set at the very address of a freed one (a
 * new serial) are each seen at once; the same set keeps its entries.
 */
static void memo_follows_every_map_set_change(struct kunit *test)
{
	struct spulse_ut_reg *reg = new_reg(test, 1 << 20);
	struct spulse_ut_memo *memo = kunit_kzalloc(test, sizeof(*memo),
						    GFP_KERNEL);
	struct spulse_ut_pset *fake;
	const struct spulse_ut_pset *ps;
	const struct spulse_ut_row *row;
	u32 ids[2] = { 1, 3 };
	u64 serial;
	size_t len;
	u8 miss;
	void *m;

	KUNIT_ASSERT_NOT_NULL(test, memo);
	/* table 1: 4 rows, 0x1010 CFA_SP; table 2: 2 rows, 0x1010 END */
	KUNIT_ASSERT_GT(test, add(reg, 1, 4), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 2, 2), 0L);
	KUNIT_ASSERT_GT(test, add(reg, 3, 4), 0L);
	KUNIT_ASSERT_GT(test, map1(reg, 42, 1), 0L);
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 42);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	KUNIT_EXPECT_NE(test, ps->serial, 0ULL);
	serial = ps->serial;
	spulse_ut_memo_begin(memo, ps);
	row = spulse_ut_memo_lookup(memo, ps, 0x400010, &miss);
	KUNIT_EXPECT_PTR_EQ(test, row, spulse_ut_lookup(ps, 0x400010));
	KUNIT_EXPECT_EQ(test, row ? row->kind : 0, SPULSE_UT_CFA_SP);
	/* outside every mapping: no row, and why, remembered alike */
	KUNIT_EXPECT_NULL(test, spulse_ut_memo_lookup(memo, ps, 0x300000,
						      &miss));
	KUNIT_EXPECT_EQ(test, miss, SPULSE_UW_CUT_NO_MAP);
	miss = 0;
	KUNIT_EXPECT_NULL(test, spulse_ut_memo_lookup(memo, ps, 0x300000,
						      &miss));
	KUNIT_EXPECT_EQ(test, miss, SPULSE_UW_CUT_NO_MAP);
	rcu_read_unlock();

	/* MAP onto table 2: same address, END now */
	KUNIT_ASSERT_GT(test, map1(reg, 42, 2), 0L);
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 42);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	KUNIT_EXPECT_NE(test, ps->serial, serial);
	spulse_ut_memo_begin(memo, ps);
	row = spulse_ut_memo_lookup(memo, ps, 0x400010, &miss);
	KUNIT_EXPECT_PTR_EQ(test, row, spulse_ut_lookup(ps, 0x400010));
	KUNIT_EXPECT_EQ(test, row ? row->kind : 0, SPULSE_UT_END);
	rcu_read_unlock();

	/* two mappings (tables 1 and 3), then DEL 1: a new set without it */
	m = msg_map(42, 2, ids, &len);
	KUNIT_ASSERT_GT(test, apply(reg, m, len), 0L);
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 42);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	spulse_ut_memo_begin(memo, ps);
	KUNIT_EXPECT_NOT_NULL(test, spulse_ut_memo_lookup(memo, ps, 0x400010,
							  &miss));
	serial = ps->serial;
	rcu_read_unlock();
	m = msg_del(1, &len);
	KUNIT_ASSERT_EQ(test, apply(reg, m, len), (ssize_t)len);
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, 42);
	KUNIT_ASSERT_NOT_NULL(test, ps);
	KUNIT_EXPECT_NE(test, ps->serial, serial);
	spulse_ut_memo_begin(memo, ps);
	KUNIT_EXPECT_NULL(test, spulse_ut_memo_lookup(memo, ps, 0x400010,
						      &miss));
	KUNIT_EXPECT_EQ(test, miss, SPULSE_UW_CUT_NO_MAP);
	KUNIT_EXPECT_NOT_NULL(test, spulse_ut_memo_lookup(memo, ps, 0x410010,
							  &miss));
	rcu_read_unlock();

	/*
	 * A set at the address of a freed one: rewritten in place here. With
	 * its old serial the memo still answers from before (so it really is
	 * used); with a new serial, as every published set has, it is not.
	 */
	fake = kunit_kzalloc(test, struct_size(fake, map, 1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->n = 1;
	fake->serial = spulse_ut_serial_next();
	rcu_read_lock();
	fake->map[0] = (struct spulse_ut_ment){
		0x400000, 0x410000, 0x400000 - 0x1000,
		spulse_ut_pset_find(reg, 42)->map[0].tab };
	spulse_ut_memo_begin(memo, fake);
	row = spulse_ut_memo_lookup(memo, fake, 0x400010, &miss);
	KUNIT_EXPECT_EQ(test, row ? row->kind : 0, SPULSE_UT_CFA_SP);
	fake->map[0].start = 0x500000;	/* 0x400010 no longer mapped */
	fake->map[0].end = 0x510000;
	spulse_ut_memo_begin(memo, fake);
	KUNIT_EXPECT_PTR_EQ(test, spulse_ut_memo_lookup(memo, fake, 0x400010,
							&miss), row);
	fake->serial = spulse_ut_serial_next();
	spulse_ut_memo_begin(memo, fake);
	KUNIT_EXPECT_NULL(test, spulse_ut_memo_lookup(memo, fake, 0x400010,
						      &miss));
	KUNIT_EXPECT_EQ(test, miss, SPULSE_UW_CUT_NO_MAP);
	rcu_read_unlock();
	spulse_ut_reg_free(reg);
}

/* ---- publication while readers walk ---- */

struct race {
	struct spulse_ut_reg *reg;
	struct fake_stack *fs;
	struct spulse_ut_memo *memo;
	atomic_t stop;
	atomic_t walks;
	atomic_t bad;
	atomic_t with_tables;
};

/* Each table version makes the walk end on END after 1 step: */
static int race_reader(void *p)
{
	struct race *rc = p;
	const struct spulse_ut_pset *ps;
	struct spulse_uw_res res;
	unsigned long flags;
	u64 out[16];
	int n;

	while (!atomic_read(&rc->stop)) {
		/* as the sampler: interrupts off, RCU read side */
		local_irq_save(flags);
		rcu_read_lock();
		ps = spulse_ut_pset_find(rc->reg, 77);
		/*
		 * every other walk through the memo kept from walk to walk:
		 * a row remembered from a replaced set or a deleted table
		 * would be a use after free (KASAN) or a wrong frame
		 */
		if (atomic_read(&rc->walks) & 1) {
			struct spulse_uregs r = { .ip = 0x400010, .sp = at(0) };

			n = spulse_unwind_walk_memo(&r, TASK_SZ, fake_read,
						    rc->fs, ps, rc->memo, true,
						    out, 16, &res);
		} else {
			n = uwalk(rc->fs, ps, true, 0x400010, at(0), 0, out,
				  16, &res);
		}
		if (ps) {
			atomic_inc(&rc->with_tables);
			/* row 1: CFA = sp + 16, ra at sp + 8 -> END row */
			if (n != 2 || !res.complete || out[1] != 0x400030)
				atomic_inc(&rc->bad);
		}
		rcu_read_unlock();
		local_irq_restore(flags);
		atomic_inc(&rc->walks);
		cond_resched();
	}
	return 0;
}

static void publish_while_readers_walk(struct kunit *test)
{
	struct race *rc = kunit_kzalloc(test, sizeof(*rc), GFP_KERNEL);
	struct task_struct *th;
	size_t len;
	u32 i, id;
	void *m;

	KUNIT_ASSERT_NOT_NULL(test, rc);
	rc->reg = new_reg(test, 1 << 20);
	rc->fs = new_stack(test);
	rc->memo = kunit_kzalloc(test, sizeof(*rc->memo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rc->memo);
	rc->fs->w[0] = at(8);			/* saved bp */
	rc->fs->w[1] = 0x400031;		/* ra: table 0x1030 = END row */
	th = kthread_run(race_reader, rc, "spulse-ut-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(th));
	get_task_struct(th);
	for (i = 0; i < 150; i++) {
		id = 1 + (i & 3);
		/* a fresh table under a new id replaces the mapped one */
		if (add(rc->reg, id, 4) <= 0 || map1(rc->reg, 77, id) <= 0)
			atomic_inc(&rc->bad);
		if ((i & 3) == 3) {
			m = msg_map(77, 0, NULL, &len);
			if (apply(rc->reg, m, len) != (ssize_t)len)
				atomic_inc(&rc->bad);
		}
		if (i) {
			m = msg_del(1 + ((i - 1) & 3), &len);
			if (apply(rc->reg, m, len) != (ssize_t)len)
				atomic_inc(&rc->bad);
		}
		if (i % 8 == 0)
			msleep(1);
	}
	atomic_set(&rc->stop, 1);
	kthread_stop(th);
	put_task_struct(th);
	KUNIT_EXPECT_EQ(test, atomic_read(&rc->bad), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&rc->walks), 0);
	kunit_info(test, "%d walks, %d with tables\n", atomic_read(&rc->walks),
		   atomic_read(&rc->with_tables));
	spulse_ut_reg_free(rc->reg);
	KUNIT_EXPECT_EQ(test, rc->reg->bytes, 0ULL);
}

static struct kunit_case spulse_unwind_table_cases[] = {
	KUNIT_CASE(msg_good_add_map_del_round_trip),
	KUNIT_CASE(msg_header_rules),
	KUNIT_CASE(msg_add_rules),
	KUNIT_CASE(check_rows_matches_rules),
	KUNIT_CASE(msg_add_edges_accepted),
	KUNIT_CASE(msg_map_rules),
	KUNIT_CASE(mem_bound_refuses_and_recovers),
	KUNIT_CASE(del_drops_the_table_from_every_map_set),
	KUNIT_CASE(many_processes_hash_and_replace),
	KUNIT_CASE(map_sets_per_bucket_bounded),
	KUNIT_CASE(memo_follows_every_map_set_change),
	KUNIT_CASE(publish_while_readers_walk),
	{}
};

static struct kunit_suite spulse_unwind_table_suite = {
	.name = "spulse_unwind_table",
	.test_cases = spulse_unwind_table_cases,
};

kunit_test_suites(&spulse_unwind_suite, &spulse_unwind_table_suite);
