// SPDX-License-Identifier: GPL-2.0
/*
 * inject - off-CPU injector with known truth, for the latency suite
 * (tests/e2e/run-latency.sh, docs/VM.md).
 *
 * Built static with frame pointers everywhere (mk/vm.mk WORKLOAD_CFLAGS).
 * Every blocking call is a raw `syscall` instruction inside a noinline
 * frame-pointer function (glibc's wrappers have no frame pointer and would
 * hide their caller), so the user part of each off-CPU stack is exact:
 *
 *   pipe   inj_pipe_reader -> inj_pipe_wait -> inj_sys_read       (blocked)
 *          inj_pipe_writer -> inj_pipe_wake -> inj_sys_write      (waker)
 *          inj_pipe_writer -> inj_pipe_delay -> inj_sys_nanosleep
 *   mutex  inj_mutex_waiter -> inj_mutex_lock -> inj_mutex_wait -> inj_sys_futex
 *          inj_mutex_holder -> inj_mutex_unlock -> inj_mutex_wake -> inj_sys_futex
 *          (own futex mutex: 0 free, 1 locked, 2 contended; the holder keeps
 *          it for a known time in inj_mutex_hold -> inj_sys_nanosleep)
 *   sleep  inj_sleeper -> inj_sleep_wait -> inj_sys_nanosleep
 *   runq   inj_runq_busy -> inj_runq_spin (pinned to CPU 1 with
 *          inj_runq_hog, a CPU hog); inj_runq_control -> inj_runq_ctl_spin
 *          alone on CPU 0. The spinners read CLOCK_MONOTONIC in a tight loop
 *          and record every gap > GAP_NS: the time they were not running.
 *   stall  (-S) inj_stall_reader -> inj_stall_wait -> inj_sys_read, woken
 *          by inj_stall_writer -> inj_stall_wake after STALL ms.
 *
 * The injector measures its own truth: CLOCK_MONOTONIC right before and
 * after each blocking syscall, the waker's tid and the time just before
 * and after the waking syscall. It buffers everything in memory and prints
 * it at the end as JSON lines (one object per line) to -o FILE or stdout:
 *
 *   {"ev":"clock","mono_ns":M,"real_ns":R}   (R - M: realtime offset)
 *   {"ev":"thread","role":ROLE,"tid":T,"func":F}
 *   {"ev":"wait","scn":S,"i":N,"tid":T,"func":F,"enter_ns":A,"exit_ns":B,
 *    "req_ns":D,"waker_tid":W,"waker_func":G,"wake_lo_ns":L,"wake_hi_ns":H,
 *    "cpu_ns":C,"nvcsw":V,"nivcsw":I,"seen_ns":Z}
 *     (C: the thread's CPU time inside the wait, V/I: its voluntary /
 *     involuntary switches inside it, Z: when the waker saw it asleep)
 *   {"ev":"gap","scn":S,"tid":T,"start_ns":A,"end_ns":B}
 *   {"ev":"phase","scn":S,"tid":T,"cpu":C,"start_ns":A,"end_ns":B,
 *    "gaps":N,"gap_ns":G}
 *   {"ev":"done","phases":"...","elapsed_ns":E}
 *
 * All times are CLOCK_MONOTONIC ns. A wait whose syscall did not block as
 * designed (a futex wait that returned EAGAIN) is not printed as a wait.
 *
 * usage: inject [-o FILE] [-g GOFILE] [-p PHASES] [-n WAITS] [-r RUNQ_MS]
 *               [-S STALL_MS] [-P PRE_MS] [-A POST_MS]
 *   PHASES: letters of the phases to run in order, default "pmsr"
 *   (pipe, mutex, sleep, runq); "f" = flight: PRE_MS of pipe waits, a
 *   STALL_MS stall, POST_MS of pipe waits. Prints "inject pid N" first;
 *   with -g it then waits (polling) until GOFILE exists before starting,
 *   so a profiler can attach to the pid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GAP_NS 300000LL		/* a spinner gap longer than this is off-CPU */
#define MAX_WAITS 4096
#define MAX_GAPS 65536

struct wait_rec {
	const char *scn, *func, *waker_func;
	int i, tid, waker_tid;
	int64_t enter, exit, req, wake_lo, wake_hi;
	int64_t cpu;		/* thread CPU time inside [enter, exit] */
	int64_t seen;		/* when the waker saw the thread asleep (0: n/a) */
	long nvcsw, nivcsw;	/* context switches inside it */
};


struct gap_rec {
	const char *scn;
	int tid;
	int64_t start, end;
};

static struct wait_rec waits[MAX_WAITS];
static atomic_int n_waits;
static struct gap_rec gaps[MAX_GAPS];
static atomic_int n_gaps;
static char thread_lines[64][160];
static atomic_int n_threads;
static char phase_lines[16][256];
static atomic_int n_phases;
static volatile unsigned long sink;
static int n_per_phase = 40;
static int runq_ms = 1500;
static int stall_ms = 100;
static int pre_ms = 3000, post_ms = 1000;

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Around each wait: the context-switch counts of the thread, CLOCK_MONOTONIC
 * and the thread's CPU time. wall - cpu is the time the thread was not
 * running, as the guest kernel sees it (host steal time of a TCG vCPU is
 * charged to the running thread, so it cancels out).
 */
struct stamp {
	int64_t wall, cpu;
	long nvcsw, nivcsw;
};

static void stamp_in(struct stamp *s)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	s->nvcsw = ru.ru_nvcsw;
	s->nivcsw = ru.ru_nivcsw;
	s->wall = now();
	s->cpu = thread_cpu();
}

static void stamp_out(struct stamp *s)
{
	struct rusage ru;

	s->cpu = thread_cpu();
	s->wall = now();
	getrusage(RUSAGE_THREAD, &ru);
	s->nvcsw = ru.ru_nvcsw;
	s->nivcsw = ru.ru_nivcsw;
}

static void wait_span(struct wait_rec *w, const struct stamp *a,
		      const struct stamp *b)
{
	w->enter = a->wall;
	w->exit = b->wall;
	w->cpu = b->cpu - a->cpu;
	w->nvcsw = b->nvcsw - a->nvcsw;
	w->nivcsw = b->nivcsw - a->nivcsw;
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ---- raw syscalls (frame pointer kept by a volatile stack local) ---- */

__attribute__((noinline)) static long inj_sys_read(int fd, void *buf, long n)
{
	volatile long ret;
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
		     : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

__attribute__((noinline)) static long inj_sys_write(int fd, const void *buf, long n)
{
	volatile long ret;
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(n)
		     : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

__attribute__((noinline)) static long inj_sys_nanosleep(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	volatile long ret;
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
		     : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

__attribute__((noinline)) static long inj_sys_futex(atomic_int *uaddr, int op, int val)
{
	register long r10 asm("r10") = 0;	/* no timeout */
	volatile long ret;
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_futex), "D"(uaddr), "S"((long)op),
		       "d"((long)val), "r"(r10)
		     : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

/* ---- truth records ---- */

static struct wait_rec *new_wait(void)
{
	int i = atomic_fetch_add(&n_waits, 1);

	if (i >= MAX_WAITS) {
		fprintf(stderr, "inject: too many waits\n");
		exit(1);
	}
	return &waits[i];
}

static void note_thread(const char *role, const char *func)
{
	int i = atomic_fetch_add(&n_threads, 1);

	if (i < 64)
		snprintf(thread_lines[i], sizeof(thread_lines[i]),
			 "{\"ev\":\"thread\",\"role\":\"%s\",\"tid\":%d,\"func\":\"%s\"}",
			 role, gettid_(), func);
}

/* Deterministic varied delays: 5..30 ms in 0.25 ms steps. */
static int64_t delay_ns(unsigned int *seed, int lo_ms, int hi_ms)
{
	*seed = *seed * 1103515245u + 12345u;
	return (int64_t)lo_ms * 1000000 +
	       (int64_t)((*seed >> 8) % ((hi_ms - lo_ms) * 4 + 1)) * 250000;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("inject: sched_setaffinity");
}

/*
 * Wait (polling /proc, at most 1 s) until thread @tid sleeps
 * (state S), so that an injected delay starts only once the wait it is
 * meant for has begun: a reader that had not yet blocked would find the
 * byte already there (a vCPU of a TCG guest can stall for milliseconds).
 * Return: when it was seen asleep (0: never). From then until the waker's
 * syscall the thread is certainly off CPU: a lower bound of the wait's
 * off-CPU time that involves no CPU-time clock.
 */
static int64_t wait_until_sleeping(int tid)
{
	int64_t until = now() + 1000000000LL;
	char path[64], buf[256];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	/* poll without sleeping (sched_yield lets a waiter sharing this CPU
	 * run): a late observation only makes the wait's truth inexact */
	while (now() < until) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		char *p = NULL;

		if (n > 0) {
			buf[n] = 0;
			p = strrchr(buf, ')');
		}
		if (p && p[1] == ' ' && p[2] == 'S') {
			int64_t t = now();

			close(fd);
			return t;
		}
		sched_yield();
	}
	close(fd);
	return 0;
}

/* ---- (a) pipe: reader blocks in read(), writer writes after a delay ---- */

struct pipe_ctx {
	const char *scn;	/* "pipe" or "flight" */
	int fd[2];
	int n;
	int64_t until;		/* flight: run until this time instead of n */
	atomic_int writer_tid;
	atomic_int rounds;	/* completed by the writer */
	int64_t wake_lo[MAX_WAITS], wake_hi[MAX_WAITS], req[MAX_WAITS];
	int64_t seen[MAX_WAITS];
	atomic_int done;
	atomic_int reader_ready;
	atomic_int reader_tid;
	unsigned int seed;
};

__attribute__((noinline)) static long inj_pipe_wait(struct pipe_ctx *c, char *b)
{
	long r = inj_sys_read(c->fd[0], b, 1);

	asm volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static void inj_pipe_wake(struct pipe_ctx *c, int i)
{
	char b = (char)i;

	c->wake_lo[i] = now();
	if (inj_sys_write(c->fd[1], &b, 1) != 1)
		die("inject: pipe write");
	c->wake_hi[i] = now();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void inj_pipe_delay(int64_t ns)
{
	inj_sys_nanosleep(ns);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void *inj_pipe_writer(void *arg)
{
	struct pipe_ctx *c = arg;

	note_thread("pipe_writer", "inj_pipe_wake");
	atomic_store(&c->writer_tid, gettid_());
	while (!atomic_load(&c->reader_ready))	/* the reader is started */
		inj_sys_nanosleep(1000000);
	for (int i = 0; c->until ? now() < c->until : i < c->n; i++) {
		if (i >= MAX_WAITS - 1)
			break;
		c->req[i] = delay_ns(&c->seed, 5, 30);
		c->seen[i] = wait_until_sleeping(atomic_load(&c->reader_tid));
		inj_pipe_delay(c->req[i]);
		inj_pipe_wake(c, i);
		atomic_store(&c->rounds, i + 1);
	}
	/* end marker: one more byte, reader stops */
	atomic_store(&c->done, 1);
	{
		char b = 0;

		if (inj_sys_write(c->fd[1], &b, 1) != 1)
			die("inject: pipe write");
	}
	asm volatile("" ::: "memory");
	return NULL;
}

__attribute__((noinline)) static void *inj_pipe_reader(void *arg)
{
	struct pipe_ctx *c = arg;
	int tid = gettid_();
	struct wait_rec tmp[MAX_WAITS];
	int n = 0;

	note_thread(strcmp(c->scn, "pipe") ? "flight_reader" : "pipe_reader",
		    "inj_pipe_wait");
	atomic_store(&c->reader_tid, tid);
	atomic_store(&c->reader_ready, 1);
	for (;;) {
		struct stamp a, b;
		char ch;

		stamp_in(&a);
		if (inj_pipe_wait(c, &ch) != 1)
			die("inject: pipe read");
		stamp_out(&b);
		if (atomic_load(&c->done) && atomic_load(&c->rounds) <= n)
			break;
		if (n < MAX_WAITS) {
			memset(&tmp[n], 0, sizeof(tmp[n]));
			wait_span(&tmp[n], &a, &b);
		}
		n++;
	}
	for (int i = 0; i < n && i < MAX_WAITS; i++) {
		struct wait_rec *w = new_wait();

		*w = tmp[i];
		if (!w->enter)
			continue;
		w->scn = c->scn;
		w->func = "inj_pipe_wait";
		w->i = i;
		w->tid = tid;
		w->req = c->req[i];
		w->waker_tid = atomic_load(&c->writer_tid);
		w->waker_func = "inj_pipe_wake";
		w->wake_lo = c->wake_lo[i];
		w->wake_hi = c->wake_hi[i];
		w->seen = c->seen[i];
	}
	asm volatile("" ::: "memory");
	return NULL;
}

/* ---- (b) futex mutex held by one thread, awaited by another ---- */

static atomic_int mtx;		/* 0 free, 1 locked, 2 locked + waiters */
static atomic_int gate;		/* round number the waiter may start */
static atomic_int done_round;	/* round the waiter finished */
static atomic_int holder_tid;
static atomic_int waiter_tid;
static int64_t m_wake_lo[MAX_WAITS], m_wake_hi[MAX_WAITS], m_req[MAX_WAITS];
static int64_t m_seen[MAX_WAITS];
static atomic_int m_round;	/* round the holder is in */

/* The waiter's blocking futex wait on the mutex word: truth is measured. */
__attribute__((noinline)) static void inj_mutex_wait(int tid)
{
	struct stamp a, b;
	long r;

	stamp_in(&a);
	r = inj_sys_futex(&mtx, FUTEX_WAIT_PRIVATE, 2);
	stamp_out(&b);
	if (r == 0) {
		struct wait_rec *w = new_wait();
		int i = atomic_load(&m_round);

		*w = (struct wait_rec){ .scn = "mutex", .func = "inj_mutex_wait",
			.i = i, .tid = tid,
			.req = m_req[i], .waker_tid = atomic_load(&holder_tid),
			.waker_func = "inj_mutex_wake" };
		wait_span(w, &a, &b);
	}
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void inj_mutex_lock(int tid)
{
	int c = 0;

	if (atomic_compare_exchange_strong(&mtx, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&mtx, 2);
	while (c != 0) {
		inj_mutex_wait(tid);
		c = atomic_exchange(&mtx, 2);
	}
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void inj_mutex_wake(int i)
{
	m_wake_lo[i] = now();
	inj_sys_futex(&mtx, FUTEX_WAKE_PRIVATE, 1);
	m_wake_hi[i] = now();
	asm volatile("" ::: "memory");
}

/* @i: the holder's round (its wakeup is timed), -1 for the waiter */
__attribute__((noinline)) static void inj_mutex_unlock(int i)
{
	if (atomic_fetch_sub(&mtx, 1) != 1) {
		atomic_store(&mtx, 0);
		if (i >= 0)
			inj_mutex_wake(i);
		else
			inj_sys_futex(&mtx, FUTEX_WAKE_PRIVATE, 1);
	}
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void inj_mutex_hold(int64_t ns)
{
	inj_sys_nanosleep(ns);
	asm volatile("" ::: "memory");
}

/* Round handshakes (gate, done): a futex wait in their own functions. */
__attribute__((noinline)) static void inj_mutex_gate_wait(atomic_int *w, int want)
{
	int v;

	while ((v = atomic_load(w)) < want)
		inj_sys_futex(w, FUTEX_WAIT_PRIVATE, v);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void inj_mutex_gate_open(atomic_int *w, int v)
{
	atomic_store(w, v);
	inj_sys_futex(w, FUTEX_WAKE_PRIVATE, 1);
	asm volatile("" ::: "memory");
}

static int mutex_n;

__attribute__((noinline)) static void *inj_mutex_holder(void *arg)
{
	unsigned int seed = 7;

	(void)arg;
	note_thread("mutex_holder", "inj_mutex_wake");
	atomic_store(&holder_tid, gettid_());
	for (int i = 0; i < mutex_n; i++) {
		m_req[i] = delay_ns(&seed, 5, 30);
		atomic_store(&m_round, i);
		inj_mutex_lock(-1);
		inj_mutex_gate_open(&gate, i + 1);
		/* the known hold starts once the waiter sleeps on the mutex */
		while (atomic_load(&mtx) != 2)
			sched_yield();
		m_seen[i] = wait_until_sleeping(atomic_load(&waiter_tid));
		inj_mutex_hold(m_req[i]);
		inj_mutex_unlock(i);
		inj_mutex_gate_wait(&done_round, i + 1);
	}
	asm volatile("" ::: "memory");
	return NULL;
}

__attribute__((noinline)) static void *inj_mutex_waiter(void *arg)
{
	int tid = gettid_();

	(void)arg;
	note_thread("mutex_waiter", "inj_mutex_wait");
	atomic_store(&waiter_tid, tid);
	for (int i = 0; i < mutex_n; i++) {
		inj_mutex_gate_wait(&gate, i + 1);
		inj_mutex_lock(tid);
		inj_mutex_unlock(-1);
		inj_mutex_gate_open(&done_round, i + 1);
	}
	asm volatile("" ::: "memory");
	return NULL;
}

/* ---- (c) nanosleep of known lengths ---- */

__attribute__((noinline)) static void inj_sleep_wait(int i, int tid, int64_t ns)
{
	struct stamp a, b;
	struct wait_rec *w;

	stamp_in(&a);
	if (inj_sys_nanosleep(ns) != 0)
		die("inject: nanosleep");
	stamp_out(&b);
	w = new_wait();
	*w = (struct wait_rec){ .scn = "sleep", .func = "inj_sleep_wait",
		.i = i, .tid = tid, .req = ns, .waker_tid = 0 };
	wait_span(w, &a, &b);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void *inj_sleeper(void *arg)
{
	unsigned int seed = 11;
	int tid = gettid_();

	(void)arg;
	note_thread("sleeper", "inj_sleep_wait");
	for (int i = 0; i < n_per_phase; i++)
		inj_sleep_wait(i, tid, delay_ns(&seed, 3, 20));
	asm volatile("" ::: "memory");
	return NULL;
}

/* ---- (d) run-queue delay: spinner + hog on CPU 1, control on CPU 0 ---- */

static atomic_int runq_stop;

struct spin_ctx {
	const char *scn;
	int cpu;
	int64_t start, end, cpu_ns;
	int gaps;
	int64_t gap_ns;
};

static void spin_record(struct spin_ctx *c, int tid, int64_t a, int64_t b)
{
	int i = atomic_fetch_add(&n_gaps, 1);

	c->gaps++;
	c->gap_ns += b - a;
	if (i < MAX_GAPS)
		gaps[i] = (struct gap_rec){ c->scn, tid, a, b };
}

#define SPINNER(name)							\
	__attribute__((noinline)) static void name(struct spin_ctx *c,	\
						  int tid, int64_t until)\
	{								\
		int64_t prev = now(), t;				\
									\
		while ((t = now()) < until) {				\
			if (t - prev > GAP_NS)				\
				spin_record(c, tid, prev, t);		\
			prev = t;					\
		}							\
		asm volatile("" ::: "memory");				\
	}

SPINNER(inj_runq_spin)
SPINNER(inj_runq_ctl_spin)

static void spin_phase_line(struct spin_ctx *c, int tid)
{
	int i = atomic_fetch_add(&n_phases, 1);

	if (i < 16)
		snprintf(phase_lines[i], sizeof(phase_lines[i]),
			 "{\"ev\":\"phase\",\"scn\":\"%s\",\"tid\":%d,\"cpu\":%d,"
			 "\"start_ns\":%lld,\"end_ns\":%lld,\"cpu_ns\":%lld,"
			 "\"gaps\":%d,\"gap_ns\":%lld}",
			 c->scn, tid, c->cpu, (long long)c->start,
			 (long long)c->end, (long long)c->cpu_ns, c->gaps,
			 (long long)c->gap_ns);
}

static int64_t runq_until;

__attribute__((noinline)) static void *inj_runq_busy(void *arg)
{
	struct spin_ctx *c = arg;
	int tid = gettid_();

	pin(c->cpu);
	note_thread("runq_busy", "inj_runq_spin");
	int64_t c0;

	c0 = thread_cpu();
	c->start = now();
	inj_runq_spin(c, tid, runq_until);
	c->end = now();
	c->cpu_ns = thread_cpu() - c0;
	spin_phase_line(c, tid);
	return NULL;
}

__attribute__((noinline)) static void *inj_runq_control(void *arg)
{
	struct spin_ctx *c = arg;
	int tid = gettid_();

	pin(c->cpu);
	note_thread("runq_control", "inj_runq_ctl_spin");
	int64_t c0;

	c0 = thread_cpu();
	c->start = now();
	inj_runq_ctl_spin(c, tid, runq_until);
	c->end = now();
	c->cpu_ns = thread_cpu() - c0;
	spin_phase_line(c, tid);
	return NULL;
}

__attribute__((noinline)) static void *inj_runq_hog(void *arg)
{
	volatile unsigned long x = 1;

	pin(*(int *)arg);
	note_thread("runq_hog", "inj_runq_hog");
	while (!atomic_load(&runq_stop))
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
	return NULL;
}

/* ---- phases ---- */

/* Join without a long off-CPU interval of the main thread: poll in 5 ms
 * steps (a flight trigger at offcpu>50ms must fire only on the stall). */
static void join_poll(pthread_t t, atomic_int *finished)
{
	while (!atomic_load(finished))
		inj_sys_nanosleep(5000000);
	pthread_join(t, NULL);
}

struct runner {
	void *(*fn)(void *);
	void *arg;
	atomic_int finished;
};

static void *run_wrapped(void *arg)
{
	struct runner *r = arg;

	r->fn(r->arg);
	atomic_store(&r->finished, 1);
	return NULL;
}

static void start_threads(struct runner *r, pthread_t *t, int n)
{
	for (int i = 0; i < n; i++) {
		atomic_store(&r[i].finished, 0);
		if (pthread_create(&t[i], NULL, run_wrapped, &r[i]))
			die("inject: pthread_create");
	}
}

static void join_threads(struct runner *r, pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		join_poll(t[i], &r[i].finished);
}

static void phase_pipe(const char *scn, int n, int64_t until)
{
	static struct pipe_ctx c;
	struct runner r[2];
	pthread_t t[2];

	memset(&c, 0, sizeof(c));
	c.scn = scn;
	c.n = n;
	c.until = until;
	c.seed = strcmp(scn, "pipe") ? 5 : 3;
	if (pipe(c.fd) < 0)
		die("inject: pipe");
	r[0] = (struct runner){ .fn = inj_pipe_reader, .arg = &c };
	r[1] = (struct runner){ .fn = inj_pipe_writer, .arg = &c };
	start_threads(r, t, 2);
	join_threads(r, t, 2);
	close(c.fd[0]);
	close(c.fd[1]);
}

static void phase_mutex(void)
{
	struct runner r[2];
	pthread_t t[2];

	mutex_n = n_per_phase;
	atomic_store(&mtx, 0);
	atomic_store(&gate, 0);
	atomic_store(&done_round, 0);
	r[0] = (struct runner){ .fn = inj_mutex_waiter };
	r[1] = (struct runner){ .fn = inj_mutex_holder };
	start_threads(r, t, 2);
	join_threads(r, t, 2);
	/* the holder's wakeup times, known only now */
	for (int k = 0; k < atomic_load(&n_waits); k++)
		if (!strcmp(waits[k].scn, "mutex")) {
			waits[k].wake_lo = m_wake_lo[waits[k].i];
			waits[k].wake_hi = m_wake_hi[waits[k].i];
			waits[k].seen = m_seen[waits[k].i];
		}
}

static void phase_sleep(void)
{
	struct runner r[1] = { { .fn = inj_sleeper } };
	pthread_t t[1];

	start_threads(r, t, 1);
	join_threads(r, t, 1);
}

static void phase_runq(void)
{
	static struct spin_ctx busy = { .scn = "runq", .cpu = 1 };
	static struct spin_ctx ctl = { .scn = "runq_control", .cpu = 0 };
	static int hog_cpu = 1;
	cpu_set_t main_set;
	struct runner r[3];
	pthread_t t[3];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "inject: runq phase needs 2 CPUs, skipped\n");
		return;
	}
	/*
	 * This thread polls for the others every 5 ms (join_poll()): on the
	 * control's CPU each wakeup would queue the control spinner behind
	 * it (and behind the profiler's switch handlers, and any host steal
	 * while it runs), so it waits on the contended CPU instead.
	 */
	if (sched_getaffinity(0, sizeof(main_set), &main_set) < 0)
		die("inject: sched_getaffinity");
	pin(hog_cpu);
	atomic_store(&runq_stop, 0);
	runq_until = now() + (int64_t)runq_ms * 1000000;
	r[0] = (struct runner){ .fn = inj_runq_hog, .arg = &hog_cpu };
	r[1] = (struct runner){ .fn = inj_runq_busy, .arg = &busy };
	r[2] = (struct runner){ .fn = inj_runq_control, .arg = &ctl };
	start_threads(r, t, 3);
	join_threads(r + 1, t + 1, 2);
	atomic_store(&runq_stop, 1);
	join_threads(r, t, 1);
	if (sched_setaffinity(0, sizeof(main_set), &main_set) < 0)
		die("inject: sched_setaffinity");
}

/* ---- (flight) one long stall between pipe traffic ---- */

static atomic_int stall_writer_tid;
static int64_t stall_lo, stall_hi;

__attribute__((noinline)) static void inj_stall_wake(int fd)
{
	char b = 1;

	stall_lo = now();
	if (inj_sys_write(fd, &b, 1) != 1)
		die("inject: stall write");
	stall_hi = now();
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void *inj_stall_writer(void *arg)
{
	int *fd = arg;
	int64_t until = now() + (int64_t)stall_ms * 1000000;

	note_thread("stall_writer", "inj_stall_wake");
	atomic_store(&stall_writer_tid, gettid_());
	/* 10 ms steps: only the reader is off CPU for the whole stall */
	while (now() < until)
		inj_sys_nanosleep(10000000);
	inj_stall_wake(fd[1]);
	return NULL;
}

__attribute__((noinline)) static long inj_stall_wait(int fd, char *b)
{
	long r = inj_sys_read(fd, b, 1);

	asm volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static void *inj_stall_reader(void *arg)
{
	int *fd = arg;
	int tid = gettid_();
	struct stamp a, b;
	char ch;
	struct wait_rec *w;

	note_thread("stall_reader", "inj_stall_wait");
	stamp_in(&a);
	if (inj_stall_wait(fd[0], &ch) != 1)
		die("inject: stall read");
	stamp_out(&b);
	w = new_wait();
	*w = (struct wait_rec){ .scn = "stall", .func = "inj_stall_wait",
		.i = 0, .tid = tid,
		.req = (int64_t)stall_ms * 1000000,
		.waker_tid = atomic_load(&stall_writer_tid),
		.waker_func = "inj_stall_wake", .wake_lo = stall_lo,
		.wake_hi = stall_hi };
	wait_span(w, &a, &b);
	return NULL;
}

static void phase_flight(void)
{
	static int fd[2];
	struct runner r[2];
	pthread_t t[2];

	phase_pipe("flight", 0, now() + (int64_t)pre_ms * 1000000);
	if (pipe(fd) < 0)
		die("inject: pipe");
	r[0] = (struct runner){ .fn = inj_stall_writer, .arg = fd };
	r[1] = (struct runner){ .fn = inj_stall_reader, .arg = fd };
	/* the writer starts its sleep only once the reader waits: start the
	 * reader first and give it a moment */
	atomic_store(&r[1].finished, 0);
	if (pthread_create(&t[1], NULL, run_wrapped, &r[1]))
		die("inject: pthread_create");
	inj_sys_nanosleep(2000000);
	atomic_store(&r[0].finished, 0);
	if (pthread_create(&t[0], NULL, run_wrapped, &r[0]))
		die("inject: pthread_create");
	join_threads(r, t, 2);
	close(fd[0]);
	close(fd[1]);
	phase_pipe("flight", 0, now() + (int64_t)post_ms * 1000000);
}

static void print_truth(FILE *f, const char *phases, int64_t elapsed)
{
	struct timespec a, r, b;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(f, "{\"ev\":\"clock\",\"mono_ns\":%lld,\"real_ns\":%lld}\n",
		(long long)((a.tv_sec * 1000000000LL + a.tv_nsec) / 2 +
			    (b.tv_sec * 1000000000LL + b.tv_nsec) / 2),
		(long long)(r.tv_sec * 1000000000LL + r.tv_nsec));
	n = atomic_load(&n_threads);
	for (int i = 0; i < n && i < 64; i++)
		fprintf(f, "%s\n", thread_lines[i]);
	n = atomic_load(&n_waits);
	for (int i = 0; i < n; i++) {
		struct wait_rec *w = &waits[i];

		fprintf(f, "{\"ev\":\"wait\",\"scn\":\"%s\",\"i\":%d,\"tid\":%d,"
			"\"func\":\"%s\",\"enter_ns\":%lld,\"exit_ns\":%lld,"
			"\"req_ns\":%lld,\"waker_tid\":%d,\"waker_func\":\"%s\","
			"\"wake_lo_ns\":%lld,\"wake_hi_ns\":%lld,\"cpu_ns\":%lld,"
			"\"nvcsw\":%ld,\"nivcsw\":%ld,\"seen_ns\":%lld}\n",
			w->scn, w->i, w->tid, w->func, (long long)w->enter,
			(long long)w->exit, (long long)w->req, w->waker_tid,
			w->waker_func ? w->waker_func : "",
			(long long)w->wake_lo, (long long)w->wake_hi,
			(long long)w->cpu, w->nvcsw, w->nivcsw, (long long)w->seen);
	}
	n = atomic_load(&n_gaps);
	for (int i = 0; i < n && i < MAX_GAPS; i++)
		fprintf(f, "{\"ev\":\"gap\",\"scn\":\"%s\",\"tid\":%d,"
			"\"start_ns\":%lld,\"end_ns\":%lld}\n", gaps[i].scn,
			gaps[i].tid, (long long)gaps[i].start,
			(long long)gaps[i].end);
	n = atomic_load(&n_phases);
	for (int i = 0; i < n && i < 16; i++)
		fprintf(f, "%s\n", phase_lines[i]);
	fprintf(f, "{\"ev\":\"done\",\"phases\":\"%s\",\"elapsed_ns\":%lld}\n",
		phases, (long long)elapsed);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *go = NULL, *phases = "pmsr";
	int64_t t0;
	FILE *f = stdout;
	int opt;

	while ((opt = getopt(argc, argv, "o:g:p:n:r:S:P:A:")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'g': go = optarg; break;
		case 'p': phases = optarg; break;
		case 'n': n_per_phase = atoi(optarg); break;
		case 'r': runq_ms = atoi(optarg); break;
		case 'S': stall_ms = atoi(optarg); break;
		case 'P': pre_ms = atoi(optarg); break;
		case 'A': post_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: inject [-o FILE] [-g GOFILE] [-p PHASES]"
				" [-n WAITS] [-r RUNQ_MS] [-S STALL_MS] [-P PRE_MS]"
				" [-A POST_MS]\n");
			return 2;
		}
	}
	if (n_per_phase < 1 || n_per_phase > MAX_WAITS / 8 || runq_ms < 1 ||
	    stall_ms < 1 || pre_ms < 0 || post_ms < 0) {
		fprintf(stderr, "inject: bad argument\n");
		return 2;
	}
	printf("inject pid %d\n", (int)getpid());
	fflush(stdout);
	if (go)
		while (access(go, F_OK) != 0)
			inj_sys_nanosleep(10000000);
	t0 = now();
	for (const char *p = phases; *p; p++) {
		switch (*p) {
		case 'p': phase_pipe("pipe", n_per_phase, 0); break;
		case 'm': phase_mutex(); break;
		case 's': phase_sleep(); break;
		case 'r': phase_runq(); break;
		case 'f': phase_flight(); break;
		default:
			fprintf(stderr, "inject: unknown phase %c\n", *p);
			return 2;
		}
	}
	if (out && !(f = fopen(out, "w")))
		die(out);
	print_truth(f, phases, now() - t0);
	if (f != stdout && fclose(f) != 0)
		die(out);
	printf("inject done\n");
	return 0;
}
