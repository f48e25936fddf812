/* SPDX-License-Identifier: MIT */
/*
 * The PIE executable of the symbolization tests. The tests find lines by
 * the SYM:* markers (grep -n), so keep each marker on its statement's line.
 * SYM_VARIANT changes the code (and so the build-id) for the mismatch test.
 */
#define NOINLINE __attribute__((noinline, used))
#define INLINE static inline __attribute__((always_inline))

#ifndef SYM_VARIANT
#define SYM_VARIANT 0
#endif

int symlib_helper(int x);
volatile int sink;

NOINLINE int sym_line_probe(int x) { return x * 3 + sink + SYM_VARIANT; } /* SYM:probe */

/* only in .symtab: the stripped copies name it through their debug file */
static NOINLINE int sym_local_fn(int x)
{
	return x + sink * 2;
}

INLINE int inl_inner(int x)
{
	return x * x + sink; /* SYM:inner-body */
}

INLINE int inl_outer(int x)
{
	return inl_inner(x + 1) + 3; /* SYM:outer-call */
}

NOINLINE int sym_caller(int x)
{
	return inl_outer(x) * 5; /* SYM:caller-call */
}

/* Rust names (legacy and v0) given by asm labels */
NOINLINE void rust_legacy(void) __asm__("_ZN7mycrate6module4func17h0123456789abcdefE");
NOINLINE void rust_legacy(void) { sink++; }
NOINLINE void rust_v0(void) __asm__("_RNvNtCs1234_7mycrate6module4func");
NOINLINE void rust_v0(void) { sink += 2; }

int main(int argc, char **argv)
{
	(void)argv;
	rust_legacy();
	rust_v0();
	return sym_caller(argc) + sym_local_fn(argc) + sym_line_probe(argc) +
	       symlib_helper(argc);
}
