/* SPDX-License-Identifier: MIT */
/*
 * Time-ordered k-way merge of per-CPU sample queues with a bounded window.
 *
 * Each source (CPU) pushes its samples in its own stream order. Let the
 * watermark be the minimum, over live sources that have pushed something,
 * of the latest time each has pushed (a finished source no longer counts).
 * The earliest queued sample is released (popped) when:
 *  1. its time <= the watermark and every live source has pushed something;
 *  2. its time <= the watermark and it is older than the newest pushed time
 *     by at least the window (a source that has pushed nothing for a whole
 *     window of sample time is taken to be idle);
 *  3. it has been queued for at least the window in wall-clock time (a
 *     source that stopped producing does not hold the others back); or
 *  4. the merge is being drained (stop).
 * Samples therefore come out in time order unless a source lags the others
 * by more than the window; a sample arriving after later ones were released
 * is emitted anyway (the spool allows negative deltas) and counted as late.
 */
#ifndef SPULSE_DRAIN_MERGE_H
#define SPULSE_DRAIN_MERGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/** A queued sample: ids are the source's local (per-CPU) ids. */
struct drain_msample {
	int64_t time_ns;	/* offset from the spool start */
	uint32_t thread;	/* per-source thread id */
	uint32_t stack;		/* per-source leaf stack id */
	int64_t queued_ns;	/* wall clock (CLOCK_MONOTONIC) when pushed */
};

struct drain_mqueue {
	struct drain_msample *v;
	size_t cap, head, len;	/* ring buffer */
	int64_t last_ns;	/* latest pushed time */
	bool seen;		/* pushed at least one sample */
	bool finished;		/* will push no more */
};

struct drain_merge {
	struct drain_mqueue *q;
	unsigned int nsrc;
	int64_t window_ns;
	int64_t newest_ns;	/* max pushed time over all sources */
	bool any;
	size_t queued;		/* total samples held */
};

int drain_merge_init(struct drain_merge *m, unsigned int nsrc,
		     int64_t window_ns);
void drain_merge_free(struct drain_merge *m);
/* Queue a sample of @src. 0 or -ENOMEM. */
int drain_merge_push(struct drain_merge *m, unsigned int src,
		     const struct drain_msample *s);
/* @src will push nothing more: it stops holding the watermark back. */
void drain_merge_finish(struct drain_merge *m, unsigned int src);
/*
 * Pop the next releasable sample at wall time @now_ns (ignored when @drain).
 * Returns 1 and fills *src and *out, or 0 when nothing may be released yet.
 * With @drain every queued sample is releasable (in time order).
 */
int drain_merge_pop(struct drain_merge *m, int64_t now_ns, bool drain,
		    unsigned int *src, struct drain_msample *out);

#endif
