// SPDX-License-Identifier: GPL-2.0
/*
 * The stats file's text: every counter summed over CPUs, as "key value"
 * lines (docs/KERNEL.md lists the keys). Registered by control.c.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/relay.h>
#include <linux/seq_file.h>
#include <linux/stddef.h>

#include "spulse.h"
#include "compat.h"
#include "control.h"
#include "meta.h"
#include "offcpu.h"
#include "percpu.h"
#include "sample.h"
#include "stats.h"
#include "stream.h"
#include "unwind.h"

/* A stats key: the name of a struct spulse_cpu_stats field, and its offset. */
struct spulse_stat_key {
	const char *key;
	size_t off;
};

#define SPULSE_STAT(f) { #f, offsetof(struct spulse_cpu_stats, f) }

/* Off-CPU, wakeup and trigger counters. */
static const struct spulse_stat_key spulse_oc_keys[] = {
	SPULSE_STAT(offcpu_taken),
	SPULSE_STAT(offcpu_written),
	SPULSE_STAT(offcpu_filtered),
	SPULSE_STAT(offcpu_dropped_buffer_full),
	SPULSE_STAT(offcpu_dropped_busy),
	SPULSE_STAT(offcpu_dropped_no_slot),
	SPULSE_STAT(offcpu_dropped_too_deep),
	SPULSE_STAT(offcpu_dropped_error),
	SPULSE_STAT(offcpu_dropped_queue_full),
	SPULSE_STAT(offcpu_dropped_at_stop),
	SPULSE_STAT(offcpu_lost),
	SPULSE_STAT(offcpu_state_raced),
	SPULSE_STAT(offcpu_handler_ns),
	SPULSE_STAT(offcpu_write_ns),
	SPULSE_STAT(offcpu_write_deferred),
	SPULSE_STAT(wakeups_taken),
	SPULSE_STAT(offcpu_wakers_in_irq),
	SPULSE_STAT(wakeups_attached),
	SPULSE_STAT(wakeups_early),
	SPULSE_STAT(wakeups_runnable),
	SPULSE_STAT(wakeups_repeat),
	SPULSE_STAT(wakeups_unslotted),
	SPULSE_STAT(wakeups_dropped_busy),
	SPULSE_STAT(wakeups_dropped_no_slot),
	SPULSE_STAT(wakeups_dropped_too_deep),
	SPULSE_STAT(early_applied),
	SPULSE_STAT(early_stale),
	SPULSE_STAT(triggers_written),
	SPULSE_STAT(triggers_dropped),
};

/* offcpu_phase_stats=1 only: the probes' phase timers. */
static const struct spulse_stat_key spulse_ph_keys[] = {
	SPULSE_STAT(phase_out_n),
	SPULSE_STAT(phase_out_kstack_ns),
	SPULSE_STAT(phase_out_ustack_ns),
	SPULSE_STAT(phase_out_slot_ns),
	SPULSE_STAT(phase_wake_n),
	SPULSE_STAT(phase_wake_peek_ns),
	SPULSE_STAT(phase_wake_kstack_ns),
	SPULSE_STAT(phase_wake_ustack_ns),
	SPULSE_STAT(phase_wake_slot_ns),
	SPULSE_STAT(phase_in_n),
	SPULSE_STAT(phase_in_close_ns),
	SPULSE_STAT(phase_write_n),
	SPULSE_STAT(phase_write_encode_ns),
	SPULSE_STAT(phase_write_relay_ns),
};

/* Losses before the handler, kernel unwind truncation (sample.c). */
static const struct spulse_stat_key spulse_loss_keys[] = {
	SPULSE_STAT(seen),
	SPULSE_STAT(throttled),
	SPULSE_STAT(lost_throttled),
	SPULSE_STAT(event_enabled_ns),
	SPULSE_STAT(event_running_ns),
	SPULSE_STAT(kstack_truncated),
};

/* sample_phase_stats=1 only: the sample handler's phase timers. */
static const struct spulse_stat_key spulse_sph_keys[] = {
	SPULSE_STAT(sample_phase_n),
	SPULSE_STAT(sample_phase_outliers),
	SPULSE_STAT(sample_phase_ns),
	SPULSE_STAT(sample_phase_kstack_ns),
	SPULSE_STAT(sample_phase_ustack_ns),
	SPULSE_STAT(sample_phase_meta_ns),
	SPULSE_STAT(sample_phase_encode_ns),
	SPULSE_STAT(sample_phase_relay_ns),
};

/* User unwinding of samples; ustack_cut_*: every cut user stack. */
static const struct spulse_stat_key spulse_uw_keys[] = {
	SPULSE_STAT(ustack_table_steps),
	SPULSE_STAT(ustack_fp_steps),
	SPULSE_STAT(ustack_complete),
	SPULSE_STAT(ustack_truncated),
	SPULSE_STAT(ustack_cut_no_table_yet),
	SPULSE_STAT(ustack_cut_no_table),
	SPULSE_STAT(ustack_cut_no_row),
	SPULSE_STAT(ustack_cut_table_unknown),
	SPULSE_STAT(ustack_cut_depth),
	SPULSE_STAT(ustack_cut_unreadable),
	SPULSE_STAT(ustack_cut_bad_frame),
	SPULSE_STAT(ustack_cut_compat32),
};

static u64 *spulse_stat(struct spulse_cpu_stats *s, size_t off)
{
	return (u64 *)((char *)s + off);
}

static void spulse_stats_add_offcpu(struct spulse_cpu_stats *t,
				    struct spulse_cpu_stats *c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(spulse_oc_keys); i++)
		*spulse_stat(t, spulse_oc_keys[i].off) +=
			READ_ONCE(*spulse_stat(c, spulse_oc_keys[i].off));
	for (i = 0; i < ARRAY_SIZE(spulse_ph_keys); i++)
		*spulse_stat(t, spulse_ph_keys[i].off) +=
			READ_ONCE(*spulse_stat(c, spulse_ph_keys[i].off));
	for (i = 0; i < ARRAY_SIZE(spulse_uw_keys); i++)
		*spulse_stat(t, spulse_uw_keys[i].off) +=
			READ_ONCE(*spulse_stat(c, spulse_uw_keys[i].off));
	for (i = 0; i < ARRAY_SIZE(spulse_loss_keys); i++)
		*spulse_stat(t, spulse_loss_keys[i].off) +=
			READ_ONCE(*spulse_stat(c, spulse_loss_keys[i].off));
	for (i = 0; i < ARRAY_SIZE(spulse_sph_keys); i++)
		*spulse_stat(t, spulse_sph_keys[i].off) +=
			READ_ONCE(*spulse_stat(c, spulse_sph_keys[i].off));
}

static void spulse_stats_show_losses(struct seq_file *m,
				     struct spulse_cpu_stats *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(spulse_loss_keys); i++)
		seq_printf(m, "%s %llu\n", spulse_loss_keys[i].key,
			   *spulse_stat(t, spulse_loss_keys[i].off));
	seq_printf(m, "samples_expected %llu\n",
		   div64_u64(t->event_running_ns * spulse.p.freq,
			     NSEC_PER_SEC));
	seq_printf(m, "cpus_no_event %u\n", READ_ONCE(spulse.cpus_no_event));
	seq_printf(m, "events %s\n", spulse_events_name(spulse.p.events));
	seq_printf(m, "task_events %u\n", READ_ONCE(spulse.task_events));
	seq_printf(m, "task_events_failed %u\n",
		   READ_ONCE(spulse.task_events_failed));
	seq_printf(m, "cpus_no_state %u\n", READ_ONCE(spulse.cpus_no_state));
	seq_printf(m, "percpu_bytes %llu\n", READ_ONCE(spulse.percpu_bytes));
	if (!spulse.p.sample_phase_stats)
		return;
	for (i = 0; i < ARRAY_SIZE(spulse_sph_keys); i++)
		seq_printf(m, "%s %llu\n", spulse_sph_keys[i].key,
			   *spulse_stat(t, spulse_sph_keys[i].off));
}

static void spulse_stats_show_unwind(struct seq_file *m,
				     struct spulse_cpu_stats *t)
{
	size_t i;

	seq_printf(m, "unwind %s\n", spulse_unwind_name(spulse.p.unwind));
	seq_printf(m, "unwind_mem_kb %u\n", spulse.p.unwind_mem_kb);
	seq_printf(m, "unwind_tables %u\n", READ_ONCE(spulse_ut.ntables));
	seq_printf(m, "unwind_rows %llu\n", READ_ONCE(spulse_ut.rows));
	seq_printf(m, "unwind_bytes %llu\n", READ_ONCE(spulse_ut.bytes));
	seq_printf(m, "unwind_processes %u\n", READ_ONCE(spulse_ut.nprocs));
	seq_printf(m, "unwind_refused_invalid %llu\n",
		   READ_ONCE(spulse_ut.refused_invalid));
	seq_printf(m, "unwind_refused_nomem %llu\n",
		   READ_ONCE(spulse_ut.refused_nomem));
	for (i = 0; i < ARRAY_SIZE(spulse_uw_keys); i++)
		seq_printf(m, "%s %llu\n", spulse_uw_keys[i].key,
			   *spulse_stat(t, spulse_uw_keys[i].off));
}

static void spulse_stats_show_offcpu(struct seq_file *m,
				     struct spulse_cpu_stats *t)
{
	size_t i;

	seq_printf(m, "offcpu %d\n", spulse.p.offcpu);
	seq_printf(m, "offcpu_min_us %u\n", spulse.p.offcpu_min_us);
	seq_printf(m, "offcpu_threads %u\n", spulse.p.offcpu ?
		   spulse_oc_table_slots(spulse.p.offcpu_threads) : 0);
	for (i = 0; i < ARRAY_SIZE(spulse_oc_keys); i++)
		seq_printf(m, "%s %llu\n", spulse_oc_keys[i].key,
			   *spulse_stat(t, spulse_oc_keys[i].off));
	seq_printf(m, "offcpu_open_at_stop %llu\n",
		   READ_ONCE(spulse.offcpu_open_at_stop));
	seq_printf(m, "early_at_stop %llu\n", READ_ONCE(spulse.early_at_stop));
	if (!spulse.p.offcpu_phase_stats)
		return;
	for (i = 0; i < ARRAY_SIZE(spulse_ph_keys); i++)
		seq_printf(m, "%s %llu\n", spulse_ph_keys[i].key,
			   *spulse_stat(t, spulse_ph_keys[i].off));
}

/*
 * One CPU's handler time: the sum over its timed samples (one in
 * SPULSE_HANDLER_TIME_EVERY, sample.c) scaled to all the samples that
 * passed the busy check, taken - dropped_busy (rounded down; exact with
 * sample_phase_stats=1, where every sample is timed).
 */
static u64 spulse_handler_ns(const struct spulse_cpu_stats *st)
{
	u64 ns = READ_ONCE(st->handler_ns);
	u64 timed = READ_ONCE(st->handler_timed);
	u64 n = READ_ONCE(st->taken) - READ_ONCE(st->dropped_busy);

	if (!timed)
		return 0;
	/* read while running, the counters may be a sample apart */
	if (n <= timed)
		return ns;
	return mul_u64_u64_div_u64(ns, n, timed);
}

/**
 * spulse_stats_show() - the stats file: one "key value" line per counter
 * @m: the seq_file being filled
 * @v: unused
 *
 * Return: 0.
 */
int spulse_stats_show(struct seq_file *m, void *v)
{
	struct spulse_cpu_stats t = {};
	u64 records = 0, bytes = 0, sc_hits = 0, sc_misses = 0;
	u64 ss_hits = 0, ss_misses = 0;
	u64 epochs = 0, rs_frames = 0, rs_stacks = 0, rs_threads = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		t.taken += READ_ONCE(c->stats.taken);
		t.written += READ_ONCE(c->stats.written);
		t.dropped_buffer_full += READ_ONCE(c->stats.dropped_buffer_full);
		t.dropped_busy += READ_ONCE(c->stats.dropped_busy);
		t.dropped_too_deep += READ_ONCE(c->stats.dropped_too_deep);
		t.relay_no_buffer += READ_ONCE(c->stats.relay_no_buffer);
		t.handler_ns += spulse_handler_ns(&c->stats);
		t.handler_timed += READ_ONCE(c->stats.handler_timed);
		spulse_stats_add_offcpu(&t, &c->stats);
		records += READ_ONCE(c->enc.records);
		bytes += READ_ONCE(c->enc.bytes);
		sc_hits += READ_ONCE(c->enc.scache.hits);
		sc_misses += READ_ONCE(c->enc.scache.misses);
		ss_hits += READ_ONCE(c->scache.hits);
		ss_misses += READ_ONCE(c->scache.misses);
		epochs += READ_ONCE(c->enc.epochs);
		rs_frames += READ_ONCE(c->enc.resets_frames);
		rs_stacks += READ_ONCE(c->enc.resets_stacks);
		rs_threads += READ_ONCE(c->enc.resets_threads);
	}
	seq_printf(m, "state %s\n",
		   READ_ONCE(spulse.running) ? "running" : "stopped");
	seq_printf(m, "target_pid %u\n", spulse.p.target_pid);
	spulse_control_target_poll();
	seq_printf(m, "target_exited %d\n", READ_ONCE(spulse.target_exited));
	seq_printf(m, "debugfs_locked_down %d\n", spulse_debugfs_locked_down());
	seq_printf(m, "freq %u\n", spulse.p.freq);
	seq_printf(m, "event %s\n", spulse_event_name(spulse.p.event));
	seq_printf(m, "samples_taken %llu\n", t.taken);
	seq_printf(m, "samples_written %llu\n", t.written);
	seq_printf(m, "samples_dropped %llu\n", t.dropped_buffer_full +
		   t.dropped_busy + t.dropped_too_deep);
	seq_printf(m, "dropped_buffer_full %llu\n", t.dropped_buffer_full);
	seq_printf(m, "dropped_busy %llu\n", t.dropped_busy);
	seq_printf(m, "dropped_too_deep %llu\n", t.dropped_too_deep);
	seq_printf(m, "relay_no_buffer %llu\n", t.relay_no_buffer);
	seq_printf(m, "records_written %llu\n", records);
	seq_printf(m, "bytes_written %llu\n", bytes);
	seq_printf(m, "meta_bytes %llu\n", spulse_meta_bytes());
	spulse_meta_position_show(m);
	seq_printf(m, "meta_dropped %llu\n", spulse_meta_dropped());
	seq_printf(m, "handler_ns %llu\n", t.handler_ns);
	seq_printf(m, "handler_timed %llu\n", t.handler_timed);
	spulse_stats_show_losses(m, &t);
	spulse_stats_show_offcpu(m, &t);
	seq_printf(m, "stack_cache_hits %llu\n", sc_hits);
	seq_printf(m, "stack_cache_misses %llu\n", sc_misses);
	seq_printf(m, "sample_cache_hits %llu\n", ss_hits);
	seq_printf(m, "sample_cache_misses %llu\n", ss_misses);
	spulse_stats_show_unwind(m, &t);
	spulse_meta_stats_show(m);
	seq_printf(m, "stream_epochs %llu\n", epochs);
	seq_printf(m, "intern_resets_frames %llu\n", rs_frames);
	seq_printf(m, "intern_resets_stacks %llu\n", rs_stacks);
	seq_printf(m, "intern_resets_threads %llu\n", rs_threads);
	spulse_compat_stats(m);
	for_each_possible_cpu(cpu) {
		const struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);
		u64 written = READ_ONCE(c->stats.written);
		u64 dropped = READ_ONCE(c->stats.dropped_buffer_full) +
			      READ_ONCE(c->stats.dropped_busy) +
			      READ_ONCE(c->stats.dropped_too_deep);

		struct rchan_buf *buf = spulse.chan ?
					*per_cpu_ptr(spulse.chan->buf, cpu) : NULL;
		u64 pub, rd;

		seq_printf(m, "cpu%d taken %llu written %llu dropped %llu bytes %llu",
			   cpu, READ_ONCE(c->stats.taken), written, dropped,
			   READ_ONCE(c->enc.bytes));
		if (buf && spulse_relay_position(buf, &pub, &rd))
			seq_printf(m, " published %llu read %llu", pub, rd);
		seq_putc(m, '\n');
	}
	return 0;
}
