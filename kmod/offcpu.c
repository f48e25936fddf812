// SPDX-License-Identifier: GPL-2.0
/*
 * Where off-CPU intervals are taken (offcpu=1). Three tracepoint probes,
 * found with for_each_kernel_tracepoint() (the tracepoints are not exported
 * to modules), registered at the first start and unregistered at unload
 * only; start and stop just open and close the gate spulse_oc_live (each
 * registration change patches the scheduler's text, see
 * spulse_offcpu_stop()):
 *
 *  - sched_switch (scheduler, rq lock held, interrupts off): a target @prev
 *    leaving the CPU opens its slot (time, state, CPU, mixed stack of
 *    current == @prev); a target @next whose slot is open closes it into
 *    THIS CPU's queue of closed intervals (struct spulse_oc_queue); unless
 *    @next is a user RT task, the probe queues this CPU's irq_work, which
 *    encodes and writes the queued intervals into this CPU's stream once
 *    the scheduler has dropped the rq lock (spulse_oc_write_queued()); an
 *    RT task's wakeup does not wait for that (spulse_oc_switched()).
 *  - sched_waking (try_to_wake_up(), the wakee's pi_lock held, or only
 *    preemption off when a task wakes itself): the waker (current), its
 *    CPU and mixed stack go into the wakee's slot; a wakeup in interrupt
 *    context records the interrupt's kernel stack only, down to the
 *    interrupt entry (spulse_oc_capture()); a wakee still on a CPU gets
 *    an EARLY slot that its switch-out applies (see spulse_oc_open()).
 *  - sched_wakeup (wakeup done): an EARLY slot that is still there belongs
 *    to a wakeup that found the thread running (it never slept): removed.
 *
 * The perf software context-switch event was not used: its overflow
 * handler runs at switch-out only (perf_event_task_sched_out()), with no
 * switch-in of the next task and no wakeups. No allocation, no sleeping,
 * bounded work (depth limits, one bucket per lookup) in every probe; the
 * per-CPU busy flag excludes the NMI sampler from the shared scratch.
 *
 * The irq_work is IRQ_WORK_HARD_IRQ: on PREEMPT_RT it runs in hard IRQ
 * context like on other kernels (the self-IPI taken when the context
 * switch re-enables interrupts), not in the irq_work kthread. That thread
 * is a task like any other here: in whole-system mode each of its runs
 * would be a wakeup and two context switches that the probes record and
 * that queue more work for it (a feedback loop), its SCHED_FIFO 1 can be
 * starved for as long as RT tasks run (the queue would fill), and
 * irq_work_sync() at stop and unload would wait for a thread that is
 * parked while its CPU is offline. In hard IRQ the writer runs where the
 * sampler's hrtimer already runs the same encode and relay write, and a
 * CPU going offline runs it in its dying path (irq_work_run()). docs/RT.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <asm/unwind.h>

#include "spulse.h"
#include "offcpu.h"
#include "kstack.h"
#include "meta.h"
#include "percpu.h"
#include "stream.h"
#include "unwind.h"
#include "ustack.h"
#include "compat/sched.h"

struct spulse_oc_tps {
	struct tracepoint *sw;
	struct tracepoint *waking;
	struct tracepoint *wakeup;
};

static struct spulse_oc_tps spulse_oc_tp;

/*
 * Set while recording, once all three probes are registered: the probes
 * act only while it is set, so the table never sees one kind of event
 * without the others (registration is slow, and a wakeup probe running
 * before the switch probe would see no slots).
 */
static bool spulse_oc_live;
/* The three probes are registered (from the first start to unload). */
static bool spulse_oc_registered;

/*
 * Each CPU's closed intervals, written by its irq_work (spulse_oc_in(),
 * spulse_oc_write_queued()); the entries and their stack storage, for all
 * possible CPUs, are allocated by spulse_offcpu_init().
 */
static DEFINE_PER_CPU(struct spulse_oc_queue, spulse_oc_q);
static DEFINE_PER_CPU(struct irq_work, spulse_oc_work);
static struct spulse_oc_closed *spulse_oc_qent;
static u64 *spulse_oc_qstore;

static void spulse_oc_find_tp(struct tracepoint *tp, void *priv)
{
	struct spulse_oc_tps *t = priv;

	if (!strcmp(tp->name, "sched_switch"))
		t->sw = tp;
	else if (!strcmp(tp->name, "sched_waking"))
		t->waking = tp;
	else if (!strcmp(tp->name, "sched_wakeup"))
		t->wakeup = tp;
}

static bool spulse_oc_target(struct task_struct *p)
{
	if (is_idle_task(p))
		return false;
	/* the target's struct pid, not its number: a reused pid is not it */
	return !spulse.target || task_tgid(p) == spulse.target;
}

static u64 spulse_oc_now(void)
{
	return ktime_get_mono_fast_ns() - spulse.start_mono;
}

static u64 spulse_oc_nsw(struct task_struct *p)
{
	return (u64)READ_ONCE(p->nvcsw) + READ_ONCE(p->nivcsw);
}

/*
 * offcpu_phase_stats=1: add the time since *@t to *@acc and restart *@t.
 * Off, this is one predictable branch.
 */
static inline void spulse_oc_phase(bool on, u64 *t, u64 *acc)
{
	u64 now;

	if (likely(!on))
		return;
	now = ktime_get_mono_fast_ns();
	*acc += now - *t;
	*t = now;
}

static inline u64 spulse_oc_phase_start(bool on)
{
	return unlikely(on) ? ktime_get_mono_fast_ns() : 0;
}

/*
 * Capture current (thread + mixed stack) into c->oc_cap. Caller holds
 * c->busy (kbuf, ubuf and the user window are the sampler's). Returns false
 * when the kernel stack is deeper than max_kernel_depth. With phase stats,
 * the kernel unwind goes into *@kns, the user walk and the copy into
 * c->oc_cap into *@uns (*@pt is the phase clock).
 *
 * @irq: a waker in interrupt context (hard IRQ, or a softirq it runs on
 * its way out). The waker is the interrupt: its kernel stack ends at the
 * interrupt entry and it has no user stack; current (the thread and CPU
 * recorded as the waker) is only the task the interrupt happened to hit.
 * Walking the interrupted task's kernel and user stacks under the wakee's
 * pi_lock with interrupts off was most of the waker capture's cost on the
 * path of a timer wakeup (docs/RT.md), and named code that did not wake
 * anything.
 */
static __always_inline bool spulse_oc_capture(struct spulse_cpu *c, bool ph,
					      bool irq, u64 *pt, u64 *kns,
					      u64 *uns)
{
	const struct spulse_params *p = &spulse.p;
	struct task_struct *tsk = current;
	struct spulse_oc_who *w = &c->oc_cap;
	struct spulse_uw_res res = {};
	bool too_deep;
	int nk, nu = 0, i;

	w->pid = task_tgid_nr(tsk);
	w->tid = task_pid_nr(tsk);
	memcpy(w->comm, tsk->comm, sizeof(w->comm));
	nk = spulse_kstack_here(c->kbuf, p->max_kernel_depth, &too_deep, irq);
	spulse_oc_phase(ph, pt, kns);
	if (too_deep)
		return false;
	if (!irq && spulse_task_has_user(tsk)) {
		nu = spulse_ustack_capture(task_pt_regs(tsk), p->unwind,
					   &c->uc, c->ubuf, p->max_user_depth,
					   &res);
		if (!p->target_pid && w->pid)
			spulse_note_pid(c, w->pid);
		if (nu && !spulse_meta_known(w->pid, c->ubuf[0]))
			spulse_meta_kick();
	}
	w->st.trunc = res.truncated;
	w->st.nu = nu;
	w->st.nk = nk;
	for (i = 0; i < nu; i++)
		w->st.addr[i] = c->ubuf[nu - 1 - i];
	for (i = 0; i < nk; i++)
		w->st.addr[nu + i] = c->kbuf[nk - 1 - i];
	spulse_oc_phase(ph, pt, uns);
	return true;
}

/* @prev (== current) leaves the CPU. Inlined: see spulse_kstack_here(). */
static __always_inline void spulse_oc_out(struct spulse_cpu *c, struct task_struct *prev,
			  bool preempt, unsigned int prev_state, int cpu,
			  u64 t)
{
	bool ph = spulse.p.offcpu_phase_stats;
	u64 pt;
	u8 state;
	int r;

	c->stats.offcpu_taken++;
	/*
	 * Still on the runqueue = left runnable: preempted, yielded, or a
	 * pending signal made __schedule() keep it (prev_state is then the
	 * sleep state it had asked for, but it will not sleep). A delayed
	 * dequeue (EEVDF, 6.12+) stays queued but sleeps: not runnable
	 * (compat/sched.h).
	 */
	if (preempt || spulse_task_runnable(prev)) {
		state = SPULSE_STATE_RUNNABLE;
	} else {
		state = spulse_task_state_index(prev, prev_state);
		/*
		 * Dequeued to sleep, yet "running": only where sched_switch
		 * has no prev_state, when a wakeup already overwrote the
		 * state word (TASK_WAKING). It slept: S, counted.
		 */
		if (unlikely(state == SPULSE_STATE_RUNNABLE)) {
			state = SPULSE_STATE_SLEEPING;
			c->stats.offcpu_state_raced++;
		}
	}
	if (c->busy) {
		c->stats.offcpu_dropped_busy++;
		goto forget_early;
	}
	c->busy = 1;
	barrier();
	pt = spulse_oc_phase_start(ph);
	if (!spulse_oc_capture(c, ph, false, &pt,
			       &c->stats.phase_out_kstack_ns,
			       &c->stats.phase_out_ustack_ns)) {
		barrier();
		c->busy = 0;
		c->stats.offcpu_dropped_too_deep++;
		goto forget_early;
	}
	r = spulse_oc_open(&spulse.oc, &c->oc_cap, state, cpu, t,
			   spulse_oc_nsw(prev));
	barrier();
	c->busy = 0;
	spulse_oc_phase(ph, &pt, &c->stats.phase_out_slot_ns);
	if (unlikely(ph))
		c->stats.phase_out_n++;
	switch (r) {
	case SPULSE_OC_OPENED_EARLY:
		c->stats.early_applied++;
		break;
	case SPULSE_OC_OPENED_STALE:
		c->stats.early_stale++;
		break;
	case SPULSE_OC_OPENED_LOST:
		c->stats.offcpu_lost++;
		break;
	case -ENOSPC:
		c->stats.offcpu_dropped_no_slot++;
		break;
	default:
		break;
	}
	return;
forget_early:
	if (spulse_oc_wakeup_done(&spulse.oc, task_pid_nr(prev)))
		c->stats.early_stale++;
}

/* The state spulse_oc_write_one() works with. */
struct spulse_oc_writer {
	struct spulse_cpu *c;
	int cpu;
	bool ph;
	u64 pt;
};

/* Encode one closed interval and write it into this CPU's stream. */
static void spulse_oc_write_one(void *arg, const struct spulse_oc_closed *e)
{
	struct spulse_oc_writer *w = arg;
	struct spulse_cpu *c = w->c;

	if (spulse_batch_build_offcpu(&c->enc, &c->batch, &e->s, e->t_in,
				      w->cpu, c->frames, spulse.start_us,
				      spulse.interval_us)) {
		c->stats.offcpu_dropped_error++;
		return;
	}
	spulse_oc_phase(w->ph, &w->pt, &c->stats.phase_write_encode_ns);
	if (!spulse_batch_put(c)) {
		c->stats.offcpu_dropped_buffer_full++;
	} else {
		spulse_batch_commit_event(&c->enc, &c->batch, e->s.t_out);
		c->stats.offcpu_written++;
	}
	spulse_oc_phase(w->ph, &w->pt, &c->stats.phase_write_relay_ns);
	if (unlikely(w->ph))
		c->stats.phase_write_n++;
}

/*
 * Write this CPU's queued intervals into its stream, oldest first, under
 * the busy flag like a sample. Runs on the queue's own CPU with interrupts
 * off: from the irq_work (hard IRQ, after the scheduler dropped the rq
 * lock) or from the stop drain's IPI. Busy set here would mean it
 * interrupted a writer that holds the flag with interrupts on, and there
 * is none (the sampler, the probes, the trigger and the flush IPI all run
 * with interrupts off or in NMI): the entries would then stay queued for
 * the next run (the next push queues the work again, stop drains).
 */
static void spulse_oc_write_queued(struct spulse_cpu *c,
				   struct spulse_oc_queue *q, int cpu)
{
	struct spulse_oc_writer w = {
		.c = c,
		.cpu = cpu,
		.ph = spulse.p.offcpu_phase_stats,
	};
	u64 t0;

	if (c->busy || !spulse_oc_queue_len(q))
		return;
	c->busy = 1;
	barrier();
	t0 = ktime_get_mono_fast_ns();
	w.pt = t0;
	spulse_oc_queue_drain(q, spulse_oc_write_one, &w);
	c->stats.offcpu_write_ns += ktime_get_mono_fast_ns() - t0;
	barrier();
	c->busy = 0;
}

/* The irq_work: this CPU's queue, after the switch that filled it. */
static void spulse_oc_work_fn(struct irq_work *w)
{
	spulse_oc_write_queued(this_cpu_ptr(spulse.cpu),
			       this_cpu_ptr(&spulse_oc_q), smp_processor_id());
}

/*
 * @next is switched in on this CPU: close its interval into the CPU's
 * queue (spulse_oc_switched() has the irq_work write it once the rq lock
 * is dropped, or later when @next is an RT task).
 */
static void spulse_oc_in(struct spulse_cpu *c, struct task_struct *next,
			 u64 t)
{
	bool ph = spulse.p.offcpu_phase_stats;
	u64 pt = spulse_oc_phase_start(ph);
	int r;

	/* c->busy here: busy for good (no writer state on this CPU) */
	r = spulse_oc_close_queued(&spulse.oc, this_cpu_ptr(&spulse_oc_q),
				   task_pid_nr(next), t,
				   (u64)spulse.p.offcpu_min_us * NSEC_PER_USEC,
				   c->busy);
	switch (r) {
	case SPULSE_OC_CLOSE_NONE:
		return;
	case SPULSE_OC_CLOSE_QUEUED:
		if (spulse_oc_defer(next))
			c->stats.offcpu_write_deferred++;
		break;
	case SPULSE_OC_CLOSE_FILTERED:
		c->stats.offcpu_filtered++;
		break;
	case SPULSE_OC_CLOSE_BUSY:
		c->stats.offcpu_dropped_busy++;
		break;
	default:
		c->stats.offcpu_dropped_queue_full++;
		break;
	}
	spulse_oc_phase(ph, &pt, &c->stats.phase_in_close_ns);
	if (unlikely(ph))
		c->stats.phase_in_n++;
}

static __always_inline void spulse_oc_switched(bool preempt,
					       struct task_struct *prev,
					       struct task_struct *next,
					       unsigned int prev_state)
{
	bool out = spulse_oc_target(prev), in = spulse_oc_target(next);
	struct spulse_cpu *c;
	u32 qlen;
	int cpu;
	u64 t;

	if ((!out && !in) || !READ_ONCE(spulse_oc_live))
		return;
	cpu = smp_processor_id();
	c = this_cpu_ptr(spulse.cpu);
	t = spulse_oc_now();
	if (out && !(prev->flags & PF_EXITING) && !prev->exit_state)
		spulse_oc_out(c, prev, preempt, prev_state, cpu, t);
	else if (out && spulse_oc_wakeup_done(&spulse.oc, task_pid_nr(prev)))
		c->stats.early_stale++;
	if (in)
		spulse_oc_in(c, next, t);
	/*
	 * The writer runs as a hard irq_work when the scheduler re-enables
	 * interrupts after this switch, i.e. on @next's way to its own code:
	 * with a user RT task switching in, that is its wakeup latency (each
	 * interval ~70 us under TCG, docs/RT.md). Then the queue waits for
	 * the next switch to a task that is not (the RT task blocking again
	 * at the latest: it is a target, or nothing was queued for it), or
	 * until only one entry is left free: user RT tasks can switch among
	 * themselves (on RT a sleeping spinlock boosts its owner), and the
	 * writer then runs anyway rather than let the next close find the
	 * queue full. Written at stop in any case.
	 */
	qlen = spulse_oc_queue_len(this_cpu_ptr(&spulse_oc_q));
	if (qlen && (!spulse_oc_defer(next) || qlen >= SPULSE_OC_QUEUE - 1))
		irq_work_queue(this_cpu_ptr(&spulse_oc_work));
	c->stats.offcpu_handler_ns += spulse_oc_now() - t;
}
SPULSE_SCHED_SWITCH_PROBE(spulse_oc_switch, spulse_oc_switched)

static void spulse_oc_waking(void *data, struct task_struct *p)
{
	bool ph = spulse.p.offcpu_phase_stats;
	struct spulse_cpu *c;
	unsigned long flags;
	bool on_cpu, irq;
	u32 tid;
	int cpu, r;
	u64 t, pt;

	if (!spulse_oc_target(p) || !READ_ONCE(spulse_oc_live))
		return;
	local_irq_save(flags);
	cpu = smp_processor_id();
	c = this_cpu_ptr(spulse.cpu);
	t = spulse_oc_now();
	pt = spulse_oc_phase_start(ph);
	tid = task_pid_nr(p);
	on_cpu = READ_ONCE(p->on_cpu);
	c->stats.wakeups_taken++;
	/* hard IRQ, or a softirq (at IRQ exit; on RT, wherever it is run) */
	irq = !in_task();
	if (irq)
		c->stats.offcpu_wakers_in_irq++;
	r = spulse_oc_wake_peek(&spulse.oc, tid, on_cpu);
	spulse_oc_phase(ph, &pt, &c->stats.phase_wake_peek_ns);
	if (r != SPULSE_OC_WAKE_ATTACHED && r != SPULSE_OC_WAKE_EARLY) {
		/* nothing to record (final, see spulse_oc_wake_peek()) */
	} else if (c->busy) {
		c->stats.wakeups_dropped_busy++;
		goto out;
	} else {
		c->busy = 1;
		barrier();
		if (spulse_oc_capture(c, ph, irq, &pt,
				      &c->stats.phase_wake_kstack_ns,
				      &c->stats.phase_wake_ustack_ns))
			r = spulse_oc_wake(&spulse.oc, tid, on_cpu,
					   spulse_oc_nsw(p), &c->oc_cap, cpu, t);
		else
			r = -E2BIG;
		barrier();
		c->busy = 0;
		spulse_oc_phase(ph, &pt, &c->stats.phase_wake_slot_ns);
		if (unlikely(ph))
			c->stats.phase_wake_n++;
	}
	switch (r) {
	case SPULSE_OC_WAKE_ATTACHED:
		c->stats.wakeups_attached++;
		break;
	case SPULSE_OC_WAKE_EARLY:
		c->stats.wakeups_early++;
		break;
	case SPULSE_OC_WAKE_RUNNABLE:
		c->stats.wakeups_runnable++;
		break;
	case SPULSE_OC_WAKE_REPEAT:
		c->stats.wakeups_repeat++;
		break;
	case SPULSE_OC_WAKE_UNSLOTTED:
		c->stats.wakeups_unslotted++;
		break;
	case SPULSE_OC_WAKE_NO_SLOT:
		c->stats.wakeups_dropped_no_slot++;
		break;
	default:
		c->stats.wakeups_dropped_too_deep++;
		break;
	}
out:
	c->stats.offcpu_handler_ns += spulse_oc_now() - t;
	local_irq_restore(flags);
}
SPULSE_TP_TYPECHECK(sched_waking, spulse_oc_waking)

static void spulse_oc_wakeup(void *data, struct task_struct *p)
{
	unsigned long flags;

	if (!atomic_read(&spulse.oc.early) || !spulse_oc_target(p) ||
	    !READ_ONCE(spulse_oc_live))
		return;
	local_irq_save(flags);
	if (spulse_oc_wakeup_done(&spulse.oc, task_pid_nr(p)))
		this_cpu_ptr(spulse.cpu)->stats.early_stale++;
	local_irq_restore(flags);
}
SPULSE_TP_TYPECHECK(sched_wakeup, spulse_oc_wakeup)

/* Hard IRQ on every kernel: see the top of this file. */
static void spulse_oc_work_init(struct irq_work *w)
{
#ifdef IRQ_WORK_INIT_HARD
	*w = IRQ_WORK_INIT_HARD(spulse_oc_work_fn);
#else
	/* older than the flag's initializer (5.10): no mainline RT, hard IRQ */
	init_irq_work(w, spulse_oc_work_fn);
#endif
}

/**
 * spulse_offcpu_init() - find the tracepoints and allocate the slot table
 *
 * Description:
 * Nothing to do unless offcpu=1. Memory: spulse_oc_table_bytes().
 *
 * Return: 0, -ENOENT (a scheduler tracepoint is missing) or -ENOMEM.
 */
int spulse_offcpu_init(void)
{
	const struct spulse_params *p = &spulse.p;
	u32 depth = p->max_user_depth + p->max_kernel_depth;
	u32 n = spulse_oc_table_slots(p->offcpu_threads);
	size_t qn = (size_t)nr_cpu_ids * SPULSE_OC_QUEUE;
	struct spulse_oc_slot *slot;
	u64 *store;
	int cpu;

	if (!p->offcpu)
		return 0;
	for_each_kernel_tracepoint(spulse_oc_find_tp, &spulse_oc_tp);
	if (!spulse_oc_tp.sw || !spulse_oc_tp.waking || !spulse_oc_tp.wakeup) {
		pr_err("offcpu=1: sched_switch/sched_waking/sched_wakeup tracepoints not found\n");
		return -ENOENT;
	}
	slot = kvcalloc(n, sizeof(*slot), GFP_KERNEL);
	store = kvcalloc((size_t)n * 2, (size_t)depth * sizeof(u64),
			 GFP_KERNEL);
	spulse_oc_qent = kvcalloc(qn, sizeof(*spulse_oc_qent), GFP_KERNEL);
	spulse_oc_qstore = kvcalloc(qn * 2, (size_t)depth * sizeof(u64),
				    GFP_KERNEL);
	if (!slot || !store || !spulse_oc_qent || !spulse_oc_qstore) {
		kvfree(slot);
		kvfree(store);
		kvfree(spulse_oc_qent);
		kvfree(spulse_oc_qstore);
		spulse_oc_qent = NULL;
		spulse_oc_qstore = NULL;
		return -ENOMEM;
	}
	spulse_oc_table_init(&spulse.oc, slot, store, p->offcpu_threads, depth);
	for_each_possible_cpu(cpu) {
		spulse_oc_queue_init(per_cpu_ptr(&spulse_oc_q, cpu),
				     spulse_oc_qent + (size_t)cpu * SPULSE_OC_QUEUE,
				     spulse_oc_qstore + (size_t)cpu *
				     SPULSE_OC_QUEUE * 2 * depth,
				     SPULSE_OC_QUEUE, depth);
		spulse_oc_work_init(per_cpu_ptr(&spulse_oc_work, cpu));
	}
	pr_info("offcpu: %u slots, %zu bytes, queues %zu bytes\n", n,
		spulse_oc_table_bytes(p->offcpu_threads, depth),
		qn * (sizeof(*spulse_oc_qent) + 2 * (size_t)depth * sizeof(u64)));
	return 0;
}

static void spulse_oc_unregister(bool sw, bool waking, bool wakeup)
{
	if (sw)
		tracepoint_probe_unregister(spulse_oc_tp.sw, spulse_oc_switch,
					    NULL);
	if (waking)
		tracepoint_probe_unregister(spulse_oc_tp.waking,
					    spulse_oc_waking, NULL);
	if (wakeup)
		tracepoint_probe_unregister(spulse_oc_tp.wakeup,
					    spulse_oc_wakeup, NULL);
	tracepoint_synchronize_unregister();
}

static int spulse_oc_register(void)
{
	int r;

	r = tracepoint_probe_register(spulse_oc_tp.wakeup, spulse_oc_wakeup,
				      NULL);
	if (r)
		goto fail;
	r = tracepoint_probe_register(spulse_oc_tp.waking, spulse_oc_waking,
				      NULL);
	if (r) {
		spulse_oc_unregister(false, false, true);
		goto fail;
	}
	r = tracepoint_probe_register(spulse_oc_tp.sw, spulse_oc_switch, NULL);
	if (r) {
		spulse_oc_unregister(false, true, true);
		goto fail;
	}
	return 0;
fail:
	pr_err("offcpu: cannot register scheduler probes: %d\n", r);
	return r;
}

/**
 * spulse_offcpu_start() - open the gate, registering the probes the first
 * time (caller holds spulse.lock)
 *
 * Return: 0 or the tracepoint_probe_register() error (nothing registered).
 */
int spulse_offcpu_start(void)
{
	int r;

	if (!spulse.p.offcpu || spulse.oc_on)
		return 0;
	if (!spulse_oc_registered) {
		r = spulse_oc_register();
		if (r)
			return r;
		spulse_oc_registered = true;
	}
	spulse.oc_on = true;
	WRITE_ONCE(spulse_oc_live, true);
	return 0;
}

/* The stop drain on one CPU: what its irq_work has not written yet. */
static void spulse_oc_drain_ipi(void *unused)
{
	spulse_oc_write_queued(this_cpu_ptr(spulse.cpu),
			       this_cpu_ptr(&spulse_oc_q), smp_processor_id());
}

/*
 * Write every queued interval (the probes are past the gate): wait for
 * each CPU's irq_work, then drain what is left on its own CPU (an IPI;
 * the stream is that CPU's). What still cannot be written (an offline CPU,
 * whose dying path already ran its irq_work, so in practice nothing) is
 * dropped and counted in offcpu_dropped_at_stop.
 */
static void spulse_oc_drain(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&spulse_oc_work, cpu));
	for_each_possible_cpu(cpu) {
		struct spulse_oc_queue *q = per_cpu_ptr(&spulse_oc_q, cpu);
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		if (!spulse_oc_queue_len(q))
			continue;
		/* -ENXIO when offline: the discard below counts them */
		smp_call_function_single(cpu, spulse_oc_drain_ipi, NULL, 1);
		c->stats.offcpu_dropped_at_stop += spulse_oc_queue_discard(q);
	}
}

/**
 * spulse_offcpu_stop() - close the gate and the books
 *
 * Description:
 * The probes stay registered until unload: (un)registering the first or
 * last probe of a tracepoint patches the call sites in __schedule() and
 * try_to_wake_up() (static key and static call, text_poke_bp()), and doing
 * that at every stop, while the target kept switching, hung QEMU TCG
 * guests (a vCPU kept executing the int3 of the patch with interrupts
 * off, the patching CPU waited for it in the sync IPI: soft lockup, seen
 * once in 15 flight-recorder stops of a pipe ping-pong). Every probe reads
 * the gate with preemption off (tracepoint calls run under
 * preempt_disable()), so after synchronize_rcu() none is past it; threads
 * still off CPU are counted (offcpu_open_at_stop) and every slot is
 * cleared, and every closed interval still queued is written
 * (spulse_oc_drain()), so the stats identities hold exactly once stopped.
 * Caller holds spulse.lock (or is the module exit).
 */
void spulse_offcpu_stop(void)
{
	u32 early = 0;

	if (!spulse.oc_on)
		return;
	WRITE_ONCE(spulse_oc_live, false);
	synchronize_rcu();
	spulse.offcpu_open_at_stop += spulse_oc_sweep(&spulse.oc, &early);
	spulse.early_at_stop += early;
	spulse_oc_drain();
	spulse.oc_on = false;
}

/**
 * spulse_offcpu_exit() - stop, unregister (if registered) and free
 *
 * Description:
 * Once the probes are gone nothing queues the irq_work any more; each
 * CPU's is waited for (irq_work_sync()) before the queues are freed.
 */
void spulse_offcpu_exit(void)
{
	int cpu;

	spulse_offcpu_stop();
	if (spulse_oc_registered)
		spulse_oc_unregister(true, true, true);
	spulse_oc_registered = false;
	if (spulse_oc_qent) {
		for_each_possible_cpu(cpu)
			irq_work_sync(per_cpu_ptr(&spulse_oc_work, cpu));
	}
	kvfree(spulse_oc_qent);
	kvfree(spulse_oc_qstore);
	spulse_oc_qent = NULL;
	spulse_oc_qstore = NULL;
	kvfree(spulse.oc.slot);
	kvfree(spulse.oc.store);
	spulse.oc.slot = NULL;
	spulse.oc.store = NULL;
}
