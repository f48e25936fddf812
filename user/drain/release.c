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

/* An item of the group (in its queue) as the item drain_merge_pop() gives. */
static void group_item(const struct drain_mqueue *q, size_t pos, size_t xpos,
		       struct drain_msample *s)
{
	const struct drain_mitem *it = &q->v[pos & (q->cap - 1)];

	s->time_ns = it->time_ns;
	s->queued_ns = it->queued_ns;
	s->thread = it->thread;
	s->stack = it->stack;
	s->cpu = it->cpu;
	s->epoch = it->epoch;
	s->kind = it->kind;
	if (it->kind != DRAIN_ITEM_SAMPLE)
		s->x = q->xv[xpos & (q->xcap - 1)];
}

/* Free what the collected items own (trigger texts) and forget them. */
void drain_group_clear(struct drain *d)
{
	unsigned int k, src;
	uint32_t i, x;

	for (k = 0; k < d->grp.nsrc; k++) {
		src = d->grp.order[k];
		if (d->grp.ntrig) {
			const struct drain_mqueue *q = &d->merge.q[src];

			for (i = 0, x = 0; i < d->grp.len[src]; i++) {
				const struct drain_mitem *it =
					&q->v[(d->grp.pos[src] + i) &
					      (q->cap - 1)];

				if (it->kind == DRAIN_ITEM_SAMPLE)
					continue;
				if (it->kind == DRAIN_ITEM_TRIGGER)
					free(q->xv[(d->grp.xpos[src] + x) &
						   (q->xcap - 1)].trig.text);
				x++;
			}
		}
		d->grp.len[src] = 0;
	}
	d->grp.n = 0;
	d->grp.ntrig = 0;
	d->grp.nsrc = 0;
}

/* Samples mapped and waiting to be encoded together (24 bytes each). */
#define SAMPLE_BATCH 256

static int encode_samples(struct drain *d, const struct spulse_sample *b,
			  size_t n)
{
	size_t done;
	int ret = spulse_rec_samples(d->rec, b, n, &done);

	d->samples += done;
	return ret;
}

/*
 * Write the samples of one source's run of group items at ring indexes
 * @pos... (up to the first item that is not a sample, at most @n), as
 * write_item() writes each: the epoch's definitions looked up once per
 * epoch (the items of a source are in its stream's order, so
 * drain_input_epoch() frees the same older epochs as per item); samples
 * whose ids are mapped already are encoded in batches
 * (spulse_rec_samples()), and the batch is written before a sample that
 * needs a mapping, which may write definitions, so the records come out in
 * the same order. Returns how many were written, or -errno.
 */
static long write_samples(struct drain *d, unsigned int src,
			  const struct drain_mqueue *q, size_t pos, uint32_t n)
{
	const size_t mask = q->cap - 1;
	const struct drain_mitem *v = q->v;
	struct drain_input *in = &d->cpu[src];
	const struct spulse_defs *defs = NULL;
	struct drain_idmap *map = NULL;
	const uint32_t gen = d->fwd.gen;
	struct spulse_sample b[SAMPLE_BATCH];
	const struct drain_idmap_ent *tv = NULL, *sv = NULL;
	uint32_t k, epoch = 0, th = 0, st, tcap = 0, scap = 0;
	uint32_t lthread = UINT32_MAX, pid = 0;
	size_t nb = 0;
	int ret;

	for (k = 0; k < n; k++) {
		const struct drain_mitem *it = &v[(pos + k) & mask];
		const struct drain_idmap_ent *e;

		if (it->kind != DRAIN_ITEM_SAMPLE)
			break;
		if (!defs || it->epoch != epoch) {
			ret = drain_input_epoch(in, it->epoch, &defs, &map);
			if (ret < 0)
				goto fail;
			epoch = it->epoch;
			lthread = UINT32_MAX;
			tv = map->threads.v;
			tcap = (uint32_t)map->threads.cap;
			sv = map->stacks.v;
			scap = (uint32_t)map->stacks.cap;
		}
		/*
		 * the caches' fast path, with their arrays in registers
		 * and the last mapped thread remembered (a run of one
		 * CPU's samples is mostly one thread)
		 */
		if (it->thread != lthread) {
			if (it->thread >= tcap || !tv[it->thread].gen)
				goto map;
			lthread = it->thread;
			th = tv[lthread].global;
			pid = tv[lthread].pid;
		}
		if (it->stack >= scap)
			goto map;
		e = &sv[it->stack];
		if (!drain_idmap_valid(e, pid, gen))
			goto map;
		st = e->global;
		goto mapped;
map:
		ret = encode_samples(d, b, nb);
		nb = 0;
		if (ret < 0)
			return ret;
		ret = drain_map_sample(d->rec, defs, map, gen, it->thread,
				       it->stack, &th, &st);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping "
				"sample: %s\n", in->cpu, strerror(-ret));
			return ret;
		}
		/* the caches may have grown */
		lthread = UINT32_MAX;
		tv = map->threads.v;
		tcap = (uint32_t)map->threads.cap;
		sv = map->stacks.v;
		scap = (uint32_t)map->stacks.cap;
mapped:
		b[nb].time_ns = it->time_ns;
		b[nb].thread = th;
		b[nb].stack = st;
		b[nb].cpu = it->cpu;
		b[nb].reserved = 0;
		if (++nb == SAMPLE_BATCH) {
			ret = encode_samples(d, b, nb);
			nb = 0;
			if (ret < 0)
				return ret;
		}
	}
	ret = encode_samples(d, b, nb);
	return ret < 0 ? ret : (long)k;
fail:
	/* the samples before it were written first, as per item */
	{
		int wret = encode_samples(d, b, nb);

		return wret < 0 ? wret : ret;
	}
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
	unsigned int n = d->grp.nsrc, k, src;
	int ret = 0;

	for (k = 1; k < n; k++) {
		if (d->grp.order[k] != d->last_src)
			continue;
		memmove(d->grp.order + 1, d->grp.order,
			k * sizeof(*d->grp.order));
		d->grp.order[0] = d->last_src;
		break;
	}
	for (k = 0; k < n && !ret; k++) {
		const struct drain_mqueue *q;
		size_t pos, xpos;
		uint32_t i, len;

		src = d->grp.order[k];
		q = &d->merge.q[src];
		pos = d->grp.pos[src];
		xpos = d->grp.xpos[src];
		len = d->grp.len[src];
		for (i = 0; !ret && i < len;) {
			struct drain_msample s;
			long w = write_samples(d, src, q, pos + i, len - i);

			if (w < 0) {
				ret = (int)w;
				break;
			}
			if (w) {
				d->last_src = src;
				i += (uint32_t)w;
				continue;
			}
			/* an interval or a trigger (its text freed below) */
			group_item(q, pos + i, xpos++, &s);
			ret = write_item(d, src, &s);
			i++;
		}
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
 * GROUP_MAX items, which bounds how far a sample can be written after a
 * later one of another CPU. The items are popped a run of one source at a
 * time (drain_merge_take(): what drain_merge_pop() would pop one by one)
 * and left in their queue until the group is written.
 */
static int release_grouped(struct drain *d, bool all)
{
	int64_t wait = drain_meta_wait_ns(&d->fwd);
	const struct drain_mitem *it;
	unsigned int src;
	int ret = 0;

	while ((it = drain_merge_peek(&d->merge, d->round_ns, all, &src))) {
		int64_t t = it->time_ns;

		if (t > wait) {
			ret = write_group(d);
			if (!ret)
				ret = drain_meta_apply_pending(&d->fwd, d->rec, t);
			wait = drain_meta_wait_ns(&d->fwd);
		} else if (d->grp.n == GROUP_MAX) {
			ret = write_group(d);
		}
		/* after an error, only the item peeked (and then dropped) */
		drain_merge_take(&d->merge, src, d->round_ns, all, wait,
				 ret < 0 ? d->grp.n + 1 : GROUP_MAX, &d->grp);
		if (ret < 0) {
			drain_group_clear(d);
			return ret;
		}
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
