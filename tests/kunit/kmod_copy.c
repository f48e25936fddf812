// SPDX-License-Identifier: GPL-2.0
/*
 * The test module's runtime instance (struct spulse_state spulse) for the
 * kmod/ sources compiled in by copy_*.c, stand-ins for the meta.c calls of
 * the sample path, and setup/readback helpers for the relay and sampler
 * suites. Streams are read back from the relay buffers (rt_read_cpu()).
 */
#include <linux/debugfs.h>
#include <linux/pid.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "kmod_copy.h"

struct spulse_state spulse;
atomic_t spulse_kunit_meta_kicks = ATOMIC_INIT(0);

/* meta.c is not compiled in: every address counts as a known module. */
bool spulse_meta_known(u32 pid, u64 addr)
{
	return true;
}

void spulse_meta_kick(void)
{
	atomic_inc(&spulse_kunit_meta_kicks);
}

/* A target no task has (target_pid names no process): compared, never used. */
static struct pid rt_no_pid;

/**
 * rt_setup() - a fresh runtime: params, per-CPU state, relay files
 * @test: the test (failures are asserted)
 * @p: parameters (validated here with spulse_params_check())
 * @dirname: debugfs directory for the cpuN files
 *
 * Events are not created; the sampler suite calls spulse_sample_init().
 */
int rt_setup(struct kunit *test, const struct spulse_params *p,
	     const char *dirname)
{
	const char *why = NULL;

	KUNIT_ASSERT_EQ_MSG(test, spulse_params_check(p, &why), 0, "%s", why);
	memset(&spulse, 0, sizeof(spulse));
	mutex_init(&spulse.lock);
	spulse.p = *p;
	/* the sampler filters by struct pid, as main.c resolves target_pid */
	if (p->target_pid) {
		spulse.target = find_get_pid(p->target_pid);
		if (!spulse.target)
			spulse.target = &rt_no_pid;
	}
	spulse.interval_us = USEC_PER_SEC / p->freq;
	spulse.dir = debugfs_create_dir(dirname, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(spulse.dir));
	KUNIT_ASSERT_EQ(test, spulse_cpu_alloc(), 0);
	KUNIT_ASSERT_EQ(test, spulse_stream_open(), 0);
	spulse.start_us = ktime_get_real_ns() / NSEC_PER_USEC;
	spulse.start_mono = ktime_get_mono_fast_ns();
	spulse.started = true;
	return 0;
}

/**
 * rt_teardown() - undo rt_setup() (and spulse_sample_init() if done)
 */
void rt_teardown(void)
{
	if (spulse.cpuhp_state > 0)
		spulse_sample_exit();
	spulse_stream_close();
	debugfs_remove_recursive(spulse.dir);
	spulse.dir = NULL;
	spulse_cpu_free();
	if (spulse.target != &rt_no_pid)
		put_pid(spulse.target);
	spulse.target = NULL;
}

/**
 * rt_stats() - sum the per-CPU counters
 * @sum: result
 */
void rt_stats(struct spulse_cpu_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct spulse_cpu_stats *s =
			&per_cpu_ptr(spulse.cpu, cpu)->stats;

		sum->taken += s->taken;
		sum->written += s->written;
		sum->dropped_buffer_full += s->dropped_buffer_full;
		sum->dropped_busy += s->dropped_busy;
		sum->dropped_too_deep += s->dropped_too_deep;
		sum->handler_ns += s->handler_ns;
		sum->handler_timed += s->handler_timed;
		sum->seen += s->seen;
		sum->throttled += s->throttled;
		sum->lost_throttled += s->lost_throttled;
		sum->event_enabled_ns += s->event_enabled_ns;
		sum->event_running_ns += s->event_running_ns;
		sum->kstack_truncated += s->kstack_truncated;
		sum->sample_phase_n += s->sample_phase_n;
		sum->sample_phase_outliers += s->sample_phase_outliers;
		sum->sample_phase_ns += s->sample_phase_ns;
		sum->sample_phase_kstack_ns += s->sample_phase_kstack_ns;
		sum->sample_phase_ustack_ns += s->sample_phase_ustack_ns;
		sum->sample_phase_meta_ns += s->sample_phase_meta_ns;
		sum->sample_phase_encode_ns += s->sample_phase_encode_ns;
		sum->sample_phase_relay_ns += s->sample_phase_relay_ns;
	}
}

/**
 * rt_read_cpu() - read and consume what a CPU's relay buffer holds
 * @test: the test (the buffer is test-managed)
 * @cpu: CPU
 * @data: set to the bytes read
 *
 * Reads like the relay file does (finished sub-buffers without their
 * padding, then the current one up to its offset, each from where the
 * previous read stopped) but straight from the buffer: relay files have
 * only ->read, which kernel_read() refuses. What was read is marked
 * consumed as a reader's read would (relay_subbufs_consumed() for the
 * finished sub-buffers, bytes_consumed for the current one). Writers must
 * be quiet.
 *
 * Return: bytes read, or -ENOMEM.
 */
ssize_t rt_read_cpu(struct kunit *test, int cpu, u8 **data)
{
	struct rchan_buf *buf = *per_cpu_ptr(spulse.chan->buf, cpu);
	size_t sz = spulse.p.subbuf_size, n = buf->chan->n_subbufs;
	size_t produced = buf->subbufs_produced;
	size_t consumed = buf->subbufs_consumed;
	size_t skip = buf->bytes_consumed, cur = 0;
	size_t i, idx, len, total = 0;

	*data = kunit_kzalloc(test, sz * n, GFP_KERNEL);
	if (!*data)
		return -ENOMEM;
	for (i = consumed; i < produced; i++) {
		idx = i % n;
		len = sz - buf->padding[idx];
		if (skip < len) {
			memcpy(*data + total, buf->start + idx * sz + skip,
			       len - skip);
			total += len - skip;
		}
		skip = 0;
	}
	if (buf->offset <= sz && produced - consumed < n) {
		idx = produced % n;
		if (buf->offset > skip) {
			memcpy(*data + total, buf->start + idx * sz + skip,
			       buf->offset - skip);
			total += buf->offset - skip;
		}
		cur = buf->offset;
	}
	relay_subbufs_consumed(spulse.chan, cpu, produced - consumed);
	buf->bytes_consumed = cur;
	return total;
}
