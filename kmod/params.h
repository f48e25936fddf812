/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load-time parameters (params.c, pure): bounds, the enums of the string
 * parameters, struct spulse_params and its validation.
 */
#ifndef SPULSE_KMOD_PARAMS_H
#define SPULSE_KMOD_PARAMS_H

#include <linux/types.h>

#include <spulse/format.h>

/* Parameter bounds (validated at load). */
#define SPULSE_FREQ_MIN		1
#define SPULSE_FREQ_MAX		100000
#define SPULSE_DEPTH_TOTAL_MAX	(SPULSE_MAX_DEPTH - 1)	/* + marker */
#define SPULSE_DEPTH_BOTH_MAX	(SPULSE_DEPTH_TOTAL_MAX / 2)	/* max_depth */
#define SPULSE_SUBBUF_MAX	(64U << 20)
#define SPULSE_NSUBBUF_MIN	2
#define SPULSE_NSUBBUF_MAX	1024
/* bound on subbuf_size * n_subbufs (relay data per CPU; + 1 guard) */
#define SPULSE_RELAY_CPU_MAX	(256ULL << 20)
#define SPULSE_OFFCPU_THREADS_MIN	64
#define SPULSE_OFFCPU_THREADS_MAX	65536
#define SPULSE_OFFCPU_MIN_US_MAX	60000000	/* 60 s */

#define SPULSE_UNWIND_MEM_KB_MIN	1
#define SPULSE_UNWIND_MEM_KB_MAX	(4U << 20)	/* 4 GiB */

/* User unwinding (parameter "unwind"). */
enum spulse_unwind_mode {
	SPULSE_UNWIND_AUTO,	/* tables where loaded, else frame pointers */
	SPULSE_UNWIND_FP,	/* frame pointers only, tables never used */
	SPULSE_UNWIND_TABLES,	/* tables only, the FP step never used */
};

/* Where the events are bound (parameter "events"); zero is per-CPU. */
enum spulse_events {
	SPULSE_EVENTS_CPU,	/* one event per online CPU */
	SPULSE_EVENTS_TASK,	/* one inherited event per target thread */
	SPULSE_EVENTS_AUTO,	/* task with target_pid, else cpu (resolved at load) */
};

/* Task events created at start at most (threads beyond: task_events_failed). */

/* Event kinds (parameter "event"). */
enum spulse_event {
	SPULSE_EVENT_CPU_CLOCK,
	SPULSE_EVENT_CYCLES,
	SPULSE_EVENT_BP,	/* execute breakpoint at bp_symbol (sample.c) */
};

/**
 * struct spulse_params - validated load-time parameters
 * @target_pid: tgid to sample, 0 = whole system; after load the tgid in
 *	the initial pid namespace (what task_tgid_nr() and the streams use)
 * @freq: sampling frequency in Hz
 * @max_user_depth: user frames kept per sample (walk limit)
 * @max_kernel_depth: kernel frames kept per sample; deeper samples are
 *	dropped (counted as dropped_too_deep)
 * @max_depth: the max_depth parameter (0 = unset; else both limits above
 *	were set to it)
 * @event: which perf event to sample on
 * @events: per-CPU or per-task events (enum spulse_events, never AUTO
 *	after load)
 * @subbuf_size: relay sub-buffer size in bytes
 * @n_subbufs: relay sub-buffers per CPU
 * @autostart: start sampling at load
 * @offcpu: record off-CPU intervals (sched_switch/sched_waking probes)
 * @offcpu_min_us: shorter intervals are counted as filtered, not written
 * @offcpu_threads: slot-table size (threads off CPU at the same time)
 * @offcpu_phase_stats: time the phases of the off-CPU probes (debug; the
 *	phase_* stats keys)
 * @sample_phase_stats: time the phases of the sample handler (debug; the
 *	sample_phase_* stats keys)
 * @sample_null: the handler counts each overflow in seen and returns:
 *	no stack, no record (debug; measures the event's own cost)
 * @unwind: how user stacks are unwound (enum spulse_unwind_mode)
 * @unwind_mem_kb: bound on all unwind table and map memory, KiB
 */
struct spulse_params {
	u32 target_pid;
	u32 freq;
	u32 max_user_depth;
	u32 max_kernel_depth;
	u32 max_depth;
	enum spulse_event event;
	enum spulse_events events;
	size_t subbuf_size;
	size_t n_subbufs;
	bool autostart;
	bool offcpu;
	u32 offcpu_min_us;
	u32 offcpu_threads;
	bool offcpu_phase_stats;
	bool sample_phase_stats;
	bool sample_null;
	enum spulse_unwind_mode unwind;
	u32 unwind_mem_kb;
};

/* params.c */
size_t spulse_batch_max(u32 max_user_depth, u32 max_kernel_depth);
size_t spulse_batch_max_offcpu(u32 max_user_depth, u32 max_kernel_depth);
size_t spulse_batch_max_trigger(void);
int spulse_parse_event(const char *s, enum spulse_event *out);
const char *spulse_event_name(enum spulse_event ev);
int spulse_parse_events(const char *s, enum spulse_events *out);
const char *spulse_events_name(enum spulse_events ev);
int spulse_parse_unwind(const char *s, enum spulse_unwind_mode *out);
const char *spulse_unwind_name(enum spulse_unwind_mode m);
int spulse_params_check(const struct spulse_params *p, const char **why);
u64 spulse_relay_bytes(const struct spulse_params *p, u32 ncpus);

#endif /* SPULSE_KMOD_PARAMS_H */
