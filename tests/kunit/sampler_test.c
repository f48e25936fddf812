// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the sample path of kmod/sample.c (compiled into this module, see
 * kmod_copy.h) end to end into the relay buffers: drop accounting when the
 * buffer is full (taken == written + dropped) with every byte that did get
 * written decoding to a valid stream without dangling references, the
 * nesting guard, the target filter, and a real cpu-clock perf event
 * delivering samples of this very test's kernel stack to the handler.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/math64.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/relay.h>
#include <linux/cpu.h>
#include <asm/segment.h>

#include "kmod_copy.h"
#include "stream_check.h"

#define DIR_NAME "spulse_kunit_sampler"

static struct spulse_params tiny_params(u32 target)
{
	struct spulse_params p = {
		.target_pid = target,
		.freq = 1000,
		.max_user_depth = 4,
		.max_kernel_depth = 32,
		.n_subbufs = 2,
		.offcpu_threads = SPULSE_OFFCPU_THREADS_MIN,
		.unwind_mem_kb = 64,
	};

	p.subbuf_size = spulse_batch_max(p.max_user_depth, p.max_kernel_depth);
	return p;
}

/* "User-mode" registers: the walk stops at bp 0, nothing is read. */
static void user_regs(struct pt_regs *r, u64 ip)
{
	memset(r, 0, sizeof(*r));
	r->cs = __USER_CS;
	r->ss = __USER_DS;
	r->ip = ip;
}

static void take_n(u32 n, u64 ip0)
{
	struct pt_regs r;
	unsigned long flags;
	u32 i;

	for (i = 0; i < n; i++) {
		user_regs(&r, ip0 + 16 * i);
		local_irq_save(flags);
		spulse_kunit_take(&r);
		local_irq_restore(flags);
	}
}

/* Flush, read and check every CPU's stream; returns the samples found. */
static u32 check_streams(struct kunit *test, struct sk_stream **sk)
{
	u32 samples = 0;
	int cpu;

	spulse_stream_flush();
	for_each_possible_cpu(cpu) {
		u8 *data;
		ssize_t n = rt_read_cpu(test, cpu, &data);

		KUNIT_ASSERT_GE(test, n, 0);
		if (n && sk_feed(sk[cpu], data, n))
			KUNIT_FAIL(test, "cpu%d stream: %s at offset %zu of %zd",
				   cpu, sk[cpu]->err, sk[cpu]->err_off, n);
		samples += sk[cpu]->n_samples;
	}
	return samples;
}

static struct sk_stream **new_checkers(struct kunit *test)
{
	struct sk_stream **sk = kunit_kcalloc(test, nr_cpu_ids, sizeof(*sk),
					      GFP_KERNEL);
	int cpu;

	KUNIT_ASSERT_NOT_NULL(test, sk);
	for_each_possible_cpu(cpu) {
		sk[cpu] = kunit_kzalloc(test, sizeof(**sk), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, sk[cpu]);
		sk_init(sk[cpu]);
	}
	return sk;
}

static void sampler_full_buffer_drops_are_counted_never_dangle(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u32 round, samples = 0;

	rt_setup(test, &p, DIR_NAME);
	/* two rounds: the stream must stay valid across the overflow */
	for (round = 0; round < 2; round++) {
		take_n(2000, 0x400000 + round * 0x100000);
		samples = check_streams(test, sk);
	}
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.taken, 4000ULL);
	KUNIT_EXPECT_EQ(test, st.taken, st.written + st.dropped_buffer_full +
			st.dropped_busy + st.dropped_too_deep);
	KUNIT_EXPECT_GT(test, st.dropped_buffer_full, 0ULL);
	KUNIT_EXPECT_GT(test, st.written, 0ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_busy, 0ULL);
	KUNIT_EXPECT_EQ(test, (u64)samples, st.written);
	rt_teardown();
}

static void sampler_busy_guard_drops_nested_sample(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct spulse_cpu_stats st;
	struct pt_regs r;
	unsigned long flags;

	rt_setup(test, &p, DIR_NAME);
	user_regs(&r, 0x401000);
	local_irq_save(flags);
	this_cpu_ptr(spulse.cpu)->busy = 1;	/* "interrupted a sample" */
	spulse_kunit_take(&r);
	this_cpu_ptr(spulse.cpu)->busy = 0;
	local_irq_restore(flags);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.taken, 1ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_busy, 1ULL);
	KUNIT_EXPECT_EQ(test, st.written, 0ULL);
	rt_teardown();
}

static void sampler_ignores_other_processes(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current) + 1);
	struct spulse_cpu_stats st;

	rt_setup(test, &p, DIR_NAME);
	take_n(10, 0x401000);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.taken, 0ULL);
	rt_teardown();
}

static void sampler_user_sample_has_exact_user_leaf(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u32 got;
	int cpu;

	rt_setup(test, &p, DIR_NAME);
	take_n(1, 0x401234);
	got = check_streams(test, sk);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.written, 1ULL);
	KUNIT_ASSERT_EQ(test, got, 1U);
	for_each_possible_cpu(cpu) {
		struct sk_stream *s = sk[cpu];
		u32 f;

		if (!s->n_samples)
			continue;
		f = s->stack_frame[s->last_sample_stack];
		KUNIT_EXPECT_EQ(test, s->frame_kind[f], (u8)SPULSE_FRAME_USER);
		/* the interrupted user IP is exact, not "- 1" */
		KUNIT_EXPECT_EQ(test, s->frame_addr[f], 0x401234ULL);
		KUNIT_EXPECT_EQ(test, s->n_threads, 1U);
	}
	rt_teardown();
}

static bool leaf_in_this_module(u8 kind, u64 addr)
{
	return kind == SPULSE_FRAME_KERNEL &&
	       within_module_core((unsigned long)addr, THIS_MODULE);
}

static noinline void spin_ms(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (time_before(jiffies, end))
		cpu_relax();
}

/* Create the events and turn them on; stop_events() undoes both. */
static void start_events(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(true);
	mutex_unlock(&spulse.lock);
}

static void stop_events(void)
{
	mutex_lock(&spulse.lock);
	spulse_sample_enable(false);
	mutex_unlock(&spulse.lock);
	spulse_sample_exit();
}

static void sampler_cpu_clock_event_delivers_samples(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u32 samples, in_module = 0, kframes = 0, uframes = 0, depth = 0;
	int cpu;

	p.subbuf_size = 256 << 10;
	p.n_subbufs = 4;
	rt_setup(test, &p, DIR_NAME);
	start_events(test);
	KUNIT_EXPECT_EQ(test, spulse.ev_type, (u32)PERF_TYPE_SOFTWARE);
	spin_ms(400);
	stop_events();

	rt_stats(&st);
	kunit_info(test, "taken %llu written %llu dropped full %llu busy %llu deep %llu\n",
		   st.taken, st.written, st.dropped_buffer_full,
		   st.dropped_busy, st.dropped_too_deep);
	/* 1 kHz for 400 ms; TCG timers are coarse, so ask for 5% of that */
	KUNIT_EXPECT_GE(test, st.taken, 20ULL);
	KUNIT_EXPECT_EQ(test, st.taken, st.written + st.dropped_buffer_full +
			st.dropped_busy + st.dropped_too_deep);
	for_each_possible_cpu(cpu)
		sk[cpu]->leaf_pred = leaf_in_this_module;
	samples = check_streams(test, sk);
	KUNIT_EXPECT_EQ(test, (u64)samples, st.written);
	for_each_possible_cpu(cpu) {
		in_module += sk[cpu]->n_leaf_pred;
		kframes += sk[cpu]->n_kernel_frames;
		uframes += sk[cpu]->n_user_frames;
		depth = max(depth, sk[cpu]->max_depth);
	}
	/*
	 * the ORC unwind got past the leaf: spin_ms <- this test <- kunit
	 * runner <- kthread <- ret_from_fork
	 */
	KUNIT_EXPECT_GE(test, depth, 4U);
	/*
	 * the sampled task is this kthread: kernel frames only, and the
	 * interrupted IP was (mostly) in spin_ms() of this module
	 */
	KUNIT_EXPECT_GT(test, kframes, 0U);
	KUNIT_EXPECT_EQ(test, uframes, 0U);
	KUNIT_EXPECT_GE(test, in_module * 2, samples);
	/* a kthread's ORC unwind ends cleanly at its end-of-stack hint */
	KUNIT_EXPECT_EQ(test, st.kstack_truncated, 0ULL);
	/*
	 * The events' times were folded in at disable: a cpu-clock event
	 * is never multiplexed, and it cannot fire more often than its
	 * period allows (at most one early overflow per CPU).
	 */
	kunit_info(test, "seen %llu enabled %llu running %llu throttled %llu\n",
		   st.seen, st.event_enabled_ns, st.event_running_ns,
		   st.throttled);
	KUNIT_EXPECT_GT(test, st.event_running_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, st.event_enabled_ns, st.event_running_ns);
	KUNIT_EXPECT_GE(test, st.seen, st.taken);
	KUNIT_EXPECT_LE(test, st.seen, div64_u64(st.event_running_ns *
						 p.freq, NSEC_PER_SEC) +
			num_online_cpus());
	rt_teardown();
}

/*
 * events=task: one event bound to this kthread (the target) instead of one
 * per CPU. It samples this thread only, on whatever CPU runs it: every
 * overflow seen belongs to the target (seen == taken; with per-CPU events
 * the other CPUs' events fire for nothing), the enabled/running times are
 * folded at stop, and stop releases the events.
 */
static void sampler_task_event_samples_only_the_target(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct spulse_cpu_stats st;
	int r;

	p.events = SPULSE_EVENTS_TASK;
	p.subbuf_size = 256 << 10;
	p.n_subbufs = 4;
	rt_setup(test, &p, DIR_NAME);
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	KUNIT_EXPECT_EQ(test, spulse.cpuhp_state, 0);
	mutex_lock(&spulse.lock);
	r = spulse_sample_prepare();
	mutex_unlock(&spulse.lock);
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_EXPECT_EQ(test, spulse.task_events, 1U);
	KUNIT_EXPECT_EQ(test, spulse.task_events_failed, 0U);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(true);
	mutex_unlock(&spulse.lock);
	spin_ms(200);
	/* a flush in the middle, with the events on */
	mutex_lock(&spulse.lock);
	spulse_stream_flush();
	mutex_unlock(&spulse.lock);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(spulse.running));
	spin_ms(200);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(false);
	mutex_unlock(&spulse.lock);
	KUNIT_EXPECT_NULL(test, spulse.tev);
	KUNIT_EXPECT_EQ(test, spulse.ntev, 0U);
	rt_stats(&st);
	kunit_info(test, "seen %llu taken %llu written %llu running %llu enabled %llu\n",
		   st.seen, st.taken, st.written, st.event_running_ns,
		   st.event_enabled_ns);
	KUNIT_EXPECT_GE(test, st.taken, 20ULL);
	KUNIT_EXPECT_EQ(test, st.seen, st.taken);
	KUNIT_EXPECT_EQ(test, st.taken, st.written + st.dropped_buffer_full +
			st.dropped_busy + st.dropped_too_deep);
	KUNIT_EXPECT_GT(test, st.event_running_ns, 0ULL);
	KUNIT_EXPECT_LE(test, st.event_running_ns, st.event_enabled_ns);
	KUNIT_EXPECT_LE(test, st.seen, div64_u64(st.event_running_ns *
						 p.freq, NSEC_PER_SEC) + 2);
	/* a second start creates them again, a stop releases them again */
	mutex_lock(&spulse.lock);
	r = spulse_sample_prepare();
	if (!r)
		spulse_sample_enable(true);
	mutex_unlock(&spulse.lock);
	KUNIT_EXPECT_EQ(test, r, 0);
	spin_ms(50);
	spulse_sample_exit();
	KUNIT_EXPECT_NULL(test, spulse.tev);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(spulse.running));
	rt_teardown();
}

/* events=task with a target that does not exist: start is refused. */
static void sampler_task_event_target_gone(struct kunit *test)
{
	struct spulse_params p = tiny_params(PID_MAX_LIMIT);
	int r;

	p.events = SPULSE_EVENTS_TASK;
	rt_setup(test, &p, DIR_NAME);
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	mutex_lock(&spulse.lock);
	r = spulse_sample_prepare();
	mutex_unlock(&spulse.lock);
	KUNIT_EXPECT_EQ(test, r, -ESRCH);
	KUNIT_EXPECT_NULL(test, spulse.tev);
	KUNIT_EXPECT_EQ(test, spulse.ntev, 0U);
	spulse_sample_exit();
	rt_teardown();
}

/* The events parameter: spellings, and task without a target refused. */
static void sampler_events_param(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	enum spulse_events ev = SPULSE_EVENTS_CPU;
	const char *why = NULL;

	KUNIT_EXPECT_EQ(test, spulse_parse_events("auto", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENTS_AUTO);
	KUNIT_EXPECT_EQ(test, spulse_parse_events("task\n", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENTS_TASK);
	KUNIT_EXPECT_EQ(test, spulse_parse_events("cpu", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENTS_CPU);
	KUNIT_EXPECT_EQ(test, spulse_parse_events("tasks", &ev), -EINVAL);
	KUNIT_EXPECT_EQ(test, spulse_parse_events("", &ev), -EINVAL);
	KUNIT_EXPECT_STREQ(test, spulse_events_name(SPULSE_EVENTS_TASK), "task");
	KUNIT_EXPECT_STREQ(test, spulse_events_name(SPULSE_EVENTS_CPU), "cpu");
	p.events = SPULSE_EVENTS_TASK;
	KUNIT_EXPECT_EQ(test, spulse_params_check(&p, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "events=task needs target_pid");
	p.target_pid = 1;
	KUNIT_EXPECT_EQ(test, spulse_params_check(&p, &why), 0);
}

/*
 * perf marks the overflow that throttles an event (hw.interrupts set to
 * its MAX_INTERRUPTS mark, kernel/events/core.c) and restarts the event
 * at the next tick; the handler counts the episode and, at the next
 * overflow on that CPU, the periods (1/freq) it missed. (Driving this with
 * a real event at freq=100000 is no test under TCG: overflows arrive too
 * slowly to reach max_samples_per_tick, and a software event is never
 * throttled by perf's handler-time check, so the 10 us hrtimer swamps the
 * CPU instead: an RCU stall on this kernel.)
 */
static void sampler_throttling_is_counted(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct perf_event *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct spulse_cpu_stats st;
	unsigned long flags;
	u64 t0, t1;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	ev->attr.type = PERF_TYPE_SOFTWARE;
	rt_setup(test, &p, DIR_NAME);
	local_irq_save(flags);
	ev->hw.interrupts = 7;			/* an ordinary overflow */
	spulse_kunit_throttle(ev);
	ev->hw.interrupts = ~0ULL;		/* the throttling one */
	spulse_kunit_throttle(ev);
	t0 = ktime_get_mono_fast_ns();
	/* throttled until here (mdelay() alone can be short under TCG) */
	while (ktime_get_mono_fast_ns() - t0 < 10 * NSEC_PER_MSEC)
		cpu_relax();
	ev->hw.interrupts = 1;			/* restarted: first overflow */
	t1 = ktime_get_mono_fast_ns();
	spulse_kunit_throttle(ev);
	spulse_kunit_throttle(ev);		/* nothing pending any more */
	local_irq_restore(flags);
	rt_stats(&st);
	kunit_info(test, "throttled %llu lost %llu over %llu ns\n",
		   st.throttled, st.lost_throttled, t1 - t0);
	KUNIT_EXPECT_EQ(test, st.throttled, 1ULL);
	/* 1000 Hz: >= 10 ms gap = >= 9 missed periods, no more than measured */
	KUNIT_EXPECT_GE(test, st.lost_throttled, 9ULL);
	KUNIT_EXPECT_LE(test, st.lost_throttled,
			div64_u64(ktime_get_mono_fast_ns() - t0 + NSEC_PER_MSEC,
				  NSEC_PER_MSEC));
	rt_teardown();
}

/*
 * Busy-wait @ms milliseconds of the mono clock: usable with interrupts off
 * (jiffies may not move then), never short under TCG.
 */
static void spin_mono_ms(u64 ms)
{
	u64 t0 = ktime_get_mono_fast_ns();

	while (ktime_get_mono_fast_ns() - t0 < ms * NSEC_PER_MSEC)
		cpu_relax();
}

/* events=task on this kthread's tgid, two stand-in task events */
static void task_throttle_setup(struct kunit *test, struct perf_event **a,
				struct perf_event **b)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));

	p.events = SPULSE_EVENTS_TASK;
	*a = kunit_kzalloc(test, sizeof(**a), GFP_KERNEL);
	*b = kunit_kzalloc(test, sizeof(**b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *a);
	KUNIT_ASSERT_NOT_NULL(test, *b);
	(*a)->attr.type = PERF_TYPE_SOFTWARE;
	(*b)->attr.type = PERF_TYPE_SOFTWARE;
	rt_setup(test, &p, DIR_NAME);
}

/*
 * events=task: the next overflow on a CPU after a throttle can be another
 * thread's event; it says nothing about the throttled one, so no periods
 * are counted lost for it.
 */
static void sampler_task_throttle_is_per_event(struct kunit *test)
{
	struct perf_event *a, *b;
	struct spulse_cpu_stats st;
	unsigned long flags;

	task_throttle_setup(test, &a, &b);
	local_irq_save(flags);
	a->hw.interrupts = ~0ULL;		/* a throttles */
	spulse_kunit_throttle(a);
	spin_mono_ms(10);
	b->hw.interrupts = 1;			/* b's overflow, same CPU */
	spulse_kunit_throttle(b);
	local_irq_restore(flags);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.throttled, 1ULL);
	KUNIT_EXPECT_EQ(test, st.lost_throttled, 0ULL);
	rt_teardown();
}

/*
 * events=task: a task event restarts at the next tick or when its thread
 * is switched in again, so its gap counts at most one tick of periods.
 */
static void sampler_task_throttle_gap_is_one_tick(struct kunit *test)
{
	struct perf_event *a, *b;
	struct spulse_cpu_stats st;
	unsigned long flags;

	task_throttle_setup(test, &a, &b);
	local_irq_save(flags);
	a->hw.interrupts = ~0ULL;
	spulse_kunit_throttle(a);
	spin_mono_ms(10 + 2 * TICK_NSEC / NSEC_PER_MSEC);
	a->hw.interrupts = 1;
	spulse_kunit_throttle(a);
	local_irq_restore(flags);
	rt_stats(&st);
	kunit_info(test, "lost %llu, tick %lu ns\n", st.lost_throttled,
		   (unsigned long)TICK_NSEC);
	KUNIT_EXPECT_EQ(test, st.throttled, 1ULL);
	/* 1000 Hz: at most one tick of 1 ms periods */
	KUNIT_EXPECT_LE(test, st.lost_throttled,
			(u64)(TICK_NSEC / NSEC_PER_MSEC));
	rt_teardown();
}

/*
 * events=task: a throttle still pending at stop is forgotten (the events
 * are released; the stopped time is no throttle loss), as with events=cpu.
 */
static void sampler_task_throttle_forgotten_at_stop(struct kunit *test)
{
	struct perf_event *a, *b;
	struct spulse_cpu_stats st;
	unsigned long flags;

	task_throttle_setup(test, &a, &b);
	local_irq_save(flags);
	a->hw.interrupts = ~0ULL;
	spulse_kunit_throttle(a);
	local_irq_restore(flags);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(false);
	mutex_unlock(&spulse.lock);
	spin_mono_ms(10);
	local_irq_save(flags);
	a->hw.interrupts = 1;
	spulse_kunit_throttle(a);
	local_irq_restore(flags);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.throttled, 1ULL);
	KUNIT_EXPECT_EQ(test, st.lost_throttled, 0ULL);
	rt_teardown();
}

/* sub-buffers published so far (@partial: buffers with unpublished bytes) */
static size_t produced_sum(u32 *partial)
{
	size_t n = 0;
	int cpu;

	*partial = 0;
	for_each_possible_cpu(cpu) {
		struct rchan_buf *buf = *per_cpu_ptr(spulse.chan->buf, cpu);

		if (!buf)
			continue;
		n += buf->subbufs_produced;
		*partial += buf->offset && buf->offset <= spulse.chan->subbuf_size;
	}
	return n;
}

/*
 * A flush switches each CPU's partial sub-buffer in an IPI holding that
 * CPU's busy flag like a writer: a CPU whose flag is held (a writer inside,
 * or no sampler state for good) keeps its partial sub-buffer, and the
 * flush leaves every flag as it found it. Nothing is paused: samples taken
 * between flushes are all written and read back.
 */
static void sampler_flush_holds_busy_and_pauses_nothing(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	size_t before;
	u32 i, samples, partial, left;
	int cpu;

	p.subbuf_size = 256 << 10;
	p.n_subbufs = 4;
	rt_setup(test, &p, DIR_NAME);
	take_n(3, 0x401000);
	before = produced_sum(&partial);
	KUNIT_ASSERT_GE(test, partial, 1U);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(spulse.cpu, cpu)->busy = 1;
	spulse_stream_flush();
	KUNIT_EXPECT_EQ(test, produced_sum(&left), before);
	KUNIT_EXPECT_EQ(test, left, partial);
	for_each_possible_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, per_cpu_ptr(spulse.cpu, cpu)->busy, 1);
		per_cpu_ptr(spulse.cpu, cpu)->busy = 0;
	}
	spulse_stream_flush();
	KUNIT_EXPECT_EQ(test, produced_sum(&left), before + partial);
	KUNIT_EXPECT_EQ(test, left, 0U);
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_EQ(test, per_cpu_ptr(spulse.cpu, cpu)->busy, 0);

	/* flushes every 10 ms while a real event samples this thread */
	start_events(test);
	for (i = 0; i < 30; i++) {
		spin_ms(10);
		mutex_lock(&spulse.lock);
		spulse_stream_flush();
		mutex_unlock(&spulse.lock);
		KUNIT_EXPECT_TRUE(test, READ_ONCE(spulse.running));
	}
	stop_events();
	rt_stats(&st);
	kunit_info(test, "taken %llu written %llu busy %llu produced +%zu\n",
		   st.taken, st.written, st.dropped_busy,
		   produced_sum(&left) - before);
	/* 1 kHz for 300 ms; TCG timers are coarse, so ask for 5% of that */
	KUNIT_EXPECT_GE(test, st.taken, 3ULL + 15ULL);
	KUNIT_EXPECT_EQ(test, st.taken, st.written + st.dropped_buffer_full +
			st.dropped_busy + st.dropped_too_deep);
	samples = check_streams(test, sk);
	KUNIT_EXPECT_EQ(test, (u64)samples, st.written);
	rt_teardown();
}

/*
 * A CPU whose event cannot be created still comes online (not vetoed),
 * without an event and counted; the next online gets one again, and the
 * CPU keeps the sampler state it had (allocated once).
 */
static void sampler_cpu_online_without_event_is_not_vetoed(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	unsigned int cpu;
	u64 bytes;
	int r;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 online CPUs");
	cpu = cpumask_last(cpu_online_mask);
	rt_setup(test, &p, DIR_NAME);
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	KUNIT_ASSERT_NOT_NULL(test, per_cpu_ptr(spulse.cpu, cpu)->event);
	bytes = spulse.percpu_bytes;
	KUNIT_EXPECT_GT(test, bytes, 0ULL);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_EXPECT_NULL(test, per_cpu_ptr(spulse.cpu, cpu)->event);
	atomic_set(&spulse_kunit_event_fail, 1);
	r = add_cpu(cpu);
	atomic_set(&spulse_kunit_event_fail, 0);
	KUNIT_EXPECT_EQ(test, r, 0);
	KUNIT_EXPECT_TRUE(test, cpu_online(cpu));
	KUNIT_EXPECT_NULL(test, per_cpu_ptr(spulse.cpu, cpu)->event);
	KUNIT_EXPECT_EQ(test, spulse.cpus_no_event, 1U);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);
	KUNIT_EXPECT_NOT_NULL(test, per_cpu_ptr(spulse.cpu, cpu)->event);
	KUNIT_EXPECT_EQ(test, spulse.cpus_no_event, 1U);
	KUNIT_EXPECT_TRUE(test, per_cpu_ptr(spulse.cpu, cpu)->ready);
	KUNIT_EXPECT_EQ(test, spulse.percpu_bytes, bytes);
	spulse_sample_exit();
	rt_teardown();
}

static void take_here(void *unused)
{
	struct pt_regs r;

	user_regs(&r, 0x404000);
	spulse_kunit_take(&r);	/* IPI: interrupts are off */
}

/*
 * A CPU first coming online when its sampler state cannot be allocated
 * still comes online: it is counted, gets no event, and what would be
 * written on it is dropped as busy (its buffers were never touched).
 */
static void sampler_cpu_online_without_memory_is_not_vetoed(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct spulse_cpu_stats st;
	struct spulse_cpu *c;
	unsigned int cpu;
	u64 bytes;
	int r;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 online CPUs");
	cpu = cpumask_last(cpu_online_mask);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	rt_setup(test, &p, DIR_NAME);
	c = per_cpu_ptr(spulse.cpu, cpu);
	KUNIT_EXPECT_FALSE(test, c->ready);	/* never online since load */
	bytes = spulse.percpu_bytes;
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	atomic_set(&spulse_kunit_alloc_fail, 1);
	r = add_cpu(cpu);
	atomic_set(&spulse_kunit_alloc_fail, 0);
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_EXPECT_TRUE(test, cpu_online(cpu));
	KUNIT_EXPECT_FALSE(test, c->ready);
	KUNIT_EXPECT_EQ(test, spulse.cpus_no_state, 1U);
	KUNIT_EXPECT_EQ(test, spulse.percpu_bytes, bytes);
	KUNIT_EXPECT_NULL(test, c->event);
	KUNIT_EXPECT_EQ(test, spulse.cpus_no_event, 1U);
	KUNIT_EXPECT_NULL(test, c->batch.buf);
	KUNIT_ASSERT_EQ(test, smp_call_function_single(cpu, take_here, NULL,
						       1), 0);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.taken, 1ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_busy, 1ULL);
	KUNIT_EXPECT_EQ(test, st.written, 0ULL);
	spulse_sample_exit();
	rt_teardown();
}

/* A kernel function entry whose "caller" slot holds no kernel text. */
static noinline int sampler_victim(int x)
{
	return x + 1;
}

/*
 * A kernel unwind that stops on an error: the sample keeps its kernel
 * part under the truncated marker (root) and is counted.
 */
static void sampler_kernel_unwind_error_marks_truncated(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	unsigned long fake[8], flags;
	struct pt_regs r;
	u32 got, i;
	int cpu;

	for (i = 0; i < ARRAY_SIZE(fake); i++)
		fake[i] = 0x5678;
	memset(&r, 0, sizeof(r));
	r.cs = __KERNEL_CS;
	r.ss = __KERNEL_DS;
	r.ip = (unsigned long)sampler_victim;
	r.sp = (unsigned long)fake;
	rt_setup(test, &p, DIR_NAME);
	local_irq_save(flags);
	spulse_kunit_take(&r);
	local_irq_restore(flags);
	got = check_streams(test, sk);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.written, 1ULL);
	KUNIT_EXPECT_EQ(test, st.kstack_truncated, 1ULL);
	KUNIT_ASSERT_EQ(test, got, 1U);
	for_each_possible_cpu(cpu) {
		struct sk_stream *s = sk[cpu];
		u32 f;

		if (!s->n_samples)
			continue;
		f = s->stack_frame[s->last_sample_stack];
		KUNIT_EXPECT_EQ(test, s->frame_kind[f], (u8)SPULSE_FRAME_KERNEL);
		KUNIT_EXPECT_EQ(test, s->frame_addr[f],
				(u64)(unsigned long)sampler_victim);
		/* marker (root) + the interrupted IP */
		KUNIT_EXPECT_EQ(test, s->stack_depth[s->last_sample_stack],
				(u16)2);
		KUNIT_EXPECT_EQ(test, s->n_trunc_frames, 1U);
	}
	KUNIT_EXPECT_EQ(test, sampler_victim(1), 2);
	rt_teardown();
}

static void take_same(u32 n, u64 ip)
{
	struct pt_regs r;
	unsigned long flags;
	u32 i;

	for (i = 0; i < n; i++) {
		user_regs(&r, ip);
		local_irq_save(flags);
		spulse_kunit_take(&r);
		local_irq_restore(flags);
	}
}

static void cache_counts(u64 *hits, u64 *misses)
{
	int cpu;

	*hits = 0;
	*misses = 0;
	for_each_possible_cpu(cpu) {
		*hits += per_cpu_ptr(spulse.cpu, cpu)->scache.hits;
		*misses += per_cpu_ptr(spulse.cpu, cpu)->scache.misses;
	}
}

/*
 * A repeated stack is encoded from the raw-chain cache (no frame or stack
 * record after the first), and every sample names the same leaf.
 */
static void sampler_repeated_stack_hits_cache(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u64 hits, misses;
	u32 got, frames = 0, stacks = 0;
	int cpu;

	p.subbuf_size = 256 << 10;
	rt_setup(test, &p, DIR_NAME);
	take_same(100, 0x402000);
	got = check_streams(test, sk);
	rt_stats(&st);
	cache_counts(&hits, &misses);
	KUNIT_EXPECT_EQ(test, st.written, 100ULL);
	KUNIT_EXPECT_EQ(test, got, 100U);
	/* one miss per CPU the test ran on, the rest hits */
	KUNIT_EXPECT_EQ(test, hits + misses, 100ULL);
	KUNIT_EXPECT_GE(test, hits, 100ULL - num_online_cpus());
	for_each_possible_cpu(cpu) {
		struct sk_stream *k = sk[cpu];

		frames += k->n_frames;
		stacks += k->n_stacks;
		if (k->n_samples)
			KUNIT_EXPECT_EQ(test,
					k->frame_addr[k->stack_frame[k->last_sample_stack]],
					0x402000ULL);
	}
	/* one frame and one node per stream that got samples */
	KUNIT_EXPECT_LE(test, frames, (u32)num_online_cpus());
	KUNIT_EXPECT_EQ(test, frames, stacks);
	rt_teardown();
}

static bool leaf_is_a(u8 kind, u64 addr)
{
	return kind == SPULSE_FRAME_USER && addr == 0x404000;
}

/*
 * The entry the previous sample used is compared first (spulse_take_last())
 * and answers only its own stack: two stacks taken in turn, then one
 * repeated, are all cache hits after their first sample, and every sample
 * names its own leaf.
 */
static void sampler_last_entry_answers_only_its_stack(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct sk_stream **sk = new_checkers(test);
	u32 i, got, a = 0;
	u64 hits, misses;
	int cpu;

	p.subbuf_size = 256 << 10;
	rt_setup(test, &p, DIR_NAME);
	for_each_possible_cpu(cpu)
		sk[cpu]->leaf_pred = leaf_is_a;
	for (i = 0; i < 100; i++) {
		take_same(1, 0x404000);
		take_same(1, 0x405000);
	}
	take_same(50, 0x405000);
	take_same(30, 0x404000);
	got = check_streams(test, sk);
	cache_counts(&hits, &misses);
	KUNIT_EXPECT_EQ(test, got, 280U);
	for_each_possible_cpu(cpu)
		a += sk[cpu]->n_leaf_pred;
	KUNIT_EXPECT_EQ(test, a, 130U);
	KUNIT_EXPECT_EQ(test, hits + misses, 280ULL);
	/* the first of each stack on each CPU the test ran on */
	KUNIT_EXPECT_LE(test, misses, 2ULL * num_online_cpus());
	rt_teardown();
}

/*
 * Buffer-full rollbacks forget the cached stacks too (the generation
 * changes): with a tiny buffer and one repeated stack, every byte that is
 * written still decodes without a dangling reference.
 */
static void sampler_cache_never_outlives_rollback(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u32 round, samples = 0;
	u64 hits, misses;

	rt_setup(test, &p, DIR_NAME);
	for (round = 0; round < 3; round++) {
		take_same(1500, 0x403000);
		take_n(200, 0x500000 + round * 0x10000);
		samples = check_streams(test, sk);
	}
	rt_stats(&st);
	cache_counts(&hits, &misses);
	KUNIT_EXPECT_GT(test, st.dropped_buffer_full, 0ULL);
	KUNIT_EXPECT_GT(test, hits, 0ULL);
	KUNIT_EXPECT_EQ(test, (u64)samples, st.written);
	KUNIT_EXPECT_EQ(test, st.taken, st.written + st.dropped_buffer_full +
			st.dropped_busy + st.dropped_too_deep);
	rt_teardown();
}

/*
 * One run of sampler_batch_built_in_place_same_stream(): new stacks, a
 * repeated one and known ones again, all on one CPU, whose stream is
 * decoded into *@out; *@scratch_kept says whether that CPU's batch
 * scratch still holds the poison it was filled with before.
 */
static void in_place_run(struct kunit *test, bool phase_stats,
			 struct sk_stream *out, bool *scratch_kept)
{
	struct spulse_params p = tiny_params(0);
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	struct spulse_cpu *c;
	int cpu, me;

	p.subbuf_size = 256 << 10;
	p.sample_phase_stats = phase_stats;
	rt_setup(test, &p, DIR_NAME);
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(spulse.cpu, cpu);
		if (c->batch.buf)
			memset(c->batch.buf, 0xa5, c->batch.cap);
	}
	preempt_disable();
	me = smp_processor_id();
	take_n(300, 0x410000);
	take_same(50, 0x410000 + 16 * 7);
	take_n(300, 0x410000 + 16 * 150);
	preempt_enable();
	c = per_cpu_ptr(spulse.cpu, me);
	*scratch_kept = !memchr_inv(c->batch.buf, 0xa5, c->batch.cap);
	KUNIT_EXPECT_EQ(test, check_streams(test, sk), 650U);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.written, 650ULL);
	*out = *sk[me];
	rt_teardown();
}

/*
 * A batch built in place in the relay buffer (spulse_take_inplace()) makes
 * the stream the scratch-and-copy path makes (sample_phase_stats=1 takes
 * that path): the same frames, stack nodes, threads and samples, in the
 * same order; and the in-place run never wrote the scratch.
 */
static void sampler_batch_built_in_place_same_stream(struct kunit *test)
{
	struct sk_stream *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct sk_stream *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	bool kept_a, kept_b;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	in_place_run(test, false, a, &kept_a);
	in_place_run(test, true, b, &kept_b);
	KUNIT_EXPECT_TRUE(test, kept_a);
	KUNIT_EXPECT_FALSE(test, kept_b);
	KUNIT_EXPECT_EQ(test, a->n_samples, 650U);
	KUNIT_EXPECT_EQ(test, a->n_samples, b->n_samples);
	KUNIT_EXPECT_EQ(test, a->n_records, b->n_records);
	KUNIT_EXPECT_EQ(test, a->n_threads, b->n_threads);
	KUNIT_ASSERT_EQ(test, a->n_frames, 450U);
	KUNIT_ASSERT_EQ(test, a->n_frames, b->n_frames);
	KUNIT_ASSERT_EQ(test, a->n_stacks, b->n_stacks);
	KUNIT_EXPECT_EQ(test, memcmp(a->frame_addr, b->frame_addr,
				     a->n_frames * sizeof(a->frame_addr[0])), 0);
	KUNIT_EXPECT_EQ(test, memcmp(a->stack_frame, b->stack_frame,
				     a->n_stacks * sizeof(a->stack_frame[0])),
			0);
	KUNIT_EXPECT_EQ(test, a->last_sample_stack, b->last_sample_stack);
}

/* sample_phase_stats=1 splits handler_ns; off, no phase is counted. */
static void sampler_phase_stats_split_handler_time(struct kunit *test)
{
	struct spulse_params p = tiny_params(0);
	struct spulse_cpu_stats st;
	u64 sum;

	p.subbuf_size = 256 << 10;
	rt_setup(test, &p, DIR_NAME);
	take_n(50, 0x401000);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.sample_phase_n, 0ULL);
	KUNIT_EXPECT_EQ(test, st.sample_phase_encode_ns +
			st.sample_phase_relay_ns + st.sample_phase_ustack_ns, 0ULL);
	/* off, one sample in SPULSE_HANDLER_TIME_EVERY per CPU is timed */
	KUNIT_EXPECT_GT(test, st.handler_timed, 0ULL);
	KUNIT_EXPECT_LE(test, st.handler_timed,
			(u64)DIV_ROUND_UP(50, SPULSE_HANDLER_TIME_EVERY) *
			num_possible_cpus());
	rt_teardown();

	p.sample_phase_stats = true;
	rt_setup(test, &p, DIR_NAME);
	take_n(50, 0x401000);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.sample_phase_n + st.sample_phase_outliers,
			50ULL);
	KUNIT_EXPECT_GT(test, st.sample_phase_n, 0ULL);
	KUNIT_EXPECT_EQ(test, st.written, 50ULL);
	KUNIT_EXPECT_GT(test, st.sample_phase_ustack_ns, 0ULL);
	KUNIT_EXPECT_GT(test, st.sample_phase_encode_ns, 0ULL);
	KUNIT_EXPECT_GT(test, st.sample_phase_relay_ns, 0ULL);
	/* user-mode regs: no kernel unwind */
	KUNIT_EXPECT_EQ(test, st.sample_phase_kstack_ns, 0ULL);
	sum = st.sample_phase_kstack_ns + st.sample_phase_ustack_ns +
	      st.sample_phase_meta_ns + st.sample_phase_encode_ns +
	      st.sample_phase_relay_ns;
	KUNIT_EXPECT_LE(test, sum, st.sample_phase_ns);
	KUNIT_EXPECT_LE(test, st.sample_phase_ns, st.handler_ns);
	/* on, every one is */
	KUNIT_EXPECT_EQ(test, st.handler_timed, 50ULL);
	rt_teardown();
}

/*
 * sample_null=1 (debug): a real cpu-clock event still reaches the handler,
 * which counts it in seen and takes nothing: no sample, no record, no
 * handler time. What is left is the cost of the event alone.
 */
static void sampler_null_handler_counts_and_takes_nothing(struct kunit *test)
{
	struct spulse_params p = tiny_params(task_tgid_nr(current));
	struct sk_stream **sk = new_checkers(test);
	struct spulse_cpu_stats st;
	u32 samples;

	p.sample_null = true;
	p.subbuf_size = 256 << 10;
	rt_setup(test, &p, DIR_NAME);
	start_events(test);
	spin_ms(300);
	stop_events();

	rt_stats(&st);
	kunit_info(test, "seen %llu taken %llu written %llu handler_ns %llu\n",
		   st.seen, st.taken, st.written, st.handler_ns);
	/* 1 kHz for 300 ms; TCG timers are coarse: 5% of that */
	KUNIT_EXPECT_GE(test, st.seen, 15ULL);
	KUNIT_EXPECT_EQ(test, st.taken, 0ULL);
	KUNIT_EXPECT_EQ(test, st.written, 0ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_busy, 0ULL);
	KUNIT_EXPECT_EQ(test, st.handler_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, st.handler_timed, 0ULL);
	samples = check_streams(test, sk);
	KUNIT_EXPECT_EQ(test, samples, 0U);
	rt_teardown();
}

static struct kunit_case spulse_sampler_cases[] = {
	KUNIT_CASE(sampler_full_buffer_drops_are_counted_never_dangle),
	KUNIT_CASE(sampler_busy_guard_drops_nested_sample),
	KUNIT_CASE(sampler_ignores_other_processes),
	KUNIT_CASE(sampler_user_sample_has_exact_user_leaf),
	KUNIT_CASE(sampler_cpu_clock_event_delivers_samples),
	KUNIT_CASE(sampler_task_event_samples_only_the_target),
	KUNIT_CASE(sampler_task_event_target_gone),
	KUNIT_CASE(sampler_events_param),
	KUNIT_CASE(sampler_throttling_is_counted),
	KUNIT_CASE(sampler_task_throttle_is_per_event),
	KUNIT_CASE(sampler_task_throttle_gap_is_one_tick),
	KUNIT_CASE(sampler_task_throttle_forgotten_at_stop),
	KUNIT_CASE(sampler_flush_holds_busy_and_pauses_nothing),
	KUNIT_CASE(sampler_cpu_online_without_event_is_not_vetoed),
	KUNIT_CASE(sampler_cpu_online_without_memory_is_not_vetoed),
	KUNIT_CASE(sampler_kernel_unwind_error_marks_truncated),
	KUNIT_CASE(sampler_phase_stats_split_handler_time),
	KUNIT_CASE(sampler_null_handler_counts_and_takes_nothing),
	KUNIT_CASE(sampler_repeated_stack_hits_cache),
	KUNIT_CASE(sampler_cache_never_outlives_rollback),
	KUNIT_CASE(sampler_last_entry_answers_only_its_stack),
	KUNIT_CASE(sampler_batch_built_in_place_same_stream),
	{}
};

static struct kunit_suite spulse_sampler_suite = {
	.name = "spulse_sampler",
	.test_cases = spulse_sampler_cases,
};

kunit_test_suite(spulse_sampler_suite);
