// SPDX-License-Identifier: GPL-2.0
/*
 * __task_state_index(state, exit_state): the state index of a given state
 * word (5.18+, with sched_switch's prev_state); older kernels only have
 * task_state_index(task), which reads the task's current state.
 */
#include <linux/sched.h>

static __maybe_unused unsigned int spulse_probe(unsigned int state)
{
	return __task_state_index(state, 0);
}
