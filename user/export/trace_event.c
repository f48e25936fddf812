/* SPDX-License-Identifier: MIT */
/*
 * spulse export --format trace-event: Chrome / Perfetto trace-event JSON
 * (object form). One track per thread (pid/tid): off-CPU intervals as
 * complete events split into "blocked S|D|..." and "runnable (runq)",
 * samples as thread-scoped instant events named by their leaf, optionally
 * "running" slices between intervals, flow events waker -> wakee, and
 * trigger marks as global instant events.
 * Times are microseconds (with ns fractions) from the profile start;
 * events of each track are written in time order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/util.h"
#include "trace_event.h"

enum tev_type {
	TEV_RUNNING,	/* X between two intervals of the thread */
	TEV_BLOCKED,	/* X switch-out -> wakeup */
	TEV_RUNQ,	/* X wakeup (or switch-out) -> switch-in */
	TEV_FLOW_OUT,	/* s on the waker's track at the wakeup */
	TEV_FLOW_IN,	/* f on the wakee's track at the wakeup */
	TEV_SAMPLE,	/* i */
	TEV_TRIGGER,	/* i, global scope: a flight-recorder trigger mark */
};

struct tev {
	int64_t ts;		/* ns from the profile start */
	uint64_t dur;		/* ns (X only) */
	uint32_t track;
	uint8_t type;
	uint32_t idx;		/* interval index, or sample stack */
	uint32_t thread;	/* thread id (samples, running) */
};

struct tev_buf {
	struct tev *v;
	size_t n, cap;
};

static int push(struct tev_buf *b, const struct tev *e)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 1024;
		struct tev *nv = realloc(b->v, nc * sizeof(*nv));

		if (!nv)
			return -1;
		b->v = nv;
		b->cap = nc;
	}
	b->v[b->n++] = *e;
	return 0;
}

/* Per track by time; at one instant longer slices (parents) first. */
static int cmp_tev(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void put_ts(FILE *f, const char *key, int64_t ns)
{
	fprintf(f, ",\"%s\":%lld.%03lld", key, (long long)(ns / 1000),
		(long long)(ns % 1000));
}

static void put_stack(struct profile *p, FILE *f, uint32_t leaf)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	int n = profile_stack_frames(p, leaf, frames), i;

	fputc('[', f);
	for (i = n - 1; i >= 0; i--) {
		const struct sym_frame *sf = symbolizer_frame(p->sym, frames[i]);

		if (i != n - 1)
			fputc(',', f);
		if (sf)
			cli_json_string(f, sf->label, sf->label_len);
		else
			fputs("\"?\"", f);
	}
	fputc(']', f);
}

/* The leaf's label (every byte: *@len) */
static const char *leaf_name(struct profile *p, uint32_t leaf, size_t *len)
{
	struct spulse_stack st;
	const struct sym_frame *sf;

	*len = 1;
	if (spulse_defs_stack(p->defs, leaf, &st) < 0)
		return "?";
	sf = symbolizer_frame(p->sym, st.frame);
	if (!sf)
		return "?";
	*len = sf->label_len;
	return sf->label;
}

static void put_thread_obj(struct profile *p, FILE *f, uint32_t id)
{
	struct spulse_thread t;

	if (spulse_defs_thread(p->defs, id, &t) < 0) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"comm\":", t.pid, t.tid);
	cli_json_string(f, t.comm, t.comm_len);
	fputc('}', f);
}

struct trig {
	struct spulse_trigger t;
	char *text;
};

struct ctx {
	struct profile *p;
	FILE *f;
	const struct spulse_offcpu *iv;
	const struct trig *trig;
	const uint64_t *keys;
	size_t ntracks;		/* track ntracks = the global track (0/0) */
	bool first;
};

static void begin_n(struct ctx *c, const char *ph, const char *name,
		    size_t len, uint32_t track)
{
	uint64_t k = track < c->ntracks ? c->keys[track] : 0;

	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
	fprintf(c->f, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"name\":", ph,
		(uint32_t)(k >> 32), (uint32_t)k);
	cli_json_string(c->f, name, len);
}

static void begin(struct ctx *c, const char *ph, const char *name,
		  uint32_t track)
{
	begin_n(c, ph, name, strlen(name), track);
}

static void write_event(struct ctx *c, const struct tev *e)
{
	const struct spulse_offcpu *v = e->type == TEV_SAMPLE ||
		e->type == TEV_RUNNING || e->type == TEV_TRIGGER ? NULL :
		&c->iv[e->idx];
	const char *st = v ? spulse_state_name(v->state) : NULL;
	char name[32];
	FILE *f = c->f;

	switch (e->type) {
	case TEV_RUNNING:
		begin(c, "X", "running", e->track);
		fputs(",\"cat\":\"oncpu\"", f);
		put_ts(f, "ts", e->ts);
		put_ts(f, "dur", (int64_t)e->dur);
		fputc('}', f);
		break;
	case TEV_BLOCKED:
		snprintf(name, sizeof(name), "blocked %s", st ? st : "?");
		begin(c, "X", name, e->track);
		fputs(",\"cat\":\"offcpu\"", f);
		put_ts(f, "ts", e->ts);
		put_ts(f, "dur", (int64_t)e->dur);
		fprintf(f, ",\"args\":{\"state\":\"%s\",\"cpu_out\":%u,"
			"\"blocked_ns\":%llu,\"runq_ns\":%llu,\"stack\":",
			st ? st : "?", v->cpu_out,
			(unsigned long long)v->blocked_ns,
			(unsigned long long)v->runq_ns);
		put_stack(c->p, f, v->stack);
		fputs(",\"waker\":", f);
		if (v->waker_thread == SPULSE_NONE) {
			fputs("null", f);
		} else {
			put_thread_obj(c->p, f, v->waker_thread);
			fprintf(f, ",\"waker_cpu\":%u,\"waker_stack\":",
				v->waker_cpu);
			put_stack(c->p, f, v->waker_stack);
		}
		fputs("}}", f);
		break;
	case TEV_RUNQ:
		begin(c, "X", "runnable (runq)", e->track);
		fputs(",\"cat\":\"offcpu\"", f);
		put_ts(f, "ts", e->ts);
		put_ts(f, "dur", (int64_t)e->dur);
		fprintf(f, ",\"args\":{\"state\":\"%s\",\"cpu_in\":%u,"
			"\"runq_ns\":%llu", st ? st : "?", v->cpu_in,
			(unsigned long long)v->runq_ns);
		if (v->state == SPULSE_STATE_RUNNABLE) {
			fputs(",\"stack\":", f);
			put_stack(c->p, f, v->stack);
		}
		fputs("}}", f);
		break;
	case TEV_FLOW_OUT:
	case TEV_FLOW_IN:
		begin(c, e->type == TEV_FLOW_OUT ? "s" : "f", "wakeup",
		      e->track);
		fprintf(f, ",\"cat\":\"wakeup\",\"id\":%u", e->idx + 1);
		if (e->type == TEV_FLOW_IN)
			fputs(",\"bp\":\"e\"", f);
		put_ts(f, "ts", e->ts);
		fputc('}', f);
		break;
	case TEV_TRIGGER: {
		const struct trig *tg = &c->trig[e->idx];
		const char *reason = spulse_trigger_reason_name(tg->t.reason);

		snprintf(name, sizeof(name), "trigger %s",
			 reason ? reason : "?");
		begin(c, "i", name, e->track);
		fputs(",\"cat\":\"trigger\",\"s\":\"g\"", f);
		put_ts(f, "ts", e->ts);
		fprintf(f, ",\"args\":{\"reason\":\"%s\",\"seq\":%u,"
			"\"value_ns\":%llu,\"threshold_ns\":%llu,"
			"\"window_start_ns\":%llu,\"window_end_ns\":%llu,"
			"\"text\":", reason ? reason : "?", tg->t.seq,
			(unsigned long long)tg->t.value_ns,
			(unsigned long long)tg->t.threshold_ns,
			(unsigned long long)tg->t.window_start_ns,
			(unsigned long long)tg->t.window_end_ns);
		cli_json_string(f, tg->text, tg->t.text_len);
		fputs("}}", f);
		break;
	}
	default: {
		size_t ln;
		const char *leaf = leaf_name(c->p, e->idx, &ln);

		begin_n(c, "i", leaf, ln, e->track);
		fputs(",\"cat\":\"sample\",\"s\":\"t\"", f);
		put_ts(f, "ts", e->ts);
		fputs(",\"args\":{\"stack\":", f);
		put_stack(c->p, f, e->idx);
		fputs("}}", f);
	}
	}
}

static void name_event(struct ctx *c, const char *what, uint32_t track,
		       uint32_t thread)
{
	struct spulse_thread t;

	if (spulse_defs_thread(c->p->defs, thread, &t) < 0)
		return;
	begin(c, "M", what, track);
	fputs(",\"args\":{\"name\":", c->f);
	cli_json_string(c->f, t.comm, t.comm_len);
	fputs("}}", c->f);
}

/*
 * thread_name for every track with events; process_name once per process
 * with events, from its main thread (tid = pid) when that is defined, else
 * from its first thread with events. Tracks are sorted by pid, then tid.
 */
static void write_metadata(struct ctx *c, size_t ntracks,
			   const uint32_t *latest, const uint8_t *used)
{
	size_t i, j;

	for (i = 0; i < ntracks; i = j) {
		uint32_t pid = (uint32_t)(c->keys[i] >> 32);
		size_t named = SIZE_MAX;

		for (j = i; j < ntracks && (uint32_t)(c->keys[j] >> 32) == pid;
		     j++) {
			if ((uint32_t)c->keys[j] == pid)
				named = j;
			else if (named == SIZE_MAX && used[j])
				named = j;
		}
		for (j = i; j < ntracks && (uint32_t)(c->keys[j] >> 32) == pid;
		     j++) {
			if (!used[j])
				continue;
			if (named != SIZE_MAX) {
				/* on a track with events: a used one */
				name_event(c, "process_name", (uint32_t)j,
					   latest[named]);
				named = SIZE_MAX;
			}
			name_event(c, "thread_name", (uint32_t)j, latest[j]);
		}
	}
}

static const struct spulse_offcpu *sort_iv;
static const uint32_t *sort_map;

static int cmp_iv(const void *a, const void *b)
{
	const struct spulse_offcpu *x = &sort_iv[*(const size_t *)a];
	const struct spulse_offcpu *y = &sort_iv[*(const size_t *)b];
	uint32_t tx = sort_map[x->thread], ty = sort_map[y->thread];

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* "running" from each switch-in to the thread's next switch-out. */
static int add_running(struct tev_buf *b, const struct spulse_offcpu *iv,
		       size_t n, const uint32_t *map)
{
	size_t *order = malloc((n ? n : 1) * sizeof(*order)), i;

	if (!order)
		return -1;
	for (i = 0; i < n; i++)
		order[i] = i;
	sort_iv = iv;
	sort_map = map;
	if (n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(order, n, sizeof(*order), cmp_iv);
	for (i = 1; i < n; i++) {
		const struct spulse_offcpu *u = &iv[order[i - 1]];
		const struct spulse_offcpu *v = &iv[order[i]];
		int64_t in = u->time_ns + (int64_t)(u->blocked_ns + u->runq_ns);
		struct tev r = { .type = TEV_RUNNING,
				 .track = map[v->thread], .ts = in,
				 .thread = v->thread };

		if (map[u->thread] != map[v->thread] || in >= v->time_ns)
			continue;
		r.dur = (uint64_t)(v->time_ns - in);
		if (push(b, &r) < 0) {
			free(order);
			return -1;
		}
	}
	free(order);
	return 0;
}

/* Trigger marks (copied: their text lives only as long as the record). */
static int collect_triggers(struct profile *p, struct tev_buf *b,
			    struct trig **out, size_t *nout, uint32_t track)
{
	struct spulse_record rec;
	struct trig *v = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	*nout = 0;
	if (!p->info->triggers)
		return 0;
	rc = spulse_replay_rewind(p->replay);
	while (rc >= 0 && (rc = spulse_replay_next_record(p->replay, &rec)) > 0) {
		struct tev e = { .type = TEV_TRIGGER, .track = track };
		struct trig *nv;

		if (rec.tag != SPULSE_TAG_EXT || rec.ext_kind != SPULSE_EXT_TRIGGER)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n].t = rec.u.trigger;
		/* every byte, NUL bytes included (not strndup) */
		v[n].text = malloc(rec.u.trigger.text_len + 1);
		if (v[n].text) {
			memcpy(v[n].text, rec.u.trigger.text,
			       rec.u.trigger.text_len);
			v[n].text[rec.u.trigger.text_len] = 0;
		}
		v[n].t.text = NULL;
		if (!v[n].text)
			break;
		e.ts = rec.u.trigger.time_ns;
		e.idx = (uint32_t)n++;
		if (push(b, &e) < 0)
			break;
	}
	*out = v;
	*nout = n;
	if (rc != 0)
		return -1;
	return spulse_replay_rewind(p->replay) < 0 ? -1 : 0;
}

static int collect(struct profile *p, struct tev_buf *b,
		   const struct spulse_offcpu *iv, size_t n,
		   const uint32_t *map, bool running)
{
	struct spulse_sample s;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		const struct spulse_offcpu *v = &iv[i];
		struct tev e = { .track = map[v->thread], .idx = (uint32_t)i,
				 .thread = v->thread };

		if (v->blocked_ns) {
			e.type = TEV_BLOCKED;
			e.ts = v->time_ns;
			e.dur = v->blocked_ns;
			if (push(b, &e) < 0)
				return -1;
		}
		e.type = TEV_RUNQ;
		e.ts = v->time_ns + (int64_t)v->blocked_ns;
		e.dur = v->runq_ns;
		if ((v->runq_ns || !v->blocked_ns) && push(b, &e) < 0)
			return -1;
		if (v->waker_thread != SPULSE_NONE) {
			e.dur = 0;
			e.type = TEV_FLOW_IN;
			if (push(b, &e) < 0)
				return -1;
			e.type = TEV_FLOW_OUT;
			e.track = map[v->waker_thread];
			e.thread = v->waker_thread;
			if (push(b, &e) < 0)
				return -1;
		}
	}
	if (running && add_running(b, iv, n, map) < 0)
		return -1;
	while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
		struct tev e = { .type = TEV_SAMPLE, .ts = s.time_ns,
				 .idx = s.stack, .thread = s.thread };

		if (!profile_wants(p, &s))
			continue;
		e.track = map[s.thread];
		if (push(b, &e) < 0)
			return -1;
	}
	return rc < 0 ? rc : 0;
}

int export_trace_event(struct profile *p, FILE *f, bool running)
{
	struct spulse_offcpu *iv = NULL;
	struct trig *trig = NULL;
	size_t ntrig = 0;
	struct tev_buf b = { 0 };
	uint64_t *keys = NULL;
	uint32_t *map = NULL, *latest = NULL;
	uint8_t *used = NULL;
	size_t n = 0, ntracks = 0, i;
	struct ctx c = { .p = p, .f = f, .first = true };
	int rc;

	rc = profile_load_offcpu(p, &iv, &n);
	if (rc != EXIT_OK)
		return rc;
	profile_note_no_offcpu(p);
	rc = EXIT_INVALID;
	if (profile_thread_groups(p, &keys, &ntracks, &map, &latest) < 0)
		goto oom;
	if (collect_triggers(p, &b, &trig, &ntrig, (uint32_t)ntracks) < 0 ||
	    collect(p, &b, iv, n, map, running) < 0)
		goto oom;
	if (b.n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(b.v, b.n, sizeof(*b.v), cmp_tev);
	used = calloc(ntracks + 1, 1);
	if (!used)
		goto oom;
	for (i = 0; i < b.n; i++)
		used[b.v[i].track] = 1;
	c.iv = iv;
	c.trig = trig;
	c.keys = keys;
	c.ntracks = ntracks;
	fputs("{\"traceEvents\":[", f);
	write_metadata(&c, ntracks, latest, used);
	for (i = 0; i < b.n; i++)
		write_event(&c, &b.v[i]);
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"file\":", f);
	cli_json_string(f, p->file, strlen(p->file));
	fprintf(f, ",\"start_us\":%llu,\"clock\":\"us from start_us\","
		"\"intervals\":%zu,\"triggers\":%zu}}\n",
		(unsigned long long)p->info->start_us, n, ntrig);
	rc = ferror(f) ? EXIT_INVALID : EXIT_OK;
	goto out;
oom:
	fprintf(stderr, "%s: out of memory or unreadable samples\n", p->file);
out:
	free(b.v);
	free(iv);
	for (i = 0; i < ntrig; i++)
		free(trig[i].text);
	free(trig);
	free(keys);
	free(map);
	free(latest);
	free(used);
	return rc;
}
