// SPDX-License-Identifier: MIT
/*
 * Flight recorder helpers: option parsing, the ring bound, and the cut of a
 * dump from generations (docs/DRAIN.md, "Flight recorder"). The ring itself
 * (rotation, retention, triggers) lives in flight_ring.c, next to the
 * Recorder it rotates.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"

void drain_flight_defaults(struct drain_flight_opts *f)
{
	memset(f, 0, sizeof(*f));
	f->post_ns = DRAIN_FLIGHT_POST_NS;
	f->min_gap_ns = DRAIN_FLIGHT_MIN_GAP_NS;
	f->max_dumps = DRAIN_FLIGHT_MAX_DUMPS;
}

/* decimal number (no sign, no exponent) times @scale; 0 or -EINVAL */
static int parse_scaled(const char *s, size_t n, double scale, uint64_t *ns)
{
	char buf[64], *end;
	double v;
	size_t i;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || end == buf)
		return -EINVAL;
	v *= scale;
	if (!(v >= 0) || v > 1e15)	/* ~11.6 days */
		return -EINVAL;
	*ns = (uint64_t)(v + 0.5);
	return 0;
}

int drain_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *u; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	size_t len = strlen(s), i, n;

	for (n = 0; n < len && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.');)
		n++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s + n, units[i].u))
			return parse_scaled(s, n, units[i].scale, ns);
	return -EINVAL;
}

int drain_parse_seconds(const char *s, uint64_t *ns)
{
	if (!drain_parse_duration(s, ns))
		return 0;
	return parse_scaled(s, strlen(s), 1e9, ns);
}

int drain_flight_offcpu_spec(const struct drain_flight_opts *f,
			     const struct spulse_offcpu *iv,
			     const struct spulse_thread *th)
{
	uint64_t off = iv->blocked_ns + iv->runq_ns;
	unsigned int i;

	if (th && f->hold_pid && th->pid == f->hold_pid && th->comm &&
	    f->hold_comm[0] && !strncmp(th->comm, f->hold_comm,
					sizeof(f->hold_comm)))
		return -1;	/* the recorder's child before its exec */
	for (i = 0; i < f->nspecs; i++) {
		const struct drain_trigger_spec *sp = &f->specs[i];
		uint64_t v;

		if (sp->reason == SPULSE_TRIGGER_OFFCPU)
			v = off;
		else if (sp->reason == SPULSE_TRIGGER_RUNQ)
			v = iv->runq_ns;
		else
			continue;
		if (v > sp->threshold_ns)
			return (int)i;
	}
	return -1;
}

static void fmt_dur(char *b, size_t n, uint64_t ns)
{
	if (ns && ns % 1000000000 == 0)
		snprintf(b, n, "%" PRIu64 "s", ns / 1000000000);
	else if (ns && ns % 1000000 == 0)
		snprintf(b, n, "%" PRIu64 "ms", ns / 1000000);
	else if (ns && ns % 1000 == 0)
		snprintf(b, n, "%" PRIu64 "us", ns / 1000);
	else
		snprintf(b, n, "%" PRIu64 "ns", ns);
}

int drain_trigger_parse(const char *s, struct drain_trigger_spec *out,
			char *msg, size_t msglen)
{
	static const struct { const char *name; uint8_t reason; } th[] = {
		{ "offcpu>", SPULSE_TRIGGER_OFFCPU },
		{ "runq>", SPULSE_TRIGGER_RUNQ },
	};
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!strcmp(s, "manual")) {
		out->reason = SPULSE_TRIGGER_MANUAL;
		snprintf(out->text, sizeof(out->text), "manual");
		return 0;
	}
	if (!strcmp(s, "signal") || !strcmp(s, "sigusr1") ||
	    !strcmp(s, "SIGUSR1")) {
		out->reason = SPULSE_TRIGGER_SIGNAL;
		snprintf(out->text, sizeof(out->text), "signal");
		return 0;
	}
	for (i = 0; i < sizeof(th) / sizeof(th[0]); i++) {
		size_t n = strlen(th[i].name);
		char d[24];

		if (strncmp(s, th[i].name, n))
			continue;
		if (drain_parse_duration(s + n, &out->threshold_ns) ||
		    !out->threshold_ns) {
			snprintf(msg, msglen, "bad trigger '%s': '%s' is not a "
				 "duration > 0 with a unit (ns, us, ms, s), "
				 "e.g. %s50ms", s, s + n, th[i].name);
			return -EINVAL;
		}
		out->reason = th[i].reason;
		fmt_dur(d, sizeof(d), out->threshold_ns);
		snprintf(out->text, sizeof(out->text), "%s%s", th[i].name, d);
		return 0;
	}
	snprintf(msg, msglen, "bad trigger '%s': want manual, signal, "
		 "offcpu>DUR or runq>DUR (DUR like 50ms, 200us, 1s)", s);
	return -EINVAL;
}

int drain_flight_option(struct drain_flight_opts *f, int code, const char *arg,
			char *msg, size_t msglen)
{
	unsigned long long v;
	char *end;

	switch (code) {
	case DRAIN_OPT_FLIGHT:
		if (drain_parse_seconds(arg, &f->seconds_ns) || !f->seconds_ns ||
		    f->seconds_ns > 86400ULL * 1000000000) {
			snprintf(msg, msglen, "bad --flight '%s': seconds, "
				 "> 0 and at most 86400", arg);
			return -EINVAL;
		}
		return 0;
	case DRAIN_OPT_TRIGGER:
		if (f->nspecs == DRAIN_MAX_TRIGGER_SPECS) {
			snprintf(msg, msglen, "at most %d --trigger options",
				 DRAIN_MAX_TRIGGER_SPECS);
			return -EINVAL;
		}
		if (drain_trigger_parse(arg, &f->specs[f->nspecs], msg, msglen))
			return -EINVAL;
		f->nspecs++;
		return 0;
	case DRAIN_OPT_POST:
	case DRAIN_OPT_MIN_GAP: {
		uint64_t *dst = code == DRAIN_OPT_POST ? &f->post_ns :
							 &f->min_gap_ns;

		if (drain_parse_seconds(arg, dst) ||
		    *dst > 86400ULL * 1000000000) {
			snprintf(msg, msglen, "bad --%s '%s': seconds >= 0",
				 code == DRAIN_OPT_POST ? "post" : "min-gap",
				 arg);
			return -EINVAL;
		}
		return 0;
	}
	case DRAIN_OPT_MAX_DUMPS:
	case DRAIN_OPT_GEN_BYTES:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || !v ||
		    (code == DRAIN_OPT_MAX_DUMPS && v > 999) ||
		    (code == DRAIN_OPT_GEN_BYTES &&
		     (v < 4096 || v > (1ULL << 40)))) {
			snprintf(msg, msglen, "bad --%s '%s': %s",
				 code == DRAIN_OPT_MAX_DUMPS ? "max-dumps" :
							       "gen-bytes", arg,
				 code == DRAIN_OPT_MAX_DUMPS ? "1 to 999" :
					"4096 to 2^40 bytes");
			return -EINVAL;
		}
		if (code == DRAIN_OPT_MAX_DUMPS)
			f->max_dumps = (unsigned int)v;
		else
			f->gen_bytes = v;
		return 0;
	}
	snprintf(msg, msglen, "unknown flight option");
	return -EINVAL;
}

int drain_flight_check(const struct drain_flight_opts *f, bool any_flight_opt,
		       char *msg, size_t msglen)
{
	if (any_flight_opt && !f->seconds_ns) {
		snprintf(msg, msglen, "--trigger, --post, --max-dumps, "
			 "--min-gap and --gen-bytes need --flight SECONDS");
		return -EINVAL;
	}
	return 0;
}

uint64_t drain_flight_gen_ns(const struct drain_flight_opts *f)
{
	uint64_t g = f->gen_ns ? f->gen_ns : f->seconds_ns / 2;

	return g ? g : 1;
}

unsigned int drain_flight_max_gens(const struct drain_flight_opts *f)
{
	uint64_t g = drain_flight_gen_ns(f);
	uint64_t n = (f->seconds_ns + f->post_ns + g - 1) / g + 2;

	return n > 100000 ? 100000 : (unsigned int)n;
}

uint64_t drain_flight_bound(const struct drain_flight_opts *f,
			    uint64_t modules)
{
	uint64_t cap = f->gen_bytes ? f->gen_bytes : DRAIN_FLIGHT_GEN_BYTES;

	return (uint64_t)drain_flight_max_gens(f) *
	       (cap + DRAIN_FLIGHT_ITEM_MAX + modules * SPULSE_MODULE_REC_MAX);
}

char *drain_dump_name(const char *out, unsigned int n)
{
	const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
	char *s;

	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : out))
		dot = out + strlen(out);
	if (asprintf(&s, "%.*s-%03u%s", (int)(dot - out), out, n, dot) < 0)
		return NULL;
	return s;
}

/* ---- cutting a dump ------------------------------------------------------ */

struct dmod {
	uint32_t pid, id;
	uint64_t start, end, off;
	char *path;
	uint8_t bid[SPULSE_MAX_BUILD_ID];
	uint32_t bid_len;
	bool active;
	size_t next;		/* next dump module of the same pid bucket */
};

/* gen id -> dump id (UINT32_MAX = not mapped) */
struct idv {
	uint32_t *v;
	size_t cap;
};

struct cut {
	struct spulse_recorder *rec;
	const struct spulse_defs *defs;	/* the generation being copied */
	struct dmod *mods;
	size_t nmods, capmods;
	size_t *bucket;		/* pid hash -> first module index, SIZE_MAX */
	size_t nbucket;
	struct idv gmod, gframe, gstack, gthread;
	struct drain_cut_stats st;
};

static uint32_t *idv_slot(struct idv *v, uint32_t id)
{
	if (id >= v->cap) {
		size_t cap = v->cap ? v->cap : 256;
		uint32_t *n;

		while (cap <= id)
			cap *= 2;
		n = realloc(v->v, cap * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + v->cap, 0xff, (cap - v->cap) * sizeof(*n));
		v->v = n;
		v->cap = cap;
	}
	return &v->v[id];
}

static void idv_reset(struct idv *v)
{
	if (v->v)
		memset(v->v, 0xff, v->cap * sizeof(*v->v));
}

static bool same_module(const struct dmod *d, const struct spulse_module *m)
{
	return d->pid == m->pid && d->start == m->start && d->end == m->end &&
	       d->off == m->file_offset && d->bid_len == m->build_id_len &&
	       !strcmp(d->path, m->path) &&
	       (!d->bid_len || !memcmp(d->bid, m->build_id, d->bid_len));
}

static size_t pid_bucket(const struct cut *c, uint32_t pid)
{
	return (pid * 2654435761u) & (c->nbucket - 1);
}

/* An active dump module with @m's content, or SIZE_MAX (walks @m's pid). */
static size_t find_module(const struct cut *c, const struct spulse_module *m)
{
	size_t i;

	if (!c->nbucket)
		return SIZE_MAX;
	for (i = c->bucket[pid_bucket(c, m->pid)]; i != SIZE_MAX;
	     i = c->mods[i].next)
		if (c->mods[i].active && same_module(&c->mods[i], m))
			return i;
	return SIZE_MAX;
}

/* Chain module @idx into its pid bucket (rehashing as the dump grows). */
static int hash_module(struct cut *c, size_t idx)
{
	size_t i, b;

	if (c->nmods > c->nbucket) {
		size_t nb = c->nbucket ? c->nbucket * 4 : 64;
		size_t *v = malloc(nb * sizeof(*v));

		if (!v)
			return -ENOMEM;
		free(c->bucket);
		c->bucket = v;
		c->nbucket = nb;
		for (i = 0; i < nb; i++)
			v[i] = SIZE_MAX;
		for (i = 0; i < c->nmods; i++) {
			if (i == idx)
				continue;
			b = pid_bucket(c, c->mods[i].pid);
			c->mods[i].next = c->bucket[b];
			c->bucket[b] = i;
		}
	}
	b = pid_bucket(c, c->mods[idx].pid);
	c->mods[idx].next = c->bucket[b];
	c->bucket[b] = idx;
	return 0;
}

static int define_module(struct cut *c, const struct spulse_module *m,
			 size_t *idx)
{
	struct dmod *d;
	int ret;

	if (c->nmods == c->capmods) {
		size_t cap = c->capmods ? c->capmods * 2 : 32;
		struct dmod *v = realloc(c->mods, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->mods = v;
		c->capmods = cap;
	}
	d = &c->mods[c->nmods];
	memset(d, 0, sizeof(*d));
	d->path = strdup(m->path);
	if (!d->path)
		return -ENOMEM;
	ret = spulse_rec_module(c->rec, m->pid, m->start, m->end,
				m->file_offset, m->path, m->build_id,
				m->build_id_len, &d->id);
	if (ret < 0) {
		free(d->path);
		return ret;
	}
	d->pid = m->pid;
	d->start = m->start;
	d->end = m->end;
	d->off = m->file_offset;
	d->bid_len = m->build_id_len;
	if (d->bid_len)
		memcpy(d->bid, m->build_id, d->bid_len);
	d->active = true;
	*idx = c->nmods++;
	c->st.modules++;
	return hash_module(c, *idx);
}

/* Dump module for generation module @gm, active now (defined if needed). */
static int need_module(struct cut *c, uint32_t gm, size_t *idx)
{
	uint32_t *slot = idv_slot(&c->gmod, gm);
	struct spulse_module m;
	size_t i;
	int ret;

	if (!slot)
		return -ENOMEM;
	if (*slot != UINT32_MAX && c->mods[*slot].active) {
		*idx = *slot;
		return 0;
	}
	ret = spulse_defs_module(c->defs, gm, &m);
	if (ret < 0)
		return ret;
	i = find_module(c, &m);
	if (i == SIZE_MAX) {
		ret = define_module(c, &m, &i);
		if (ret < 0)
			return ret;
	}
	*slot = (uint32_t)i;
	*idx = i;
	return 0;
}

static int map_frame(struct cut *c, uint32_t gf, uint32_t *out)
{
	uint32_t *slot = idv_slot(&c->gframe, gf);
	struct spulse_frame f;
	struct spulse_module m;
	size_t mi;
	int ret;

	if (!slot)
		return -ENOMEM;
	if (*slot != UINT32_MAX) {
		*out = *slot;
		return 0;
	}
	ret = spulse_defs_frame(c->defs, gf, &f);
	if (ret < 0)
		return ret;
	switch (f.kind) {
	case SPULSE_FRAME_MODULE:
		ret = need_module(c, f.module, &mi);
		if (ret < 0)
			return ret;
		ret = spulse_rec_frame_module(c->rec, c->mods[mi].id, f.addr,
					      out);
		if (ret < 0)
			return ret;
		/*
		 * A frame defined earlier may name a module retired since:
		 * define it while active, then retire it again.
		 */
		ret = spulse_defs_module(c->defs, f.module, &m);
		if (ret < 0)
			return ret;
		if (!m.active) {
			ret = spulse_rec_module_deactivate(c->rec,
							   c->mods[mi].id);
			if (ret < 0)
				return ret;
			c->mods[mi].active = false;
		}
		break;
	case SPULSE_FRAME_USER:
	case SPULSE_FRAME_KERNEL:
		ret = spulse_rec_frame_abs(c->rec, f.kind, f.addr, out);
		break;
	case SPULSE_FRAME_TRUNCATED:
		ret = spulse_rec_frame_truncated(c->rec, out);
		break;
	default:
		return -EBADMSG;
	}
	if (ret < 0)
		return ret;
	*slot = *out;
	return 0;
}

static int map_stack(struct cut *c, uint32_t leaf, uint32_t *out)
{
	uint32_t chain[SPULSE_MAX_DEPTH + 1], frames[SPULSE_MAX_DEPTH + 1];
	uint32_t n = 0, parent = SPULSE_NONE, id = leaf, *slot;
	int ret;

	for (;;) {
		struct spulse_stack st;

		slot = idv_slot(&c->gstack, id);
		if (!slot)
			return -ENOMEM;
		if (*slot != UINT32_MAX) {
			parent = *slot;
			break;
		}
		if (n > SPULSE_MAX_DEPTH)
			return -EBADMSG;
		ret = spulse_defs_stack(c->defs, id, &st);
		if (ret < 0)
			return ret;
		chain[n] = id;
		frames[n++] = st.frame;
		if (st.parent == SPULSE_NONE)
			break;
		id = st.parent;
	}
	while (n) {
		uint32_t gf, g;

		n--;
		ret = map_frame(c, frames[n], &gf);
		if (ret < 0)
			return ret;
		ret = spulse_rec_stack(c->rec, parent, gf, &g);
		if (ret < 0)
			return ret;
		slot = idv_slot(&c->gstack, chain[n]);
		if (!slot)
			return -ENOMEM;
		*slot = g;
		parent = g;
	}
	*out = parent;
	return 0;
}

static int map_thread(struct cut *c, uint32_t gt, uint32_t *out)
{
	uint32_t *slot = idv_slot(&c->gthread, gt);
	struct spulse_thread th;
	int ret;

	if (!slot)
		return -ENOMEM;
	if (*slot == UINT32_MAX) {
		ret = spulse_defs_thread(c->defs, gt, &th);
		if (ret < 0)
			return ret;
		ret = spulse_rec_thread(c->rec, th.pid, th.tid, th.comm, slot);
		if (ret < 0)
			return ret;
	}
	*out = *slot;
	return 0;
}

/* Copy the records of one generation that fall into [ws, we]. */
static int cut_one(struct cut *c, int fd, int64_t ws, int64_t we,
		   struct spulse_error *err)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_replay *r;
	struct spulse_record rec;
	bool started = false, ended = false;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = spulse_replay_open(path, &ro, &r, err);
	if (ret < 0)
		return ret;
	c->defs = spulse_replay_defs(r);
	idv_reset(&c->gmod);
	idv_reset(&c->gframe);
	idv_reset(&c->gstack);
	idv_reset(&c->gthread);
	while ((ret = spulse_replay_next_record(r, &rec)) == 1) {
		int64_t t;
		uint32_t *slot;
		size_t i;
		bool any;

		switch (rec.tag) {
		case SPULSE_TAG_MODULE:
			/* same content still active in the dump: the same module */
			i = find_module(c, &rec.u.module);
			if (i != SIZE_MAX) {
				slot = idv_slot(&c->gmod, rec.u.module.id);
				if (!slot) {
					ret = -ENOMEM;
					goto out;
				}
				*slot = (uint32_t)i;
			}
			break;
		case SPULSE_TAG_MODULE_DEACTIVATE:
			slot = idv_slot(&c->gmod, rec.u.module_deactivate.module);
			if (!slot) {
				ret = -ENOMEM;
				goto out;
			}
			if (*slot != UINT32_MAX && c->mods[*slot].active) {
				ret = spulse_rec_module_deactivate(c->rec,
							c->mods[*slot].id);
				if (ret < 0)
					goto out;
				c->mods[*slot].active = false;
			}
			break;
		case SPULSE_TAG_PROCESS_DEACTIVATE:
			any = false;
			for (i = c->nbucket ? c->bucket[pid_bucket(c,
					rec.u.process_deactivate.pid)] : SIZE_MAX;
			     i != SIZE_MAX; i = c->mods[i].next)
				if (c->mods[i].active &&
				    c->mods[i].pid == rec.u.process_deactivate.pid) {
					c->mods[i].active = false;
					any = true;
				}
			if (any) {
				ret = spulse_rec_process_deactivate(c->rec,
						rec.u.process_deactivate.pid);
				if (ret < 0)
					goto out;
			}
			break;
		case SPULSE_TAG_PYTHON:
			if (started && !ended) {
				ret = spulse_rec_python(c->rec, rec.u.python.pid,
					rec.u.python.state == SPULSE_PYTHON_ENTER);
				if (ret < 0)
					goto out;
			}
			break;
		case SPULSE_TAG_SAMPLE: {
			uint32_t th, st;

			t = rec.u.sample.time_ns;
			if (t < ws || t > we) {
				ended = ended || t > we;
				break;
			}
			started = true;
			ret = map_thread(c, rec.u.sample.thread, &th);
			if (!ret)
				ret = map_stack(c, rec.u.sample.stack, &st);
			if (!ret)
				ret = rec.u.sample.cpu == SPULSE_NONE ?
				      spulse_rec_sample(c->rec, t, th, st) :
				      spulse_rec_sample_cpu(c->rec, t, th, st,
							    rec.u.sample.cpu);
			if (ret < 0)
				goto out;
			c->st.samples++;
			break;
		}
		case SPULSE_TAG_EXT:
			if (rec.ext_kind == SPULSE_EXT_OFFCPU) {
				struct spulse_offcpu iv = rec.u.offcpu;

				t = iv.time_ns + (int64_t)(iv.blocked_ns +
							   iv.runq_ns);
				if (t < ws || t > we) {
					ended = ended || t > we;
					break;
				}
				started = true;
				ret = map_thread(c, iv.thread, &iv.thread);
				if (!ret)
					ret = map_stack(c, iv.stack, &iv.stack);
				if (!ret && iv.waker_thread != SPULSE_NONE) {
					ret = map_thread(c, iv.waker_thread,
							 &iv.waker_thread);
					if (!ret)
						ret = map_stack(c, iv.waker_stack,
								&iv.waker_stack);
				}
				if (!ret)
					ret = spulse_rec_offcpu(c->rec, &iv);
				if (ret < 0)
					goto out;
				c->st.offcpu++;
			} else if (rec.ext_kind == SPULSE_EXT_TRIGGER) {
				t = rec.u.trigger.time_ns;
				if (t < ws || t > we)
					break;
				ret = spulse_rec_trigger(c->rec, &rec.u.trigger);
				if (ret < 0)
					goto out;
				c->st.triggers++;
			}
			break;
		default:
			break;	/* definitions: copied on demand */
		}
	}
out:
	if (ret < 0 && !err->msg[0])
		snprintf(err->msg, sizeof(err->msg), "copying generation: %s",
			 strerror(-ret));
	spulse_replay_close(r);
	c->defs = NULL;
	return ret < 0 ? ret : 0;
}

int drain_cut(const int *fds, size_t nfds, const char *path, uint64_t start_us,
	      uint64_t interval_us, int64_t ws, int64_t we,
	      const struct spulse_trigger *mark,
	      const struct spulse_identity *id, struct drain_cut_stats *st,
	      struct spulse_error *err)
{
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	struct cut c;
	size_t i;
	int ret, cret;

	memset(&c, 0, sizeof(c));
	memset(err, 0, sizeof(*err));
	ro.start_us = start_us;
	ro.interval_us = interval_us;
	ro.truncate = true;
	ret = spulse_recorder_open(path, &ro, &c.rec);
	if (ret < 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
			 strerror(-ret));
		return ret;
	}
	ret = id ? spulse_rec_identity(c.rec, id, NULL) : 0;
	if (ret < 0)
		snprintf(err->msg, sizeof(err->msg), "identity record: %s",
			 strerror(-ret));
	if (!ret) {
		ret = spulse_rec_trigger(c.rec, mark);
		if (ret < 0)
			snprintf(err->msg, sizeof(err->msg),
				 "trigger record: %s", strerror(-ret));
	}
	for (i = 0; !ret && i < nfds; i++)
		ret = cut_one(&c, fds[i], ws, we, err);
	cret = spulse_recorder_close(c.rec);
	if (!ret && cret < 0) {
		ret = cret;
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
			 strerror(-ret));
	}
	for (i = 0; i < c.nmods; i++)
		free(c.mods[i].path);
	free(c.mods);
	free(c.bucket);
	free(c.gmod.v);
	free(c.gframe.v);
	free(c.gstack.v);
	free(c.gthread.v);
	if (st)
		*st = c.st;
	err->code = ret;
	return ret;
}
