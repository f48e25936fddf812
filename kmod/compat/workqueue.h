/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: system workqueues. spulse_system_percpu_wq is system_percpu_wq
 * where it exists (system_wq is deprecated there and warns when work is
 * queued on it), else system_wq: the same per-CPU workqueue.
 */
#ifndef SPULSE_COMPAT_WORKQUEUE_H
#define SPULSE_COMPAT_WORKQUEUE_H

#include <linux/workqueue.h>

#include "features.h"

#ifdef SPULSE_HAVE_SYSTEM_PERCPU_WQ
#define spulse_system_percpu_wq	system_percpu_wq
#else
#define spulse_system_percpu_wq	system_wq
#endif

#endif /* SPULSE_COMPAT_WORKQUEUE_H */
