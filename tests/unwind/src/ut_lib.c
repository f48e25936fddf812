/* SPDX-License-Identifier: MIT */
/*
 * Shared library of the unwind-table test program (built -O2
 * -fomit-frame-pointer): plain CFA = SP + n functions, a function that
 * realigns its stack through a DRAP register (CFA = *(BP - 8)), one that
 * realigns with a frame pointer (CFA = BP + 16) and calls through the PLT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ut_lib.h"

volatile uint64_t ut_sink;

/* Aligned local + variable-length array: GCC realigns via %r10 (DRAP). */
__attribute__((noinline)) uint64_t ut_realign(int n)
{
	_Alignas(64) unsigned char a[64];
	unsigned char v[n > 0 ? n : 1];
	uint64_t s = 0;
	int i;

	memset(a, n, sizeof(a));
	memset(v, n + 1, sizeof(v));
	for (i = 0; i < n; i++)
		s += a[i & 63] * v[i];
	ut_sink = s;
	return s + ut_leaf(n);
}

/* Realigns the incoming stack with a frame pointer (CFA = BP + 16). */
__attribute__((noinline, force_align_arg_pointer)) uint64_t ut_fp_align(int n)
{
	unsigned char b[48];

	memset(b, n, sizeof(b));
	ut_sink = b[n & 31];
	return b[7] + ut_realign(n);
}

__attribute__((noinline)) uint64_t ut_leaf(int n)
{
	uint64_t s = 1;
	int i;

	for (i = 0; i < n * 64; i++)
		s = s * 6364136223846793005ull + 1442695040888963407ull;
	return s;
}

/* Recursion with callee-saved registers pushed: many CFA_SP rows. */
__attribute__((noinline)) uint64_t ut_recurse(int depth, int n)
{
	uint64_t x;
	char *p;

	if (depth <= 0)
		return ut_fp_align(n);
	p = malloc((size_t)n + 16);	/* through the PLT */
	if (!p)
		return 0;
	memset(p, depth, (size_t)n + 16);
	x = ut_recurse(depth - 1, n) + (uint64_t)p[n];
	free(p);
	return x;
}
