/* SPDX-License-Identifier: MIT */
/* Sample aggregation shared by report, flame and export. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "profile.h"

static int parse_states(struct profile *p, const char *arg);

int profile_option(struct profile *p, int c, const char *arg)
{
	int rc;

	switch (c) {
	case 'p':
		rc = filter_option(&p->filter, c, arg);
		if (rc == 1 && !p->has_pid) {
			p->has_pid = true;
			p->pid = p->filter.pids[0];
		}
		return rc;
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
	case PROFILE_OPT_INLINE:
		p->inline_frames = true;
		return 1;
	case PROFILE_OPT_NO_DEMANGLE:
		p->no_demangle = true;
		return 1;
	case PROFILE_OPT_DEBUG_DIR:
		p->debug_dir = arg;
		return 1;
	}
	return filter_option(&p->filter, c, arg);
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

/* The earliest sample time, or without samples the earliest interval. */
static int time_origin(struct profile *p, int64_t *origin)
{
	struct spulse_sample buf[1024];
	struct spulse_offcpu iv;
	int64_t lo = INT64_MAX;
	int n, i;

	while ((n = spulse_replay_next_samples(p->replay, buf, 1024)) > 0)
		for (i = 0; i < n; i++)
			if (buf[i].time_ns < lo)
				lo = buf[i].time_ns;
	if (n < 0 || (n = spulse_replay_rewind(p->replay)) < 0)
		return n;
	if (lo == INT64_MAX) {
		while ((n = spulse_replay_next_offcpu(p->replay, &iv)) > 0)
			if (iv.time_ns < lo)
				lo = iv.time_ns;
		if (n < 0 || (n = spulse_replay_rewind_offcpu(p->replay)) < 0)
			return n;
	}
	*origin = lo == INT64_MAX ? 0 : lo;
	return 0;
}

/* Per-thread and per-frame tables of the filters; the --time window. */
static int resolve_filters(struct profile *p)
{
	const struct filter *f = &p->filter;
	uint32_t i;
	int rc;

	p->nthreads = spulse_defs_count(p->defs, SPULSE_TAG_THREAD);
	p->nframes = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	if (filter_has_thread(f)) {
		p->thread_ok = calloc(p->nthreads ? p->nthreads : 1, 1);
		if (!p->thread_ok)
			goto oom;
		for (i = 0; i < p->nthreads; i++) {
			struct spulse_thread t;

			p->thread_ok[i] =
				spulse_defs_thread(p->defs, i, &t) == 0 &&
				filter_thread(f, t.pid, t.tid, t.comm,
					      t.comm_len) &&
				filter_host(f, filter_thread_host(p->defs, i));
		}
	}
	if (f->frames) {
		p->frame_ok = calloc(p->nframes ? p->nframes : 1, 1);
		if (!p->frame_ok)
			goto oom;
		for (i = 0; i < p->nframes; i++) {
			struct spulse_frame fr;

			p->frame_ok[i] =
				spulse_defs_frame(p->defs, i, &fr) == 0 &&
				filter_frame_kind(f, fr.kind);
		}
	}
	if (f->frames || f->ndsos) {
		uint32_t ns = spulse_defs_count(p->defs, SPULSE_TAG_STACK);

		p->stack_ok = calloc(ns ? ns : 1, 1);
		if (!p->stack_ok)
			goto oom;
	}
	if (f->has_time) {
		double lo, hi;

		rc = time_origin(p, &p->origin_ns);
		if (rc < 0) {
			fprintf(stderr, "%s: reading samples: %s\n", p->file,
				strerror(-rc));
			return EXIT_INVALID;
		}
		lo = (double)p->origin_ns + f->t_start * 1e9;
		hi = (double)p->origin_ns + f->t_end * 1e9;
		p->t_lo = lo >= 9.2e18 ? INT64_MAX : (int64_t)lo;
		p->t_hi = hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
	}
	return EXIT_OK;
oom:
	fprintf(stderr, "spulse: out of memory\n");
	return EXIT_INVALID;
}

bool profile_stack_ok(const struct profile *p, uint32_t stack)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	uint32_t nstacks;
	bool ok;
	int n, i;

	if (!p->stack_ok)
		return true;
	nstacks = spulse_defs_count(p->defs, SPULSE_TAG_STACK);
	if (stack >= nstacks)
		return false;
	if (p->stack_ok[stack])
		return p->stack_ok[stack] == 1;
	n = profile_stack_frames(p, stack, frames);
	ok = n > 0;
	if (ok && p->filter.ndsos) {
		ok = false;
		for (i = 0; i < n && !ok; i++) {
			const struct sym_frame *sf = profile_frame(p, frames[i]);

			ok = sf && filter_dso_matches(&p->filter, sf->dso,
							 sf->dso_len);
		}
	}
	p->stack_ok[stack] = ok ? 1 : 2;
	return ok;
}

const char *profile_thread_label(const struct profile *p, uint32_t thread,
				 int key, char *buf, size_t len)
{
	struct spulse_thread t;

	if (spulse_defs_thread(p->defs, thread, &t) < 0) {
		snprintf(buf, len, "[unknown thread]");
		return buf;
	}
	/* comm and host escaped (CLI.md "Printing spool text") */
	if (key == 'H') {
		size_t hl;
		const char *h = filter_thread_host_n(p->defs, thread, &hl);

		cli_text_escape(buf, len, h, hl);
		return buf;
	}
	{
		char comm[4 * SPULSE_MAX_COMM + 1];

		cli_text_escape(comm, sizeof(comm), t.comm, t.comm_len);
		if (key == 'c')
			snprintf(buf, len, "%s", comm);
		else if (key == 'p')
			snprintf(buf, len, "%s %u", comm, t.pid);
		else
			snprintf(buf, len, "%s %u/%u", comm, t.pid, t.tid);
	}
	return buf;
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
	symbolizer_set_spool(p->sym, file, p->info->start_us);
	if (p->inline_frames)
		symbolizer_set_inline(p->sym, true);
	if (p->no_demangle)
		symbolizer_set_demangle(p->sym, false);
	if (p->debug_dir)
		symbolizer_set_debug_dir(p->sym, p->debug_dir);
	return resolve_filters(p);
}

bool profile_wants(const struct profile *p, const struct spulse_sample *s)
{
	return profile_thread_ok(p, s->thread) &&
	       profile_time_ok(p, s->time_ns) &&
	       profile_stack_ok(p, s->stack);
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
	if (p->state_mask && (iv->state > SPULSE_STATE_MAX ||
			      !(p->state_mask & (1u << iv->state))))
		return false;
	return profile_thread_ok(p, iv->thread) &&
	       profile_time_ok(p, iv->time_ns) &&
	       profile_stack_ok(p, iv->stack);
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

/* (stack, thread) -> cell index: open addressing, grown by doubling. */
struct cell_map {
	uint32_t *slots;	/* cell index + 1, 0 = empty */
	size_t nslots;
};

static uint32_t cell_hash(uint32_t stack, uint32_t thread)
{
	uint64_t k = (uint64_t)stack << 32 | thread;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static int cell_grow(struct profile *p, struct cell_map *m)
{
	size_t ns = m->nslots ? m->nslots * 2 : 4096, i;
	uint32_t *sl = calloc(ns, sizeof(*sl));
	struct profile_cell *nc;

	if (!sl)
		return -1;
	nc = realloc(p->cells, ns / 2 * sizeof(*nc));
	if (!nc) {
		free(sl);
		return -1;
	}
	p->cells = nc;
	for (i = 0; i < p->ncells; i++) {
		uint32_t h = cell_hash(nc[i].stack, nc[i].thread);

		while (sl[h & (ns - 1)])
			h++;
		sl[h & (ns - 1)] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = sl;
	m->nslots = ns;
	return 0;
}

/* Add @w to the cell of (@stack, @thread); no allocation unless it grows. */
static int cell_add(struct profile *p, struct cell_map *m, uint32_t stack,
		    uint32_t thread, uint64_t w)
{
	uint32_t h, c;

	if (p->ncells * 2 >= m->nslots && cell_grow(p, m) < 0)
		return -1;
	for (h = cell_hash(stack, thread); (c = m->slots[h & (m->nslots - 1)]);
	     h++) {
		struct profile_cell *pc = &p->cells[c - 1];

		if (pc->stack == stack && pc->thread == thread) {
			pc->weight += w;
			return 0;
		}
	}
	m->slots[h & (m->nslots - 1)] = (uint32_t)p->ncells + 1;
	p->cells[p->ncells++] = (struct profile_cell){ stack, thread, w };
	return 0;
}

/* Cells from the per-stack counts (thread SPULSE_NONE). */
static int cells_from_stacks(struct profile *p)
{
	uint32_t s;
	size_t n = 0;

	for (s = 0; s < p->nstacks; s++)
		n += p->stack_count[s] != 0;
	p->cells = malloc((n ? n : 1) * sizeof(*p->cells));
	if (!p->cells)
		return -1;
	for (s = 0; s < p->nstacks; s++)
		if (p->stack_count[s])
			p->cells[p->ncells++] = (struct profile_cell){
				s, SPULSE_NONE, p->stack_count[s] };
	return 0;
}

/*
 * Drop what the stack-level filters reject (decided once per stack, after
 * counting), then derive the cells or the per-stack counts.
 */
static int finish_count(struct profile *p)
{
	size_t i, k = 0;
	uint32_t s;

	if (!p->by_thread) {
		for (s = 0; s < p->nstacks; s++) {
			if (p->stack_count[s] && !profile_stack_ok(p, s)) {
				p->total -= p->stack_count[s];
				p->stack_count[s] = 0;
			}
		}
		return cells_from_stacks(p);
	}
	for (i = 0; i < p->ncells; i++) {
		struct profile_cell *c = &p->cells[i];

		if (!profile_stack_ok(p, c->stack)) {
			p->total -= c->weight;
			continue;
		}
		p->stack_count[c->stack] += c->weight;
		p->cells[k++] = *c;
	}
	p->ncells = k;
	return 0;
}

static int count_offcpu(struct profile *p, struct cell_map *m)
{
	struct spulse_offcpu iv;
	int rc;

	while ((rc = spulse_replay_next_offcpu(p->replay, &iv)) > 0) {
		uint64_t w;

		if (iv.stack >= p->nstacks || iv.state > SPULSE_STATE_MAX ||
		    (p->state_mask && !(p->state_mask & (1u << iv.state))) ||
		    !profile_thread_ok(p, iv.thread) ||
		    !profile_time_ok(p, iv.time_ns))
			continue;
		w = profile_offcpu_weight(p, &iv);
		/*
		 * Every row, node and cell sum is at most the total: when the
		 * total fits a u64, nothing wraps. Beyond 2^64 ns (584
		 * years of intervals) refuse rather than print a wrapped
		 * number (CLI.md "Sums").
		 */
		if (p->total + w < p->total)
			return -EOVERFLOW;
		if (p->by_thread) {
			if (cell_add(p, m, iv.stack, iv.thread, w) < 0)
				return -ENOMEM;
		} else {
			p->stack_count[iv.stack] += w;
		}
		p->total += w;
		p->intervals++;
	}
	return rc;
}

static int count_samples(struct profile *p, struct cell_map *m)
{
	struct spulse_sample buf[1024];
	bool simple = !p->thread_ok && !p->filter.has_time && !p->by_thread;
	int n, i;

	while ((n = spulse_replay_next_samples(p->replay, buf, 1024)) > 0) {
		for (i = 0; i < n; i++) {
			const struct spulse_sample *s = &buf[i];

			if (s->stack >= p->nstacks)
				continue;
			if (!simple) {
				if (!profile_thread_ok(p, s->thread) ||
				    !profile_time_ok(p, s->time_ns))
					continue;
				if (p->by_thread) {
					if (cell_add(p, m, s->stack, s->thread,
						     1) < 0)
						return -ENOMEM;
					p->total++;
					continue;
				}
			}
			p->stack_count[s->stack]++;
			p->total++;
		}
	}
	return n;
}

int profile_count(struct profile *p)
{
	struct cell_map m = { 0 };
	int rc;

	p->nstacks = spulse_defs_count(p->defs, SPULSE_TAG_STACK);
	p->stack_count = calloc(p->nstacks ? p->nstacks : 1,
				sizeof(*p->stack_count));
	if (!p->stack_count) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	rc = p->offcpu ? count_offcpu(p, &m) : count_samples(p, &m);
	free(m.slots);
	if (rc == -ENOMEM || (rc >= 0 && finish_count(p) < 0)) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	if (rc == -EOVERFLOW) {
		fprintf(stderr, "%s: the selected off-CPU intervals total more "
			"than 2^64 ns (584 years), which this view cannot sum "
			"without wrapping; select fewer (--time, --tid, "
			"--state) or use spulse latency, which sums in 128 "
			"bits\n", p->file);
		return EXIT_INVALID;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading %s: %s\n", p->file,
			p->offcpu ? "off-CPU intervals" : "samples",
			strerror(-rc));
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

/* Look up (once) the inline chain of real frame @fid; 0 or -ENOMEM. */
static int load_chain(struct profile *p, uint32_t fid)
{
	const struct sym_frame *chain;
	uint32_t n, i;

	n = symbolizer_inline_chain(p->sym, fid, &chain);
	p->chain_len[fid] = n > 1 ? n : 1;
	p->chain_first[fid] = 0;
	if (n <= 1)
		return 0;
	if (p->nvframes + n > p->capvframes) {
		uint32_t nc = (p->capvframes + n) * 2;
		const struct sym_frame **nv = realloc(p->vframes,
						      nc * sizeof(*nv));
		uint32_t *nr;

		if (!nv)
			return -ENOMEM;
		p->vframes = nv;
		nr = realloc(p->vreal, nc * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		p->vreal = nr;
		p->capvframes = nc;
	}
	p->chain_first[fid] = p->nframes + p->nvframes;
	/* chain[] is innermost first: store outermost first */
	for (i = 0; i < n; i++) {
		p->vframes[p->nvframes + i] = &chain[n - 1 - i];
		p->vreal[p->nvframes + i] = fid;
	}
	p->nvframes += n;
	return 0;
}

/* Replace the real frames of @frames (root first) by their chains. */
static int expand_inline(const struct profile *cp, uint32_t *frames, int n)
{
	struct profile *p = (struct profile *)cp;	/* caches only */
	uint32_t tmp[SPULSE_MAX_DEPTH];
	int i, m = 0;

	if (!p->chain_first) {
		p->chain_first = malloc((p->nframes ? p->nframes : 1) *
					sizeof(*p->chain_first));
		p->chain_len = malloc((p->nframes ? p->nframes : 1) *
				      sizeof(*p->chain_len));
		if (!p->chain_first || !p->chain_len)
			return -1;
		memset(p->chain_first, 0xff, (p->nframes ? p->nframes : 1) *
		       sizeof(*p->chain_first));
	}
	for (i = 0; i < n; i++) {
		uint32_t f = frames[i], k;

		if (f >= p->nframes)
			return -1;
		if (p->chain_first[f] == UINT32_MAX && load_chain(p, f) < 0)
			return -1;
		if (p->chain_len[f] == 1 ||
		    m + (int)p->chain_len[f] + (n - i - 1) > SPULSE_MAX_DEPTH) {
			tmp[m++] = f;
			continue;
		}
		for (k = 0; k < p->chain_len[f]; k++)
			tmp[m++] = p->chain_first[f] + k;
	}
	memcpy(frames, tmp, (size_t)m * sizeof(*frames));
	return m;
}

int profile_stack_frames(const struct profile *p, uint32_t leaf,
			 uint32_t *frames)
{
	uint32_t tmp[SPULSE_MAX_DEPTH], id = leaf;
	int n = 0, i, walked = 0;

	while (id != SPULSE_NONE) {
		struct spulse_stack st;

		if (walked++ == SPULSE_MAX_DEPTH ||
		    spulse_defs_stack(p->defs, id, &st) < 0)
			return -1;
		if (!p->frame_ok ||
		    (st.frame < p->nframes && p->frame_ok[st.frame]))
			tmp[n++] = st.frame;
		id = st.parent;
	}
	for (i = 0; i < n; i++)
		frames[i] = tmp[n - 1 - i];
	if (p->inline_frames && n)
		return expand_inline(p, frames, n);
	return n;
}

const struct sym_frame *profile_frame(const struct profile *p, uint32_t id)
{
	if (id < p->nframes || !p->inline_frames)
		return symbolizer_frame(p->sym, id);
	id -= p->nframes;
	return id < p->nvframes ? p->vframes[id] : NULL;
}

int64_t profile_label_id(const struct profile *p, uint32_t id)
{
	const struct sym_frame *sf;

	if (id < p->nframes || !p->inline_frames)
		return symbolizer_label_id(p->sym, id);
	sf = profile_frame(p, id);
	return sf ? (int64_t)sf->label_id : -1;
}

uint32_t profile_real_frame(const struct profile *p, uint32_t id)
{
	if (id < p->nframes || !p->inline_frames ||
	    id - p->nframes >= p->nvframes)
		return id;
	return p->vreal[id - p->nframes];
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
	if (nk > 1)	/* qsort() wants a valid array even for 0 */
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

int profile_copy_options(struct profile *dst, const struct profile *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->has_pid = src->has_pid;
	dst->pid = src->pid;
	dst->kallsyms = src->kallsyms;
	dst->symfs = src->symfs;
	dst->offcpu = src->offcpu;
	dst->metric = src->metric;
	dst->state_mask = src->state_mask;
	dst->offcpu_opts = src->offcpu_opts;
	dst->by_thread = src->by_thread;
	dst->inline_frames = src->inline_frames;
	dst->no_demangle = src->no_demangle;
	dst->debug_dir = src->debug_dir;
	return filter_copy(&dst->filter, &src->filter);
}

void profile_close(struct profile *p)
{
	symbolizer_free(p->sym);
	free(p->stack_count);
	free(p->cells);
	free(p->thread_ok);
	free(p->frame_ok);
	free(p->stack_ok);
	free(p->chain_first);
	free(p->chain_len);
	free(p->vframes);
	free(p->vreal);
	filter_free(&p->filter);
	if (p->replay)
		spulse_replay_close(p->replay);
	memset(p, 0, sizeof(*p));
}
