/* SPDX-License-Identifier: MIT */
/*
 * The recorder's own memory out of transparent huge pages (thp.c,
 * docs/DRAIN.md "The recorder's memory and THP").
 */
#ifndef SPULSE_DRAIN_THP_H
#define SPULSE_DRAIN_THP_H

#include <stdbool.h>

/**
 * drain_thp_disable() - keep this process's memory out of THP
 *
 * PR_SET_THP_DISABLE on the calling process, unless PR_GET_THP_DISABLE
 * says it is set already (by whoever started us: left as it is) or fails
 * (a kernel before 3.15: nothing done). Failures are silent.
 *
 * The flag is inherited across fork() and execve(): a child that execs a
 * program of the user's (the profiled command) must call
 * drain_thp_child_restore() with the value returned here first.
 *
 * Return: true when this call set the flag (so a child must clear it).
 */
bool drain_thp_disable(void);

/**
 * drain_thp_child_restore() - undo drain_thp_disable() in a forked child
 * @changed: what drain_thp_disable() returned in the parent
 *
 * Clears PR_SET_THP_DISABLE when @changed, so the program the child execs
 * sees THP as the recorder found it. Async-signal-safe (one prctl()):
 * meant for the code between fork() and exec. Failures are silent.
 */
void drain_thp_child_restore(bool changed);

#endif
