// SPDX-License-Identifier: GPL-2.0
/*
 * clockloop - a worker loop that reads the clock (the vDSO's
 * clock_gettime) between small pieces of work, for the first-sample
 * suite's vDSO case (tests/e2e/firstsample_run.sh): every sample taken
 * inside the vDSO should unwind through it to cl_worker. Built like a
 * distribution binary (PIE, -O2 -fomit-frame-pointer, mk/firstsample.mk).
 *
 * usage: clockloop SECONDS
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* the work between two clock reads: a few hundred cycles */
NOINLINE uint64_t cl_mix(uint64_t x)
{
	int i;

	for (i = 0; i < 64; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

NOINLINE uint64_t cl_worker(int64_t end)
{
	struct timespec t;
	uint64_t x = 1;

	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
		x = cl_mix(x ^ (uint64_t)t.tv_nsec);
	} while (ns(&t) < end);
	return x;
}

int main(int argc, char **argv)
{
	struct timespec t;
	double secs = argc > 1 ? atof(argv[1]) : 0;

	if (!(secs > 0)) {
		fprintf(stderr, "usage: clockloop SECONDS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	sink = cl_worker(ns(&t) + (int64_t)(secs * 1e9));
	return 0;
}
