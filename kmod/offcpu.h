/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Off-CPU intervals: the slot table (offcpu_table.c, pure: no globals, no
 * allocation; the caller owns the memory (spulse_oc_table_bytes()) and
 * calls it with interrupts disabled; every call takes exactly one stripe
 * lock, a raw spinlock and a leaf: nothing else is taken under it), the
 * per-CPU queue of closed intervals the switch-in hands to an irq_work
 * (offcpu_table.c, pure too) and the sched_switch / sched_waking probes
 * (offcpu.c). See docs/KERNEL.md.
 */
#ifndef SPULSE_KMOD_OFFCPU_H
#define SPULSE_KMOD_OFFCPU_H

#include <linux/atomic.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include <linux/sched/prio.h>
#include <linux/types.h>

#include "encoder.h"

/**
 * struct spulse_oc_stack - one mixed stack, compact
 * @trunc: the user part was cut: a truncated marker is the root node
 * @nu: user frames, @addr[0..@nu), outermost first
 * @nk: kernel frames, @addr[@nu..@nu+@nk), outermost first, leaf last
 * @addr: normalized addresses (return address - 1 except exact IPs),
 *	room for the table's depth
 *
 * Nodes root..leaf: [marker if @trunc] user frames, kernel frames. An empty
 * stack (@nu = @nk = 0) is encoded as the marker alone.
 */
struct spulse_oc_stack {
	bool trunc;
	u16 nu;
	u16 nk;
	u64 *addr;
};

/**
 * struct spulse_oc_who - a thread and its stack
 * @pid: tgid (0 = idle / kernel)
 * @tid: thread id
 * @comm: command name, NUL padded
 * @st: its stack
 */
struct spulse_oc_who {
	u32 pid;
	u32 tid;
	char comm[16];
	struct spulse_oc_stack st;
};

enum spulse_oc_kind {
	SPULSE_OC_FREE = 0,
	SPULSE_OC_OFF = 1,	/* switched out, interval open */
	SPULSE_OC_EARLY = 2,	/* woken while still on CPU (wake only) */
};

/**
 * struct spulse_oc_slot - one thread off CPU (or an early wakeup)
 * @kind: enum spulse_oc_kind
 * @state: enum spulse_offcpu_state at switch-out
 * @has_waker: @t_wake, @waker and @waker_cpu are valid
 * @cpu_out: CPU it was switched out on
 * @waker_cpu: CPU the wakeup ran on
 * @nsw: nvcsw + nivcsw of the thread: after the switch for an OFF slot, at
 *	the wakeup for an EARLY one
 * @t_out: switch-out time (ns since session start)
 * @t_wake: wakeup time
 * @self: the thread (tid is the key) and its stack at switch-out
 * @waker: the waking thread and its stack
 */
struct spulse_oc_slot {
	u8 kind;
	u8 state;
	bool has_waker;
	u16 cpu_out;
	u16 waker_cpu;
	u64 nsw;
	u64 t_out;
	u64 t_wake;
	struct spulse_oc_who self;
	struct spulse_oc_who waker;
};

#define SPULSE_OC_BUCKET	16	/* slots probed per lookup */
#define SPULSE_OC_STRIPES	64	/* stripe locks */

/**
 * struct spulse_oc_table - fixed-size slot table hashed by tid
 * @slot: @n slots in buckets of SPULSE_OC_BUCKET
 * @store: stack storage, 2 * @depth u64 per slot
 * @n: slots (a multiple of SPULSE_OC_BUCKET)
 * @depth: frames per stack (max_user_depth + max_kernel_depth)
 * @early: EARLY slots in use (lets a wakeup probe skip the lookup)
 * @lock: stripe locks; bucket b uses @lock[b % SPULSE_OC_STRIPES]
 */
struct spulse_oc_table {
	struct spulse_oc_slot *slot;
	u64 *store;
	u32 n;
	u32 depth;
	atomic_t early;
	raw_spinlock_t lock[SPULSE_OC_STRIPES];
};

/**
 * struct spulse_oc_closed - a closed interval waiting to be written
 * @s: the slot as spulse_oc_close() took it out of the table (its stacks in
 *	the queue's own storage)
 * @t_in: switch-in time (ns since session start)
 */
struct spulse_oc_closed {
	struct spulse_oc_slot s;
	u64 t_in;
};

#define SPULSE_OC_QUEUE		4	/* closed intervals queued per CPU */

/**
 * struct spulse_oc_queue - one CPU's closed intervals, in close order
 * @ent: @n entries, each with stack storage of its own
 * @n: capacity, a power of 2
 * @head: entries taken out (spulse_oc_queue_pop())
 * @tail: entries put in (spulse_oc_queue_push())
 *
 * Filled by the CPU's sched_switch probe and emptied by the same CPU's
 * writer (irq_work, or the stop drain's IPI), each with interrupts off on
 * that CPU, so the two never overlap and no lock is needed; nothing here
 * waits, a full queue refuses. For KUnit the functions are pure, exported
 * with EXPORT_SYMBOL_IF_KUNIT like the table's.
 */
struct spulse_oc_queue {
	struct spulse_oc_closed *ent;
	u32 n;
	u32 head;
	u32 tail;
};

/* What a switch-out did with the thread's slot. */
enum spulse_oc_open_result {
	SPULSE_OC_OPENED = 0,		/* new interval, no waker yet */
	SPULSE_OC_OPENED_EARLY = 1,	/* an early wakeup was applied */
	SPULSE_OC_OPENED_STALE = 2,	/* an early wakeup was stale, dropped */
	SPULSE_OC_OPENED_LOST = 3,	/* an open interval was replaced */
};

/* What a switch-in did with the thread's interval (spulse_oc_close_queued()). */
enum spulse_oc_close_result {
	SPULSE_OC_CLOSE_NONE = 0,	/* no open interval */
	SPULSE_OC_CLOSE_QUEUED = 1,	/* closed into the queue */
	SPULSE_OC_CLOSE_FILTERED = 2,	/* closed, shorter than the minimum */
	SPULSE_OC_CLOSE_BUSY = 3,	/* closed, the CPU's writer is busy */
	SPULSE_OC_CLOSE_QUEUE_FULL = 4,	/* closed, no room in the queue */
};

/* What a wakeup did. */
enum spulse_oc_wake_result {
	SPULSE_OC_WAKE_ATTACHED = 0,	/* waker recorded into an open slot */
	SPULSE_OC_WAKE_EARLY = 1,	/* early slot created (still on CPU) */
	SPULSE_OC_WAKE_RUNNABLE = 2,	/* slot is R (preempted): no waker */
	SPULSE_OC_WAKE_REPEAT = 3,	/* a waker is already recorded */
	SPULSE_OC_WAKE_UNSLOTTED = 4,	/* no slot and not on CPU */
	SPULSE_OC_WAKE_NO_SLOT = 5,	/* early slot needed, bucket full */
};

size_t spulse_oc_table_bytes(u32 threads, u32 depth);
u32 spulse_oc_table_slots(u32 threads);
void spulse_oc_table_init(struct spulse_oc_table *t, struct spulse_oc_slot *slot,
			  u64 *store, u32 threads, u32 depth);
void spulse_oc_stack_copy(struct spulse_oc_stack *dst,
			  const struct spulse_oc_stack *src);
int spulse_oc_open(struct spulse_oc_table *t, const struct spulse_oc_who *self,
		   u8 state, u16 cpu, u64 t_out, u64 nsw);
int spulse_oc_wake(struct spulse_oc_table *t, u32 tid, bool on_cpu, u64 nsw,
		   const struct spulse_oc_who *waker, u16 cpu, u64 t_wake);
int spulse_oc_wake_peek(struct spulse_oc_table *t, u32 tid, bool on_cpu);
bool spulse_oc_wakeup_done(struct spulse_oc_table *t, u32 tid);
bool spulse_oc_close(struct spulse_oc_table *t, u32 tid,
		     struct spulse_oc_slot *out);
u32 spulse_oc_sweep(struct spulse_oc_table *t, u32 *early);
void spulse_oc_interval(const struct spulse_oc_slot *s, u64 t_in,
			u64 *blocked_ns, u64 *runq_ns);
u32 spulse_oc_stack_frames(const struct spulse_oc_stack *st,
			   struct spulse_frame *out);
void spulse_oc_queue_init(struct spulse_oc_queue *q,
			  struct spulse_oc_closed *ent, u64 *store, u32 n,
			  u32 depth);
u32 spulse_oc_queue_len(const struct spulse_oc_queue *q);
struct spulse_oc_closed *spulse_oc_queue_tail(struct spulse_oc_queue *q);
void spulse_oc_queue_push(struct spulse_oc_queue *q);
struct spulse_oc_closed *spulse_oc_queue_head(struct spulse_oc_queue *q);
void spulse_oc_queue_pop(struct spulse_oc_queue *q);
u32 spulse_oc_queue_discard(struct spulse_oc_queue *q);
int spulse_oc_close_queued(struct spulse_oc_table *t, struct spulse_oc_queue *q,
			   u32 tid, u64 t_in, u64 min_ns, bool busy);
u32 spulse_oc_queue_drain(struct spulse_oc_queue *q,
			  void (*write)(void *arg, const struct spulse_oc_closed *e),
			  void *arg);

/**
 * spulse_oc_defer() - is @p a task whose switch-in does not run the writer?
 * @p: the task switched in
 *
 * Description:
 * A user RT or deadline task (also one boosted by priority inheritance):
 * the writer is not run while it is current (spulse_oc_switched() in
 * offcpu.c). Not kernel threads: the CPU stopper (migration/N, SCHED_FIFO) is the last
 * task of a CPU going offline, and what it queued must be written before
 * the CPU's dying path runs its irq_work; IRQ threads and ktimers are
 * written right away, as before.
 *
 * Return: true for a user RT or deadline task.
 */
static inline bool spulse_oc_defer(const struct task_struct *p)
{
	return p->prio < MAX_RT_PRIO && !(p->flags & PF_KTHREAD);
}

/* offcpu.c */
int spulse_offcpu_init(void);
void spulse_offcpu_exit(void);
int spulse_offcpu_start(void);
void spulse_offcpu_stop(void);

#endif /* SPULSE_KMOD_OFFCPU_H */
