// SPDX-License-Identifier: MIT
/*
 * Recorder rules: interning, checked arithmetic and normalization, refusal
 * of anything the format forbids, whole-record appends (the file is a valid
 * spool after every call), and behaviour when the file cannot grow
 * (RLIMIT_FSIZE with SIGXFSZ ignored, /dev/full).
 */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct spulse_recorder *new_rec(char **path, size_t flush)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .flush_bytes = flush, .start_us = 1 };
	struct spulse_recorder *r;

	*path = tmp_path();
	assert_int_equal(spulse_recorder_open(*path, &o, &r), 0);
	return r;
}

static void interning_returns_the_same_id_for_the_same_content(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 0);
	uint32_t m, a, b, c, s1, s2, t1, t2, t3;

	(void)state;
	assert_int_equal(spulse_rec_module(r, 7, 0x1000, 0x2000, 0, "m", NULL, 0, &m), 0);
	assert_int_equal(spulse_rec_frame_addr(r, 7, 0x1500, false, false, &a), 0);
	assert_int_equal(spulse_rec_frame_module(r, m, 0x500, &b), 0);
	assert_int_equal(a, b);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 0x1500, &c), 0);
	assert_int_not_equal(a, c);	/* absolute is a different frame */
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, a, &s1), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, a, &s2), 0);
	assert_int_equal(s1, s2);
	assert_int_equal(spulse_rec_stack(r, s1, c, &s2), 0);
	assert_int_not_equal(s1, s2);
	assert_int_equal(spulse_rec_thread(r, 7, 8, "a", &t1), 0);
	assert_int_equal(spulse_rec_thread(r, 7, 8, "a", &t2), 0);
	assert_int_equal(spulse_rec_thread(r, 7, 8, "b", &t3), 0);
	assert_int_equal(t1, t2);
	assert_int_not_equal(t1, t3);
	assert_int_equal(spulse_recorder_close(r), 0);
	{
		size_t len;
		uint8_t *b = read_file(path, &len);

		assert_int_equal(expect_valid(b, len), 0);
		free(b);
	}
	tmp_remove(path);
}

static void return_address_zero_cannot_be_normalized(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 0);
	uint32_t id;

	(void)state;
	assert_int_equal(spulse_rec_frame_addr(r, 1, 0, false, true, &id), -EOVERFLOW);
	assert_int_equal(spulse_rec_frame_addr(r, 1, 0, true, true, &id), -EOVERFLOW);
	assert_int_equal(spulse_rec_frame_addr(r, 1, 0, false, false, &id), 0);
	assert_int_equal(spulse_recorder_close(r), 0);
	tmp_remove(path);
}

static void module_relative_frames_follow_module_lifetime(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 0);
	uint32_t m, m2, f1, f2, f3, id;
	struct spulse_snapshot *s;
	struct spulse_error err;
	struct spulse_frame fr;

	(void)state;
	assert_int_equal(spulse_rec_module(r, 7, 0x1000, 0x2000, 0x100, "m", NULL, 0, &m), 0);
	assert_int_equal(spulse_rec_frame_addr(r, 7, 0x1800, false, false, &f1), 0);
	assert_int_equal(spulse_rec_frame_module(r, m, 0xff, &id), -ERANGE);
	assert_int_equal(spulse_rec_frame_module(r, m, 0x1100, &id), -ERANGE);
	assert_int_equal(spulse_rec_frame_module(r, m + 1, 0x200, &id), -ENOENT);
	assert_int_equal(spulse_rec_module_deactivate(r, m), 0);
	assert_int_equal(spulse_rec_module_deactivate(r, m), -EINVAL);
	/* known frame keeps its id; a new one in the retired module is refused */
	assert_int_equal(spulse_rec_frame_module(r, m, 0x900, &id), 0);
	assert_int_equal(id, f1);
	assert_int_equal(spulse_rec_frame_module(r, m, 0x901, &id), -EINVAL);
	/* the same address now has no module: absolute */
	assert_int_equal(spulse_rec_frame_addr(r, 7, 0x1800, false, false, &f2), 0);
	assert_int_not_equal(f2, f1);
	/* a remap at another place: module-relative to the new module */
	assert_int_equal(spulse_rec_module(r, 7, 0x5000, 0x6000, 0x100, "m", NULL, 0, &m2), 0);
	assert_int_equal(spulse_rec_frame_addr(r, 7, 0x5800, false, false, &f3), 0);
	assert_int_equal(spulse_rec_process_deactivate(r, 7), 0);
	assert_int_equal(spulse_rec_module_deactivate(r, m2), -EINVAL);
	assert_int_equal(spulse_recorder_close(r), 0);
	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_int_equal(spulse_defs_frame(spulse_snapshot_defs(s), f3, &fr), 0);
	assert_int_equal(fr.kind, SPULSE_FRAME_MODULE);
	assert_int_equal(fr.module, m2);
	assert_true(fr.addr == 0x900);
	assert_int_equal(spulse_defs_frame(spulse_snapshot_defs(s), f2, &fr), 0);
	assert_int_equal(fr.kind, SPULSE_FRAME_USER);
	spulse_snapshot_close(s);
	tmp_remove(path);
}

static void overlapping_mapping_newest_one_wins(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 0);
	uint32_t m1, m2, f, other;
	struct spulse_snapshot *s;
	struct spulse_error err;
	struct spulse_frame fr;

	(void)state;
	assert_int_equal(spulse_rec_module(r, 9, 0x1000, 0x3000, 0, "old", NULL, 0, &m1), 0);
	assert_int_equal(spulse_rec_module(r, 9, 0x2000, 0x4000, 0x500, "new", NULL, 0, &m2), 0);
	assert_int_equal(spulse_rec_frame_addr(r, 9, 0x2100, false, false, &f), 0);
	/* another process's mappings are never used */
	assert_int_equal(spulse_rec_frame_addr(r, 10, 0x2100, false, false, &other), 0);
	assert_int_equal(spulse_recorder_close(r), 0);
	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_int_equal(spulse_defs_frame(spulse_snapshot_defs(s), f, &fr), 0);
	assert_int_equal(fr.kind, SPULSE_FRAME_MODULE);
	assert_int_equal(fr.module, m2);
	assert_true(fr.addr == 0x600);
	assert_int_equal(spulse_defs_frame(spulse_snapshot_defs(s), other, &fr), 0);
	assert_int_equal(fr.kind, SPULSE_FRAME_USER);
	spulse_snapshot_close(s);
	tmp_remove(path);
}

static void recorder_refuses_what_the_format_forbids(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 0);
	uint32_t tr, f, st, th, id, i, node;
	char longpath[SPULSE_MAX_STRING + 2];
	uint8_t bid[SPULSE_MAX_BUILD_ID + 1] = { 0 };

	(void)state;
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(spulse_rec_module(r, 1, 5, 5, 0, "x", NULL, 0, &id), -EINVAL);
	assert_int_equal(spulse_rec_module(r, 1, 0, 0x10, UINT64_MAX - 4, "x",
					   NULL, 0, &id), -EOVERFLOW);
	assert_int_equal(spulse_rec_module(r, 1, 0, 1, 0, longpath, NULL, 0, &id), -EINVAL);
	assert_int_equal(spulse_rec_module(r, 1, 0, 1, 0, "x", bid, sizeof(bid), &id),
			 -EINVAL);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_MODULE, 1, &id), -EINVAL);
	assert_int_equal(spulse_rec_frame_truncated(r, &tr), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL, 1, &f), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f, &st), 0);
	assert_int_equal(spulse_rec_stack(r, st, tr, &id), -EINVAL);
	assert_int_equal(spulse_rec_stack(r, st + 1, f, &id), -ENOENT);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f + 1, &id), -ENOENT);
	assert_int_equal(spulse_rec_stack_frames(r, &f, 0, &id), -EINVAL);
	node = SPULSE_NONE;
	for (i = 0; i < SPULSE_MAX_DEPTH; i++)
		assert_int_equal(spulse_rec_stack(r, node, f, &node), 0);
	assert_int_equal(spulse_rec_stack(r, node, f, &id), -E2BIG);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "t", &th), 0);
	assert_int_equal(spulse_rec_sample(r, -1, th, st), -EINVAL);
	assert_int_equal(spulse_rec_sample(r, 0, th + 1, st), -ENOENT);
	assert_int_equal(spulse_rec_sample(r, 0, th, node + 1), -ENOENT);
	/* start_us 1: the clock ends at INT64_MAX - 1000 ns */
	assert_int_equal(spulse_rec_sample(r, INT64_MAX - 999, th, node),
			 -EOVERFLOW);
	assert_int_equal(spulse_rec_sample_cpu(r, INT64_MAX - 999, th, node, 0),
			 -EOVERFLOW);
	assert_int_equal(spulse_rec_sample(r, INT64_MAX - 1000, th, node), 0);
	assert_int_equal(spulse_rec_sample(r, 0, th, node), 0);
	assert_int_equal(spulse_recorder_close(r), 0);
	{
		size_t len;
		uint8_t *b = read_file(path, &len);

		assert_int_equal(expect_valid(b, len), 2);
		free(b);
	}
	tmp_remove(path);
}

static void start_beyond_the_nanosecond_clock_is_refused(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .start_us = SPULSE_MAX_START_US + 1 };
	char *path = tmp_path();
	struct spulse_recorder *r;
	uint32_t th, f, st;
	size_t len;
	uint8_t *b;

	(void)state;
	unlink(path);
	assert_int_equal(spulse_recorder_open(path, &o, &r), -EOVERFLOW);
	assert_null(r);
	assert_int_equal(access(path, F_OK), -1);	/* nothing created */
	o.start_us = SPULSE_MAX_START_US;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "t", &th), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 1, &f), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f, &st), 0);
	/* INT64_MAX - MAX_START_US * 1000 = 807 ns of clock left */
	assert_int_equal(spulse_rec_sample(r, 807, th, st), 0);
	assert_int_equal(spulse_rec_sample(r, 808, th, st), -EOVERFLOW);
	assert_int_equal(spulse_recorder_close(r), 0);
	b = read_file(path, &len);
	assert_int_equal(expect_valid(b, len), 1);
	free(b);
	tmp_remove(path);
}

static void existing_file_is_not_overwritten_without_truncate(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o) };
	char *path = tmp_path();
	struct spulse_recorder *r;

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &r), -EEXIST);
	assert_null(r);
	tmp_remove(path);
}

static void file_is_a_complete_spool_after_every_flush(void **state)
{
	char *path;
	struct spulse_recorder *r = new_rec(&path, 64);
	uint32_t th, f[3], st;
	struct stat sb;
	int i, valid_checks = 0;

	(void)state;
	assert_int_equal(spulse_rec_thread(r, 3, 3, "w", &th), 0);
	for (i = 0; i < 400; i++) {
		size_t len;
		uint8_t *b;
		struct read_result rr;

		assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER,
						      (uint64_t)i % 37, &f[0]), 0);
		assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL,
						      (uint64_t)i % 5, &f[1]), 0);
		assert_int_equal(spulse_rec_stack_frames(r, f, 2, &st), 0);
		assert_int_equal(spulse_rec_sample(r, i, th, st), 0);
		assert_int_equal(stat(path, &sb), 0);
		b = read_file(path, &len);
		read_snapshot_mem(b, len, &rr);
		assert_int_equal(rr.ret, 0);
		assert_false(rr.info.recovered_from_truncated_tail);
		assert_true(spulse_recorder_bytes(r) >= len);
		assert_true(spulse_recorder_bytes(r) - len < 64 + SPULSE_MAX_RECORD);
		valid_checks++;
		rr_free(&rr);
		free(b);
	}
	assert_int_equal(spulse_recorder_flush(r), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal((uint64_t)sb.st_size, spulse_recorder_bytes(r));
	assert_int_equal(spulse_recorder_close(r), 0);
	assert_int_equal(valid_checks, 400);
	tmp_remove(path);
}

/* Child: record until the file size limit stops it; exit code = -error. */
static void child_record_until_full(const char *path)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .flush_bytes = 100, .start_us = 1 };
	struct rlimit rl = { 3000, 3000 };
	struct spulse_recorder *r;
	uint32_t th, f, st;
	int i, ret = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		_exit(100);
	if (spulse_recorder_open(path, &o, &r))
		_exit(101);
	if (spulse_rec_thread(r, 1, 1, "t", &th) ||
	    spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 1, &f) ||
	    spulse_rec_stack(r, SPULSE_NONE, f, &st))
		_exit(102);
	for (i = 0; i < 100000 && !ret; i++)
		ret = spulse_rec_sample(r, (int64_t)i * 1000, th, st);
	if (!ret)
		_exit(103);
	/* sticky: later calls fail the same way, close reports it */
	if (spulse_rec_sample(r, (int64_t)i * 1000, th, st) != ret)
		_exit(104);
	if (spulse_recorder_close(r) != ret)
		_exit(105);
	_exit(-ret);
}

static void full_file_leaves_a_readable_prefix_and_reports_the_error(void **state)
{
	char *path = tmp_path();
	struct read_result rr;
	uint8_t *b;
	size_t len, i;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_record_until_full(path);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EFBIG);
	b = read_file(path, &len);
	assert_true(len <= 3000 && len > 2800);
	read_snapshot_mem(b, len, &rr);
	assert_int_equal(rr.ret, 0);
	assert_true(rr.nsamples > 500);
	for (i = 0; i < rr.nsamples; i++)
		assert_true(rr.samples[i].time_ns == (int64_t)i * 1000);
	rr_free(&rr);
	free(b);
	tmp_remove(path);
}

static void device_without_space_fails_open_with_enospc(void **state)
{
	struct spulse_recorder *r;
	int fd = open("/dev/full", O_WRONLY);

	(void)state;
	if (fd < 0)
		skip();
	assert_int_equal(spulse_recorder_fdopen(fd, NULL, &r), -ENOSPC);
	assert_null(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interning_returns_the_same_id_for_the_same_content),
		cmocka_unit_test(return_address_zero_cannot_be_normalized),
		cmocka_unit_test(module_relative_frames_follow_module_lifetime),
		cmocka_unit_test(overlapping_mapping_newest_one_wins),
		cmocka_unit_test(recorder_refuses_what_the_format_forbids),
		cmocka_unit_test(start_beyond_the_nanosecond_clock_is_refused),
		cmocka_unit_test(existing_file_is_not_overwritten_without_truncate),
		cmocka_unit_test(file_is_a_complete_spool_after_every_flush),
		cmocka_unit_test(full_file_leaves_a_readable_prefix_and_reports_the_error),
		cmocka_unit_test(device_without_space_fails_open_with_enospc),
	};

	return cmocka_run_group_tests_name("recorder", tests, NULL, NULL);
}
