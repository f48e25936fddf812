/* SPDX-License-Identifier: MIT */
/*
 * Time-ordered k-way merge of per-CPU sample queues with a bounded window.
 *
 * Each source (CPU) pushes its samples in its own stream order, and is
 * told when it was last read dry (nothing more readable at that moment).
 * The earliest queued sample, time t, queued at wall time q, is released
 * (popped) when:
 *  1. every live source has pushed a time >= t; or
 *  2. t is at least one window older than the newest pushed time, every
 *     live source that pushed something has pushed a time >= t, and those
 *     that never pushed anything were read dry after q (idle CPUs); or
 *  3. it has been queued for a window of wall-clock time and every live
 *     source not past t was read dry after q (a CPU that stopped producing
 *     cannot hold the others back, but one the drainer has not caught up
 *     with yet does); or
 *  4. the merge is being drained (stop).
 * A finished source (closed, abandoned) no longer counts as live.
 * Samples therefore come out in time order unless a source's data reaches
 * the drainer more than a window late; such a sample is emitted anyway (the
 * spool allows negative deltas) and counted as late by the caller.
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
	int64_t dry_ns;		/* wall time last read dry; INT64_MIN never */
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
/* @src will push nothing more: it no longer holds samples back. */
void drain_merge_finish(struct drain_merge *m, unsigned int src);
/* @src was read dry (nothing readable) at wall time @now_ns. */
void drain_merge_dry(struct drain_merge *m, unsigned int src, int64_t now_ns);
/*
 * Pop the next releasable sample at wall time @now_ns (ignored when @drain).
 * Returns 1 and fills *src and *out, or 0 when nothing may be released yet.
 * With @drain every queued sample is releasable (in time order).
 */
int drain_merge_pop(struct drain_merge *m, int64_t now_ns, bool drain,
		    unsigned int *src, struct drain_msample *out);

#endif
