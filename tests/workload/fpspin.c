// SPDX-License-Identifier: GPL-2.0
/*
 * fpspin - CPU-bound code with no frame pointer, for the first-sample
 * suite's "no table yet" case (tests/e2e/firstsample_run.sh): fp_spin()
 * keeps %rbp holding 1 (not a frame pointer: odd, below the stack) while
 * it spins, so a sample there unwinds only by table. Before the process's
 * tables reach the kernel its stack is cut, and the module counts it
 * under ustack_cut_no_table_yet; afterwards it is whole (fp_spin, fp_main,
 * main, glibc's start). Built like a distribution binary (PIE, -O2
 * -fomit-frame-pointer, mk/firstsample.mk); gcc saves and restores %rbp
 * around the asm with CFI, so the table describes every instruction.
 *
 * usage: fpspin SECONDS
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* @n rounds of a multiply with %rbp = 1 throughout. */
NOINLINE uint64_t fp_spin(uint64_t x, uint64_t n)
{
	__asm__ volatile("mov $1, %%rbp\n\t"
			 "1:\n\t"
			 "imul $0x5851f42d, %0, %0\n\t"
			 "add $0x14057b7e, %0\n\t"
			 "dec %1\n\t"
			 "jnz 1b"
			 : "+r"(x), "+r"(n) : : "rbp", "cc");
	return x;
}

NOINLINE uint64_t fp_main(int64_t end)
{
	uint64_t x = 1;

	do
		x = fp_spin(x, 20000);
	while (now_ns() < end);
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;

	if (!(secs > 0)) {
		fprintf(stderr, "usage: fpspin SECONDS\n");
		return 2;
	}
	sink = fp_main(now_ns() + (int64_t)(secs * 1e9));
	return 0;
}
