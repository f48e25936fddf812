// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong - a context-switch-heavy workload for the off-CPU bench
 * (bench/vm/offcpu-*, `make bench-offcpu`).
 *
 * Two threads pass one byte back and forth over a pair of pipes for a fixed
 * number of round trips. Each side blocks in read(2) until the other has
 * written, so every round trip is (at least) two voluntary context
 * switches: pp_ping -> read blocks, pp_pong -> read blocks. The byte is
 * incremented by the pong side and checked by the ping side, so a lost or
 * reordered byte is an error, not a silently faster run.
 *
 * Built like the other workloads (static, frame pointers, no inlining; see
 * mk/vm.mk), so the off-CPU stacks are knowable:
 *
 *   main -> pp_run -> pp_ping -> pp_read -> read(2)    (pinger blocks)
 *   pp_thread_start -> pp_pong -> pp_read -> read(2)   (ponger blocks)
 *
 * usage: pingpong [-n ROUNDS] [-s DELAY] [-g] [-c CPU]
 *   -n ROUNDS  round trips (default 100000)
 *   -s DELAY   sleep DELAY seconds after printing the pid, before the work
 *              and its clock start (time to attach a profiler to the pid)
 *   -g         after printing the pid, wait for SIGUSR1 before the work and
 *              its clock start (SIGUSR1 is blocked before the pid is printed)
 *   -c CPU     pin both threads to CPU (default: not pinned)
 * Prints "pingpong pid N" first and, at the end,
 *   "pingpong done N round trips in S s, X switches/s (nvcsw V nivcsw I)"
 * where S is its own elapsed time of the round trips, V and I the
 * voluntary/involuntary context switches of the process (both threads,
 * getrusage) during them, and X = (V + I) / S.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping_fd[2];	/* pinger -> ponger */
static int pong_fd[2];	/* ponger -> pinger */
static long rounds = 100000;

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One byte from fd; 0 at EOF (the other side is gone), -1 on error. */
__attribute__((noinline)) static int pp_read(int fd, unsigned char *c)
{
	volatile ssize_t r;	/* on the stack: keeps the frame pointer */

	do
		r = read(fd, c, 1);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

__attribute__((noinline)) static void pp_write(int fd, unsigned char c)
{
	volatile ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		die("write");
}

__attribute__((noinline)) static void pp_pong(void)
{
	unsigned char c;
	int r;

	while ((r = pp_read(ping_fd[0], &c)) == 1)
		pp_write(pong_fd[1], (unsigned char)(c + 1));
	if (r < 0)
		die("pong read");
}

static void *pp_thread_start(void *arg)
{
	(void)arg;
	pp_pong();
	return NULL;
}

__attribute__((noinline)) static void pp_ping(void)
{
	unsigned char c = 0, back;

	for (long i = 0; i < rounds; i++) {
		pp_write(ping_fd[1], c);
		if (pp_read(pong_fd[0], &back) != 1)
			die("ping read (ponger gone?)");
		if (back != (unsigned char)(c + 1)) {
			fprintf(stderr, "pingpong: round %ld: sent %u got %u\n",
				i, c, back);
			exit(1);
		}
		c = back;
	}
}

__attribute__((noinline)) static void pp_run(double delay, int go)
{
	struct rusage r0, r1;
	pthread_t t;
	double t0, t1;
	long nv, niv;

	if (pthread_create(&t, NULL, pp_thread_start, NULL))
		die("pthread_create");
	if (delay > 0) {
		struct timespec ts = { (time_t)delay,
				       (long)((delay - (time_t)delay) * 1e9) };
		nanosleep(&ts, NULL);
	}
	if (go) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		if (sigwait(&set, &sig))
			die("sigwait");
	}
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_s();
	pp_ping();
	t1 = now_s();
	getrusage(RUSAGE_SELF, &r1);
	close(ping_fd[1]);	/* EOF ends the ponger */
	if (pthread_join(t, NULL))
		die("pthread_join");
	nv = r1.ru_nvcsw - r0.ru_nvcsw;
	niv = r1.ru_nivcsw - r0.ru_nivcsw;
	printf("pingpong done %ld round trips in %.6f s, %.0f switches/s (nvcsw %ld nivcsw %ld)\n",
	       rounds, t1 - t0, (nv + niv) / (t1 - t0), nv, niv);
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong [-n ROUNDS] [-s DELAY] [-g] [-c CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double delay = 0;
	int cpu = -1, go = 0, opt;
	char *end;

	while ((opt = getopt(argc, argv, "n:s:gc:")) != -1) {
		switch (opt) {
		case 'n':
			errno = 0;
			rounds = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || rounds < 1)
				usage();
			break;
		case 's':
			delay = strtod(optarg, &end);
			if (*end || end == optarg || delay < 0 || delay > 3600)
				usage();
			break;
		case 'g':
			go = 1;
			break;
		case 'c':
			cpu = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || cpu < 0 || cpu >= CPU_SETSIZE)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		/* before pthread_create: the ponger inherits the mask */
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	if (go) {
		sigset_t set;

		/* before pthread_create: the ponger inherits the mask, and a
		 * SIGUSR1 sent once the pid is printed is never lost */
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		if (sigprocmask(SIG_BLOCK, &set, NULL))
			die("sigprocmask");
	}
	if (pipe(ping_fd) || pipe(pong_fd))
		die("pipe");
	printf("pingpong pid %d\n", (int)getpid());
	fflush(stdout);
	pp_run(delay, go);
	return 0;
}
