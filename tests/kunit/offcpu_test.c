// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: off-CPU intervals (kmod/offcpu_table.c, kmod/encode.c).
 *
 * spulse_offcpu_table: the slot table driven through its pure API with the
 * test's own memory: open/close round trip with both stacks, wakeups
 * (attached, repeat, unslotted, runnable), early wakeups validated by the
 * switch count, a full bucket, replaced intervals, sweep, interval
 * arithmetic, stack expansion, and the state numbering against the
 * kernel's own __task_state_index(); the per-CPU queue of closed
 * intervals (close order kept across the index wrap, a full queue refuses
 * and leaves its entries intact while the thread's slot is still freed,
 * the minimum and busy outcomes, drain and discard); a waker's kernel
 * stack taken in hard IRQ ends at the interrupt entry (kstack.h), and
 * which switched-in tasks leave the writer for later (spulse_oc_defer()).
 *
 * spulse_offcpu_encode: the interval, cpu and trigger records the batch
 * encoder writes, decoded by the independent stream_check.c field by field
 * (thread, stacks, state, cpus, blocked/runq, waker, the event clock), and
 * a random mix of samples, intervals and triggers with drops and tiny
 * intern tables that never dangles; the stack cache (hits reuse the ids,
 * rollback and reset invalidate it, only the exact chain hits); the queue
 * drained through the encoder as stop does writes every queued interval,
 * in close order, with its own stacks and times.
 */
#include <kunit/test.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/log2.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "offcpu.h"
#include "encoder.h"
#include "kstack.h"
#include "params.h"
#include "stream_check.h"

#define DEPTH 8

struct oc_fix {
	struct spulse_oc_table t;
	struct spulse_oc_slot *slot;
	u64 *store;
	struct spulse_oc_slot out;	/* spulse_oc_close() target */
	u64 out_store[2 * DEPTH];
	u64 a_store[DEPTH], b_store[DEPTH];
	struct spulse_oc_who a, b;	/* a thread and a waker */
};

static struct oc_fix *oc_new(struct kunit *test, u32 threads)
{
	struct oc_fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u32 n = spulse_oc_table_slots(threads);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->slot = kunit_kcalloc(test, n, sizeof(*f->slot), GFP_KERNEL);
	f->store = kunit_kcalloc(test, (size_t)n * 2 * DEPTH, sizeof(u64),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->slot);
	KUNIT_ASSERT_NOT_NULL(test, f->store);
	spulse_oc_table_init(&f->t, f->slot, f->store, threads, DEPTH);
	f->out.self.st.addr = f->out_store;
	f->out.waker.st.addr = f->out_store + DEPTH;
	f->a.st.addr = f->a_store;
	f->b.st.addr = f->b_store;
	return f;
}

/* A thread with a recognisable stack: nu user + nk kernel frames. */
static void who(struct spulse_oc_who *w, u32 pid, u32 tid, const char *comm,
		u16 nu, u16 nk, u64 base)
{
	u16 i;

	w->pid = pid;
	w->tid = tid;
	memset(w->comm, 0, sizeof(w->comm));
	strscpy(w->comm, comm, sizeof(w->comm));
	w->st.trunc = false;
	w->st.nu = nu;
	w->st.nk = nk;
	for (i = 0; i < nu + nk; i++)
		w->st.addr[i] = (i < nu ? 0x400000ULL : 0xffffffff81000000ULL) +
				base + i * 0x10;
}

static void expect_same_stack(struct kunit *test, const struct spulse_oc_stack *x,
			      const struct spulse_oc_stack *y)
{
	u32 i;

	KUNIT_EXPECT_EQ(test, x->trunc, y->trunc);
	KUNIT_ASSERT_EQ(test, x->nu, y->nu);
	KUNIT_ASSERT_EQ(test, x->nk, y->nk);
	KUNIT_EXPECT_PTR_NE(test, x->addr, y->addr);	/* copied, not shared */
	for (i = 0; i < (u32)x->nu + x->nk; i++)
		KUNIT_EXPECT_EQ(test, x->addr[i], y->addr[i]);
}

static void table_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, spulse_oc_table_slots(1), (u32)SPULSE_OC_BUCKET);
	KUNIT_EXPECT_EQ(test, spulse_oc_table_slots(0), (u32)SPULSE_OC_BUCKET);
	KUNIT_EXPECT_EQ(test, spulse_oc_table_slots(64), 64U);
	KUNIT_EXPECT_EQ(test, spulse_oc_table_slots(65), 80U);
	KUNIT_EXPECT_EQ(test, spulse_oc_table_bytes(64, DEPTH),
			64 * (sizeof(struct spulse_oc_slot) + 2 * DEPTH * sizeof(u64)));
}

static void open_close_round_trip_keeps_both_stacks(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 64);
	u64 bl, rq;

	who(&f->a, 100, 101, "reader", 3, 4, 0x100);
	who(&f->b, 100, 102, "writer", 2, 5, 0x900);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     1, 1000, 7), SPULSE_OC_OPENED);
	/* the caller's buffer may be reused right away: the slot has a copy */
	f->a_store[0] = 0xdead;
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 101, false, 7, &f->b, 0, 5000),
			SPULSE_OC_WAKE_ATTACHED);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 101, false, 7, &f->a, 1, 6000),
			SPULSE_OC_WAKE_REPEAT);	/* the first waker stays */
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 101, &f->out));
	KUNIT_EXPECT_EQ(test, f->out.state, (u8)SPULSE_STATE_SLEEPING);
	KUNIT_EXPECT_EQ(test, f->out.cpu_out, (u16)1);
	KUNIT_EXPECT_EQ(test, f->out.t_out, 1000ULL);
	KUNIT_EXPECT_TRUE(test, f->out.has_waker);
	KUNIT_EXPECT_EQ(test, f->out.t_wake, 5000ULL);
	KUNIT_EXPECT_EQ(test, f->out.waker_cpu, (u16)0);
	KUNIT_EXPECT_EQ(test, f->out.self.tid, 101U);
	KUNIT_EXPECT_EQ(test, f->out.waker.tid, 102U);
	KUNIT_EXPECT_STREQ(test, f->out.waker.comm, "writer");
	KUNIT_EXPECT_EQ(test, f->out.self.st.addr[0], 0x400100ULL);
	f->a_store[0] = 0x400100;
	expect_same_stack(test, &f->out.self.st, &f->a.st);
	expect_same_stack(test, &f->out.waker.st, &f->b.st);
	spulse_oc_interval(&f->out, 9000, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 4000ULL);	/* out 1000 -> wake 5000 */
	KUNIT_EXPECT_EQ(test, rq, 4000ULL);	/* wake 5000 -> in 9000 */
	/* closed means freed */
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&f->t, 101, &f->out));
}

static void wake_of_unslotted_or_runnable_thread(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 64);
	u64 bl, rq;

	who(&f->a, 1, 200, "t", 1, 1, 0);
	who(&f->b, 1, 201, "w", 1, 1, 0x50);
	/* not slotted and not on a CPU: nothing to attach to */
	KUNIT_EXPECT_EQ(test, spulse_oc_wake_peek(&f->t, 200, false),
			SPULSE_OC_WAKE_UNSLOTTED);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 200, false, 1, &f->b, 0, 10),
			SPULSE_OC_WAKE_UNSLOTTED);
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&f->t, 200, &f->out));
	/* preempted (R): a wakeup is not recorded, all of it is run-queue time */
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_RUNNABLE,
					     0, 100, 2), SPULSE_OC_OPENED);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake_peek(&f->t, 200, false),
			SPULSE_OC_WAKE_RUNNABLE);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 200, false, 2, &f->b, 0, 150),
			SPULSE_OC_WAKE_RUNNABLE);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 200, &f->out));
	KUNIT_EXPECT_FALSE(test, f->out.has_waker);
	spulse_oc_interval(&f->out, 700, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 0ULL);
	KUNIT_EXPECT_EQ(test, rq, 600ULL);
}

static void early_wake_validated_by_switch_count(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 64);
	u64 bl, rq;

	who(&f->a, 1, 300, "t", 2, 2, 0);
	who(&f->b, 1, 301, "w", 2, 2, 0x70);
	/* woken while still on CPU, switch count 7: an EARLY slot */
	KUNIT_EXPECT_EQ(test, spulse_oc_wake_peek(&f->t, 300, true),
			SPULSE_OC_WAKE_EARLY);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 300, true, 7, &f->b, 1, 500),
			SPULSE_OC_WAKE_EARLY);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 1);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 300, true, 7, &f->a, 0, 501),
			SPULSE_OC_WAKE_REPEAT);
	/* an early slot is not an open interval */
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&f->t, 300, &f->out));
	/* the switch-out that follows (count 8 = 7 + this switch) takes it */
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 520, 8), SPULSE_OC_OPENED_EARLY);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 0);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 300, &f->out));
	KUNIT_EXPECT_TRUE(test, f->out.has_waker);
	KUNIT_EXPECT_EQ(test, f->out.waker.tid, 301U);
	expect_same_stack(test, &f->out.waker.st, &f->b.st);
	/* woken before it left: no blocked time, all run-queue */
	spulse_oc_interval(&f->out, 900, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 0ULL);
	KUNIT_EXPECT_EQ(test, rq, 380ULL);

	/* same count (wakeup after the count was bumped) is also this switch */
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 300, true, 9, &f->b, 1, 1000),
			SPULSE_OC_WAKE_EARLY);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 1001, 9), SPULSE_OC_OPENED_EARLY);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 300, &f->out));

	/* a later switch (count moved on by 2): stale, dropped */
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 300, true, 10, &f->b, 1, 2000),
			SPULSE_OC_WAKE_EARLY);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 3000, 12), SPULSE_OC_OPENED_STALE);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 300, &f->out));
	KUNIT_EXPECT_FALSE(test, f->out.has_waker);
	spulse_oc_interval(&f->out, 3500, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 500ULL);	/* no waker: all blocked */
	KUNIT_EXPECT_EQ(test, rq, 0ULL);

	/* leaving runnable (preempted) never takes an early wakeup */
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 300, true, 20, &f->b, 1, 4000),
			SPULSE_OC_WAKE_EARLY);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_RUNNABLE,
					     0, 4001, 21), SPULSE_OC_OPENED_STALE);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 300, &f->out));
	KUNIT_EXPECT_FALSE(test, f->out.has_waker);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 0);
}

static void wakeup_done_removes_stale_early_slot(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 64);

	who(&f->a, 1, 400, "t", 1, 1, 0);
	who(&f->b, 1, 401, "w", 1, 1, 0);
	KUNIT_EXPECT_FALSE(test, spulse_oc_wakeup_done(&f->t, 400));
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 400, true, 3, &f->b, 0, 10),
			SPULSE_OC_WAKE_EARLY);
	/* the wakeup completed with the thread still running: it never slept */
	KUNIT_EXPECT_TRUE(test, spulse_oc_wakeup_done(&f->t, 400));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 0);
	KUNIT_EXPECT_FALSE(test, spulse_oc_wakeup_done(&f->t, 400));
	/* its next sleep starts clean */
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 20, 4), SPULSE_OC_OPENED);
	/* wakeup_done leaves an open interval alone */
	KUNIT_EXPECT_FALSE(test, spulse_oc_wakeup_done(&f->t, 400));
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 400, &f->out));
	KUNIT_EXPECT_FALSE(test, f->out.has_waker);
}

static void full_bucket_refuses_and_stays_intact(struct kunit *test)
{
	/* 16 threads = one bucket: every tid hashes into it */
	struct oc_fix *f = oc_new(test, SPULSE_OC_BUCKET);
	u32 i;

	KUNIT_ASSERT_EQ(test, f->t.n, (u32)SPULSE_OC_BUCKET);
	for (i = 0; i < SPULSE_OC_BUCKET; i++) {
		who(&f->a, 9, 1000 + i, "t", 2, 1, i * 0x100);
		KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a,
						     SPULSE_STATE_SLEEPING, 0,
						     100 + i, 1), SPULSE_OC_OPENED);
	}
	who(&f->a, 9, 2000, "t", 1, 1, 0);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 500, 1), -ENOSPC);
	who(&f->b, 9, 2001, "w", 1, 1, 0);
	KUNIT_EXPECT_EQ(test, spulse_oc_wake(&f->t, 2000, true, 1, &f->b, 0, 600),
			SPULSE_OC_WAKE_NO_SLOT);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 0);
	/* an open interval is replaced (lost), not duplicated */
	who(&f->a, 9, 1003, "t", 2, 1, 0x300);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_DISK, 1,
					     700, 2), SPULSE_OC_OPENED_LOST);
	for (i = 0; i < SPULSE_OC_BUCKET; i++) {
		KUNIT_ASSERT_TRUE(test, spulse_oc_close(&f->t, 1000 + i, &f->out));
		KUNIT_EXPECT_EQ(test, f->out.self.tid, 1000 + i);
		KUNIT_EXPECT_EQ(test, f->out.t_out, i == 3 ? 700ULL : 100ULL + i);
		KUNIT_EXPECT_EQ(test, f->out.self.st.addr[0], 0x400000ULL + i * 0x100);
	}
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&f->t, 2000, &f->out));
	/* room again */
	who(&f->a, 9, 2000, "t", 1, 1, 0);
	KUNIT_EXPECT_EQ(test, spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING,
					     0, 800, 1), SPULSE_OC_OPENED);
}

static void many_threads_in_a_big_table(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 4096);
	u32 i, opened = 0, closed = 0;

	for (i = 0; i < 2048; i++) {
		who(&f->a, 5, 10000 + i * 7, "t", 1, 1, i);
		opened += spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING, 0,
					 i, 1) == SPULSE_OC_OPENED;
	}
	/* half full: hashing leaves no bucket overflowing */
	KUNIT_EXPECT_EQ(test, opened, 2048U);
	for (i = 0; i < 2048; i += 2)
		closed += spulse_oc_close(&f->t, 10000 + i * 7, &f->out) &&
			  f->out.t_out == i;
	KUNIT_EXPECT_EQ(test, closed, 1024U);
	KUNIT_EXPECT_EQ(test, spulse_oc_sweep(&f->t, NULL), 1024U);
	KUNIT_EXPECT_EQ(test, spulse_oc_sweep(&f->t, NULL), 0U);
}

static void sweep_counts_and_empties(struct kunit *test)
{
	struct oc_fix *f = oc_new(test, 64);
	u32 i, early = 99;

	who(&f->b, 1, 999, "w", 1, 1, 0);
	for (i = 0; i < 5; i++) {
		who(&f->a, 1, 500 + i, "t", 1, 1, 0);
		spulse_oc_open(&f->t, &f->a, SPULSE_STATE_SLEEPING, 0, 1, 1);
	}
	spulse_oc_wake(&f->t, 600, true, 1, &f->b, 0, 2);
	spulse_oc_wake(&f->t, 601, true, 1, &f->b, 0, 2);
	KUNIT_EXPECT_EQ(test, spulse_oc_sweep(&f->t, &early), 5U);
	KUNIT_EXPECT_EQ(test, early, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->t.early), 0);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, spulse_oc_close(&f->t, 500 + i, &f->out));
	KUNIT_EXPECT_EQ(test, spulse_oc_sweep(&f->t, &early), 0U);
	KUNIT_EXPECT_EQ(test, early, 0U);
}

static void interval_arithmetic_edges(struct kunit *test)
{
	struct spulse_oc_slot s = {};
	u64 bl, rq;

	s.state = SPULSE_STATE_SLEEPING;
	s.t_out = 1000;
	/* switch-in before switch-out (clock skew between CPUs): 0 */
	spulse_oc_interval(&s, 900, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl + rq, 0ULL);
	/* wakeup after the switch-in: clipped, never more than the total */
	s.has_waker = true;
	s.t_wake = 5000;
	spulse_oc_interval(&s, 3000, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 2000ULL);
	KUNIT_EXPECT_EQ(test, rq, 0ULL);
	/* exact split */
	s.t_wake = 1250;
	spulse_oc_interval(&s, 2000, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 250ULL);
	KUNIT_EXPECT_EQ(test, rq, 750ULL);
	/* R ignores any waker */
	s.state = SPULSE_STATE_RUNNABLE;
	spulse_oc_interval(&s, 2000, &bl, &rq);
	KUNIT_EXPECT_EQ(test, bl, 0ULL);
	KUNIT_EXPECT_EQ(test, rq, 1000ULL);
}

static void stack_frames_order_and_marker(struct kunit *test)
{
	u64 a[4] = { 0x401000, 0x402000, 0xffffffff81000100ULL,
		     0xffffffff81000200ULL };
	struct spulse_oc_stack st = { .nu = 2, .nk = 2, .addr = a };
	struct spulse_frame out[DEPTH + 1];

	KUNIT_ASSERT_EQ(test, spulse_oc_stack_frames(&st, out), 4U);
	KUNIT_EXPECT_EQ(test, out[0].kind, (u8)SPULSE_FRAME_USER);
	KUNIT_EXPECT_EQ(test, out[0].addr, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, out[2].kind, (u8)SPULSE_FRAME_KERNEL);
	KUNIT_EXPECT_EQ(test, out[3].addr, 0xffffffff81000200ULL);
	st.trunc = true;
	KUNIT_ASSERT_EQ(test, spulse_oc_stack_frames(&st, out), 5U);
	KUNIT_EXPECT_EQ(test, out[0].kind, (u8)SPULSE_FRAME_TRUNCATED);
	KUNIT_EXPECT_EQ(test, out[1].addr, 0x401000ULL);
	st.trunc = false;
	st.nu = 0;
	st.nk = 0;
	KUNIT_ASSERT_EQ(test, spulse_oc_stack_frames(&st, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].kind, (u8)SPULSE_FRAME_TRUNCATED);
}

/* FORMAT.md 3.10 numbers states in the kernel's task_state_index() order. */
static void state_numbers_match_the_kernel(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, __task_state_index(TASK_RUNNING, 0),
			(unsigned int)SPULSE_STATE_RUNNABLE);
	KUNIT_EXPECT_EQ(test, __task_state_index(TASK_INTERRUPTIBLE, 0),
			(unsigned int)SPULSE_STATE_SLEEPING);
	KUNIT_EXPECT_EQ(test, __task_state_index(TASK_UNINTERRUPTIBLE, 0),
			(unsigned int)SPULSE_STATE_DISK);
	KUNIT_EXPECT_EQ(test, __task_state_index(__TASK_STOPPED, 0),
			(unsigned int)SPULSE_STATE_STOPPED);
	KUNIT_EXPECT_EQ(test, __task_state_index(__TASK_TRACED, 0),
			(unsigned int)SPULSE_STATE_TRACED);
	KUNIT_EXPECT_EQ(test, __task_state_index(0, EXIT_DEAD),
			(unsigned int)SPULSE_STATE_DEAD);
	KUNIT_EXPECT_EQ(test, __task_state_index(0, EXIT_ZOMBIE),
			(unsigned int)SPULSE_STATE_ZOMBIE);
	KUNIT_EXPECT_EQ(test, __task_state_index(TASK_PARKED, 0),
			(unsigned int)SPULSE_STATE_PARKED);
	KUNIT_EXPECT_EQ(test, __task_state_index(TASK_IDLE, 0),
			(unsigned int)SPULSE_STATE_IDLE);
	/* TASK_REPORT_MAX is the bit above the highest index (idle, 8) */
	KUNIT_EXPECT_EQ(test, (unsigned int)ilog2(TASK_REPORT_MAX),
			(unsigned int)SPULSE_STATE_MAX);
}


/* ---- the queue of closed intervals ---- */

#define QN 4

struct q_fix {
	struct spulse_oc_queue q;
	struct spulse_oc_closed ent[QN];
	u64 store[QN * 2 * DEPTH];
};

static struct q_fix *q_new(struct kunit *test)
{
	struct q_fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	spulse_oc_queue_init(&f->q, f->ent, f->store, QN, DEPTH);
	return f;
}

/* Open tid's interval at t_out, woken at t_out + 10 by a fixed waker. */
static void open_woken(struct kunit *test, struct oc_fix *o, u32 tid, u64 t_out)
{
	who(&o->a, 40, tid, "q", 2, 3, tid * 0x1000ULL);
	KUNIT_ASSERT_EQ(test, spulse_oc_open(&o->t, &o->a, SPULSE_STATE_SLEEPING,
					     1, t_out, 1), SPULSE_OC_OPENED);
	who(&o->b, 41, 4100, "waker", 1, 2, tid * 0x2000ULL);
	KUNIT_ASSERT_EQ(test, spulse_oc_wake(&o->t, tid, false, 1, &o->b, 0,
					     t_out + 10),
			SPULSE_OC_WAKE_ATTACHED);
}

/* The entry holds tid's interval as open_woken() made it, in at t_in. */
static void expect_entry(struct kunit *test, const struct spulse_oc_closed *e,
			 u32 tid, u64 t_out, u64 t_in)
{
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, e->s.self.tid, tid);
	KUNIT_EXPECT_EQ(test, e->s.t_out, t_out);
	KUNIT_EXPECT_EQ(test, e->t_in, t_in);
	KUNIT_EXPECT_TRUE(test, e->s.has_waker);
	KUNIT_EXPECT_EQ(test, e->s.t_wake, t_out + 10);
	KUNIT_EXPECT_EQ(test, e->s.self.st.nu, (u16)2);
	KUNIT_EXPECT_EQ(test, e->s.self.st.nk, (u16)3);
	KUNIT_EXPECT_EQ(test, e->s.self.st.addr[0], 0x400000ULL + tid * 0x1000ULL);
	KUNIT_EXPECT_EQ(test, e->s.self.st.addr[4],
			0xffffffff81000000ULL + tid * 0x1000ULL + 4 * 0x10);
	KUNIT_EXPECT_EQ(test, e->s.waker.st.addr[0], 0x400000ULL + tid * 0x2000ULL);
	KUNIT_EXPECT_EQ(test, e->s.waker.st.nk, (u16)2);
}

static void queue_keeps_close_order_across_the_wrap(struct kunit *test)
{
	struct oc_fix *o = oc_new(test, 64);
	struct q_fix *f = q_new(test);
	u32 i, k;

	/* the counters wrap around u32 on the way */
	f->q.head = 0xfffffffeU;
	f->q.tail = 0xfffffffeU;
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 3; i++) {
			u32 tid = 300 + k * 10 + i;

			open_woken(test, o, tid, 1000 * tid);
			KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, tid,
								     1000 * tid + 50,
								     0, false),
					SPULSE_OC_CLOSE_QUEUED);
			KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), i + 1);
		}
		for (i = 0; i < 3; i++) {
			u32 tid = 300 + k * 10 + i;

			expect_entry(test, spulse_oc_queue_head(&f->q), tid,
				     1000 * tid, 1000 * tid + 50);
			spulse_oc_queue_pop(&f->q);
		}
		KUNIT_EXPECT_NULL(test, spulse_oc_queue_head(&f->q));
		KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), 0U);
	}
	KUNIT_EXPECT_LT(test, f->q.tail, 0x10U);	/* it did wrap */
	/* closed means freed */
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 300, 1, 0, false),
			SPULSE_OC_CLOSE_NONE);
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), 0U);
}

static void full_queue_refuses_and_keeps_its_entries(struct kunit *test)
{
	struct oc_fix *o = oc_new(test, 64);
	struct q_fix *f = q_new(test);
	u32 i;

	for (i = 0; i < QN; i++) {
		open_woken(test, o, 500 + i, 100 + i);
		KUNIT_ASSERT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 500 + i,
							     1000, 0, false),
				SPULSE_OC_CLOSE_QUEUED);
	}
	KUNIT_EXPECT_NULL(test, spulse_oc_queue_tail(&f->q));
	/* one more: refused (the probe counts it), its slot freed all the same */
	open_woken(test, o, 600, 200);
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 600, 1000, 0,
						     false),
			SPULSE_OC_CLOSE_QUEUE_FULL);
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&o->t, 600, &o->out));
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), (u32)QN);
	/* the queued ones were not touched by the refused close */
	for (i = 0; i < QN; i++) {
		expect_entry(test, spulse_oc_queue_head(&f->q), 500 + i, 100 + i, 1000);
		spulse_oc_queue_pop(&f->q);
	}
	/* room again */
	open_woken(test, o, 601, 300);
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 601, 1000, 0,
						     false),
			SPULSE_OC_CLOSE_QUEUED);
	expect_entry(test, spulse_oc_queue_head(&f->q), 601, 300, 1000);
}

static void close_queued_minimum_and_busy(struct kunit *test)
{
	struct oc_fix *o = oc_new(test, 64);
	struct q_fix *f = q_new(test);

	/* 1000 -> 1500: shorter than 501 ns is filtered, freed, not queued */
	open_woken(test, o, 700, 1000);
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 700, 1500, 501,
						     false),
			SPULSE_OC_CLOSE_FILTERED);
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&o->t, 700, &o->out));
	/* exactly the minimum is kept */
	open_woken(test, o, 701, 1000);
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 701, 1500, 500,
						     false),
			SPULSE_OC_CLOSE_QUEUED);
	/* a CPU that cannot write: closed, not queued */
	open_woken(test, o, 702, 1000);
	KUNIT_EXPECT_EQ(test, spulse_oc_close_queued(&o->t, &f->q, 702, 5000, 0,
						     true),
			SPULSE_OC_CLOSE_BUSY);
	KUNIT_EXPECT_FALSE(test, spulse_oc_close(&o->t, 702, &o->out));
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), 1U);
	expect_entry(test, spulse_oc_queue_head(&f->q), 701, 1000, 1500);
}

struct q_seen {
	u32 n;
	u32 tid[QN];
};

static void q_record(void *arg, const struct spulse_oc_closed *e)
{
	struct q_seen *seen = arg;

	if (seen->n < QN)
		seen->tid[seen->n] = e->s.self.tid;
	seen->n++;
}

static void drain_and_discard_empty_the_queue(struct kunit *test)
{
	struct oc_fix *o = oc_new(test, 64);
	struct q_fix *f = q_new(test);
	struct q_seen seen = {};
	u32 i;

	KUNIT_EXPECT_EQ(test, spulse_oc_queue_drain(&f->q, q_record, &seen), 0U);
	KUNIT_EXPECT_EQ(test, seen.n, 0U);
	for (i = 0; i < 3; i++) {
		open_woken(test, o, 800 + i, 10 + i);
		spulse_oc_close_queued(&o->t, &f->q, 800 + i, 100, 0, false);
	}
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_drain(&f->q, q_record, &seen), 3U);
	KUNIT_ASSERT_EQ(test, seen.n, 3U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, seen.tid[i], 800 + i);
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&f->q), 0U);
	/* discard (an offline CPU at stop): counted, emptied, nothing handed */
	for (i = 0; i < 2; i++) {
		open_woken(test, o, 900 + i, 10);
		spulse_oc_close_queued(&o->t, &f->q, 900 + i, 100, 0, false);
	}
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_discard(&f->q), 2U);
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_discard(&f->q), 0U);
	KUNIT_EXPECT_NULL(test, spulse_oc_queue_head(&f->q));
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_drain(&f->q, q_record, &seen), 0U);
	KUNIT_EXPECT_EQ(test, seen.n, 3U);
}

/* ---- the waker's kernel stack in interrupt context (kstack.h) ---- */

#define KS_MAX 64

struct ks_irq {
	struct irq_work w;
	unsigned long cut[KS_MAX + SPULSE_KSTACK_SLACK];
	unsigned long full[KS_MAX + SPULSE_KSTACK_SLACK];
	int ncut, nfull;
	bool cut_deep, full_deep, in_task;
};

/* Both walks from the same function: the same frames up to the cut. */
static void ks_walk(struct ks_irq *k)
{
	k->in_task = in_task();
	k->nfull = spulse_kstack_here(k->full, KS_MAX, &k->full_deep, false);
	k->ncut = spulse_kstack_here(k->cut, KS_MAX, &k->cut_deep, true);
}

static void ks_irq_fn(struct irq_work *w)
{
	ks_walk(container_of(w, struct ks_irq, w));
}

/*
 * In hard IRQ (an irq_work raised on this CPU: the self-IPI), the cut
 * walk is the full walk's prefix that ends at the interrupt entry: its
 * last frame is an asm_ entry and the full walk goes on into the task the
 * interrupt hit. In task context the cut changes nothing.
 */
static void waker_stack_in_irq_ends_at_the_entry(struct kunit *test)
{
	struct ks_irq *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);
	char name[KSYM_SYMBOL_LEN];
	int i;

	if (!IS_ENABLED(CONFIG_UNWINDER_ORC) || !IS_ENABLED(CONFIG_X86_64))
		kunit_skip(test, "needs the x86-64 ORC unwinder");
	KUNIT_ASSERT_NOT_NULL(test, k);
	ks_walk(k);
	KUNIT_EXPECT_TRUE(test, k->in_task);
	KUNIT_EXPECT_GT(test, k->nfull, 0);
	KUNIT_EXPECT_EQ(test, k->ncut, k->nfull);
	for (i = 0; i < k->ncut && i < k->nfull; i++)
		KUNIT_EXPECT_EQ(test, k->cut[i], k->full[i]);

	memset(k, 0, sizeof(*k));
#ifdef IRQ_WORK_INIT_HARD
	k->w = IRQ_WORK_INIT_HARD(ks_irq_fn);
#else
	init_irq_work(&k->w, ks_irq_fn);
#endif
	KUNIT_ASSERT_TRUE(test, irq_work_queue(&k->w));
	irq_work_sync(&k->w);
	KUNIT_ASSERT_FALSE(test, k->in_task);
	KUNIT_EXPECT_FALSE(test, k->cut_deep);
	KUNIT_ASSERT_GT(test, k->ncut, 0);
	KUNIT_EXPECT_LT(test, k->ncut, k->nfull);
	for (i = 0; i < k->ncut && i < k->nfull; i++)
		KUNIT_EXPECT_EQ(test, k->cut[i], k->full[i]);
	sprint_symbol_no_offset(name, k->cut[k->ncut - 1]);
	KUNIT_EXPECT_EQ_MSG(test, strncmp(name, "asm_", 4), 0,
			    "last frame %s, not an interrupt entry", name);
	for (i = 0; i < k->ncut; i++) {
		sprint_symbol_no_offset(name, k->cut[i]);
		kunit_info(test, "cut frame %d: %s", i, name);
	}
}

/* Who makes the switch-in leave the writer for later. */
static void defer_only_user_rt_tasks(struct kunit *test)
{
	struct task_struct *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->prio = MAX_RT_PRIO - 1 - 95;		/* SCHED_FIFO 95 */
	KUNIT_EXPECT_TRUE(test, spulse_oc_defer(p));
	p->prio = -1;				/* SCHED_DEADLINE */
	KUNIT_EXPECT_TRUE(test, spulse_oc_defer(p));
	p->prio = MAX_RT_PRIO - 1;		/* SCHED_FIFO 0 (boosted) */
	KUNIT_EXPECT_TRUE(test, spulse_oc_defer(p));
	p->prio = MAX_RT_PRIO;			/* nice -20 */
	KUNIT_EXPECT_FALSE(test, spulse_oc_defer(p));
	p->prio = DEFAULT_PRIO;
	KUNIT_EXPECT_FALSE(test, spulse_oc_defer(p));
	p->prio = MAX_RT_PRIO - 1 - 99;		/* migration/N, irq threads */
	p->flags = PF_KTHREAD;
	KUNIT_EXPECT_FALSE(test, spulse_oc_defer(p));
	/* this KUnit thread: a kernel thread, not RT */
	KUNIT_EXPECT_FALSE(test, spulse_oc_defer(current));
}

static struct kunit_case spulse_offcpu_table_cases[] = {
	KUNIT_CASE(table_sizes),
	KUNIT_CASE(open_close_round_trip_keeps_both_stacks),
	KUNIT_CASE(wake_of_unslotted_or_runnable_thread),
	KUNIT_CASE(early_wake_validated_by_switch_count),
	KUNIT_CASE(wakeup_done_removes_stale_early_slot),
	KUNIT_CASE(full_bucket_refuses_and_stays_intact),
	KUNIT_CASE(many_threads_in_a_big_table),
	KUNIT_CASE(sweep_counts_and_empties),
	KUNIT_CASE(interval_arithmetic_edges),
	KUNIT_CASE(stack_frames_order_and_marker),
	KUNIT_CASE(state_numbers_match_the_kernel),
	KUNIT_CASE(queue_keeps_close_order_across_the_wrap),
	KUNIT_CASE(full_queue_refuses_and_keeps_its_entries),
	KUNIT_CASE(close_queued_minimum_and_busy),
	KUNIT_CASE(drain_and_discard_empty_the_queue),
	KUNIT_CASE(waker_stack_in_irq_ends_at_the_entry),
	KUNIT_CASE(defer_only_user_rt_tasks),
	{}
};

static struct kunit_suite spulse_offcpu_table_suite = {
	.name = "spulse_offcpu_table",
	.test_cases = spulse_offcpu_table_cases,
};

/* ---- the encoder ---- */

struct enc_fix {
	struct spulse_enc e;
	struct spulse_batch b;
	struct sk_stream *sk;
	struct spulse_frame scratch[2 * DEPTH + 2];
	struct oc_fix *oc;
};

static struct enc_fix *enc_new(struct kunit *test, u32 shift, size_t cap, u32 cpu)
{
	struct enc_fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	size_t n = 1U << shift;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->sk = kunit_kzalloc(test, sizeof(*f->sk), GFP_KERNEL);
	f->b.buf = kunit_kzalloc(test, cap, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->sk);
	KUNIT_ASSERT_NOT_NULL(test, f->b.buf);
	f->b.cap = cap;
	spulse_intern_init(&f->e.frames, kunit_kcalloc(test, n,
			   sizeof(struct spulse_intern_ent), GFP_KERNEL), shift);
	spulse_intern_init(&f->e.stacks, kunit_kcalloc(test, n,
			   sizeof(struct spulse_intern_ent), GFP_KERNEL), shift);
	spulse_intern_init(&f->e.threads, kunit_kcalloc(test, n,
			   sizeof(struct spulse_intern_ent), GFP_KERNEL), shift);
	KUNIT_ASSERT_NOT_NULL(test, f->e.frames.ent);
	KUNIT_ASSERT_NOT_NULL(test, f->e.stacks.ent);
	KUNIT_ASSERT_NOT_NULL(test, f->e.threads.ent);
	/* the stack cache as spulse.ko has it (kmod/percpu.c) */
	f->e.scache.ent = kunit_kcalloc(test, 1U << SPULSE_SCACHE_SHIFT,
					sizeof(struct spulse_scache_ent),
					GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->e.scache.ent);
	f->e.scache.shift = SPULSE_SCACHE_SHIFT;
	f->e.cpu = cpu;
	sk_init(f->sk);
	f->oc = oc_new(test, 64);
	return f;
}

static void feed(struct kunit *test, struct enc_fix *f)
{
	KUNIT_ASSERT_EQ_MSG(test, sk_feed(f->sk, f->b.buf, f->b.len), 0,
			    "checker: %s at batch offset %zu", f->sk->err,
			    f->sk->err_off);
}

/* A closed slot: thread a switched out at t_out, woken by b at t_wake. */
static struct spulse_oc_slot *closed(struct kunit *test, struct enc_fix *f,
				     u8 state, u64 t_out, bool woken, u64 t_wake)
{
	struct oc_fix *o = f->oc;

	KUNIT_ASSERT_GE(test, spulse_oc_open(&o->t, &o->a, state, 1, t_out, 1), 0);
	if (woken)
		spulse_oc_wake(&o->t, o->a.tid, false, 1, &o->b, 0, t_wake);
	KUNIT_ASSERT_TRUE(test, spulse_oc_close(&o->t, o->a.tid, &o->out));
	return &o->out;
}

static void interval_record_decodes_field_by_field(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 3);
	struct spulse_oc_slot *s;

	who(&f->oc->a, 700, 701, "reader", 3, 4, 0x100);
	who(&f->oc->b, 700, 702, "writer", 2, 3, 0x900);
	s = closed(test, f, SPULSE_STATE_SLEEPING, 10000, true, 30000);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 34000, 3,
							f->scratch, 1, 1000), 0);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_TRUE(test, f->sk->first_is_cpu);
	KUNIT_EXPECT_EQ(test, f->sk->cpu, 3);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 2U);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 12U);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 12U);
	KUNIT_ASSERT_EQ(test, f->sk->n_offcpu, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->oc_t, 10000LL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.thread, 0U);
	KUNIT_EXPECT_EQ(test, f->sk->oc.state, (u32)SPULSE_STATE_SLEEPING);
	KUNIT_EXPECT_EQ(test, f->sk->oc.cpu_out, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->oc.cpu_in, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->oc.blocked_ns, 20000ULL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.runq_ns, 4000ULL);
	KUNIT_EXPECT_TRUE(test, f->sk->oc.has_waker);
	KUNIT_EXPECT_EQ(test, f->sk->oc.waker_thread, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->oc.waker_cpu, 0U);
	/* leaf = the innermost kernel frame, depth = user + kernel frames */
	KUNIT_EXPECT_EQ(test, f->sk->oc_stack_depth, 7U);
	KUNIT_EXPECT_EQ(test, f->sk->oc_leaf_addr, 0xffffffff81000000ULL + 0x100 + 6 * 0x10);
	KUNIT_EXPECT_EQ(test, f->sk->stack_depth[f->sk->oc.waker_stack], 5U);

	/*
	 * A second interval of the same threads: only the record, event clock
	 * relative to the first, a negative delta when it started earlier.
	 */
	s = closed(test, f, SPULSE_STATE_SLEEPING, 4000, true, 5000);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 36000, 2,
							f->scratch, 1, 1000), 0);
	KUNIT_EXPECT_EQ(test, f->b.records, 1U);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_EQ(test, f->sk->oc.dt_ns, -6000LL);
	KUNIT_EXPECT_EQ(test, f->sk->oc_t, 4000LL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.blocked_ns, 1000ULL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.runq_ns, 31000ULL);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 2U);
}

static void preempted_interval_has_no_waker(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 0);
	struct spulse_oc_slot *s;

	who(&f->oc->a, 1, 2, "spin", 1, 2, 0);
	who(&f->oc->b, 1, 3, "other", 1, 1, 0);
	s = closed(test, f, SPULSE_STATE_RUNNABLE, 100, false, 0);
	s->has_waker = true;	/* even a stray waker is not encoded for R */
	s->t_wake = 150;
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 400, 0,
							f->scratch, 1, 1000), 0);
	feed(test, f);
	KUNIT_EXPECT_EQ(test, f->sk->oc.state, (u32)SPULSE_STATE_RUNNABLE);
	KUNIT_EXPECT_FALSE(test, f->sk->oc.has_waker);
	KUNIT_EXPECT_EQ(test, f->sk->oc.blocked_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.runq_ns, 300ULL);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 1U);
}

static void truncated_and_empty_stacks_encode_a_root_marker(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 1);
	struct spulse_oc_slot *s;

	who(&f->oc->a, 1, 2, "t", 2, 1, 0);
	f->oc->a.st.trunc = true;
	who(&f->oc->b, 1, 3, "w", 0, 0, 0);	/* e.g. an idle-task waker */
	s = closed(test, f, SPULSE_STATE_DISK, 100, true, 200);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 400, 1,
							f->scratch, 1, 1000), 0);
	feed(test, f);
	KUNIT_EXPECT_EQ(test, f->sk->oc.state, (u32)SPULSE_STATE_DISK);
	KUNIT_EXPECT_EQ(test, f->sk->oc_stack_depth, 4U);	/* marker + 3 */
	KUNIT_EXPECT_EQ(test, f->sk->stack_depth[f->sk->oc.waker_stack], 1U);
	KUNIT_EXPECT_EQ(test, f->sk->n_trunc_frames, 1U);	/* shared marker */
}

static void interval_too_big_rolls_back(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 64, 0);	/* < one batch */
	struct spulse_oc_slot *s;

	who(&f->oc->a, 1, 2, "t", 4, 4, 0);
	who(&f->oc->b, 1, 3, "w", 4, 4, 0x1000);
	s = closed(test, f, SPULSE_STATE_SLEEPING, 100, true, 200);
	KUNIT_EXPECT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 400, 0,
							f->scratch, 1, 1000), -E2BIG);
	KUNIT_EXPECT_FALSE(test, f->e.header_done);
	KUNIT_EXPECT_EQ(test, f->e.next_thread, 0U);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 0U);
	KUNIT_EXPECT_EQ(test, f->e.next_stack, 0U);
	KUNIT_EXPECT_EQ(test, f->e.last_event_ns, 0ULL);
}

static void trigger_record_and_text_clamp(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 5);
	char *text = kunit_kzalloc(test, 400, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, text);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_trigger(&f->e, &f->b, 7000,
							 SPULSE_TRIGGER_MANUAL,
							 "debugfs trigger", 1, 1000), 0);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, 7000);
	KUNIT_EXPECT_TRUE(test, f->sk->first_is_cpu);
	KUNIT_EXPECT_EQ(test, f->sk->cpu, 5);
	KUNIT_ASSERT_EQ(test, f->sk->n_triggers, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->tr_t, 7000LL);
	KUNIT_EXPECT_EQ(test, f->sk->tr.reason, (u32)SPULSE_TRIGGER_MANUAL);
	KUNIT_EXPECT_EQ(test, f->sk->tr.seq, 0U);
	KUNIT_EXPECT_EQ(test, f->sk->tr.window_start_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, f->sk->tr.window_end_ns, 0ULL);
	KUNIT_EXPECT_STREQ(test, f->sk->tr_text, "debugfs trigger");
	/* a 399-byte text is clamped to 256 */
	memset(text, 'x', 399);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_trigger(&f->e, &f->b, 6000,
							 SPULSE_TRIGGER_MANUAL,
							 text, 1, 1000), 0);
	feed(test, f);
	KUNIT_EXPECT_EQ(test, f->sk->tr.text_len, (size_t)SPULSE_MAX_TRIGGER_TEXT);
	KUNIT_EXPECT_EQ(test, f->sk->tr_t, 6000LL);
}

/* The checker rejects what the kernel must never write. */
static void stream_check_rejects_bad_extension_records(struct kunit *test)
{
	struct sk_stream *sk = kunit_kzalloc(test, sizeof(*sk), GFP_KERNEL);
	struct spulse_offcpu_fields oc = { .dt_ns = 10, .state = 1,
					   .blocked_ns = 5, .runq_ns = 5 };
	u8 *buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	size_t n, h;

	KUNIT_ASSERT_NOT_NULL(test, sk);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	h = spulse_enc_header(buf, 1, 1000);
	h += spulse_enc_ext_cpu(buf + h, 2);
	h += spulse_enc_thread(buf + h, 0, 1, 1, "t", 1);
	h += spulse_enc_frame_abs(buf + h, 0, SPULSE_FRAME_KERNEL, 0xffffffff81000000ULL);
	h += spulse_enc_stack(buf + h, 0, SPULSE_STACK_ROOT, 0);
	sk_init(sk);
	KUNIT_ASSERT_EQ(test, sk_feed(sk, buf, h), 0);
	KUNIT_EXPECT_TRUE(test, sk->first_is_cpu);
	/* valid interval */
	n = spulse_enc_ext_offcpu(buf, &oc);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), 0);
	/* stack 1 was never defined */
	oc.stack = 1;
	n = spulse_enc_ext_offcpu(buf, &oc);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "interval stack not defined");
	oc.stack = 0;
	/* R with blocked time */
	oc.state = SPULSE_STATE_RUNNABLE;
	n = spulse_enc_ext_offcpu(buf, &oc);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "R interval with blocked time or waker");
	oc.state = 1;
	/* event before the profile start */
	oc.dt_ns = -1000;
	n = spulse_enc_ext_offcpu(buf, &oc);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "event before profile start");
	oc.dt_ns = 0;
	/* a payload one byte longer than its fields */
	n = spulse_enc_ext_offcpu(buf, &oc);
	buf[2]++;
	buf[n++] = 0;
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "extension payload length mismatch");
	/* a waker that was never defined */
	oc.has_waker = true;
	oc.waker_thread = 4;
	n = spulse_enc_ext_offcpu(buf, &oc);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "waker thread not defined");
	/* cpu 65536 */
	n = spulse_enc_ext_cpu(buf, SPULSE_MAX_CPU);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	/* an extension kind the kernel does not write */
	buf[0] = SPULSE_TAG_EXT;
	buf[1] = 7;
	buf[2] = 0;
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, 3), -EINVAL);
}

/*
 * Random samples, intervals and triggers into one stream with tiny intern
 * tables (resets) and random drops (rollback): every written byte decodes,
 * the event clock is the last committed switch-out/trigger time.
 */
static void random_mix_never_dangles(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 4, 8192, 1);
	struct spulse_frame fr[DEPTH];
	struct spulse_sample smp;
	struct rnd_state r;
	u32 i, k, written = 0, ivs = 0, trig = 0;
	u64 t = 1000, last_ev = 0;

	prandom_seed_state(&r, 42);
	for (i = 0; i < 3000; i++) {
		u32 what = prandom_u32_state(&r) % 3;
		bool drop = prandom_u32_state(&r) % 5 == 0;
		int rc;

		t += 1 + prandom_u32_state(&r) % 100000;
		if (what == 0) {
			u32 n = 1 + prandom_u32_state(&r) % DEPTH;

			for (k = 0; k < n; k++)
				fr[k] = (struct spulse_frame){
					k < n / 2 ? SPULSE_FRAME_USER : SPULSE_FRAME_KERNEL,
					0x1000 + (prandom_u32_state(&r) % 64) * 16 };
			memset(&smp, 0, sizeof(smp));
			smp.pid = 10;
			smp.tid = 10 + prandom_u32_state(&r) % 20;
			strscpy(smp.comm, "w", sizeof(smp.comm));
			smp.frames = fr;
			smp.n = n;
			smp.t_ns = t;
			rc = spulse_batch_build(&f->e, &f->b, &smp, 1, 1000);
			KUNIT_ASSERT_EQ(test, rc, 0);
			if (drop) {
				spulse_batch_rollback(&f->e, &f->b);
				continue;
			}
			feed(test, f);
			spulse_batch_commit(&f->e, &f->b, t);
		} else if (what == 1) {
			u64 back = prandom_u32_state(&r) % 50000;
			u64 out = t > back ? t - back : t;
			struct spulse_oc_slot *s;

			who(&f->oc->a, 10, 10 + prandom_u32_state(&r) % 20, "w",
			    prandom_u32_state(&r) % 4, 1 + prandom_u32_state(&r) % 4,
			    (prandom_u32_state(&r) % 8) * 0x40);
			who(&f->oc->b, 10, 40 + prandom_u32_state(&r) % 5, "k",
			    prandom_u32_state(&r) % 3, prandom_u32_state(&r) % 3, 0x800);
			s = closed(test, f, prandom_u32_state(&r) % 3, out,
				   prandom_u32_state(&r) % 2, out + 10);
			rc = spulse_batch_build_offcpu(&f->e, &f->b, s, t, 1,
						       f->scratch, 1, 1000);
			KUNIT_ASSERT_EQ(test, rc, 0);
			if (drop) {
				spulse_batch_rollback(&f->e, &f->b);
				continue;
			}
			feed(test, f);
			spulse_batch_commit_event(&f->e, &f->b, out);
			last_ev = out;
			ivs++;
		} else {
			rc = spulse_batch_build_trigger(&f->e, &f->b, t,
							SPULSE_TRIGGER_MANUAL, "m",
							1, 1000);
			KUNIT_ASSERT_EQ(test, rc, 0);
			if (drop) {
				spulse_batch_rollback(&f->e, &f->b);
				continue;
			}
			feed(test, f);
			spulse_batch_commit_event(&f->e, &f->b, t);
			last_ev = t;
			trig++;
		}
		written++;
	}
	KUNIT_EXPECT_EQ(test, f->sk->n_offcpu, ivs);
	KUNIT_EXPECT_EQ(test, f->sk->n_triggers, trig);
	KUNIT_EXPECT_EQ(test, (u64)f->sk->event_ns, last_ev);
	KUNIT_EXPECT_EQ(test, f->sk->n_cpu_records, 1U);
	KUNIT_EXPECT_GT(test, written, 2000U);
	KUNIT_EXPECT_GT(test, ivs, 600U);
	/* the stack cache answered some of them, and nothing dangled */
	KUNIT_EXPECT_GT(test, f->e.scache.hits, 0ULL);
	KUNIT_EXPECT_GT(test, f->e.scache.misses, 0ULL);
}

/*
 * The stack cache: a repeated interval takes both stacks from it (same
 * ids, no definitions), a different stack misses and is defined.
 */
static void stack_cache_hit_reuses_the_ids(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 0);
	struct spulse_oc_slot *s;
	u32 stack, wstack, frames, stacks;

	who(&f->oc->a, 700, 701, "reader", 3, 4, 0x100);
	who(&f->oc->b, 700, 702, "writer", 2, 3, 0x900);
	s = closed(test, f, SPULSE_STATE_SLEEPING, 100, true, 200);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 300, 0,
							f->scratch, 1, 1000), 0);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_EQ(test, f->e.scache.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, f->e.scache.misses, 2ULL);
	stack = f->sk->oc.stack;
	wstack = f->sk->oc.waker_stack;
	frames = f->sk->n_frames;
	stacks = f->sk->n_stacks;

	s = closed(test, f, SPULSE_STATE_SLEEPING, 400, true, 500);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 600, 0,
							f->scratch, 1, 1000), 0);
	KUNIT_EXPECT_EQ(test, f->b.records, 1U);	/* the interval alone */
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_EQ(test, f->e.scache.hits, 2ULL);
	KUNIT_EXPECT_EQ(test, f->sk->oc.stack, stack);
	KUNIT_EXPECT_EQ(test, f->sk->oc.waker_stack, wstack);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, frames);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, stacks);

	/* one address changed: a miss, a new leaf of the right depth */
	f->oc->a.st.addr[6] += 0x8;
	s = closed(test, f, SPULSE_STATE_SLEEPING, 700, true, 800);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 900, 0,
							f->scratch, 1, 1000), 0);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_EQ(test, f->e.scache.hits, 3ULL);	/* the waker's */
	KUNIT_EXPECT_NE(test, f->sk->oc.stack, stack);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, frames + 1);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, stacks + 1);
	KUNIT_EXPECT_EQ(test, f->sk->oc_stack_depth, 7U);
	KUNIT_EXPECT_EQ(test, f->sk->oc_leaf_addr,
			0xffffffff81000000ULL + 0x100 + 6 * 0x10 + 0x8);
}

/*
 * A rolled-back batch (its ids were never written) and a reset encoder
 * invalidate the cache: the next interval defines its stacks again, and
 * the checker sees no dangling reference.
 */
static void stack_cache_invalidated_by_rollback_and_reset(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 0);
	struct spulse_oc_slot *s;
	u64 gen;

	who(&f->oc->a, 1, 2, "t", 2, 3, 0x100);
	who(&f->oc->b, 1, 3, "w", 1, 2, 0x900);
	s = closed(test, f, SPULSE_STATE_SLEEPING, 100, true, 200);
	gen = f->e.gen;
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 300, 0,
							f->scratch, 1, 1000), 0);
	spulse_batch_rollback(&f->e, &f->b);	/* the relay refused it */
	KUNIT_EXPECT_NE(test, f->e.gen, gen);

	s = closed(test, f, SPULSE_STATE_SLEEPING, 400, true, 500);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 600, 0,
							f->scratch, 1, 1000), 0);
	KUNIT_EXPECT_EQ(test, f->e.scache.hits, 0ULL);
	KUNIT_EXPECT_GT(test, f->b.records, 1U);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 5U + 3);

	gen = f->e.gen;
	spulse_enc_reset(&f->e);
	KUNIT_EXPECT_NE(test, f->e.gen, gen);
	s = closed(test, f, SPULSE_STATE_SLEEPING, 700, true, 800);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_offcpu(&f->e, &f->b, s, 900, 0,
							f->scratch, 1, 1000), 0);
	KUNIT_EXPECT_EQ(test, f->e.scache.hits, 0ULL);
	feed(test, f);
	spulse_batch_commit_event(&f->e, &f->b, s->t_out);
	/* defined again under new ids, every reference resolves */
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 2U * (5 + 3));
	KUNIT_EXPECT_EQ(test, f->sk->n_offcpu, 2U);
}

/* The cache API itself: an entry answers only for exactly its stack. */
static void stack_cache_compares_the_whole_chain(struct kunit *test)
{
	struct spulse_scache c = { .shift = 2 };
	u64 a[SPULSE_SCACHE_DEPTH + 1], b[SPULSE_SCACHE_DEPTH + 1];
	struct spulse_oc_stack sa = { false, 2, 3, a }, sb = { false, 2, 3, b };
	u32 i, leaf = 0;
	u64 h;

	for (i = 0; i <= SPULSE_SCACHE_DEPTH; i++)
		a[i] = b[i] = 0x1000 + i * 8;
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 1, 0, &sa, &leaf));
	spulse_scache_put(&c, 1, 0, &sa, 7);	/* no storage: nothing */
	c.ent = kunit_kcalloc(test, 4, sizeof(*c.ent), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c.ent);
	/* a zeroed entry is empty, whatever the generation */
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 0, 0, &sa, &leaf));
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 1, 0, &sa, &leaf));

	h = spulse_scache_hash(&sa);
	KUNIT_EXPECT_EQ(test, spulse_scache_hash(&sb), h);
	spulse_scache_put(&c, 5, h, &sa, 42);
	KUNIT_EXPECT_TRUE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));
	KUNIT_EXPECT_EQ(test, leaf, 42U);
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 6, h, &sb, &leaf));

	/* same hash given, different chain: never confused */
	b[4]++;
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));
	b[4]--;
	sb.nu = 3;
	sb.nk = 2;	/* same addresses, other user/kernel split */
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));
	sb.nu = 2;
	sb.nk = 3;
	sb.trunc = true;
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));
	sb.trunc = false;
	sb.nk = 2;	/* a prefix */
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));
	KUNIT_EXPECT_NE(test, spulse_scache_hash(&sb), h);
	sb.nk = 3;
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h + 1, &sb, &leaf));
	KUNIT_EXPECT_TRUE(test, spulse_scache_find(&c, 5, h, &sb, &leaf));

	/* a stack deeper than the cache keeps is not stored */
	sa.nu = 1;
	sa.nk = SPULSE_SCACHE_DEPTH;
	h = spulse_scache_hash(&sa);
	spulse_scache_put(&c, 5, h, &sa, 9);
	KUNIT_EXPECT_FALSE(test, spulse_scache_find(&c, 5, h, &sa, &leaf));
}


struct q_enc {
	struct kunit *test;
	struct enc_fix *f;
	u32 n;
	s64 t[QN];
	u64 blocked[QN], runq[QN], leaf[QN];
};

/* Stop's writer, in miniature: encode, check, commit, note what came out. */
static void q_encode(void *arg, const struct spulse_oc_closed *e)
{
	struct q_enc *x = arg;
	struct enc_fix *f = x->f;

	KUNIT_ASSERT_EQ(x->test, spulse_batch_build_offcpu(&f->e, &f->b, &e->s,
							   e->t_in, 5, f->scratch,
							   1, 1000), 0);
	feed(x->test, f);
	spulse_batch_commit_event(&f->e, &f->b, e->s.t_out);
	KUNIT_ASSERT_LT(x->test, x->n, (u32)QN);
	x->t[x->n] = f->sk->oc_t;
	x->blocked[x->n] = f->sk->oc.blocked_ns;
	x->runq[x->n] = f->sk->oc.runq_ns;
	x->leaf[x->n] = f->sk->oc_leaf_addr;
	x->n++;
}

static void queued_intervals_drain_into_the_stream_in_order(struct kunit *test)
{
	struct enc_fix *f = enc_new(test, 8, 8192, 5);
	struct q_fix *q = q_new(test);
	struct q_enc x = { .test = test, .f = f };
	/* close order, not switch-out order: the second left first */
	static const u32 tid[3] = { 1201, 1202, 1203 };
	static const u64 t_out[3] = { 9000, 2000, 7000 };
	u32 i;

	for (i = 0; i < 3; i++) {
		open_woken(test, f->oc, tid[i], t_out[i]);
		KUNIT_ASSERT_EQ(test, spulse_oc_close_queued(&f->oc->t, &q->q, tid[i],
							     20000 + i * 100, 0,
							     false),
				SPULSE_OC_CLOSE_QUEUED);
	}
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_drain(&q->q, q_encode, &x), 3U);
	KUNIT_ASSERT_EQ(test, x.n, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_offcpu, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->cpu, 5);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, x.t[i], (s64)t_out[i]);
		KUNIT_EXPECT_EQ(test, x.blocked[i], 10ULL);
		KUNIT_EXPECT_EQ(test, x.runq[i], 20000 + i * 100 - t_out[i] - 10);
		KUNIT_EXPECT_EQ(test, x.leaf[i], 0xffffffff81000000ULL +
				tid[i] * 0x1000ULL + 4 * 0x10);
	}
	KUNIT_EXPECT_EQ(test, spulse_oc_queue_len(&q->q), 0U);
}

static struct kunit_case spulse_offcpu_encode_cases[] = {
	KUNIT_CASE(stack_cache_hit_reuses_the_ids),
	KUNIT_CASE(stack_cache_invalidated_by_rollback_and_reset),
	KUNIT_CASE(stack_cache_compares_the_whole_chain),
	KUNIT_CASE(stream_check_rejects_bad_extension_records),
	KUNIT_CASE(interval_record_decodes_field_by_field),
	KUNIT_CASE(preempted_interval_has_no_waker),
	KUNIT_CASE(truncated_and_empty_stacks_encode_a_root_marker),
	KUNIT_CASE(interval_too_big_rolls_back),
	KUNIT_CASE(trigger_record_and_text_clamp),
	KUNIT_CASE(random_mix_never_dangles),
	KUNIT_CASE(queued_intervals_drain_into_the_stream_in_order),
	{}
};

static struct kunit_suite spulse_offcpu_encode_suite = {
	.name = "spulse_offcpu_encode",
	.test_cases = spulse_offcpu_encode_cases,
};

kunit_test_suites(&spulse_offcpu_table_suite, &spulse_offcpu_encode_suite);
