/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Varint codec, bit-identical to the Rust integer-encoding crate: unsigned
 * LEB128 for u64 and zigzag for i64. Decoders reject overlong and
 * overflowing encodings. Shared by spulse.ko and libspulse.
 */
#ifndef SPULSE_VARINT_H
#define SPULSE_VARINT_H

#include "types.h"
#include "format.h"

/* Decoder results (negative) besides a positive consumed length. */
enum spulse_varint_status {
	SPULSE_VARINT_SHORT = -1,	/* input ended inside the varint */
	SPULSE_VARINT_OVERLONG = -2,	/* redundant trailing zero group */
	SPULSE_VARINT_OVERFLOW = -3,	/* does not fit in 64 bits */
};

/**
 * spulse_uvar_len() - bytes needed to encode @v as an unsigned varint
 * @v: value
 */
static inline unsigned int spulse_uvar_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/**
 * spulse_put_uvar() - encode @v at @p
 * @p: destination with room for SPULSE_VARINT_MAX bytes
 * @v: value
 *
 * Return: number of bytes written (1..10).
 */
static inline unsigned int spulse_put_uvar(uint8_t *p, uint64_t v)
{
	unsigned int n = 0;

	/*
	 * Ids, time steps and intervals are mostly 1 to 4 bytes: those
	 * without the loop (the same bytes)
	 */
	if (v < 0x80) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7 | 0x80);
		p[2] = (uint8_t)(v >> 14);
		return 3;
	}
	if (v < 0x10000000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7 | 0x80);
		p[2] = (uint8_t)(v >> 14 | 0x80);
		p[3] = (uint8_t)(v >> 21);
		return 4;
	}
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/**
 * spulse_zigzag() - map a signed value to the unsigned zigzag domain
 * @v: value
 */
static inline uint64_t spulse_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/**
 * spulse_unzigzag() - inverse of spulse_zigzag()
 * @v: zigzag value
 */
static inline int64_t spulse_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/**
 * spulse_put_svar() - encode signed @v (zigzag) at @p
 * @p: destination with room for SPULSE_VARINT_MAX bytes
 * @v: value
 *
 * Return: number of bytes written.
 */
static inline unsigned int spulse_put_svar(uint8_t *p, int64_t v)
{
	return spulse_put_uvar(p, spulse_zigzag(v));
}

/**
 * spulse_get_uvar() - decode an unsigned varint
 * @p: input
 * @avail: bytes available at @p
 * @out: decoded value
 *
 * Return: bytes consumed (1..10), or a negative enum spulse_varint_status.
 * SPULSE_VARINT_SHORT only when every available byte had its continuation
 * bit set, so the caller can tell a cut from corruption.
 */
static inline int spulse_get_uvar(const uint8_t *p, size_t avail,
				  uint64_t *out)
{
	uint64_t v = 0;
	unsigned int i;

	if (avail > 0 && p[0] < 0x80) {
		*out = p[0];
		return 1;
	}
	for (i = 0; i < SPULSE_VARINT_MAX; i++) {
		uint8_t b;

		if (i >= avail)
			return SPULSE_VARINT_SHORT;
		b = p[i];
		if (i == SPULSE_VARINT_MAX - 1 && b > 0x01)
			return SPULSE_VARINT_OVERFLOW;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b == 0 && i > 0)
				return SPULSE_VARINT_OVERLONG;
			*out = v;
			return (int)i + 1;
		}
	}
	return SPULSE_VARINT_OVERFLOW;
}

/**
 * spulse_get_svar() - decode a signed (zigzag) varint
 * @p: input
 * @avail: bytes available at @p
 * @out: decoded value
 *
 * Return: as spulse_get_uvar().
 */
static inline int spulse_get_svar(const uint8_t *p, size_t avail,
				  int64_t *out)
{
	uint64_t u;
	int n = spulse_get_uvar(p, avail, &u);

	if (n > 0)
		*out = spulse_unzigzag(u);
	return n;
}

#endif /* SPULSE_VARINT_H */
