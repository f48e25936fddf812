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
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/relay.h>
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

	spulse_relay_flush();
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
	KUNIT_ASSERT_EQ(test, spulse_sample_init(), 0);
	KUNIT_EXPECT_EQ(test, spulse.ev_type, (u32)PERF_TYPE_SOFTWARE);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(true);
	mutex_unlock(&spulse.lock);
	spin_ms(400);
	mutex_lock(&spulse.lock);
	spulse_sample_enable(false);
	mutex_unlock(&spulse.lock);
	spulse_sample_exit();

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
	/* the ORC unwind got past the leaf: spin_ms <- this test <- kunit
	 * runner <- kthread <- ret_from_fork */
	KUNIT_EXPECT_GE(test, depth, 4U);
	/* the sampled task is this kthread: kernel frames only, and the
	 * interrupted IP was (mostly) in spin_ms() of this module */
	KUNIT_EXPECT_GT(test, kframes, 0U);
	KUNIT_EXPECT_EQ(test, uframes, 0U);
	KUNIT_EXPECT_GE(test, in_module * 2, samples);
	rt_teardown();
}

static struct kunit_case spulse_sampler_cases[] = {
	KUNIT_CASE(sampler_full_buffer_drops_are_counted_never_dangle),
	KUNIT_CASE(sampler_busy_guard_drops_nested_sample),
	KUNIT_CASE(sampler_ignores_other_processes),
	KUNIT_CASE(sampler_user_sample_has_exact_user_leaf),
	KUNIT_CASE(sampler_cpu_clock_event_delivers_samples),
	{}
};

static struct kunit_suite spulse_sampler_suite = {
	.name = "spulse_sampler",
	.test_cases = spulse_sampler_cases,
};
kunit_test_suite(spulse_sampler_suite);
