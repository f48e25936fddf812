/* SPDX-License-Identifier: MIT */
/*
 * `spulse sql` store: open a database, load one spool per transaction
 * (docs/FLEET.md). The spool is read with a Replay (validated on
 * open, bounded memory), its frames symbolized as `spulse report` does
 * (profile.c: the same symbolizer, kallsyms sidecar and options), every
 * definition inserted once, samples and intervals streamed through
 * prepared statements.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "analysis/util.h"
#include "analysis/profile.h"
#include "sql_db.h"
#include "sql_schema.h"
#include "sql_sha256.h"
#include "sym/strtab.h"

static void db_error(sqlite3 *db, const char *what)
{
	fprintf(stderr, "spulse sql: %s: %s\n", what, sqlite3_errmsg(db));
}

/* Is the last error of @db "locked by another connection"? */
static bool db_busy(sqlite3 *db)
{
	int rc = sqlite3_errcode(db) & 0xff;

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Run @sql; an error is printed unless it is SQLITE_BUSY (retried). */
static int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (!db_busy(db))
			fprintf(stderr, "spulse sql: %s\n",
				msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * Concurrent loads wait for each other through the busy timeout, but a
 * few paths (a journal mode change, WAL recovery by another process)
 * return SQLITE_BUSY at once: those are retried here for the same time.
 */
#define BUSY_TIMEOUT_MS	600000

static bool busy_retry(sqlite3 *db, int *waited_ms)
{
	if (!db_busy(db) || *waited_ms >= BUSY_TIMEOUT_MS)
		return false;
	usleep(20000);
	*waited_ms += 20;
	return true;
}

static int user_version(sqlite3 *db, int *v)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL))
		return -1;
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Does the database hold any table yet? */
static int table_count(sqlite3 *db, int *n)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema",
			       -1, &st, NULL))
		return -1;
	rc = sqlite3_step(st);
	*n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Schema check and creation; 0, -1 (printed) or -2 (busy: retry). */
static int db_setup(sqlite3 *db, const char *path);

int sql_db_open(const char *path, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc, waited = 0;

	*out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		fprintf(stderr, "spulse sql: %s: %s\n", path,
			db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	/* concurrent loads into one database wait for each other */
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	while ((rc = db_setup(db, path)) == -2)
		if (!busy_retry(db, &waited))
			break;
	if (rc < 0) {
		if (rc == -2)
			db_error(db, path);
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

static int db_setup(sqlite3 *db, const char *path)
{
	char ver[64];
	int v, n;

	/* not a database (or another error) shows here first */
	if (table_count(db, &n) < 0 || user_version(db, &v) < 0) {
		if (db_busy(db))
			return -2;
		fprintf(stderr, "spulse sql: %s: %s\n", path,
			sqlite3_errmsg(db));
		return -1;
	}
	if (n && v != SQL_SCHEMA_VERSION) {
		fprintf(stderr, "spulse sql: %s: not a spulse database of "
			"schema version %d (user_version %d, %d objects)\n",
			path, SQL_SCHEMA_VERSION, v, n);
		return -1;
	}
	if (exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		 "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;") < 0)
		return db_busy(db) ? -2 : -1;
	if (n)
		return 0;
	snprintf(ver, sizeof(ver), "PRAGMA user_version=%d;",
		 SQL_SCHEMA_VERSION);
	if (exec(db, "BEGIN IMMEDIATE") < 0)
		return db_busy(db) ? -2 : -1;
	/* a concurrent creator may have won the race */
	if (table_count(db, &n) < 0 ||
	    (!n && (exec(db, sql_schema_tables) < 0 ||
		    exec(db, sql_schema_views) < 0 || exec(db, ver) < 0)) ||
	    exec(db, "COMMIT") < 0) {
		bool busy = db_busy(db);

		if (!busy)
			db_error(db, path);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return busy ? -2 : -1;
	}
	return 0;
}

/* ---- loading one spool ------------------------------------------------ */

/* One recording (source) of the spool being loaded. */
struct src {
	bool has_id;
	char rid[33];		/* recording_id hex, has_id only */
	const char *host, *machine_id, *boot_id, *kernel;
	int lens[4];		/* of host .. kernel; -1 = NUL-terminated */
	uint64_t start_us;
	int64_t recording;	/* row id once inserted; 0 = already present */
	uint32_t alias;		/* 1 + an earlier source of the same id, or 0 */
};

enum {
	ST_SPOOL, ST_RECORDING, ST_THREAD, ST_MOD_GET, ST_MOD_ADD,
	ST_FN_GET, ST_FN_ADD, ST_FRAME, ST_STACK, ST_STACK_FN, ST_SAMPLE,
	ST_OFFCPU, ST_REC_BY_ID, ST_REC_BY_HASH, ST_COUNT, ST_NSTMT
};

static const char *const stmt_sql[ST_NSTMT] = {
	[ST_SPOOL] = "INSERT INTO spools(file, bytes, content_sha256, "
		"start_us, interval_us, recovered, loaded_us) "
		"VALUES (?,?,?,?,?,?,?)",
	[ST_RECORDING] = "INSERT INTO recordings(spool, source, recording_id, "
		"content_sha256, host, machine_id, boot_id, kernel, start_us, "
		"interval_us, file) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	[ST_THREAD] = "INSERT INTO threads(spool, thread, recording, pid, "
		"tid, comm) VALUES (?,?,?,?,?,?)",
	[ST_MOD_GET] = "SELECT module FROM modules WHERE path = ? AND "
		"build_id = ?",
	[ST_MOD_ADD] = "INSERT INTO modules(path, build_id) VALUES (?,?)",
	[ST_FN_GET] = "SELECT function FROM functions WHERE name = ? AND "
		"key_module = ?",
	[ST_FN_ADD] = "INSERT INTO functions(name, module, key_module) "
		"VALUES (?,?,?)",
	[ST_FRAME] = "INSERT INTO frames(spool, frame, kind, address, module, "
		"function, symbol, symbol_offset, file, line) "
		"VALUES (?,?,?,?,?,?,?,?,?,?)",
	[ST_STACK] = "INSERT INTO stacks(spool, stack, parent, frame, depth) "
		"VALUES (?,?,?,?,?)",
	[ST_STACK_FN] = "INSERT INTO stack_functions(spool, stack, function, "
		"self) VALUES (?,?,?,?)",
	[ST_SAMPLE] = "INSERT INTO samples(spool, recording, time_ns, cpu, "
		"thread, stack) VALUES (?,?,?,?,?,?)",
	[ST_OFFCPU] = "INSERT INTO offcpu(spool, recording, time_ns, thread, "
		"stack, state, cpu_out, cpu_in, blocked_ns, runq_ns, "
		"waker_thread, waker_stack, waker_cpu) "
		"VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_REC_BY_ID] = "SELECT recording FROM recordings WHERE "
		"recording_id = ?",
	[ST_COUNT] = "INSERT INTO sample_counts(spool, thread, stack, "
		"recording, samples, first_ns, last_ns) VALUES (?,?,?,?,?,?,?)",
	[ST_REC_BY_HASH] = "SELECT recording FROM recordings WHERE "
		"recording_id IS NULL AND content_sha256 = ?",
};

struct loader {
	sqlite3 *db;
	sqlite3_stmt *st[ST_NSTMT];
	struct profile p;
	const char *file;
	const char *host;	/* sql_load_opts.host */
	struct sql_load_result *res;
	int64_t spool;
	struct src *srcs;
	uint32_t nsrcs;
	char sha[65];		/* content hash when no identity */
	bool have_sha;
	uint32_t nthreads, nframes, nstacks, nmodules;
	int64_t *thread_rec;	/* thread id -> recording row, 0 = skip */
	int64_t *module_row;	/* module id -> modules row */
	uint32_t *frame_fn;	/* frame id -> local function index */
	int64_t *fn_row;	/* local function index -> functions row */
	uint32_t nfn;
	struct strtab fn_keys;	/* "name\x1fkey_module" -> local index */
	uint8_t *leaf;		/* stack id -> used as a leaf */
	struct count *counts;	/* per (thread, stack): open addressing */
	size_t ncounts, capcounts;
};

/* Samples of one (thread, stack) of the spool, for sample_counts. */
struct count {
	uint64_t key;		/* thread << 32 | stack, + 1; 0 = empty slot */
	uint64_t samples;
	int64_t first_ns, last_ns;
};

static size_t count_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int count_add(struct loader *l, uint32_t thread, uint32_t stack,
		     int64_t t)
{
	uint64_t key = ((uint64_t)thread << 32 | stack) + 1;
	struct count *c;
	size_t h;

	if (l->ncounts * 2 >= l->capcounts) {
		size_t ncap = l->capcounts ? l->capcounts * 2 : 4096, i;
		struct count *n = calloc(ncap, sizeof(*n));

		if (!n)
			return -1;
		for (i = 0; i < l->capcounts; i++) {
			if (!l->counts[i].key)
				continue;
			for (h = count_slot(l->counts[i].key, ncap); n[h].key;
			     h = (h + 1) & (ncap - 1))
				;
			n[h] = l->counts[i];
		}
		free(l->counts);
		l->counts = n;
		l->capcounts = ncap;
	}
	for (h = count_slot(key, l->capcounts);;
	     h = (h + 1) & (l->capcounts - 1)) {
		c = &l->counts[h];
		if (!c->key) {
			*c = (struct count){ key, 1, t, t };
			l->ncounts++;
			return 0;
		}
		if (c->key == key) {
			c->samples++;
			if (t < c->first_ns)
				c->first_ns = t;
			if (t > c->last_ns)
				c->last_ns = t;
			return 0;
		}
	}
}

static int step(struct loader *l, int s, const char *what);

static int insert_counts(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_COUNT];
	size_t i;

	for (i = 0; i < l->capcounts; i++) {
		const struct count *c = &l->counts[i];
		uint32_t thread = (uint32_t)((c->key - 1) >> 32);

		if (!c->key)
			continue;
		sqlite3_bind_int64(st, 1, l->spool);
		sqlite3_bind_int64(st, 2, thread);
		sqlite3_bind_int64(st, 3, (uint32_t)(c->key - 1));
		sqlite3_bind_int64(st, 4, l->thread_rec[thread]);
		sqlite3_bind_int64(st, 5, (int64_t)c->samples);
		sqlite3_bind_int64(st, 6, c->first_ns);
		sqlite3_bind_int64(st, 7, c->last_ns);
		if (step(l, ST_COUNT, "inserting sample counts") < 0)
			return -1;
		sqlite3_reset(st);
		l->res->rows++;
	}
	return 0;
}

/* Step a bound INSERT/SELECT; SQLITE_DONE or SQLITE_ROW expected. */
static int step(struct loader *l, int s, const char *what)
{
	int rc = sqlite3_step(l->st[s]);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		db_error(l->db, what);
		sqlite3_reset(l->st[s]);
		return -1;
	}
	return rc;
}

static void bind_u32_or_null(sqlite3_stmt *st, int i, uint32_t v)
{
	if (v == SPULSE_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* The spool's recordings: its identities, or one for the whole spool. */
static int read_sources(struct loader *l)
{
	uint32_t n = 0, i;

#ifdef SQL_HAVE_IDENTITY
	n = spulse_defs_identity_count(l->p.defs);
#endif
	l->nsrcs = n ? n : 1;
	l->srcs = calloc(l->nsrcs, sizeof(*l->srcs));
	if (!l->srcs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
#ifdef SQL_HAVE_IDENTITY
		struct spulse_identity id;
		struct src *s = &l->srcs[i];

		if (spulse_defs_identity(l->p.defs, i, &id) < 0)
			return -EBADMSG;
		s->has_id = true;
		hex(s->rid, id.recording_id, sizeof(id.recording_id));
		s->host = id.host;
		s->machine_id = id.machine_id;
		s->boot_id = id.boot_id;
		s->kernel = id.kernel;
		/* every byte (a NUL inside does not cut, issue 25) */
		s->lens[0] = (int)id.host_len;
		s->lens[1] = (int)id.machine_id_len;
		s->lens[2] = (int)id.boot_id_len;
		s->lens[3] = (int)id.kernel_len;
		s->start_us = id.start_us;
#endif
	}
	if (!n) {
		l->srcs[0].host = l->host ? l->host : "unknown";
		l->srcs[0].lens[0] = l->srcs[0].lens[1] = -1;
		l->srcs[0].lens[2] = l->srcs[0].lens[3] = -1;
		l->srcs[0].start_us = l->p.info->start_us;
	}
	return 0;
}

static uint32_t thread_source(const struct loader *l, uint32_t thread)
{
	uint32_t s = 0;

#ifdef SQL_HAVE_IDENTITY
	s = spulse_defs_thread_source(l->p.defs, thread);
#else
	(void)thread;
#endif
	return s < l->nsrcs ? s : 0;
}

/* Mark sources already in the database (recording = 0); count the rest. */
static int find_present(struct loader *l, uint32_t *fresh)
{
	uint32_t i;

	*fresh = 0;
	for (i = 0; i < l->nsrcs; i++) {
		struct src *s = &l->srcs[i];
		int q = s->has_id ? ST_REC_BY_ID : ST_REC_BY_HASH;
		uint32_t j;
		int rc;

		/* a spool may name one recording twice (merged with itself):
		 * its threads all go to the first */
		for (j = 0; s->has_id && j < i; j++)
			if (!strcmp(l->srcs[j].rid, s->rid))
				break;
		if (s->has_id && j < i) {
			s->alias = j + 1;
			s->recording = l->srcs[j].recording;
			continue;
		}
		sqlite3_bind_text(l->st[q], 1, s->has_id ? s->rid : l->sha, -1,
				  SQLITE_STATIC);
		rc = step(l, q, "looking up a recording");
		sqlite3_reset(l->st[q]);
		if (rc < 0)
			return -1;
		s->recording = rc == SQLITE_ROW ? 0 : -1;
		if (rc == SQLITE_ROW)
			l->res->recordings_present++;
		else
			(*fresh)++;
	}
	return 0;
}

static int insert_spool(struct loader *l, uint64_t bytes)
{
	sqlite3_stmt *st = l->st[ST_SPOOL];
	struct timespec ts;
	uint32_t i;

	clock_gettime(CLOCK_REALTIME, &ts);
	sqlite3_bind_text(st, 1, l->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)bytes);
	if (l->have_sha)
		sqlite3_bind_text(st, 3, l->sha, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, (int64_t)l->p.info->start_us);
	sqlite3_bind_int64(st, 5, (int64_t)l->p.info->interval_us);
	sqlite3_bind_int(st, 6, l->p.info->recovered_from_truncated_tail);
	sqlite3_bind_int64(st, 7, (int64_t)ts.tv_sec * 1000000 +
			   ts.tv_nsec / 1000);
	if (step(l, ST_SPOOL, "inserting the spool") < 0)
		return -1;
	sqlite3_reset(st);
	l->spool = sqlite3_last_insert_rowid(l->db);
	l->res->rows++;
	st = l->st[ST_RECORDING];
	for (i = 0; i < l->nsrcs; i++) {
		struct src *s = &l->srcs[i];

		if (s->alias) {
			s->recording = l->srcs[s->alias - 1].recording;
			continue;
		}
		if (!s->recording)
			continue;
		sqlite3_bind_int64(st, 1, l->spool);
		if (s->has_id) {
			sqlite3_bind_int64(st, 2, i);
			sqlite3_bind_text(st, 3, s->rid, -1, SQLITE_STATIC);
			sqlite3_bind_null(st, 4);
		} else {
			sqlite3_bind_null(st, 2);
			sqlite3_bind_null(st, 3);
			sqlite3_bind_text(st, 4, l->sha, -1, SQLITE_STATIC);
		}
		sqlite3_bind_text(st, 5, s->host, s->lens[0], SQLITE_STATIC);
		sqlite3_bind_text(st, 6, s->machine_id, s->lens[1],
				  SQLITE_STATIC);
		sqlite3_bind_text(st, 7, s->boot_id, s->lens[2], SQLITE_STATIC);
		sqlite3_bind_text(st, 8, s->kernel, s->lens[3], SQLITE_STATIC);
		sqlite3_bind_int64(st, 9, (int64_t)s->start_us);
		sqlite3_bind_int64(st, 10, (int64_t)l->p.info->interval_us);
		sqlite3_bind_text(st, 11, l->file, -1, SQLITE_STATIC);
		if (step(l, ST_RECORDING, "inserting a recording") < 0)
			return -1;
		sqlite3_reset(st);
		s->recording = sqlite3_last_insert_rowid(l->db);
		l->res->recordings_added++;
		l->res->rows++;
	}
	return 0;
}

/* Threads of the recordings being added (the others are skipped). */
static int insert_threads(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_THREAD];
	uint32_t i;

	l->thread_rec = calloc(l->nthreads ? l->nthreads : 1,
			       sizeof(*l->thread_rec));
	if (!l->thread_rec)
		return -1;
	for (i = 0; i < l->nthreads; i++) {
		struct spulse_thread t;
		int64_t rec = l->srcs[thread_source(l, i)].recording;

		if (!rec || spulse_defs_thread(l->p.defs, i, &t) < 0)
			continue;
		l->thread_rec[i] = rec;
		sqlite3_bind_int64(st, 1, l->spool);
		sqlite3_bind_int64(st, 2, i);
		sqlite3_bind_int64(st, 3, rec);
		sqlite3_bind_int64(st, 4, t.pid);
		sqlite3_bind_int64(st, 5, t.tid);
		sqlite3_bind_text(st, 6, t.comm, (int)t.comm_len,
				  SQLITE_STATIC);
		if (step(l, ST_THREAD, "inserting a thread") < 0)
			return -1;
		sqlite3_reset(st);
		l->res->threads++;
		l->res->rows++;
	}
	return 0;
}

/* Row of (path, build-id) in the shared modules table, added if new. */
static int64_t module_row(struct loader *l, const struct spulse_module *m)
{
	char bid[2 * 256 + 1];
	int64_t id = -1;
	int rc, s;

	hex(bid, m->build_id ? m->build_id : (const uint8_t *)"",
	    m->build_id_len > 256 ? 256 : m->build_id_len);
	for (s = ST_MOD_GET; s <= ST_MOD_ADD; s++) {
		sqlite3_bind_text(l->st[s], 1, m->path, (int)m->path_len,
				  SQLITE_STATIC);
		sqlite3_bind_text(l->st[s], 2, bid, -1, SQLITE_STATIC);
		rc = step(l, s, "module");
		if (rc == SQLITE_ROW)
			id = sqlite3_column_int64(l->st[s], 0);
		sqlite3_reset(l->st[s]);
		if (rc < 0)
			return -1;
		if (id >= 0)
			return id;
		if (s == ST_MOD_ADD) {
			l->res->modules++;
			l->res->rows++;
			return sqlite3_last_insert_rowid(l->db);
		}
	}
	return -1;
}

/*
 * Local index of the function of @sf (the key of `spulse report`'s rows:
 * display name, and the module when a symbol was found), its row looked
 * up or added once per spool.
 */
static int64_t function_index(struct loader *l, const struct sym_frame *sf,
			      const char *module, size_t module_len)
{
	/* every byte: a label or module path may hold a NUL */
	const char *key_mod = sf->func ? sf->dso : "";
	size_t nl = sf->label_len, kl = sf->func ? sf->dso_len : 0;
	char *key = malloc(nl + kl + 2);
	int64_t idx, row = -1;
	int rc, s;

	if (!key)
		return -1;
	memcpy(key, sf->label, nl);
	key[nl] = 0x1f;
	memcpy(key + nl + 1, key_mod, kl + 1);
	idx = strtab_intern_n(&l->fn_keys, key, nl + 1 + kl);
	free(key);
	if (idx < 0)
		return -1;
	if ((uint32_t)idx < l->nfn)
		return idx;
	/* a new key: its index is l->nfn */
	if (l->nfn % 1024 == 0) {
		int64_t *n = realloc(l->fn_row, (l->nfn + 1024) * sizeof(*n));

		if (!n)
			return -1;
		l->fn_row = n;
	}
	for (s = ST_FN_GET; s <= ST_FN_ADD; s++) {
		sqlite3_stmt *st = l->st[s];

		sqlite3_bind_text(st, 1, sf->label, (int)nl, SQLITE_STATIC);
		if (s == ST_FN_GET) {
			sqlite3_bind_text(st, 2, key_mod, (int)kl, SQLITE_STATIC);
		} else {
			sqlite3_bind_text(st, 2, module, (int)module_len,
					  SQLITE_STATIC);
			sqlite3_bind_text(st, 3, key_mod, -1, SQLITE_STATIC);
		}
		rc = step(l, s, "function");
		if (rc == SQLITE_ROW)
			row = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		if (rc < 0)
			return -1;
		if (row >= 0)
			break;
		if (s == ST_FN_ADD) {
			row = sqlite3_last_insert_rowid(l->db);
			l->res->functions++;
			l->res->rows++;
		}
	}
	l->fn_row[l->nfn] = row;
	return l->nfn++;
}

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case SPULSE_FRAME_MODULE: return "module";
	case SPULSE_FRAME_USER: return "user";
	case SPULSE_FRAME_KERNEL: return "kernel";
	case SPULSE_FRAME_TRUNCATED: return "truncated";
	}
	return "?";
}

static int insert_frames(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_FRAME];
	uint32_t i;

	l->module_row = calloc(l->nmodules ? l->nmodules : 1,
			       sizeof(*l->module_row));
	l->frame_fn = calloc(l->nframes ? l->nframes : 1,
			     sizeof(*l->frame_fn));
	if (!l->module_row || !l->frame_fn)
		return -1;
	for (i = 0; i < l->nmodules; i++) {
		struct spulse_module m;

		if (spulse_defs_module(l->p.defs, i, &m) < 0)
			return -1;
		l->module_row[i] = module_row(l, &m);
		if (l->module_row[i] < 0)
			return -1;
	}
	for (i = 0; i < l->nframes; i++) {
		const struct sym_frame *sf = symbolizer_frame(l->p.sym, i);
		struct spulse_frame fr;
		struct spulse_module m;
		const char *mod;
		size_t mlen;
		int64_t fi;

		if (!sf || spulse_defs_frame(l->p.defs, i, &fr) < 0) {
			fprintf(stderr, "spulse sql: %s: symbolizing frame "
				"%u failed\n", l->file, i);
			return -1;
		}
		/* the row's module as report --json prints it */
		if (fr.kind == SPULSE_FRAME_MODULE &&
		    spulse_defs_module(l->p.defs, fr.module, &m) == 0) {
			mod = m.path;
			mlen = m.path_len;
		} else {
			mod = sf->dso;
			mlen = sf->dso_len;
		}
		fi = function_index(l, sf, mod, mlen);
		if (fi < 0)
			return -1;
		l->frame_fn[i] = (uint32_t)fi;
		sqlite3_bind_int64(st, 1, l->spool);
		sqlite3_bind_int64(st, 2, i);
		sqlite3_bind_text(st, 3, kind_name(fr.kind), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)fr.addr);
		if (fr.kind == SPULSE_FRAME_MODULE && fr.module < l->nmodules)
			sqlite3_bind_int64(st, 5, l->module_row[fr.module]);
		else
			sqlite3_bind_null(st, 5);
		sqlite3_bind_int64(st, 6, l->fn_row[fi]);
		if (sf->func) {
			sqlite3_bind_text(st, 7, sf->func, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 8, (int64_t)sf->func_off);
		} else {
			sqlite3_bind_null(st, 7);
			sqlite3_bind_null(st, 8);
		}
		if (sf->file && sf->line) {
			sqlite3_bind_text(st, 9, sf->file, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 10, sf->line);
		} else {
			sqlite3_bind_null(st, 9);
			sqlite3_bind_null(st, 10);
		}
		if (step(l, ST_FRAME, "inserting a frame") < 0)
			return -1;
		sqlite3_reset(st);
		l->res->frames++;
		l->res->rows++;
	}
	return 0;
}

static int insert_stacks(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_STACK];
	uint32_t i;

	for (i = 0; i < l->nstacks; i++) {
		struct spulse_stack s;

		if (spulse_defs_stack(l->p.defs, i, &s) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, l->spool);
		sqlite3_bind_int64(st, 2, i);
		bind_u32_or_null(st, 3, s.parent);
		sqlite3_bind_int64(st, 4, s.frame);
		sqlite3_bind_int64(st, 5, s.depth);
		if (step(l, ST_STACK, "inserting a stack node") < 0)
			return -1;
		sqlite3_reset(st);
		l->res->stacks++;
		l->res->rows++;
	}
	return 0;
}

/* Samples per multi-row INSERT (6 parameters each). */
#define SAMPLE_BATCH	128

/* "INSERT INTO samples(...) VALUES (?,?,?,?,?,?),... x @rows". */
static sqlite3_stmt *prepare_sample_batch(sqlite3 *db, int rows)
{
	static const char head[] = "INSERT INTO samples(spool, recording, "
		"time_ns, cpu, thread, stack) VALUES ";
	size_t len = sizeof(head) + (size_t)rows * 16;
	char *sql = malloc(len), *p;
	sqlite3_stmt *st = NULL;
	int i;

	if (!sql)
		return NULL;
	p = sql + sprintf(sql, "%s", head);
	for (i = 0; i < rows; i++)
		p += sprintf(p, "%s(?,?,?,?,?,?)", i ? "," : "");
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		st = NULL;
	free(sql);
	return st;
}

/* Bind sample @s as row @row (0-based) of @st. */
static void bind_sample(struct loader *l, sqlite3_stmt *st, int row,
			const struct spulse_sample *s, int64_t base)
{
	int k = row * 6;

	sqlite3_bind_int64(st, k + 1, l->spool);
	sqlite3_bind_int64(st, k + 2, l->thread_rec[s->thread]);
	sqlite3_bind_int64(st, k + 3, base + s->time_ns);
	bind_u32_or_null(st, k + 4, s->cpu);
	sqlite3_bind_int64(st, k + 5, s->thread);
	sqlite3_bind_int64(st, k + 6, s->stack);
}

static int step_stmt(struct loader *l, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_error(l->db, "inserting samples");
		return -1;
	}
	return 0;
}

/*
 * Samples of the recordings being added, SAMPLE_BATCH rows per statement
 * (the rest one by one); each counted into sample_counts on the way.
 */
static int insert_samples(struct loader *l)
{
	static struct spulse_sample buf[4096];
	struct spulse_sample batch[SAMPLE_BATCH];
	sqlite3_stmt *one = l->st[ST_SAMPLE];
	sqlite3_stmt *many = prepare_sample_batch(l->db, SAMPLE_BATCH);
	int64_t base = (int64_t)l->p.info->start_us * 1000;
	int n, i, nb = 0, rc = -1;

	if (!many) {
		db_error(l->db, "preparing the sample insert");
		return -1;
	}
	while ((n = spulse_replay_next_samples(l->p.replay, buf, 4096)) > 0) {
		for (i = 0; i < n; i++) {
			const struct spulse_sample *s = &buf[i];

			if (s->thread >= l->nthreads || s->stack >= l->nstacks ||
			    !l->thread_rec[s->thread])
				continue;
			l->leaf[s->stack] = 1;
			if (count_add(l, s->thread, s->stack,
				      base + s->time_ns) < 0)
				goto out;
			batch[nb++] = *s;
			if (nb < SAMPLE_BATCH)
				continue;
			for (nb = 0; nb < SAMPLE_BATCH; nb++)
				bind_sample(l, many, nb, &batch[nb], base);
			nb = 0;
			if (step_stmt(l, many) < 0)
				goto out;
			l->res->samples += SAMPLE_BATCH;
		}
	}
	if (n < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", l->file,
			strerror(-n));
		goto out;
	}
	for (i = 0; i < nb; i++) {
		bind_sample(l, one, 0, &batch[i], base);
		if (step_stmt(l, one) < 0)
			goto out;
		l->res->samples++;
	}
	l->res->rows += l->res->samples;
	rc = 0;
out:
	sqlite3_finalize(many);
	return rc;
}

/*
 * The off-CPU views sum blocked_ns + runq_ns with SQLite's sum(), which
 * fails with "integer overflow" past 2^63 - 1. Every view's sum is at most
 * the table's total, so refuse (roll back) a spool that would take the
 * total there, instead of loading one whose views then fail (issue 25).
 */
static int offcpu_fits(struct loader *l)
{
	sqlite3_stmt *st = NULL;
	double tot = 0;

	if (sqlite3_prepare_v2(l->db, "SELECT total(blocked_ns) + "
			       "total(runq_ns) FROM offcpu", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		db_error(l->db, "summing off-CPU time");
		return -1;
	}
	tot = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	if (tot >= 9223372036854775807.0) {
		fprintf(stderr, "%s: not loaded: with it the database's "
			"off-CPU intervals would total about %.4g ns, more than the "
			"2^63-1 ns its views can sum (SQLite integers)\n",
			l->file, tot);
		return -1;
	}
	return 0;
}

static int insert_offcpu(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_OFFCPU];
	int64_t base = (int64_t)l->p.info->start_us * 1000;
	struct spulse_offcpu iv;
	int rc;

	while ((rc = spulse_replay_next_offcpu(l->p.replay, &iv)) > 0) {
		const char *state = spulse_state_name(iv.state);

		if (iv.thread >= l->nthreads || iv.stack >= l->nstacks ||
		    !l->thread_rec[iv.thread])
			continue;
		l->leaf[iv.stack] = 1;
		if (iv.waker_stack < l->nstacks)
			l->leaf[iv.waker_stack] = 1;
		sqlite3_bind_int64(st, 1, l->spool);
		sqlite3_bind_int64(st, 2, l->thread_rec[iv.thread]);
		sqlite3_bind_int64(st, 3, base + iv.time_ns);
		sqlite3_bind_int64(st, 4, iv.thread);
		sqlite3_bind_int64(st, 5, iv.stack);
		sqlite3_bind_text(st, 6, state ? state : "?", -1,
				  SQLITE_STATIC);
		bind_u32_or_null(st, 7, iv.cpu_out);
		bind_u32_or_null(st, 8, iv.cpu_in);
		sqlite3_bind_int64(st, 9, (int64_t)iv.blocked_ns);
		sqlite3_bind_int64(st, 10, (int64_t)iv.runq_ns);
		bind_u32_or_null(st, 11, iv.waker_thread);
		bind_u32_or_null(st, 12, iv.waker_stack);
		bind_u32_or_null(st, 13, iv.waker_cpu);
		if (step(l, ST_OFFCPU, "inserting an interval") < 0)
			return -1;
		sqlite3_reset(st);
		l->res->offcpu++;
		l->res->rows++;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading off-CPU intervals: %s\n", l->file,
			strerror(-rc));
		return -1;
	}
	return offcpu_fits(l);
}

/*
 * stack_functions: for each leaf node used, the distinct functions on its
 * path (root to leaf), self = 1 for the leaf frame's function. A stamp per
 * local function index makes each leaf's walk linear in its depth.
 */
static int insert_stack_functions(struct loader *l)
{
	sqlite3_stmt *st = l->st[ST_STACK_FN];
	uint32_t *stamp = calloc(l->nfn ? l->nfn : 1, sizeof(*stamp));
	uint32_t leaf;
	int rc = -1;

	if (!stamp)
		return -1;
	for (leaf = 0; leaf < l->nstacks; leaf++) {
		uint32_t node = leaf, leaf_fn = UINT32_MAX, guard = 0;

		if (!l->leaf[leaf])
			continue;
		while (node != SPULSE_NONE && guard++ <= SPULSE_MAX_DEPTH) {
			struct spulse_stack s;
			uint32_t fn;

			if (spulse_defs_stack(l->p.defs, node, &s) < 0 ||
			    s.frame >= l->nframes)
				goto out;
			fn = l->frame_fn[s.frame];
			if (leaf_fn == UINT32_MAX)
				leaf_fn = fn;
			if (stamp[fn] != leaf + 1) {
				stamp[fn] = leaf + 1;
				sqlite3_bind_int64(st, 1, l->spool);
				sqlite3_bind_int64(st, 2, leaf);
				sqlite3_bind_int64(st, 3, l->fn_row[fn]);
				sqlite3_bind_int(st, 4, fn == leaf_fn);
				if (step(l, ST_STACK_FN, "stack functions") < 0)
					goto out;
				sqlite3_reset(st);
				l->res->stack_functions++;
				l->res->rows++;
			}
			node = s.parent;
		}
	}
	rc = 0;
out:
	free(stamp);
	return rc;
}

static void loader_free(struct loader *l)
{
	int i;

	for (i = 0; i < ST_NSTMT; i++)
		sqlite3_finalize(l->st[i]);
	profile_close(&l->p);
	free(l->srcs);
	free(l->thread_rec);
	free(l->module_row);
	free(l->frame_fn);
	free(l->fn_row);
	free(l->leaf);
	free(l->counts);
	strtab_free(&l->fn_keys);
}

int sql_load_spool(sqlite3 *db, const char *file,
		   const struct sql_load_opts *o, struct sql_load_result *res)
{
	struct loader l;
	struct stat sb;
	uint32_t fresh;
	bool in_tx = false;
	int i, rc, waited = 0;

	memset(res, 0, sizeof(*res));
	memset(&l, 0, sizeof(l));
	strtab_init(&l.fn_keys);
	l.db = db;
	l.file = file;
	l.res = res;
	if (o) {
		l.p.kallsyms = o->kallsyms;
		l.p.symfs = o->symfs;
		l.p.debug_dir = o->debug_dir;
		l.p.no_demangle = o->no_demangle;
		l.host = o->host;
	}
	/* Replay validates the whole spool on open: a corrupt one fails
	 * here, before the database is touched */
	if (profile_open(&l.p, file) != EXIT_OK)
		goto fail;
	res->recovered = l.p.info->recovered_from_truncated_tail;
	if (stat(file, &sb) < 0) {
		fprintf(stderr, "%s: %s\n", file, strerror(errno));
		goto fail;
	}
	l.nthreads = spulse_defs_count(l.p.defs, SPULSE_TAG_THREAD);
	l.nframes = spulse_defs_count(l.p.defs, SPULSE_TAG_FRAME);
	l.nstacks = spulse_defs_count(l.p.defs, SPULSE_TAG_STACK);
	l.nmodules = spulse_defs_count(l.p.defs, SPULSE_TAG_MODULE);
	l.leaf = calloc(l.nstacks ? l.nstacks : 1, 1);
	if (!l.leaf || read_sources(&l) < 0) {
		fprintf(stderr, "spulse sql: %s: out of memory\n", file);
		goto fail;
	}
	if (!l.srcs[0].has_id) {
		rc = sql_sha256_file(file, l.sha);
		if (rc < 0) {
			fprintf(stderr, "%s: %s\n", file, strerror(-rc));
			goto fail;
		}
		l.have_sha = true;
	}
	for (i = 0; i < ST_NSTMT; i++) {
		if (sqlite3_prepare_v2(db, stmt_sql[i], -1, &l.st[i], NULL)) {
			db_error(db, "preparing statements");
			goto fail;
		}
	}
	while (exec(db, "BEGIN IMMEDIATE") < 0) {
		if (!busy_retry(db, &waited)) {
			db_error(db, "starting the transaction");
			goto fail;
		}
	}
	in_tx = true;
	if (find_present(&l, &fresh) < 0)
		goto fail;
	if (fresh) {
		if (insert_spool(&l, (uint64_t)sb.st_size) < 0 ||
		    insert_threads(&l) < 0 || insert_frames(&l) < 0 ||
		    insert_stacks(&l) < 0 || insert_samples(&l) < 0 ||
		    insert_counts(&l) < 0 || insert_offcpu(&l) < 0 ||
		    insert_stack_functions(&l) < 0)
			goto fail;
	}
	if (exec(db, "COMMIT") < 0)
		goto fail;
	loader_free(&l);
	return EXIT_OK;
fail:
	if (in_tx)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	loader_free(&l);
	memset(res, 0, sizeof(*res));
	return EXIT_INVALID;
}
