// SPDX-License-Identifier: GPL-2.0
/*
 * gt - the ground-truth workload for the end-to-end tests and the VM bench.
 *
 * Built static with frame pointers everywhere (see mk/vm.mk), so every user
 * stack of its own code is knowable:
 *
 *   main -> gt_m01 -> ... -> gt_m10 -> gt_burn                 (CPU, user)
 *                                   -> gt_read_raw -> gt_sys_read (read(2)
 *                                      via an inline `syscall`; kernel time)
 *                                   -> gt_read_libc -> glibc read()
 *   gt_thread_start -> gt_t01 -> ... -> gt_t10 -> gt_burn      (2nd thread)
 *
 * glibc's read() has no frame pointer; what its samples look like is
 * reported by the tests, not asserted.
 *
 * usage: gt [-n ROUNDS] [-s DELAY] [SECONDS]
 *   Runs for SECONDS (default 5) or, with -n, exactly ROUNDS rounds of work
 *   on each thread (fixed work, for benchmarks). Prints "gt pid N" first
 *   and "gt done N rounds in S s" (its own elapsed time) at the end. -s
 *   sleeps DELAY seconds after printing the pid, before the work and its
 *   clock start (time to attach a profiler to the pid).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)		/* bytes per read(2) */
#define BURN_ITERS 400000	/* loop iterations per gt_burn call */

enum mode { MODE_BURN, MODE_RAW, MODE_LIBC };

static volatile unsigned long sink;
static volatile int stop;
static int zero_fd = -1;
static char buf_main[CHUNK];

/* Leaf doing pure user-mode CPU work. gcc 12 drops the frame pointer of
 * stackless leaves even with -mno-omit-leaf-frame-pointer, so the leaves
 * keep a volatile local on the stack. */
__attribute__((noinline)) static void gt_burn(void)
{
	volatile unsigned long x = sink | 1;

	for (int i = 0; i < BURN_ITERS; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* read(2) issued by an inline syscall instruction in a frame-pointer
 * function, so the user part of a kernel sample is the whole chain. */
__attribute__((noinline)) static long gt_sys_read(int fd, void *buf, size_t n)
{
	volatile long ret;	/* on the stack: keeps the frame pointer */
	long r;

	asm volatile("syscall"
		     : "=a"(r)
		     : "0"(0L /* __NR_read */), "D"((long)fd), "S"(buf), "d"(n)
		     : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

__attribute__((noinline)) static void gt_read_raw(void)
{
	for (int i = 0; i < 2; i++)
		if (gt_sys_read(zero_fd, buf_main, CHUNK) != CHUNK)
			abort();
	asm volatile("" ::: "memory");
}

/* The same through glibc's read() (no frame pointer there). */
__attribute__((noinline)) static void gt_read_libc(void)
{
	if (read(zero_fd, buf_main, CHUNK) != CHUNK)
		abort();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void gt_leaf(int mode)
{
	switch (mode) {
	case MODE_BURN:
		gt_burn();
		break;
	case MODE_RAW:
		gt_read_raw();
		break;
	default:
		gt_read_libc();
		break;
	}
	asm volatile("" ::: "memory");
}

/* The chain: each level is a distinct function calling the next one. The
 * empty asm after the call keeps it a real call (no tail call). */
#define LEVEL(name, next)						\
	__attribute__((noinline)) static void name(int mode)		\
	{								\
		sink += __LINE__;					\
		next(mode);						\
		asm volatile("" ::: "memory");				\
	}

LEVEL(gt_m10, gt_leaf)
LEVEL(gt_m09, gt_m10)
LEVEL(gt_m08, gt_m09)
LEVEL(gt_m07, gt_m08)
LEVEL(gt_m06, gt_m07)
LEVEL(gt_m05, gt_m06)
LEVEL(gt_m04, gt_m05)
LEVEL(gt_m03, gt_m04)
LEVEL(gt_m02, gt_m03)
LEVEL(gt_m01, gt_m02)

__attribute__((noinline)) static void gt_t10(int mode)
{
	sink += __LINE__;
	(void)mode;
	gt_burn();
	asm volatile("" ::: "memory");
}
LEVEL(gt_t09, gt_t10)
LEVEL(gt_t08, gt_t09)
LEVEL(gt_t07, gt_t08)
LEVEL(gt_t06, gt_t07)
LEVEL(gt_t05, gt_t06)
LEVEL(gt_t04, gt_t05)
LEVEL(gt_t03, gt_t04)
LEVEL(gt_t02, gt_t03)
LEVEL(gt_t01, gt_t02)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rounds = -1;	/* -1: run by time */
static double deadline;

static int keep_going(long done)
{
	if (rounds >= 0)
		return done < rounds;
	return !stop && now() < deadline;
}

/* One round on the main thread: 2 burns, 1 raw read (2 MiB), 1 libc read. */
__attribute__((noinline)) static void *gt_thread_start(void *arg)
{
	long done = 0;

	(void)arg;
	while (keep_going(done)) {
		for (int i = 0; i < 4; i++)
			gt_t01(MODE_BURN);
		done++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = 5;
	pthread_t th;
	long done = 0;
	double t0, delay = 0;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		if (opt == 'n') {
			rounds = atol(optarg);
		} else if (opt == 's') {
			delay = atof(optarg);
		} else {
			fprintf(stderr, "usage: gt [-n ROUNDS] [-s DELAY] [SECONDS]\n");
			return 2;
		}
	}
	if (optind < argc)
		secs = atof(argv[optind]);
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		perror("gt: /dev/zero");
		return 1;
	}
	printf("gt pid %d\n", (int)getpid());
	fflush(stdout);
	if (delay > 0)
		usleep((useconds_t)(delay * 1e6));
	t0 = now();
	deadline = t0 + secs;
	if (pthread_create(&th, NULL, gt_thread_start, NULL) != 0) {
		fprintf(stderr, "gt: pthread_create failed\n");
		return 1;
	}
	while (keep_going(done)) {
		gt_m01(MODE_BURN);
		gt_m01(MODE_BURN);
		gt_m01(MODE_RAW);
		gt_m01(MODE_LIBC);
		done++;
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("gt done %ld rounds in %.3f s\n", done, now() - t0);
	return 0;
}
