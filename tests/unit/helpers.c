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
		} else if (r->records[i].ext_kind == SPULSE_EXT_TRIGGER) {
			free((void *)r->records[i].u.trigger.text);
		}
	}
	for (i = 0; i < r->ntriggers; i++)
		free((void *)r->triggers[i].text);
	free(r->samples);
	free(r->records);
	free(r->offcpu);
	free(r->triggers);
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

static void push_offcpu(struct read_result *r, const struct spulse_offcpu *iv)
{
	if ((r->noffcpu & (r->noffcpu - 1)) == 0) {
		r->offcpu = realloc(r->offcpu, (r->noffcpu ? r->noffcpu * 2 : 1) *
					       sizeof(*iv));
		assert_non_null(r->offcpu);
	}
	r->offcpu[r->noffcpu++] = *iv;
}

static void push_trigger(struct read_result *r, const struct spulse_trigger *t)
{
	char *text;

	if ((r->ntriggers & (r->ntriggers - 1)) == 0) {
		r->triggers = realloc(r->triggers,
				      (r->ntriggers ? r->ntriggers * 2 : 1) *
				      sizeof(*t));
		assert_non_null(r->triggers);
	}
	/* text_len bytes (any bytes, NUL included), then a NUL */
	assert_int_equal(t->text[t->text_len], '\0');
	text = malloc(t->text_len + 1);
	assert_non_null(text);
	memcpy(text, t->text, t->text_len + 1);
	r->triggers[r->ntriggers] = *t;
	r->triggers[r->ntriggers++].text = text;
}

/* Collect what a record-yielding reader (Replay, Stream) returns. */
static void collect_ext(struct read_result *r, const struct spulse_record *rec,
			bool offcpu)
{
	if (rec->tag != SPULSE_TAG_EXT) {
		assert_int_equal(rec->ext_kind, 0);
		return;
	}
	if (rec->ext_kind == SPULSE_EXT_OFFCPU && offcpu)
		push_offcpu(r, &rec->u.offcpu);
	else if (rec->ext_kind == SPULSE_EXT_TRIGGER)
		push_trigger(r, &rec->u.trigger);
}

void assert_offcpu_equal(const struct spulse_offcpu *a,
			 const struct spulse_offcpu *b)
{
	if (a->time_ns != b->time_ns || a->thread != b->thread ||
	    a->stack != b->stack || a->state != b->state ||
	    a->cpu_out != b->cpu_out || a->cpu_in != b->cpu_in ||
	    a->blocked_ns != b->blocked_ns || a->runq_ns != b->runq_ns ||
	    a->waker_thread != b->waker_thread ||
	    a->waker_stack != b->waker_stack || a->waker_cpu != b->waker_cpu)
		fail_msg("interval differs: t %lld/%lld th %u/%u st %u/%u state %u/%u "
			 "cpu %u>%u / %u>%u blocked %llu/%llu runq %llu/%llu "
			 "waker %u/%u wstack %u/%u wcpu %u/%u",
			 (long long)a->time_ns, (long long)b->time_ns,
			 a->thread, b->thread, a->stack, b->stack,
			 a->state, b->state, a->cpu_out, a->cpu_in,
			 b->cpu_out, b->cpu_in,
			 (unsigned long long)a->blocked_ns,
			 (unsigned long long)b->blocked_ns,
			 (unsigned long long)a->runq_ns,
			 (unsigned long long)b->runq_ns,
			 a->waker_thread, b->waker_thread,
			 a->waker_stack, b->waker_stack,
			 a->waker_cpu, b->waker_cpu);
}

void assert_trigger_equal(const struct spulse_trigger *a,
			  const struct spulse_trigger *b)
{
	assert_true(a->time_ns == b->time_ns);
	assert_int_equal(a->reason, b->reason);
	assert_int_equal(a->seq, b->seq);
	assert_true(a->value_ns == b->value_ns);
	assert_true(a->threshold_ns == b->threshold_ns);
	assert_true(a->window_start_ns == b->window_start_ns);
	assert_true(a->window_end_ns == b->window_end_ns);
	assert_int_equal(a->text_len, b->text_len);
	assert_memory_equal(a->text, b->text, a->text_len);
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
	} else if (rec->ext_kind == SPULSE_EXT_TRIGGER) {
		char *t = malloc(rec->u.trigger.text_len + 1);

		assert_non_null(t);
		memcpy(t, rec->u.trigger.text, rec->u.trigger.text_len + 1);
		r->records[r->nrecords].u.trigger.text = t;
	}
	r->nrecords++;
}

void read_snapshot_mem(const void *p, size_t len, struct read_result *out)
{
	struct spulse_snapshot *s;
	struct spulse_sample sm;
	struct spulse_offcpu iv;
	struct spulse_trigger tr;
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
	assert_int_equal(spulse_snapshot_offcpu_count(s), out->info.offcpu);
	for (i = 0; i < spulse_snapshot_offcpu_count(s); i++) {
		assert_int_equal(spulse_snapshot_offcpu(s, i, &iv), 0);
		push_offcpu(out, &iv);
	}
	assert_int_equal(spulse_snapshot_offcpu(s, i, &iv), -ERANGE);
	assert_int_equal(spulse_snapshot_trigger_count(s), out->info.triggers);
	for (i = 0; i < spulse_snapshot_trigger_count(s); i++) {
		assert_int_equal(spulse_snapshot_trigger(s, i, &tr), 0);
		push_trigger(out, &tr);
	}
	assert_int_equal(spulse_snapshot_trigger(s, i, &tr), -ERANGE);
	spulse_snapshot_close(s);
}

void read_replay(const char *path, struct read_result *out)
{
	struct spulse_replay *r;
	struct spulse_sample sm;
	struct spulse_record rec;
	struct spulse_offcpu iv;
	size_t k = 0;
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
	/* records and intervals interleaved: the two iterators are independent */
	while ((ret = spulse_replay_next_record(r, &rec)) == 1) {
		push_record(out, &rec);
		collect_ext(out, &rec, false);
		if (rec.ext_kind == SPULSE_EXT_OFFCPU || out->nrecords % 3 == 0) {
			if (spulse_replay_next_offcpu(r, &iv) == 1)
				push_offcpu(out, &iv);
		}
	}
	assert_int_equal(ret, 0);
	while ((ret = spulse_replay_next_offcpu(r, &iv)) == 1)
		push_offcpu(out, &iv);
	assert_int_equal(ret, 0);
	assert_int_equal(out->noffcpu, out->info.offcpu);
	/* a rewound interval iterator yields the same again */
	assert_int_equal(spulse_replay_rewind_offcpu(r), 0);
	while ((ret = spulse_replay_next_offcpu(r, &iv)) == 1) {
		assert_true(k < out->noffcpu);
		assert_offcpu_equal(&iv, &out->offcpu[k]);
		k++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(k, out->noffcpu);
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
			collect_ext(out, &rec, true);
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
	{
		/* the pending bytes are the tail of what was fed (after an
		 * error: from the record that failed) */
		size_t n;
		const void *pb = spulse_stream_pending_bytes(s, &n);

		assert_int_equal(n, spulse_stream_pending(s));
		assert_true(n <= pos);
		assert_memory_equal(pb, (const uint8_t *)p + pos - n, n);
		if (out->ret == -EBADMSG && n)
			assert_int_equal(pos - n, out->info.complete_bytes);
	}
	spulse_stream_free(s);
}

void read_tail(const char *path, struct read_result *out)
{
	struct spulse_tail *t;
	const struct spulse_sample *ss;
	const struct spulse_offcpu *iv;
	int n, k, i;

	memset(out, 0, sizeof(*out));
	out->ret = spulse_tail_open(path, NULL, &t, &out->err);
	if (out->ret)
		return;
	for (;;) {
		n = spulse_tail_poll(t, &ss, &out->err);
		if (n < 0)
			break;
		k = spulse_tail_offcpu(t, &iv);
		assert_true(n <= SPULSE_TAIL_BATCH);
		assert_true(k >= 0 && k <= SPULSE_TAIL_BATCH);
		for (i = 0; i < n; i++)
			push_sample(out, &ss[i]);
		for (i = 0; i < k; i++)
			push_offcpu(out, &iv[i]);
		if (!n && !k)
			break;
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

/* Extension records after one sample (make_realistic_ext). */
static void add_ext(struct spulse_recorder *r, uint64_t *e, int64_t t,
		    const uint32_t *threads, unsigned th, uint32_t leaf,
		    uint32_t prev_leaf, uint32_t *seq, bool force)
{
	static const uint8_t states[] = { 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 4, 7, 8 };
	uint64_t x = rnd(e);

	/* early in the spool, one of each for short spools */
	if (force)
		x = 309;	/* interval (x % 3 == 0) and trigger (x % 151 == 7) */

	if (x % 3 == 0) {
		struct spulse_offcpu iv = {
			.time_ns = t - (int64_t)(rnd(e) % 3000000),
			.thread = threads[th], .stack = leaf,
			.state = states[rnd(e) % sizeof(states)],
			.cpu_out = (uint32_t)(rnd(e) % 4),
			.cpu_in = (uint32_t)(rnd(e) % 4),
			.runq_ns = rnd(e) % 200000,
			.waker_thread = SPULSE_NONE, .waker_stack = SPULSE_NONE,
			.waker_cpu = SPULSE_NONE,
		};

		if (iv.time_ns < 0)
			iv.time_ns = 0;
		if (rnd(e) % 50 == 0)	/* a CPU number needing 3 bytes */
			iv.cpu_in = 40000;
		if (iv.state != SPULSE_STATE_RUNNABLE) {
			iv.blocked_ns = rnd(e) % 5000000;
			if (rnd(e) % 10 < 7) {
				iv.waker_thread = threads[(th + 1 + rnd(e) % 5) % 6];
				iv.waker_stack = prev_leaf;
				iv.waker_cpu = (uint32_t)(rnd(e) % 4);
			}
		}
		assert_int_equal(spulse_rec_offcpu(r, &iv), 0);
	}
	if (x % 151 == 7) {
		char text[64];
		struct spulse_trigger tr = {
			.time_ns = t, .reason = (uint8_t)(1 + rnd(e) % 4),
			.seq = ++*seq, .window_start_ns = (uint64_t)t / 2,
			.window_end_ns = (uint64_t)t + 1000,
		};

		if (tr.reason >= SPULSE_TRIGGER_OFFCPU) {
			tr.threshold_ns = 50000000;
			tr.value_ns = tr.threshold_ns + rnd(e) % 1000000;
		}
		tr.text_len = (uint32_t)snprintf(text, sizeof(text),
						 "%s #%u", spulse_trigger_reason_name(tr.reason),
						 tr.seq);
		tr.text = text;
		assert_int_equal(spulse_rec_trigger(r, &tr), 0);
	}
	if (x % 211 == 5 || force) {	/* a kind no reader knows: skipped */
		uint8_t junk[24];
		size_t i, n = (size_t)(rnd(e) % sizeof(junk));

		for (i = 0; i < n; i++)
			junk[i] = (uint8_t)rnd(e);
		assert_int_equal(spulse_rec_ext_raw(r, 4 + (uint32_t)(rnd(e) % 300),
						    junk, n), 0);
	}
}

static void realistic(const char *path, unsigned samples, unsigned seed,
		      bool ext)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1700000000000000ULL,
					  .interval_us = 1000, .truncate = true,
					  .flush_bytes = 512 };
	struct spulse_recorder *r;
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ seed;
	uint32_t threads[6], mods[3][2], trunc, prev_leaf = 0, seq = 0;
	uint64_t e = 0x51ed2701f00dULL ^ ((uint64_t)seed << 17);
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
		if (ext) {
			assert_int_equal(spulse_rec_sample_cpu(r, t, threads[th], leaf,
							       (uint32_t)(rnd(&e) % 4)), 0);
			add_ext(r, &e, t, threads, th, leaf, i ? prev_leaf : leaf,
				&seq, i == 3);
			prev_leaf = leaf;
		} else {
			assert_int_equal(spulse_rec_sample(r, t, threads[th], leaf), 0);
		}
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

void make_realistic(const char *path, unsigned samples, unsigned seed)
{
	realistic(path, samples, seed, false);
}

void make_realistic_ext(const char *path, unsigned samples, unsigned seed)
{
	realistic(path, samples, seed, true);
}
