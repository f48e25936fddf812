// SPDX-License-Identifier: GPL-2.0
/*
 * The sched_switch tracepoint passes prev_state (5.18+), the state prev had
 * when __schedule() decided; older ones pass (preempt, prev, next) only.
 */
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <trace/events/sched.h>

static void spulse_probe_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
}

static __maybe_unused void spulse_probe(void)
{
	check_trace_callback_type_sched_switch(spulse_probe_switch);
}
