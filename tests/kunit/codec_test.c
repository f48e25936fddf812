// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the shared codec (include/spulse/varint.h, encode.h) compiled in
 * the kernel produces exactly the bytes the userspace codec is tested
 * against: the varint vectors are tests/vectors/varint_vectors.h, shared
 * with tests/unit.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include <spulse/encode.h>

#include "codec_vectors.h"

static void varint_encodes_vectors(struct kunit *test)
{
	u8 buf[SPULSE_VARINT_MAX + 2];
	unsigned int i, n;

	for (i = 0; i < KV_N_UVAR; i++) {
		memset(buf, 0xaa, sizeof(buf));
		n = spulse_put_uvar(buf, KV_UVAR_VALUE(i));
		KUNIT_EXPECT_EQ_MSG(test, n, KV_UVAR_LEN(i), "uvar vector %u", i);
		KUNIT_EXPECT_EQ(test, spulse_uvar_len(KV_UVAR_VALUE(i)), n);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(buf, KV_UVAR_BYTES(i), n), 0,
				    "uvar vector %u bytes", i);
		KUNIT_EXPECT_EQ_MSG(test, buf[n], 0xaa, "uvar %u overran", i);
	}
	for (i = 0; i < KV_N_SVAR; i++) {
		n = spulse_put_svar(buf, KV_SVAR_VALUE(i));
		KUNIT_EXPECT_EQ_MSG(test, n, KV_SVAR_LEN(i), "svar vector %u", i);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(buf, KV_SVAR_BYTES(i), n), 0,
				    "svar vector %u bytes", i);
	}
}

static void varint_decodes_vectors(struct kunit *test)
{
	unsigned int i;
	u64 u;
	s64 s;

	for (i = 0; i < KV_N_UVAR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, spulse_get_uvar(KV_UVAR_BYTES(i),
				    KV_UVAR_LEN(i), &u), (int)KV_UVAR_LEN(i),
				    "uvar vector %u", i);
		KUNIT_EXPECT_EQ(test, u, (u64)KV_UVAR_VALUE(i));
	}
	for (i = 0; i < KV_N_SVAR; i++) {
		KUNIT_EXPECT_EQ_MSG(test, spulse_get_svar(KV_SVAR_BYTES(i),
				    KV_SVAR_LEN(i), &s), (int)KV_SVAR_LEN(i),
				    "svar vector %u", i);
		KUNIT_EXPECT_EQ(test, s, (s64)KV_SVAR_VALUE(i));
	}
}

static void varint_rejects_overlong_overflow_and_cut(struct kunit *test)
{
	unsigned int i;
	u64 u = 0x5a5a;

	for (i = 0; i < KV_N_BAD; i++) {
		KUNIT_EXPECT_EQ_MSG(test, spulse_get_uvar(KV_BAD_BYTES(i),
				    KV_BAD_LEN(i), &u), KV_BAD_STATUS(i),
				    "bad vector %u", i);
	}
	KUNIT_EXPECT_EQ(test, u, 0x5a5aULL);	/* untouched on error */
}

static void varint_roundtrips_every_length(struct kunit *test)
{
	u8 buf[SPULSE_VARINT_MAX];
	unsigned int bits;

	for (bits = 0; bits < 64; bits++) {
		u64 v = (1ULL << bits) | ((1ULL << bits) - 1) / 3;
		u64 got;
		int n = spulse_put_uvar(buf, v);

		KUNIT_EXPECT_EQ(test, spulse_get_uvar(buf, n, &got), n);
		KUNIT_EXPECT_EQ(test, got, v);
		/* one byte short must say "short", never a value */
		KUNIT_EXPECT_EQ(test, spulse_get_uvar(buf, n - 1, &got),
				(int)SPULSE_VARINT_SHORT);
	}
}

static void header_encoder_bytes(struct kunit *test)
{
	static const u8 want[] = { 'S', 'P', 'U', 'L', 'S', 'E', '3', 0,
				   0x01, 0xe8, 0x07 };
	u8 buf[SPULSE_HEADER_MAX];

	KUNIT_ASSERT_EQ(test, spulse_enc_header(buf, 1, 1000), sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
}

static void module_encoder_bytes(struct kunit *test)
{
	static const u8 want[] = { 0x01, 0x00, 0x05, 0x80, 0x20, 0x80, 0x40,
				   0x00, 0x02, '/', 'a', 0x01, 0xab };
	static const u8 bid[] = { 0xab };
	u8 buf[64];

	KUNIT_ASSERT_EQ(test, spulse_enc_module(buf, 0, 5, 0x1000, 0x2000, 0,
						"/a", 2, bid, 1), sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
}

static void frame_encoders_bytes(struct kunit *test)
{
	static const u8 user[] = { 0x02, 0x03, 0x01, 0xac, 0x02 };
	static const u8 kern[] = { 0x02, 0x80, 0x01, 0x02,
				   0x80, 0x80, 0x80, 0x88, 0xf8, 0xff, 0xff,
				   0xff, 0xff, 0x01 };
	static const u8 mod[] = { 0x02, 0x00, 0x00, 0x07, 0x90, 0x03 };
	static const u8 trunc[] = { 0x02, 0x7f, 0x03 };
	u8 buf[SPULSE_FRAME_REC_MAX];

	KUNIT_ASSERT_EQ(test, spulse_enc_frame_abs(buf, 3, SPULSE_FRAME_USER,
						   300), sizeof(user));
	KUNIT_EXPECT_EQ(test, memcmp(buf, user, sizeof(user)), 0);
	/* 0xffffffff81000000: a typical kernel text address */
	KUNIT_ASSERT_EQ(test, spulse_enc_frame_abs(buf, 128, SPULSE_FRAME_KERNEL,
						   0xffffffff81000000ULL),
			sizeof(kern));
	KUNIT_EXPECT_EQ(test, memcmp(buf, kern, sizeof(kern)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_frame_module(buf, 0, 7, 400),
			sizeof(mod));
	KUNIT_EXPECT_EQ(test, memcmp(buf, mod, sizeof(mod)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_frame_truncated(buf, 127),
			sizeof(trunc));
	KUNIT_EXPECT_EQ(test, memcmp(buf, trunc, sizeof(trunc)), 0);
}

static void stack_thread_sample_encoders_bytes(struct kunit *test)
{
	static const u8 stack[] = { 0x03, 0x00, 0x00, 0x07 };
	static const u8 thread[] = { 0x04, 0x01, 0x64, 0x65, 0x02, 'a', 'b' };
	static const u8 sample[] = { 0x05, 0x09, 0x01, 0xac, 0x02 };
	u8 buf[SPULSE_THREAD_REC_MAX];

	KUNIT_ASSERT_EQ(test, spulse_enc_stack(buf, 0, SPULSE_STACK_ROOT, 7),
			sizeof(stack));
	KUNIT_EXPECT_EQ(test, memcmp(buf, stack, sizeof(stack)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_thread(buf, 1, 100, 101, "ab", 2),
			sizeof(thread));
	KUNIT_EXPECT_EQ(test, memcmp(buf, thread, sizeof(thread)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_sample(buf, -5, 1, 300),
			sizeof(sample));
	KUNIT_EXPECT_EQ(test, memcmp(buf, sample, sizeof(sample)), 0);
}

static void thread_encoder_clamps_comm(struct kunit *test)
{
	char comm[SPULSE_MAX_COMM + 10];
	u8 buf[SPULSE_THREAD_REC_MAX];
	size_t n;

	memset(comm, 'x', sizeof(comm));
	n = spulse_enc_thread(buf, 0, 1, 1, comm, sizeof(comm));
	/* tag, id, pid, tid (1 byte each), len 64 (1 byte), 64 bytes */
	KUNIT_EXPECT_EQ(test, n, (size_t)(5 + SPULSE_MAX_COMM));
	KUNIT_EXPECT_EQ(test, buf[4], (u8)SPULSE_MAX_COMM);
}

static void deactivate_and_python_encoders_bytes(struct kunit *test)
{
	static const u8 py[] = { 0x06, 0xe8, 0x07, 0x01 };
	static const u8 proc[] = { 0x07, 0x2a };
	static const u8 mod[] = { 0x08, 0x80, 0x01 };
	u8 buf[16];

	KUNIT_ASSERT_EQ(test, spulse_enc_python(buf, 1000, SPULSE_PYTHON_ENTER),
			sizeof(py));
	KUNIT_EXPECT_EQ(test, memcmp(buf, py, sizeof(py)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_process_deactivate(buf, 42),
			sizeof(proc));
	KUNIT_EXPECT_EQ(test, memcmp(buf, proc, sizeof(proc)), 0);
	KUNIT_ASSERT_EQ(test, spulse_enc_module_deactivate(buf, 128),
			sizeof(mod));
	KUNIT_EXPECT_EQ(test, memcmp(buf, mod, sizeof(mod)), 0);
}

static struct kunit_case spulse_codec_cases[] = {
	KUNIT_CASE(varint_encodes_vectors),
	KUNIT_CASE(varint_decodes_vectors),
	KUNIT_CASE(varint_rejects_overlong_overflow_and_cut),
	KUNIT_CASE(varint_roundtrips_every_length),
	KUNIT_CASE(header_encoder_bytes),
	KUNIT_CASE(module_encoder_bytes),
	KUNIT_CASE(frame_encoders_bytes),
	KUNIT_CASE(stack_thread_sample_encoders_bytes),
	KUNIT_CASE(thread_encoder_clamps_comm),
	KUNIT_CASE(deactivate_and_python_encoders_bytes),
	{}
};

static struct kunit_suite spulse_codec_suite = {
	.name = "spulse_codec",
	.test_cases = spulse_codec_cases,
};
kunit_test_suite(spulse_codec_suite);
