// SPDX-License-Identifier: MIT
/*
 * Replay: bounded index and memory independent of the sample count (a
 * 10M-sample spool against a 1M-sample one with the same definitions), and
 * seeking / iteration that agree with a Snapshot.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Same definitions, then @n samples cycling over a few stacks and threads. */
static void write_samples(const char *path, uint64_t n)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .flush_bytes = 1 << 16 };
	struct spulse_recorder *w;
	uint32_t th[4], fr[8], st[8];
	uint64_t i;
	int k;

	assert_int_equal(spulse_recorder_open(path, &o, &w), 0);
	for (k = 0; k < 4; k++)
		assert_int_equal(spulse_rec_thread(w, 10, 10 + k, "t", &th[k]), 0);
	for (k = 0; k < 8; k++) {
		assert_int_equal(spulse_rec_frame_abs(w, SPULSE_FRAME_USER,
						      0x1000 + k * 16, &fr[k]), 0);
		assert_int_equal(spulse_rec_stack_frames(w, fr, (size_t)k + 1,
							 &st[k]), 0);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(spulse_rec_sample(w, (int64_t)(i * 1000 + (i & 7)),
						   th[i & 3], st[(i >> 2) & 7]), 0);
	assert_int_equal(spulse_recorder_close(w), 0);
}

static void replay_memory_stops_growing_with_sample_count(void **state)
{
	struct spulse_read_opts o = { .sz = sizeof(o), .replay_index_limit = 64,
				      .replay_index_stride = 4096 };
	uint64_t small = 1000000, big = 10000000;
	char *p1 = tmp_path(), *p2 = tmp_path();
	struct spulse_replay *a, *b;
	struct spulse_error err;
	struct spulse_sample s;
	uint64_t n = 0;
	int ret;

	(void)state;
	write_samples(p1, small);
	write_samples(p2, big);
	assert_int_equal(spulse_replay_open(p1, &o, &a, &err), 0);
	assert_int_equal(spulse_replay_open(p2, &o, &b, &err), 0);
	assert_int_equal(spulse_replay_info(a)->samples, small);
	assert_int_equal(spulse_replay_info(b)->samples, big);
	assert_int_equal(spulse_replay_index_entries(a), 64);
	assert_int_equal(spulse_replay_index_entries(b), 64);
	assert_int_equal(spulse_replay_memory_bytes(a),
			 spulse_replay_memory_bytes(b));
	/* iterating everything does not grow it either */
	while ((ret = spulse_replay_next_sample(b, &s)) == 1)
		n++;
	assert_int_equal(ret, 0);
	assert_int_equal(n, big);
	assert_true(s.time_ns == (int64_t)((big - 1) * 1000 + ((big - 1) & 7)));
	assert_int_equal(spulse_replay_memory_bytes(a),
			 spulse_replay_memory_bytes(b));
	print_message("replay heap bytes: %zu for %llu and %llu samples\n",
		      spulse_replay_memory_bytes(b), (unsigned long long)small,
		      (unsigned long long)big);
	spulse_replay_close(a);
	spulse_replay_close(b);
	tmp_remove(p1);
	tmp_remove(p2);
}

static void index_has_one_entry_per_stride_up_to_the_limit(void **state)
{
	char *path = tmp_path();
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_read_opts o = { .sz = sizeof(o), .replay_index_limit = 1000,
				      .replay_index_stride = 100 };

	(void)state;
	write_samples(path, 12345);
	assert_int_equal(spulse_replay_open(path, &o, &r, &err), 0);
	assert_int_equal(spulse_replay_index_entries(r), 124);	/* 0,100,..,12300 */
	spulse_replay_close(r);
	o.replay_index_limit = 10;
	assert_int_equal(spulse_replay_open(path, &o, &r, &err), 0);
	assert_int_equal(spulse_replay_index_entries(r), 10);
	spulse_replay_close(r);
	/* defaults: stride 65536 */
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	assert_int_equal(spulse_replay_index_entries(r), 1);
	spulse_replay_close(r);
	tmp_remove(path);
}

static void seek_lands_on_the_same_sample_as_snapshot(void **state)
{
	char *path = tmp_path();
	struct spulse_read_opts o = { .sz = sizeof(o), .replay_index_limit = 5,
				      .replay_index_stride = 97 };
	struct spulse_snapshot *s;
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_sample a, b;
	static const uint64_t at[] = { 0, 1, 96, 97, 98, 300, 388, 400, 485,
				       2000, 19999, 5, 12345 };
	size_t i;

	(void)state;
	make_realistic(path, 20000, 6);
	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_int_equal(spulse_replay_open(path, &o, &r, &err), 0);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		assert_int_equal(spulse_replay_seek_sample(r, at[i]), 0);
		assert_int_equal(spulse_replay_next_sample(r, &a), 1);
		assert_int_equal(spulse_snapshot_sample(s, at[i], &b), 0);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	assert_int_equal(spulse_replay_seek_sample(r, 20000), 0);
	assert_int_equal(spulse_replay_next_sample(r, &a), 0);
	assert_int_equal(spulse_replay_seek_sample(r, 20001), -ERANGE);
	spulse_replay_close(r);
	spulse_snapshot_close(s);
	tmp_remove(path);
}

/*
 * With cpu records and intervals: a seek through the index restores the
 * cpu and the event clock, so samples and the records after them read as
 * from the start; the interval iterator is not moved by seeks.
 */
static void seek_restores_cpu_and_event_clock(void **state)
{
	char *path = tmp_path();
	struct spulse_read_opts o = { .sz = sizeof(o), .replay_index_limit = 50,
				      .replay_index_stride = 97 };
	struct read_result full;
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_sample a;
	struct spulse_record rec;
	struct spulse_offcpu iv;
	static const uint64_t at[] = { 0, 97, 98, 300, 1000, 2910, 4000, 7, 5555 };
	size_t i, k, j;

	(void)state;
	make_realistic_ext(path, 6000, 9);
	read_replay(path, &full);
	assert_int_equal(full.ret, 0);
	assert_int_equal(spulse_replay_open(path, &o, &r, &err), 0);
	assert_true(spulse_replay_index_entries(r) > 40);
	/* the interval iterator, half way */
	for (k = 0; k < full.noffcpu / 2; k++) {
		assert_int_equal(spulse_replay_next_offcpu(r, &iv), 1);
		assert_offcpu_equal(&iv, &full.offcpu[k]);
	}
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		assert_int_equal(spulse_replay_seek_sample(r, at[i]), 0);
		assert_int_equal(spulse_replay_next_sample(r, &a), 1);
		assert_memory_equal(&a, &full.samples[at[i]], sizeof(a));
		/* the next intervals after that sample: same times as from the start */
		for (j = 0; j < full.nrecords; j++)
			if (full.records[j].tag == SPULSE_TAG_SAMPLE &&
			    full.records[j].u.sample.time_ns == a.time_ns &&
			    full.records[j].u.sample.thread == a.thread &&
			    full.records[j].u.sample.cpu == a.cpu)
				break;
		assert_true(j < full.nrecords);
		for (j++; j < full.nrecords; j++) {
			assert_int_equal(spulse_replay_next_record(r, &rec), 1);
			assert_int_equal(rec.tag, full.records[j].tag);
			assert_int_equal(rec.ext_kind, full.records[j].ext_kind);
			if (rec.ext_kind == SPULSE_EXT_OFFCPU) {
				assert_offcpu_equal(&rec.u.offcpu, &full.records[j].u.offcpu);
				break;
			}
			if (rec.tag == SPULSE_TAG_SAMPLE)
				assert_int_equal(rec.u.sample.cpu,
						 full.records[j].u.sample.cpu);
		}
	}
	for (; k < full.noffcpu; k++) {
		assert_int_equal(spulse_replay_next_offcpu(r, &iv), 1);
		assert_offcpu_equal(&iv, &full.offcpu[k]);
	}
	assert_int_equal(spulse_replay_next_offcpu(r, &iv), 0);
	spulse_replay_close(r);
	rr_free(&full);
	tmp_remove(path);
}

static void rewind_restarts_records_from_the_first(void **state)
{
	char *path = tmp_path();
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_record rec;
	struct spulse_sample s;
	uint64_t first_off;

	(void)state;
	make_realistic(path, 50, 7);
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	assert_int_equal(spulse_replay_next_record(r, &rec), 1);
	first_off = rec.offset;
	assert_int_equal(rec.tag, SPULSE_TAG_MODULE);
	assert_int_equal(spulse_replay_next_sample(r, &s), 1);
	assert_int_equal(spulse_replay_rewind(r), 0);
	assert_int_equal(spulse_replay_next_record(r, &rec), 1);
	assert_int_equal(rec.offset, first_off);
	assert_string_equal(rec.u.module.path, "/usr/bin/app");
	spulse_replay_close(r);
	tmp_remove(path);
}

/* next_record after some next_sample calls continues right after the last
 * sample handed out, although Replay decodes samples ahead in batches. */
static void records_continue_after_the_last_sample_returned(void **state)
{
	char *path = tmp_path();
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_record rec;
	struct spulse_sample s;
	struct read_result all;
	static const size_t ks[] = { 1, 2, 511, 512, 513, 1500, 2999, 3000 };
	size_t i, k, j, seen;

	(void)state;
	make_realistic(path, 3000, 8);
	read_replay(path, &all);
	assert_int_equal(all.ret, 0);
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		assert_int_equal(spulse_replay_rewind(r), 0);
		for (k = 0; k < ks[i]; k++)
			assert_int_equal(spulse_replay_next_sample(r, &s), 1);
		assert_memory_equal(&s, &all.samples[ks[i] - 1], sizeof(s));
		/* index of the record after the ks[i]-th sample */
		for (j = 0, seen = 0; seen < ks[i]; j++)
			if (all.records[j].tag == SPULSE_TAG_SAMPLE)
				seen++;
		if (j == all.nrecords) {
			assert_int_equal(spulse_replay_next_record(r, &rec), 0);
			continue;
		}
		assert_int_equal(spulse_replay_next_record(r, &rec), 1);
		assert_int_equal(rec.offset, all.records[j].offset);
		assert_int_equal(rec.tag, all.records[j].tag);
		if (rec.tag == SPULSE_TAG_SAMPLE)
			assert_memory_equal(&rec.u.sample, &all.records[j].u.sample,
					    sizeof(rec.u.sample));
		/* and samples continue after that record */
		if (rec.tag != SPULSE_TAG_SAMPLE && seen < all.nsamples) {
			assert_int_equal(spulse_replay_next_sample(r, &s), 1);
			assert_memory_equal(&s, &all.samples[seen], sizeof(s));
		}
	}
	spulse_replay_close(r);
	rr_free(&all);
	tmp_remove(path);
}

static void next_samples_matches_next_sample(void **state)
{
	char *path = tmp_path();
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_sample buf[700];
	struct read_result all;
	size_t n = 0;
	int k;

	(void)state;
	make_realistic(path, 5000, 9);
	read_replay(path, &all);
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	while ((k = spulse_replay_next_samples(r, buf, 1 + n % 700)) > 0) {
		assert_memory_equal(buf, &all.samples[n], (size_t)k * sizeof(*buf));
		n += (size_t)k;
	}
	assert_int_equal(k, 0);
	assert_int_equal(n, 5000);
	spulse_replay_close(r);
	rr_free(&all);
	tmp_remove(path);
}

static void missing_file_is_an_errno_not_bad_data(void **state)
{
	struct spulse_replay *r = (void *)1;
	struct spulse_error err;

	(void)state;
	assert_int_equal(spulse_replay_open("/nonexistent/x.spulse", NULL, &r, &err),
			 -ENOENT);
	assert_null(r);
	assert_int_equal(err.code, -ENOENT);
}

/*
 * A FIFO with no writer (or a directory) is refused at once by every
 * reader that opens a path, instead of blocking in open() or reading
 * something that is not a spool.
 */
static void non_regular_files_are_refused_without_blocking(void **state)
{
	char dir[] = "/tmp/spulse-fifo-XXXXXX", fifo[64];
	struct spulse_snapshot *s = NULL;
	struct spulse_replay *r = NULL;
	struct spulse_tail *t = NULL;
	struct spulse_error err;
	const char *paths[2];
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/f", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	paths[0] = fifo;
	paths[1] = dir;
	for (i = 0; i < 2; i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(spulse_snapshot_open(paths[i], NULL, &s, &err), -EINVAL);
		assert_null(s);
		assert_non_null(strstr(err.msg, "not a regular file"));
		assert_int_equal(spulse_replay_open(paths[i], NULL, &r, &err), -EINVAL);
		assert_null(r);
		assert_int_equal(err.code, -EINVAL);
		assert_int_equal(spulse_tail_open(paths[i], NULL, &t, &err), -EINVAL);
		assert_null(t);
		assert_non_null(strstr(err.msg, "not a regular file"));
	}
	unlink(fifo);
	rmdir(dir);
}

/*
 * Replay reads through mapped windows that never pass the file's current
 * size: a spool cut after open (anywhere, even on a record boundary) makes
 * iteration fail with -EIO instead of faulting or ending early in silence.
 */
static void file_shrunk_after_open_is_eio(void **state)
{
	char *path = tmp_path();
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_sample s;
	struct spulse_record rec;
	uint64_t total, n = 0;
	int ret, pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		struct stat st;

		make_realistic(path, 60000, 3);
		assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
		total = spulse_replay_info(r)->samples;
		assert_int_equal(stat(path, &st), 0);
		/* pass 0: cut in the middle; pass 1: cut at a record boundary */
		if (pass == 0) {
			assert_int_equal(truncate(path, st.st_size / 2), 0);
		} else {
			uint64_t cut = 0;

			while (spulse_replay_next_record(r, &rec) == 1)
				if (rec.offset > (uint64_t)st.st_size / 2 && !cut)
					cut = rec.offset;
			assert_true(cut > 0);
			assert_int_equal(spulse_replay_rewind(r), 0);
			assert_int_equal(truncate(path, (off_t)cut), 0);
		}
		n = 0;
		while ((ret = spulse_replay_next_sample(r, &s)) == 1)
			n++;
		assert_int_equal(ret, -EIO);
		assert_true(n < total);
		assert_int_equal(spulse_replay_rewind(r), 0);
		while ((ret = spulse_replay_next_record(r, &rec)) == 1)
			;
		assert_int_equal(ret, -EIO);
		spulse_replay_close(r);
	}
	tmp_remove(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay_memory_stops_growing_with_sample_count),
		cmocka_unit_test(index_has_one_entry_per_stride_up_to_the_limit),
		cmocka_unit_test(seek_lands_on_the_same_sample_as_snapshot),
		cmocka_unit_test(seek_restores_cpu_and_event_clock),
		cmocka_unit_test(rewind_restarts_records_from_the_first),
		cmocka_unit_test(records_continue_after_the_last_sample_returned),
		cmocka_unit_test(next_samples_matches_next_sample),
		cmocka_unit_test(missing_file_is_an_errno_not_bad_data),
		cmocka_unit_test(non_regular_files_are_refused_without_blocking),
		cmocka_unit_test(file_shrunk_after_open_is_eio),
	};

	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
