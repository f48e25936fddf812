// SPDX-License-Identifier: GPL-2.0
/*
 * task_is_runnable(): on the runqueue and not a delayed dequeue (EEVDF
 * keeps a task that went to sleep queued with se.sched_delayed set, 6.12+),
 * so on_rq alone no longer means runnable.
 */
#include <linux/sched.h>

static __maybe_unused bool spulse_probe(struct task_struct *p)
{
	return task_is_runnable(p);
}
