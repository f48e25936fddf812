/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the libFuzzer targets: a deterministic PRNG seeded from
 * the input (for chunk sizes), a memfd holding bytes, and the Snapshot
 * reference result every other reader is cross-checked against.
 */
#ifndef SPULSE_FUZZ_COMMON_H
#define SPULSE_FUZZ_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

struct fz_ref {
	int ret;
	struct spulse_error err;
	struct spulse_info info;
	struct spulse_sample *samples;
	uint64_t n;
};

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
	uint64_t i;

	memset(r, 0, sizeof(*r));
	fz_stream_prefix(p, len, r);
	r->ret = spulse_snapshot_open_mem(p, len, NULL, &s, &r->err);
	if (r->ret) {
		CHECK(r->ret == -EBADMSG);
		CHECK(r->err.offset < len || len == 0);
		CHECK(s == NULL);
		return;
	}
	r->info = *spulse_snapshot_info(s);
	CHECK(spulse_snapshot_sample_count(s) == r->n);
	CHECK(r->n == r->info.samples);
	CHECK(r->info.complete_bytes <= len);
	/* recovered exactly when bytes are left over (or no header at all) */
	CHECK(r->info.recovered_from_truncated_tail ==
	      (r->info.complete_bytes != len || len == 0));
	for (i = 0; i < r->n; i++) {
		CHECK(spulse_snapshot_sample(s, i, &sm) == 0);
		CHECK(!memcmp(&sm, &r->samples[i], sizeof(sm)));
	}
	spulse_snapshot_close(s);
}

static inline void fz_ref_free(struct fz_ref *r)
{
	free(r->samples);
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
}

#endif
