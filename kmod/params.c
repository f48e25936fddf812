// SPDX-License-Identifier: GPL-2.0
/*
 * Parameter validation, kept free of module globals so it can be tested:
 * every rule a load-time parameter must satisfy, with the reason text that
 * becomes the single pr_err line of a refused load.
 */
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/threads.h>

#include "params.h"
#include "encoder.h"
#include "kunit_export.h"

/**
 * spulse_batch_max() - largest batch one sample can produce
 * @max_user_depth: user frame limit
 * @max_kernel_depth: kernel frame limit
 *
 * Header + cpu record + thread + one frame and one stack record per node
 * (user, kernel and the truncated marker) + the sample record. A relay
 * sub-buffer must hold at least this much, since a batch is never split.
 *
 * Return: bytes.
 */
size_t spulse_batch_max(u32 max_user_depth, u32 max_kernel_depth)
{
	return SPULSE_HEADER_MAX + SPULSE_EXT_CPU_MAX + SPULSE_THREAD_REC_MAX +
	       SPULSE_SAMPLE_MAX +
	       ((size_t)max_user_depth + max_kernel_depth + 1) *
	       (SPULSE_FRAME_REC_MAX + SPULSE_STACK_REC_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_max);

/**
 * spulse_batch_max_offcpu() - largest batch one off-CPU interval can produce
 * @max_user_depth: user frame limit
 * @max_kernel_depth: kernel frame limit
 *
 * Header + cpu record + two threads (the thread and its waker) + two full
 * stacks + the kind-2 record.
 *
 * Return: bytes.
 */
size_t spulse_batch_max_offcpu(u32 max_user_depth, u32 max_kernel_depth)
{
	return SPULSE_HEADER_MAX + SPULSE_EXT_CPU_MAX +
	       2 * SPULSE_THREAD_REC_MAX + SPULSE_EXT_OFFCPU_MAX +
	       2 * ((size_t)max_user_depth + max_kernel_depth + 1) *
	       (SPULSE_FRAME_REC_MAX + SPULSE_STACK_REC_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_max_offcpu);

/**
 * spulse_batch_max_trigger() - largest trigger batch
 *
 * Description:
 * Header + cpu record + a kind-3 record with the longest text.
 *
 * Return: bytes.
 */
size_t spulse_batch_max_trigger(void)
{
	return SPULSE_HEADER_MAX + SPULSE_EXT_CPU_MAX + SPULSE_EXT_HDR_MAX +
	       7 * SPULSE_VARINT_MAX + 2 + SPULSE_MAX_TRIGGER_TEXT;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_max_trigger);

/**
 * spulse_parse_event() - map the "event" parameter to an event kind
 * @s: parameter text ("cpu-clock", "cycles" or "bp", trailing newline
 *	accepted)
 * @out: result
 *
 * Return: 0 or -EINVAL.
 */
int spulse_parse_event(const char *s, enum spulse_event *out)
{
	if (sysfs_streq(s, "cpu-clock"))
		*out = SPULSE_EVENT_CPU_CLOCK;
	else if (sysfs_streq(s, "cycles"))
		*out = SPULSE_EVENT_CYCLES;
	else if (sysfs_streq(s, "bp"))
		*out = SPULSE_EVENT_BP;
	else
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_parse_event);

/**
 * spulse_event_name() - parameter spelling of an event kind
 * @ev: event kind
 *
 * Return: "cycles", "bp" or "cpu-clock".
 */
const char *spulse_event_name(enum spulse_event ev)
{
	return ev == SPULSE_EVENT_CYCLES ? "cycles" :
	       ev == SPULSE_EVENT_BP ? "bp" : "cpu-clock";
}
EXPORT_SYMBOL_IF_KUNIT(spulse_event_name);

/**
 * spulse_parse_events() - map the "events" parameter to a binding
 * @s: parameter text ("auto", "cpu" or "task", trailing newline accepted)
 * @out: result
 *
 * Return: 0 or -EINVAL.
 */
int spulse_parse_events(const char *s, enum spulse_events *out)
{
	if (sysfs_streq(s, "auto"))
		*out = SPULSE_EVENTS_AUTO;
	else if (sysfs_streq(s, "cpu"))
		*out = SPULSE_EVENTS_CPU;
	else if (sysfs_streq(s, "task"))
		*out = SPULSE_EVENTS_TASK;
	else
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_parse_events);

/**
 * spulse_events_name() - parameter spelling of an event binding
 * @ev: binding
 *
 * Return: "auto", "cpu" or "task".
 */
const char *spulse_events_name(enum spulse_events ev)
{
	return ev == SPULSE_EVENTS_TASK ? "task" :
	       ev == SPULSE_EVENTS_AUTO ? "auto" : "cpu";
}
EXPORT_SYMBOL_IF_KUNIT(spulse_events_name);

/**
 * spulse_parse_unwind() - map the "unwind" parameter to a mode
 * @s: parameter text ("auto", "fp" or "tables", trailing newline accepted)
 * @out: result
 *
 * Return: 0 or -EINVAL.
 */
int spulse_parse_unwind(const char *s, enum spulse_unwind_mode *out)
{
	if (sysfs_streq(s, "auto"))
		*out = SPULSE_UNWIND_AUTO;
	else if (sysfs_streq(s, "fp"))
		*out = SPULSE_UNWIND_FP;
	else if (sysfs_streq(s, "tables"))
		*out = SPULSE_UNWIND_TABLES;
	else
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_parse_unwind);

/**
 * spulse_unwind_name() - parameter spelling of an unwind mode
 * @m: mode
 *
 * Return: "auto", "fp" or "tables".
 */
const char *spulse_unwind_name(enum spulse_unwind_mode m)
{
	return m == SPULSE_UNWIND_FP ? "fp" :
	       m == SPULSE_UNWIND_TABLES ? "tables" : "auto";
}
EXPORT_SYMBOL_IF_KUNIT(spulse_unwind_name);

/**
 * spulse_relay_bytes() - memory the cpuN relay channel takes
 * @p: validated parameters
 * @ncpus: CPUs with a buffer (at most the possible CPUs)
 *
 * Each buffer has n_subbufs + 1 sub-buffers (relay.c's guard).
 *
 * Return: bytes.
 */
u64 spulse_relay_bytes(const struct spulse_params *p, u32 ncpus)
{
	return (u64)p->subbuf_size * (p->n_subbufs + 1) * ncpus;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_relay_bytes);

/**
 * spulse_params_check() - validate parameters (except target existence)
 * @p: parameters
 * @why: set to a one-line reason on failure
 *
 * Return: 0 or -EINVAL.
 */
int spulse_params_check(const struct spulse_params *p, const char **why)
{
	if (p->freq < SPULSE_FREQ_MIN || p->freq > SPULSE_FREQ_MAX) {
		*why = "freq must be 1..100000 Hz";
		return -EINVAL;
	}
	if (p->max_depth > SPULSE_DEPTH_BOTH_MAX) {
		*why = "max_depth must be <= 511 (it sets both depth limits)";
		return -EINVAL;
	}
	if (!p->max_user_depth || !p->max_kernel_depth) {
		*why = "max_user_depth and max_kernel_depth must be >= 1";
		return -EINVAL;
	}
	if ((u64)p->max_user_depth + p->max_kernel_depth >
	    SPULSE_DEPTH_TOTAL_MAX) {
		*why = "max_user_depth + max_kernel_depth must be <= 1023";
		return -EINVAL;
	}
	if (p->subbuf_size > SPULSE_SUBBUF_MAX) {
		*why = "subbuf_size must be <= 64 MiB";
		return -EINVAL;
	}
	if (p->subbuf_size <
	    spulse_batch_max(p->max_user_depth, p->max_kernel_depth) ||
	    p->subbuf_size < spulse_batch_max_trigger()) {
		*why = "subbuf_size too small for one sample at the depth limits";
		return -EINVAL;
	}
	if (p->offcpu && p->subbuf_size <
	    spulse_batch_max_offcpu(p->max_user_depth, p->max_kernel_depth)) {
		*why = "subbuf_size too small for one off-CPU interval at the depth limits";
		return -EINVAL;
	}
	if (p->offcpu_min_us > SPULSE_OFFCPU_MIN_US_MAX) {
		*why = "offcpu_min_us must be <= 60000000";
		return -EINVAL;
	}
	/* checked with offcpu=0 too: an invalid value is refused, unused or not */
	if (p->offcpu_threads < SPULSE_OFFCPU_THREADS_MIN ||
	    p->offcpu_threads > SPULSE_OFFCPU_THREADS_MAX) {
		*why = "offcpu_threads must be 64..65536";
		return -EINVAL;
	}
	if (p->n_subbufs < SPULSE_NSUBBUF_MIN ||
	    p->n_subbufs > SPULSE_NSUBBUF_MAX) {
		*why = "n_subbufs must be 2..1024";
		return -EINVAL;
	}
	if ((u64)p->subbuf_size * p->n_subbufs > SPULSE_RELAY_CPU_MAX) {
		*why = "subbuf_size * n_subbufs must be <= 256 MiB (relay buffer per CPU)";
		return -EINVAL;
	}
	if (p->unwind_mem_kb < SPULSE_UNWIND_MEM_KB_MIN ||
	    p->unwind_mem_kb > SPULSE_UNWIND_MEM_KB_MAX) {
		*why = "unwind_mem_kb must be 1..4194304";
		return -EINVAL;
	}
	if (p->target_pid > PID_MAX_LIMIT) {
		*why = "target_pid out of range";
		return -EINVAL;
	}
	if (p->events == SPULSE_EVENTS_TASK && !p->target_pid) {
		*why = "events=task needs target_pid";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_params_check);
