// SPDX-License-Identifier: MIT
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tb_free(struct tbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

uint8_t *tb_room(struct tbuf *b)
{
	if (b->cap - b->len < SPULSE_MAX_RECORD + 64) {
		b->cap = b->cap * 2 + SPULSE_MAX_RECORD + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	return b->p + b->len;
}

size_t tb_commit(struct tbuf *b, size_t n)
{
	size_t off = b->len;

	b->len += n;
	return off;
}

void tb_raw(struct tbuf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n + SPULSE_MAX_RECORD + 64) {
		b->cap = b->len + n + 2 * SPULSE_MAX_RECORD;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void tb_header(struct tbuf *b)
{
	TB(b, spulse_enc_header, 1000, 1000);
}

void tb_basic(struct tbuf *b)
{
	tb_header(b);
	TB(b, spulse_enc_module, 0, 100, 0x400000, 0x500000, 0x1000,
	   "/bin/app", 8, NULL, 0);
	TB(b, spulse_enc_thread, 0, 100, 101, "app", 3);
	TB(b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 0x1234);
	TB(b, spulse_enc_stack, 0, SPULSE_STACK_ROOT, 0);
}

char *tmp_path(void)
{
	char *p = strdup("/tmp/spulse-test-XXXXXX");
	int fd;

	assert_non_null(p);
	fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	return p;
}

char *tmp_write(const void *p, size_t len)
{
	char *path = tmp_path();
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

void tmp_remove(char *path)
{
	if (path)
		unlink(path);
	free(path);
}

uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

void rr_free(struct read_result *r)
{
	size_t i;

	for (i = 0; i < r->nrecords; i++) {
		if (r->records[i].tag == SPULSE_TAG_MODULE) {
			free((void *)r->records[i].u.module.path);
			free((void *)r->records[i].u.module.build_id);
		} else if (r->records[i].tag == SPULSE_TAG_THREAD) {
			free((void *)r->records[i].u.thread.comm);
		}
	}
	free(r->samples);
	free(r->records);
	memset(r, 0, sizeof(*r));
}

static void push_sample(struct read_result *r, const struct spulse_sample *s)
{
	if ((r->nsamples & (r->nsamples - 1)) == 0) {
		r->samples = realloc(r->samples,
				     (r->nsamples ? r->nsamples * 2 : 1) *
				     sizeof(*s));
		assert_non_null(r->samples);
	}
	r->samples[r->nsamples++] = *s;
}

static void push_record(struct read_result *r, const struct spulse_record *rec)
{
	if ((r->nrecords & (r->nrecords - 1)) == 0) {
		r->records = realloc(r->records,
				     (r->nrecords ? r->nrecords * 2 : 1) *
				     sizeof(*rec));
		assert_non_null(r->records);
	}
	r->records[r->nrecords] = *rec;
	/* the reader's strings die with it: keep copies */
	if (rec->tag == SPULSE_TAG_MODULE) {
		struct spulse_module *m = &r->records[r->nrecords].u.module;

		m->path = strdup(m->path);
		if (m->build_id_len) {
			uint8_t *b = malloc(m->build_id_len);

			assert_non_null(b);
			memcpy(b, rec->u.module.build_id, m->build_id_len);
			m->build_id = b;
		}
	} else if (rec->tag == SPULSE_TAG_THREAD) {
		r->records[r->nrecords].u.thread.comm = strdup(rec->u.thread.comm);
	}
	r->nrecords++;
}

void read_snapshot_mem(const void *p, size_t len, struct read_result *out)
{
	struct spulse_snapshot *s;
	struct spulse_sample sm;
	uint64_t i;

	memset(out, 0, sizeof(*out));
	out->ret = spulse_snapshot_open_mem(p, len, NULL, &s, &out->err);
	if (out->ret)
		return;
	out->info = *spulse_snapshot_info(s);
	for (i = 0; i < spulse_snapshot_sample_count(s); i++) {
		assert_int_equal(spulse_snapshot_sample(s, i, &sm), 0);
		push_sample(out, &sm);
	}
	assert_int_equal(spulse_snapshot_sample(s, i, &sm), -ERANGE);
	spulse_snapshot_close(s);
}

void read_replay(const char *path, struct read_result *out)
{
	struct spulse_replay *r;
	struct spulse_sample sm;
	struct spulse_record rec;
	int ret;

	memset(out, 0, sizeof(*out));
	out->ret = spulse_replay_open(path, NULL, &r, &out->err);
	if (out->ret)
		return;
	out->info = *spulse_replay_info(r);
	while ((ret = spulse_replay_next_sample(r, &sm)) == 1)
		push_sample(out, &sm);
	assert_int_equal(ret, 0);
	assert_int_equal(spulse_replay_rewind(r), 0);
	while ((ret = spulse_replay_next_record(r, &rec)) == 1)
		push_record(out, &rec);
	assert_int_equal(ret, 0);
	spulse_replay_close(r);
}

void read_stream(const void *p, size_t len, size_t chunk, struct read_result *out)
{
	struct spulse_stream *s;
	struct spulse_record rec;
	size_t pos = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	assert_int_equal(spulse_stream_new(NULL, &s), 0);
	if (!chunk)
		chunk = len ? len : 1;
	do {
		size_t n = len - pos < chunk ? len - pos : chunk;

		assert_int_equal(spulse_stream_feed(s, (const uint8_t *)p + pos, n), 0);
		pos += n;
		while ((ret = spulse_stream_next(s, &rec, &out->err)) == 1) {
			push_record(out, &rec);
			if (rec.tag == SPULSE_TAG_SAMPLE)
				push_sample(out, &rec.u.sample);
		}
		if (ret < 0) {
			out->ret = ret;
			break;
		}
	} while (pos < len);
	out->info = *spulse_stream_info(s);
	if (!out->ret)
		assert_int_equal(spulse_stream_pending(s),
				 len - out->info.complete_bytes);
	spulse_stream_free(s);
}

void read_tail(const char *path, struct read_result *out)
{
	struct spulse_tail *t;
	const struct spulse_sample *ss;
	int n, i;

	memset(out, 0, sizeof(*out));
	out->ret = spulse_tail_open(path, NULL, &t, &out->err);
	if (out->ret)
		return;
	while ((n = spulse_tail_poll(t, &ss, &out->err)) > 0) {
		assert_true(n <= SPULSE_TAIL_BATCH);
		for (i = 0; i < n; i++)
			push_sample(out, &ss[i]);
	}
	if (n < 0)
		out->ret = n;
	out->info = *spulse_tail_info(t);
	spulse_tail_close(t);
}

static void check_corrupt(const char *who, const struct read_result *r,
			  uint64_t offset, const char *msg)
{
	if (r->ret != -EBADMSG || r->err.offset != offset ||
	    !strstr(r->err.msg, msg))
		fail_msg("%s: ret %d offset %llu msg \"%s\"; want -EBADMSG at %llu \"%s\"",
			 who, r->ret, (unsigned long long)r->err.offset,
			 r->err.msg, (unsigned long long)offset, msg);
	assert_int_equal(r->err.code, -EBADMSG);
}

void expect_corrupt(const void *p, size_t len, uint64_t offset, const char *msg)
{
	struct read_result r;
	char *path = tmp_write(p, len);

	read_snapshot_mem(p, len, &r);
	check_corrupt("snapshot", &r, offset, msg);
	rr_free(&r);
	read_replay(path, &r);
	check_corrupt("replay", &r, offset, msg);
	rr_free(&r);
	read_stream(p, len, 0, &r);
	check_corrupt("stream", &r, offset, msg);
	rr_free(&r);
	read_stream(p, len, 1, &r);
	check_corrupt("stream (1-byte chunks)", &r, offset, msg);
	rr_free(&r);
	read_tail(path, &r);
	check_corrupt("tail", &r, offset, msg);
	rr_free(&r);
	tmp_remove(path);
}

uint64_t expect_valid(const void *p, size_t len)
{
	struct read_result s, r;
	char *path = tmp_write(p, len);
	uint64_t n;

	read_snapshot_mem(p, len, &s);
	if (s.ret)
		fail_msg("snapshot: %d at %llu: %s", s.ret,
			 (unsigned long long)s.err.offset, s.err.msg);
	assert_false(s.info.recovered_from_truncated_tail);
	assert_int_equal(s.info.complete_bytes, len);
	read_replay(path, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.nsamples, s.nsamples);
	rr_free(&r);
	read_stream(p, len, 0, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.nsamples, s.nsamples);
	rr_free(&r);
	read_tail(path, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.nsamples, s.nsamples);
	rr_free(&r);
	n = s.nsamples;
	rr_free(&s);
	tmp_remove(path);
	return n;
}

/* Deterministic PRNG (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

void make_realistic(const char *path, unsigned samples, unsigned seed)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1700000000000000ULL,
					  .interval_us = 1000, .truncate = true,
					  .flush_bytes = 512 };
	struct spulse_recorder *r;
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ seed;
	uint32_t threads[6], mods[3][2], trunc;
	int64_t t = 0;
	unsigned i, p;

	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	for (p = 0; p < 3; p++) {
		uint32_t pid = 1000 + p;

		assert_int_equal(spulse_rec_module(r, pid, 0x400000, 0x480000, 0,
						   "/usr/bin/app", (const uint8_t *)"\x01\x02\x03\x04", 4,
						   &mods[p][0]), 0);
		assert_int_equal(spulse_rec_module(r, pid, 0x7f0000000000ULL,
						   0x7f0000200000ULL, 0x20000,
						   "/lib/libc.so.6", NULL, 0,
						   &mods[p][1]), 0);
		assert_int_equal(spulse_rec_thread(r, pid, pid, "app", &threads[2 * p]), 0);
		assert_int_equal(spulse_rec_thread(r, pid, pid + 10, "worker",
						   &threads[2 * p + 1]), 0);
	}
	assert_int_equal(spulse_rec_frame_truncated(r, &trunc), 0);
	for (i = 0; i < samples; i++) {
		unsigned th = (unsigned)(rnd(&s) % 6), pi = th / 2;
		uint32_t pid = 1000 + pi, frames[12], leaf;
		unsigned depth = 2 + (unsigned)(rnd(&s) % 9), d = 0, k;

		if (rnd(&s) % 17 == 0)
			frames[d++] = trunc;
		/* shared prefix: main-like root per process */
		assert_int_equal(spulse_rec_frame_addr(r, pid, 0x401000 + pi * 16,
						       false, true, &frames[d++]), 0);
		for (k = 1; k < depth && d < 10; k++) {
			uint64_t a = (rnd(&s) & 1) ? 0x402000 + (rnd(&s) % 8) * 0x40
						   : 0x7f0000001000ULL + (rnd(&s) % 8) * 0x80;
			if (rnd(&s) % 11 == 0)
				a = 0x600000 + (rnd(&s) % 4);	/* outside modules */
			assert_int_equal(spulse_rec_frame_addr(r, pid, a, false,
							       k + 1 < depth,
							       &frames[d++]), 0);
		}
		if (rnd(&s) % 3 == 0) {	/* kernel part above the user chain */
			assert_int_equal(spulse_rec_frame_addr(r, pid,
					0xffffffff81000000ULL + (rnd(&s) % 5) * 0x100,
					true, true, &frames[d++]), 0);
			assert_int_equal(spulse_rec_frame_addr(r, pid,
					0xffffffff81200000ULL, true, false,
					&frames[d++]), 0);
		}
		assert_int_equal(spulse_rec_stack_frames(r, frames, d, &leaf), 0);
		t += (int64_t)(rnd(&s) % 2000000) - 200000;
		if (t < 0)
			t = 0;
		assert_int_equal(spulse_rec_sample(r, t, threads[th], leaf), 0);
		switch (rnd(&s) % 97) {
		case 0:
			assert_int_equal(spulse_rec_python(r, pid, true), 0);
			break;
		case 1:
			assert_int_equal(spulse_rec_python(r, pid, false), 0);
			break;
		case 2: /* munmap + remap libc */
			assert_int_equal(spulse_rec_module_deactivate(r, mods[pi][1]), 0);
			assert_int_equal(spulse_rec_module(r, pid, 0x7f0000000000ULL,
							   0x7f0000200000ULL, 0x20000,
							   "/lib/libc.so.6", NULL, 0,
							   &mods[pi][1]), 0);
			break;
		case 3: /* exec: every module goes, then comes back, new comm */
			assert_int_equal(spulse_rec_process_deactivate(r, pid), 0);
			assert_int_equal(spulse_rec_module(r, pid, 0x400000, 0x480000, 0,
							   "/usr/bin/app", NULL, 0,
							   &mods[pi][0]), 0);
			assert_int_equal(spulse_rec_module(r, pid, 0x7f0000000000ULL,
							   0x7f0000200000ULL, 0x20000,
							   "/lib/libc.so.6", NULL, 0,
							   &mods[pi][1]), 0);
			assert_int_equal(spulse_rec_thread(r, pid, pid,
							   (rnd(&s) & 1) ? "app2" : "app",
							   &threads[2 * pi]), 0);
			break;
		}
	}
	assert_int_equal(spulse_recorder_close(r), 0);
}
