// SPDX-License-Identifier: GPL-2.0
/*
 * What the compat layer (kmod/compat.h) chose for this kernel, where it
 * matters to the user: one dmesg line at load per capability this kernel
 * lacks for the parameters given, and the compat_* keys of stats.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/printk.h>
#include <linux/seq_file.h>

#include "spulse.h"
#include "compat.h"

#ifdef SPULSE_HAVE_PERF_INHERIT_THREAD
#define SPULSE_INHERIT_THREAD 1
#else
#define SPULSE_INHERIT_THREAD 0
#endif

#ifdef SPULSE_HAVE_SCHED_SWITCH_PREV_STATE
#define SPULSE_SWITCH_PREV_STATE 1
#else
#define SPULSE_SWITCH_PREV_STATE 0
#endif

/**
 * spulse_compat_report() - say at load what this kernel cannot do
 */
void spulse_compat_report(void)
{
	if (!SPULSE_INHERIT_THREAD && spulse.p.events == SPULSE_EVENTS_TASK)
		pr_info("events=task: this kernel has no perf inherit_thread: processes the target forks inherit its event too (their samples are filtered out; compat_inherit_thread 0 in stats)\n");
	if (!SPULSE_SWITCH_PREV_STATE && spulse.p.offcpu)
		pr_info("offcpu=1: this kernel's sched_switch has no prev_state: the off-CPU state is read from the task in the probe (compat_switch_prev_state 0 in stats, docs/KERNEL.md)\n");
	if (spulse.cpuhp_fixups)
		pr_info("cpu hotplug: this kernel skipped the prepare state on %u online CPUs, spulse.ko ran it (compat_cpuhp_prepare_fixups in stats)\n",
			spulse.cpuhp_fixups);
}

/**
 * spulse_compat_stats() - the compat_* lines of stats
 * @m: the stats file
 */
void spulse_compat_stats(struct seq_file *m)
{
	seq_printf(m, "compat_inherit_thread %d\n", SPULSE_INHERIT_THREAD);
	seq_printf(m, "compat_switch_prev_state %d\n", SPULSE_SWITCH_PREV_STATE);
	seq_printf(m, "compat_cpuhp_prepare_fixups %u\n", spulse.cpuhp_fixups);
}
