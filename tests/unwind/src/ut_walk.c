/* SPDX-License-Identifier: MIT */
/*
 * ut_walk: unwind this process's own stacks with the tables, the way
 * spulse.ko steps (docs/UNWIND.md, "Table format"), and compare every walk
 * with glibc's backtrace() (libgcc's DWARF unwinder) taken at the same
 * moment.
 *
 * Tables are built for every executable mapping (and the vDSO) before the
 * profiling timer starts. Each SIGPROF, in whichever thread it lands, walks
 * twice: from the handler's own registers (through __restore_rt, a SIGNAL
 * row, into the interrupted code) and compares the walk with backtrace()'s
 * frames. The code under the timer (libut.so, built -O2
 * -fomit-frame-pointer) recurses, calls through the PLT and realigns its
 * stack, in the main thread and a second thread.
 *
 * usage: ut_walk SECONDS (of process CPU time)   (run with LD_BIND_NOW=1: ld.so's lazy resolver
 * keeps its CFA in rbx, which a row cannot express)
 * Prints the counts; exit 0 when every walk that ended at END matched
 * backtrace() frame for frame and at least 95% of walks ended at END.
 *
 * Built with -DUT_WALK_PRELOAD it is a shared object for LD_PRELOAD into
 * another program (Debian's python3): the constructor builds the tables of
 * the mappings present then and starts the timer (main thread only, as
 * other threads' stack bounds are unknown) -- with UT_WALK_WAIT set, only
 * once the program sends itself SIGUSR2, after loading its modules; at exit
 * it prints the same counts to stderr and, when UT_WALK_RESULT names a
 * file, writes "walks complete agree disagree" there.
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "unwind_build.h"
#include "ut_lib.h"

#define MAX_MAPS	64
#define MAX_DEPTH	512

struct map {
	uint64_t start, end, bias;
	struct sut_table *t;
};

static struct map maps[MAX_MAPS];
static int n_maps;
static __thread uintptr_t stack_lo, stack_hi;
#ifndef UT_WALK_PRELOAD
static volatile uint64_t sink;
static double until;
#endif

/* Outcomes (updated in the handler; one handler at a time per thread). */
static volatile long walks, complete, agree, disagree, stopped_unknown,
	stopped_none, stopped_nomap, stopped_read;
static volatile long first_bad_printed;
static volatile long kind_steps[SPULSE_UT_KIND_MAX + 1];	/* rows used */

static int add_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], err[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n_maps < MAX_MAPS) {
		unsigned long long s, e, off;
		char perm[8], path[2048] = "";
		struct map *m = &maps[n_maps];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %2047s", &s, &e, perm,
			   &off, path) < 4 || perm[2] != 'x')
			continue;
		m->start = s;
		m->end = e;
		if (!strcmp(path, "[vdso]")) {
			if (sut_build_image((const void *)(uintptr_t)s, e - s, path,
					    NULL, &m->t, err, sizeof(err))) {
				fprintf(stderr, "ut_walk: %s\n", err);
				continue;
			}
			off = 0;
		} else if (path[0] == '/') {
			if (sut_build_file(path, NULL, &m->t, err, sizeof(err))) {
				fprintf(stderr, "ut_walk: %s\n", err);
				continue;
			}
		} else {
			continue;
		}
		if (sut_table_bias(m->t, s, off, &m->bias)) {
			sut_table_free(m->t);
			continue;
		}
		n_maps++;
	}
	fclose(f);
	return 0;
}

static const struct map *map_of(uint64_t pc)
{
	int i;

	for (i = 0; i < n_maps; i++)
		if (pc >= maps[i].start && pc < maps[i].end)
			return &maps[i];
	return NULL;
}

static bool rd(uint64_t addr, uint64_t *v)
{
	if (addr < stack_lo || addr + 8 > stack_hi || (addr & 7))
		return false;
	*v = *(const uint64_t *)(uintptr_t)addr;
	return true;
}

enum { W_END, W_UNKNOWN, W_NONE, W_NOMAP, W_READ, W_DEPTH };

/*
 * The kernel's step, in userspace. @exact: pc is an exact address (the
 * first frame, or the interrupted one after a signal frame), else a return
 * address, looked up at pc - 1 (the call).
 */
static int walk(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *out, int *n)
{
	bool exact = true;

	*n = 0;
	while (*n < MAX_DEPTH) {
		const struct map *m = map_of(pc);
		const struct spulse_ut_row *r;
		uint64_t a, cfa, ra, nbp = bp, v;

		out[(*n)++] = pc;
		if (!m)
			return W_NOMAP;
		a = pc - m->bias - (exact ? 0 : 1);
		r = sut_table_lookup(m->t, a);
		if (!r)
			return W_NOMAP;
		kind_steps[r->kind]++;
		switch (r->kind) {
		case SPULSE_UT_END:
			return W_END;
		case SPULSE_UT_SIGNAL: {
			uint64_t uc = sp;

			if (!rd(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]), &pc) ||
			    !rd(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]), &sp) ||
			    !rd(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]), &bp))
				return W_READ;
			exact = true;
			continue;
		}
		case SPULSE_UT_CFA_SP:
			cfa = sp + (int64_t)r->cfa_off;
			break;
		case SPULSE_UT_CFA_BP:
			cfa = bp + (int64_t)r->cfa_off;
			break;
		case SPULSE_UT_PLT:
			cfa = sp + (int64_t)r->cfa_off + ((a & 15) >= 11 ? 8 : 0);
			break;
		case SPULSE_UT_CFA_DEREF_BP:
			if (!rd(bp + (int64_t)r->cfa_off, &cfa) || !rd(bp, &nbp))
				return W_READ;
			break;
		case SPULSE_UT_NONE:
			return W_NONE;
		default:
			return W_UNKNOWN;
		}
		if (!rd(cfa - 8, &ra))
			return W_READ;
		if (r->kind != SPULSE_UT_CFA_DEREF_BP && r->bp_off) {
			if (!rd(cfa + r->bp_off, &v))
				return W_READ;
			nbp = v;
		}
		if (cfa <= sp && r->kind != SPULSE_UT_CFA_BP &&
		    r->kind != SPULSE_UT_CFA_DEREF_BP)
			return W_READ;	/* the stack must grow towards callers */
		pc = ra;
		sp = cfa;
		bp = nbp;
		exact = false;
	}
	return W_DEPTH;
}

static __attribute__((noinline)) void on_prof(int sig, siginfo_t *si, void *ctx)
{
	uint64_t pc, sp, bp, ours[MAX_DEPTH];
	void *bt[MAX_DEPTH + 8];
	int n, nb, rc, i;

	(void)sig;
	(void)si;
	(void)ctx;
	if (!stack_hi)
		return;		/* a thread whose stack bounds are unknown */
	/* This frame's registers at one instruction of it. */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	rc = walk(pc, sp, bp, ours, &n);
	nb = backtrace(bt, MAX_DEPTH + 8);
	walks++;
	switch (rc) {
	case W_END:
		complete++;
		/* Frame 0 differs (two places in this handler); then equal. */
		if (nb == n) {
			for (i = 1; i < n; i++)
				if ((uint64_t)(uintptr_t)bt[i] != ours[i])
					break;
		} else {
			i = 0;
		}
		if (nb == n && i == n) {
			agree++;
		} else {
			disagree++;
			if (!first_bad_printed++) {
				fprintf(stderr, "ut_walk: walk differs from backtrace():\n");
				for (i = 0; i < n || i < nb; i++)
					fprintf(stderr, "  %2d %#18llx %#18llx\n", i,
						i < n ? (unsigned long long)ours[i] : 0ull,
						i < nb ? (unsigned long long)(uintptr_t)bt[i] : 0ull);
			}
		}
		break;
	case W_UNKNOWN:
		stopped_unknown++;
		break;
	case W_NONE:
		stopped_none++;
		break;
	case W_NOMAP:
		stopped_nomap++;
		break;
	default:
		stopped_read++;
	}
}

/* Process CPU time: the same number of samples however loaded the host. */
static __attribute__((unused)) double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_stack_bounds(void)
{
	pthread_attr_t at;
	void *base;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &at) == 0) {
		pthread_attr_getstack(&at, &base, &size);
		stack_lo = (uintptr_t)base;
		stack_hi = (uintptr_t)base + size;
		pthread_attr_destroy(&at);
	}
}

#ifndef UT_WALK_PRELOAD
static void work(int depth)
{
	struct timespec ts;

	do {
		sink += ut_recurse(depth, 64);
		clock_gettime(CLOCK_MONOTONIC, &ts);	/* the vDSO */
		sink += (uint64_t)ts.tv_nsec;
	} while (now() < until);
}

static void *thread_main(void *arg)
{
	(void)arg;
	set_stack_bounds();
	work(5);
	return NULL;
}
#endif

static void print_counts(FILE *f)
{
	fprintf(f, "ut_walk: %ld walks, %ld reached END, %ld of them equal to backtrace(), "
		"%ld differ; stopped: %ld UNKNOWN, %ld NONE, %ld no table, %ld bad read\n",
		walks, complete, agree, disagree, stopped_unknown, stopped_none,
		stopped_nomap, stopped_read);
	fprintf(f, "ut_walk: rows stepped through: cfa_sp %ld, cfa_bp %ld, plt %ld, "
		"cfa_deref_bp %ld, signal %ld, end %ld\n",
		kind_steps[SPULSE_UT_CFA_SP], kind_steps[SPULSE_UT_CFA_BP],
		kind_steps[SPULSE_UT_PLT], kind_steps[SPULSE_UT_CFA_DEREF_BP],
		kind_steps[SPULSE_UT_SIGNAL], kind_steps[SPULSE_UT_END]);
}

static int start_timer(void)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	struct sigaction sa = { 0 };

	if (add_maps() || !n_maps)
		return -1;
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return -1;
	return 0;
}

static void stop_timer(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_PROF, &off, NULL);
}

#ifdef UT_WALK_PRELOAD
static int start_pipe[2] = { -1, -1 };

/* SIGUSR2: the program says its modules are loaded (async-signal-safe). */
static void on_start(int sig)
{
	char c = 1;

	(void)sig;
	if (write(start_pipe[1], &c, 1) < 0)
		return;
}

/* Builds the tables and starts the timer once SIGUSR2 came. */
static void *starter(void *arg)
{
	char c;

	(void)arg;
	if (read(start_pipe[0], &c, 1) == 1 && start_timer())
		fprintf(stderr, "ut_walk: could not start\n");
	return NULL;
}

__attribute__((constructor)) static void preload_start(void)
{
	void *warm[4];
	pthread_t th;

	set_stack_bounds();
	backtrace(warm, 4);
	/* UT_WALK_WAIT: wait for SIGUSR2 (after the program's imports), so
	 * that the tables cover the modules it loads at start. */
	if (getenv("UT_WALK_WAIT")) {
		if (pipe(start_pipe) == 0 && signal(SIGUSR2, on_start) != SIG_ERR &&
		    pthread_create(&th, NULL, starter, NULL) == 0) {
			pthread_detach(th);
			return;
		}
		fprintf(stderr, "ut_walk: could not wait for SIGUSR2\n");
		return;
	}
	if (start_timer())
		fprintf(stderr, "ut_walk: could not start\n");
}

__attribute__((destructor)) static void preload_stop(void)
{
	const char *res = getenv("UT_WALK_RESULT");

	stop_timer();
	print_counts(stderr);
	if (res) {
		FILE *f = fopen(res, "w");

		if (f) {
			fprintf(f, "%ld %ld %ld %ld\n", walks, complete, agree, disagree);
			fclose(f);
		}
	}
}
#else
int main(int argc, char **argv)
{
	void *warm[4];
	pthread_t th;

	until = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	set_stack_bounds();
	backtrace(warm, 4);	/* loads libgcc_s outside the handler */
	if (pthread_create(&th, NULL, thread_main, NULL))
		return 2;
	if (start_timer())
		return 2;
	work(7);
	stop_timer();
	pthread_join(th, NULL);
	print_counts(stdout);
	return walks > 0 && disagree == 0 && complete * 100 >= walks * 95 ? 0 : 1;
}
#endif
