/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Stand-in varint vectors for the KUnit suite until the library's
 * tests/vectors/varint_vectors.h exists (codec_test.c prefers that one).
 * Bytes are written out by hand from the LEB128/zigzag definitions in
 * docs/FORMAT.md §1, not produced by the codec under test.
 */
#ifndef SPULSE_KUNIT_VARINT_VECTORS_H
#define SPULSE_KUNIT_VARINT_VECTORS_H

struct kv_uvar_vec {
	unsigned long long v;
	unsigned int len;
	unsigned char b[10];
};

struct kv_svar_vec {
	long long v;
	unsigned int len;
	unsigned char b[10];
};

static const struct kv_uvar_vec kv_uvar[] = {
	{ 0, 1, { 0x00 } },
	{ 1, 1, { 0x01 } },
	{ 127, 1, { 0x7f } },
	{ 128, 2, { 0x80, 0x01 } },
	{ 300, 2, { 0xac, 0x02 } },
	{ 16383, 2, { 0xff, 0x7f } },
	{ 16384, 3, { 0x80, 0x80, 0x01 } },
	{ 0xffffffffULL, 5, { 0xff, 0xff, 0xff, 0xff, 0x0f } },
	{ 0x8000000000000000ULL, 10,
	  { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },
	{ 0xffffffffffffffffULL, 10,
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
};

static const struct kv_svar_vec kv_svar[] = {
	{ 0, 1, { 0x00 } },
	{ -1, 1, { 0x01 } },
	{ 1, 1, { 0x02 } },
	{ -2, 1, { 0x03 } },
	{ 63, 1, { 0x7e } },
	{ -64, 1, { 0x7f } },
	{ 64, 2, { 0x80, 0x01 } },
	{ 0x7fffffffffffffffLL, 10,
	  { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
	{ -0x7fffffffffffffffLL - 1, 10,
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
};

/* Inputs the decoder must reject, with the expected status. */
struct kv_bad_vec {
	unsigned int len;
	unsigned char b[11];
	int status;	/* enum spulse_varint_status */
};

static const struct kv_bad_vec kv_bad[] = {
	{ 2, { 0x80, 0x00 }, -2 },			/* overlong 0 */
	{ 3, { 0xff, 0x80, 0x00 }, -2 },		/* overlong */
	{ 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 }, -3 },
	{ 11, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00 }, -3 },
	{ 0, { 0 }, -1 },				/* empty */
	{ 1, { 0x80 }, -1 },				/* cut */
	{ 3, { 0xff, 0xff, 0xff }, -1 },		/* cut */
};

#endif
