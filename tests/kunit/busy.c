// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the e2e part of `make kunit` (guest-e2e.sh), built static so
 * it runs in the bare initramfs:
 *   busy SECONDS          spin in a few nested frame-pointer functions
 *   busy SECONDS churn    ... while creating and joining short-lived threads
 *   busy SECONDS exec     spin half the time, then exec itself (spin again)
 */
#include <pthread.h>
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

__attribute__((noinline)) static void leaf(void)
{
	for (int i = 0; i < 10000; i++)
		sink += i;
}

__attribute__((noinline)) static void middle(void)
{
	leaf();
	sink++;
}

__attribute__((noinline)) static void outer(double until)
{
	while (now() < until)
		middle();
}

static void *short_thread(void *arg)
{
	(void)arg;
	leaf();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	const char *mode = argc > 2 ? argv[2] : "";
	double end = now() + secs;

	if (!strcmp(mode, "churn")) {
		while (now() < end) {
			pthread_t t[8];

			for (int i = 0; i < 8; i++)
				pthread_create(&t[i], NULL, short_thread, NULL);
			for (int i = 0; i < 8; i++)
				pthread_join(t[i], NULL);
		}
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		char arg[32];

		outer(now() + secs / 2);
		snprintf(arg, sizeof(arg), "%f", secs / 2);
		execl("/proc/self/exe", argv[0], arg, (char *)NULL);
		perror("execl");
		return 1;
	}
	outer(end);
	return 0;
}
