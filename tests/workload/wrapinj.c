// SPDX-License-Identifier: GPL-2.0
/*
 * wrapinj - an off-CPU injector that blocks through glibc's own wrappers
 * (nanosleep(), read()), for the first-sample suite
 * (tests/e2e/firstsample_run.sh). It starts blocking at once: recorded
 * with `spulse record --off-cpu -- wrapinj`, its first waits are the ones
 * a late table would lose. Built static and dynamic, with and without
 * frame pointers (mk/firstsample.mk).
 *
 *   fs_sleep_wait  -> nanosleep()   main thread, SLEEP_MS each
 *   fs_read_wait   -> read()        reader thread, on a pipe the writer
 *                                   fills every READ_MS (fs_write_delay ->
 *                                   nanosleep(), then fs_write_wake ->
 *                                   write())
 *
 * Truth: CLOCK_MONOTONIC and the thread's CPU clock right before and after
 * each blocking call; off-CPU time = wall time - CPU time inside the call
 * (the syscall's own entry and exit run on the CPU: under TCG that is not
 * negligible). Summed per function, printed at the end as JSON lines to
 * -o FILE:
 *   {"func":F,"n":N,"wall_ns":W,"total_ns":T,"first_s_ns":S}
 *   (T: off-CPU truth; S: the part of T in waits that began within 1 s of
 *   main())
 *
 * usage: wrapinj [-o FILE] [-n ROUNDS] [-s SLEEP_MS] [-r READ_MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static int rounds = 40, sleep_ms = 30, read_ms = 22;
static int pfd[2];
static int64_t t_start;

struct truth {
	const char *func;
	int n;
	int64_t wall, total, first_s;
};
static struct truth t_sleep = { "fs_sleep_wait", 0, 0, 0, 0 };
static struct truth t_read = { "fs_read_wait", 0, 0, 0, 0 };

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* wall a..b, thread CPU time ca..cb around one blocking call */
static void account(struct truth *t, int64_t a, int64_t b, int64_t ca,
		    int64_t cb)
{
	int64_t off = (b - a) - (cb - ca);

	t->n++;
	t->wall += b - a;
	t->total += off;
	if (a - t_start < 1000000000)
		t->first_s += off;
}

NOINLINE void fs_sleep_wait(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	int64_t ca = cpu(), a = now(), b, cb;

	nanosleep(&ts, NULL);
	b = now();
	cb = cpu();
	account(&t_sleep, a, b, ca, cb);
}

NOINLINE int fs_read_wait(void)
{
	char c;
	int64_t ca = cpu(), a = now(), b, cb;
	ssize_t n = read(pfd[0], &c, 1);

	b = now();
	cb = cpu();
	account(&t_read, a, b, ca, cb);
	return n == 1;
}

NOINLINE void fs_write_delay(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

NOINLINE void fs_write_wake(void)
{
	if (write(pfd[1], "x", 1) != 1)
		abort();
}

static void *reader(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < rounds; i++)
		if (!fs_read_wait())
			break;
	return NULL;
}

static void *writer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		fs_write_delay(read_ms);
		fs_write_wake();
	}
	return NULL;
}

static void print(FILE *f, const struct truth *t)
{
	fprintf(f, "{\"func\":\"%s\",\"n\":%d,\"wall_ns\":%lld,"
		"\"total_ns\":%lld,\"first_s_ns\":%lld}\n", t->func, t->n,
		(long long)t->wall, (long long)t->total, (long long)t->first_s);
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	pthread_t r, w;
	FILE *f = stdout;
	int c, i;

	t_start = now();
	while ((c = getopt(argc, argv, "o:n:s:r:")) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': rounds = atoi(optarg); break;
		case 's': sleep_ms = atoi(optarg); break;
		case 'r': read_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: wrapinj [-o FILE] [-n ROUNDS] "
				"[-s SLEEP_MS] [-r READ_MS]\n");
			return 2;
		}
	}
	if (rounds < 1 || sleep_ms < 1 || read_ms < 1 || pipe(pfd))
		return 2;
	if (pthread_create(&r, NULL, reader, NULL) ||
	    pthread_create(&w, NULL, writer, NULL))
		return 1;
	for (i = 0; i < rounds; i++)
		fs_sleep_wait(sleep_ms);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	print(f, &t_sleep);
	print(f, &t_read);
	if (f != stdout)
		fclose(f);
	return 0;
}
