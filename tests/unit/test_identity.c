// SPDX-License-Identifier: MIT
/*
 * Identity (extension kind 4) and thread-source (kind 5) records
 * (FORMAT.md 3.10): written by the Recorder, read back the same by every
 * reader (Snapshot, Replay defs and records, Stream, Tail); old spools
 * have no identity; every rule is corruption at the documented offset.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static const struct spulse_identity id_a = {
	.recording_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
	.start_us = 1767225600000000ULL,
	.host = "web1", .machine_id = "0123456789abcdef0123456789abcdef",
	.boot_id = "b0", .kernel = "6.12.0-test",
};

static const struct spulse_identity id_b = {
	.recording_id = { 0xff, 0xee },
	.start_us = 1767225601000000ULL,
	.host = "db2", .machine_id = "", .boot_id = "", .kernel = "5.15",
};

/* Two identities, three threads: t0 no kind 5 (source 0), t1 -> 1, t2 -> 0. */
static char *write_two_sources(void)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000,
					  .truncate = true };
	struct spulse_recorder *r;
	char *path = tmp_path();
	uint32_t src, t, f, s;

	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_identity(r, &id_a, &src), 0);
	assert_int_equal(src, 0);
	assert_int_equal(spulse_rec_identity(r, &id_b, &src), 0);
	assert_int_equal(src, 1);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 0x1000, &f), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f, &s), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "a", &t), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "b", &t), 0);
	assert_int_equal(spulse_rec_thread_source(r, t, 1), 0);
	assert_int_equal(spulse_rec_thread(r, 2, 2, "c", &t), 0);
	assert_int_equal(spulse_rec_thread_source(r, t, 0), 0);
	assert_int_equal(spulse_rec_sample(r, 10, 0, s), 0);
	assert_int_equal(spulse_rec_sample(r, 20, 1, s), 0);
	assert_int_equal(spulse_recorder_close(r), 0);
	return path;
}

static void assert_identity(const struct spulse_identity *got,
			    const struct spulse_identity *want, uint32_t source)
{
	assert_int_equal(got->source, source);
	assert_memory_equal(got->recording_id, want->recording_id, 16);
	assert_int_equal(got->start_us, want->start_us);
	assert_string_equal(got->host, want->host);
	assert_string_equal(got->machine_id, want->machine_id);
	assert_string_equal(got->boot_id, want->boot_id);
	assert_string_equal(got->kernel, want->kernel);
}

static void assert_defs_two_sources(const struct spulse_defs *d)
{
	struct spulse_identity id;

	assert_int_equal(spulse_defs_identity_count(d), 2);
	assert_int_equal(spulse_defs_identity(d, 0, &id), 0);
	assert_identity(&id, &id_a, 0);
	assert_int_equal(spulse_defs_identity(d, 1, &id), 0);
	assert_identity(&id, &id_b, 1);
	assert_int_equal(spulse_defs_identity(d, 2, &id), -ENOENT);
	assert_int_equal(spulse_defs_thread_source(d, 0), 0);
	assert_int_equal(spulse_defs_thread_source(d, 1), 1);
	assert_int_equal(spulse_defs_thread_source(d, 2), 0);
	assert_int_equal(spulse_defs_thread_source(d, 3), SPULSE_NONE);
}

static void test_identities_round_trip_in_snapshot(void **state)
{
	struct spulse_snapshot *s;
	struct spulse_error err;
	char *path = write_two_sources();

	(void)state;
	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_defs_two_sources(spulse_snapshot_defs(s));
	assert_int_equal(spulse_snapshot_info(s)->identities, 2);
	spulse_snapshot_close(s);
	tmp_remove(path);
}

static void test_identities_round_trip_in_replay_defs_and_records(void **state)
{
	struct spulse_replay *r;
	struct spulse_error err;
	struct spulse_record rec;
	char *path = write_two_sources();
	int n4 = 0, n5 = 0;

	(void)state;
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	assert_defs_two_sources(spulse_replay_defs(r));
	while (spulse_replay_next_record(r, &rec) > 0) {
		if (rec.tag != SPULSE_TAG_EXT)
			continue;
		if (rec.ext_kind == SPULSE_EXT_IDENTITY) {
			assert_identity(&rec.u.identity, n4 ? &id_b : &id_a,
					(uint32_t)n4);
			n4++;
		} else if (rec.ext_kind == SPULSE_EXT_THREAD_SOURCE) {
			assert_int_equal(rec.u.thread_source.thread, n5 + 1);
			assert_int_equal(rec.u.thread_source.source,
					 n5 ? 0 : 1);
			n5++;
		}
	}
	assert_int_equal(n4, 2);
	assert_int_equal(n5, 2);
	spulse_replay_close(r);
	tmp_remove(path);
}

static void test_identities_round_trip_in_stream_byte_by_byte(void **state)
{
	struct spulse_stream *st;
	struct spulse_record rec;
	struct spulse_error err;
	size_t len, i;
	char *path = write_two_sources();
	uint8_t *p = read_file(path, &len);
	int n4 = 0, r;

	(void)state;
	assert_int_equal(spulse_stream_new(NULL, &st), 0);
	for (i = 0; i < len; i++) {
		assert_int_equal(spulse_stream_feed(st, p + i, 1), 0);
		while ((r = spulse_stream_next(st, &rec, &err)) > 0)
			if (rec.tag == SPULSE_TAG_EXT &&
			    rec.ext_kind == SPULSE_EXT_IDENTITY) {
				assert_identity(&rec.u.identity,
						n4 ? &id_b : &id_a,
						(uint32_t)n4);
				n4++;
			}
		assert_int_equal(r, 0);
	}
	assert_int_equal(n4, 2);
	assert_defs_two_sources(spulse_stream_defs(st));
	spulse_stream_free(st);
	free(p);
	tmp_remove(path);
}

static void test_identities_round_trip_in_tail(void **state)
{
	const struct spulse_sample *smp;
	struct spulse_tail *t;
	struct spulse_error err;
	char *path = write_two_sources();

	(void)state;
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_int_equal(spulse_tail_poll(t, &smp, &err), 2);
	assert_defs_two_sources(spulse_tail_defs(t));
	assert_int_equal(spulse_tail_info(t)->identities, 2);
	spulse_tail_close(t);
	tmp_remove(path);
}

static void test_old_spool_has_no_identity_and_no_source(void **state)
{
	struct spulse_snapshot *s;
	struct spulse_error err;
	struct spulse_identity id;
	struct tbuf b = { 0 };

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_sample, 5, 0, 0);
	assert_int_equal(spulse_snapshot_open_mem(b.p, b.len, NULL, &s, &err), 0);
	assert_int_equal(spulse_defs_identity_count(spulse_snapshot_defs(s)), 0);
	assert_int_equal(spulse_defs_identity(spulse_snapshot_defs(s), 0, &id),
			 -ENOENT);
	assert_int_equal(spulse_defs_thread_source(spulse_snapshot_defs(s), 0),
			 SPULSE_NONE);
	assert_int_equal(spulse_snapshot_info(s)->identities, 0);
	spulse_snapshot_close(s);
	tb_free(&b);
}

/* Identity payload with source @source; returns offsets via @at. */
static size_t put_identity(struct tbuf *b, uint64_t source, const char *host,
			   size_t host_len, size_t at[3])
{
	uint8_t pay[1024];
	uint8_t hdr[SPULSE_EXT_HDR_MAX];
	size_t n = 0, h, base;

	n += spulse_put_uvar(pay + n, source);
	at[1] = n;
	memset(pay + n, 0xab, 16);
	n += 16;
	n += spulse_put_uvar(pay + n, 1000);
	at[2] = n;
	n += spulse_put_bytes(pay + n, host, host_len);
	n += spulse_put_bytes(pay + n, "", 0);
	n += spulse_put_bytes(pay + n, "", 0);
	n += spulse_put_bytes(pay + n, "k", 1);
	h = spulse_put_ext_hdr(hdr, SPULSE_EXT_IDENTITY, n);
	tb_raw(b, hdr, h);
	base = b->len;
	tb_raw(b, pay, n);
	at[0] = base;
	return base;
}

static void test_identity_source_out_of_order_is_corrupt_at_source(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3];

	(void)state;
	tb_header(&b);
	put_identity(&b, 1, "h", 1, at);
	expect_corrupt(b.p, b.len, at[0], "out of order");
	tb_free(&b);
}

static void test_second_identity_repeating_source_is_corrupt(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3];

	(void)state;
	tb_header(&b);
	put_identity(&b, 0, "h", 1, at);
	put_identity(&b, 0, "h2", 2, at);
	expect_corrupt(b.p, b.len, at[0], "identity source 0 out of order");
	tb_free(&b);
}

static void test_two_identities_in_order_are_valid(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3];

	(void)state;
	tb_header(&b);
	put_identity(&b, 0, "h", 1, at);
	put_identity(&b, 1, "h2", 2, at);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void test_identity_host_over_255_is_corrupt_at_its_length(void **state)
{
	struct tbuf b = { 0 };
	char host[256];
	size_t at[3];

	(void)state;
	memset(host, 'x', sizeof(host));
	tb_header(&b);
	put_identity(&b, 0, host, 255, at);
	expect_valid(b.p, b.len);
	put_identity(&b, 1, host, 256, at);
	expect_corrupt(b.p, b.len, at[0] + at[2], "host length 256 exceeds");
	tb_free(&b);
}

static void test_identity_cut_by_eof_is_a_recovered_tail(void **state)
{
	struct spulse_snapshot *s;
	struct spulse_error err;
	struct tbuf b = { 0 };
	size_t at[3], hdr_end;

	(void)state;
	tb_header(&b);
	hdr_end = b.len;
	put_identity(&b, 0, "host", 4, at);
	assert_int_equal(spulse_snapshot_open_mem(b.p, at[0] + at[1] + 7, NULL,
						  &s, &err), 0);
	assert_true(spulse_snapshot_recovered_from_truncated_tail(s));
	assert_int_equal(spulse_snapshot_info(s)->complete_bytes, hdr_end);
	assert_int_equal(spulse_defs_identity_count(spulse_snapshot_defs(s)), 0);
	spulse_snapshot_close(s);
	tb_free(&b);
}

static void test_identity_with_bytes_left_over_is_corrupt(void **state)
{
	struct tbuf b = { 0 };
	uint8_t pay[64], hdr[SPULSE_EXT_HDR_MAX];
	size_t n = 0, h;

	(void)state;
	tb_header(&b);
	n += spulse_put_uvar(pay + n, 0);
	memset(pay + n, 0, 16);
	n += 16;
	n += spulse_put_uvar(pay + n, 1);
	n += spulse_put_bytes(pay + n, "h", 1);
	n += spulse_put_bytes(pay + n, "", 0);
	n += spulse_put_bytes(pay + n, "", 0);
	n += spulse_put_bytes(pay + n, "", 0);
	pay[n++] = 0x77;
	h = spulse_put_ext_hdr(hdr, SPULSE_EXT_IDENTITY, n);
	tb_raw(&b, hdr, h);
	tb_raw(&b, pay, n);
	expect_corrupt(b.p, b.len, b.len - 1, "left over");
	tb_free(&b);
}

static size_t put_thread_source(struct tbuf *b, uint64_t thread,
				uint64_t source, size_t *source_off)
{
	uint8_t pay[32], hdr[SPULSE_EXT_HDR_MAX];
	size_t n = 0, h, base, so;

	n += spulse_put_uvar(pay, thread);
	so = n;
	n += spulse_put_uvar(pay + n, source);
	h = spulse_put_ext_hdr(hdr, SPULSE_EXT_THREAD_SOURCE, n);
	tb_raw(b, hdr, h);
	base = b->len;
	tb_raw(b, pay, n);
	if (source_off)
		*source_off = base + so;
	return base;
}

static void test_thread_source_of_undefined_thread_is_corrupt(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3], off;

	(void)state;
	tb_basic(&b);		/* thread 0 only */
	put_identity(&b, 0, "h", 1, at);
	off = put_thread_source(&b, 1, 0, NULL);
	expect_corrupt(b.p, b.len, off, "forward reference to thread 1");
	tb_free(&b);
}

static void test_thread_source_of_undefined_source_is_corrupt(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3], off;

	(void)state;
	tb_basic(&b);
	put_identity(&b, 0, "h", 1, at);
	put_thread_source(&b, 0, 1, &off);
	expect_corrupt(b.p, b.len, off, "forward reference to source 1");
	tb_free(&b);
}

static void test_second_thread_source_is_corrupt_at_thread(void **state)
{
	struct tbuf b = { 0 };
	size_t at[3], off;

	(void)state;
	tb_basic(&b);
	put_identity(&b, 0, "h", 1, at);
	put_identity(&b, 1, "h2", 2, at);
	put_thread_source(&b, 0, 1, NULL);
	expect_valid(b.p, b.len);
	off = put_thread_source(&b, 0, 0, NULL);
	expect_corrupt(b.p, b.len, off, "thread 0 already has a source");
	tb_free(&b);
}

static void test_recorder_refuses_bad_identities_and_sources(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000,
					  .truncate = true };
	struct spulse_identity bad = id_a;
	struct spulse_recorder *r;
	char *path = tmp_path(), host[300];
	uint32_t t, src;

	(void)state;
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "a", &t), 0);
	assert_int_equal(spulse_rec_thread_source(r, t, 0), -ENOENT);
	bad.host = host;
	assert_int_equal(spulse_rec_identity(r, &bad, &src), -EINVAL);
	bad = id_a;
	bad.start_us = SPULSE_MAX_START_US + 1;
	assert_int_equal(spulse_rec_identity(r, &bad, &src), -EINVAL);
	assert_int_equal(spulse_rec_identity(r, &id_a, &src), 0);
	assert_int_equal(spulse_rec_thread_source(r, t, 0), 0);
	assert_int_equal(spulse_rec_thread_source(r, t, 0), -EEXIST);
	assert_int_equal(spulse_rec_thread_source(r, t + 1, 0), -ENOENT);
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_IDENTITY, "x", 1),
			 -EINVAL);
	assert_int_equal(spulse_recorder_close(r), 0);
	tmp_remove(path);
}

static void test_identity_local_describes_this_host(void **state)
{
	struct spulse_identity a, b;
	char buf[1024], buf2[1024], small[100];
	struct utsname u;

	(void)state;
	assert_int_equal(uname(&u), 0);
	assert_int_equal(spulse_identity_local(&a, 42, buf, sizeof(buf)), 0);
	assert_string_equal(a.host, u.nodename);
	assert_string_equal(a.kernel, u.release);
	assert_int_equal(a.start_us, 42);
	assert_int_equal(a.recording_id[6] >> 4, 4);	/* UUID v4 */
	assert_int_equal(a.recording_id[8] >> 6, 2);
	if (access("/proc/sys/kernel/random/boot_id", R_OK) == 0)
		assert_int_equal(strlen(a.boot_id), 36);
	assert_null(strchr(a.machine_id, '\n'));
	assert_int_equal(spulse_identity_local(&b, 42, buf2, sizeof(buf2)), 0);
	assert_memory_not_equal(a.recording_id, b.recording_id, 16);
	assert_int_equal(spulse_identity_local(&b, 42, small, sizeof(small)),
			 -ENOSPC);
}

static void test_recording_id_hex_is_32_lower_case_digits(void **state)
{
	char hex[33];

	(void)state;
	spulse_recording_id_hex(id_b.recording_id, hex);
	assert_string_equal(hex, "ffee0000000000000000000000000000");
}

/*
 * Strings are bytes (FORMAT.md 2): identity strings, comms and module paths
 * holding NUL bytes are written whole by the _n recorder calls and handed
 * out whole, with their lengths, by Snapshot, Replay records and Stream.
 */
static void test_strings_with_nul_bytes_keep_every_byte(void **state)
{
	static const char host[] = "h\"'\\\0tail";
	static const char mid[64] = { 0 };
	struct spulse_identity id = {
		.start_us = 1, .host = host, .host_len = sizeof(host) - 1,
		.machine_id = mid, .machine_id_len = sizeof(mid),
		.boot_id = NULL, .boot_id_len = 0, .kernel = "k\0x",
		.kernel_len = 3,
	};
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000,
					  .truncate = true };
	struct spulse_recorder *r;
	struct spulse_snapshot *s;
	struct spulse_replay *rp;
	struct spulse_error err;
	struct spulse_identity got;
	struct spulse_thread th;
	struct spulse_module m;
	struct spulse_record rec;
	char *path = tmp_path();
	uint32_t src, t0, t1, t2, mod;
	int n_ident = 0;

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_identity_n(r, &id, &src), 0);
	assert_int_equal(spulse_rec_thread_n(r, 1, 1, "c\0d", 3, &t0), 0);
	assert_int_equal(spulse_rec_thread_n(r, 1, 1, "c\0e", 3, &t1), 0);
	assert_int_not_equal(t0, t1);
	assert_int_equal(spulse_rec_thread_n(r, 1, 1, "c\0d", 3, &t2), 0);
	assert_int_equal(t0, t2);
	assert_int_equal(spulse_rec_thread_n(r, 1, 1, "x", SPULSE_MAX_COMM + 1,
					     &t2), -EINVAL);
	assert_int_equal(spulse_rec_module_n(r, 1, 0x1000, 0x2000, 0, "/a\0b",
					     4, NULL, 0, &mod), 0);
	id.host_len = SPULSE_MAX_HOST + 1;
	assert_int_equal(spulse_rec_identity_n(r, &id, &src), -EINVAL);
	assert_int_equal(spulse_recorder_close(r), 0);

	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_int_equal(spulse_defs_identity(spulse_snapshot_defs(s), 0, &got), 0);
	assert_int_equal(got.host_len, sizeof(host) - 1);
	assert_memory_equal(got.host, host, sizeof(host) - 1);
	assert_int_equal(got.machine_id_len, 64);
	assert_memory_equal(got.machine_id, mid, 64);
	assert_int_equal(got.boot_id_len, 0);
	assert_int_equal(got.kernel_len, 3);
	assert_memory_equal(got.kernel, "k\0x", 3);
	assert_int_equal(spulse_defs_thread(spulse_snapshot_defs(s), t1, &th), 0);
	assert_int_equal(th.comm_len, 3);
	assert_memory_equal(th.comm, "c\0e", 3);
	assert_int_equal(spulse_defs_module(spulse_snapshot_defs(s), mod, &m), 0);
	assert_int_equal(m.path_len, 4);
	assert_memory_equal(m.path, "/a\0b", 4);
	spulse_snapshot_close(s);

	assert_int_equal(spulse_replay_open(path, NULL, &rp, &err), 0);
	while (spulse_replay_next_record(rp, &rec) == 1) {
		if (rec.tag != SPULSE_TAG_EXT || rec.ext_kind != 4)
			continue;
		n_ident++;
		assert_int_equal(rec.u.identity.host_len, sizeof(host) - 1);
		assert_memory_equal(rec.u.identity.host, host, sizeof(host) - 1);
		assert_int_equal(rec.u.identity.machine_id_len, 64);
		assert_int_equal(rec.u.identity.kernel_len, 3);
	}
	assert_int_equal(n_ident, 1);
	spulse_replay_close(rp);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identities_round_trip_in_snapshot),
		cmocka_unit_test(test_identities_round_trip_in_replay_defs_and_records),
		cmocka_unit_test(test_identities_round_trip_in_stream_byte_by_byte),
		cmocka_unit_test(test_identities_round_trip_in_tail),
		cmocka_unit_test(test_old_spool_has_no_identity_and_no_source),
		cmocka_unit_test(test_identity_source_out_of_order_is_corrupt_at_source),
		cmocka_unit_test(test_second_identity_repeating_source_is_corrupt),
		cmocka_unit_test(test_two_identities_in_order_are_valid),
		cmocka_unit_test(test_identity_host_over_255_is_corrupt_at_its_length),
		cmocka_unit_test(test_identity_cut_by_eof_is_a_recovered_tail),
		cmocka_unit_test(test_identity_with_bytes_left_over_is_corrupt),
		cmocka_unit_test(test_thread_source_of_undefined_thread_is_corrupt),
		cmocka_unit_test(test_thread_source_of_undefined_source_is_corrupt),
		cmocka_unit_test(test_second_thread_source_is_corrupt_at_thread),
		cmocka_unit_test(test_recorder_refuses_bad_identities_and_sources),
		cmocka_unit_test(test_identity_local_describes_this_host),
		cmocka_unit_test(test_recording_id_hex_is_32_lower_case_digits),
		cmocka_unit_test(test_strings_with_nul_bytes_keep_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
