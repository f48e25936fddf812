// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU slot table: which target threads are off CPU right now, since
 * when, with which stack, and who woke them. Fixed size, allocated at load
 * (spulse_oc_table_bytes()), hashed by tid into buckets of SPULSE_OC_BUCKET
 * slots (bounded probing: one bucket), one raw spinlock per stripe of
 * buckets. Every function takes at most one stripe lock and nothing under
 * it, so it can be called inside the scheduler's rq lock or a task's
 * pi_lock; callers have interrupts disabled (the lock is never taken from
 * NMI). No allocation, no globals: KUnit drives it with its own memory.
 *
 * For KUnit (ktest): every function here is pure and exported with
 * EXPORT_SYMBOL_IF_KUNIT:
 *   spulse_oc_table_bytes(), spulse_oc_table_slots(), spulse_oc_table_init(),
 *   spulse_oc_stack_copy(), spulse_oc_open(), spulse_oc_wake(),
 *   spulse_oc_wake_peek(), spulse_oc_wakeup_done(), spulse_oc_close(), spulse_oc_sweep(),
 *   spulse_oc_interval(), spulse_oc_stack_frames(), and the per-CPU queue
 *   of closed intervals: spulse_oc_queue_init(), spulse_oc_queue_len(),
 *   spulse_oc_queue_tail(), spulse_oc_queue_push(), spulse_oc_queue_head(),
 *   spulse_oc_queue_pop(), spulse_oc_queue_discard(), spulse_oc_close_queued(),
 *   spulse_oc_queue_drain().
 * Useful properties to test: open/close round trip keeps both stacks; a
 * full bucket refuses (-ENOSPC) and leaves the table intact; an EARLY slot
 * is applied at open only when nsw matches (nsw_at_wake or +1) and the
 * state is not R, otherwise reported stale; spulse_oc_wakeup_done() removes
 * an EARLY slot; sweep counts OFF slots and empties the table; interval
 * arithmetic (R, early wake, no waker, t_in before t_out); the queue keeps
 * close order, refuses when full without touching what it holds, and
 * discard empties it and says how many it dropped.
 */
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "offcpu.h"
#include "kunit_export.h"

/**
 * spulse_oc_table_slots() - slots a table for @threads threads has
 * @threads: requested size (offcpu_threads)
 *
 * Return: @threads rounded up to a multiple of SPULSE_OC_BUCKET.
 */
u32 spulse_oc_table_slots(u32 threads)
{
	return round_up(threads ? threads : 1, SPULSE_OC_BUCKET);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_table_slots);

/**
 * spulse_oc_table_bytes() - memory of a slot table
 * @threads: requested size
 * @depth: frames per stack (max_user_depth + max_kernel_depth)
 *
 * Return: slots * (sizeof(struct spulse_oc_slot) + 2 * @depth * 8).
 */
size_t spulse_oc_table_bytes(u32 threads, u32 depth)
{
	return (size_t)spulse_oc_table_slots(threads) *
	       (sizeof(struct spulse_oc_slot) + 2 * (size_t)depth * sizeof(u64));
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_table_bytes);

/**
 * spulse_oc_table_init() - set up an empty table over caller memory
 * @t: table
 * @slot: spulse_oc_table_slots(@threads) zeroed slots
 * @store: 2 * @depth u64 per slot
 * @threads: requested size
 * @depth: frames per stack
 */
void spulse_oc_table_init(struct spulse_oc_table *t, struct spulse_oc_slot *slot,
			  u64 *store, u32 threads, u32 depth)
{
	u32 i;

	t->slot = slot;
	t->store = store;
	t->n = spulse_oc_table_slots(threads);
	t->depth = depth;
	atomic_set(&t->early, 0);
	for (i = 0; i < SPULSE_OC_STRIPES; i++)
		raw_spin_lock_init(&t->lock[i]);
	for (i = 0; i < t->n; i++) {
		memset(&slot[i], 0, sizeof(slot[i]));
		slot[i].self.st.addr = store + (size_t)i * 2 * depth;
		slot[i].waker.st.addr = store + ((size_t)i * 2 + 1) * depth;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_table_init);

/**
 * spulse_oc_stack_copy() - copy a stack (the frames, not the pointer)
 * @dst: destination, room for the frames; a NULL @dst->addr takes the
 *	counts only (a close whose interval has nowhere to go)
 * @src: source
 *
 * A word loop rather than memcpy(): the kernel's memcpy() is "rep movsb"
 * on CPUs with ERMS, which an emulated CPU (QEMU TCG, where the benchmarks
 * run) executes byte by byte; this copy runs up to four times per context
 * switch.
 */
void spulse_oc_stack_copy(struct spulse_oc_stack *dst,
			  const struct spulse_oc_stack *src)
{
	u32 i, n = (u32)src->nu + src->nk;

	dst->trunc = src->trunc;
	dst->nu = src->nu;
	dst->nk = src->nk;
	if (!dst->addr)
		return;
	for (i = 0; i < n; i++)
		WRITE_ONCE(dst->addr[i], src->addr[i]);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_stack_copy);

static void spulse_oc_who_copy(struct spulse_oc_who *dst,
			       const struct spulse_oc_who *src)
{
	dst->pid = src->pid;
	dst->tid = src->tid;
	memcpy(dst->comm, src->comm, sizeof(dst->comm));
	spulse_oc_stack_copy(&dst->st, &src->st);
}

static u32 spulse_oc_bucket(const struct spulse_oc_table *t, u32 tid)
{
	return (u32)(((u64)hash_32(tid, 32) * (t->n / SPULSE_OC_BUCKET)) >> 32);
}

static raw_spinlock_t *spulse_oc_lock(struct spulse_oc_table *t, u32 bucket)
{
	return &t->lock[bucket % SPULSE_OC_STRIPES];
}

/*
 * Find @tid's slot in its bucket (caller holds the stripe lock). *free is
 * set to the first free slot of the bucket (or NULL).
 */
static struct spulse_oc_slot *spulse_oc_find(struct spulse_oc_table *t,
					     u32 bucket, u32 tid,
					     struct spulse_oc_slot **free)
{
	struct spulse_oc_slot *s = t->slot + (size_t)bucket * SPULSE_OC_BUCKET;
	u32 i;

	*free = NULL;
	for (i = 0; i < SPULSE_OC_BUCKET; i++, s++) {
		if (s->kind == SPULSE_OC_FREE) {
			if (!*free)
				*free = s;
		} else if (s->self.tid == tid) {
			return s;
		}
	}
	return NULL;
}

static void spulse_oc_free(struct spulse_oc_table *t, struct spulse_oc_slot *s)
{
	if (s->kind == SPULSE_OC_EARLY)
		atomic_dec(&t->early);
	s->kind = SPULSE_OC_FREE;
}

/**
 * spulse_oc_open() - a target thread was switched out: open its interval
 * @t: table
 * @self: the thread and its stack at switch-out (copied)
 * @state: enum spulse_offcpu_state
 * @cpu: CPU it left
 * @t_out: switch-out time
 * @nsw: its nvcsw + nivcsw, already counting this switch
 *
 * An EARLY slot of the thread (a wakeup that ran while it was still on CPU)
 * becomes this interval's wakeup when it belongs to this switch: it was
 * taken at @nsw or @nsw - 1 (the scheduler increments the count between
 * reading the state and the sched_switch tracepoint, the wakeup may run on
 * either side) and the thread is not leaving runnable. Otherwise it is
 * stale and dropped.
 *
 * Return: enum spulse_oc_open_result, or -ENOSPC when the bucket is full.
 */
int spulse_oc_open(struct spulse_oc_table *t, const struct spulse_oc_who *self,
		   u8 state, u16 cpu, u64 t_out, u64 nsw)
{
	u32 b = spulse_oc_bucket(t, self->tid);
	raw_spinlock_t *lk = spulse_oc_lock(t, b);
	struct spulse_oc_slot *s, *free;
	int r = SPULSE_OC_OPENED;

	raw_spin_lock(lk);
	s = spulse_oc_find(t, b, self->tid, &free);
	if (s && s->kind == SPULSE_OC_EARLY) {
		if (state != SPULSE_STATE_RUNNABLE &&
		    (s->nsw == nsw || s->nsw + 1 == nsw)) {
			r = SPULSE_OC_OPENED_EARLY;
		} else {
			s->has_waker = false;
			r = SPULSE_OC_OPENED_STALE;
		}
		atomic_dec(&t->early);
	} else if (s) {
		s->has_waker = false;
		r = SPULSE_OC_OPENED_LOST;
	} else if (free) {
		s = free;
		s->has_waker = false;
	} else {
		raw_spin_unlock(lk);
		return -ENOSPC;
	}
	s->kind = SPULSE_OC_OFF;
	s->state = state;
	s->cpu_out = cpu;
	s->t_out = t_out;
	s->nsw = nsw;
	spulse_oc_who_copy(&s->self, self);
	raw_spin_unlock(lk);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_open);

/*
 * What a sched_waking does to the slot @s (NULL: none) of a thread that is
 * (@on_cpu) or is not still on a CPU; EARLY means an early slot is to be
 * created (NO_SLOT is for the caller to decide). Caller holds the lock.
 * spulse_oc_wake() acts on it, spulse_oc_wake_peek() only asks.
 */
static int spulse_oc_wake_class(const struct spulse_oc_slot *s, bool on_cpu)
{
	if (s && s->kind == SPULSE_OC_OFF)
		return s->state == SPULSE_STATE_RUNNABLE ? SPULSE_OC_WAKE_RUNNABLE :
		       s->has_waker ? SPULSE_OC_WAKE_REPEAT :
		       SPULSE_OC_WAKE_ATTACHED;
	if (!on_cpu)
		return SPULSE_OC_WAKE_UNSLOTTED;
	/* EARLY already: the first one stays */
	return s ? SPULSE_OC_WAKE_REPEAT : SPULSE_OC_WAKE_EARLY;
}

/**
 * spulse_oc_wake() - sched_waking of a target thread
 * @t: table
 * @tid: the thread being woken
 * @on_cpu: it is still on a CPU (task->on_cpu): a wakeup that may precede
 *	its switch-out
 * @nsw: its nvcsw + nivcsw now
 * @waker: the waking thread and its stack (copied)
 * @cpu: CPU the wakeup runs on
 * @t_wake: wakeup time
 *
 * Return: enum spulse_oc_wake_result.
 */
int spulse_oc_wake(struct spulse_oc_table *t, u32 tid, bool on_cpu, u64 nsw,
		   const struct spulse_oc_who *waker, u16 cpu, u64 t_wake)
{
	u32 b = spulse_oc_bucket(t, tid);
	raw_spinlock_t *lk = spulse_oc_lock(t, b);
	struct spulse_oc_slot *s, *free;
	int r;

	raw_spin_lock(lk);
	s = spulse_oc_find(t, b, tid, &free);
	r = spulse_oc_wake_class(s, on_cpu);
	if (r == SPULSE_OC_WAKE_EARLY) {
		if (!free) {
			r = SPULSE_OC_WAKE_NO_SLOT;
			goto out;
		}
		s = free;
		s->kind = SPULSE_OC_EARLY;
		s->self.tid = tid;
		s->nsw = nsw;
		atomic_inc(&t->early);
	} else if (r != SPULSE_OC_WAKE_ATTACHED) {
		goto out;
	}
	s->has_waker = true;
	s->waker_cpu = cpu;
	s->t_wake = t_wake;
	spulse_oc_who_copy(&s->waker, waker);
out:
	raw_spin_unlock(lk);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_wake);

/**
 * spulse_oc_wake_peek() - what would spulse_oc_wake() do now?
 * @t: table
 * @tid: the thread being woken
 * @on_cpu: it is still on a CPU
 *
 * Lets the wakeup probe skip capturing the waker's stack when it would not
 * be recorded. When this says ATTACHED or EARLY, spulse_oc_wake() decides
 * again under the lock; any other answer is final (the probe counts it and
 * stops): a slot that is R or already has a waker keeps that until it is
 * closed, and a thread that is neither slotted nor on a CPU cannot get a
 * slot before it has run.
 *
 * Return: enum spulse_oc_wake_result (never NO_SLOT).
 */
int spulse_oc_wake_peek(struct spulse_oc_table *t, u32 tid, bool on_cpu)
{
	u32 b = spulse_oc_bucket(t, tid);
	raw_spinlock_t *lk = spulse_oc_lock(t, b);
	struct spulse_oc_slot *s, *free;
	int r;

	raw_spin_lock(lk);
	s = spulse_oc_find(t, b, tid, &free);
	r = spulse_oc_wake_class(s, on_cpu);
	raw_spin_unlock(lk);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_wake_peek);

/**
 * spulse_oc_wakeup_done() - sched_wakeup of a target thread
 * @t: table
 * @tid: the thread
 *
 * The wakeup has completed. If the thread still has an EARLY slot, its
 * switch-out has not happened: the wakeup found it running and it did not
 * sleep (ttwu_runnable()), so the slot is stale and removed. (A wakeup
 * that really raced with the switch-out completes only after the
 * switch-out, which has already consumed the EARLY slot.)
 *
 * Return: true when a stale EARLY slot was removed.
 */
bool spulse_oc_wakeup_done(struct spulse_oc_table *t, u32 tid)
{
	u32 b = spulse_oc_bucket(t, tid);
	raw_spinlock_t *lk = spulse_oc_lock(t, b);
	struct spulse_oc_slot *s, *free;
	bool r = false;

	if (!atomic_read(&t->early))
		return false;
	raw_spin_lock(lk);
	s = spulse_oc_find(t, b, tid, &free);
	if (s && s->kind == SPULSE_OC_EARLY) {
		spulse_oc_free(t, s);
		r = true;
	}
	raw_spin_unlock(lk);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_wakeup_done);

/**
 * spulse_oc_close() - a thread is switched in: take its open interval
 * @t: table
 * @tid: the thread
 * @out: receives the slot (its stacks copied into @out's own storage;
 *	none copied where that storage is NULL)
 *
 * The slot is freed. An EARLY slot is left alone (the thread had not left).
 *
 * Return: true when the thread had an open interval.
 */
bool spulse_oc_close(struct spulse_oc_table *t, u32 tid,
		     struct spulse_oc_slot *out)
{
	u32 b = spulse_oc_bucket(t, tid);
	raw_spinlock_t *lk = spulse_oc_lock(t, b);
	struct spulse_oc_slot *s, *free;

	raw_spin_lock(lk);
	s = spulse_oc_find(t, b, tid, &free);
	if (!s || s->kind != SPULSE_OC_OFF) {
		raw_spin_unlock(lk);
		return false;
	}
	out->kind = s->kind;
	out->state = s->state;
	out->has_waker = s->has_waker;
	out->cpu_out = s->cpu_out;
	out->waker_cpu = s->waker_cpu;
	out->nsw = s->nsw;
	out->t_out = s->t_out;
	out->t_wake = s->t_wake;
	spulse_oc_who_copy(&out->self, &s->self);
	if (s->has_waker)
		spulse_oc_who_copy(&out->waker, &s->waker);
	spulse_oc_free(t, s);
	raw_spin_unlock(lk);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_close);

/**
 * spulse_oc_sweep() - empty the table (recording stopped)
 * @t: table (may be called with interrupts enabled)
 * @early: set to the number of EARLY slots removed (may be NULL)
 *
 * Return: number of open intervals (OFF slots) removed.
 */
u32 spulse_oc_sweep(struct spulse_oc_table *t, u32 *early)
{
	u32 i, off = 0, ea = 0;
	unsigned long flags;

	for (i = 0; i < t->n; i++) {
		struct spulse_oc_slot *s = &t->slot[i];
		raw_spinlock_t *lk = spulse_oc_lock(t, i / SPULSE_OC_BUCKET);

		raw_spin_lock_irqsave(lk, flags);
		if (s->kind == SPULSE_OC_OFF)
			off++;
		else if (s->kind == SPULSE_OC_EARLY)
			ea++;
		if (s->kind != SPULSE_OC_FREE)
			spulse_oc_free(t, s);
		raw_spin_unlock_irqrestore(lk, flags);
	}
	if (early)
		*early = ea;
	return off;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_sweep);

/**
 * spulse_oc_interval() - split a closed interval into blocked and runq time
 * @s: the slot
 * @t_in: switch-in time
 * @blocked_ns: switch-out to wakeup (0 when R or woken before the
 *	switch-out)
 * @runq_ns: max(wakeup, switch-out) to switch-in
 *
 * Without a recorded wakeup (state not R but the wakeup was not seen), all
 * of it counts as blocked. Times that go backwards count as 0.
 */
void spulse_oc_interval(const struct spulse_oc_slot *s, u64 t_in,
			u64 *blocked_ns, u64 *runq_ns)
{
	u64 total = t_in > s->t_out ? t_in - s->t_out : 0;
	u64 b;

	if (s->state == SPULSE_STATE_RUNNABLE) {
		*blocked_ns = 0;
		*runq_ns = total;
		return;
	}
	if (!s->has_waker) {
		*blocked_ns = total;
		*runq_ns = 0;
		return;
	}
	b = s->t_wake > s->t_out ? s->t_wake - s->t_out : 0;
	if (b > total)
		b = total;
	*blocked_ns = b;
	*runq_ns = total - b;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_interval);

/**
 * spulse_oc_stack_frames() - expand a compact stack into frames
 * @st: the stack
 * @out: room for @st->nu + @st->nk + 1 frames
 *
 * Return: number of nodes, root..leaf (>= 1: an empty stack is the marker).
 */
u32 spulse_oc_stack_frames(const struct spulse_oc_stack *st,
			   struct spulse_frame *out)
{
	u32 i, n = 0;

	if (st->trunc || (!st->nu && !st->nk))
		out[n++] = (struct spulse_frame){ SPULSE_FRAME_TRUNCATED, 0 };
	for (i = 0; i < st->nu; i++)
		out[n++] = (struct spulse_frame){ SPULSE_FRAME_USER,
						  st->addr[i] };
	for (i = st->nu; i < (u32)st->nu + st->nk; i++)
		out[n++] = (struct spulse_frame){ SPULSE_FRAME_KERNEL,
						  st->addr[i] };
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_stack_frames);

/**
 * spulse_oc_queue_init() - set up an empty queue over caller memory
 * @q: queue
 * @ent: @n entries
 * @store: 2 * @depth u64 per entry (each entry's two stacks)
 * @n: capacity, a power of 2
 * @depth: frames per stack
 */
void spulse_oc_queue_init(struct spulse_oc_queue *q,
			  struct spulse_oc_closed *ent, u64 *store, u32 n,
			  u32 depth)
{
	u32 i;

	q->ent = ent;
	q->n = n;
	q->head = 0;
	q->tail = 0;
	for (i = 0; i < n; i++) {
		memset(&ent[i], 0, sizeof(ent[i]));
		ent[i].s.self.st.addr = store + (size_t)i * 2 * depth;
		ent[i].s.waker.st.addr = store + ((size_t)i * 2 + 1) * depth;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_init);

/**
 * spulse_oc_queue_len() - entries waiting in @q
 * @q: queue
 *
 * Return: pushed and not yet popped.
 */
u32 spulse_oc_queue_len(const struct spulse_oc_queue *q)
{
	return READ_ONCE(q->tail) - READ_ONCE(q->head);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_len);

/**
 * spulse_oc_queue_tail() - the entry the next push will publish
 * @q: queue
 *
 * The caller fills it (spulse_oc_close() into its slot, then @t_in) and
 * publishes it with spulse_oc_queue_push(), or leaves it unpublished.
 *
 * Return: the free entry, or NULL when the queue is full.
 */
struct spulse_oc_closed *spulse_oc_queue_tail(struct spulse_oc_queue *q)
{
	if (spulse_oc_queue_len(q) >= q->n)
		return NULL;
	return &q->ent[q->tail & (q->n - 1)];
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_tail);

/**
 * spulse_oc_queue_push() - publish the entry spulse_oc_queue_tail() gave
 * @q: queue (not full)
 */
void spulse_oc_queue_push(struct spulse_oc_queue *q)
{
	WRITE_ONCE(q->tail, q->tail + 1);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_push);

/**
 * spulse_oc_queue_head() - the oldest entry waiting
 * @q: queue
 *
 * Return: the entry (still queued until spulse_oc_queue_pop()), or NULL
 * when the queue is empty.
 */
struct spulse_oc_closed *spulse_oc_queue_head(struct spulse_oc_queue *q)
{
	if (!spulse_oc_queue_len(q))
		return NULL;
	return &q->ent[q->head & (q->n - 1)];
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_head);

/**
 * spulse_oc_queue_pop() - drop the oldest entry (it has been written)
 * @q: queue (not empty)
 */
void spulse_oc_queue_pop(struct spulse_oc_queue *q)
{
	WRITE_ONCE(q->head, q->head + 1);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_pop);

/**
 * spulse_oc_queue_discard() - empty @q without writing
 * @q: queue
 *
 * Return: the number of entries dropped.
 */
u32 spulse_oc_queue_discard(struct spulse_oc_queue *q)
{
	u32 n = spulse_oc_queue_len(q);

	WRITE_ONCE(q->head, q->tail);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_discard);

/**
 * spulse_oc_close_queued() - a thread is switched in: close its interval
 *	into the queue
 * @t: table
 * @q: the switch-in CPU's queue
 * @tid: the thread
 * @t_in: switch-in time
 * @min_ns: intervals shorter than this (blocked + runq) are not kept
 * @busy: the CPU cannot write records (its busy flag is set for good)
 *
 * The thread's slot is freed whatever happens to the interval; only a
 * QUEUED interval is published (with @t_in), for spulse_oc_queue_drain().
 * With the queue full the slot is closed without its stacks (nowhere to
 * put them) and the interval is refused.
 *
 * Return: enum spulse_oc_close_result.
 */
int spulse_oc_close_queued(struct spulse_oc_table *t, struct spulse_oc_queue *q,
			   u32 tid, u64 t_in, u64 min_ns, bool busy)
{
	struct spulse_oc_closed *e = spulse_oc_queue_tail(q);
	struct spulse_oc_slot none = {};
	struct spulse_oc_slot *s = e ? &e->s : &none;
	u64 blocked, runq;

	if (!spulse_oc_close(t, tid, s))
		return SPULSE_OC_CLOSE_NONE;
	spulse_oc_interval(s, t_in, &blocked, &runq);
	if (blocked + runq < min_ns)
		return SPULSE_OC_CLOSE_FILTERED;
	if (busy)
		return SPULSE_OC_CLOSE_BUSY;
	if (!e)
		return SPULSE_OC_CLOSE_QUEUE_FULL;
	e->t_in = t_in;
	spulse_oc_queue_push(q);
	return SPULSE_OC_CLOSE_QUEUED;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_close_queued);

/**
 * spulse_oc_queue_drain() - hand every queued interval to @write, oldest
 *	first, and empty the queue
 * @q: queue
 * @write: called once per entry; the entry is popped after it returns
 * @arg: @write's first argument
 *
 * Return: the number of entries handed over.
 */
u32 spulse_oc_queue_drain(struct spulse_oc_queue *q,
			  void (*write)(void *arg, const struct spulse_oc_closed *e),
			  void *arg)
{
	struct spulse_oc_closed *e;
	u32 n = 0;

	while ((e = spulse_oc_queue_head(q))) {
		write(arg, e);
		spulse_oc_queue_pop(q);
		n++;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_oc_queue_drain);
