/* SPDX-License-Identifier: MIT */
/*
 * spulse latency: log2 histograms of run-queue delay and of off-CPU time
 * per state (bcc runqlat / offcputime -h style), overall or per thread,
 * then the longest off-CPU intervals with their stacks and wakers.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "analysis/profile.h"
#include "analysis/sort.h"

static const char latency_help[] =
"NAME\n"
"    spulse latency - run-queue and off-CPU histograms, longest waits\n"
"\n"
"SYNOPSIS\n"
"    spulse latency FILE [--per-thread] [--top N] [--frames N] [--json]\n"
"                   [--state S,D,...] [--pid P,..] [--tid T,..]\n"
"                   [--comm C,..] [--dso D,..] [--time START,END]\n"
"                   [--kernel | --user] [--kallsyms PATH] [--symfs DIR]\n"
"\n"
"DESCRIPTION\n"
"    From the off-CPU intervals of a spool recorded with offcpu=1 (spulse\n"
"    record --off-cpu), prints log2 histograms in microseconds, as bcc\n"
"    runqlat / offcputime -h: bucket k >= 1 holds 2^k -> 2^(k+1)-1 us,\n"
"    bucket 0 \"0 -> 1\" (values truncated to whole us); rows from bucket 0\n"
"    to the highest non-empty one, bars scaled to the fullest bucket.\n"
"    First the run-queue delay (wakeup, or preemption, to switch-in) of\n"
"    every interval, then per state present (S, D, R, ...) the off-CPU\n"
"    time (blocked + run-queue) of the intervals that left in it. Then the\n"
"    N longest intervals by off-CPU time (ties: earlier first): when (s\n"
"    from the profile start), thread, state, off-CPU / blocked / run-queue\n"
"    ms, CPUs out -> in, the stack at switch-out leaf first and the waker\n"
"    (COMM PID/TID cpu N: its stack leaf first, or \"none recorded\").\n"
"    A spool without intervals prints a note on stderr and empty\n"
"    histograms.\n"
"\n"
"OPTIONS\n"
"    --per-thread        histograms for each thread (\"== thread COMM\n"
"                        PID/TID ==\", grouped by pid/tid, newest comm)\n"
"    --top N             longest intervals to list (default 10, 0 = none)\n"
"    --frames N          frames shown per stack, every frame as it is (0 =\n"
"                        all; a cut stack ends in \"<- ...\"). Without it\n"
"                        the text shows who waited: a stack's kernel part\n"
"                        at the leaf (the scheduler and the wait down to\n"
"                        the system call) is folded into one marker\n"
"                        \"[N kernel frames: WAIT]\", WAIT its first frame\n"
"                        that is not the scheduler's (e.g. futex_wait;\n"
"                        else the one next to the user frames),\n"
"                        then up to 16 user frames; a stack of kernel\n"
"                        frames only (a kernel thread) shows its first 6.\n"
"                        --json: 6 frames unless --frames is given\n"
"    --json              one JSON object: {\"unit\":\"us\",\"intervals\":N,\n"
"                        \"blocked_ns\":N,\"runq_ns\":N,\"histograms\":[..],\n"
"                        \"longest\":[..]} (docs/CLI.md)\n"
"    --state S,D,...     only intervals that left in these states (R S D\n"
"                        T t X Z P I, commas optional; default all)\n"
"\n"
"  Filters (as in spulse report), applied to the intervals:\n"
"    --pid P,.., --tid T,.., --comm C,..   the interval's thread\n"
"    --host H,..         the interval's thread's host (docs/FLEET.md)\n"
"    --dso D,..          a frame of the switch-out stack in these modules\n"
"    --time START,END    switch-out from START to before END, seconds\n"
"                        from the spool's earliest sample (or interval)\n"
"    --kernel, --user    only kernel / only user frames in the stacks\n"
"                        shown (and intervals without one dropped)\n"
"\n"
"  Symbols:\n"
"    --kallsyms PATH     kernel symbols (default FILE.kallsyms if present)\n"
"    --symfs DIR         look module files up under DIR first (DIR/PATH)\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse latency stall.spulse --top 3 --frames 20\n"
"    spulse latency off.spulse --per-thread --state D\n"
"    spulse latency off.spulse --comm worker --time 2,3 --json\n"
"\n"
"EXIT STATUS\n"
"    0 success (also with no intervals), 1 invalid or unreadable spool,\n"
"    2 usage error.\n";

#define NBUCKETS 64
#define NSTATES (SPULSE_STATE_MAX + 1)
#define BAR_WIDTH 40

struct hist {
	uint64_t n;
	uint64_t b[NBUCKETS];
};

/* Histograms of one thread (or of all threads). */
struct group {
	uint32_t pid, tid;
	uint32_t thread;		/* a thread id of the group, for comm */
	struct hist runq;
	struct hist state[NSTATES];
};

/* A thread's group (--per-thread): its intervals are by_group[first ..
 * the next group's first). No histograms are kept per group: they are
 * counted into one scratch group as each is printed. */
struct gref {
	uint32_t pid, tid;
	uint32_t thread;		/* a thread id of the group, for comm */
	size_t first;
};

struct latency {
	struct profile p;
	struct spulse_offcpu *iv;
	size_t n;
	struct group *groups;		/* !per_thread: [0] = all; else the
					 * scratch group */
	struct gref *grefs;		/* per_thread: one per (pid, tid) */
	size_t *by_group;		/* per_thread: interval indices */
	size_t ngroups;
	uint64_t *keys;			/* per_thread: sorted (pid<<32|tid) of groups */
	bool per_thread, json;
	uint64_t top, frames;
	bool fold;			/* no --frames: kernel part folded */
};

/* Without --frames: user frames shown after the folded kernel part, and
 * frames of a kernel-only stack. */
#define FOLD_USER_FRAMES 16
#define FOLD_KERNEL_ONLY_FRAMES 6

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static unsigned int bucket_of(uint64_t ns)
{
	uint64_t us = ns / 1000;

	if (us < 2)
		return 0;
	return 63u - (unsigned int)__builtin_clzll(us);
}

static uint64_t bucket_low(unsigned int k)
{
	return k ? 1ULL << k : 0;
}

static uint64_t bucket_high(unsigned int k)
{
	return k >= 63 ? UINT64_MAX : (2ULL << k) - 1;
}

static void hist_add(struct hist *h, uint64_t ns)
{
	h->n++;
	h->b[bucket_of(ns)]++;
}

static uint64_t thread_key(const struct latency *l, uint32_t thread)
{
	struct spulse_thread t;

	if (spulse_defs_thread(l->p.defs, thread, &t) < 0)
		return UINT64_MAX;
	return (uint64_t)t.pid << 32 | t.tid;
}

/* Index of @key in the sorted l->keys, or SIZE_MAX. */
static size_t key_index(const uint64_t *keys, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && keys[lo] == key ? lo : SIZE_MAX;
}

static const uint64_t *sort_keys;

static int cmp_by_key(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (sort_keys[x] != sort_keys[y])
		return sort_keys[x] < sort_keys[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * One group per distinct (pid, tid) that has intervals, or one. Memory is
 * bounded by the intervals reported, not by the threads the spool defines
 * (issue 25: 1M defined threads cost 4 GB when every one had a group),
 * and a group costs a few words, not its histograms (those are counted
 * when the group is printed: 1M threads all with intervals took 5 KB
 * each).
 */
static int make_groups(struct latency *l)
{
	uint64_t *ik, *keys;
	uint32_t nt, i;
	size_t u = 0, j;

	l->groups = calloc(1, sizeof(*l->groups));
	if (!l->groups)
		return -1;
	if (!l->per_thread) {
		l->ngroups = 1;
		return 0;
	}
	ik = malloc((l->n ? l->n : 1) * sizeof(*ik));
	l->by_group = malloc((l->n ? l->n : 1) * sizeof(*l->by_group));
	if (!ik || !l->by_group) {
		free(ik);
		return -1;
	}
	for (j = 0; j < l->n; j++) {
		ik[j] = thread_key(l, l->iv[j].thread);
		l->by_group[j] = j;
	}
	sort_keys = ik;
	if (l->n > 1)
		qsort(l->by_group, l->n, sizeof(*l->by_group), cmp_by_key);
	for (j = 0; j < l->n; j++)
		if (!j || ik[l->by_group[j]] != ik[l->by_group[j - 1]])
			u++;
	keys = malloc((u ? u : 1) * sizeof(*keys));
	l->grefs = calloc(u + 1, sizeof(*l->grefs));
	if (!keys || !l->grefs) {
		free(ik);
		free(keys);
		return -1;
	}
	u = 0;
	for (j = 0; j < l->n; j++) {
		uint64_t k = ik[l->by_group[j]];

		if (j && k == keys[u - 1])
			continue;
		keys[u] = k;
		l->grefs[u] = (struct gref){ (uint32_t)(k >> 32), (uint32_t)k,
					     SPULSE_NONE, j };
		u++;
	}
	l->grefs[u].first = l->n;
	free(ik);
	/* the comm shown: the group's latest defined thread */
	nt = spulse_defs_count(l->p.defs, SPULSE_TAG_THREAD);
	for (i = 0; u && i < nt; i++) {
		size_t g = key_index(keys, u, thread_key(l, i));

		if (g != SIZE_MAX)
			l->grefs[g].thread = i;
	}
	l->keys = keys;
	l->ngroups = u;
	return 0;
}

static void group_add(struct group *gr, const struct spulse_offcpu *v)
{
	hist_add(&gr->runq, v->runq_ns);
	if (v->state < NSTATES)
		hist_add(&gr->state[v->state], sat_add(v->blocked_ns, v->runq_ns));
}

/* Without --per-thread: every interval into the one group. */
static void fill(struct latency *l)
{
	if (!l->per_thread)
		for (size_t i = 0; i < l->n; i++)
			group_add(&l->groups[0], &l->iv[i]);
}

/* Group @i with its histograms (per thread: counted now, into the
 * scratch group, valid until the next call). */
static const struct group *group_at(struct latency *l, size_t i)
{
	struct group *g = &l->groups[0];
	const struct gref *r;

	if (!l->per_thread)
		return g;
	r = &l->grefs[i];
	memset(g, 0, sizeof(*g));
	g->pid = r->pid;
	g->tid = r->tid;
	g->thread = r->thread;
	for (size_t j = r->first; j < l->grefs[i + 1].first; j++)
		group_add(g, &l->iv[l->by_group[j]]);
	return g;
}

static int hist_last(const struct hist *h)
{
	int k;

	for (k = NBUCKETS - 1; k >= 0; k--)
		if (h->b[k])
			return k;
	return -1;
}

static void print_hist(const struct hist *h, const char *title)
{
	int last = hist_last(h), k;
	uint64_t max = 0;

	printf("\n%s, %llu intervals\n", title, (unsigned long long)h->n);
	printf("%20s : %-8s %s\n", "usecs", "count", "distribution");
	for (k = 0; k <= last; k++)
		if (h->b[k] > max)
			max = h->b[k];
	for (k = 0; k <= last; k++) {
		int stars = max ? (int)(h->b[k] * BAR_WIDTH / max) : 0;
		char range[48];

		snprintf(range, sizeof(range), "%llu -> %llu",
			 (unsigned long long)bucket_low((unsigned int)k),
			 (unsigned long long)bucket_high((unsigned int)k));
		printf("%20s : %-8llu |%-*.*s|\n", range,
		       (unsigned long long)h->b[k], BAR_WIDTH, stars,
		       "****************************************");
	}
}

static void print_group_text(const struct group *g)
{
	char title[128];
	unsigned int st;

	print_hist(&g->runq, "run-queue delay (wakeup or preemption -> "
		   "switch-in)");
	for (st = 0; st < NSTATES; st++) {
		if (!g->state[st].n)
			continue;
		snprintf(title, sizeof(title), "off-CPU time (blocked + runq), "
			 "state %s (%s)", spulse_state_name((uint8_t)st),
			 spulse_state_long_name((uint8_t)st));
		print_hist(&g->state[st], title);
	}
}

static void json_hist(const struct hist *h, const char *metric,
		      const char *state, const struct latency *l,
		      const struct group *g, bool first)
{
	int last = hist_last(h), k;

	printf("%s{\"metric\":\"%s\",\"state\":", first ? "" : ",", metric);
	if (state)
		cli_json_string(stdout, state, strlen(state));
	else
		fputs("null", stdout);
	if (l->per_thread) {
		struct spulse_thread t;

		printf(",\"pid\":%u,\"tid\":%u,\"comm\":", g->pid, g->tid);
		if (spulse_defs_thread(l->p.defs, g->thread, &t) == 0)
			cli_json_string(stdout, t.comm, t.comm_len);
		else
			fputs("null", stdout);
	}
	printf(",\"count\":%llu,\"buckets\":[", (unsigned long long)h->n);
	for (k = 0; k <= last; k++)
		printf("%s{\"low\":%llu,\"high\":%llu,\"count\":%llu}",
		       k ? "," : "",
		       (unsigned long long)bucket_low((unsigned int)k),
		       (unsigned long long)bucket_high((unsigned int)k),
		       (unsigned long long)h->b[k]);
	fputs("]}", stdout);
}

static const struct latency *sort_lat;

/* Longest off-CPU time first; ties: earlier first, then stream order. */
static int cmp_longest(const void *a, const void *b)
{
	const struct spulse_offcpu *x = &sort_lat->iv[*(const size_t *)a];
	const struct spulse_offcpu *y = &sort_lat->iv[*(const size_t *)b];
	uint64_t tx = x->blocked_ns + x->runq_ns;
	uint64_t ty = y->blocked_ns + y->runq_ns;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Frames of @leaf, leaf first, "a <- b <- c" or a JSON array. */
static void put_stack(const struct latency *l, uint32_t leaf, bool json)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	int n = profile_stack_frames(&l->p, leaf, frames), i, shown = 0;

	if (json)
		putchar('[');
	if (!json && l->fold && n > 0) {
		/* the kernel part at the leaf, folded into one marker */
		int k = 0, wait = -1;
		uint64_t limit;

		while (k < n) {
			const struct sym_frame *sf =
				symbolizer_frame(l->p.sym, frames[n - 1 - k]);

			if (!sf || sf->kind != SPULSE_FRAME_KERNEL)
				break;
			if (wait < 0 && !sort_sched_frame(sf))
				wait = n - 1 - k;
			k++;
		}
		limit = k == n ? FOLD_KERNEL_ONLY_FRAMES : FOLD_USER_FRAMES;
		if (k && k < n) {
			/* the wait site, or (all the scheduler's) the
			 * kernel frame next to the user part */
			const struct sym_frame *w = symbolizer_frame(l->p.sym,
				frames[wait < 0 ? n - k : wait]);

			printf("[%d kernel frame%s", k, k == 1 ? "" : "s");
			if (w) {
				fputs(": ", stdout);
				cli_put_text(stdout, w->label, w->label_len);
			}
			putchar(']');
			shown = 1;
			limit++;	/* the marker is not a user frame */
		}
		for (i = n - 1 - (k < n ? k : 0); i >= 0; i--, shown++) {
			const struct sym_frame *sf =
				symbolizer_frame(l->p.sym, frames[i]);

			if ((uint64_t)shown == limit) {
				fputs(" <- ...", stdout);
				break;
			}
			fputs(shown ? " <- " : "", stdout);
			if (sf)
				cli_put_text(stdout, sf->label, sf->label_len);
			else
				fputs("?", stdout);
		}
		return;
	}
	for (i = n - 1; i >= 0; i--, shown++) {
		const struct sym_frame *sf =
			symbolizer_frame(l->p.sym, frames[i]);
		const char *name = sf ? sf->label : "?";
		size_t nl = sf ? sf->label_len : 1;

		if (l->frames && (uint64_t)shown == l->frames) {
			if (!json)
				fputs(" <- ...", stdout);
			break;
		}
		if (json) {
			if (shown)
				putchar(',');
			cli_json_string(stdout, name, nl);
		} else {
			fputs(shown ? " <- " : "", stdout);
			cli_put_text(stdout, name, nl);
		}
	}
	if (n < 0 && !json)
		fputs("(broken stack)", stdout);
	if (json)
		putchar(']');
}

static void put_thread(const struct latency *l, uint32_t id, bool json)
{
	struct spulse_thread t;

	if (spulse_defs_thread(l->p.defs, id, &t) < 0) {
		fputs(json ? "\"pid\":null,\"tid\":null,\"comm\":null" :
		      "? ?/?", stdout);
		return;
	}
	if (json) {
		printf("\"pid\":%u,\"tid\":%u,\"comm\":", t.pid, t.tid);
		cli_json_string(stdout, t.comm, t.comm_len);
	} else {
		cli_put_text(stdout, t.comm, t.comm_len);
		printf(" %u/%u", t.pid, t.tid);
	}
}

static void print_longest(const struct latency *l, const size_t *order,
			  size_t k)
{
	size_t i;

	printf("\n# %zu longest off-CPU intervals (of %zu), by blocked + "
	       "runq\n", k, l->n);
	for (i = 0; i < k; i++) {
		const struct spulse_offcpu *v = &l->iv[order[i]];

		printf("%3zu. %.6f s  ", i + 1, (double)v->time_ns / 1e9);
		put_thread(l, v->thread, false);
		printf("  %s  off-CPU %.3f ms  blocked %.3f ms  runq %.3f ms"
		       "  cpu %u->%u\n", spulse_state_name(v->state) ?
		       spulse_state_name(v->state) : "?",
		       (double)(v->blocked_ns + v->runq_ns) / 1e6,
		       (double)v->blocked_ns / 1e6, (double)v->runq_ns / 1e6,
		       v->cpu_out, v->cpu_in);
		fputs("     stack: ", stdout);
		put_stack(l, v->stack, false);
		fputs("\n     waker: ", stdout);
		if (v->waker_thread == SPULSE_NONE) {
			fputs("none recorded", stdout);
		} else {
			put_thread(l, v->waker_thread, false);
			printf(" cpu %u: ", v->waker_cpu);
			put_stack(l, v->waker_stack, false);
		}
		putchar('\n');
	}
}

static void json_longest(const struct latency *l, const size_t *order,
			 size_t k)
{
	size_t i;

	fputs(",\"longest\":[", stdout);
	for (i = 0; i < k; i++) {
		const struct spulse_offcpu *v = &l->iv[order[i]];
		const char *st = spulse_state_name(v->state);

		printf("%s{\"time_ns\":%lld,", i ? "," : "",
		       (long long)v->time_ns);
		put_thread(l, v->thread, true);
		printf(",\"state\":\"%s\",\"offcpu_ns\":%llu,\"blocked_ns\":"
		       "%llu,\"runq_ns\":%llu,\"cpu_out\":%u,\"cpu_in\":%u,"
		       "\"stack\":", st ? st : "?",
		       (unsigned long long)(v->blocked_ns + v->runq_ns),
		       (unsigned long long)v->blocked_ns,
		       (unsigned long long)v->runq_ns, v->cpu_out, v->cpu_in);
		put_stack(l, v->stack, true);
		fputs(",\"waker\":", stdout);
		if (v->waker_thread == SPULSE_NONE) {
			fputs("null", stdout);
		} else {
			putchar('{');
			put_thread(l, v->waker_thread, true);
			printf(",\"cpu\":%u,\"stack\":", v->waker_cpu);
			put_stack(l, v->waker_stack, true);
			putchar('}');
		}
		putchar('}');
	}
	putchar(']');
}

static int output(struct latency *l)
{
	cli_sum blocked = 0, runq = 0;
	char b1[CLI_U128_BUF], b2[CLI_U128_BUF];
	size_t *order, i, k;
	char states[32];
	bool first = true;

	order = malloc((l->n ? l->n : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < l->n; i++) {
		order[i] = i;
		blocked += l->iv[i].blocked_ns;
		runq += l->iv[i].runq_ns;
	}
	sort_lat = l;
	if (l->n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(order, l->n, sizeof(*order), cmp_longest);
	k = l->top < l->n ? (size_t)l->top : l->n;
	if (l->json) {
		printf("{\"unit\":\"us\",\"intervals\":%zu,\"blocked_ns\":%s,"
		       "\"runq_ns\":%s,\"histograms\":[", l->n,
		       cli_u128(b1, blocked), cli_u128(b2, runq));
		for (i = 0; i < l->ngroups; i++) {
			const struct group *g = group_at(l, i);
			unsigned int st;

			if (l->per_thread && !g->runq.n)
				continue;
			json_hist(&g->runq, "runq", NULL, l, g, first);
			first = false;
			for (st = 0; st < NSTATES; st++)
				if (g->state[st].n)
					json_hist(&g->state[st], "offcpu",
						  spulse_state_name((uint8_t)st),
						  l, g, false);
		}
		putchar(']');
		json_longest(l, order, k);
		fputs("}\n", stdout);
	} else {
		printf("# %s: %zu off-CPU intervals, %.3f ms off-CPU "
		       "(blocked %.3f ms, runq %.3f ms)", l->p.file, l->n,
		       (double)(long double)(blocked + runq) / 1e6,
		       (double)(long double)blocked / 1e6,
		       (double)(long double)runq / 1e6);
		if (l->p.has_pid)
			printf(", pid %u", l->p.pid);
		if (l->p.state_mask)
			printf(", states %s", profile_states_text(&l->p, states,
								 sizeof(states)));
		putchar('\n');
		for (i = 0; i < l->ngroups; i++) {
			const struct group *g = group_at(l, i);

			if (l->per_thread) {
				if (!g->runq.n)
					continue;
				printf("\n== thread ");
				put_thread(l, g->thread, false);
				printf(" ==\n");
			}
			print_group_text(g);
		}
		if (k)
			print_longest(l, order, k);
	}
	free(order);
	return ferror(stdout) ? -1 : 0;
}

int cmd_latency(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "per-thread", no_argument, NULL, 'T' },
		{ "top", required_argument, NULL, 'n' },
		{ "frames", required_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },
		{ "state", required_argument, NULL, 's' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct latency l = { .top = 10, .frames = 6 };
	bool frames_given = false;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = profile_option(&l.p, c, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (c) {
		case 'T': l.per_thread = true; break;
		case 'j': l.json = true; break;
		case 'n':
			if (!cli_parse_u64("--top", optarg, &l.top))
				return EXIT_USAGE;
			break;
		case 'F':
			if (!cli_parse_u64("--frames", optarg, &l.frames))
				return EXIT_USAGE;
			frames_given = true;
			break;
		case 'h': fputs(latency_help, stdout); return EXIT_OK;
		default: return cli_usage_error("latency", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("latency", "expected exactly one FILE");
	/* --kernel keeps only the kernel part: nothing to fold it for */
	l.fold = !frames_given && l.p.filter.frames != FILTER_FRAMES_KERNEL;
	l.p.offcpu = true;
	rc = profile_open(&l.p, argv[optind]);
	if (rc == EXIT_OK) {
		profile_note_no_offcpu(&l.p);
		rc = profile_load_offcpu(&l.p, &l.iv, &l.n);
	}
	if (rc == EXIT_OK && make_groups(&l) < 0) {
		fprintf(stderr, "spulse: out of memory\n");
		rc = EXIT_INVALID;
	}
	if (rc == EXIT_OK) {
		fill(&l);
		if (output(&l) < 0) {
			fprintf(stderr, "spulse latency: write failed\n");
			rc = EXIT_INVALID;
		}
	}
	free(l.iv);
	free(l.groups);
	free(l.keys);
	free(l.grefs);
	free(l.by_group);
	profile_close(&l.p);
	return rc;
}
