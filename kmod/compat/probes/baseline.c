// SPDX-License-Identifier: GPL-2.0
/*
 * Not a feature: must compile on every kernel. If it does not, the probe
 * command line itself is broken and every other probe would say "absent",
 * so probe.sh fails the build instead.
 */
#include <linux/kernel.h>
#include <linux/sched.h>

static __maybe_unused int spulse_probe(struct task_struct *p)
{
	return p->pid;
}
