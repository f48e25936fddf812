/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel compatibility: every difference between the supported kernels
 * lives under kmod/compat/, one small shim per changed kernel API named
 * for the capability (compat/relay.h, sched.h, perf.h, highmem.h,
 * workqueue.h, cpuhp.h). The shims choose by SPULSE_HAVE_* macros that
 * Kbuild writes into kmod/compat/features.h by compiling each
 * kmod/compat/probes/NAME.c against the target's headers (probe.sh), never
 * by kernel version: distributions backport. docs/KERNEL.md, "Kernel
 * compatibility", says how to add one.
 *
 * Capabilities a kernel lacks are said once at load (dmesg) and in stats
 * (spulse_compat_report(), spulse_compat_stats()).
 */
#ifndef SPULSE_KMOD_COMPAT_H
#define SPULSE_KMOD_COMPAT_H

#include <linux/types.h>

#include "compat/features.h"

struct seq_file;

void spulse_compat_report(void);
void spulse_compat_stats(struct seq_file *m);

#endif /* SPULSE_KMOD_COMPAT_H */
