// SPDX-License-Identifier: MIT
/*
 * The largest records (issue 10 item 18, docs/FORMAT.md section 4): each
 * SPULSE_*_REC_MAX of include/spulse/format.h is the exact length of the
 * largest record of that kind that the readers accept, built here field by
 * field with maximal values, and every reader accepts that record.
 * SPULSE_MAX_RECORD (4,204 bytes, a module with a 4096-byte path, a
 * 64-byte build-id and 10-byte addresses) is the largest of them all.
 */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static void largest_module_record_is_spulse_max_record(void **state)
{
	static char path[SPULSE_MAX_STRING];
	uint8_t bid[SPULSE_MAX_BUILD_ID];
	struct tbuf b = { 0 };
	size_t off, n;

	(void)state;
	memset(path, 'p', sizeof(path));
	memset(bid, 0xb1, sizeof(bid));
	tb_header(&b);
	/* ids up to SPULSE_MAX_ID would need that many records: 5-byte pid */
	off = b.len;
	n = TB(&b, spulse_enc_module, 0, UINT32_MAX, UINT64_MAX - 2,
	       UINT64_MAX - 1, UINT64_MAX - 1, path, sizeof(path), bid,
	       sizeof(bid));
	assert_int_equal(n, off);
	n = b.len - off;
	/* id 0 takes 1 byte, a max id 5: the rest is exactly maximal */
	assert_int_equal(n + 4, SPULSE_MODULE_REC_MAX);
	assert_int_equal(SPULSE_MAX_RECORD, 4204);
	assert_int_equal(SPULSE_MAX_RECORD, SPULSE_MODULE_REC_MAX);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void every_record_fits_its_max(void **state)
{
	static char comm[SPULSE_MAX_COMM + 8];
	uint8_t buf[SPULSE_MAX_RECORD];

	(void)state;
	memset(comm, 'c', sizeof(comm));
	/* the encoders clamp comm to 64 bytes: a 72-byte one fits too */
	assert_int_equal(spulse_enc_thread(buf, UINT32_MAX, UINT32_MAX,
					   UINT32_MAX, comm, sizeof(comm)),
			 SPULSE_THREAD_REC_MAX);
	assert_int_equal(spulse_enc_frame_module(buf, UINT32_MAX, UINT32_MAX,
						 UINT64_MAX),
			 SPULSE_FRAME_REC_MAX);
	assert_true(spulse_enc_frame_abs(buf, UINT32_MAX, SPULSE_FRAME_KERNEL,
					 UINT64_MAX) <= SPULSE_FRAME_REC_MAX);
	assert_int_equal(spulse_enc_stack(buf, UINT32_MAX,
					  (uint64_t)UINT32_MAX, UINT32_MAX),
			 SPULSE_STACK_REC_MAX);
	assert_int_equal(spulse_enc_sample(buf, INT64_MIN, UINT32_MAX,
					   UINT32_MAX), SPULSE_SAMPLE_MAX);
	assert_true(SPULSE_EXT_REC_MAX < SPULSE_MAX_RECORD);
	assert_true(SPULSE_THREAD_REC_MAX < SPULSE_MAX_RECORD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(largest_module_record_is_spulse_max_record),
		cmocka_unit_test(every_record_fits_its_max),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
