// SPDX-License-Identifier: MIT
/*
 * stall — the latency walk-through's workload (README, docs/LATENCY.md).
 *
 * A toy request server with one rare stall:
 *   main     serve(): handle_request(): parse_request() burns CPU,
 *            lookup_cache() takes cache_lock, send_response() writes the
 *            reply to a pipe;
 *   logger   log_loop(): blocks in read() on that pipe;
 *   flusher  every 20 ms flush_cache() takes cache_lock and "writes to
 *            disk" (sleeps 1 ms) — except once, at about half the run, when
 *            the disk is slow and it holds cache_lock for 120 ms
 *            (slow_disk_write()). main's lookup_cache() waits on the lock
 *            for that long (and the logger starves): the stall a flight
 *            recorder should catch. No thread is otherwise off CPU for more
 *            than a few ms.
 *
 * usage: stall [SECONDS]   (default 6; the stall happens at SECONDS / 2)
 *
 * Built like the other workloads (static, frame pointers, no inlining). The
 * lock is a pthread mutex, as real programs use, so the waits go through
 * glibc's futex path.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int logpipe[2];
static volatile int stop;
static volatile uint64_t sink;
static double run_s = 6.0;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void parse_request(int n)
{
	uint64_t x = (uint64_t)n;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
}

__attribute__((noinline)) static void lookup_cache(int n)
{
	pthread_mutex_lock(&cache_lock);
	sink += (uint64_t)n;
	pthread_mutex_unlock(&cache_lock);
}

__attribute__((noinline)) static void send_response(int n)
{
	char c = (char)n;

	if (write(logpipe[1], &c, 1) != 1)
		abort();
}

__attribute__((noinline)) static void handle_request(int n)
{
	parse_request(n);
	lookup_cache(n);
	send_response(n);
}

__attribute__((noinline)) static void serve(double until)
{
	for (int n = 0; now_s() < until; n++)
		handle_request(n);
}

__attribute__((noinline)) static void log_loop(void)
{
	char buf[64];

	while (read(logpipe[0], buf, sizeof(buf)) > 0)
		sink += (uint64_t)buf[0];
}

static void *logger(void *arg)
{
	(void)arg;
	log_loop();
	return NULL;
}

__attribute__((noinline)) static void slow_disk_write(void)
{
	sleep_ms(120);
}

__attribute__((noinline)) static void disk_write(void)
{
	sleep_ms(1);
}

__attribute__((noinline)) static void flush_cache(int slow)
{
	pthread_mutex_lock(&cache_lock);
	if (slow)
		slow_disk_write();
	else
		disk_write();
	pthread_mutex_unlock(&cache_lock);
}

static void *flusher(void *arg)
{
	double t0 = now_s();
	int stalled = 0;

	(void)arg;
	while (!stop) {
		int slow = !stalled && now_s() - t0 >= run_s / 2;

		flush_cache(slow);
		if (slow) {
			stalled = 1;
			fprintf(stderr, "stall: cache_lock held 120 ms at %.3f s\n",
				now_s() - t0);
		}
		sleep_ms(20);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t l, f;

	if (argc > 1)
		run_s = atof(argv[1]);
	if (!(run_s > 0) || pipe(logpipe))
		return 2;
	pthread_create(&l, NULL, logger, NULL);
	pthread_create(&f, NULL, flusher, NULL);
	serve(now_s() + run_s);
	stop = 1;
	pthread_join(f, NULL);
	close(logpipe[1]);
	pthread_join(l, NULL);
	return 0;
}
