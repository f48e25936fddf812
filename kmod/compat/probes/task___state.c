// SPDX-License-Identifier: GPL-2.0
/* task_struct's state word is __state (5.14+; before, state). */
#include <linux/sched.h>

static __maybe_unused unsigned int spulse_probe(struct task_struct *p)
{
	return READ_ONCE(p->__state);
}
