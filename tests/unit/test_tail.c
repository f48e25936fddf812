// SPDX-License-Identifier: MIT
/*
 * Tail against a live writer: a forked process records through the Recorder
 * while the parent polls; the parent ends with exactly the samples a
 * Snapshot of the finished file has. Also the per-poll batch limit and the
 * reuse of the batch storage (samples and off-CPU intervals: a poll stops
 * when either fills), and sticky errors on corrupt growth.
 */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void tail_follows_a_concurrent_writer_process(void **state)
{
	char *path = tmp_path();
	struct spulse_tail *t;
	struct spulse_error err;
	const struct spulse_sample *ss;
	struct read_result snap;
	struct spulse_sample *got = NULL;
	size_t ngot = 0, cap = 0, polls = 0;
	uint8_t *bytes;
	size_t len;
	int status, n, i;
	pid_t pid;
	bool done = false;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		make_realistic(path, 30000, 5);	/* flushes every 512 bytes */
		_exit(0);
	}
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	for (;;) {
		while ((n = spulse_tail_poll(t, &ss, &err)) > 0) {
			if (ngot + (size_t)n > cap) {
				cap = (ngot + (size_t)n) * 2;
				got = realloc(got, cap * sizeof(*got));
				assert_non_null(got);
			}
			memcpy(got + ngot, ss, (size_t)n * sizeof(*ss));
			ngot += (size_t)n;
		}
		if (n < 0)
			fail_msg("poll: %d at %llu: %s", n,
				 (unsigned long long)err.offset, err.msg);
		polls++;
		if (done)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			done = true;	/* one more poll after the writer is gone */
		} else {
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		}
	}
	bytes = read_file(path, &len);
	read_snapshot_mem(bytes, len, &snap);
	assert_int_equal(snap.ret, 0);
	assert_int_equal(snap.nsamples, 30000);
	assert_int_equal(ngot, snap.nsamples);
	for (i = 0; i < (int)ngot; i++)
		assert_memory_equal(&got[i], &snap.samples[i], sizeof(got[i]));
	assert_int_equal(spulse_tail_offset(t), len);
	print_message("tail: %zu polls while the writer ran\n", polls);
	rr_free(&snap);
	free(got);
	free(bytes);
	spulse_tail_close(t);
	tmp_remove(path);
}

static void poll_returns_at_most_16384_samples_in_reused_storage(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true };
	char *path = tmp_path();
	struct spulse_recorder *w;
	struct spulse_tail *t;
	struct spulse_error err;
	const struct spulse_sample *a, *b;
	uint32_t th, f, st;
	int i, n;

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &w), 0);
	assert_int_equal(spulse_rec_thread(w, 1, 1, "x", &th), 0);
	assert_int_equal(spulse_rec_frame_abs(w, SPULSE_FRAME_USER, 5, &f), 0);
	assert_int_equal(spulse_rec_stack(w, SPULSE_NONE, f, &st), 0);
	for (i = 0; i < 40000; i++)
		assert_int_equal(spulse_rec_sample(w, i, th, st), 0);
	assert_int_equal(spulse_recorder_close(w), 0);

	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_int_equal(spulse_tail_poll(t, &a, &err), SPULSE_TAIL_BATCH);
	assert_true(a[0].time_ns == 0 && a[SPULSE_TAIL_BATCH - 1].time_ns ==
		    SPULSE_TAIL_BATCH - 1);
	assert_int_equal(spulse_tail_poll(t, &b, &err), SPULSE_TAIL_BATCH);
	assert_ptr_equal(a, b);
	assert_true(b[0].time_ns == SPULSE_TAIL_BATCH);
	n = spulse_tail_poll(t, &b, &err);
	assert_int_equal(n, 40000 - 2 * SPULSE_TAIL_BATCH);
	assert_true(b[n - 1].time_ns == 39999);
	assert_int_equal(spulse_tail_poll(t, &b, &err), 0);
	assert_int_equal(spulse_tail_info(t)->samples, 40000);
	spulse_tail_close(t);
	tmp_remove(path);
}

static void corrupt_growth_is_a_sticky_error_with_offset(void **state)
{
	struct tbuf bb = { 0 };
	char *path;
	struct spulse_tail *t;
	struct spulse_error err;
	const struct spulse_sample *ss;
	size_t off;
	int fd;

	(void)state;
	tb_basic(&bb);
	TB(&bb, spulse_enc_sample, 1, 0, 0);
	path = tmp_write(bb.p, bb.len);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 1);
	off = bb.len;
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x2a", 1), 1);
	close(fd);
	memset(&err, 0, sizeof(err));
	assert_int_equal(spulse_tail_poll(t, &ss, &err), -EBADMSG);
	assert_int_equal(err.offset, off);
	assert_non_null(strstr(err.msg, "unknown record tag 0x2a"));
	memset(&err, 0, sizeof(err));
	assert_int_equal(spulse_tail_poll(t, &ss, &err), -EBADMSG);
	assert_int_equal(err.offset, off);
	spulse_tail_close(t);
	tmp_remove(path);
	tb_free(&bb);
}

static void samples_before_corruption_are_delivered_then_the_error(void **state)
{
	struct tbuf bb = { 0 };
	char *path;
	struct spulse_tail *t;
	struct spulse_error err;
	const struct spulse_sample *ss;
	size_t off;

	(void)state;
	tb_basic(&bb);
	TB(&bb, spulse_enc_sample, 1, 0, 0);
	TB(&bb, spulse_enc_sample, 1, 0, 0);
	off = TB(&bb, spulse_enc_sample, 1, 0, 5);
	TB(&bb, spulse_enc_sample, 1, 0, 0);
	path = tmp_write(bb.p, bb.len);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 2);
	assert_true(ss[1].time_ns == 2);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), -EBADMSG);
	assert_int_equal(err.offset, off + 3);
	assert_non_null(strstr(err.msg, "forward reference to stack 5"));
	spulse_tail_close(t);
	tmp_remove(path);
	tb_free(&bb);
}

static void tail_waits_for_a_file_that_has_no_header_yet(void **state)
{
	struct tbuf bb = { 0 };
	char *path = tmp_path();
	struct spulse_tail *t;
	struct spulse_error err;
	const struct spulse_sample *ss;
	int fd;

	(void)state;
	tb_basic(&bb);
	TB(&bb, spulse_enc_sample, 1, 0, 0);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 0);	/* empty */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, bb.p, 5), 5);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 0);
	assert_int_equal(spulse_tail_offset(t), 0);
	assert_int_equal(write(fd, bb.p + 5, bb.len - 5), (ssize_t)(bb.len - 5));
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 1);
	assert_int_equal(spulse_tail_info(t)->start_us, 1000);
	close(fd);
	spulse_tail_close(t);
	tmp_remove(path);
	tb_free(&bb);
}

/*
 * A spool of @nsamples samples then @nintervals intervals (interval k has
 * runq_ns = k, so order and identity are checkable).
 */
static char *batch_spool(unsigned nsamples, unsigned nintervals)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1,
					  .truncate = true, .flush_bytes = 1 << 16 };
	struct spulse_recorder *r;
	char *path = tmp_path();
	uint32_t th, f, st;
	unsigned k;

	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "t", &th), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL, 0xffff0000, &f), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f, &st), 0);
	for (k = 0; k < nsamples; k++)
		assert_int_equal(spulse_rec_sample_cpu(r, k, th, st, k & 1), 0);
	for (k = 0; k < nintervals; k++) {
		struct spulse_offcpu iv = {
			.time_ns = k, .thread = th, .stack = st,
			.state = SPULSE_STATE_RUNNABLE, .runq_ns = k,
			.waker_thread = SPULSE_NONE, .waker_stack = SPULSE_NONE,
			.waker_cpu = SPULSE_NONE,
		};

		assert_int_equal(spulse_rec_offcpu(r, &iv), 0);
	}
	assert_int_equal(spulse_recorder_close(r), 0);
	return path;
}

static void poll_returns_at_most_16384_intervals(void **state)
{
	char *path = batch_spool(0, 2 * SPULSE_TAIL_BATCH + 123);
	const struct spulse_sample *ss;
	const struct spulse_offcpu *iv, *first;
	struct spulse_error err;
	struct spulse_tail *t;
	unsigned want[] = { SPULSE_TAIL_BATCH, SPULSE_TAIL_BATCH, 123, 0, 0 };
	uint64_t next = 0, off = 0, size;
	uint8_t *bytes;
	size_t len;
	int i, k, j;

	(void)state;
	bytes = read_file(path, &len);
	free(bytes);
	size = len;
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(spulse_tail_poll(t, &ss, &err), 0);
		k = spulse_tail_offcpu(t, &iv);
		assert_int_equal(k, want[i]);
		if (i == 0)
			first = iv;
		assert_ptr_equal(iv, first);	/* storage reused */
		for (j = 0; j < k; j++, next++)
			assert_true(iv[j].runq_ns == next && iv[j].time_ns == (int64_t)next);
		/* a full batch stops the poll: the offset moved, but not to the end */
		assert_true(spulse_tail_offset(t) >= off);
		off = spulse_tail_offset(t);
		if (i < 2)
			assert_true(off < size);
		else
			assert_true(off == size);
		assert_true(spulse_tail_info(t)->complete_bytes == off);
	}
	assert_int_equal(next, 2 * SPULSE_TAIL_BATCH + 123);
	assert_int_equal(spulse_tail_info(t)->offcpu, next);
	spulse_tail_close(t);
	tmp_remove(path);
}

/* Samples fill first, then intervals: each poll stops at whichever fills. */
static void poll_stops_when_samples_or_intervals_fill(void **state)
{
	unsigned ns = SPULSE_TAIL_BATCH + 1000, ni = SPULSE_TAIL_BATCH + 2000;
	char *path = batch_spool(ns, ni);
	const struct spulse_sample *ss;
	const struct spulse_offcpu *iv;
	struct spulse_error err;
	struct spulse_tail *t;
	int n, k;

	(void)state;
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	n = spulse_tail_poll(t, &ss, &err);
	k = spulse_tail_offcpu(t, &iv);
	assert_int_equal(n, SPULSE_TAIL_BATCH);
	assert_int_equal(k, 0);
	assert_int_equal(ss[1].cpu, 1);
	n = spulse_tail_poll(t, &ss, &err);
	k = spulse_tail_offcpu(t, &iv);
	assert_int_equal(n, 1000);	/* the rest of the samples */
	assert_int_equal(k, SPULSE_TAIL_BATCH);
	assert_true(ss[0].time_ns == SPULSE_TAIL_BATCH);
	assert_int_equal(ss[0].cpu, SPULSE_TAIL_BATCH & 1);
	n = spulse_tail_poll(t, &ss, &err);
	k = spulse_tail_offcpu(t, &iv);
	assert_int_equal(n, 0);
	assert_int_equal(k, 2000);
	assert_true(iv[1999].runq_ns == ni - 1);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), 0);
	assert_int_equal(spulse_tail_offcpu(t, &iv), 0);
	assert_false(spulse_tail_info(t)->recovered_from_truncated_tail);
	spulse_tail_close(t);
	tmp_remove(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tail_follows_a_concurrent_writer_process),
		cmocka_unit_test(poll_returns_at_most_16384_samples_in_reused_storage),
		cmocka_unit_test(corrupt_growth_is_a_sticky_error_with_offset),
		cmocka_unit_test(samples_before_corruption_are_delivered_then_the_error),
		cmocka_unit_test(tail_waits_for_a_file_that_has_no_header_yet),
		cmocka_unit_test(poll_returns_at_most_16384_intervals),
		cmocka_unit_test(poll_stops_when_samples_or_intervals_fill),
	};

	return cmocka_run_group_tests_name("tail", tests, NULL, NULL);
}
