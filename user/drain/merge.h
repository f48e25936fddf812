/* SPDX-License-Identifier: MIT */
/*
 * Time-ordered k-way merge of per-CPU sample queues with a bounded window.
 * The queues also carry off-CPU intervals (ordered by close time, which is
 * when the kernel writes them, so each source stays in order) and trigger
 * marks; "sample" below means any queued item.
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

#include <libspulse.h>

/* What a queued item is (the merge itself only looks at the times). */
enum drain_item_kind {
	DRAIN_ITEM_SAMPLE = 0,
	DRAIN_ITEM_OFFCPU,	/* off-CPU interval, ordered by its close time */
	DRAIN_ITEM_TRIGGER,	/* trigger mark passed through */
};

/**
 * struct drain_msample - a queued item; ids are the source's local ids
 * @time_ns: ordering time, offset from the spool start: the sample time,
 *           an interval's close (switch-in) time, a trigger's time
 * @thread: per-source thread id (samples)
 * @stack: per-source leaf stack id (samples)
 * @queued_ns: wall clock (CLOCK_MONOTONIC) when pushed
 * @kind: enum drain_item_kind (0 = sample)
 * @cpu: the sample's CPU (samples)
 * @epoch: the source's epoch the ids belong to (relay_input.h)
 * @x: the interval (local ids, time_ns = switch-out offset from the spool
 *     start) or the trigger (text owned by @x.trig.text, freed by the
 *     consumer, or by drain_merge_free() for one still queued)
 */
union drain_mpayload {
	struct spulse_offcpu iv;
	struct {
		struct spulse_trigger t;
		char *text;
	} trig;
};

struct drain_msample {
	int64_t time_ns;
	uint32_t thread;
	uint32_t stack;
	int64_t queued_ns;
	uint8_t kind;
	uint32_t cpu;
	uint32_t epoch;
	union drain_mpayload x;
};

/*
 * How a queue holds an item: 32 bytes; the payload of an interval or a
 * trigger waits in the queue's payload ring (same order as its items), so
 * the samples that make up most of a queue stay small (a queue holds a
 * whole read round: tens of thousands of samples per CPU). @cpu is 16
 * bits here (the kernel's NR_CPUS is at most 8192).
 */
struct drain_mitem {
	int64_t time_ns;
	int64_t queued_ns;
	uint32_t thread;
	uint32_t stack;
	uint32_t epoch;
	uint16_t cpu;
	uint8_t kind;
};

struct drain_mqueue {
	struct drain_mitem *v;
	size_t cap, head, len;	/* ring buffer; cap is a power of two */
	union drain_mpayload *xv;
	size_t xcap, xhead, xlen;	/* payload ring; xcap a power of two */
	int64_t last_ns;	/* latest pushed time */
	bool seen;		/* pushed at least one sample */
	bool finished;		/* will push no more */
	int64_t dry_ns;		/* wall time last read dry; INT64_MIN never */
};

/*
 * @head_ns[i] is the time of source i's head item (INT64_MAX when its queue
 * is empty), so the earliest head is a scan of one small array. @wm is a
 * lower bound of the watermark of rule 1 (the minimum over live sources of
 * their latest pushed time; INT64_MIN while a live source has pushed
 * nothing): pushes only raise the latest times and sources only leave, so
 * a watermark computed once stays a lower bound, and a head at or before
 * it is released without looking at every source again.
 */
struct drain_merge {
	struct drain_mqueue *q;
	int64_t *head_ns;
	unsigned int nsrc;
	int64_t window_ns;
	int64_t newest_ns;	/* max pushed time over all sources */
	bool any;
	size_t queued;		/* total samples held */
	int64_t wm;		/* rule-1 watermark, a lower bound */
};

int drain_merge_init(struct drain_merge *m, unsigned int nsrc,
		     int64_t window_ns);
void drain_merge_free(struct drain_merge *m);
/* Queue a sample of @src. 0 or -ENOMEM. */
int drain_merge_push(struct drain_merge *m, unsigned int src,
		     const struct drain_msample *s);
/*
 * Queue a run of @n samples of @src as drain_merge_push() would queue each
 * (kind DRAIN_ITEM_SAMPLE): time @shift + v[k].time_ns (0 when negative),
 * CPU v[k].cpu or @cpu when that is SPULSE_NONE, @epoch, @queued_ns.
 * 0 or -ENOMEM (then nothing is queued).
 */
int drain_merge_push_samples(struct drain_merge *m, unsigned int src,
			     const struct spulse_sample *v, size_t n,
			     int64_t shift, uint32_t cpu, uint32_t epoch,
			     int64_t queued_ns);
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

/*
 * Items popped but left where they are in their queues (untouched until
 * the next push), collected into a group: per source, how many (@len)
 * from which ring index (@pos) and payload ring index (@xpos); @order
 * lists the @nsrc sources holding some in the order they first appeared;
 * @n items in all, @ntrig of them triggers. Late samples (one earlier than
 * a sample popped before it) are counted in *@late against *@last_ns
 * (*@emitted: a sample was popped), in the merge's order.
 */
struct drain_mgroup {
	uint32_t *len;
	size_t *pos, *xpos;
	unsigned int *order;
	unsigned int nsrc;
	uint32_t n, ntrig;
	bool *emitted;
	int64_t *last_ns;
	uint64_t *late;
};

/*
 * drain_merge_pop() in two steps, for a caller that collects a group:
 * drain_merge_peek() is the item drain_merge_pop() would pop now (NULL
 * when none may be released yet), *src its source; drain_merge_take()
 * then pops it into @g, and after it what drain_merge_pop() would pop
 * next (at wall time @now_ns) as long as that is not later than
 * @limit_ns and @g holds fewer than @max items: with @drain everything;
 * else an item that rule 1 or 2 releases, or rule 3 for every source not
 * past the newest time (the sources do not change while it pops, so
 * their state is looked at once per call, not per item; what it leaves,
 * peek's survey decides). Items of one source that come before the
 * other sources' heads are popped as a run. Returns how many items it
 * popped (>= 1).
 */
const struct drain_mitem *drain_merge_peek(struct drain_merge *m,
					   int64_t now_ns, bool drain,
					   unsigned int *src);
size_t drain_merge_take(struct drain_merge *m, unsigned int src,
			int64_t now_ns, bool drain, int64_t limit_ns,
			uint32_t max, struct drain_mgroup *g);

#endif
