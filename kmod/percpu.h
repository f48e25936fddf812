/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU sampler state (struct spulse_cpu, its counters) and its
 * allocation at load and CPU hotplug (percpu.c).
 */
#ifndef SPULSE_KMOD_PERCPU_H
#define SPULSE_KMOD_PERCPU_H

#include <linux/percpu.h>
#include <linux/types.h>

#include "encoder.h"
#include "offcpu.h"
#include "relay.h"
#include "ustack.h"

/* One CPU's counters, written only by its own sampler and probes. */
struct spulse_cpu_stats {
	u64 taken;
	u64 written;
	u64 dropped_buffer_full;
	u64 dropped_busy;
	u64 dropped_too_deep;
	u64 relay_no_buffer;
	u64 handler_ns;		/* of the timed samples alone */
	u64 handler_timed;
	/* losses before the handler (docs/KERNEL.md, "Losses") */
	u64 seen;
	u64 throttled;
	u64 lost_throttled;
	u64 event_enabled_ns;
	u64 event_running_ns;
	u64 kstack_truncated;
	/* sample_phase_stats=1 only (docs/KERNEL.md, "Phase stats") */
	u64 sample_phase_n;
	u64 sample_phase_outliers;
	u64 sample_phase_ns;
	u64 sample_phase_kstack_ns;
	u64 sample_phase_ustack_ns;
	u64 sample_phase_meta_ns;
	u64 sample_phase_encode_ns;
	u64 sample_phase_relay_ns;
	/* off-CPU intervals (docs/KERNEL.md, "Off-CPU": the identities) */
	u64 offcpu_taken;
	u64 offcpu_written;
	u64 offcpu_filtered;
	u64 offcpu_dropped_buffer_full;
	u64 offcpu_dropped_busy;
	u64 offcpu_dropped_no_slot;
	u64 offcpu_dropped_too_deep;
	u64 offcpu_dropped_error;
	u64 offcpu_dropped_queue_full;
	u64 offcpu_dropped_at_stop;
	u64 offcpu_lost;
	u64 offcpu_state_raced;
	u64 offcpu_handler_ns;
	u64 offcpu_write_ns;
	u64 offcpu_write_deferred;
	/* sched_waking of target threads */
	u64 wakeups_taken;
	u64 offcpu_wakers_in_irq;
	u64 wakeups_attached;
	u64 wakeups_early;
	u64 wakeups_runnable;
	u64 wakeups_repeat;
	u64 wakeups_unslotted;
	u64 wakeups_dropped_busy;
	u64 wakeups_dropped_no_slot;
	u64 wakeups_dropped_too_deep;
	u64 early_applied;
	u64 early_stale;
	/* debugfs trigger marks */
	u64 triggers_written;
	u64 triggers_dropped;
	/* user unwinding of samples (docs/KERNEL.md, "User unwinding") */
	u64 ustack_table_steps;
	u64 ustack_fp_steps;
	u64 ustack_complete;
	u64 ustack_truncated;
	/* every cut user stack (samples and off-CPU), by cause (ustack.c) */
	u64 ustack_cut_no_table_yet;
	u64 ustack_cut_no_table;
	u64 ustack_cut_no_row;
	u64 ustack_cut_table_unknown;
	u64 ustack_cut_depth;
	u64 ustack_cut_unreadable;
	u64 ustack_cut_bad_frame;
	u64 ustack_cut_compat32;
	/* offcpu_phase_stats=1 only (docs/KERNEL.md, "Phase stats") */
	u64 phase_out_n;
	u64 phase_out_kstack_ns;
	u64 phase_out_ustack_ns;
	u64 phase_out_slot_ns;
	u64 phase_wake_n;
	u64 phase_wake_peek_ns;
	u64 phase_wake_kstack_ns;
	u64 phase_wake_ustack_ns;
	u64 phase_wake_slot_ns;
	u64 phase_in_n;
	u64 phase_in_close_ns;
	u64 phase_write_n;
	u64 phase_write_encode_ns;
	u64 phase_write_relay_ns;
};

#define SPULSE_PID_RING		32

/*
 * The sampler times one sample in this many (a power of 2) on each CPU,
 * every one with sample_phase_stats=1: handler_ns in the stats is the
 * timed samples' sum scaled to all (stats.c).
 */
#define SPULSE_HANDLER_TIME_EVERY	16

/**
 * struct spulse_cpu - everything one CPU's sampler owns
 * @enc: encoder (intern tables, id counters)
 * @batch: batch buffer
 * @frames: capture buffer (root..leaf)
 * @ubuf: user walk output (leaf first)
 * @kbuf: kernel capture output (leaf first), max_kernel_depth + slack
 * @busy: nesting guard (NMI that finds it set drops the sample); stays set
 *	on a CPU without @ready state
 * @ready: the encoder tables and batch buffer exist (percpu.c)
 * @stats: counters, written only by this CPU's handler
 * @event: this CPU's perf event, or NULL
 * @ev_enabled: @event's time enabled at the last fold (sample.c)
 * @ev_running: @event's time running at the last fold
 * @thr_ns: time of the sample that throttled @thr_ev (0 = none pending)
 * @thr_ev: the event whose throttle is pending (a task event, or @event)
 * @uc: user stack window of the current sample
 * @trunc: the current sample's stack is cut (a truncated marker is its root)
 * @nu: the current sample's user frames, in @ubuf
 * @nk: the current sample's kernel frames, in @kbuf
 * @smp: the current sample, under @busy (here, not on the stack: nothing
 *	to zero per sample; its @frames is @frames, set at allocation)
 * @scache: stacks of samples already written in this stream, keyed by
 *	@kbuf then @ubuf as captured, leaf first (sample.c; NULL ent: no
 *	cache)
 * @sc_last: the @scache entry the previous sample found or stored (NULL:
 *	none), compared first (sample.c)
 * @pids: recently sampled tgids (whole-system mode), for the meta worker
 * @pid_head: next slot in @pids
 * @oc_cap: off-CPU capture scratch (switch-out and wakeup probes, under
 *	@busy): a thread and its stack, copied into the slot table
 * @rpos: this CPU's relay buffer switches (relay.c)
 */
struct spulse_cpu {
	struct spulse_enc enc;
	struct spulse_batch batch;
	struct spulse_frame *frames;
	u64 *ubuf;
	unsigned long *kbuf;
	int busy;
	bool ready;
	struct spulse_relay_pos rpos;
	struct spulse_cpu_stats stats;
	struct perf_event *event;
	u64 ev_enabled;
	u64 ev_running;
	u64 thr_ns;
	struct perf_event *thr_ev;
	struct spulse_ucache uc;
	bool trunc;
	u16 nu;
	u16 nk;
	struct spulse_sample smp;
	struct spulse_scache scache;
	const struct spulse_scache_ent *sc_last;
	u32 pids[SPULSE_PID_RING];
	u32 pid_head;
	struct spulse_oc_who oc_cap;
};
/* alloc_percpu() refuses anything larger (mm/percpu.c) */
static_assert(sizeof(struct spulse_cpu) <= PCPU_MIN_UNIT_SIZE);


/* Remember a sampled tgid for the meta worker (whole-system mode). */
static inline void spulse_note_pid(struct spulse_cpu *c, u32 tgid)
{
	if (c->pids[(c->pid_head - 1) % SPULSE_PID_RING] == tgid)
		return;
	WRITE_ONCE(c->pids[c->pid_head % SPULSE_PID_RING], tgid);
	c->pid_head++;
}

int spulse_cpu_alloc(void);
void spulse_cpu_free(void);

#endif /* SPULSE_KMOD_PERCPU_H */
