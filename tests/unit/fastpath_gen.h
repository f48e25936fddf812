/* SPDX-License-Identifier: MIT */
/*
 * Input generation shared by the fast-path tests (test_sample_fastpath.c,
 * test_defs_fastpath.c): a seeded xorshift (seed it by setting rs), varint
 * fields that are now and then broken, and values of a given varint
 * length. Static: each test has its own generator state.
 */
#ifndef SPULSE_TEST_FASTPATH_GEN_H
#define SPULSE_TEST_FASTPATH_GEN_H

#include <stdint.h>
#include <string.h>

#include "helpers.h"

static uint64_t rs;

static inline uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

/*
 * Append one uvar field of value @v, in @bad_pct % of the calls in a
 * broken encoding: overlong (one or several redundant zero groups) or
 * overflowing (a 10th byte above 1, or 11 bytes).
 */
static inline void put_field(struct tbuf *b, uint64_t v, unsigned int bad_pct)
{
	uint8_t e[16];
	unsigned int n = spulse_put_uvar(e, v), k = (unsigned int)(rnd() % 100);

	if (k < bad_pct) {
		switch (rnd() % 4) {
		case 0:	/* overlong: one redundant zero group */
			if (n < SPULSE_VARINT_MAX) {
				e[n - 1] |= 0x80;
				e[n++] = 0;
			}
			break;
		case 1:	/* overflow: 10th byte > 1 */
			memset(e, 0xff, 9);
			e[9] = (uint8_t)(2 + rnd() % 126);
			n = 10;
			break;
		case 2:	/* overflow: 11 bytes */
			memset(e, 0x80, 10);
			e[10] = 1;
			n = 11;
			break;
		default:	/* overlong of several zero groups */
			while (n < SPULSE_VARINT_MAX - 1) {
				e[n - 1] |= 0x80;
				e[n++] = 0;
			}
			break;
		}
	}
	tb_raw(b, e, n);
}

/* A value whose encoding takes @len bytes (1..10). */
static inline uint64_t of_len(unsigned int len)
{
	uint64_t lo = len == 1 ? 0 : 1ULL << (7 * (len - 1));
	uint64_t x = rnd();

	if (len >= 10)
		return x | (1ULL << 63);
	return lo | (x & ((1ULL << (7 * len)) - 1));
}

#endif
