// SPDX-License-Identifier: MIT
/*
 * Every byte-truncation of a realistic spool (written by the Recorder):
 * Snapshot, Replay and Stream keep exactly the complete prefix and say
 * "recovered" exactly when the cut is inside a record or the header. Tail
 * fed the same file in random growth steps yields exactly the Snapshot's
 * samples and never consumes a partial record. Each test runs on a spool
 * without and with extension records (cpu, off-CPU intervals, triggers,
 * unknown kinds): intervals and triggers of the prefix are kept exactly too.
 */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Record boundaries of a valid spool, and samples ending at or before each. */
struct layout {
	uint8_t *bytes;
	size_t len;
	size_t header_len;
	uint8_t *is_boundary;	/* [len + 1] */
	size_t *samples_before;	/* [len + 1]: samples in records ending <= i */
	size_t *complete_at;	/* [len + 1]: largest boundary <= i (0 in header) */
	size_t *offcpu_before;	/* [len + 1]: intervals in records ending <= i */
	size_t *triggers_before;	/* [len + 1]: the same for triggers */
	struct read_result full;
};

static void layout_build(struct layout *l, const char *path)
{
	struct read_result st;
	size_t i, r, boundary, n, no, nt;

	l->bytes = read_file(path, &l->len);
	read_stream(l->bytes, l->len, 0, &st);
	assert_int_equal(st.ret, 0);
	l->is_boundary = calloc(l->len + 1, 1);
	l->samples_before = calloc(l->len + 1, sizeof(size_t));
	l->complete_at = calloc(l->len + 1, sizeof(size_t));
	l->offcpu_before = calloc(l->len + 1, sizeof(size_t));
	l->triggers_before = calloc(l->len + 1, sizeof(size_t));
	assert_non_null(l->complete_at);
	assert_non_null(l->offcpu_before);
	assert_non_null(l->triggers_before);
	l->header_len = st.nrecords ? st.records[0].offset : l->len;
	l->is_boundary[l->header_len] = 1;
	l->is_boundary[0] = 1;	/* an empty file: nothing is cut */
	for (r = 0; r < st.nrecords; r++) {
		size_t end = r + 1 < st.nrecords ? st.records[r + 1].offset : l->len;

		l->is_boundary[end] = 1;
	}
	boundary = 0;
	n = 0;
	r = 0;
	no = 0;
	nt = 0;
	for (i = 0; i <= l->len; i++) {
		if (l->is_boundary[i]) {
			boundary = i;
			/* count samples whose record ends at i */
			while (r < st.nrecords &&
			       (r + 1 < st.nrecords ? st.records[r + 1].offset : l->len) <= i) {
				if (st.records[r].tag == SPULSE_TAG_SAMPLE)
					n++;
				no += st.records[r].ext_kind == SPULSE_EXT_OFFCPU;
				nt += st.records[r].ext_kind == SPULSE_EXT_TRIGGER;
				r++;
			}
		}
		l->complete_at[i] = boundary;
		l->samples_before[i] = n;
		l->offcpu_before[i] = no;
		l->triggers_before[i] = nt;
	}
	assert_int_equal(n, st.nsamples);
	assert_int_equal(no, st.noffcpu);
	assert_int_equal(nt, st.ntriggers);
	read_snapshot_mem(l->bytes, l->len, &l->full);
	assert_int_equal(l->full.ret, 0);
	rr_free(&st);
}

static void layout_free(struct layout *l)
{
	free(l->bytes);
	free(l->is_boundary);
	free(l->samples_before);
	free(l->complete_at);
	free(l->offcpu_before);
	free(l->triggers_before);
	rr_free(&l->full);
}

/* Intervals (and, but for Tail, triggers) are those of the prefix. */
static void check_ext_prefix(const struct layout *l, const struct read_result *r,
			     size_t cut, bool triggers)
{
	size_t i;

	assert_int_equal(r->noffcpu, l->offcpu_before[cut]);
	assert_int_equal(r->info.offcpu, l->offcpu_before[cut]);
	for (i = 0; i < r->noffcpu; i++)
		assert_offcpu_equal(&r->offcpu[i], &l->full.offcpu[i]);
	assert_int_equal(r->info.triggers, l->triggers_before[cut]);
	if (!triggers)
		return;
	assert_int_equal(r->ntriggers, l->triggers_before[cut]);
	for (i = 0; i < r->ntriggers; i++)
		assert_trigger_equal(&r->triggers[i], &l->full.triggers[i]);
}

static void check_prefix(const struct layout *l, const struct read_result *r,
			 size_t cut, const char *who)
{
	size_t i;
	bool want_recovered = !l->is_boundary[cut];

	/* a whole file shorter than the header is an error at its end
	 * (FORMAT.md 6, issue 26); a stream just waits for more */
	if (cut < l->header_len && strcmp(who, "stream")) {
		if (r->ret != -EBADMSG || r->err.offset != cut ||
		    !strstr(r->err.msg, "inside the stream header"))
			fail_msg("%s cut %zu: ret %d at %llu (%s); want the "
				 "short-header error at %zu", who, cut, r->ret,
				 (unsigned long long)r->err.offset, r->err.msg,
				 cut);
		return;
	}
	if (r->ret)
		fail_msg("%s cut %zu: error %d at %llu: %s", who, cut, r->ret,
			 (unsigned long long)r->err.offset, r->err.msg);
	if (r->info.complete_bytes != l->complete_at[cut] ||
	    r->info.recovered_from_truncated_tail != want_recovered ||
	    r->nsamples != l->samples_before[cut])
		fail_msg("%s cut %zu: complete %llu recovered %d samples %zu; "
			 "want %zu %d %zu", who, cut,
			 (unsigned long long)r->info.complete_bytes,
			 r->info.recovered_from_truncated_tail, r->nsamples,
			 l->complete_at[cut], want_recovered,
			 l->samples_before[cut]);
	assert_int_equal(r->info.samples, r->nsamples);
	for (i = 0; i < r->nsamples; i++)
		assert_memory_equal(&r->samples[i], &l->full.samples[i],
				    sizeof(r->samples[i]));
	check_ext_prefix(l, r, cut, true);
}

static void every_truncation(bool ext)
{
	char *path = tmp_path(), *cutpath = tmp_path();
	struct layout l;
	struct read_result r;
	size_t cut;
	int fd;

	if (ext)
		make_realistic_ext(path, 150, 2);
	else
		make_realistic(path, 300, 2);
	layout_build(&l, path);
	assert_true(l.len > 2000);
	if (ext)
		assert_true(l.full.info.offcpu > 20 && l.full.info.triggers &&
			    l.full.info.ext_skipped && l.full.info.cpu_records);
	fd = open(cutpath, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, l.bytes, l.len), (ssize_t)l.len);
	for (cut = l.len + 1; cut-- > 0;) {
		assert_int_equal(ftruncate(fd, (off_t)cut), 0);
		read_snapshot_mem(l.bytes, cut, &r);
		check_prefix(&l, &r, cut, "snapshot");
		rr_free(&r);
		read_replay(cutpath, &r);
		check_prefix(&l, &r, cut, "replay");
		rr_free(&r);
		read_stream(l.bytes, cut, 0, &r);
		check_prefix(&l, &r, cut, "stream");
		rr_free(&r);
		read_tail(cutpath, &r);
		if (r.ret)
			fail_msg("tail cut %zu: %d at %llu: %s", cut, r.ret,
				 (unsigned long long)r.err.offset, r.err.msg);
		assert_int_equal(r.info.complete_bytes, l.complete_at[cut]);
		assert_int_equal(r.nsamples, l.samples_before[cut]);
		check_ext_prefix(&l, &r, cut, false);
		rr_free(&r);
	}
	/* the snapshot_open (mmap) path agrees at a few cuts */
	assert_int_equal(pwrite(fd, l.bytes, l.len, 0), (ssize_t)l.len);
	for (cut = l.len + 1; cut-- > 0; cut = cut > l.len / 7 ? cut - l.len / 7 : 0) {
		struct spulse_snapshot *s;
		struct spulse_error err;

		assert_int_equal(ftruncate(fd, (off_t)cut), 0);
		if (cut < l.header_len) {
			assert_int_equal(spulse_snapshot_open(cutpath, NULL, &s,
							      &err), -EBADMSG);
			assert_int_equal(err.offset, cut);
			continue;
		}
		assert_int_equal(spulse_snapshot_open(cutpath, NULL, &s, &err), 0);
		assert_int_equal(spulse_snapshot_sample_count(s), l.samples_before[cut]);
		assert_int_equal(spulse_snapshot_recovered_from_truncated_tail(s),
				 !l.is_boundary[cut]);
		spulse_snapshot_close(s);
	}
	close(fd);
	layout_free(&l);
	tmp_remove(path);
	tmp_remove(cutpath);
}

static void every_truncation_recovers_exactly_the_complete_prefix(void **state)
{
	(void)state;
	every_truncation(false);
}

static void every_truncation_with_extension_records(void **state)
{
	(void)state;
	every_truncation(true);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void tail_growth(bool ext)
{
	char *path = tmp_path(), *growpath = tmp_path();
	struct layout l;
	unsigned seed;

	if (ext)
		make_realistic_ext(path, 2000, 3);
	else
		make_realistic(path, 2000, 3);
	layout_build(&l, path);
	for (seed = 1; seed <= 8; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ULL;
		struct spulse_tail *t;
		struct spulse_error err;
		const struct spulse_sample *ss;
		const struct spulse_offcpu *iv;
		size_t size = 0, got = 0, goti = 0;
		int fd = open(growpath, O_WRONLY | O_TRUNC), n, k, i;

		assert_true(fd >= 0);
		assert_int_equal(spulse_tail_open(growpath, NULL, &t, &err), 0);
		while (size < l.len || got < l.full.nsamples) {
			size_t step = (size_t)(rnd(&s) % (seed * 37 + 1));

			if (step > l.len - size)
				step = l.len - size;
			assert_int_equal(write(fd, l.bytes + size, step), (ssize_t)step);
			size += step;
			for (;;) {
				n = spulse_tail_poll(t, &ss, &err);
				assert_true(n >= 0);
				k = spulse_tail_offcpu(t, &iv);
				for (i = 0; i < n; i++, got++)
					assert_memory_equal(&ss[i], &l.full.samples[got],
							    sizeof(ss[i]));
				for (i = 0; i < k; i++, goti++)
					assert_offcpu_equal(&iv[i], &l.full.offcpu[goti]);
				if (!n && !k)
					break;
			}
			/* it stops exactly before the cut record */
			assert_int_equal(spulse_tail_offset(t),
					 size < l.header_len ? 0 : l.complete_at[size]);
			assert_int_equal(got, l.samples_before[size]);
			assert_int_equal(goti, l.offcpu_before[size]);
		}
		assert_int_equal(got, l.full.nsamples);
		assert_int_equal(goti, l.full.noffcpu);
		assert_false(spulse_tail_info(t)->recovered_from_truncated_tail);
		assert_memory_equal(spulse_tail_info(t), &l.full.info,
				    sizeof(l.full.info));
		spulse_tail_close(t);
		close(fd);
	}
	layout_free(&l);
	tmp_remove(path);
	tmp_remove(growpath);
}

static void tail_in_random_growth_steps_yields_snapshot_samples(void **state)
{
	(void)state;
	tail_growth(false);
}

static void tail_growth_yields_snapshot_samples_and_intervals(void **state)
{
	(void)state;
	tail_growth(true);
}

static void stream_chunks(bool ext)
{
	char *path = tmp_path();
	struct layout l;
	struct read_result whole, r;
	size_t chunk, i;

	if (ext)
		make_realistic_ext(path, 1000, 4);
	else
		make_realistic(path, 1000, 4);
	layout_build(&l, path);
	read_stream(l.bytes, l.len, 0, &whole);
	for (chunk = 1; chunk < 300; chunk = chunk * 2 + 1) {
		read_stream(l.bytes, l.len, chunk, &r);
		assert_int_equal(r.ret, 0);
		assert_int_equal(r.nrecords, whole.nrecords);
		for (i = 0; i < r.nrecords; i++) {
			assert_int_equal(r.records[i].tag, whole.records[i].tag);
			assert_int_equal(r.records[i].offset, whole.records[i].offset);
		}
		assert_int_equal(r.nsamples, l.full.nsamples);
		assert_memory_equal(r.samples, l.full.samples,
				    r.nsamples * sizeof(*r.samples));
		check_ext_prefix(&l, &r, l.len, true);
		rr_free(&r);
	}
	rr_free(&whole);
	layout_free(&l);
	tmp_remove(path);
}

static void stream_in_random_chunks_yields_snapshot_records(void **state)
{
	(void)state;
	stream_chunks(false);
}

static void stream_chunks_with_extension_records(void **state)
{
	(void)state;
	stream_chunks(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_truncation_recovers_exactly_the_complete_prefix),
		cmocka_unit_test(tail_in_random_growth_steps_yields_snapshot_samples),
		cmocka_unit_test(stream_in_random_chunks_yields_snapshot_records),
		cmocka_unit_test(every_truncation_with_extension_records),
		cmocka_unit_test(tail_growth_yields_snapshot_samples_and_intervals),
		cmocka_unit_test(stream_chunks_with_extension_records),
	};

	return cmocka_run_group_tests_name("truncation", tests, NULL, NULL);
}
