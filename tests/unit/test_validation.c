// SPDX-License-Identifier: MIT
/*
 * One test per validation rule of docs/FORMAT.md, each with hand-built bytes
 * (shared encoders) and checked in every reader: Snapshot, Replay, Stream
 * (whole and byte by byte) and Tail must all report -EBADMSG at the same
 * byte offset naming the same rule. Plus the nearby valid cases, so that
 * each rule is shown to be exactly as strict as the format says.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* offset of the field after the tag and @n one-byte varints */
#define F(rec, n) ((rec) + 1 + (n))

static void bad_magic_is_corruption_at_offset_0(void **state)
{
	static const uint8_t h[] = { 'S', 'P', 'U', 'L', 'S', 'E', '2', 0, 0, 0 };

	(void)state;
	expect_corrupt(h, sizeof(h), 0, "bad magic");
	/* even when the file ends right after the first wrong byte */
	expect_corrupt(h, 7, 0, "bad magic");
	expect_corrupt("X", 1, 0, "bad magic");
}

static void unknown_record_tags_are_corruption(void **state)
{
	static const uint8_t tags[] = { 0x00, 0x0a, 0x2a, 0xff };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tags); i++) {
		struct tbuf b = { 0 };
		size_t off;
		char msg[64];

		tb_basic(&b);
		off = b.len;
		tb_raw(&b, &tags[i], 1);
		snprintf(msg, sizeof(msg), "unknown record tag 0x%02x", tags[i]);
		expect_corrupt(b.p, b.len, off, msg);
		tb_free(&b);
	}
}

static void unknown_frame_kind_is_corruption_at_the_kind(void **state)
{
	struct tbuf b = { 0 };
	static const uint8_t rec[] = { SPULSE_TAG_FRAME, 1, 7, 0x10 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = b.len;
	tb_raw(&b, rec, sizeof(rec));
	expect_corrupt(b.p, b.len, off + 2, "unknown frame kind 7");
	tb_free(&b);
}

static void duplicate_module_id_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_module, 0, 100, 0x1000, 0x2000, 0, "x", 1, NULL, 0);
	expect_corrupt(b.p, b.len, F(off, 0), "duplicate module id 0");
	tb_free(&b);
}

static void gap_in_frame_ids_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_frame_abs, 9, SPULSE_FRAME_KERNEL, 0xffff);
	expect_corrupt(b.p, b.len, F(off, 0), "gap: frame id 9 but 1 defined");
	tb_free(&b);
}

static void first_id_of_each_kind_must_be_zero(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_header(&b);
	off = TB(&b, spulse_enc_thread, 1, 1, 1, "a", 1);
	expect_corrupt(b.p, b.len, F(off, 0), "gap: thread id 1 but 0 defined");
	tb_free(&b);
}

static void duplicate_stack_and_thread_ids_are_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_stack, 0, SPULSE_STACK_ROOT, 0);
	expect_corrupt(b.p, b.len, F(off, 0), "duplicate stack id 0");
	tb_free(&b);
	tb_basic(&b);
	off = TB(&b, spulse_enc_thread, 0, 5, 5, "t", 1);
	expect_corrupt(b.p, b.len, F(off, 0), "duplicate thread id 0");
	tb_free(&b);
}

static void same_content_under_two_ids_is_valid(void **state)
{
	struct tbuf b = { 0 };

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_frame_abs, 1, SPULSE_FRAME_USER, 0x1234);
	TB(&b, spulse_enc_stack, 1, SPULSE_STACK_ROOT, 1);
	TB(&b, spulse_enc_thread, 1, 100, 101, "app", 3);
	TB(&b, spulse_enc_sample, 5, 1, 1);
	assert_int_equal(expect_valid(b.p, b.len), 1);
	tb_free(&b);
}

static void sample_forward_reference_to_stack_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_sample, 10, 0, 12);
	expect_corrupt(b.p, b.len, F(off, 2), "forward reference to stack 12");
	tb_free(&b);
}

static void sample_forward_reference_to_thread_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_sample, 10, 1, 0);
	expect_corrupt(b.p, b.len, F(off, 1), "forward reference to thread 1");
	tb_free(&b);
}

static void stack_forward_references_are_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_stack, 1, 2 /* parent stack 1 = itself */, 0);
	expect_corrupt(b.p, b.len, F(off, 1), "forward reference to stack 1");
	tb_free(&b);
	tb_basic(&b);
	off = TB(&b, spulse_enc_stack, 1, 1, 3);
	expect_corrupt(b.p, b.len, F(off, 2), "forward reference to frame 3");
	tb_free(&b);
}

static void frame_forward_reference_to_module_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_frame_module, 1, 4, 0x1000);
	expect_corrupt(b.p, b.len, off + 3, "forward reference to module 4");
	tb_free(&b);
}

static void string_longer_than_limit_is_corruption_before_its_bytes(void **state)
{
	struct tbuf b = { 0 };
	uint8_t rec[32];
	size_t n = 0, off;

	(void)state;
	tb_basic(&b);
	off = b.len;
	rec[n++] = SPULSE_TAG_MODULE;
	rec[n++] = 1;
	rec[n++] = 5;
	rec[n++] = 1;
	rec[n++] = 2;
	rec[n++] = 0;
	n += spulse_put_uvar(rec + n, 70000);	/* path length, bytes absent */
	tb_raw(&b, rec, n);
	expect_corrupt(b.p, b.len, off + 6, "string length 70000 exceeds limit 4096");
	tb_free(&b);
}

static void comm_longer_than_limit_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	uint8_t rec[32];
	size_t n = 0, off;

	(void)state;
	tb_basic(&b);
	off = b.len;
	rec[n++] = SPULSE_TAG_THREAD;
	rec[n++] = 1;
	rec[n++] = 1;
	rec[n++] = 1;
	n += spulse_put_uvar(rec + n, SPULSE_MAX_COMM + 1);
	tb_raw(&b, rec, n);
	/* even though the file ends before the 65 bytes it announces */
	expect_corrupt(b.p, b.len, off + 4, "comm length 65 exceeds limit 64");
	tb_free(&b);
}

/* 64 bytes is the limit (FORMAT.md 3.5, what the encoders clamp to). */
static void comm_of_64_bytes_is_valid(void **state)
{
	char comm[SPULSE_MAX_COMM];
	struct tbuf b = { 0 };
	struct read_result r;
	struct spulse_thread t;
	struct spulse_snapshot *s;
	struct spulse_error err;

	(void)state;
	memset(comm, 'c', sizeof(comm));
	tb_basic(&b);
	TB(&b, spulse_enc_thread, 1, 1, 1, comm, sizeof(comm));
	TB(&b, spulse_enc_sample, 0, 1, 0);
	assert_int_equal(expect_valid(b.p, b.len), 1);
	assert_int_equal(spulse_snapshot_open_mem(b.p, b.len, NULL, &s, &err), 0);
	assert_int_equal(spulse_defs_thread(spulse_snapshot_defs(s), 1, &t), 0);
	assert_int_equal(t.comm_len, SPULSE_MAX_COMM);
	spulse_snapshot_close(s);
	read_snapshot_mem(b.p, b.len, &r);
	assert_int_equal(r.ret, 0);
	rr_free(&r);
	tb_free(&b);
}

static void build_id_longer_than_64_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	uint8_t rec[32];
	size_t n = 0, off;

	(void)state;
	tb_basic(&b);
	off = b.len;
	rec[n++] = SPULSE_TAG_MODULE;
	rec[n++] = 1;
	rec[n++] = 5;
	rec[n++] = 1;
	rec[n++] = 2;
	rec[n++] = 0;
	rec[n++] = 1;
	rec[n++] = 'p';
	rec[n++] = 65;
	tb_raw(&b, rec, n);
	expect_corrupt(b.p, b.len, off + 8, "build-id length 65 exceeds limit 64");
	tb_free(&b);
}

static void frame_outside_module_span_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	/* module 0 maps file offsets [0x1000, 0x101000) */
	tb_basic(&b);
	off = TB(&b, spulse_enc_frame_module, 1, 0, 0xfff);
	expect_corrupt(b.p, b.len, off + 4, "frame address outside module 0 span");
	tb_free(&b);
	tb_basic(&b);
	off = TB(&b, spulse_enc_frame_module, 1, 0, 0x101000);
	expect_corrupt(b.p, b.len, off + 4, "frame address outside module 0 span");
	tb_free(&b);
	/* both ends of the span are accepted */
	tb_basic(&b);
	TB(&b, spulse_enc_frame_module, 1, 0, 0x1000);
	TB(&b, spulse_enc_frame_module, 2, 0, 0x100fff);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void module_offset_arithmetic_overflow_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_header(&b);
	off = TB(&b, spulse_enc_module, 0, 1, 0x1000, 0x3000, UINT64_MAX - 0x1000,
		 "x", 1, NULL, 0);
	expect_corrupt(b.p, b.len, off + 3, "address arithmetic overflows");
	tb_free(&b);
	/* the largest file offset that fits is fine */
	tb_header(&b);
	TB(&b, spulse_enc_module, 0, 1, 0x1000, 0x3000, UINT64_MAX - 0x2000,
	   "x", 1, NULL, 0);
	TB(&b, spulse_enc_frame_module, 0, 0, UINT64_MAX - 1);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void module_start_not_below_end_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_header(&b);
	off = TB(&b, spulse_enc_module, 0, 1, 0x2000, 0x2000, 0, "x", 1, NULL, 0);
	expect_corrupt(b.p, b.len, off + 3, "not below end");
	tb_free(&b);
}

static void frame_naming_deactivated_module_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_module_deactivate, 0);
	off = TB(&b, spulse_enc_frame_module, 1, 0, 0x1000);
	expect_corrupt(b.p, b.len, off + 3, "frame names deactivated module 0");
	tb_free(&b);
	/* process deactivation retires it too */
	tb_basic(&b);
	TB(&b, spulse_enc_process_deactivate, 100);
	off = TB(&b, spulse_enc_frame_module, 1, 0, 0x1000);
	expect_corrupt(b.p, b.len, off + 3, "frame names deactivated module 0");
	tb_free(&b);
}

static void frame_defined_before_retirement_stays_valid(void **state)
{
	struct tbuf b = { 0 };

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_frame_module, 1, 0, 0x2000);
	TB(&b, spulse_enc_module_deactivate, 0);
	TB(&b, spulse_enc_stack, 1, SPULSE_STACK_ROOT, 1);
	TB(&b, spulse_enc_sample, 1, 0, 1);
	assert_int_equal(expect_valid(b.p, b.len), 1);
	tb_free(&b);
}

static void process_deactivation_retires_only_that_process(void **state)
{
	struct tbuf b = { 0 };

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_module, 1, 200, 0x400000, 0x500000, 0, "y", 1, NULL, 0);
	TB(&b, spulse_enc_process_deactivate, 100);
	TB(&b, spulse_enc_process_deactivate, 100);	/* no-op, allowed */
	TB(&b, spulse_enc_process_deactivate, 77);	/* no modules, allowed */
	TB(&b, spulse_enc_frame_module, 1, 1, 0x10);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void deactivating_inactive_module_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_module_deactivate, 0);
	off = TB(&b, spulse_enc_module_deactivate, 0);
	expect_corrupt(b.p, b.len, off + 1, "module already inactive");
	tb_free(&b);
	tb_basic(&b);
	TB(&b, spulse_enc_process_deactivate, 100);
	off = TB(&b, spulse_enc_module_deactivate, 0);
	expect_corrupt(b.p, b.len, off + 1, "module already inactive");
	tb_free(&b);
}

static void deactivating_undefined_module_is_forward_reference(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_module_deactivate, 3);
	expect_corrupt(b.p, b.len, off + 1, "forward reference to module 3");
	tb_free(&b);
}

static void stack_deeper_than_1024_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	uint32_t i;
	size_t off = 0;

	(void)state;
	tb_basic(&b);	/* stack 0 is a root: depth 1 */
	for (i = 1; i < SPULSE_MAX_DEPTH; i++)
		TB(&b, spulse_enc_stack, i, i, 0);
	TB(&b, spulse_enc_sample, 0, 0, SPULSE_MAX_DEPTH - 1);
	expect_valid(b.p, b.len);	/* depth 1024 is fine */
	off = b.len;
	TB(&b, spulse_enc_stack, SPULSE_MAX_DEPTH, SPULSE_MAX_DEPTH, 0);
	expect_corrupt(b.p, b.len, off + 3, "stack depth exceeds 1024");
	tb_free(&b);
}

static void truncated_marker_must_be_root(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_frame_truncated, 1);
	TB(&b, spulse_enc_stack, 1, SPULSE_STACK_ROOT, 1);	/* fine as a root */
	TB(&b, spulse_enc_stack, 2, 2, 0);			/* callee of it: fine */
	expect_valid(b.p, b.len);
	off = TB(&b, spulse_enc_stack, 3, 1, 1);
	expect_corrupt(b.p, b.len, off + 2, "truncated marker must be a root node");
	tb_free(&b);
}

static void sample_before_profile_start_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_sample, 100, 0, 0);
	TB(&b, spulse_enc_sample, -100, 0, 0);	/* back to the start: fine */
	expect_valid(b.p, b.len);
	off = TB(&b, spulse_enc_sample, -1, 0, 0);
	expect_corrupt(b.p, b.len, off + 1, "sample before profile start");
	tb_free(&b);
}

static void sample_time_overflow_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	/* start 1000 us: the clock may reach INT64_MAX - 1,000,000 ns */
	TB(&b, spulse_enc_sample, TB_TIME_MAX, 0, 0);
	expect_valid(b.p, b.len);
	off = TB(&b, spulse_enc_sample, 1, 0, 0);
	expect_corrupt(b.p, b.len, off + 1, "sample time overflows");
	tb_free(&b);
	/* far past the limit in one step: the old i64 wrap (time_ns 385) */
	tb_basic(&b);
	TB(&b, spulse_enc_sample, TB_TIME_MAX / 2, 0, 0);
	off = TB(&b, spulse_enc_sample, TB_TIME_MAX / 2 + 2, 0, 0);
	expect_corrupt(b.p, b.len, off + 1, "sample time overflows");
	tb_free(&b);
}

/*
 * start_us * 1000 + offset is epoch ns in an i64 (FORMAT.md 3.6): a start
 * above INT64_MAX / 1000 us is corruption at the start_us field; at the
 * limit, 807 ns of clock remain.
 */
static void start_us_beyond_the_nanosecond_clock_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	TB(&b, spulse_enc_header, SPULSE_MAX_START_US + 1, 1000);
	expect_corrupt(b.p, b.len, 8, "start_us 9223372036854776 overflows the "
		       "nanosecond clock (limit 9223372036854775)");
	tb_free(&b);
	/* the example: 18446744073709552 us (2^64 ns / 1000) */
	TB(&b, spulse_enc_header, 18446744073709552ULL, 1000);
	expect_corrupt(b.p, b.len, 8, "start_us 18446744073709552 overflows");
	tb_free(&b);
	TB(&b, spulse_enc_header, SPULSE_MAX_START_US, 1000);
	TB(&b, spulse_enc_thread, 0, 1, 1, "t", 1);
	TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 1);
	TB(&b, spulse_enc_stack, 0, SPULSE_STACK_ROOT, 0);
	TB(&b, spulse_enc_sample, 807, 0, 0);
	assert_int_equal(expect_valid(b.p, b.len), 1);
	off = TB(&b, spulse_enc_sample, 1, 0, 0);
	expect_corrupt(b.p, b.len, off + 1, "sample time overflows");
	tb_free(&b);
}

static void python_state_other_than_0_or_1_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_python, 100, 1);
	TB(&b, spulse_enc_python, 100, 0);
	expect_valid(b.p, b.len);
	off = TB(&b, spulse_enc_python, 100, 2);
	expect_corrupt(b.p, b.len, off + 2, "unknown python state 2");
	tb_free(&b);
}

static void pid_above_u32_is_corruption(void **state)
{
	struct tbuf b = { 0 };
	uint8_t rec[16];
	size_t n = 0, off;

	(void)state;
	tb_basic(&b);
	off = b.len;
	rec[n++] = SPULSE_TAG_PROCESS_DEACTIVATE;
	n += spulse_put_uvar(rec + n, 1ULL << 32);
	tb_raw(&b, rec, n);
	expect_corrupt(b.p, b.len, off + 1, "pid 4294967296 exceeds u32");
	tb_free(&b);
}

static void configured_id_limit_is_enforced(void **state)
{
	struct spulse_read_opts o = { .sz = sizeof(o), .max_ids = 2 };
	struct spulse_snapshot *s;
	struct spulse_error err;
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_frame_abs, 1, SPULSE_FRAME_USER, 1);
	assert_int_equal(spulse_snapshot_open_mem(b.p, b.len, &o, &s, &err), 0);
	spulse_snapshot_close(s);
	off = TB(&b, spulse_enc_frame_abs, 2, SPULSE_FRAME_USER, 2);
	assert_int_equal(spulse_snapshot_open_mem(b.p, b.len, &o, &s, &err), -EBADMSG);
	assert_null(s);
	assert_int_equal(err.offset, off + 1);
	assert_non_null(strstr(err.msg, "too many frame definitions"));
	tb_free(&b);
}

static void corruption_before_a_cut_record_is_still_an_error(void **state)
{
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	tb_basic(&b);
	off = TB(&b, spulse_enc_sample, 1, 0, 9);
	TB(&b, spulse_enc_thread, 1, 1, 1, "abcdef", 6);
	b.len -= 3;	/* cut the last record */
	expect_corrupt(b.p, b.len, off + 3, "forward reference to stack 9");
	tb_free(&b);
}

/*
 * A whole file shorter than the header (0 bytes included) is not a spool:
 * an error at its end, naming the offset (FORMAT.md 6, issue 26).
 */
static void empty_file_and_cut_header_are_errors_at_their_end(void **state)
{
	struct tbuf b = { 0 };
	struct read_result r;
	size_t cut;

	(void)state;
	tb_header(&b);
	for (cut = 0; cut < b.len; cut++) {
		read_snapshot_mem(b.p, cut, &r);
		assert_int_equal(r.ret, -EBADMSG);
		assert_int_equal(r.err.offset, cut);
		assert_non_null(strstr(r.err.msg, "inside the stream header"));
		rr_free(&r);
	}
	read_snapshot_mem(b.p, b.len, &r);
	assert_int_equal(r.ret, 0);
	assert_false(r.info.recovered_from_truncated_tail);
	assert_int_equal(r.info.complete_bytes, b.len);
	assert_int_equal(r.info.start_us, 1000);
	assert_int_equal(r.info.interval_us, 1000);
	rr_free(&r);
	tb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_magic_is_corruption_at_offset_0),
		cmocka_unit_test(unknown_record_tags_are_corruption),
		cmocka_unit_test(unknown_frame_kind_is_corruption_at_the_kind),
		cmocka_unit_test(duplicate_module_id_is_corruption),
		cmocka_unit_test(gap_in_frame_ids_is_corruption),
		cmocka_unit_test(first_id_of_each_kind_must_be_zero),
		cmocka_unit_test(duplicate_stack_and_thread_ids_are_corruption),
		cmocka_unit_test(same_content_under_two_ids_is_valid),
		cmocka_unit_test(sample_forward_reference_to_stack_is_corruption),
		cmocka_unit_test(sample_forward_reference_to_thread_is_corruption),
		cmocka_unit_test(stack_forward_references_are_corruption),
		cmocka_unit_test(frame_forward_reference_to_module_is_corruption),
		cmocka_unit_test(string_longer_than_limit_is_corruption_before_its_bytes),
		cmocka_unit_test(comm_longer_than_limit_is_corruption),
		cmocka_unit_test(comm_of_64_bytes_is_valid),
		cmocka_unit_test(build_id_longer_than_64_is_corruption),
		cmocka_unit_test(frame_outside_module_span_is_corruption),
		cmocka_unit_test(module_offset_arithmetic_overflow_is_corruption),
		cmocka_unit_test(module_start_not_below_end_is_corruption),
		cmocka_unit_test(frame_naming_deactivated_module_is_corruption),
		cmocka_unit_test(frame_defined_before_retirement_stays_valid),
		cmocka_unit_test(process_deactivation_retires_only_that_process),
		cmocka_unit_test(deactivating_inactive_module_is_corruption),
		cmocka_unit_test(deactivating_undefined_module_is_forward_reference),
		cmocka_unit_test(stack_deeper_than_1024_is_corruption),
		cmocka_unit_test(truncated_marker_must_be_root),
		cmocka_unit_test(sample_before_profile_start_is_corruption),
		cmocka_unit_test(sample_time_overflow_is_corruption),
		cmocka_unit_test(start_us_beyond_the_nanosecond_clock_is_corruption),
		cmocka_unit_test(python_state_other_than_0_or_1_is_corruption),
		cmocka_unit_test(pid_above_u32_is_corruption),
		cmocka_unit_test(configured_id_limit_is_enforced),
		cmocka_unit_test(corruption_before_a_cut_record_is_still_an_error),
		cmocka_unit_test(empty_file_and_cut_header_are_errors_at_their_end),
	};

	return cmocka_run_group_tests_name("validation", tests, NULL, NULL);
}
