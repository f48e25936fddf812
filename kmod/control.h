/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control and stats files, in debugfs and procfs (control.c): start,
 * stop, flush, trigger, and the target's exit.
 */
#ifndef SPULSE_KMOD_CONTROL_H
#define SPULSE_KMOD_CONTROL_H

#include <linux/types.h>

struct task_struct;
struct work_struct;

int spulse_control_init(void);
int spulse_control_start(void);
void spulse_control_stop(void);
void spulse_control_flush(void);
int spulse_control_trigger(void);
void spulse_control_target_exit(struct task_struct *p);
bool spulse_debugfs_locked_down(void);
void spulse_control_target_work(struct work_struct *w);
void spulse_control_target_poll(void);

#endif /* SPULSE_KMOD_CONTROL_H */
