/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: CPU hotplug prepare states.
 *
 * Before upstream commit 932d8476399f (5.10 and other stable kernels
 * without the backport) cpuhp_setup_state() with
 * CPUHP_BP_PREPARE_DYN allocated a state but ran the startup callback of
 * the wrong (first dynamic) state on the CPUs already online, so theirs
 * never ran. That is kernel/cpu.c, not a header, so no probe can see it:
 * spulse_cpuhp_setup_prepare() checks every online CPU afterwards and runs
 * the callback itself where it did not run.
 */
#ifndef SPULSE_COMPAT_CPUHP_H
#define SPULSE_COMPAT_CPUHP_H

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/types.h>

/**
 * spulse_cpuhp_setup_prepare() - a prepare state that ran on every online CPU
 * @name: the state's name
 * @startup: the prepare callback (idempotent)
 * @done: true when @startup has run successfully for a CPU
 * @fixups: set to the online CPUs the kernel skipped, run here
 *
 * Context: process context, takes the hotplug lock. No teardown callback:
 * remove the state with cpuhp_remove_state_nocalls().
 *
 * Return: the state (> 0), or an error (the state is removed again when
 * running @startup here failed).
 */
static inline int spulse_cpuhp_setup_prepare(const char *name,
					     int (*startup)(unsigned int cpu),
					     bool (*done)(unsigned int cpu),
					     u32 *fixups)
{
	unsigned int cpu;
	int state, r = 0;

	*fixups = 0;
	cpus_read_lock();
	state = cpuhp_setup_state_cpuslocked(CPUHP_BP_PREPARE_DYN, name,
					     startup, NULL);
	if (state > 0) {
		for_each_online_cpu(cpu) {
			if (done(cpu))
				continue;
			(*fixups)++;
			r = startup(cpu);
			if (r)
				break;
		}
		if (r) {
			cpuhp_remove_state_nocalls_cpuslocked(state);
			state = r;
		}
	}
	cpus_read_unlock();
	return state;
}

#endif /* SPULSE_COMPAT_CPUHP_H */
