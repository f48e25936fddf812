// SPDX-License-Identifier: GPL-2.0
/*
 * system_percpu_wq, the per-CPU system workqueue under its new name
 * (system_wq is deprecated where it exists and warns when used).
 */
#include <linux/workqueue.h>

static __maybe_unused struct workqueue_struct *spulse_probe(void)
{
	return system_percpu_wq;
}
