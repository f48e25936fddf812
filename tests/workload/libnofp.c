// SPDX-License-Identifier: MIT
/*
 * libnofp.so: the shared-library half of tests/workload/nofp.c, built
 * -O2 -fomit-frame-pointer -fPIC: no frame pointer anywhere, so only
 * .eh_frame says how to unwind it. Two functions realign their stack:
 * lib_aligned() (a 64-byte aligned local: rbp becomes the CFA base) and
 * lib_drap() (aligned local + VLA: gcc's DRAP sequence, the CFA is
 * *(rbp - N)). lib_mix() calls back into the executable through a
 * function pointer, so caller chains cross the library boundary twice.
 */
#include <stdint.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint64_t lib_sink;

NOINLINE uint64_t lib_burn(unsigned int n)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	lib_sink += x;
	return x;
}

NOINLINE uint64_t lib_aligned(unsigned int n)
{
	uint64_t buf[16] __attribute__((aligned(64)));
	unsigned int i;

	for (i = 0; i < 16; i++)
		buf[i] = lib_burn(n / 16 + i);
	__asm__ volatile("" : : "r"(buf) : "memory");
	return buf[3] ^ buf[11];
}

/*
 * A 64-byte aligned local plus a variable-length array: gcc realigns the
 * stack through a DRAP register (r10) and the CFI says CFA = *(rbp - 40)
 * in the body (DW_CFA_def_cfa_expression breg6 -40; deref).
 */
NOINLINE uint64_t lib_drap(unsigned int n)
{
	uint64_t buf[8] __attribute__((aligned(64)));
	volatile char vla[n % 64 + 8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		buf[i] = lib_aligned(n + i);
	vla[0] = 1;
	__asm__ volatile("" : : "r"(buf) : "memory");
	return buf[1] + vla[0];
}

NOINLINE uint64_t lib_recurse(unsigned int depth, unsigned int n)
{
	uint64_t r;

	if (!depth)
		return lib_drap(n);
	r = lib_recurse(depth - 1, n);
	lib_sink += r;	/* not a tail call */
	return r + depth;
}

NOINLINE uint64_t lib_mix(unsigned int n, uint64_t (*cb)(unsigned int))
{
	uint64_t r = lib_recurse(3, n);

	r += cb(n);
	lib_sink += r;
	return r;
}
