// SPDX-License-Identifier: GPL-2.0
/*
 * Where samples are taken: one perf event per online CPU (created and
 * destroyed by a CPU-hotplug state), and its overflow handler, which runs in
 * hardirq (cpu-clock) or NMI (cycles) context. The handler filters by target
 * process, captures the mixed stack (user chain then kernel chain, root to
 * leaf), encodes it as one batch and writes it to this CPU's relay buffer.
 * NMI-safe: no locks, no allocation, bounded work (depth limits).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "spulse.h"

/* Capture one sample into c->frames (root..leaf); returns the node count. */
static u32 spulse_capture(struct spulse_cpu *c, struct pt_regs *regs,
			  struct task_struct *tsk, u32 tgid, bool *too_deep)
{
	const struct spulse_params *p = &spulse.p;
	struct pt_regs *uregs = NULL;
	struct spulse_uw_res res = {};
	int nk = 0, nu = 0, i;
	u32 n = 0;

	*too_deep = false;
	if (user_mode(regs)) {
		uregs = regs;
	} else {
		nk = spulse_kstack_capture(regs, c->kbuf,
					   p->max_kernel_depth +
					   SPULSE_KSTACK_SLACK,
					   p->max_kernel_depth, too_deep);
		if (*too_deep)
			return 0;
		if (tsk->mm && !(tsk->flags & PF_KTHREAD))
			uregs = task_pt_regs(tsk);
	}
	if (uregs) {
		nu = spulse_ustack_capture(uregs, p->unwind, &c->uc, c->ubuf,
					   p->max_user_depth, &res);
		c->stats.ustack_table_steps += res.table_steps;
		c->stats.ustack_fp_steps += res.fp_steps;
		c->stats.ustack_complete += res.complete;
		c->stats.ustack_truncated += res.truncated;
		if (!p->target_pid && tgid)
			spulse_note_pid(c, tgid);
		if (nu && !spulse_meta_known(tgid, c->ubuf[0]))
			spulse_meta_kick();
	}
	if (res.truncated || (!nu && !nk))
		c->frames[n++] = (struct spulse_frame){ SPULSE_FRAME_TRUNCATED, 0 };
	for (i = nu - 1; i >= 0; i--)
		c->frames[n++] = (struct spulse_frame){ SPULSE_FRAME_USER,
							c->ubuf[i] };
	for (i = nk - 1; i >= 0; i--)
		c->frames[n++] = (struct spulse_frame){ SPULSE_FRAME_KERNEL,
							c->kbuf[i] };
	return n;
}

static void spulse_take(struct spulse_cpu *c, struct pt_regs *regs)
{
	struct task_struct *tsk = current;
	struct spulse_sample s;
	bool too_deep;

	/* the target's struct pid, not its number: NMI-safe, reuse-proof */
	if (spulse.target && task_tgid(tsk) != spulse.target)
		return;
	s.pid = task_tgid_nr(tsk);
	if (c->busy) {
		c->stats.dropped_busy++;
		c->stats.taken++;
		return;
	}
	c->busy = 1;
	barrier();
	s.t_ns = ktime_get_mono_fast_ns() - spulse.start_mono;
	s.tid = task_pid_nr(tsk);
	memcpy(s.comm, tsk->comm, sizeof(s.comm));
	s.frames = c->frames;
	s.n = spulse_capture(c, regs, tsk, s.pid, &too_deep);
	if (too_deep) {
		c->stats.dropped_too_deep++;
	} else if (spulse_batch_build(&c->enc, &c->batch, &s, spulse.start_us,
				      spulse.interval_us)) {
		/* cannot happen with validated sizes; counted, not lost */
		c->stats.dropped_too_deep++;
	} else if (!spulse_batch_put(c)) {
		c->stats.dropped_buffer_full++;
	} else {
		spulse_batch_commit(&c->enc, &c->batch, s.t_ns);
		c->stats.written++;
	}
	c->stats.taken++;
	c->stats.handler_ns += ktime_get_mono_fast_ns() - spulse.start_mono -
			       s.t_ns;
	barrier();
	c->busy = 0;
}

static void spulse_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	if (!READ_ONCE(spulse.running))
		return;
	spulse_take(this_cpu_ptr(spulse.cpu), regs);
}

static struct perf_event *spulse_event_create(int cpu)
{
	struct perf_event_attr attr = {
		.type = spulse.ev_type,
		.config = spulse.ev_config,
		.size = sizeof(attr),
		.sample_freq = spulse.p.freq,
		.freq = 1,
		.disabled = 1,
	};

	return perf_event_create_kernel_counter(&attr, cpu, NULL,
						spulse_overflow, NULL);
}

static int spulse_cpu_online(unsigned int cpu)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);
	struct perf_event *ev = spulse_event_create(cpu);

	if (IS_ERR(ev)) {
		pr_err("cannot create perf event on cpu%u: %ld\n", cpu,
		       PTR_ERR(ev));
		return PTR_ERR(ev);
	}
	c->event = ev;
	if (spulse.running)
		perf_event_enable(ev);
	return 0;
}

static int spulse_cpu_offline(unsigned int cpu)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

	if (c->event) {
		perf_event_disable(c->event);
		perf_event_release_kernel(c->event);
		c->event = NULL;
	}
	return 0;
}

/* Decide the event type; cycles falls back to cpu-clock without a PMU. */
static int spulse_pick_event(void)
{
	struct perf_event *probe;
	long err;

	spulse.ev_type = PERF_TYPE_SOFTWARE;
	spulse.ev_config = PERF_COUNT_SW_CPU_CLOCK;
	if (spulse.p.event != SPULSE_EVENT_CYCLES)
		return 0;
	spulse.ev_type = PERF_TYPE_HARDWARE;
	spulse.ev_config = PERF_COUNT_HW_CPU_CYCLES;
	probe = spulse_event_create(cpumask_first(cpu_online_mask));
	if (!IS_ERR(probe)) {
		perf_event_release_kernel(probe);
		return 0;
	}
	err = PTR_ERR(probe);
	if (err != -ENOENT && err != -EOPNOTSUPP) {
		pr_err("cannot create cycles event: %ld\n", err);
		return err;
	}
	pr_info("no hardware cycles event (%ld), falling back to cpu-clock\n",
		err);
	spulse.p.event = SPULSE_EVENT_CPU_CLOCK;
	spulse.ev_type = PERF_TYPE_SOFTWARE;
	spulse.ev_config = PERF_COUNT_SW_CPU_CLOCK;
	return 0;
}

/**
 * spulse_sample_init() - pick the event and create one per online CPU
 *
 * Description:
 * Events are created disabled; spulse_sample_enable() turns them on.
 *
 * Return: 0 or a negative errno (nothing left allocated).
 */
int spulse_sample_init(void)
{
	int r = spulse_pick_event();

	if (r)
		return r;
	r = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "spulse:online",
			      spulse_cpu_online, spulse_cpu_offline);
	if (r < 0)
		return r;
	spulse.cpuhp_state = r;
	return 0;
}

/**
 * spulse_sample_exit() - release every event (no handler runs afterwards)
 */
void spulse_sample_exit(void)
{
	if (spulse.cpuhp_state > 0)
		cpuhp_remove_state(spulse.cpuhp_state);
	spulse.cpuhp_state = 0;
}

/**
 * spulse_sample_enable() - enable or disable every CPU's event
 * @on: enable
 *
 * Caller holds spulse.lock. Takes the hotplug read lock so that the set of
 * events and spulse.running change together. perf_event_disable() returns
 * once the event is off on its CPU, so no handler is running afterwards.
 */
void spulse_sample_enable(bool on)
{
	int cpu;

	cpus_read_lock();
	WRITE_ONCE(spulse.running, on);
	for_each_online_cpu(cpu) {
		struct perf_event *ev = per_cpu_ptr(spulse.cpu, cpu)->event;

		if (!ev)
			continue;
		if (on)
			perf_event_enable(ev);
		else
			perf_event_disable(ev);
	}
	cpus_read_unlock();
}
