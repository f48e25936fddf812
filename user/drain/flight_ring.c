// SPDX-License-Identifier: MIT
/*
 * The flight recorder's ring (docs/DRAIN.md, "Flight recorder"):
 * generations rotated by time and retained within the bound, triggers
 * accepted or suppressed, and the dumps cut from the generations.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

/* ---- flight recorder ring (docs/DRAIN.md, "Flight recorder") ---------- */

uint64_t drain_gen_size(const struct drain *d, const struct fgen *g)
{
	if (d->rec && g == &d->gens[d->ngens - 1])
		return spulse_recorder_bytes(d->rec);
	return g->bytes;
}

void drain_ring_account(struct drain *d)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < d->ngens; i++)
		sum += drain_gen_size(d, &d->gens[i]);
	if (sum > d->gen_bytes_max)
		d->gen_bytes_max = sum;
}

static void drop_oldest(struct drain *d)
{
	struct fgen *g = &d->gens[0];

	if (g->any && (!d->dropped_any || g->max_ns > d->dropped_upto)) {
		d->dropped_upto = g->max_ns;
		d->dropped_any = true;
	}
	close(g->fd);
	memmove(d->gens, d->gens + 1, (d->ngens - 1) * sizeof(*d->gens));
	d->ngens--;
}

/* Keep just the generations a current or future dump can need. */
static void retain(struct drain *d)
{
	int64_t keep = d->written_max - (int64_t)d->fo.seconds_ns -
		       (int64_t)d->fo.post_ns;
	unsigned int i, max = drain_flight_max_gens(&d->fo);

	for (i = 0; i < d->npend; i++)
		if (d->pend[i].ws < keep)
			keep = d->pend[i].ws;
	while (d->ngens > 1 && d->gens[0].any && d->gens[0].max_ns < keep)
		drop_oldest(d);
	while (d->ngens > max)
		drop_oldest(d);	/* the byte cap cut generations short */
}

static int rotate(struct drain *d)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	struct stat sb;
	unsigned int i;
	int ret;

	drain_ring_account(d);
	ret = spulse_recorder_close(d->rec);
	d->rec = NULL;
	if (ret < 0)
		return ret;
	cur->bytes = fstat(cur->fd, &sb) ? 0 : (uint64_t)sb.st_size;
	ret = drain_new_generation(d);
	if (ret < 0)
		return ret;
	/* the new generation is a spool of its own: ids start again */
	for (i = 0; i < d->ncpu; i++)
		drain_input_forget_maps(&d->cpu[i]);
	if (d->have_meta) {
		ret = drain_meta_redefine(&d->fwd, d->rec,
					  spulse_stream_defs(d->meta.stream));
		if (ret < 0)
			return ret;
	}
	drain_ring_account(d);	/* the most: just before the oldest is dropped */
	retain(d);
	return 0;
}

int drain_flight_before(struct drain *d, int64_t t)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	uint64_t cap = d->fo.gen_bytes ? d->fo.gen_bytes : DRAIN_FLIGHT_GEN_BYTES;

	if (cur->any && (t - cur->min_ns >= (int64_t)drain_flight_gen_ns(&d->fo) ||
			 spulse_recorder_bytes(d->rec) >= cap))
		return rotate(d);
	return 0;
}

static void fmt_ms(char *b, size_t n, uint64_t ns)
{
	snprintf(b, n, "%.3fms", (double)ns / 1e6);
}

/* A trigger fired at @t: accept it (pending until its post time) or not. */
static int fire(struct drain *d, uint8_t reason, int64_t t, uint64_t value,
		uint64_t threshold, const char *text)
{
	struct ftrig *p;
	int64_t gap = (int64_t)d->fo.min_gap_ns;

	d->seq++;
	d->fired++;
	if (d->dumps + d->npend >= d->fo.max_dumps) {
		d->suppressed++;
		fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s "
			"suppressed: --max-dumps %u reached\n", d->seq, text,
			(double)t / 1e9, d->fo.max_dumps);
		return 0;
	}
	if (d->have_last_T && t < d->last_T + gap && t > d->last_T - gap) {
		d->suppressed++;
		fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s "
			"suppressed: within --min-gap of the trigger at "
			"%.3f s\n", d->seq, text, (double)t / 1e9,
			(double)d->last_T / 1e9);
		return 0;
	}
	if (d->npend == d->cappend) {
		unsigned int cap = d->cappend ? d->cappend * 2 : 4;
		struct ftrig *v = realloc(d->pend, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->pend = v;
		d->cappend = cap;
	}
	p = &d->pend[d->npend++];
	memset(p, 0, sizeof(*p));
	snprintf(p->text, sizeof(p->text), "%s", text);
	p->t.time_ns = t;
	p->t.reason = reason;
	p->t.seq = d->seq;
	p->t.value_ns = value;
	p->t.threshold_ns = threshold;
	p->ws = t > (int64_t)d->fo.seconds_ns ? t - (int64_t)d->fo.seconds_ns : 0;
	p->we = t + (int64_t)d->fo.post_ns;
	p->fired_wall_ns = mono_ns();
	d->have_last_T = true;
	d->last_T = t;
	fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s: dump after "
		"%.3f s more\n", d->seq, text, (double)t / 1e9,
		(double)d->fo.post_ns / 1e9);
	return 1;
}

/* Write the dump of pending trigger @k, window end at most @we_max. */
static int cut_pending(struct drain *d, unsigned int k, int64_t we_max)
{
	struct ftrig *p = &d->pend[k];
	struct drain_cut_stats cs;
	struct spulse_error err;
	int64_t ws = p->ws, we = p->we < we_max ? p->we : we_max;
	int *fds = NULL;
	size_t n = 0;
	unsigned int i;
	char *path = NULL, note[64] = "";
	int ret;

	if (we < ws)
		we = ws;
	if (d->dropped_any && ws <= d->dropped_upto) {
		ws = d->dropped_upto + 1;
		if (we < ws)
			we = ws;
		snprintf(note, sizeof(note), " (start cut by the memory cap)");
	}
	if (d->rec) {
		ret = spulse_recorder_flush(d->rec);
		if (ret < 0)
			return ret;
	}
	fds = calloc(d->ngens ? d->ngens : 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < d->ngens; i++)
		if (d->gens[i].any && d->gens[i].max_ns >= ws &&
		    d->gens[i].min_ns <= we)
			fds[n++] = d->gens[i].fd;
	p->t.window_start_ns = (uint64_t)ws;
	p->t.window_end_ns = (uint64_t)we;
	p->t.text = p->text;
	p->t.text_len = (uint32_t)strlen(p->text);
	path = drain_dump_name(d->o.output, d->dumps + 1);
	if (!path) {
		free(fds);
		return -ENOMEM;
	}
	ret = drain_cut(fds, n, path, d->base_us, d->interval_us, ws, we, &p->t,
			d->have_ident ? &d->ident : NULL, &cs, &err);
	free(fds);
	if (ret < 0) {
		fprintf(d->log, "spulse-drain: dump %s: %s\n", path, err.msg);
		free(path);
		return ret;
	}
	d->dumps++;
	fprintf(d->log, "spulse-drain: dump %u: %s: trigger %u (%s); window "
		"%.3f..%.3f s%s; %" PRIu64 " samples, %" PRIu64 " off-CPU "
		"intervals from %zu generations\n", d->dumps, path, p->t.seq,
		p->text, (double)ws / 1e9, (double)we / 1e9, note, cs.samples,
		cs.offcpu, n);
	if (d->o.kallsyms) {
		drain_save_kallsyms(d, path);
		drain_capture_sidecars(d, path, true);
	}
	free(path);
	memmove(d->pend + k, d->pend + k + 1,
		(d->npend - k - 1) * sizeof(*d->pend));
	d->npend--;
	return 0;
}

/*
 * Is everything up to @we written? Every CPU that produced anything has
 * pushed a later item and holds nothing up to @we; CPUs that never
 * produced are idle; finished ones count no more. (written_max > @we alone
 * is not enough: an item released by the wall-clock rule can pass a CPU
 * whose data reaches the drainer late.)
 */
static bool written_through(const struct drain *d, int64_t we)
{
	unsigned int i;

	if (!d->written_any || d->written_max <= we)
		return false;
	for (i = 0; i < d->merge.nsrc; i++) {
		const struct drain_mqueue *q = &d->merge.q[i];

		if (q->finished || !q->seen)
			continue;
		if (q->last_ns <= we || (q->len && q->v[q->head].time_ns <= we))
			return false;
	}
	return true;
}

/* Cut every pending dump whose window is complete (or @force / timed out). */
int drain_flight_poll(struct drain *d, bool force)
{
	int64_t now = mono_ns();
	unsigned int k = 0;
	int ret;

	while (k < d->npend) {
		struct ftrig *p = &d->pend[k];
		int64_t wait = (int64_t)d->fo.post_ns +
			       2 * (int64_t)d->o.window_ms * 1000000 +
			       1000000000;

		if (force || written_through(d, p->we) ||
		    now - p->fired_wall_ns >= wait) {
			ret = cut_pending(d, k, d->written_any ? d->written_max :
					  p->we);
			if (ret < 0)
				return ret;
			continue;
		}
		k++;
	}
	return 0;
}

int drain_flight_after(struct drain *d, const struct drain_msample *s,
			const struct spulse_thread *th)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	int ret, i;

	if (!cur->any || s->time_ns < cur->min_ns)
		cur->min_ns = s->time_ns;
	if (!cur->any || s->time_ns > cur->max_ns)
		cur->max_ns = s->time_ns;
	cur->any = true;
	if (!d->written_any || s->time_ns > d->written_max)
		d->written_max = s->time_ns;
	d->written_any = true;
	if (s->kind == DRAIN_ITEM_TRIGGER &&
	    s->x.trig.t.reason == SPULSE_TRIGGER_MANUAL) {
		ret = fire(d, SPULSE_TRIGGER_MANUAL, s->time_ns, 0, 0,
			   "manual (control file)");
		if (ret < 0)
			return ret;
	}
	/*
	 * One trigger per interval: the first spec it exceeds, none for the
	 * recorder's own child before its exec (drain_flight_offcpu_spec()).
	 */
	if (s->kind == DRAIN_ITEM_OFFCPU &&
	    (i = drain_flight_offcpu_spec(&d->fo, &s->x.iv, th)) >= 0) {
		const struct drain_trigger_spec *sp = &d->fo.specs[i];
		const struct spulse_offcpu *iv = &s->x.iv;
		uint64_t v = sp->reason == SPULSE_TRIGGER_OFFCPU ?
			     iv->blocked_ns + iv->runq_ns : iv->runq_ns;
		const char *st = spulse_state_name(iv->state);
		char text[SPULSE_MAX_TRIGGER_TEXT], ms[32];

		fmt_ms(ms, sizeof(ms), v);
		snprintf(text, sizeof(text), "%s tid %u state %s %s",
			 sp->text, th ? th->tid : 0, st ? st : "?", ms);
		ret = fire(d, sp->reason, s->time_ns, v, sp->threshold_ns,
			   text);
		if (ret < 0)
			return ret;
	}
	drain_ring_account(d);
	return drain_flight_poll(d, false);
}

/*
 * The trigger time of a signal: now on the profile clock. The kernel's
 * times are CLOCK_MONOTONIC since the session start and start_us is the
 * CLOCK_REALTIME of that start, so now ~ realtime - start_us; the newest
 * record read lags behind that by the relay latency (seen: 1.2 s in the
 * TCG VM). The estimate is used when it is plausible (not before the
 * newest record read and at most 60 s after it), else - streams not
 * stamped by this machine's clock, such as the suite's fake files - the
 * newest record time read.
 */
int drain_flight_signal(struct drain *d)
{
	int64_t t = d->merge.any ? d->merge.newest_ns : 0, now;
	struct timespec ts;

	if (!d->flight)
		return -EINVAL;
	if (d->written_any && d->written_max > t)
		t = d->written_max;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
	       (int64_t)d->base_us) * 1000;
	if (d->rec && now >= t && now - t <= 60 * (int64_t)1000000000)
		t = now;
	return fire(d, SPULSE_TRIGGER_SIGNAL, t, 0, 0, "signal SIGUSR1");
}
