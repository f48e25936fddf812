// SPDX-License-Identifier: GPL-2.0
/*
 * churn - thread-churn workload: creates many short-lived threads, a few at
 * a time, each burning a little CPU through a known frame-pointer chain
 * (churn_thread -> churn_c1 -> churn_c2 -> churn_c3 -> churn_burn).
 *
 * usage: churn [THREADS] (default 300). Prints "churn pid N" first and
 * "churn done N threads" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void churn_burn(void)
{
	volatile unsigned long x = sink | 1;	/* stack use keeps the FP */

	for (int i = 0; i < 50000; i++)
		x = x * 6364136223846793005UL + 1;
	sink = x;
}

#define LEVEL(name, next)						\
	__attribute__((noinline)) static void name(void)		\
	{								\
		sink += __LINE__;					\
		next();							\
		asm volatile("" ::: "memory");				\
	}
LEVEL(churn_c3, churn_burn)
LEVEL(churn_c2, churn_c3)
LEVEL(churn_c1, churn_c2)

__attribute__((noinline)) static void *churn_thread(void *arg)
{
	(void)arg;
	churn_c1();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	pthread_t th[4];
	int made = 0;

	printf("churn pid %d\n", (int)getpid());
	fflush(stdout);
	while (made < n) {
		int k = 0;

		for (; k < 4 && made < n; k++, made++)
			if (pthread_create(&th[k], NULL, churn_thread, NULL))
				return 1;
		for (int i = 0; i < k; i++)
			pthread_join(th[i], NULL);
	}
	printf("churn done %d threads\n", made);
	return 0;
}
