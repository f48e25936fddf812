// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: load-parameter validation (kmod/params.c): every bound accepted at
 * its edge and refused one past it, with a reason; event and unwind names;
 * and that spulse_batch_max() really bounds the largest batch the encoder produces
 * (a relay sub-buffer of that size always holds one sample).
 */
#include <kunit/test.h>
#include <linux/threads.h>

#include "params.h"
#include "encoder.h"

static struct spulse_params good(void)
{
	struct spulse_params p = {
		.target_pid = 1,
		.freq = 99,
		.max_user_depth = 127,
		.max_kernel_depth = 64,
		.event = SPULSE_EVENT_CPU_CLOCK,
		.subbuf_size = 256 << 10,
		.n_subbufs = 8,
		.offcpu_threads = 4096,
		.offcpu_min_us = 5,
		.unwind_mem_kb = 65536,
	};
	return p;
}

static void expect_refused(struct kunit *test, const struct spulse_params *p,
			   const char *what)
{
	const char *why = NULL;

	KUNIT_EXPECT_EQ_MSG(test, spulse_params_check(p, &why), -EINVAL,
			    "%s accepted", what);
	KUNIT_EXPECT_NOT_ERR_OR_NULL_MSG(test, why, "%s: no reason", what);
}

static void expect_accepted(struct kunit *test, const struct spulse_params *p,
			    const char *what)
{
	const char *why = "unset";

	KUNIT_EXPECT_EQ_MSG(test, spulse_params_check(p, &why), 0,
			    "%s refused: %s", what, why);
}

static void params_defaults_accepted(struct kunit *test)
{
	struct spulse_params p = good();

	expect_accepted(test, &p, "typical parameters");
	p.target_pid = 0;
	expect_accepted(test, &p, "target_pid 0 (whole system)");
}

static void params_freq_bounds(struct kunit *test)
{
	struct spulse_params p = good();

	p.freq = SPULSE_FREQ_MIN;
	expect_accepted(test, &p, "freq min");
	p.freq = SPULSE_FREQ_MAX;
	expect_accepted(test, &p, "freq max");
	p.freq = 0;
	expect_refused(test, &p, "freq 0");
	p.freq = SPULSE_FREQ_MAX + 1;
	expect_refused(test, &p, "freq max+1");
}

static void params_depth_bounds(struct kunit *test)
{
	struct spulse_params p = good();

	p.subbuf_size = SPULSE_SUBBUF_MAX;
	p.n_subbufs = 2;	/* 128 MiB: within the per-CPU bound */
	p.max_user_depth = 0;
	expect_refused(test, &p, "user depth 0");
	p.max_user_depth = 1;
	p.max_kernel_depth = 0;
	expect_refused(test, &p, "kernel depth 0");
	p.max_user_depth = SPULSE_DEPTH_TOTAL_MAX - 1;
	p.max_kernel_depth = 1;
	expect_accepted(test, &p, "total depth 1023");
	p.max_kernel_depth = 2;
	expect_refused(test, &p, "total depth 1024");
	p.max_user_depth = 0xffffffffU;	/* u32 sum must not wrap */
	p.max_kernel_depth = 2;
	expect_refused(test, &p, "wrapping depth sum");
}

static void params_buffer_bounds(struct kunit *test)
{
	struct spulse_params p = good();
	size_t need = spulse_batch_max(p.max_user_depth, p.max_kernel_depth);

	p.subbuf_size = need;
	expect_accepted(test, &p, "subbuf == batch max");
	p.subbuf_size = need - 1;
	expect_refused(test, &p, "subbuf < batch max");
	p.subbuf_size = SPULSE_SUBBUF_MAX + 1;
	expect_refused(test, &p, "subbuf > 64 MiB");
	p = good();
	p.n_subbufs = SPULSE_NSUBBUF_MIN;
	expect_accepted(test, &p, "n_subbufs min");
	p.n_subbufs = SPULSE_NSUBBUF_MAX;
	expect_accepted(test, &p, "n_subbufs max");
	p.n_subbufs = SPULSE_NSUBBUF_MIN - 1;
	expect_refused(test, &p, "n_subbufs min-1");
	p.n_subbufs = SPULSE_NSUBBUF_MAX + 1;
	expect_refused(test, &p, "n_subbufs max+1");
	/* relay buffer per CPU: subbuf_size * n_subbufs <= 256 MiB */
	p = good();
	p.subbuf_size = SPULSE_RELAY_CPU_MAX / 4;
	p.n_subbufs = 4;
	expect_accepted(test, &p, "relay per CPU == 256 MiB");
	p.n_subbufs = 5;
	expect_refused(test, &p, "relay per CPU 320 MiB");
	p.subbuf_size = SPULSE_SUBBUF_MAX;
	p.n_subbufs = SPULSE_NSUBBUF_MAX;
	expect_refused(test, &p, "relay per CPU 64 GiB");
	p.subbuf_size = (SPULSE_RELAY_CPU_MAX / SPULSE_NSUBBUF_MAX) + 1;
	expect_refused(test, &p, "relay per CPU 256 MiB + 1024");
}

/* the relay memory bound at load counts the guard sub-buffer of each CPU */
static void params_relay_bytes(struct kunit *test)
{
	struct spulse_params p = good();

	KUNIT_EXPECT_EQ(test, spulse_relay_bytes(&p, 4),
			4ULL * 9 * (256 << 10));
	p.subbuf_size = 64 << 20;
	p.n_subbufs = 4;
	KUNIT_EXPECT_EQ(test, spulse_relay_bytes(&p, 8192), 8192ULL * 5 * (64 << 20));
	KUNIT_EXPECT_EQ(test, spulse_relay_bytes(&p, 0), 0ULL);
}

static void params_target_pid_bound(struct kunit *test)
{
	struct spulse_params p = good();

	p.target_pid = PID_MAX_LIMIT;
	expect_accepted(test, &p, "pid PID_MAX_LIMIT");
	p.target_pid = PID_MAX_LIMIT + 1;
	expect_refused(test, &p, "pid PID_MAX_LIMIT+1");
}

static void params_max_depth_bound(struct kunit *test)
{
	struct spulse_params p = good();

	/* main.c sets both limits from max_depth before the check */
	p.max_depth = SPULSE_DEPTH_BOTH_MAX;
	p.max_user_depth = p.max_kernel_depth = p.max_depth;
	expect_accepted(test, &p, "max_depth 511");
	p.max_depth = SPULSE_DEPTH_BOTH_MAX + 1;
	p.max_user_depth = p.max_kernel_depth = p.max_depth;
	expect_refused(test, &p, "max_depth 512");
	p.max_depth = 0xffffffffU;
	p.max_user_depth = p.max_kernel_depth = p.max_depth;
	expect_refused(test, &p, "max_depth u32 max");
}

static void params_offcpu_bounds(struct kunit *test)
{
	struct spulse_params p = good();
	int on;

	/* offcpu_threads is checked whether or not offcpu=1 */
	for (on = 0; on <= 1; on++) {
		p = good();
		p.offcpu = on;
		p.subbuf_size = SPULSE_SUBBUF_MAX;
		p.n_subbufs = 2;	/* within the per-CPU relay bound */
		p.offcpu_threads = SPULSE_OFFCPU_THREADS_MIN;
		expect_accepted(test, &p, "offcpu_threads min");
		p.offcpu_threads = SPULSE_OFFCPU_THREADS_MAX;
		expect_accepted(test, &p, "offcpu_threads max");
		p.offcpu_threads = SPULSE_OFFCPU_THREADS_MIN - 1;
		expect_refused(test, &p, "offcpu_threads min-1");
		p.offcpu_threads = SPULSE_OFFCPU_THREADS_MAX + 1;
		expect_refused(test, &p, "offcpu_threads max+1");
		p.offcpu_threads = 0;
		expect_refused(test, &p, "offcpu_threads 0");
		p.offcpu_threads = 4096;
		p.offcpu_min_us = 0;
		expect_accepted(test, &p, "offcpu_min_us 0");
		p.offcpu_min_us = SPULSE_OFFCPU_MIN_US_MAX;
		expect_accepted(test, &p, "offcpu_min_us max");
		p.offcpu_min_us = SPULSE_OFFCPU_MIN_US_MAX + 1;
		expect_refused(test, &p, "offcpu_min_us max+1");
	}
	/* an off-CPU batch needs more room than a sample */
	p = good();
	p.offcpu = true;
	p.subbuf_size = spulse_batch_max_offcpu(p.max_user_depth,
						p.max_kernel_depth);
	expect_accepted(test, &p, "subbuf == off-CPU batch max");
	p.subbuf_size--;
	expect_refused(test, &p, "subbuf < off-CPU batch max");
	p.offcpu = false;
	expect_accepted(test, &p, "the same subbuf without offcpu");
}

static void params_unwind_bounds(struct kunit *test)
{
	struct spulse_params p = good();
	enum spulse_unwind_mode m = SPULSE_UNWIND_FP;

	p.unwind_mem_kb = SPULSE_UNWIND_MEM_KB_MIN;
	expect_accepted(test, &p, "unwind_mem_kb min");
	p.unwind_mem_kb = SPULSE_UNWIND_MEM_KB_MAX;
	expect_accepted(test, &p, "unwind_mem_kb max");
	p.unwind_mem_kb = SPULSE_UNWIND_MEM_KB_MIN - 1;
	expect_refused(test, &p, "unwind_mem_kb 0");
	p.unwind_mem_kb = SPULSE_UNWIND_MEM_KB_MAX + 1;
	expect_refused(test, &p, "unwind_mem_kb max+1");
	KUNIT_EXPECT_EQ(test, spulse_parse_unwind("auto", &m), 0);
	KUNIT_EXPECT_EQ(test, m, SPULSE_UNWIND_AUTO);
	KUNIT_EXPECT_EQ(test, spulse_parse_unwind("fp\n", &m), 0);
	KUNIT_EXPECT_EQ(test, m, SPULSE_UNWIND_FP);
	KUNIT_EXPECT_EQ(test, spulse_parse_unwind("tables", &m), 0);
	KUNIT_EXPECT_EQ(test, m, SPULSE_UNWIND_TABLES);
	KUNIT_EXPECT_EQ(test, spulse_parse_unwind("", &m), -EINVAL);
	KUNIT_EXPECT_EQ(test, spulse_parse_unwind("table", &m), -EINVAL);
	KUNIT_EXPECT_EQ(test, m, SPULSE_UNWIND_TABLES);	/* unchanged */
	KUNIT_EXPECT_STREQ(test, spulse_unwind_name(SPULSE_UNWIND_AUTO), "auto");
	KUNIT_EXPECT_STREQ(test, spulse_unwind_name(SPULSE_UNWIND_FP), "fp");
	KUNIT_EXPECT_STREQ(test, spulse_unwind_name(SPULSE_UNWIND_TABLES),
			   "tables");
}

static void params_event_names(struct kunit *test)
{
	enum spulse_event ev = SPULSE_EVENT_CYCLES;

	KUNIT_EXPECT_EQ(test, spulse_parse_event("cpu-clock", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENT_CPU_CLOCK);
	KUNIT_EXPECT_EQ(test, spulse_parse_event("cycles\n", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENT_CYCLES);
	KUNIT_EXPECT_EQ(test, spulse_parse_event("cpu", &ev), -EINVAL);
	KUNIT_EXPECT_EQ(test, spulse_parse_event("", &ev), -EINVAL);
	KUNIT_EXPECT_EQ(test, spulse_parse_event("cycles x", &ev), -EINVAL);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENT_CYCLES);	/* unchanged */
	KUNIT_EXPECT_STREQ(test, spulse_event_name(SPULSE_EVENT_CPU_CLOCK),
			   "cpu-clock");
	KUNIT_EXPECT_STREQ(test, spulse_event_name(SPULSE_EVENT_CYCLES),
			   "cycles");
	KUNIT_EXPECT_EQ(test, spulse_parse_event("bp", &ev), 0);
	KUNIT_EXPECT_EQ(test, ev, SPULSE_EVENT_BP);
	KUNIT_EXPECT_STREQ(test, spulse_event_name(SPULSE_EVENT_BP), "bp");
}

/* The worst case: fresh stream, long comm, every node new, huge varints. */
static void params_batch_max_bounds_real_batch(struct kunit *test)
{
	const u32 ud = 40, kd = 20, n = ud + kd + 1;
	struct spulse_intern_ent *ent;
	struct spulse_frame *fr;
	struct spulse_sample s = { .pid = 0xffffffffU, .tid = 0xffffffffU };
	struct spulse_enc *e;
	struct spulse_batch b = { 0 };
	u32 i;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	fr = kunit_kcalloc(test, n, sizeof(*fr), GFP_KERNEL);
	ent = kunit_kcalloc(test, 3 * 1024, sizeof(*ent), GFP_KERNEL);
	b.cap = 2 * spulse_batch_max(ud, kd);
	b.buf = kunit_kzalloc(test, b.cap, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, fr);
	KUNIT_ASSERT_NOT_NULL(test, ent);
	KUNIT_ASSERT_NOT_NULL(test, b.buf);
	spulse_intern_init(&e->frames, ent, 10);
	spulse_intern_init(&e->stacks, ent + 1024, 10);
	spulse_intern_init(&e->threads, ent + 2048, 10);
	/*
	 * ids near the u32 limit make every id varint 5 bytes long (with an
	 * epoch limit that high, so that they are not restarted at 0)
	 */
	e->id_limit = SPULSE_MAX_ID;
	e->next_frame = e->next_stack = e->next_thread = 0xf0000000U;
	memset(s.comm, 'c', sizeof(s.comm));
	fr[0].kind = SPULSE_FRAME_TRUNCATED;
	for (i = 1; i < n; i++) {
		fr[i].kind = i <= ud ? SPULSE_FRAME_USER : SPULSE_FRAME_KERNEL;
		fr[i].addr = ~0ULL - i;
	}
	s.frames = fr;
	s.n = n;
	s.t_ns = ~0ULL >> 1;
	KUNIT_ASSERT_EQ(test, spulse_batch_build(e, &b, &s, ~0ULL, ~0ULL), 0);
	KUNIT_EXPECT_LE(test, b.len, spulse_batch_max(ud, kd));
}

static struct kunit_case spulse_params_cases[] = {
	KUNIT_CASE(params_defaults_accepted),
	KUNIT_CASE(params_freq_bounds),
	KUNIT_CASE(params_depth_bounds),
	KUNIT_CASE(params_buffer_bounds),
	KUNIT_CASE(params_relay_bytes),
	KUNIT_CASE(params_target_pid_bound),
	KUNIT_CASE(params_max_depth_bound),
	KUNIT_CASE(params_offcpu_bounds),
	KUNIT_CASE(params_unwind_bounds),
	KUNIT_CASE(params_event_names),
	KUNIT_CASE(params_batch_max_bounds_real_batch),
	{}
};

static struct kunit_suite spulse_params_suite = {
	.name = "spulse_params",
	.test_cases = spulse_params_cases,
};
kunit_test_suite(spulse_params_suite);
