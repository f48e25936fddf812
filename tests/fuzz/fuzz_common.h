/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the libFuzzer targets: a deterministic PRNG seeded from
 * the input (for chunk sizes), a memfd holding bytes, and the Snapshot
 * reference result every other reader is cross-checked against: samples
 * (with their cpu), off-CPU intervals, triggers, and the info counts.
 */
#ifndef SPULSE_FUZZ_COMMON_H
#define SPULSE_FUZZ_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libspulse.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant failed: %s\n", \
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

struct fz_trigger {
	struct spulse_trigger t;
	char text[SPULSE_MAX_TRIGGER_TEXT + 1];
};

struct fz_ref {
	/* the whole input is shorter than the header: Snapshot and Replay
	 * fail at its end, Stream and Tail wait for more (FORMAT.md 6) */
	bool short_header;
	int ret;
	struct spulse_error err;
	struct spulse_info info;
	struct spulse_sample *samples;
	uint64_t n;
	struct spulse_offcpu *offcpu;	/* intervals (before the error) */
	uint64_t noff;
	struct fz_trigger *triggers;
	uint64_t ntrig;
	uint64_t cpu_records, ext_skipped;	/* ext records seen by Stream */
	uint64_t identities, thread_sources;	/* kinds 4 and 5 seen by Stream */
	uint64_t ident_hash;		/* of every identity's fields, in order */
};

/* FNV-1a over an identity's fields (readers must agree on them). */
static inline uint64_t fz_ident_hash(uint64_t h, const struct spulse_identity *id)
{
	const char *s[4] = { id->host, id->machine_id, id->boot_id, id->kernel };
	size_t i, k;

	h = (h ^ id->source) * 0x100000001b3ULL;
	h = (h ^ id->start_us) * 0x100000001b3ULL;
	for (i = 0; i < 16; i++)
		h = (h ^ id->recording_id[i]) * 0x100000001b3ULL;
	for (k = 0; k < 4; k++) {
		for (i = 0; s[k][i]; i++)
			h = (h ^ (unsigned char)s[k][i]) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h;
}

static inline void *fz_grow(void *p, uint64_t n, size_t size)
{
	if (n && (n & (n - 1)) == 0) {
		p = realloc(p, 2 * n * size);
		CHECK(p);
	} else if (!n) {
		p = malloc(size);
		CHECK(p);
	}
	return p;
}

static inline void fz_same_offcpu(const struct spulse_offcpu *a,
				  const struct spulse_offcpu *b)
{
	CHECK(a->time_ns == b->time_ns && a->thread == b->thread &&
	      a->stack == b->stack && a->state == b->state &&
	      a->cpu_out == b->cpu_out && a->cpu_in == b->cpu_in &&
	      a->blocked_ns == b->blocked_ns && a->runq_ns == b->runq_ns &&
	      a->waker_thread == b->waker_thread &&
	      a->waker_stack == b->waker_stack && a->waker_cpu == b->waker_cpu);
}

static inline void fz_same_trigger(const struct fz_trigger *a,
				   const struct spulse_trigger *b)
{
	CHECK(a->t.time_ns == b->time_ns && a->t.reason == b->reason &&
	      a->t.seq == b->seq && a->t.value_ns == b->value_ns &&
	      a->t.threshold_ns == b->threshold_ns &&
	      a->t.window_start_ns == b->window_start_ns &&
	      a->t.window_end_ns == b->window_end_ns &&
	      a->t.text_len == b->text_len);
	CHECK(b->text[b->text_len] == '\0');
	CHECK(!memcmp(a->text, b->text, b->text_len));
}

/* The rules of FORMAT.md 3.10 on a decoded interval. */
static inline void fz_valid_offcpu(const struct spulse_offcpu *iv,
				   uint64_t nthreads, uint64_t nstacks)
{
	CHECK(iv->time_ns >= 0);
	CHECK(iv->thread < nthreads && iv->stack < nstacks);
	CHECK(iv->state <= SPULSE_STATE_MAX);
	CHECK(iv->cpu_out < SPULSE_MAX_CPU && iv->cpu_in < SPULSE_MAX_CPU);
	CHECK(iv->blocked_ns + iv->runq_ns >= iv->blocked_ns);
	CHECK(iv->blocked_ns + iv->runq_ns <= (uint64_t)(INT64_MAX - iv->time_ns));
	if (iv->waker_thread == SPULSE_NONE) {
		CHECK(iv->waker_stack == SPULSE_NONE &&
		      iv->waker_cpu == SPULSE_NONE);
	} else {
		CHECK(iv->state != SPULSE_STATE_RUNNABLE);
		CHECK(iv->waker_thread < nthreads && iv->waker_stack < nstacks);
		CHECK(iv->waker_cpu < SPULSE_MAX_CPU);
	}
	if (iv->state == SPULSE_STATE_RUNNABLE)
		CHECK(iv->blocked_ns == 0);
}

/* Record what a record-yielding reader returned, into @r (reference). */
static inline void fz_ref_record(struct fz_ref *r, const struct spulse_record *rec)
{
	if (rec->tag != SPULSE_TAG_EXT) {
		CHECK(rec->ext_kind == 0);
		return;
	}
	CHECK(rec->ext_kind != 0);
	switch (rec->ext_kind) {
	case SPULSE_EXT_CPU:
		CHECK(rec->u.cpu.cpu < SPULSE_MAX_CPU);
		r->cpu_records++;
		break;
	case SPULSE_EXT_OFFCPU:
		r->offcpu = fz_grow(r->offcpu, r->noff, sizeof(*r->offcpu));
		r->offcpu[r->noff++] = rec->u.offcpu;
		break;
	case SPULSE_EXT_TRIGGER: {
		struct fz_trigger *t;

		CHECK(rec->u.trigger.text_len <= SPULSE_MAX_TRIGGER_TEXT);
		CHECK(rec->u.trigger.reason >= 1 &&
		      rec->u.trigger.reason <= SPULSE_TRIGGER_REASON_MAX);
		CHECK(rec->u.trigger.window_start_ns <= rec->u.trigger.window_end_ns);
		r->triggers = fz_grow(r->triggers, r->ntrig, sizeof(*r->triggers));
		t = &r->triggers[r->ntrig++];
		t->t = rec->u.trigger;
		memcpy(t->text, rec->u.trigger.text, rec->u.trigger.text_len + 1);
		t->t.text = t->text;
		break;
	}
	case SPULSE_EXT_IDENTITY:
		CHECK(rec->u.identity.source == r->identities);
		r->identities++;
		r->ident_hash = fz_ident_hash(r->ident_hash, &rec->u.identity);
		CHECK(rec->u.identity.source < SPULSE_MAX_SOURCES);
		CHECK(strlen(rec->u.identity.host) <= SPULSE_MAX_HOST);
		CHECK(strlen(rec->u.identity.machine_id) <= SPULSE_MAX_MACHINE_ID);
		CHECK(strlen(rec->u.identity.boot_id) <= SPULSE_MAX_BOOT_ID);
		CHECK(strlen(rec->u.identity.kernel) <= SPULSE_MAX_KERNEL);
		CHECK(rec->u.identity.start_us <= SPULSE_MAX_START_US);
		break;
	case SPULSE_EXT_THREAD_SOURCE:
		CHECK(rec->u.thread_source.source < r->identities);
		r->thread_sources++;
		break;
	default:
		CHECK(rec->ext_kind > SPULSE_EXT_KIND_MAX_KNOWN);
		CHECK(rec->u.ext_unknown.kind == rec->ext_kind);
		CHECK(rec->u.ext_unknown.len <= SPULSE_EXT_MAX_LEN);
		r->ext_skipped++;
		break;
	}
}

/* Another record-yielding reader agrees with the reference so far. */
struct fz_pos {
	uint64_t ns, noff, ntrig, ncpu, nskip, nident, nts;
	uint64_t ident_hash;
};

static inline void fz_check_record(const struct fz_ref *r, struct fz_pos *p,
				   const struct spulse_record *rec);

static inline uint64_t fz_seed(const uint8_t *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h | 1;
}

static inline uint64_t fz_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/*
 * Stream fed everything at once: the samples before the first error (or all
 * of them), which incremental readers may legitimately return.
 */
static inline void fz_stream_prefix(const uint8_t *p, size_t len,
				    struct fz_ref *r)
{
	struct spulse_stream *st;
	struct spulse_record rec;
	struct spulse_error err;
	size_t cap = 16;

	r->samples = malloc(cap * sizeof(*r->samples));
	CHECK(r->samples);
	CHECK(spulse_stream_new(NULL, &st) == 0);
	CHECK(spulse_stream_feed(st, p, len) == 0);
	while (spulse_stream_next(st, &rec, &err) == 1) {
		fz_ref_record(r, &rec);
		if (rec.tag != SPULSE_TAG_SAMPLE)
			continue;
		if (r->n == cap) {
			cap *= 2;
			r->samples = realloc(r->samples, cap * sizeof(*r->samples));
			CHECK(r->samples);
		}
		r->samples[r->n++] = rec.u.sample;
	}
	spulse_stream_free(st);
}

/*
 * Reference: the outcome of the Snapshot of the same bytes; samples are the
 * Snapshot's (equal to the Stream's) or, on error, the Stream's samples
 * before the error.
 */
static inline void fz_reference(const uint8_t *p, size_t len, struct fz_ref *r)
{
	struct spulse_snapshot *s;
	struct spulse_sample sm;
	struct spulse_offcpu iv;
	struct spulse_trigger tr;
	uint64_t i;

	memset(r, 0, sizeof(*r));
	fz_stream_prefix(p, len, r);
	r->ret = spulse_snapshot_open_mem(p, len, NULL, &s, &r->err);
	if (r->ret) {
		CHECK(r->ret == -EBADMSG);
		CHECK(s == NULL);
		if (strstr(r->err.msg, "inside the stream header")) {
			CHECK(r->err.offset == len);
			r->short_header = true;
			return;
		}
		CHECK(r->err.offset < len || len == 0);
		return;
	}
	r->info = *spulse_snapshot_info(s);
	CHECK(spulse_snapshot_sample_count(s) == r->n);
	CHECK(r->n == r->info.samples);
	/* the Snapshot's intervals and triggers are the Stream's */
	CHECK(r->info.offcpu == r->noff && r->info.triggers == r->ntrig);
	CHECK(r->info.cpu_records == r->cpu_records);
	CHECK(r->info.ext_skipped == r->ext_skipped);
	/* identities: the Snapshot's definitions are the Stream's records */
	CHECK(r->info.identities == r->identities);
	{
		const struct spulse_defs *d = spulse_snapshot_defs(s);
		struct spulse_identity id;
		uint64_t h = 0;
		uint32_t k;

		CHECK(spulse_defs_identity_count(d) == r->identities);
		for (k = 0; k < r->identities; k++) {
			CHECK(spulse_defs_identity(d, k, &id) == 0);
			h = fz_ident_hash(h, &id);
		}
		CHECK(h == r->ident_hash);
		for (k = 0; k < r->info.threads; k++) {
			uint32_t src = spulse_defs_thread_source(d, k);

			CHECK(r->identities ? src < r->identities :
			      src == SPULSE_NONE);
		}
	}
	CHECK(spulse_snapshot_offcpu_count(s) == r->noff);
	CHECK(spulse_snapshot_trigger_count(s) == r->ntrig);
	for (i = 0; i < r->noff; i++) {
		CHECK(spulse_snapshot_offcpu(s, i, &iv) == 0);
		fz_same_offcpu(&r->offcpu[i], &iv);
		fz_valid_offcpu(&iv, r->info.threads, r->info.stacks);
	}
	CHECK(spulse_snapshot_offcpu(s, i, &iv) == -ERANGE);
	for (i = 0; i < r->ntrig; i++) {
		CHECK(spulse_snapshot_trigger(s, i, &tr) == 0);
		fz_same_trigger(&r->triggers[i], &tr);
	}
	CHECK(spulse_snapshot_trigger(s, i, &tr) == -ERANGE);
	CHECK(r->info.complete_bytes <= len);
	/*
	 * recovered exactly when bytes are left over (an empty file has
	 * none: nothing is cut, FORMAT.md section 6)
	 */
	CHECK(r->info.recovered_from_truncated_tail ==
	      (r->info.complete_bytes != len));
	for (i = 0; i < r->n; i++) {
		CHECK(spulse_snapshot_sample(s, i, &sm) == 0);
		CHECK(!memcmp(&sm, &r->samples[i], sizeof(sm)));
	}
	spulse_snapshot_close(s);
}

static inline void fz_ref_free(struct fz_ref *r)
{
	free(r->samples);
	free(r->offcpu);
	free(r->triggers);
}

static inline int fz_memfd(const uint8_t *p, size_t len, char *path, size_t n)
{
	int fd = memfd_create("spulse-fuzz", 0);

	CHECK(fd >= 0);
	if (len)
		CHECK(write(fd, p, len) == (ssize_t)len);
	snprintf(path, n, "/proc/self/fd/%d", fd);
	return fd;
}

static inline void fz_same_samples(const struct fz_ref *r, uint64_t i,
				   const struct spulse_sample *s)
{
	CHECK(i < r->n);
	CHECK(r->samples[i].time_ns == s->time_ns);
	CHECK(r->samples[i].thread == s->thread);
	CHECK(r->samples[i].stack == s->stack);
	CHECK(r->samples[i].cpu == s->cpu);
	CHECK(s->reserved == 0);
	CHECK(s->cpu == SPULSE_NONE || s->cpu < SPULSE_MAX_CPU);
}

static inline void fz_check_record(const struct fz_ref *r, struct fz_pos *p,
				   const struct spulse_record *rec)
{
	if (rec->tag == SPULSE_TAG_SAMPLE) {
		fz_same_samples(r, p->ns++, &rec->u.sample);
		return;
	}
	if (rec->tag != SPULSE_TAG_EXT) {
		CHECK(rec->ext_kind == 0);
		return;
	}
	switch (rec->ext_kind) {
	case SPULSE_EXT_CPU:
		p->ncpu++;
		break;
	case SPULSE_EXT_OFFCPU:
		CHECK(p->noff < r->noff);
		fz_same_offcpu(&r->offcpu[p->noff++], &rec->u.offcpu);
		break;
	case SPULSE_EXT_TRIGGER:
		CHECK(p->ntrig < r->ntrig);
		fz_same_trigger(&r->triggers[p->ntrig++], &rec->u.trigger);
		break;
	case SPULSE_EXT_IDENTITY:
		CHECK(rec->u.identity.source == p->nident);
		p->nident++;
		p->ident_hash = fz_ident_hash(p->ident_hash, &rec->u.identity);
		break;
	case SPULSE_EXT_THREAD_SOURCE:
		p->nts++;
		break;
	default:
		CHECK(rec->u.ext_unknown.kind == rec->ext_kind);
		p->nskip++;
		break;
	}
}

/* All of the reference seen (or, after an error, all before it). */
static inline void fz_pos_complete(const struct fz_ref *r, const struct fz_pos *p)
{
	CHECK(p->ns == r->n && p->noff == r->noff && p->ntrig == r->ntrig &&
	      p->ncpu == r->cpu_records && p->nskip == r->ext_skipped &&
	      p->nident == r->identities && p->nts == r->thread_sources &&
	      p->ident_hash == r->ident_hash);
}

#endif
