// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the user frame-pointer walker (kmod/ustack.c) over crafted stacks
 * held in a kernel buffer that stands in for user memory: a clean chain,
 * cycles, non-monotonic and unaligned frame pointers, kernel addresses,
 * unreadable memory and the depth limit.
 */
#include <kunit/test.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/segment.h>

#include "ustack.h"
#include "percpu.h"
#include "unwind.h"

#define FAKE_BASE	0x7ffff0000000ULL	/* "user" address of word 0 */
#define FAKE_WORDS	512
#define TASK_SZ		0x7ffffffff000ULL	/* x86-64 TASK_SIZE (4 levels) */
#define KADDR		0xffffffff81000000ULL

struct fake_stack {
	u64 w[FAKE_WORDS];
	unsigned int reads;
};

static int fake_read(void *ctx, u64 addr, void *dst, size_t len)
{
	struct fake_stack *fs = ctx;

	fs->reads++;
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

/* Frame record at word i: saved bp, return address. */
static void frame(struct fake_stack *fs, unsigned int i, u64 next_bp, u64 ra)
{
	fs->w[i] = next_bp;
	fs->w[i + 1] = ra;
}

static struct fake_stack *new_stack(struct kunit *test)
{
	struct fake_stack *fs = kunit_kzalloc(test, sizeof(*fs), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fs);
	return fs;
}

static int walk(struct fake_stack *fs, u64 ip, u64 sp, u64 bp, u64 *out,
		u32 max, bool *trunc)
{
	struct spulse_uregs r = { .ip = ip, .sp = sp, .bp = bp };

	return spulse_ustack_walk(&r, TASK_SZ, fake_read, fs, out, max, trunc);
}

static void ustack_clean_chain_normalizes_return_addresses(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[16];
	bool trunc = true;

	frame(fs, 4, at(10), 0x401100);
	frame(fs, 10, at(20), 0x401200);
	frame(fs, 20, 0, 0x401300);		/* outermost: bp 0 ends it */
	KUNIT_ASSERT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 16, &trunc), 4);
	KUNIT_EXPECT_FALSE(test, trunc);
	KUNIT_EXPECT_EQ(test, out[0], 0x401000ULL);	/* exact leaf IP */
	KUNIT_EXPECT_EQ(test, out[1], 0x4010ffULL);	/* return address - 1 */
	KUNIT_EXPECT_EQ(test, out[2], 0x4011ffULL);
	KUNIT_EXPECT_EQ(test, out[3], 0x4012ffULL);
}

static void ustack_zero_return_address_ends_cleanly(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[16];
	bool trunc = true;

	frame(fs, 4, at(10), 0x401100);
	frame(fs, 10, at(20), 0);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 16, &trunc), 2);
	KUNIT_EXPECT_FALSE(test, trunc);
}

static void ustack_cycle_is_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;
	int n;

	frame(fs, 4, at(10), 0x401100);
	frame(fs, 10, at(4), 0x401200);		/* back to the first frame */
	n = walk(fs, 0x401000, at(0), at(4), out, 64, &trunc);
	KUNIT_EXPECT_EQ(test, n, 3);
	KUNIT_EXPECT_TRUE(test, trunc);
	KUNIT_EXPECT_LE(test, fs->reads, 3U);	/* bounded, no looping */
}

static void ustack_self_loop_is_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;

	frame(fs, 4, at(4), 0x401100);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 64, &trunc), 2);
	KUNIT_EXPECT_TRUE(test, trunc);
}

static void ustack_non_monotonic_is_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;

	/* next frame below the current one (but not a cycle) */
	frame(fs, 40, at(30), 0x401100);
	frame(fs, 30, 0, 0x401200);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(20), at(40), out, 64, &trunc), 2);
	KUNIT_EXPECT_TRUE(test, trunc);
	/* a first frame pointer below the stack pointer is not followed */
	trunc = false;
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(35), at(30), out, 64, &trunc), 1);
	KUNIT_EXPECT_TRUE(test, trunc);
}

static void ustack_unaligned_is_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;

	frame(fs, 4, at(10) + 4, 0x401100);	/* misaligned next bp */
	frame(fs, 10, 0, 0x401200);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 64, &trunc), 2);
	KUNIT_EXPECT_TRUE(test, trunc);
	trunc = false;
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4) + 1, out, 64, &trunc), 1);
	KUNIT_EXPECT_TRUE(test, trunc);
}

static void ustack_kernel_return_address_not_followed(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;
	int n, i;

	frame(fs, 4, at(10), 0x401100);
	frame(fs, 10, at(20), KADDR);
	frame(fs, 20, 0, 0x401300);
	n = walk(fs, 0x401000, at(0), at(4), out, 64, &trunc);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_TRUE(test, trunc);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_LT(test, out[i], TASK_SZ);
}

static void ustack_kernel_frame_pointer_not_read(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;
	unsigned int reads;

	frame(fs, 4, KADDR, 0x401100);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 64, &trunc), 2);
	KUNIT_EXPECT_TRUE(test, trunc);
	reads = fs->reads;
	KUNIT_EXPECT_EQ(test, reads, 1U);	/* only the user frame was read */
}

static void ustack_kernel_ip_gives_no_frames(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[4];
	bool trunc = false;

	KUNIT_EXPECT_EQ(test, walk(fs, KADDR, at(0), at(4), out, 4, &trunc), 0);
	KUNIT_EXPECT_TRUE(test, trunc);
	KUNIT_EXPECT_EQ(test, fs->reads, 0U);
}

static void ustack_unreadable_frame_is_truncated(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[64];
	bool trunc = false;

	frame(fs, 4, FAKE_BASE + 8ULL * FAKE_WORDS + 64, 0x401100);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 64, &trunc), 2);
	KUNIT_EXPECT_TRUE(test, trunc);
}

/* A chain of @frames frames, each 4 words above the previous, ending in 0. */
static void long_chain(struct fake_stack *fs, unsigned int frames)
{
	unsigned int i;

	for (i = 0; i < frames; i++)
		frame(fs, 4 + 4 * i, i + 1 < frames ? at(8 + 4 * i) : 0,
		      0x500000 + 0x10 * i);
}

static void ustack_depth_limit_truncates(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[10];
	bool trunc = false;

	long_chain(fs, 100);
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 10, &trunc), 10);
	KUNIT_EXPECT_TRUE(test, trunc);
	KUNIT_EXPECT_EQ(test, out[9], 0x500000ULL + 0x10 * 8 - 1);
}

static void ustack_chain_exactly_at_limit_is_complete(struct kunit *test)
{
	struct fake_stack *fs = new_stack(test);
	u64 out[10];
	bool trunc = true;

	long_chain(fs, 9);	/* IP + 9 return addresses = 10 = the limit */
	KUNIT_EXPECT_EQ(test, walk(fs, 0x401000, at(0), at(4), out, 10, &trunc), 10);
	KUNIT_EXPECT_FALSE(test, trunc);
}

/*
 * Who has a user stack: a user thread; not a kernel thread, a task
 * without mm, nor an io-wq worker (PF_IO_WORKER: it shares the process's
 * mm, but its saved user registers are its creator's with ip = sp = 0).
 */
static void ustack_io_worker_has_no_user_stack(struct kunit *test)
{
	struct task_struct *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	static u64 mm_standin;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_EXPECT_FALSE(test, spulse_task_has_user(t));	/* no mm */
	t->mm = (struct mm_struct *)&mm_standin;
	KUNIT_EXPECT_TRUE(test, spulse_task_has_user(t));
	t->flags = PF_IO_WORKER;
	KUNIT_EXPECT_FALSE(test, spulse_task_has_user(t));
	t->flags = PF_KTHREAD;
	KUNIT_EXPECT_FALSE(test, spulse_task_has_user(t));
	t->flags = PF_EXITING;
	KUNIT_EXPECT_TRUE(test, spulse_task_has_user(t));
	/* this KUnit thread itself */
	KUNIT_EXPECT_FALSE(test, spulse_task_has_user(current));
}

/* ---- the ustack_cut_* keys (a cut stack's cause) ---- */

/* Every key's counter, in enum spulse_ucut order. */
static u64 cut_field(const struct spulse_cpu_stats *st, enum spulse_ucut k)
{
	const u64 v[SPULSE_UCUT_NR] = {
		[SPULSE_UCUT_NO_TABLE_YET] = st->ustack_cut_no_table_yet,
		[SPULSE_UCUT_NO_TABLE] = st->ustack_cut_no_table,
		[SPULSE_UCUT_NO_ROW] = st->ustack_cut_no_row,
		[SPULSE_UCUT_TABLE_UNKNOWN] = st->ustack_cut_table_unknown,
		[SPULSE_UCUT_DEPTH] = st->ustack_cut_depth,
		[SPULSE_UCUT_UNREADABLE] = st->ustack_cut_unreadable,
		[SPULSE_UCUT_BAD_FRAME] = st->ustack_cut_bad_frame,
		[SPULSE_UCUT_COMPAT32] = st->ustack_cut_compat32,
	};

	return v[k];
}

static void ustack_cut_key_per_cause(struct kunit *test)
{
	const enum spulse_unwind_mode modes[] = {
		SPULSE_UNWIND_AUTO, SPULSE_UNWIND_TABLES, SPULSE_UNWIND_FP,
	};
	const struct {
		u8 cut;
		enum spulse_ucut key;
	} fixed[] = {
		{ SPULSE_UW_CUT_NO_TAB, SPULSE_UCUT_NO_TABLE },
		{ SPULSE_UW_CUT_NO_ROW, SPULSE_UCUT_NO_ROW },
		{ SPULSE_UW_CUT_UNKNOWN, SPULSE_UCUT_TABLE_UNKNOWN },
		{ SPULSE_UW_CUT_DEPTH, SPULSE_UCUT_DEPTH },
		{ SPULSE_UW_CUT_UNREADABLE, SPULSE_UCUT_UNREADABLE },
		{ SPULSE_UW_CUT_BAD_FRAME, SPULSE_UCUT_BAD_FRAME },
		{ SPULSE_UW_CUT_COMPAT32, SPULSE_UCUT_COMPAT32 },
	};
	unsigned int m, i;
	int tables;

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		for (tables = 0; tables <= 1; tables++) {
			enum spulse_unwind_mode md = modes[m];
			/* "yet" only while tables are in use */
			enum spulse_ucut want = md != SPULSE_UNWIND_FP &&
						tables ?
						SPULSE_UCUT_NO_TABLE_YET :
						SPULSE_UCUT_NO_TABLE;

			/* no map set, or outside every mapping of the set */
			KUNIT_EXPECT_EQ(test, spulse_ustack_cut_key(
				SPULSE_UW_CUT_NO_SET, md, tables), want);
			KUNIT_EXPECT_EQ(test, spulse_ustack_cut_key(
				SPULSE_UW_CUT_NO_MAP, md, tables), want);
			/* the rest do not depend on mode or tables */
			for (i = 0; i < ARRAY_SIZE(fixed); i++)
				KUNIT_EXPECT_EQ_MSG(test, spulse_ustack_cut_key(
					fixed[i].cut, md, tables),
					fixed[i].key, "cut %u", fixed[i].cut);
		}
	}
}

/* Each key adds 1 to its own counter and to no other. */
static void ustack_cut_count_one_counter_per_key(struct kunit *test)
{
	struct spulse_cpu_stats *st = kunit_kzalloc(test, sizeof(*st),
						    GFP_KERNEL);
	enum spulse_ucut k, j;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, st);
	for (k = 0; k < SPULSE_UCUT_NR; k++)
		for (i = 0; i <= k; i++)
			spulse_ustack_cut_count(st, k);
	for (j = 0; j < SPULSE_UCUT_NR; j++)
		KUNIT_EXPECT_EQ_MSG(test, cut_field(st, j), (u64)j + 1,
				    "key %d", j);
	KUNIT_EXPECT_EQ(test, st->ustack_truncated, 0ULL);
}

/*
 * The capture counts a cut stack in the stats of the struct spulse_cpu
 * whose window it was given: an FP-less leaf (BP = 1) under unwind=fp is
 * "no table", the depth limit "depth", a 32-bit task "compat32"; a whole
 * stack counts nothing. (No user memory is read: every walk stops before.)
 */
static void ustack_capture_counts_the_cause(struct kunit *test)
{
	struct spulse_cpu *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct pt_regs *regs = kunit_kzalloc(test, sizeof(*regs), GFP_KERNEL);
	struct spulse_uw_res res;
	u64 out[8];
	int n;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, regs);
	regs->cs = __USER_CS;
	regs->ip = 0x401000;
	regs->sp = 0x7ffff0000000ULL;
	regs->bp = 0;
	n = spulse_ustack_capture(regs, SPULSE_UNWIND_FP, &c->uc, out, 8, &res);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	regs->bp = 1;
	n = spulse_ustack_capture(regs, SPULSE_UNWIND_FP, &c->uc, out, 8, &res);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_NO_SET);
	KUNIT_EXPECT_EQ(test, res.cut_pc, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, c->stats.ustack_cut_no_table, 1ULL);
	n = spulse_ustack_capture(regs, SPULSE_UNWIND_FP, &c->uc, out, 1, &res);
	KUNIT_EXPECT_EQ(test, res.cut, SPULSE_UW_CUT_DEPTH);
	KUNIT_EXPECT_EQ(test, c->stats.ustack_cut_depth, 1ULL);
	regs->cs = __USER32_CS;
	n = spulse_ustack_capture(regs, SPULSE_UNWIND_AUTO, &c->uc, out, 8,
				  &res);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, c->stats.ustack_cut_compat32, 1ULL);
	KUNIT_EXPECT_EQ(test, c->stats.ustack_cut_no_table, 1ULL);
	KUNIT_EXPECT_EQ(test, c->stats.ustack_cut_no_table_yet +
			c->stats.ustack_cut_bad_frame +
			c->stats.ustack_cut_unreadable, 0ULL);
}

static struct kunit_case spulse_ustack_cases[] = {
	KUNIT_CASE(ustack_io_worker_has_no_user_stack),
	KUNIT_CASE(ustack_clean_chain_normalizes_return_addresses),
	KUNIT_CASE(ustack_zero_return_address_ends_cleanly),
	KUNIT_CASE(ustack_cycle_is_truncated),
	KUNIT_CASE(ustack_self_loop_is_truncated),
	KUNIT_CASE(ustack_non_monotonic_is_truncated),
	KUNIT_CASE(ustack_unaligned_is_truncated),
	KUNIT_CASE(ustack_kernel_return_address_not_followed),
	KUNIT_CASE(ustack_kernel_frame_pointer_not_read),
	KUNIT_CASE(ustack_kernel_ip_gives_no_frames),
	KUNIT_CASE(ustack_unreadable_frame_is_truncated),
	KUNIT_CASE(ustack_depth_limit_truncates),
	KUNIT_CASE(ustack_chain_exactly_at_limit_is_complete),
	KUNIT_CASE(ustack_cut_key_per_cause),
	KUNIT_CASE(ustack_cut_count_one_counter_per_key),
	KUNIT_CASE(ustack_capture_counts_the_cause),
	{}
};

static struct kunit_suite spulse_ustack_suite = {
	.name = "spulse_ustack",
	.test_cases = spulse_ustack_cases,
};
kunit_test_suite(spulse_ustack_suite);
