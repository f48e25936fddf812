/* SPDX-License-Identifier: MIT */
/* Sample aggregation shared by report, flame and export. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"

static int parse_states(struct profile *p, const char *arg);

int profile_option(struct profile *p, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (!cli_parse_u64("--pid", arg, &v))
			return EXIT_USAGE;
		if (v > UINT32_MAX) {
			fprintf(stderr, "spulse: --pid %s is not a process id\n",
				arg);
			return EXIT_USAGE;
		}
		p->has_pid = true;
		p->pid = (uint32_t)v;
		return 1;
	case 'k':
		p->kallsyms = arg;
		return 1;
	case 'S':
		p->symfs = arg;
		return 1;
	case 'O':
		p->offcpu = true;
		return 1;
	case 'M':
		p->offcpu_opts = true;
		if (!strcmp(arg, "offcpu"))
			p->metric = METRIC_OFFCPU;
		else if (!strcmp(arg, "blocked"))
			p->metric = METRIC_BLOCKED;
		else if (!strcmp(arg, "runq"))
			p->metric = METRIC_RUNQ;
		else {
			fprintf(stderr, "spulse: --metric must be offcpu, "
				"blocked or runq, not '%s'\n", arg);
			return EXIT_USAGE;
		}
		return 1;
	case 's':
		p->offcpu_opts = true;
		return parse_states(p, arg);
	}
	return 0;
}

/* "S,D", "SD" or "S, D": letters of spulse_state_name(); case matters. */
static int parse_states(struct profile *p, const char *arg)
{
	const char *c;
	uint32_t mask = 0;

	for (c = arg; *c; c++) {
		unsigned int st;

		if (*c == ',' || *c == ' ')
			continue;
		for (st = 0; st <= SPULSE_STATE_MAX; st++) {
			const char *n = spulse_state_name((uint8_t)st);

			if (n && n[0] == *c && !n[1])
				break;
		}
		if (st > SPULSE_STATE_MAX) {
			fprintf(stderr, "spulse: --state: unknown state '%c' "
				"(letters R S D T t X Z P I, e.g. S,D)\n", *c);
			return EXIT_USAGE;
		}
		mask |= 1u << st;
	}
	if (!mask) {
		fprintf(stderr, "spulse: --state needs at least one state\n");
		return EXIT_USAGE;
	}
	p->state_mask = mask;
	return 1;
}

int profile_open(struct profile *p, const char *file)
{
	const char *kallsyms = p->kallsyms, *symfs = p->symfs;
	struct spulse_read_opts opts = { .sz = sizeof(opts) };
	struct spulse_error err = { 0 };
	char *def = NULL;
	int rc;

	p->file = file;
	rc = spulse_replay_open(file, &opts, &p->replay, &err);
	if (rc < 0) {
		cli_print_read_error(file, rc, &err);
		return EXIT_INVALID;
	}
	p->defs = spulse_replay_defs(p->replay);
	p->info = spulse_replay_info(p->replay);
	if (p->info->recovered_from_truncated_tail)
		fprintf(stderr, "%s: recovered from truncated tail at offset "
			"%llu\n", file,
			(unsigned long long)p->info->complete_bytes);
	if (!kallsyms)
		kallsyms = def = symbolizer_default_kallsyms(file);
	p->sym = symbolizer_new(p->defs, kallsyms);
	free(def);
	if (!p->sym) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	symbolizer_set_symfs(p->sym, symfs);
	return EXIT_OK;
}

bool profile_wants(const struct profile *p, const struct spulse_sample *s)
{
	struct spulse_thread t;

	if (!p->has_pid)
		return true;
	if (spulse_defs_thread(p->defs, s->thread, &t) < 0)
		return false;
	return t.pid == p->pid;
}

int profile_check_offcpu_opts(const struct profile *p, const char *cmd)
{
	if (p->offcpu_opts && !p->offcpu)
		return cli_usage_error(cmd, "--state and --metric need "
				       "--off-cpu");
	return EXIT_OK;
}

bool profile_wants_offcpu(const struct profile *p,
			  const struct spulse_offcpu *iv)
{
	struct spulse_thread t;

	if (p->state_mask && (iv->state > SPULSE_STATE_MAX ||
			      !(p->state_mask & (1u << iv->state))))
		return false;
	if (!p->has_pid)
		return true;
	if (spulse_defs_thread(p->defs, iv->thread, &t) < 0)
		return false;
	return t.pid == p->pid;
}

uint64_t profile_offcpu_weight(const struct profile *p,
			       const struct spulse_offcpu *iv)
{
	switch (p->metric) {
	case METRIC_BLOCKED: return iv->blocked_ns;
	case METRIC_RUNQ: return iv->runq_ns;
	default: return iv->blocked_ns + iv->runq_ns;
	}
}

const char *profile_metric_text(const struct profile *p)
{
	switch (p->metric) {
	case METRIC_BLOCKED: return "blocked";
	case METRIC_RUNQ: return "runq";
	default: return "offcpu (blocked+runq)";
	}
}

const char *profile_states_text(const struct profile *p, char *buf,
				size_t len)
{
	size_t n = 0;
	unsigned int st;

	if (!p->state_mask || len < 2 * (SPULSE_STATE_MAX + 1))
		return "all";
	for (st = 0; st <= SPULSE_STATE_MAX; st++) {
		const char *name = spulse_state_name((uint8_t)st);

		if (!(p->state_mask & (1u << st)) || !name)
			continue;
		if (n)
			buf[n++] = ',';
		buf[n++] = name[0];
	}
	buf[n] = 0;
	return buf;
}

void profile_note_no_offcpu(const struct profile *p)
{
	if (!p->info->offcpu)
		fprintf(stderr, "%s: no off-CPU intervals in this spool "
			"(recorded without offcpu=1, or by an older "
			"spulse)\n", p->file);
}

int profile_load_offcpu(struct profile *p, struct spulse_offcpu **out,
			size_t *n)
{
	struct spulse_offcpu iv, *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while ((rc = spulse_replay_next_offcpu(p->replay, &iv)) > 0) {
		if (!profile_wants_offcpu(p, &iv))
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct spulse_offcpu *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				free(v);
				fprintf(stderr, "spulse: out of memory\n");
				return EXIT_INVALID;
			}
			v = nv;
			cap = nc;
		}
		v[cnt++] = iv;
	}
	if (rc < 0) {
		free(v);
		fprintf(stderr, "%s: reading off-CPU intervals: %s\n", p->file,
			strerror(-rc));
		return EXIT_INVALID;
	}
	*out = v;
	*n = cnt;
	return EXIT_OK;
}

static int count_offcpu(struct profile *p)
{
	struct spulse_offcpu iv;
	int rc;

	while ((rc = spulse_replay_next_offcpu(p->replay, &iv)) > 0) {
		uint64_t w;

		if (!profile_wants_offcpu(p, &iv) || iv.stack >= p->nstacks)
			continue;
		w = profile_offcpu_weight(p, &iv);
		p->stack_count[iv.stack] += w;
		p->total += w;
		p->intervals++;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading off-CPU intervals: %s\n", p->file,
			strerror(-rc));
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

int profile_count(struct profile *p)
{
	struct spulse_sample s;
	int rc;

	p->nstacks = spulse_defs_count(p->defs, SPULSE_TAG_STACK);
	p->stack_count = calloc(p->nstacks ? p->nstacks : 1,
				sizeof(*p->stack_count));
	if (!p->stack_count) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	if (p->offcpu)
		return count_offcpu(p);
	if (p->has_pid) {
		/* cache the pid test per thread id */
		uint32_t nt = spulse_defs_count(p->defs, SPULSE_TAG_THREAD), i;
		uint8_t *want = calloc(nt ? nt : 1, 1);

		if (!want)
			return EXIT_INVALID;
		for (i = 0; i < nt; i++) {
			struct spulse_thread t;

			want[i] = spulse_defs_thread(p->defs, i, &t) == 0 &&
				  t.pid == p->pid;
		}
		while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
			if (s.thread < nt && want[s.thread] &&
			    s.stack < p->nstacks) {
				p->stack_count[s.stack]++;
				p->total++;
			}
		}
		free(want);
	} else {
		while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
			if (s.stack < p->nstacks) {
				p->stack_count[s.stack]++;
				p->total++;
			}
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", p->file,
			strerror(-rc));
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

int profile_stack_frames(const struct profile *p, uint32_t leaf,
			 uint32_t *frames)
{
	uint32_t tmp[SPULSE_MAX_DEPTH], id = leaf;
	int n = 0, i;

	while (id != SPULSE_NONE) {
		struct spulse_stack st;

		if (n == SPULSE_MAX_DEPTH ||
		    spulse_defs_stack(p->defs, id, &st) < 0)
			return -1;
		tmp[n++] = st.frame;
		id = st.parent;
	}
	for (i = 0; i < n; i++)
		frames[i] = tmp[n - 1 - i];
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int profile_thread_groups(const struct profile *p, uint64_t **keys,
			  size_t *n, uint32_t **map, uint32_t **latest)
{
	uint32_t nt = spulse_defs_count(p->defs, SPULSE_TAG_THREAD), i;
	uint64_t *k = malloc((nt ? nt : 1) * sizeof(*k));
	uint32_t *m = calloc(nt ? nt : 1, sizeof(*m));
	uint32_t *last = calloc(nt ? nt : 1, sizeof(*last));
	size_t nk = 0, j, u = 0;

	if (!k || !m || !last)
		goto oom;
	for (i = 0; i < nt; i++) {
		struct spulse_thread t;

		if (spulse_defs_thread(p->defs, i, &t) == 0)
			k[nk++] = (uint64_t)t.pid << 32 | t.tid;
	}
	qsort(k, nk, sizeof(*k), cmp_u64);
	for (j = 0; j < nk; j++)
		if (!u || k[j] != k[u - 1])
			k[u++] = k[j];
	for (i = 0; i < nt; i++) {
		struct spulse_thread t;
		size_t lo = 0, hi = u;
		uint64_t key;

		if (spulse_defs_thread(p->defs, i, &t) < 0)
			continue;
		key = (uint64_t)t.pid << 32 | t.tid;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (k[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		m[i] = (uint32_t)lo;
		last[lo] = i;
	}
	*keys = k;
	*n = u;
	*map = m;
	if (latest)
		*latest = last;
	else
		free(last);
	return 0;
oom:
	free(k);
	free(m);
	free(last);
	return -1;
}

void profile_close(struct profile *p)
{
	symbolizer_free(p->sym);
	free(p->stack_count);
	if (p->replay)
		spulse_replay_close(p->replay);
	memset(p, 0, sizeof(*p));
}
