// SPDX-License-Identifier: GPL-2.0
/*
 * The sched_process_exit tracepoint passes group_dead (the last thread of
 * the process is exiting); older ones pass the task only.
 */
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <trace/events/sched.h>

static void spulse_probe_exit(void *data, struct task_struct *p,
			      bool group_dead)
{
}

static __maybe_unused void spulse_probe(void)
{
	check_trace_callback_type_sched_process_exit(spulse_probe_exit);
}
