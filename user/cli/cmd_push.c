/* SPDX-License-Identifier: MIT */
/*
 * spulse push: spools into ClickHouse over its HTTP interface, idempotent
 * (docs/FLEET.md). Per spool: a first pass counts and validates
 * it (a corrupt spool is refused before any row is sent), then frames
 * (symbolized), stacks, recordings and samples go in numbered batches of
 * deterministic content; each table's batches already on the server with
 * their exact row count are skipped, so a re-push or a resumed push adds
 * nothing twice; a batch found short is deleted (mutation) and re-sent. The
 * push's spulse_pushes row is written last: queries only see committed
 * pushes.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/ch_http.h"
#include "store/ch_schema.h"
#include "cli.h"
#include "analysis/profile.h"

int cmd_push(int argc, char **argv);

static const char push_help[] =
"NAME\n"
"    spulse push - push spools into ClickHouse (idempotent)\n"
"\n"
"SYNOPSIS\n"
"    spulse push --clickhouse URL [--database DB] [--batch N]\n"
"                [--host NAME] [--kallsyms PATH] [--symfs DIR] FILE...\n"
"\n"
"DESCRIPTION\n"
"    Sends each spool's samples, stacks and symbolized frames to\n"
"    ClickHouse's HTTP interface (batched RowBinary INSERTs) into the\n"
"    MergeTree tables of docs/FLEET.md, creating the database\n"
"    and tables when missing. A spool is pushed once: pushing it again\n"
"    does nothing, and a push killed midway is resumed by running it\n"
"    again (batches already stored are skipped, none is stored twice).\n"
"    Queries (spulse report/flame --clickhouse) see a spool only once its\n"
"    push is complete. A corrupt spool is refused before any row is sent.\n"
"\n"
"    Environment: SPULSE_PUSH_KILL_AFTER_BATCHES=N (tests) makes push\n"
"    SIGKILL itself after its N-th INSERT.\n"
"\n"
"OPTIONS\n"
"    --clickhouse URL    http://HOST:PORT of the ClickHouse HTTP interface\n"
"    --database DB       database (default spulse)\n"
"    --batch N           samples per INSERT (default 100000)\n"
"    --host NAME         host of spools without an identity record\n"
"                        (default: unknown)\n"
"    --kallsyms PATH, --symfs DIR   symbolization, as in spulse report\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse push --clickhouse http://ch1:8123 web-*.spulse\n"
"    spulse push --clickhouse http://127.0.0.1:8123 --database lab \\\n"
"                --host vm1 demo.spulse\n"
"    spulse report --clickhouse http://ch1:8123 --host web-07 --top 20\n"
"\n"
"EXIT STATUS\n"
"    0 every spool pushed (or already there), 1 invalid spool or server\n"
"    error (message on stderr), 2 usage error.\n";

enum { T_FRAMES, T_STACKS, T_RECORDINGS, T_SAMPLES, T_N };

static const char *const table_name[T_N] = {
	"spulse_frames", "spulse_stacks", "spulse_recordings",
	"spulse_samples",
};

static const char *const table_cols[T_N] = {
	"push_id, frame, batch, kind, func, label, module, file, line, addr, "
	"build_id",
	"push_id, push_key, stack, batch, depth, frames, keys, modules, leaf, "
	"folded, "
	"labels, kinds",
	"push_id, source, batch, recording_id, host, machine_id, boot_id, "
	"kernel, start_us, batch_rows",
	"day, host, time_ns, push_key, batch, recording_id, pid, tid, comm, "
	"cpu, stack",
};

struct batch_count {
	uint32_t batch;
	uint64_t rows;
};

struct push_opts {
	const char *url, *db, *host;
	uint64_t batch;
	long kill_after;	/* test hook: SIGKILL self after N batches */
};

struct pusher {
	struct ch_conn *c;
	const struct push_opts *o;
	char push_id[33];
	uint64_t push_key;		/* its first 64 bits */
	char where[64];			/* "push_id = '...'" */
	char where_key[48];		/* "push_key = N" (spulse_samples) */
	struct batch_count *have[T_N];	/* batches on the server */
	size_t nhave[T_N];
	uint64_t batch;			/* rows per INSERT (--batch, or the
					 * interrupted push's) */
	uint64_t sent[T_N], skipped[T_N], repaired;
	long batches_sent;
};

/* ---- the push id: same spool, same id ------------------------------- */

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * 128 bits from the spool's size, header start time and first MiB (two
 * FNV-1a streams with different bases): the same file always gets the
 * same id, a different recording (other start time) another.
 */
static int push_id_of(const char *file, uint64_t start_us, char out[33])
{
	unsigned char buf[65536];
	uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;
	size_t n, total = 0;
	struct stat st;
	FILE *f = fopen(file, "rb");

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0) {
		fclose(f);
		return -errno;
	}
	a = fnv(a, (const unsigned char *)&start_us, sizeof(start_us));
	b = fnv(b, (const unsigned char *)&st.st_size, sizeof(st.st_size));
	while (total < (1u << 20) && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		a = fnv(a, buf, n);
		b = fnv(b ^ 0x5bd1e995, buf, n);
		total += n;
	}
	fclose(f);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)a,
		 (unsigned long long)b);
	return 0;
}

/* ---- batches already on the server ---------------------------------- */

static int load_have(struct pusher *ps, int t)
{
	struct ch_buf q = { 0 }, ans = { 0 };
	char *f[2];
	size_t l[2], pos = 0;
	int rc;

	ch_buf_printf(&q, "SELECT batch, count() FROM %s WHERE %s"
		      " GROUP BY batch ORDER BY batch FORMAT TabSeparated",
		      table_name[t], t == T_SAMPLES ? ps->where_key : ps->where);
	rc = ch_query(ps->c, q.p, NULL, 0, &ans, true);
	ch_buf_free(&q);
	while (!rc && ch_tsv_row(&ans, &pos, f, l, 2) == 2) {
		struct batch_count *nb = realloc(ps->have[t],
			(ps->nhave[t] + 1) * sizeof(*nb));

		if (!nb) {
			rc = -ENOMEM;
			break;
		}
		ps->have[t] = nb;
		nb[ps->nhave[t]].batch = (uint32_t)strtoul(f[0], NULL, 10);
		nb[ps->nhave[t]].rows = strtoull(f[1], NULL, 10);
		ps->nhave[t]++;
	}
	ch_buf_free(&ans);
	return rc;
}

static uint64_t have_rows(const struct pusher *ps, int t, uint32_t batch)
{
	size_t lo = 0, hi = ps->nhave[t];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ps->have[t][mid].batch == batch)
			return ps->have[t][mid].rows;
		if (ps->have[t][mid].batch < batch)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Is batch @batch of @rows rows to be sent (not already complete)? */
static bool want_batch(struct pusher *ps, int t, uint32_t batch,
		       uint64_t rows)
{
	uint64_t h = have_rows(ps, t, batch);

	if (h == rows && rows) {
		ps->skipped[t] += rows;
		return false;
	}
	return true;
}

/* Delete a batch found with a wrong row count, and wait for it. */
static int delete_batch(struct pusher *ps, int t, uint32_t batch)
{
	struct ch_buf q = { 0 };
	uint64_t left = 1;
	int rc, i;

	const char *w = t == T_SAMPLES ? ps->where_key : ps->where;

	ch_buf_printf(&q, "ALTER TABLE %s DELETE WHERE %s AND batch = %u",
		      table_name[t], w, batch);
	rc = ch_query(ps->c, q.p, NULL, 0, NULL, true);
	ch_buf_free(&q);
	for (i = 0; !rc && left && i < 600; i++) {
		ch_buf_printf(&q, "SELECT count() FROM %s WHERE %s AND "
			      "batch = %u", table_name[t], w, batch);
		rc = ch_query_u64(ps->c, q.p, &left);
		ch_buf_free(&q);
		if (!rc && left) {
			struct timespec ts = { 0, 100000000 };

			nanosleep(&ts, NULL);
		}
	}
	if (!rc && left) {
		snprintf(ps->c->err, sizeof(ps->c->err), "%s batch %u: the "
			 "delete of a partial batch did not finish in 60 s",
			 table_name[t], batch);
		rc = -EIO;
	}
	ps->repaired++;
	return rc;
}

/* Send the rows of batch @batch (RowBinary in @body) unless present. */
static int put_batch(struct pusher *ps, int t, uint32_t batch, uint64_t rows,
		     struct ch_buf *body)
{
	struct ch_buf q = { 0 };
	int rc = 0;

	if (!rows)
		return 0;
	if (body->oom) {
		snprintf(ps->c->err, sizeof(ps->c->err), "out of memory");
		return -ENOMEM;
	}
	if (have_rows(ps, t, batch))
		rc = delete_batch(ps, t, batch);
	if (rc)
		return rc;
	ch_buf_printf(&q, "INSERT INTO %s (%s) FORMAT RowBinary",
		      table_name[t], table_cols[t]);
	rc = ch_query(ps->c, q.p, body->p, body->n, NULL, true);
	ch_buf_free(&q);
	if (rc) {
		char e[sizeof(ps->c->err)];

		snprintf(e, sizeof(e), "%s", ps->c->err);
		snprintf(ps->c->err, sizeof(ps->c->err), "INSERT into %s "
			 "(batch %u): %.400s", table_name[t], batch, e);
		return rc;
	}
	ps->sent[t] += rows;
	ps->batches_sent++;
	if (ps->o->kill_after && ps->batches_sent >= ps->o->kill_after)
		kill(getpid(), SIGKILL);
	return 0;
}

/* ---- rows ------------------------------------------------------------ */

/* Report row key of a frame, as sort.c's "sym" key part. */
static void frame_key(struct ch_buf *b, const struct sym_frame *sf)
{
	/* every byte (a label or path may hold a NUL) */
	ch_buf_add(b, sf->label, sf->label_len);
	ch_buf_add(b, "\x1f", 1);
	if (sf->func)
		ch_buf_add(b, sf->dso, sf->dso_len);
	ch_buf_add(b, "\x1f", 1);
}

/* JSON "module" of a frame, as sort_module(). */
static void frame_module(const struct profile *p, uint32_t id,
			 const struct sym_frame *sf, const char **s,
			 size_t *len)
{
	struct spulse_frame fr;
	struct spulse_module m;

	if (spulse_defs_frame(p->defs, id, &fr) == 0 &&
	    fr.kind == SPULSE_FRAME_MODULE &&
	    spulse_defs_module(p->defs, fr.module, &m) == 0) {
		*s = m.path;
		*len = m.path_len;
		return;
	}
	*s = sf->dso;
	*len = sf->dso_len;
}

static void folded_name(struct ch_buf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char ch = s[i] == ';' ? ':' : s[i] == '\n' ? ' ' : s[i];

		ch_buf_add(b, &ch, 1);
	}
}

/* Frames and stacks of the counted stacks, in id order, batched. */
static int push_defs(struct pusher *ps, struct profile *p, uint64_t *nstacks,
		     uint64_t *nframes)
{
	uint32_t nf = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	uint8_t *used = calloc(nf ? nf : 1, 1);
	uint32_t frames[SPULSE_MAX_DEPTH], s, f, batch = 0;
	struct ch_buf body = { 0 }, key = { 0 }, fold = { 0 };
	uint64_t rows = 0;
	int rc = 0;

	if (!used)
		return -ENOMEM;
	*nstacks = *nframes = 0;
	for (s = 0; !rc && s < p->nstacks; s++) {
		char **keys;
		int n, k, nk = 0, j;

		if (!p->stack_count[s])
			continue;
		n = profile_stack_frames(p, s, frames);
		if (n < 0) {
			snprintf(ps->c->err, sizeof(ps->c->err),
				 "stack %u: broken parent chain", s);
			rc = -EBADMSG;
			break;
		}
		keys = calloc((size_t)n + 1, sizeof(*keys));
		if (!keys) {
			rc = -ENOMEM;
			break;
		}
		rb_str(&body, ps->push_id, 32);
		rb_u64(&body, ps->push_key);
		rb_u32(&body, s);
		rb_u32(&body, batch);
		rb_u16(&body, (uint16_t)n);
		rb_len(&body, (uint64_t)n);
		for (k = 0; k < n; k++) {
			rb_u32(&body, frames[k]);
			if (frames[k] < nf)
				used[frames[k]] = 1;
		}
		/* distinct row keys (total counts a row once per stack) */
		for (k = 0; k < n; k++) {
			const struct sym_frame *sf = profile_frame(p, frames[k]);

			if (!sf) {
				rc = -ENOMEM;
				break;
			}
			key.n = 0;
			frame_key(&key, sf);
			for (j = 0; j < nk; j++)
				if (!strcmp(keys[j], key.p ? key.p : ""))
					break;
			if (j == nk) {
				keys[nk] = strdup(key.p ? key.p : "");
				if (!keys[nk]) {
					rc = -ENOMEM;
					break;
				}
				nk++;
			}
		}
		/* keys[] holds the key texts; modules in the same order */
		if (!rc) {
			rb_len(&body, (uint64_t)nk);
			for (j = 0; j < nk; j++)
				rb_cstr(&body, keys[j]);
			rb_len(&body, (uint64_t)nk);
			for (k = 0, j = 0; k < n && j < nk; k++) {
				const struct sym_frame *sf =
					profile_frame(p, frames[k]);
				const char *m;
				size_t ml;

				key.n = 0;
				frame_key(&key, sf);
				if (strcmp(keys[j], key.p))
					continue;
				frame_module(p, profile_real_frame(p, frames[k]),
					     sf, &m, &ml);
				rb_str(&body, m, ml);
				j++;
			}
			/* keys appear in first-occurrence order, so the
			 * walk above meets them in order */
			key.n = 0;
			if (n)
				frame_key(&key, profile_frame(p, frames[n - 1]));
			rb_str(&body, key.p ? key.p : "", n ? key.n : 0);
			fold.n = 0;
			for (k = 0; k < n; k++) {
				if (k)
					ch_buf_add(&fold, ";", 1);
				const struct sym_frame *x =
					profile_frame(p, frames[k]);

				folded_name(&fold, x->label, x->label_len);
			}
			rb_str(&body, fold.p ? fold.p : "", fold.n);
			rb_len(&body, (uint64_t)n);
			for (k = 0; k < n; k++) {
				const struct sym_frame *x =
					profile_frame(p, frames[k]);

				rb_str(&body, x->label, x->label_len);
			}
			rb_len(&body, (uint64_t)n);
			for (k = 0; k < n; k++)
				rb_u8(&body, profile_frame(p, frames[k])->kind);
		}
		for (j = 0; j < nk; j++)
			free(keys[j]);
		free(keys);
		rows++;
		(*nstacks)++;
		if (!rc && rows == ps->batch) {
			if (want_batch(ps, T_STACKS, batch, rows))
				rc = put_batch(ps, T_STACKS, batch, rows, &body);
			body.n = 0;
			rows = 0;
			batch++;
		}
	}
	if (!rc && rows && want_batch(ps, T_STACKS, batch, rows))
		rc = put_batch(ps, T_STACKS, batch, rows, &body);
	body.n = 0;
	rows = 0;
	batch = 0;
	for (f = 0; !rc && f < nf; f++) {
		const struct sym_frame *sf;
		struct spulse_frame fr;

		if (!used[f])
			continue;
		sf = profile_frame(p, f);
		if (!sf || spulse_defs_frame(p->defs, f, &fr) < 0) {
			rc = -ENOMEM;
			break;
		}
		rb_str(&body, ps->push_id, 32);
		rb_u32(&body, f);
		rb_u32(&body, batch);
		rb_u8(&body, sf->kind);
		rb_cstr(&body, sf->func ? sf->func : "");
		rb_str(&body, sf->label, sf->label_len);
		rb_str(&body, sf->dso, sf->dso_len);
		rb_cstr(&body, sf->file ? sf->file : "");
		rb_u32(&body, sf->line);
		rb_u64(&body, fr.addr);
		rb_cstr(&body, sf->build_id ? sf->build_id : "");
		rows++;
		(*nframes)++;
		if (rows == ps->batch) {
			if (want_batch(ps, T_FRAMES, batch, rows))
				rc = put_batch(ps, T_FRAMES, batch, rows, &body);
			body.n = 0;
			rows = 0;
			batch++;
		}
	}
	if (!rc && rows && want_batch(ps, T_FRAMES, batch, rows))
		rc = put_batch(ps, T_FRAMES, batch, rows, &body);
	ch_buf_free(&body);
	ch_buf_free(&key);
	ch_buf_free(&fold);
	free(used);
	return rc;
}

/* Host and recording of each source; thread -> source. */
struct sources {
	uint32_t n;
	char **host, **rec;		/* per source */
	size_t *host_len;		/* host bytes (a NUL does not cut) */
	uint32_t *of_thread;		/* thread id -> source */
	uint32_t nthreads;
};

static void hex16(const uint8_t *id, char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

static void sources_free(struct sources *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		free(s->host[i]);
		free(s->rec[i]);
	}
	free(s->host);
	free(s->host_len);
	free(s->rec);
	free(s->of_thread);
	memset(s, 0, sizeof(*s));
}

/* Recording rows (one per source) and the source table. */
static int push_recordings(struct pusher *ps, struct profile *p,
			   struct sources *src)
{
	struct ch_buf body = { 0 };
	uint32_t i, n = 1;
	int rc;

#ifdef CH_HAVE_IDENTITY
	n = spulse_defs_identity_count(p->defs);
	if (!n)
		n = 1;
#endif
	src->n = n;
	src->host = calloc(n, sizeof(char *));
	src->rec = calloc(n, sizeof(char *));
	src->nthreads = spulse_defs_count(p->defs, SPULSE_TAG_THREAD);
	src->of_thread = calloc(src->nthreads ? src->nthreads : 1,
				sizeof(uint32_t));
	src->host_len = calloc(n, sizeof(size_t));
	if (!src->host || !src->host_len || !src->rec || !src->of_thread)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *host = ps->o->host, *mid = "", *bid = "", *kr = "";
		size_t hl = strlen(host), ml = 0, bl = 0, kl = 0;
		char rec[33];
		uint64_t start = p->info->start_us;

		memcpy(rec, ps->push_id, 33);
#ifdef CH_HAVE_IDENTITY
		struct spulse_identity id;

		if (spulse_defs_identity(p->defs, i, &id) == 0) {
			host = id.host;
			mid = id.machine_id;
			bid = id.boot_id;
			kr = id.kernel;
			/* every byte (issue 25) */
			hl = id.host_len;
			ml = id.machine_id_len;
			bl = id.boot_id_len;
			kl = id.kernel_len;
			start = id.start_us;
			hex16(id.recording_id, rec);
		}
#else
		(void)hex16;
#endif
		src->host[i] = malloc(hl + 1);
		if (src->host[i]) {
			memcpy(src->host[i], host, hl);
			src->host[i][hl] = 0;
		}
		src->host_len[i] = hl;
		src->rec[i] = strdup(rec);
		if (!src->host[i] || !src->rec[i])
			return -ENOMEM;
		rb_str(&body, ps->push_id, 32);
		rb_u32(&body, i);
		rb_u32(&body, 0);
		rb_cstr(&body, rec);
		rb_str(&body, host, hl);
		rb_str(&body, mid, ml ? ml : strlen(mid));
		rb_str(&body, bid, bl ? bl : strlen(bid));
		rb_str(&body, kr, kl ? kl : strlen(kr));
		rb_u64(&body, start);
		rb_u32(&body, (uint32_t)ps->batch);
	}
	for (i = 0; i < src->nthreads; i++) {
		uint32_t s = 0;
#ifdef CH_HAVE_IDENTITY
		s = spulse_defs_thread_source(p->defs, i);
		if (s == SPULSE_NONE || s >= n)
			s = 0;
#endif
		src->of_thread[i] = s;
	}
	rc = 0;
	if (want_batch(ps, T_RECORDINGS, 0, n))
		rc = put_batch(ps, T_RECORDINGS, 0, n, &body);
	ch_buf_free(&body);
	return rc;
}

/* Second pass over the samples, in stream order, in batches. */
static int push_samples(struct pusher *ps, struct profile *p,
			const struct sources *src, uint64_t total)
{
	struct spulse_sample buf[1024];
	struct ch_buf body = { 0 };
	uint64_t base = p->info->start_us * 1000, rows = 0, seen = 0;
	uint32_t batch = 0;
	bool want;
	int n, i, rc;

	rc = spulse_replay_rewind(p->replay);
	if (rc < 0)
		return rc;
	want = want_batch(ps, T_SAMPLES, 0, total < ps->batch ?
			  total : ps->batch);
	while (!rc && (n = spulse_replay_next_samples(p->replay, buf,
						       1024)) > 0) {
		for (i = 0; !rc && i < n; i++) {
			const struct spulse_sample *s = &buf[i];
			struct spulse_thread th = { 0 };
			uint32_t so = 0;
			uint64_t t;

			if (s->stack >= p->nstacks)
				continue;	/* as profile_count() */
			seen++;
			if (want) {
				if (spulse_defs_thread(p->defs, s->thread,
						       &th) < 0)
					th.comm = "";
				if (s->thread < src->nthreads)
					so = src->of_thread[s->thread];
				t = base + (uint64_t)s->time_ns;
				rb_u16(&body, (uint16_t)(t / 1000000000ULL /
							 86400));
				rb_str(&body, src->host[so],
				       src->host_len[so]);
				rb_u64(&body, t);
				rb_u64(&body, ps->push_key);
				rb_u32(&body, batch);
				rb_cstr(&body, src->rec[so]);
				rb_u32(&body, th.pid);
				rb_u32(&body, th.tid);
				rb_str(&body, th.comm, th.comm_len);
				rb_u32(&body, s->cpu);
				rb_u32(&body, s->stack);
			}
			rows++;
			if (rows == ps->batch) {
				if (want)
					rc = put_batch(ps, T_SAMPLES, batch,
						       rows, &body);
				body.n = 0;
				rows = 0;
				batch++;
				want = want_batch(ps, T_SAMPLES, batch,
					total - seen < ps->batch ?
					total - seen : ps->batch);
			}
		}
	}
	if (!rc && n < 0) {
		snprintf(ps->c->err, sizeof(ps->c->err), "reading samples: %s",
			 strerror(-n));
		rc = n;
	}
	if (!rc && rows && want)
		rc = put_batch(ps, T_SAMPLES, batch, rows, &body);
	if (!rc && seen != total) {
		snprintf(ps->c->err, sizeof(ps->c->err), "the spool changed "
			 "while pushing (%llu samples, then %llu)",
			 (unsigned long long)total, (unsigned long long)seen);
		rc = -EBADMSG;
	}
	ch_buf_free(&body);
	return rc;
}

static int push_file(struct ch_conn *c, const struct push_opts *o,
		     struct profile *p, const char *file)
{
	struct pusher ps = { .c = c, .o = o, .batch = o->batch };
	struct sources src = { 0 };
	struct ch_buf q = { 0 };
	uint64_t done = 0, nstacks = 0, nframes = 0;
	int rc, t;

	rc = profile_open(p, file);
	if (rc == EXIT_OK)
		rc = profile_count(p);
	if (rc != EXIT_OK) {
		fprintf(stderr, "%s: not pushed (nothing was sent)\n", file);
		return rc;
	}
	rc = push_id_of(file, p->info->start_us, ps.push_id);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", file, strerror(-rc));
		return EXIT_INVALID;
	}
	ps.push_key = strtoull(strndupa(ps.push_id, 16), NULL, 16);
	snprintf(ps.where, sizeof(ps.where), "push_id = '%s'", ps.push_id);
	snprintf(ps.where_key, sizeof(ps.where_key), "push_key = %llu",
		 (unsigned long long)ps.push_key);
	ch_buf_printf(&q, "SELECT count() FROM spulse_pushes WHERE push_id = "
		      "'%s'", ps.push_id);
	rc = ch_query_u64(c, q.p, &done);
	ch_buf_free(&q);
	if (!rc && done) {
		printf("%s: already pushed (push %s), nothing sent\n", file,
		       ps.push_id);
		return EXIT_OK;
	}
	for (t = 0; !rc && t < T_N; t++)
		rc = load_have(&ps, t);
	if (!rc && ps.nhave[T_RECORDINGS]) {
		/* resuming: batches are numbered by the first push's size */
		uint64_t was = 0;

		ch_buf_printf(&q, "SELECT any(batch_rows) FROM "
			      "spulse_recordings WHERE push_id = '%s'",
			      ps.push_id);
		rc = ch_query_u64(c, q.p, &was);
		ch_buf_free(&q);
		if (!rc && was && was != ps.batch) {
			fprintf(stderr, "%s: resuming with the interrupted "
				"push's --batch %llu\n", file,
				(unsigned long long)was);
			ps.batch = was;
		}
	}
	if (!rc)
		rc = push_recordings(&ps, p, &src);
	if (!rc)
		rc = push_defs(&ps, p, &nstacks, &nframes);
	if (!rc)
		rc = push_samples(&ps, p, &src, p->total);
	if (!rc) {
		struct ch_buf body = { 0 };

		rb_str(&body, ps.push_id, 32);
		rb_u64(&body, ps.push_key);
		rb_cstr(&body, file);
		rb_u64(&body, p->total);
		rb_u64(&body, nstacks);
		rb_u64(&body, nframes);
		rb_u32(&body, (uint32_t)((p->total + ps.batch - 1) / ps.batch));
		rb_u32(&body, (uint32_t)time(NULL));
		rc = body.oom ? -ENOMEM :
			ch_query(c, "INSERT INTO spulse_pushes (push_id, push_key, "
				 "file, "
				 "samples, stacks, frames, batches, pushed) "
				 "FORMAT RowBinary", body.p, body.n, NULL, true);
		ch_buf_free(&body);
	}
	if (rc) {
		fprintf(stderr, "%s: push %s stopped: %s%s\n", file, ps.push_id,
			rc == -ENOMEM ? "out of memory" : c->err,
			rc == -EIO ? " (run the same push again to resume)"
				   : "");
	} else {
		printf("%s: pushed %llu samples, %llu stacks, %llu frames "
		       "(push %s", file, (unsigned long long)p->total,
		       (unsigned long long)nstacks,
		       (unsigned long long)nframes, ps.push_id);
		if (ps.skipped[T_SAMPLES] || ps.skipped[T_STACKS] ||
		    ps.skipped[T_FRAMES])
			printf("; resumed: %llu samples were already there",
			       (unsigned long long)ps.skipped[T_SAMPLES]);
		if (ps.repaired)
			printf("; %llu partial batches replaced",
			       (unsigned long long)ps.repaired);
		printf(")\n");
	}
	sources_free(&src);
	for (t = 0; t < T_N; t++)
		free(ps.have[t]);
	return rc ? EXIT_INVALID : EXIT_OK;
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "clickhouse", required_argument, NULL, 'C' },
		{ "database", required_argument, NULL, 'D' },
		{ "batch", required_argument, NULL, 'B' },
		{ "host", required_argument, NULL, 'H' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct push_opts o = { .host = "unknown", .batch = 100000 };
	const char *kallsyms = NULL, *symfs = NULL, *env;
	struct ch_conn c;
	int ch, rc = EXIT_OK, i;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C': o.url = optarg; break;
		case 'D': o.db = optarg; break;
		case 'H': o.host = optarg; break;
		case 'k': kallsyms = optarg; break;
		case 'S': symfs = optarg; break;
		case 'B':
			if (!cli_parse_u64("--batch", optarg, &o.batch))
				return EXIT_USAGE;
			if (!o.batch || o.batch > 1000000)
				return cli_usage_error("push", "--batch must be "
						       "1..1000000");
			break;
		case 'h': fputs(push_help, stdout); return EXIT_OK;
		default: return cli_usage_error("push", "bad option");
		}
	}
	if (!o.url)
		return cli_usage_error("push", "--clickhouse URL is required");
	if (optind >= argc)
		return cli_usage_error("push", "expected at least one FILE");
	if (!*o.host || strlen(o.host) > 255)
		return cli_usage_error("push", "--host must be 1..255 bytes");
	env = getenv("SPULSE_PUSH_KILL_AFTER_BATCHES");
	if (env)
		o.kill_after = strtol(env, NULL, 10);
	if (ch_open(&c, o.url, o.db) < 0) {
		fprintf(stderr, "spulse push: %s\n", c.err);
		return EXIT_USAGE;
	}
	if (ch_schema_create(&c) < 0) {
		fprintf(stderr, "spulse push: cannot create the tables: %s\n",
			c.err);
		ch_close(&c);
		return EXIT_INVALID;
	}
	for (i = optind; i < argc; i++) {
		struct profile p = { .kallsyms = kallsyms, .symfs = symfs };
		int r = push_file(&c, &o, &p, argv[i]);

		profile_close(&p);
		if (r != EXIT_OK)
			rc = r;
	}
	ch_close(&c);
	return rc;
}
