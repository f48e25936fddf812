// SPDX-License-Identifier: MIT
/*
 * Writing what the merge window releases into the Recorder: grouped by
 * CPU outside flight mode, one item at a time in the merge's order in
 * flight mode; late samples are counted here.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

/* Write one released item into the spool (or the current generation). */
static int write_item(struct drain *d, unsigned int src, struct drain_msample *s)
{
	const struct spulse_defs *defs;
	struct drain_idmap *map;
	uint32_t th, st;
	int ret;

	ret = drain_input_epoch(&d->cpu[src], s->epoch, &defs, &map);
	if (ret < 0 && s->kind != DRAIN_ITEM_TRIGGER)
		return ret;
	switch (s->kind) {
	case DRAIN_ITEM_SAMPLE:
		ret = drain_map_sample(d->rec, defs, map, d->fwd.gen,
				       s->thread, s->stack, &th, &st);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping sample: %s\n",
				d->cpu[src].cpu, strerror(-ret));
			return ret;
		}
		ret = spulse_rec_sample_cpu(d->rec, s->time_ns, th, st, s->cpu);
		if (ret < 0)
			return ret;
		d->samples++;
		return 0;
	case DRAIN_ITEM_OFFCPU:
		ret = drain_map_offcpu(d->rec, defs, map, d->fwd.gen,
				       &s->x.iv);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping off-CPU "
				"interval: %s\n", d->cpu[src].cpu,
				strerror(-ret));
			return ret;
		}
		ret = spulse_rec_offcpu(d->rec, &s->x.iv);
		if (ret < 0)
			return ret;
		d->offcpu++;
		return 0;
	default:
		ret = spulse_rec_trigger(d->rec, &s->x.trig.t);
		if (ret < 0)
			return ret;
		d->triggers++;
		return 0;
	}
}

/*
 * A sample the merge releases before one it already released is late (its
 * CPU's data reached the drainer more than a window late): counted in the
 * merge's order, whatever order drain_release() then writes in.
 */
static void count_late(struct drain *d, const struct drain_msample *s)
{
	if (s->kind != DRAIN_ITEM_SAMPLE)
		return;
	if (d->emitted && s->time_ns < d->last_time_ns)
		d->late++;
	else
		d->last_time_ns = s->time_ns;
	d->emitted = true;
}

/* Free what the collected items own (trigger texts) and forget them. */
void drain_group_clear(struct drain *d)
{
	uint32_t i;

	for (i = 0; d->ngrp_trig && i < d->ngrp; i++)
		if (d->grp[i].s.kind == DRAIN_ITEM_TRIGGER)
			free(d->grp[i].s.x.trig.text);
	d->ngrp = 0;
	d->ngrp_trig = 0;
}

/*
 * Write the collected items grouped by source CPU, each source's items in
 * the order they were popped (which is the order its stream holds them,
 * so drain_input_epoch() still sees each source's epochs in order and
 * frees an older one only once its items are written). The sources go in
 * the order they first appear, except that the source of the last sample
 * written goes first: its run continues without a cpu record. Empties the
 * collection. 0 or -errno.
 */
static int write_group(struct drain *d)
{
	struct gitem *v = d->grp;
	unsigned int n = 0, k, src;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < d->ngrp; i++) {
		src = v[i].src;
		v[i].next = UINT32_MAX;
		if (d->grp_head[src] == UINT32_MAX) {
			d->grp_order[n++] = src;
			d->grp_head[src] = i;
		} else {
			v[d->grp_tail[src]].next = i;
		}
		d->grp_tail[src] = i;
	}
	for (k = 1; k < n; k++) {
		if (d->grp_order[k] != d->last_src)
			continue;
		memmove(d->grp_order + 1, d->grp_order,
			k * sizeof(*d->grp_order));
		d->grp_order[0] = d->last_src;
		break;
	}
	for (k = 0; k < n; k++) {
		src = d->grp_order[k];
		for (i = d->grp_head[src]; !ret && i != UINT32_MAX;
		     i = v[i].next) {
			ret = write_item(d, src, &v[i].s);
			if (!ret && v[i].s.kind == DRAIN_ITEM_SAMPLE)
				d->last_src = src;
		}
		d->grp_head[src] = UINT32_MAX;
	}
	drain_group_clear(d);
	return ret;
}

/*
 * Outside flight mode: collect what the merge releases and write it
 * grouped by CPU (write_group()), so that the spool gets about one cpu
 * record per CPU per group instead of one per CPU switch of the merged
 * order (nearly every sample when several CPUs sample at once). Held meta
 * records cut the groups: drain_meta_apply_pending() would apply them
 * before the first popped item later than drain_meta_wait_ns(), so the
 * items popped before that one are written first, then the records, then
 * the rest, exactly as in the merge's order. A group holds at most
 * GROUP_MAX items, which bounds the memory and how far a sample can be
 * written after a later one of another CPU.
 */
static int release_grouped(struct drain *d, bool all)
{
	int64_t wait = drain_meta_wait_ns(&d->fwd);
	struct drain_msample s;
	unsigned int src;
	int ret = 0;

	while (drain_merge_pop(&d->merge, d->round_ns, all, &src, &s) == 1) {
		count_late(d, &s);
		if (s.time_ns > wait) {
			ret = write_group(d);
			if (!ret)
				ret = drain_meta_apply_pending(&d->fwd, d->rec,
							       s.time_ns);
			wait = drain_meta_wait_ns(&d->fwd);
		} else if (d->ngrp == GROUP_MAX) {
			ret = write_group(d);
		}
		if (!ret && d->ngrp == d->capgrp) {
			uint32_t cap = d->capgrp ? 2 * d->capgrp : 256;
			struct gitem *v;

			if (cap > GROUP_MAX)
				cap = GROUP_MAX;
			v = realloc(d->grp, cap * sizeof(*v));
			if (v) {
				d->grp = v;
				d->capgrp = cap;
			} else {
				ret = -ENOMEM;
			}
		}
		if (ret < 0) {
			if (s.kind == DRAIN_ITEM_TRIGGER)
				free(s.x.trig.text);
			drain_group_clear(d);
			return ret;
		}
		if (s.kind == DRAIN_ITEM_SAMPLE) {
			/* a sample has no payload: not the union's bytes */
			memcpy(&d->grp[d->ngrp].s, &s,
			       offsetof(struct drain_msample, x));
		} else {
			d->grp[d->ngrp].s = s;
			if (s.kind == DRAIN_ITEM_TRIGGER)
				d->ngrp_trig++;
		}
		d->grp[d->ngrp].src = src;
		d->ngrp++;
	}
	return write_group(d);
}

/*
 * Flight mode (its generations are cut by time) and SPULSE_DRAIN_MERGE_ORDER:
 * write each item the merge releases at once, in the merge's order.
 */
static int release_ordered(struct drain *d, bool all)
{
	struct drain_msample s;
	unsigned int src;
	int ret;

	while (drain_merge_pop(&d->merge, d->round_ns, all, &src, &s) == 1) {
		struct spulse_thread th;
		const struct spulse_thread *thp = NULL;

		count_late(d, &s);
		if (d->flight && s.kind == DRAIN_ITEM_OFFCPU) {
			const struct spulse_defs *defs;
			struct drain_idmap *map;

			if (!drain_input_epoch(&d->cpu[src], s.epoch, &defs,
					       &map) &&
			    !spulse_defs_thread(defs, s.x.iv.thread, &th))
				thp = &th;
		}
		ret = d->flight ? drain_flight_before(d, s.time_ns) : 0;
		if (!ret)
			ret = drain_meta_apply_pending(&d->fwd, d->rec, s.time_ns);
		if (!ret)
			ret = write_item(d, src, &s);
		if (!ret && d->flight)
			ret = drain_flight_after(d, &s, thp);
		if (s.kind == DRAIN_ITEM_TRIGGER)
			free(s.x.trig.text);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Write the samples the merge releases. */
int drain_release(struct drain *d, bool all)
{
	int ret;

	if (d->flight || d->merge_order)
		ret = release_ordered(d, all);
	else
		ret = release_grouped(d, all);
	if (ret < 0)
		return ret;
	/* nothing read is waiting any more: held records can apply */
	if (!d->merge.queued)
		return drain_meta_apply_pending(&d->fwd, d->rec, INT64_MAX);
	return 0;
}
