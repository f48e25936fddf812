// SPDX-License-Identifier: MIT
/*
 * One round over the inputs: read what each has, decode its records and
 * queue them in the merge (cpuN) or forward them (meta); a stream that
 * cannot be decoded is abandoned with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <spulse/varint.h>

#include "session.h"

const char *drain_input_name(const struct drain_input *in, char *buf,
			      size_t len)
{
	if (in->cpu < 0)
		return "meta";
	snprintf(buf, len, "cpu%d", in->cpu);
	return buf;
}

static void stream_error(struct drain *d, struct drain_input *in,
			 const struct spulse_error *err)
{
	char nb[32];

	fprintf(d->log,
		"spulse-drain: %s: offset %" PRIu64 ": %s; stream abandoned\n",
		drain_input_name(in, nb, sizeof(nb)), in->epoch_base + err->offset,
		err->msg);
	drain_input_abandon(in, err);
	d->errors++;
}

/*
 * Queue one record of CPU input @i; @queued_ns is the wall time of the
 * read that brought it (one clock read per read, not per record).
 */
static int cpu_record(struct drain *d, unsigned int i,
		      const struct spulse_record *r, int64_t queued_ns)
{
	struct drain_input *in = &d->cpu[i];
	/* this epoch's header (the kernel repeats the session's start) */
	uint64_t start_us = spulse_stream_info(in->stream)->start_us;
	int64_t shift = (int64_t)(start_us - d->base_us) * 1000, t;
	struct drain_msample s;
	int ret;

	if (r->tag == SPULSE_TAG_SAMPLE) {
		/* the hot path: only the fields a sample uses */
		s.epoch = in->epoch;
		t = shift + r->u.sample.time_ns;
		s.time_ns = t < 0 ? 0 : t;
		s.thread = r->u.sample.thread;
		s.stack = r->u.sample.stack;
		s.queued_ns = queued_ns;
		s.kind = DRAIN_ITEM_SAMPLE;
		/* streams from before cpu records: the file's CPU number */
		s.cpu = r->u.sample.cpu != SPULSE_NONE ? r->u.sample.cpu :
			(uint32_t)in->cpu;
		return drain_merge_push(&d->merge, i, &s);
	}
	/* definitions stay in the stream's defs: nothing to queue (and no
	 * 200-byte clear of s per definition record) */
	if (r->tag != SPULSE_TAG_EXT)
		return 0;
	memset(&s, 0, sizeof(s));
	s.epoch = in->epoch;
	if (r->tag == SPULSE_TAG_EXT && r->ext_kind == SPULSE_EXT_OFFCPU) {
		s.kind = DRAIN_ITEM_OFFCPU;
		s.x.iv = r->u.offcpu;
		t = shift + s.x.iv.time_ns;
		s.x.iv.time_ns = t < 0 ? 0 : t;
		/* ordered by the close (switch-in) time: when it was written */
		s.time_ns = s.x.iv.time_ns +
			    (int64_t)(s.x.iv.blocked_ns + s.x.iv.runq_ns);
	} else if (r->tag == SPULSE_TAG_EXT &&
		   r->ext_kind == SPULSE_EXT_TRIGGER) {
		s.kind = DRAIN_ITEM_TRIGGER;
		s.x.trig.t = r->u.trigger;
		t = shift + s.x.trig.t.time_ns;
		s.time_ns = s.x.trig.t.time_ns = t < 0 ? 0 : t;
		s.x.trig.text = strndup(r->u.trigger.text ? r->u.trigger.text :
					"", r->u.trigger.text_len);
		if (!s.x.trig.text)
			return -ENOMEM;
		s.x.trig.t.text = s.x.trig.text;
	} else {
		if (r->tag == SPULSE_TAG_EXT && r->ext_kind != SPULSE_EXT_CPU)
			d->ext_dropped++;	/* unknown kind: count, drop */
		/* definitions stay in the stream's defs; cpu records are in
		 * the samples (spulse_sample.cpu) */
		return 0;
	}
	s.queued_ns = queued_ns;
	ret = drain_merge_push(&d->merge, i, &s);
	if (ret < 0 && s.kind == DRAIN_ITEM_TRIGGER)
		free(s.x.trig.text);
	return ret;
}

/*
 * An epoch header must repeat the stream's first start_us and interval_us
 * (docs/FORMAT.md section 8): both clocks of an epoch are relative to the
 * profile start, so another start would move every time of the epoch.
 * One that does not is corruption at that field: the stream is abandoned
 * there (what was queued before it is written), nothing of the epoch is
 * queued. 1 when refused, else 0.
 */
static int epoch_header_refused(struct drain *d, struct drain_input *in,
				unsigned int i)
{
	const struct spulse_info *info = spulse_stream_info(in->stream);
	struct spulse_error err;

	/* called per record: the error (a 200-byte clear) only when refused */
	if (!in->epoch || (info->start_us == in->start_us &&
			   info->interval_us == in->interval_us))
		return 0;
	memset(&err, 0, sizeof(err));
	err.code = -EBADMSG;
	if (info->start_us != in->start_us) {
		err.offset = SPULSE_MAGIC_LEN;
		snprintf(err.msg, sizeof(err.msg), "epoch %u header start_us %"
			 PRIu64 " differs from the stream's %" PRIu64 " (an "
			 "epoch repeats the first header, FORMAT.md section 8)",
			 in->epoch, info->start_us, in->start_us);
	} else {
		err.offset = SPULSE_MAGIC_LEN + spulse_uvar_len(info->start_us);
		snprintf(err.msg, sizeof(err.msg), "epoch %u header interval_us "
			 "%" PRIu64 " differs from the stream's %" PRIu64 " (an "
			 "epoch repeats the first header, FORMAT.md section 8)",
			 in->epoch, info->interval_us, in->interval_us);
	}
	stream_error(d, in, &err);
	drain_merge_finish(&d->merge, i);
	return 1;
}

/* Samples taken from a CPU stream at once (24 bytes each, on the stack). */
#define SAMPLE_RUN 256

/*
 * A run of sample records of CPU input @i, at the stream's position: taken
 * together (spulse_stream_samples()) and queued as cpu_record() queues
 * each. 1 when samples were queued (or the epoch's header was refused),
 * 0 when the next record is not a sample that way, or -ENOMEM.
 */
static int cpu_samples(struct drain *d, struct drain_input *in,
		       unsigned int i, int64_t queued_ns)
{
	struct spulse_sample v[SAMPLE_RUN];
	size_t n = spulse_stream_samples(in->stream, v, SAMPLE_RUN);
	uint64_t start_us;

	if (!n)
		return 0;
	/* the same check as per record (its answer is the epoch's) */
	if (epoch_header_refused(d, in, i))
		return 1;
	start_us = spulse_stream_info(in->stream)->start_us;
	return drain_merge_push_samples(&d->merge, i, v, n,
					(int64_t)(start_us - d->base_us) * 1000,
					(uint32_t)in->cpu, in->epoch,
					queued_ns) ?: 1;
}

/* Decode every complete record of @in. */
static int decode(struct drain *d, struct drain_input *in, unsigned int i,
		  int64_t queued_ns)
{
	struct spulse_record r;
	struct spulse_error err;
	int ret;

	if (in->state == DRAIN_INPUT_ABANDONED || !in->have_header)
		return 0;
	for (;;) {
		if (in->cpu >= 0) {
			ret = cpu_samples(d, in, i, queued_ns);
			if (ret < 0)
				return ret;
			if (ret) {
				if (in->state == DRAIN_INPUT_ABANDONED)
					return 0;
				continue;
			}
			/*
			 * A run of frame and stack definitions: they queue
			 * nothing (cpu_record()), only the epoch's header
			 * check applies, once for the run as for samples.
			 */
			if (spulse_stream_take_defs(in->stream)) {
				if (epoch_header_refused(d, in, i))
					return 0;
				continue;
			}
		}
		err.offset = 0;
		err.code = 0;
		err.msg[0] = 0;
		ret = spulse_stream_next(in->stream, &r, &err);
		if (ret == 0)
			return 0;
		if (ret < 0) {
			int ep = drain_input_next_epoch(in, &err);

			if (ep < 0)
				return ep;
			if (ep > 0) {
				d->epochs++;	/* the kernel restarted its ids */
				continue;
			}
			if (ret != -EBADMSG && !err.msg[0])
				snprintf(err.msg, sizeof(err.msg), "%s",
					 strerror(-ret));
			stream_error(d, in, &err);
			if (in->cpu >= 0)
				drain_merge_finish(&d->merge, i);
			return 0;
		}
		if (in->cpu < 0) {
			if (r.tag == SPULSE_TAG_MODULE)
				drain_note_pid(d, r.u.module.pid);
			ret = drain_meta_record(&d->fwd, d->rec, &r, d->merge.any,
						d->merge.newest_ns);
			if (!ret && d->uw)
				ret = drain_unwind_meta(d->uw, &r);
		} else if (epoch_header_refused(d, in, i)) {
			return 0;
		} else {
			ret = cpu_record(d, i, &r, queued_ns);
		}
		if (ret < 0)
			return ret;
	}
}

/*
 * Read what one input has (fed to its stream, not decoded yet). A read
 * error closes the input (after rmmod: EIO). Bytes read or a fatal -errno.
 */
static long pump_read(struct drain *d, struct drain_input *in, unsigned int i)
{
	long n;

	if (in->state != DRAIN_INPUT_OPEN)
		return 0;
	n = drain_input_read(in, READ_ROUND_MAX);
	if (n > 0 && !in->dry)
		d->more = true;		/* stopped by the round limit */
	if (n < 0 && in->state == DRAIN_INPUT_GONE) {
		char nb[32];

		fprintf(d->log, "spulse-drain: %s: read: %s; input closed\n",
			drain_input_name(in, nb, sizeof(nb)), strerror((int)-n));
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		n = 0;
	}
	return n;
}

/*
 * Decode what one input's stream holds (records queued at @now); a
 * non-SPULSE header is a stream error too.
 */
static int pump_decode(struct drain *d, struct drain_input *in,
		       unsigned int i, int64_t now)
{
	int ret;

	if (in->state == DRAIN_INPUT_ABANDONED || !in->stream)
		return 0;
	if (!in->have_header && in->hdr_len >= SPULSE_MAGIC_LEN &&
	    memcmp(in->hdr, SPULSE_MAGIC, SPULSE_MAGIC_LEN)) {
		struct spulse_error err = { .offset = 0, .code = -EBADMSG };

		snprintf(err.msg, sizeof(err.msg), "bad magic");
		stream_error(d, in, &err);
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		return 0;
	}
	ret = drain_maybe_open_recorder(d);
	if (ret < 0)
		return ret;
	if (d->rec) {
		ret = decode(d, in, i, now);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * One round: read every input (CPUs, then meta: every module the kernel
 * wrote before the samples read is then known before they are released and
 * resolved), then decode. Two clock reads per round, not one per input or
 * record: an input read dry counts as dry from before the round (t0), the
 * records read count as queued after it (t1) -- both err on the safe side
 * of the merge's "read dry after it was queued" rules.
 */
long drain_round_read(struct drain *d)
{
	long total = 0, n;
	int64_t t0 = mono_ns();
	unsigned int i;
	int ret;

	d->more = false;
	for (i = 0; i < d->ncpu; i++) {
		n = pump_read(d, &d->cpu[i], i);
		if (n < 0)
			return n;
		total += n;
	}
	if (d->have_meta) {
		n = pump_read(d, &d->meta, 0);
		if (n < 0)
			return n;
		total += n;
	}
	d->round_ns = mono_ns();
	for (i = 0; i < d->ncpu; i++) {
		if (d->cpu[i].state == DRAIN_INPUT_OPEN && d->cpu[i].dry)
			drain_merge_dry(&d->merge, i, t0);
		ret = pump_decode(d, &d->cpu[i], i, d->round_ns);
		if (ret < 0)
			return ret;
	}
	if (d->have_meta) {
		ret = pump_decode(d, &d->meta, 0, d->round_ns);
		if (ret < 0)
			return ret;
	}
	return total;
}
