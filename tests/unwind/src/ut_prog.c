/* SPDX-License-Identifier: MIT */
/*
 * Unwind-table test program (a PIE built -O2 -fomit-frame-pointer, linked
 * with ut_lib.so): `ut_prog [SECONDS]` runs the library's functions in the
 * main thread and in a second thread, with a SIGALRM handler (interval
 * timer) that also runs them, so a profiler samples plain, realigned,
 * PLT, signal-handler (above __restore_rt) and thread-start stacks. With no
 * argument it runs 0 seconds (one round) and exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "ut_lib.h"

static volatile sig_atomic_t ut_alarms;
static volatile uint64_t ut_total;

static void ut_on_alarm(int sig)
{
	(void)sig;
	ut_alarms++;
	ut_total += ut_recurse(3, 40);
}

static double ut_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double ut_until;

static void *ut_thread(void *arg)
{
	(void)arg;
	do
		ut_total += ut_recurse(6, 100);
	while (ut_now() < ut_until);
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa = { 0 };
	double secs = argc > 1 ? atof(argv[1]) : 0;
	pthread_t th;

	ut_until = ut_now() + secs;
	sa.sa_handler = ut_on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 1;
	if (pthread_create(&th, NULL, ut_thread, NULL))
		return 1;
	do
		ut_total += ut_recurse(8, 200);
	while (ut_now() < ut_until);
	pthread_join(th, NULL);
	printf("ut_prog: %d alarms, %llu\n", (int)ut_alarms,
	       (unsigned long long)ut_total);
	return 0;
}
