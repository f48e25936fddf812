// SPDX-License-Identifier: GPL-2.0
/*
 * struct sched_entity has sched_delayed (EEVDF delayed dequeue, 6.12+): a
 * sleeping task can stay on the runqueue. Used when task_is_runnable() is
 * absent but the field is there (a partial backport).
 */
#include <linux/sched.h>

static __maybe_unused bool spulse_probe(struct task_struct *p)
{
	return p->se.sched_delayed;
}
