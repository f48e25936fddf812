// SPDX-License-Identifier: MIT
/*
 * The shared varint codec against the hand-written vectors that the kernel
 * KUnit suite also uses, and the decoder's rejection of varints inside
 * records (overlong, overflowing) as corruption at the varint's offset.
 */
#include "helpers.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <spulse/varint.h>
#include "vectors/varint_vectors.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void uvar_encodes_every_vector(void **state)
{
	uint8_t buf[SPULSE_VARINT_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < N(kv_uvar); i++) {
		memset(buf, 0xaa, sizeof(buf));
		assert_int_equal(spulse_put_uvar(buf, kv_uvar[i].v), kv_uvar[i].len);
		assert_int_equal(spulse_uvar_len(kv_uvar[i].v), kv_uvar[i].len);
		assert_memory_equal(buf, kv_uvar[i].b, kv_uvar[i].len);
		assert_int_equal(buf[kv_uvar[i].len], 0xaa);
	}
}

static void uvar_decodes_every_vector(void **state)
{
	size_t i;
	uint64_t v;

	(void)state;
	for (i = 0; i < N(kv_uvar); i++) {
		v = 0x5555;
		assert_int_equal(spulse_get_uvar(kv_uvar[i].b, kv_uvar[i].len, &v),
				 kv_uvar[i].len);
		assert_true(v == kv_uvar[i].v);
		/* extra available bytes change nothing */
		assert_int_equal(spulse_get_uvar(kv_uvar[i].b, 10, &v),
				 kv_uvar[i].len);
	}
}

static void svar_zigzag_encodes_and_decodes_every_vector(void **state)
{
	uint8_t buf[SPULSE_VARINT_MAX];
	size_t i;
	int64_t v;

	(void)state;
	for (i = 0; i < N(kv_svar); i++) {
		assert_int_equal(spulse_put_svar(buf, kv_svar[i].v), kv_svar[i].len);
		assert_memory_equal(buf, kv_svar[i].b, kv_svar[i].len);
		assert_int_equal(spulse_get_svar(kv_svar[i].b, kv_svar[i].len, &v),
				 kv_svar[i].len);
		assert_true(v == kv_svar[i].v);
	}
}

static void decoder_rejects_overlong_overflow_and_reports_cut(void **state)
{
	size_t i;
	uint64_t v;

	(void)state;
	for (i = 0; i < N(kv_bad); i++) {
		v = 0x77;
		assert_int_equal(spulse_get_uvar(kv_bad[i].b, kv_bad[i].len, &v),
				 kv_bad[i].status);
		assert_true(v == 0x77);
	}
}

static void uvar_roundtrips_at_every_length_boundary(void **state)
{
	uint8_t buf[SPULSE_VARINT_MAX];
	unsigned int bits;
	uint64_t got;

	(void)state;
	for (bits = 0; bits < 64; bits++) {
		uint64_t vals[3] = { 1ULL << bits, (1ULL << bits) - 1,
				     (1ULL << bits) + 1 };
		int k;

		for (k = 0; k < 3; k++) {
			int n = (int)spulse_put_uvar(buf, vals[k]);

			assert_int_equal(spulse_get_uvar(buf, (size_t)n, &got), n);
			assert_true(got == vals[k]);
			/* every cut of it is SHORT, never corruption */
			while (--n > 0)
				assert_int_equal(spulse_get_uvar(buf, (size_t)n, &got),
						 SPULSE_VARINT_SHORT);
		}
	}
}

/* An overlong varint in a record is corruption at the varint's first byte. */
static void overlong_varint_in_record_is_corruption_at_its_offset(void **state)
{
	struct tbuf b = { 0 };
	size_t off;
	static const uint8_t rec[] = { SPULSE_TAG_PYTHON, 0x80, 0x00, 0x01 };

	(void)state;
	tb_basic(&b);
	off = b.len;
	tb_raw(&b, rec, sizeof(rec));
	expect_corrupt(b.p, b.len, off + 1, "overlong varint");
	tb_free(&b);
}

static void overflowing_varint_in_record_is_corruption_at_its_offset(void **state)
{
	struct tbuf b = { 0 };
	size_t off;
	static const uint8_t rec[] = { SPULSE_TAG_SAMPLE, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };

	(void)state;
	tb_basic(&b);
	off = b.len;
	tb_raw(&b, rec, sizeof(rec));
	expect_corrupt(b.p, b.len, off + 3, "varint overflows 64 bits");
	tb_free(&b);
}

static void eleven_byte_varint_is_overflow(void **state)
{
	struct tbuf b = { 0 };
	size_t off;
	static const uint8_t rec[] = { SPULSE_TAG_PROCESS_DEACTIVATE,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00 };

	(void)state;
	tb_basic(&b);
	off = b.len;
	tb_raw(&b, rec, sizeof(rec));
	expect_corrupt(b.p, b.len, off + 1, "varint overflows 64 bits");
	tb_free(&b);
}

static void overlong_varint_in_header_is_corruption(void **state)
{
	static const uint8_t h[] = { 'S', 'P', 'U', 'L', 'S', 'E', '3', 0,
				     0x81, 0x00, 0x01 };

	(void)state;
	expect_corrupt(h, sizeof(h), 8, "overlong varint");
}

/*
 * Sample records whose fields take every varint length go through the
 * readers' sample fast path (Snapshot, whole input) and the general decoder
 * (Stream fed byte by byte): both must decode the same values.
 */
static void sample_fast_path_decodes_every_varint_length(void **state)
{
	struct tbuf b = { 0 };
	struct read_result fast, slow;
	uint32_t i, k, ids[] = { 0, 1, 127, 128, 300, 16383, 16384, 2097152 };
	size_t j, n = 0;

	(void)state;
	/* start 0: the whole i64 range of offsets is valid */
	TB(&b, spulse_enc_header, 0, 1000);
	TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 1);
	/* enough threads and stacks for multi-byte ids */
	for (i = 0; i <= 2097152; i++) {
		TB(&b, spulse_enc_stack, i, SPULSE_STACK_ROOT, 0);
		if (i <= 16384)
			TB(&b, spulse_enc_thread, i, 1, i, "", 0);
	}
	for (j = 0; j < sizeof(kv_svar) / sizeof(kv_svar[0]); j++) {
		int64_t v = kv_svar[j].v;

		if (v < 0)
			v = v == INT64_MIN ? INT64_MAX : -v;
		for (k = 0; k < 8; k++) {
			uint32_t th = ids[k] > 16384 ? ids[k] % 16385 : ids[k];

			/* up by v, back down by v: the time stays valid */
			TB(&b, spulse_enc_sample, v, th, ids[7 - k]);
			TB(&b, spulse_enc_sample, -v, ids[k] % 16385, ids[k]);
			n += 2;
		}
	}
	for (k = 0; k < 40; k++)	/* padding: the fast path needs room */
		TB(&b, spulse_enc_sample, 0, 0, 0), n++;
	read_snapshot_mem(b.p, b.len, &fast);
	read_stream(b.p, b.len, 1, &slow);
	assert_int_equal(fast.ret, 0);
	assert_int_equal(slow.ret, 0);
	assert_int_equal(fast.nsamples, n);
	assert_int_equal(slow.nsamples, n);
	assert_memory_equal(fast.samples, slow.samples, n * sizeof(*fast.samples));
	/* spot check: the first pair goes up by 0 and comes back */
	assert_true(fast.samples[1].time_ns == 0);
	assert_int_equal(fast.samples[0].stack, 2097152);
	rr_free(&fast);
	rr_free(&slow);
	tb_free(&b);
}

/* Overlong varints in each field of a sample, followed by enough valid
 * samples that the fast path sees the record, are still corruption. */
static void overlong_varint_in_any_sample_field_is_corruption(void **state)
{
	static const uint8_t recs[3][5] = {
		{ SPULSE_TAG_SAMPLE, 0x82, 0x00, 0x00, 0x00 },
		{ SPULSE_TAG_SAMPLE, 0x00, 0x80, 0x00, 0x00 },
		{ SPULSE_TAG_SAMPLE, 0x00, 0x00, 0xff, 0x00 },
	};
	int f, k;

	(void)state;
	for (f = 0; f < 3; f++) {
		struct tbuf b = { 0 };
		size_t off;

		tb_basic(&b);
		for (k = 0; k < 3; k++)
			TB(&b, spulse_enc_sample, 1, 0, 0);
		off = b.len;
		tb_raw(&b, recs[f], sizeof(recs[f]));
		for (k = 0; k < 20; k++)
			TB(&b, spulse_enc_sample, 1, 0, 0);
		expect_corrupt(b.p, b.len, off + 1 + (size_t)f, "overlong varint");
		tb_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uvar_encodes_every_vector),
		cmocka_unit_test(uvar_decodes_every_vector),
		cmocka_unit_test(svar_zigzag_encodes_and_decodes_every_vector),
		cmocka_unit_test(decoder_rejects_overlong_overflow_and_reports_cut),
		cmocka_unit_test(uvar_roundtrips_at_every_length_boundary),
		cmocka_unit_test(overlong_varint_in_record_is_corruption_at_its_offset),
		cmocka_unit_test(overflowing_varint_in_record_is_corruption_at_its_offset),
		cmocka_unit_test(eleven_byte_varint_is_overflow),
		cmocka_unit_test(overlong_varint_in_header_is_corruption),
		cmocka_unit_test(sample_fast_path_decodes_every_varint_length),
		cmocka_unit_test(overlong_varint_in_any_sample_field_is_corruption),
	};

	return cmocka_run_group_tests_name("varint", tests, NULL, NULL);
}
