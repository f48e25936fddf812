// SPDX-License-Identifier: GPL-2.0
/*
 * execself - exec workload: burns CPU through exec_before_* for SECONDS/2,
 * then execve()s itself (same pid) with "--after", which burns through
 * exec_after_* for the other half. Exercises module deactivation and
 * re-definition across exec.
 *
 * usage: execself [SECONDS] (default 4). Prints "execself pid N" before and
 * "execself after exec pid N" after the exec.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void exec_burn(void)
{
	volatile unsigned long x = sink | 1;

	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1;
	sink = x;
}

__attribute__((noinline)) static void exec_before(double until)
{
	while (now() < until)
		exec_burn();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void exec_after(double until)
{
	while (now() < until)
		exec_burn();
	asm volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	char secs_s[32];
	double secs;

	if (argc > 2 && strcmp(argv[1], "--after") == 0) {
		printf("execself after exec pid %d\n", (int)getpid());
		fflush(stdout);
		exec_after(now() + atof(argv[2]));
		return 0;
	}
	secs = argc > 1 ? atof(argv[1]) : 4;
	printf("execself pid %d\n", (int)getpid());
	fflush(stdout);
	exec_before(now() + secs / 2);
	snprintf(secs_s, sizeof(secs_s), "%g", secs / 2);
	execl("/proc/self/exe", argv[0], "--after", secs_s, (char *)NULL);
	perror("execself: exec");
	return 1;
}
