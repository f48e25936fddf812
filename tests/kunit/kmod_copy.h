/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test module's own instance of spulse.ko's runtime (kmod/sample.c,
 * relay.c, percpu.c, kstack.c compiled in by copy_*.c) and the helpers the
 * sampler suites use to set it up, run it and read its streams back.
 */
#ifndef SPULSE_KUNIT_KMOD_COPY_H
#define SPULSE_KUNIT_KMOD_COPY_H

#include <kunit/test.h>

struct perf_event;

#include "spulse.h"
#include "params.h"
#include "percpu.h"
#include "relay.h"
#include "sample.h"
#include "stream.h"

void spulse_kunit_take(struct pt_regs *regs);
void spulse_kunit_throttle(struct perf_event *event);
/* perf event creations still to fail (copy_sample.c) */
extern atomic_t spulse_kunit_event_fail;
/* batch-buffer allocations still to fail (copy_percpu.c) */
extern atomic_t spulse_kunit_alloc_fail;
void *spulse_kunit_kvmalloc(size_t size, gfp_t flags);

/* meta.c stand-ins: counts of calls from the sample path. */
extern atomic_t spulse_kunit_meta_kicks;

int rt_setup(struct kunit *test, const struct spulse_params *p,
	     const char *dirname);
void rt_teardown(void);
void rt_stats(struct spulse_cpu_stats *sum);
ssize_t rt_read_cpu(struct kunit *test, int cpu, u8 **data);

#endif
