/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sampler (sample.c): the perf events (per CPU or per target thread),
 * their hotplug state and the overflow handler.
 */
#ifndef SPULSE_KMOD_SAMPLE_H
#define SPULSE_KMOD_SAMPLE_H

#include <linux/types.h>

#define SPULSE_TASK_EVENTS_MAX	4096

struct perf_event;

/**
 * struct spulse_tev - one task event (events=task)
 * @ev: the event (its inherited children hang off it)
 * @enabled: @ev's time enabled at the last fold
 * @running: @ev's time running at the last fold
 */
struct spulse_tev {
	struct perf_event *ev;
	u64 enabled;
	u64 running;
};

int spulse_sample_init(void);
void spulse_sample_exit(void);
int spulse_sample_prepare(void);
void spulse_sample_enable(bool on);

#endif /* SPULSE_KMOD_SAMPLE_H */
