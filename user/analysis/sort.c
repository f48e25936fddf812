/* SPDX-License-Identifier: MIT */
/* Report rows by --sort keys (sort.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "filter.h"
#include "sort.h"

/* The module a --sort dso row shows: the truncated marker has no module of
 * its own and is its own row, "[truncated]". */
static const char *frame_dso(const struct sym_frame *sf, size_t *len)
{
	if (sf->kind == SPULSE_FRAME_TRUNCATED) {
		*len = strlen("[truncated]");
		return "[truncated]";
	}
	*len = sf->dso_len;
	return sf->dso;
}

static const char *const key_names[SORT_NKEYS] = {
	[SORT_SYM] = "sym", [SORT_DSO] = "dso", [SORT_COMM] = "comm",
	[SORT_PID] = "pid", [SORT_TID] = "tid", [SORT_SRCLINE] = "srcline",
	[SORT_HOST] = "host",
};

const char *sort_key_name(int key)
{
	return key >= 0 && key < SORT_NKEYS ? key_names[key] : "?";
}

int sort_parse(struct sort_spec *s, const char *arg)
{
	const char *c = arg;

	for (;;) {
		const char *e = strchr(c, ',');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		int k;

		for (k = 0; k < SORT_NKEYS; k++)
			if (strlen(key_names[k]) == len &&
			    !strncmp(key_names[k], c, len))
				break;
		if (k == SORT_NKEYS) {
			fprintf(stderr, "spulse: --sort: unknown key '%.*s' "
				"(keys: sym, dso, comm, pid, tid, srcline, host, "
				"comma-separated)\n", (int)len, c);
			return EXIT_USAGE;
		}
		if (!sort_has(s, k)) {
			if (s->nkeys == SORT_MAX_KEYS)
				return EXIT_USAGE;
			s->keys[s->nkeys++] = k;
		}
		if (!e)
			return 1;
		c = e + 1;
	}
}

bool sort_has(const struct sort_spec *s, int key)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i] == key)
			return true;
	return false;
}

static bool is_thread_key(int k)
{
	return k == SORT_COMM || k == SORT_PID || k == SORT_TID ||
	       k == SORT_HOST;
}

bool sort_needs_thread(const struct sort_spec *s)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (is_thread_key(s->keys[i]))
			return true;
	return false;
}

/* A growing key text: parts separated by 0x1f, any length. */
struct kbuf {
	char *s;
	size_t n, cap;
	bool oom;
};

static void kb_add(struct kbuf *k, const char *s, size_t len)
{
	if (k->oom)
		return;
	if (k->n + len + 2 > k->cap) {
		size_t nc = (k->n + len + 2) * 2;
		char *ns = realloc(k->s, nc);

		if (!ns) {
			k->oom = true;
			return;
		}
		k->s = ns;
		k->cap = nc;
	}
	memcpy(k->s + k->n, s, len);
	k->n += len;
	k->s[k->n] = 0;
}

/* Append @s (@len bytes) escaped (CLI.md: injective, no control byte)
 * and the 0x1f separator. */
static void put_part_n(struct kbuf *k, const char *s, size_t len)
{
	char *e = cli_text_dup(s, len);

	if (!e) {
		k->oom = true;
		return;
	}
	kb_add(k, e, strlen(e));
	kb_add(k, "\x1f", 1);
	free(e);
}

static void put_part(struct kbuf *k, const char *s)
{
	put_part_n(k, s, strlen(s));
}

static const char *srcline_text(const struct sym_frame *sf, char *buf,
				size_t len)
{
	if (!sf->file || !sf->line)
		return "??:0";
	snprintf(buf, len, "%s:%u", sf->file, sf->line);
	return buf;
}

static int64_t frame_part(struct sort_table *t, uint32_t frame)
{
	const struct sym_frame *sf;
	struct kbuf k = { 0 };
	char tmp[32];
	int i;

	if (frame >= t->nframes) {
		/* a virtual (--inline) frame id: grow the cache */
		uint32_t n = frame + 1024, i;
		int64_t *nf;

		if (frame >= UINT32_MAX - 1024)
			return -1;
		nf = realloc(t->frame_part, n * sizeof(*nf));
		if (!nf)
			return -1;
		for (i = t->nframes; i < n; i++)
			nf[i] = -2;
		t->frame_part = nf;
		t->nframes = n;
	}
	if (t->frame_part[frame] != -2)
		return t->frame_part[frame];
	sf = profile_frame(t->p, frame);
	if (!sf)
		return -1;
	kb_add(&k, "", 0);
	for (i = 0; i < t->spec.nkeys; i++) {
		switch (t->spec.keys[i]) {
		case SORT_SYM:
			put_part_n(&k, sf->label, sf->label_len);
			put_part_n(&k, sf->dso, sf->func ? sf->dso_len : 0);
			break;
		case SORT_DSO: {
			size_t dl;
			const char *d = frame_dso(sf, &dl);

			put_part_n(&k, d, dl);
			break;
		}
		case SORT_SRCLINE:
			if (sf->file && sf->line) {
				char *e = cli_text_dup(sf->file,
						       strlen(sf->file));

				snprintf(tmp, sizeof(tmp), ":%u", sf->line);
				if (e)
					kb_add(&k, e, strlen(e));
				else
					k.oom = true;
				free(e);
				put_part(&k, tmp);
			} else {
				put_part(&k, "??:0");
			}
			break;
		}
	}
	t->frame_part[frame] = k.oom ? -1 : strtab_intern(&t->parts, k.s);
	free(k.s);
	return t->frame_part[frame];
}

static int64_t thread_part(struct sort_table *t, uint32_t thread)
{
	struct spulse_thread th;
	struct kbuf k = { 0 };
	char tmp[300];
	int64_t id;
	int i;

	if (thread == SPULSE_NONE || thread >= t->nthreads)
		return strtab_intern(&t->parts, "");
	if (t->thread_part[thread] != -2)
		return t->thread_part[thread];
	if (spulse_defs_thread(t->p->defs, thread, &th) < 0)
		return -1;
	kb_add(&k, "", 0);
	for (i = 0; i < t->spec.nkeys; i++) {
		switch (t->spec.keys[i]) {
		case SORT_COMM:
			put_part_n(&k, th.comm, th.comm_len);
			break;
		case SORT_PID:
			snprintf(tmp, sizeof(tmp), "%u", th.pid);
			put_part(&k, tmp);
			break;
		case SORT_TID:
			snprintf(tmp, sizeof(tmp), "%u", th.tid);
			put_part(&k, tmp);
			break;
		case SORT_HOST: {
			size_t hl;
			const char *h = filter_thread_host_n(t->p->defs,
							     thread, &hl);

			put_part_n(&k, h, hl);
			break;
		}
		}
	}
	id = k.oom ? -1 : strtab_intern(&t->parts, k.s);
	free(k.s);
	t->thread_part[thread] = id;
	return id;
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int map_grow(struct sort_table *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 1024, i;
	uint64_t *keys = calloc(ns, sizeof(*keys));
	uint32_t *vals = calloc(ns, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (i = 0; i < t->nslots; i++) {
		uint64_t h;

		if (!t->map_vals[i])
			continue;
		for (h = mix(t->map_keys[i]); vals[h & (ns - 1)]; h++)
			;
		keys[h & (ns - 1)] = t->map_keys[i];
		vals[h & (ns - 1)] = t->map_vals[i];
	}
	free(t->map_keys);
	free(t->map_vals);
	t->map_keys = keys;
	t->map_vals = vals;
	t->nslots = ns;
	return 0;
}

int64_t sort_row_of(struct sort_table *t, uint32_t frame, uint32_t thread)
{
	int64_t fp = frame_part(t, frame), tp = thread_part(t, thread);
	uint64_t key, h;
	struct sort_row *r;

	if (fp < 0 || tp < 0)
		return -1;
	key = (uint64_t)fp << 32 | (uint64_t)tp;
	if (t->nslots) {
		for (h = mix(key); t->map_vals[h & (t->nslots - 1)]; h++)
			if (t->map_keys[h & (t->nslots - 1)] == key)
				return t->map_vals[h & (t->nslots - 1)] - 1;
	}
	if ((t->nrows + 1) * 2 > t->nslots) {
		if (map_grow(t) < 0)
			return -1;
	}
	if (t->nrows == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct sort_row *nr = realloc(t->rows, nc * sizeof(*nr));

		if (!nr)
			return -1;
		t->rows = nr;
		t->cap = nc;
	}
	for (h = mix(key); t->map_vals[h & (t->nslots - 1)]; h++)
		;
	t->map_keys[h & (t->nslots - 1)] = key;
	t->map_vals[h & (t->nslots - 1)] = (uint32_t)t->nrows + 1;
	r = &t->rows[t->nrows];
	memset(r, 0, sizeof(*r));
	r->frame = frame;
	r->thread = thread;
	r->fpart = (uint32_t)fp;
	r->tpart = (uint32_t)tp;
	return (int64_t)t->nrows++;
}

bool sort_sched_frame(const struct sym_frame *sf)
{
	static const char *const pfx[] = {
		"schedule", "io_schedule", "preempt_schedule", "cond_resched",
		"rt_mutex_schedule", "rtlock_schedule",
	};
	const char *n;

	if (!sf || sf->kind != SPULSE_FRAME_KERNEL || !sf->func)
		return false;
	for (n = sf->func; *n == '_'; n++)
		;
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(n, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* The index in @frames (root first, @n of them) that gets the self
 * weight: the leaf, or with @wait_leaf the first non-scheduler frame. */
static int self_index(struct profile *p, const uint32_t *frames, int n,
		      bool wait_leaf)
{
	int k = n - 1;

	if (!wait_leaf)
		return k;
	while (k > 0 && sort_sched_frame(profile_frame(p, frames[k])))
		k--;
	return sort_sched_frame(profile_frame(p, frames[k])) ? n - 1 : k;
}

int sort_aggregate(struct sort_table *t, struct profile *p,
		   const struct sort_spec *spec)
{
	uint32_t frames[SPULSE_MAX_DEPTH], i;
	size_t c;

	memset(t, 0, sizeof(*t));
	t->spec = *spec;
	if (!t->spec.nkeys)
		t->spec.keys[t->spec.nkeys++] = SORT_SYM;
	t->p = p;
	strtab_init(&t->parts);
	t->nframes = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	t->nthreads = spulse_defs_count(p->defs, SPULSE_TAG_THREAD);
	t->frame_part = malloc((t->nframes ? t->nframes : 1) *
			       sizeof(*t->frame_part));
	t->thread_part = malloc((t->nthreads ? t->nthreads : 1) *
				sizeof(*t->thread_part));
	if (!t->frame_part || !t->thread_part)
		return -ENOMEM;
	for (i = 0; i < t->nframes; i++)
		t->frame_part[i] = -2;
	for (i = 0; i < t->nthreads; i++)
		t->thread_part[i] = -2;
	for (c = 0; c < p->ncells; c++) {
		const struct profile_cell *pc = &p->cells[c];
		int n = profile_stack_frames(p, pc->stack, frames), k, leaf;

		if (n < 0)
			return -EBADMSG;
		leaf = self_index(p, frames, n, t->spec.wait_leaf);
		for (k = 0; k < n; k++) {
			int64_t r = sort_row_of(t, frames[k], pc->thread);

			if (r < 0)
				return -ENOMEM;
			if (t->rows[r].stamp != c + 1) {
				t->rows[r].stamp = c + 1;
				t->rows[r].total += pc->weight;
			}
			if (k == leaf)
				t->rows[r].self += pc->weight;
		}
	}
	return 0;
}

static const struct sort_table *cmp_table;
static bool cmp_by_total;

static int cmp_rows(const void *a, const void *b)
{
	const struct sort_row *x = &cmp_table->rows[*(const uint32_t *)a];
	const struct sort_row *y = &cmp_table->rows[*(const uint32_t *)b];
	uint64_t kx = cmp_by_total ? x->total : x->self;
	uint64_t ky = cmp_by_total ? y->total : y->self;
	int d;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	kx = cmp_by_total ? x->self : x->total;
	ky = cmp_by_total ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	d = strcmp(strtab_str(&cmp_table->parts, x->fpart),
		   strtab_str(&cmp_table->parts, y->fpart));
	if (d)
		return d;
	return strcmp(strtab_str(&cmp_table->parts, x->tpart),
		      strtab_str(&cmp_table->parts, y->tpart));
}

uint32_t *sort_order(const struct sort_table *t, bool by_total)
{
	uint32_t *order = malloc((t->nrows ? t->nrows : 1) * sizeof(*order));
	size_t i;

	if (!order)
		return NULL;
	for (i = 0; i < t->nrows; i++)
		order[i] = (uint32_t)i;
	cmp_table = t;
	cmp_by_total = by_total;
	if (t->nrows > 1)	/* qsort() wants a valid array even for 0 */
		qsort(order, t->nrows, sizeof(*order), cmp_rows);
	return order;
}

const char *sort_field(const struct sort_table *t, uint32_t row, int key,
		       char *buf, size_t len)
{
	const struct sort_row *r = &t->rows[row];
	const struct sym_frame *sf = NULL;
	struct spulse_thread th;

	const char *s;
	size_t sl;
	char line[1024];

	switch (key) {
	case SORT_SYM:
	case SORT_DSO:
	case SORT_SRCLINE:
		sf = profile_frame(t->p, r->frame);
		if (!sf)
			return "?";
		if (key == SORT_SYM) {
			s = sf->label;
			sl = sf->label_len;
		} else if (key == SORT_DSO) {
			s = frame_dso(sf, &sl);
		} else {
			s = srcline_text(sf, line, sizeof(line));
			sl = strlen(s);
		}
		cli_text_escape(buf, len, s, sl);
		return buf;
	}
	if (r->thread == SPULSE_NONE ||
	    spulse_defs_thread(t->p->defs, r->thread, &th) < 0)
		return "?";
	if (key == SORT_COMM) {
		cli_text_escape(buf, len, th.comm, th.comm_len);
	} else if (key == SORT_HOST) {
		s = filter_thread_host_n(t->p->defs, r->thread, &sl);
		cli_text_escape(buf, len, s, sl);
	} else
		snprintf(buf, len, "%u", key == SORT_PID ? th.pid : th.tid);
	return buf;
}

const char *sort_module(const struct sort_table *t, uint32_t row,
			size_t *len)
{
	const struct sym_frame *sf = profile_frame(t->p, t->rows[row].frame);
	struct spulse_frame fr;
	struct spulse_module m;

	if (spulse_defs_frame(t->p->defs,
			      profile_real_frame(t->p, t->rows[row].frame),
			      &fr) == 0 &&
	    fr.kind == SPULSE_FRAME_MODULE &&
	    spulse_defs_module(t->p->defs, fr.module, &m) == 0) {
		*len = m.path_len;
		return m.path;
	}
	if (!sf) {
		*len = 1;
		return "?";
	}
	/* a dso row of the truncated marker is named; a sym row keeps its
	 * empty module (the marker has none) */
	if (sort_has(&t->spec, SORT_DSO))
		return frame_dso(sf, len);
	*len = sf->dso_len;
	return sf->dso;
}

const char *sort_key_text(const struct sort_table *t, uint32_t row,
			  char *buf, size_t len)
{
	snprintf(buf, len, "%s\x1e%s",
		 strtab_str(&t->parts, t->rows[row].fpart),
		 strtab_str(&t->parts, t->rows[row].tpart));
	return buf;
}

void sort_free(struct sort_table *t)
{
	strtab_free(&t->parts);
	free(t->rows);
	free(t->frame_part);
	free(t->thread_part);
	free(t->map_keys);
	free(t->map_vals);
	memset(t, 0, sizeof(*t));
}
