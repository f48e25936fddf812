// SPDX-License-Identifier: MIT
/*
 * nofp: a test program built like a distribution binary, -O2
 * -fomit-frame-pointer, PIE, linked against libnofp.so (the same flags),
 * for the unwind-vm suite (docs/UNWIND.md, tests/e2e/unwind_run.sh).
 *
 *   nofp [-m mix|badsp|spin] [-s SECONDS_BEFORE] [-g GOFILE] [SECONDS]
 *
 * mix (default): the main thread runs main -> nf_run -> nf_outer ->
 *   nf_inner -> lib_mix (library) -> lib_recurse x4 -> lib_drap ->
 *   lib_aligned -> lib_burn, and lib_mix calls back nf_callback ->
 *   lib_burn; a second thread (nf_thread_main) runs the same chain from
 *   its start routine; SIGALRM every 10 ms runs nf_on_alarm -> nf_inner
 *   -> ... inside the signal handler, so some samples unwind through the
 *   kernel's signal frame (__restore_rt) into the interrupted code.
 * badsp: the main thread also spends bursts in nf_badsp(), which points
 *   rsp and rbp at unmapped, non-canonical and kernel addresses in a tight
 *   asm loop (no signals are armed in that mode: the kernel could not
 *   deliver one onto such a stack). A sampler that unwinds must not fault
 *   and must truncate honestly there.
 * spin: only the main thread, only nf_spin -> lib_burn (for the bench).
 * -s S: sleep S seconds first (so a recorder can attach with -p).
 * -g F: after printing the pid, wait until file F exists (polled every
 *   10 ms): the script sets tables and the recorder up, then says go.
 * Prints "nofp pid N" first and "nofp done N rounds" at the end.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

uint64_t lib_burn(unsigned int n);
uint64_t lib_mix(unsigned int n, uint64_t (*cb)(unsigned int));

static volatile int stop;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE uint64_t nf_callback(unsigned int n)
{
	uint64_t r = lib_burn(n / 2);

	sink += r;
	return r;
}

NOINLINE uint64_t nf_inner(unsigned int n)
{
	uint64_t r = lib_mix(n, nf_callback);

	sink += r;
	return r;
}

NOINLINE uint64_t nf_outer(unsigned int n)
{
	uint64_t r = nf_inner(n) + nf_inner(n / 2);

	sink += r;
	return r;
}

static void nf_on_alarm(int sig)
{
	(void)sig;
	sink += nf_inner(20000);
}

/*
 * rsp/rbp into memory that is not a stack, for a few million iterations,
 * then back. Nothing may touch the stack in between: no calls, no
 * signals (none are armed in this mode).
 */
NOINLINE void nf_badsp(void)
{
	static const uint64_t bad[] = {
		0x10000,			/* unmapped, low */
		0x00007ffffffff000ull,		/* top of user space */
		0x8000000000000000ull,		/* non-canonical */
		0xffffffff81000000ull,		/* kernel text */
		0x7,				/* unaligned, tiny */
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = bad[i];

		__asm__ volatile(
			"mov %%rsp, %%r12\n\t"
			"mov %%rbp, %%r13\n\t"
			"mov %0, %%rsp\n\t"
			"mov %0, %%rbp\n\t"
			"mov $4000000, %%ecx\n"
			"1:\n\t"
			"xor %%rcx, %%rax\n\t"
			"dec %%ecx\n\t"
			"jnz 1b\n\t"
			"mov %%r12, %%rsp\n\t"
			"mov %%r13, %%rbp\n\t"
			: : "r"(v) : "rax", "rcx", "r12", "r13", "memory", "cc");
	}
}

NOINLINE uint64_t nf_spin(unsigned int n)
{
	uint64_t r = lib_burn(n);

	sink += r;
	return r;
}

NOINLINE uint64_t nf_run(const char *mode, double secs)
{
	double end = now() + secs;
	uint64_t rounds = 0;

	while (now() < end && !stop) {
		if (!strcmp(mode, "spin")) {
			nf_spin(200000);
		} else {
			nf_outer(40000);
			if (!strcmp(mode, "badsp"))
				nf_badsp();
		}
		rounds++;
	}
	return rounds;
}

static void *nf_thread_main(void *arg)
{
	(void)arg;
	while (!stop)
		sink += nf_outer(30000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = "mix", *go = NULL;
	double secs = 4, before = 0;
	pthread_t th;
	uint64_t rounds;
	int c;

	while ((c = getopt(argc, argv, "m:s:g:")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 's':
			before = atof(optarg);
			break;
		case 'g':
			go = optarg;
			break;
		default:
			fprintf(stderr, "usage: nofp [-m mix|badsp|spin] "
				"[-s SECONDS_BEFORE] [-g GOFILE] [SECONDS]\n");
			return 2;
		}
	}
	if (optind < argc)
		secs = atof(argv[optind]);
	if (strcmp(mode, "mix") && strcmp(mode, "badsp") &&
	    strcmp(mode, "spin")) {
		fprintf(stderr, "nofp: unknown mode %s\n", mode);
		return 2;
	}
	printf("nofp pid %d\n", (int)getpid());
	fflush(stdout);
	if (before > 0)
		usleep((useconds_t)(before * 1e6));
	while (go && access(go, F_OK))
		usleep(10000);
	if (!strcmp(mode, "mix")) {
		struct sigaction sa;
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = nf_on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	if (strcmp(mode, "spin") &&
	    pthread_create(&th, NULL, nf_thread_main, NULL)) {
		perror("pthread_create");
		return 1;
	}
	rounds = nf_run(mode, secs);
	stop = 1;
	if (!strcmp(mode, "mix")) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (strcmp(mode, "spin"))
		pthread_join(th, NULL);
	printf("nofp done %llu rounds\n", (unsigned long long)rounds);
	return 0;
}
