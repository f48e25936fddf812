/* SPDX-License-Identifier: MIT */
/* The shared library of the symbolization tests (tests/sym/README). */
#define NOINLINE __attribute__((noinline, used))

volatile int symlib_sink;

NOINLINE int symlib_entry(int x)
{
	symlib_sink += x;
	return symlib_sink * 7;
}

NOINLINE int symlib_helper(int x)
{
	return symlib_entry(x + 1) + 1;
}
