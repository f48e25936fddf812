// SPDX-License-Identifier: MIT
/*
 * What recovered_from_truncated_tail means (issue 10 items 17 and 18,
 * docs/API.md and docs/FORMAT.md section 6): it is set only when a reader
 * stopped at the end of the file inside a record (or the header) whose
 * bytes so far break no rule. Not after a Tail poll that stopped at a full
 * batch with only complete records pending, not on an empty file, not when
 * the pending bytes are corrupt; and a final record cut by the end of the
 * file whose complete fields already break a rule (duplicate id, forward
 * reference, pid above u32, ...) is corruption for every reader, so Tail
 * reports it instead of waiting for the rest forever.
 */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct spulse_info *poll_once(struct spulse_tail *t, int want)
{
	const struct spulse_sample *ss;
	struct spulse_error err;

	assert_int_equal(spulse_tail_poll(t, &ss, &err), want);
	return spulse_tail_info(t);
}

static void append(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static void tail_flag_is_false_on_an_empty_file(void **state)
{
	char *path = tmp_path();
	struct spulse_tail *t;
	struct spulse_error err;

	(void)state;
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	assert_false(spulse_tail_info(t)->recovered_from_truncated_tail);
	assert_false(poll_once(t, 0)->recovered_from_truncated_tail);
	/* 3 bytes of the magic: now a header is cut */
	append(path, "SPU", 3);
	assert_true(poll_once(t, 0)->recovered_from_truncated_tail);
	assert_int_equal(spulse_tail_offset(t), 0);
	spulse_tail_close(t);
	tmp_remove(path);
}

static void tail_flag_is_false_after_a_full_batch_of_complete_records(void **state)
{
	struct tbuf b = { 0 };
	const struct spulse_info *in;
	struct spulse_tail *t;
	struct spulse_error err;
	char *path;
	int i;

	(void)state;
	tb_basic(&b);
	for (i = 0; i < SPULSE_TAIL_BATCH + 100; i++)
		TB(&b, spulse_enc_sample, 1, 0, 0);
	path = tmp_write(b.p, b.len);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	in = poll_once(t, SPULSE_TAIL_BATCH);
	/* complete records are pending, none of them is cut */
	assert_false(in->recovered_from_truncated_tail);
	in = poll_once(t, 100);
	assert_false(in->recovered_from_truncated_tail);
	assert_int_equal(in->complete_bytes, b.len);
	/* now half a sample at the end: that is a truncated tail */
	append(path, "\x05\x02", 2);
	in = poll_once(t, 0);
	assert_true(in->recovered_from_truncated_tail);
	assert_int_equal(in->complete_bytes, b.len);
	/* completed: the flag clears */
	append(path, "\x00", 1);
	in = poll_once(t, 0);
	assert_true(in->recovered_from_truncated_tail);	/* still 1 byte short */
	append(path, "\x00", 1);
	in = poll_once(t, 1);
	assert_false(in->recovered_from_truncated_tail);
	assert_int_equal(in->complete_bytes, b.len + 4);
	spulse_tail_close(t);
	tmp_remove(path);
	tb_free(&b);
}

static void tail_flag_is_false_when_the_pending_bytes_are_corrupt(void **state)
{
	struct tbuf b = { 0 };
	const struct spulse_sample *ss;
	struct spulse_tail *t;
	struct spulse_error err;
	char *path;
	size_t off;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_sample, 1, 0, 0);
	off = b.len;
	tb_raw(&b, "\x2a\x01", 2);	/* unknown tag, then a byte */
	path = tmp_write(b.p, b.len);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	/* the sample first, without the flag; then the error */
	assert_false(poll_once(t, 1)->recovered_from_truncated_tail);
	assert_int_equal(spulse_tail_poll(t, &ss, &err), -EBADMSG);
	assert_int_equal(err.offset, off);
	assert_false(spulse_tail_info(t)->recovered_from_truncated_tail);
	spulse_tail_close(t);
	tmp_remove(path);
	tb_free(&b);
}

/*
 * Each case: a record whose complete fields break a rule, cut by the end
 * of the file before its last field. Every reader reports the rule at the
 * field's offset; Tail does not wait.
 */
static void cut_record_breaking_a_rule_is_an_error_for_every_reader(void **state)
{
	struct {
		const char *what;
		uint8_t rec[16];
		size_t len, bad;	/* bytes present, offset of the bad field */
		const char *msg;
	} cases[] = {
		/* thread id 0 again, pid, tid, comm cut */
		{ "duplicate thread id", { SPULSE_TAG_THREAD, 0, 1, 1, 5, 'a' },
		  6, 1, "duplicate thread id 0" },
		/* module id 3 (1 defined), rest missing */
		{ "module id gap", { SPULSE_TAG_MODULE, 3, 1 }, 3, 1,
		  "gap: module id 3 but 1 defined" },
		/* thread 1 with pid 2^32, tid cut */
		{ "pid above u32", { SPULSE_TAG_THREAD, 1, 0x80, 0x80, 0x80, 0x80,
				     0x10, 0x81 }, 8, 2, "pid 4294967296 exceeds u32" },
		/* sample naming thread 9, stack missing */
		{ "forward reference", { SPULSE_TAG_SAMPLE, 2, 9 }, 3, 2,
		  "forward reference to thread 9" },
		/* stack with a forward parent, frame missing */
		{ "forward parent", { SPULSE_TAG_STACK, 1, 7 }, 3, 2,
		  "forward reference to stack 6" },
		/* frame in a module that does not exist, address missing */
		{ "frame forward module", { SPULSE_TAG_FRAME, 1, 0, 4 }, 4, 3,
		  "forward reference to module 4" },
		/* module start >= end, file offset and path missing */
		{ "module start not below end", { SPULSE_TAG_MODULE, 1, 1, 9, 9 },
		  5, 3, "module start 0x9 not below end 0x9" },
		/* an off-CPU interval naming thread 8, payload cut */
		{ "off-CPU forward thread", { SPULSE_TAG_EXT, SPULSE_EXT_OFFCPU,
					      12, 0, 8, 0 }, 6, 4,
		  "forward reference to thread 8" },
		/* a cpu record out of range, one more payload byte announced */
		{ "cpu out of range", { SPULSE_TAG_EXT, SPULSE_EXT_CPU, 4, 0x80,
					0x80, 0x04 }, 6, 3,
		  "cpu 65536 out of range (limit 65536)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tbuf b = { 0 };
		struct spulse_tail *t;
		struct spulse_error err;
		const struct spulse_sample *ss;
		size_t off;
		char *path;

		tb_basic(&b);
		off = b.len;
		tb_raw(&b, cases[i].rec, cases[i].len);
		print_message("# %s\n", cases[i].what);
		expect_corrupt(b.p, b.len, off + cases[i].bad, cases[i].msg);
		path = tmp_write(b.p, b.len);
		assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
		memset(&err, 0, sizeof(err));
		assert_int_equal(spulse_tail_poll(t, &ss, &err), -EBADMSG);
		assert_int_equal(err.offset, off + cases[i].bad);
		assert_non_null(strstr(err.msg, cases[i].msg));
		assert_false(spulse_tail_info(t)->recovered_from_truncated_tail);
		spulse_tail_close(t);
		tmp_remove(path);
		tb_free(&b);
	}
}

/* The same records with only valid fields so far are a truncated tail. */
static void cut_record_with_valid_fields_is_a_truncated_tail(void **state)
{
	static const uint8_t recs[][8] = {
		{ SPULSE_TAG_THREAD, 1, 1, 1, 5, 'a' },
		{ SPULSE_TAG_MODULE, 1, 1 },
		{ SPULSE_TAG_SAMPLE, 2, 0 },
		{ SPULSE_TAG_EXT, SPULSE_EXT_OFFCPU, 12, 0, 0, 0 },
	};
	static const size_t lens[] = { 6, 3, 3, 6 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct tbuf b = { 0 };
		struct read_result r;
		size_t off;

		tb_basic(&b);
		off = b.len;
		tb_raw(&b, recs[i], lens[i]);
		read_snapshot_mem(b.p, b.len, &r);
		assert_int_equal(r.ret, 0);
		assert_true(r.info.recovered_from_truncated_tail);
		assert_int_equal(r.info.complete_bytes, off);
		rr_free(&r);
		tb_free(&b);
	}
}

/* The push decoder follows the same rule. */
static void stream_flag_means_an_incomplete_record_is_pending(void **state)
{
	struct tbuf b = { 0 };
	struct spulse_stream *s;
	struct spulse_record rec;
	struct spulse_error err;
	size_t n;

	(void)state;
	tb_basic(&b);
	TB(&b, spulse_enc_sample, 1, 0, 0);
	assert_int_equal(spulse_stream_new(NULL, &s), 0);
	assert_false(spulse_stream_info(s)->recovered_from_truncated_tail);
	assert_int_equal(spulse_stream_next(s, &rec, &err), 0);
	assert_false(spulse_stream_info(s)->recovered_from_truncated_tail);
	assert_int_equal(spulse_stream_feed(s, b.p, b.len - 1), 0);
	for (n = 0; spulse_stream_next(s, &rec, &err) == 1; n++)
		;
	assert_int_equal(n, 4);	/* tb_basic's definitions */
	assert_true(spulse_stream_info(s)->recovered_from_truncated_tail);
	assert_int_equal(spulse_stream_feed(s, b.p + b.len - 1, 1), 0);
	assert_int_equal(spulse_stream_next(s, &rec, &err), 1);
	assert_false(spulse_stream_info(s)->recovered_from_truncated_tail);
	assert_int_equal(spulse_stream_next(s, &rec, &err), 0);
	assert_false(spulse_stream_info(s)->recovered_from_truncated_tail);
	spulse_stream_free(s);
	tb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tail_flag_is_false_on_an_empty_file),
		cmocka_unit_test(tail_flag_is_false_after_a_full_batch_of_complete_records),
		cmocka_unit_test(tail_flag_is_false_when_the_pending_bytes_are_corrupt),
		cmocka_unit_test(cut_record_breaking_a_rule_is_an_error_for_every_reader),
		cmocka_unit_test(cut_record_with_valid_fields_is_a_truncated_tail),
		cmocka_unit_test(stream_flag_means_an_incomplete_record_is_pending),
	};

	return cmocka_run_group_tests_name("tail_flag", tests, NULL, NULL);
}
