// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the e2e part of `make kunit` (guest-e2e.sh), built static so
 * it runs in the bare initramfs:
 *   busy SECONDS          spin in a few nested frame-pointer functions
 *   busy SECONDS churn    ... while creating and joining short-lived threads
 *   busy SECONDS exec     spin half the time, then exec itself (spin again)
 *   busy SECONDS storm    context-switch storm with thread churn (off-CPU):
 *                         4 pairs of threads ping-pong one byte over pipes,
 *                         2 spinners share the CPUs, and short-lived
 *                         threads that block once are created and joined
 *                         continuously; each pair is recreated every 200
 *                         round trips (threads exit while others wait on
 *                         them). Prints "storm N round trips, M threads".
 *   busy SECONDS zombie [STOPFILE]
 *                         the main thread pthread_exit()s at once, a worker
 *                         thread spins for SECONDS or until STOPFILE exists
 *                         (the leader is a zombie meanwhile)
 *   busy SECONDS short    fork + exec itself as "busy 0.02" (spin 20 ms,
 *                         exit) one child after another, for SECONDS and
 *                         at least 8 children; prints
 *                         "child PID" for each, then "short N children"
 *   busy SECONDS jit      spin in code copied into an anonymous executable
 *                         mapping (x86-64; every sample's IP is outside any
 *                         file-backed module)
 *   busy N many           N children one after another, each spins 10 ms
 *                         then sleeps; all killed 1 s after the last one
 *                         started (more live processes than meta tracks)
 *   busy SECONDS fan      256 threads block the whole time (many events
 *                         to create at start, no CPU time) while the main thread creates
 *                         one short spinning thread after another and
 *                         joins each (switches from the creator straight
 *                         to its new child, pinned to one CPU)
 *   busy SECONDS threads FILE
 *                         two threads named early0/early1 spin from the
 *                         start; once FILE exists (polled, at most 120 s)
 *                         two more, late0/late1, are created; all four and
 *                         the main thread spin SECONDS more, then exit.
 *                         Prints "threads ready" once the early ones run.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
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

#define FAN_SLEEPERS 256
static double fan_end;

static pthread_mutex_t fan_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fan_cv = PTHREAD_COND_INITIALIZER;
static int fan_done;

/* blocked until the end: an event to create, no CPU time */
static void *fan_sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fan_mu);
	while (!fan_done)
		pthread_cond_wait(&fan_cv, &fan_mu);
	pthread_mutex_unlock(&fan_mu);
	return NULL;
}

static void *fan_child(void *arg)
{
	(void)arg;
	leaf();
	return NULL;
}

static int fan(double secs)
{
	pthread_t sl[FAN_SLEEPERS], c;

	fan_end = now() + secs;
	for (int i = 0; i < FAN_SLEEPERS; i++)
		if (pthread_create(&sl[i], NULL, fan_sleeper, NULL))
			return 1;
	while (now() < fan_end) {
		if (pthread_create(&c, NULL, fan_child, NULL))
			return 1;
		pthread_join(c, NULL);
	}
	pthread_mutex_lock(&fan_mu);
	fan_done = 1;
	pthread_cond_broadcast(&fan_cv);
	pthread_mutex_unlock(&fan_mu);
	for (int i = 0; i < FAN_SLEEPERS; i++)
		pthread_join(sl[i], NULL);
	return 0;
}

static double storm_end;
static atomic_long storm_trips, storm_threads;

struct pp {
	int ab[2], ba[2];
};

static void *pp_pong(void *arg)
{
	struct pp *p = arg;
	char c;

	while (read(p->ab[0], &c, 1) == 1 && c)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

/* One ping-pong pair at a time, recreated every 200 round trips. */
static void *pp_ping(void *arg)
{
	(void)arg;
	while (now() < storm_end) {
		struct pp p;
		pthread_t t;
		char c = 1, z = 0;

		if (pipe(p.ab) || pipe(p.ba))
			return NULL;
		pthread_create(&t, NULL, pp_pong, &p);
		atomic_fetch_add(&storm_threads, 1);
		for (int i = 0; i < 200 && now() < storm_end; i++) {
			if (write(p.ab[1], &c, 1) != 1 || read(p.ba[0], &c, 1) != 1)
				break;
			atomic_fetch_add(&storm_trips, 1);
		}
		if (write(p.ab[1], &z, 1) != 1)
			break;
		pthread_join(t, NULL);
		close(p.ab[0]); close(p.ab[1]); close(p.ba[0]); close(p.ba[1]);
	}
	return NULL;
}

static void *blocker(void *arg)
{
	struct timespec ts = { 0, 200000 };

	(void)arg;
	nanosleep(&ts, NULL);	/* one off-CPU interval, then exit */
	leaf();
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	outer(storm_end);
	return NULL;
}

static int storm(double secs)
{
	pthread_t ping[4], spin[2];

	storm_end = now() + secs;
	for (int i = 0; i < 4; i++)
		pthread_create(&ping[i], NULL, pp_ping, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&spin[i], NULL, spinner, NULL);
	while (now() < storm_end) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, blocker, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		atomic_fetch_add(&storm_threads, 4);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(ping[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(spin[i], NULL);
	printf("storm %ld round trips, %ld threads\n", atomic_load(&storm_trips),
	       atomic_load(&storm_threads));
	return 0;
}

static double zombie_until;
static const char *zombie_stop;

static void *zombie_worker(void *arg)
{
	(void)arg;
	while (now() < zombie_until &&
	       !(zombie_stop && !access(zombie_stop, F_OK)))
		outer(now() + 0.05);
	return NULL;
}

static int zombie(double secs, const char *stop)
{
	pthread_t t;

	zombie_until = now() + secs;
	zombie_stop = stop;
	if (pthread_create(&t, NULL, zombie_worker, NULL))
		return 1;
	pthread_exit(NULL);	/* the process lives on in the worker */
}

static int short_children(double secs, const char *argv0)
{
	double end = now() + secs;
	int n = 0;

	while (now() < end || n < 8) {
		pid_t c = fork();
		int st;

		if (c < 0)
			return 1;
		if (!c) {
			execl("/proc/self/exe", argv0, "0.02", (char *)NULL);
			_exit(127);
		}
		printf("child %d\n", (int)c);
		fflush(stdout);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		n++;
	}
	printf("short %d children\n", n);
	return 0;
}

/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char jit_loop[] = {
	0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3,
};

static int jit(double secs)
{
	double end = now() + secs;
	void (*fn)(long);
	void *code;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, jit_loop, sizeof(jit_loop));
	fn = (void (*)(long))code;
	while (now() < end)
		fn(1000000);
	return 0;
}

static int many(int n)
{
	pid_t *kids = calloc(n, sizeof(*kids));
	int ok = 0;

	if (!kids)
		return 1;
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			break;
		if (!kids[i]) {
			outer(now() + 0.01);
			for (;;)
				pause();
		}
		ok++;
		usleep(5000);
	}
	sleep(1);
	for (int i = 0; i < ok; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < ok; i++)
		waitpid(kids[i], NULL, 0);
	printf("many %d children\n", ok);
	free(kids);
	return ok == n ? 0 : 1;
}

static double named_end;

static void *named_spinner(void *arg)
{
	prctl(PR_SET_NAME, (unsigned long)arg, 0, 0, 0);
	while (!*(volatile double *)&named_end)
		middle();
	outer(named_end);
	return NULL;
}

static int threads(double secs, const char *file)
{
	static char *names[] = { "early0", "early1", "late0", "late1" };
	pthread_t t[4];
	double give_up = now() + 120;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, named_spinner, names[i]);
	printf("threads ready\n");
	fflush(stdout);
	while (access(file, F_OK) && now() < give_up)
		usleep(10000);
	for (int i = 2; i < 4; i++)
		pthread_create(&t[i], NULL, named_spinner, names[i]);
	*(volatile double *)&named_end = now() + secs;
	outer(named_end);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	const char *mode = argc > 2 ? argv[2] : "";
	double end = now() + secs;

	if (!strcmp(mode, "storm"))
		return storm(secs);
	if (!strcmp(mode, "fan"))
		return fan(secs);
	if (!strcmp(mode, "zombie"))
		return zombie(secs, argc > 3 ? argv[3] : NULL);
	if (!strcmp(mode, "jit"))
		return jit(secs);
	if (!strcmp(mode, "many"))
		return many((int)secs);
	if (!strcmp(mode, "short"))
		return short_children(secs, argv[0]);
	if (!strcmp(mode, "threads") && argc > 3)
		return threads(secs, argv[3]);
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
