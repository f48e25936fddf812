// SPDX-License-Identifier: MIT
/*
 * Unwind-table loading: meta module records -> tables (libspulse-unwind:
 * build, or read from the build-id cache) -> debugfs spulse/unwind
 * messages ADD (once per build-id) and MAP (a process's whole set, sent
 * whenever it changes). include/spulse/unwind.h is the message ABI,
 * docs/UNWIND.md "Loading" the prose.
 *
 * Threads: the drain loop calls drain_unwind_meta(), which copies the
 * record into a queue under the mutex; one worker thread takes the whole
 * queue, processes it with the mutex released (it alone owns the file,
 * module and process tables below), then sends one MAP per process whose
 * set changed in that batch. Only the queue, the statistics and the
 * idle/quit flags are shared.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <spulse/unwind.h>

#include "iface.h"
#include "unwind_build.h"
#include "unwind_load.h"

#define UW_KEY_MAX	64	/* build-id bytes kept as the file key */
#define UW_EEXIST_TRIES	64	/* table ids tried when the kernel has one */

enum uev_type { UEV_MODULE, UEV_MODULE_GONE, UEV_PROCESS_GONE };

struct uev {
	struct uev *next;
	enum uev_type type;
	uint32_t id, pid;
	uint64_t start, end, pgoff;
	char *path;
	uint8_t bid[UW_KEY_MAX];
	uint8_t bid_len;
};

enum ufile_state { UF_LOADED, UF_REFUSED, UF_FAILED };

/* One file (by build-id, or by path without one) and its table. */
struct ufile {
	uint8_t bid[UW_KEY_MAX];
	uint8_t bid_len;
	char *path;
	enum ufile_state state;
	uint32_t table_id;
	struct sut_table *t;
	bool bias_warned;
};

/* One meta module (meta ids are dense from 0). */
struct umod {
	uint32_t pid;
	uint64_t start, end, bias;
	uint32_t table_id;	/* 0: no table */
	bool active;
};

/* A process's mapped modules with a table (meta ids). */
struct upid {
	uint32_t pid;
	bool used, dirty, sent;
	uint32_t *ids;
	uint32_t n, cap;
};

struct drain_unwind {
	char *path;		/* DIR/unwind, opened per message (below) */
	FILE *log;
	char *cache;		/* NULL: no cache */
	unsigned int max_files;
	uint32_t skip_pid;	/* its pre-exec copy of us: main thread only */
	struct selfmap { uint64_t start, end; char *path; } *self;
	size_t nself;

	pthread_t thr;
	bool thr_started;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_idle;
	struct uev *head, *tail;
	bool busy, quit;
	struct drain_unwind_stats st;	/* under mu */

	/* worker-owned */
	struct ufile *files;
	size_t nfiles, capfiles;
	struct umod *mods;
	size_t capmods;
	struct upid *pids;
	size_t cappids, npids;
	uint32_t next_table;
	long vdso_idx;		/* files[] index of the vDSO's table, -1 */
	/* the set drain_unwind_preload_map() sent (worker-owned once adopted):
	 * merged into seed_pid's MAPs until the meta stream covers each
	 * range, so a partial meta view never shrinks it */
	uint32_t seed_pid, nseeds;
	struct spulse_ut_map *seeds;
	bool vdso_tried;
	bool map_warned, files_warned;
	bool trace;		/* SPULSE_UNWIND_TRACE=1: one line per message */
	bool lockdown_said;	/* the /proc/spulse fallback was logged */
	int64_t t0;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

char *drain_unwind_default_cache(void)
{
	const char *home = getenv("HOME");
	char *p;

	if (!home || !*home)
		return NULL;
	if (asprintf(&p, "%s/.cache/spulse/unwind", home) < 0)
		return NULL;
	return p;
}

/* mkdir -p; errors are not fatal (the cache then only reads or builds). */
static void mkdir_p(const char *dir)
{
	char *p = strdup(dir), *s;

	if (!p)
		return;
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		(void)mkdir(p, 0755);
		*s = '/';
	}
	(void)mkdir(p, 0755);
	free(p);
}

static void hex(char *out, size_t outlen, const uint8_t *b, size_t n)
{
	size_t i;

	if (!n) {
		snprintf(out, outlen, "(none)");
		return;
	}
	for (i = 0; i < n && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

#define STAT_ADD(u, field, v) do {		\
	pthread_mutex_lock(&(u)->mu);		\
	(u)->st.field += (v);			\
	pthread_mutex_unlock(&(u)->mu);		\
} while (0)

/*
 * One write(2) = one message; returns 0 or -errno. The file is opened for
 * each message and closed after it: an open debugfs file of spulse.ko holds
 * a reference on the module (its fops name THIS_MODULE, which debugfs'
 * release path needs), so keeping it open would make `rmmod spulse` fail
 * with EBUSY for as long as the drainer runs. Messages are rare (one per
 * table and per changed map set), so the open costs nothing that matters.
 */
/*
 * Open DIR/unwind for one message. Kernel lockdown raised while recording
 * makes debugfs refuse the file (EPERM) from then on; its twin
 * /proc/spulse/unwind (the same table registry, iface.h) does not, so the
 * message goes there (said once).
 */
static int open_unwind(struct drain_unwind *u)
{
	int fd = open(u->path, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd >= 0 || errno != EPERM)
		return fd;
	fd = open(DRAIN_PROCFS_DIR "/unwind", O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		errno = EPERM;
		return -1;
	}
	if (!__atomic_exchange_n(&u->lockdown_said, true, __ATOMIC_RELAXED))
		fprintf(u->log, "spulse-drain: %s: %s (kernel lockdown); unwind "
			"tables go to " DRAIN_PROCFS_DIR "/unwind\n", u->path,
			strerror(EPERM));
	return fd;
}

static int send_msg(struct drain_unwind *u, const void *msg, size_t len)
{
	int64_t t = u->trace ? now_ns() : 0;
	int fd = open_unwind(u);
	ssize_t n = fd < 0 ? -1 : write(fd, msg, len);
	int ret = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;

	if (fd >= 0)
		close(fd);

	if (u->trace) {
		const struct spulse_ut_msg *h = msg;

		fprintf(u->log, "spulse-drain: unwind trace: +%.3f s op %u, %zu "
			"bytes: %s in %.3f ms\n", (double)(t - u->t0) / 1e9,
			h->op, len, ret ? strerror(-ret) : "ok",
			(double)(now_ns() - t) / 1e6);
	}
	return ret;
}

static void msg_header(struct spulse_ut_msg *h, uint16_t op, size_t len)
{
	memset(h, 0, sizeof(*h));
	h->magic = SPULSE_UT_MAGIC;
	h->version = SPULSE_UT_VERSION;
	h->op = op;
	h->len = (uint32_t)len;
}

/* ---- files ------------------------------------------------------------- */

static struct ufile *file_find(struct drain_unwind *u, const struct uev *e)
{
	size_t i;

	for (i = 0; i < u->nfiles; i++) {
		struct ufile *f = &u->files[i];

		/* without a build-id the path is the key (a preloaded file,
		 * keyed by its table's build-id, matches by path too) */
		if (e->bid_len ? (f->bid_len == e->bid_len &&
				  !memcmp(f->bid, e->bid, e->bid_len)) :
				 !strcmp(f->path, e->path))
			return f;
	}
	return NULL;
}

/* ADD @t under a fresh table id; 0 and the id, or -errno. */
static int add_table(struct drain_unwind *u, const struct sut_table *t,
		     uint32_t *id, size_t *bytes)
{
	int tries, ret = -EEXIST;

	for (tries = 0; tries < UW_EEXIST_TRIES && ret == -EEXIST; tries++) {
		void *msg = NULL;
		size_t len = 0;

		if (!++u->next_table)
			u->next_table = 1;
		ret = sut_table_add_msg(t, u->next_table, &msg, &len);
		if (ret < 0)
			return ret;
		ret = send_msg(u, msg, len);
		free(msg);
		if (!ret) {
			*id = u->next_table;
			*bytes = len;
		}
	}
	return ret;
}

/*
 * Obtain, check and load the table of the file a module record names.
 * @key_table: @e has no build-id (a path from the preload): key the file
 * by its table's build-id, which later module records will carry.
 */
static struct ufile *file_get(struct drain_unwind *u, const struct uev *e,
			      bool key_table)
{
	struct ufile *f = file_find(u, e);
	const uint8_t *tbid = NULL;
	struct sut_table *t = NULL;
	char err[256] = "", h1[2 * UW_KEY_MAX + 1], h2[2 * UW_KEY_MAX + 1];
	bool hit = false;
	size_t tlen, bytes = 0;
	int64_t t0;
	int ret;

	if (f)
		return f;
	if (u->nfiles >= u->max_files) {
		STAT_ADD(u, failed, 1);
		if (!u->files_warned)
			fprintf(u->log, "spulse-drain: unwind: more than %u "
				"files; no tables for the rest\n", u->max_files);
		u->files_warned = true;
		return NULL;
	}
	if (u->nfiles == u->capfiles) {
		size_t cap = u->capfiles ? u->capfiles * 2 : 32;
		struct ufile *v = realloc(u->files, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->files = v;
		u->capfiles = cap;
	}
	f = &u->files[u->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(e->path);
	if (!f->path)
		return NULL;
	memcpy(f->bid, e->bid, e->bid_len);
	f->bid_len = e->bid_len;
	u->nfiles++;

	t0 = now_ns();
	if (u->cache)
		ret = sut_cache_load(u->cache, e->path, NULL, &t, &hit, err,
				     sizeof(err));
	else
		ret = sut_build_file(e->path, NULL, &t, err, sizeof(err));
	STAT_ADD(u, build_ns, (uint64_t)(now_ns() - t0));
	if (u->trace)
		fprintf(u->log, "spulse-drain: unwind trace: +%.3f s %s: table "
			"in %.3f ms%s\n", (double)(t0 - u->t0) / 1e9, e->path,
			(double)(now_ns() - t0) / 1e6, hit ? " (cache)" : "");
	if (ret < 0) {
		f->state = UF_FAILED;
		STAT_ADD(u, failed, 1);
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		/* the builder's line may name the path itself */
		fprintf(u->log, "spulse-drain: unwind: %s%s%s; no table\n",
			strncmp(err, e->path, strlen(e->path)) ? e->path : "",
			strncmp(err, e->path, strlen(e->path)) ? ": " : "", err);
		return f;
	}
	tlen = sut_table_build_id(t, &tbid);
	if (key_table && tlen && tlen <= UW_KEY_MAX) {
		struct ufile *dup;
		struct uev k = *e;

		memcpy(k.bid, tbid, tlen);
		k.bid_len = (uint8_t)tlen;
		f->bid_len = 0;		/* not itself while searching */
		dup = file_find(u, &k);
		memcpy(f->bid, tbid, tlen);
		f->bid_len = (uint8_t)tlen;
		if (dup) {		/* the same file by another path */
			sut_table_free(t);
			free(f->path);
			u->nfiles--;
			return dup;
		}
	}
	if (e->bid_len && (tlen != e->bid_len || memcmp(tbid, e->bid, tlen))) {
		hex(h1, sizeof(h1), tbid, tlen);
		hex(h2, sizeof(h2), e->bid, e->bid_len);
		fprintf(u->log, "spulse-drain: unwind: %s: build-id on disk %s "
			"differs from the mapped file's %s; table refused\n",
			e->path, h1, h2);
		sut_table_free(t);
		f->state = UF_REFUSED;
		STAT_ADD(u, refused, 1);
		return f;
	}
	ret = add_table(u, t, &f->table_id, &bytes);
	if (ret < 0) {
		fprintf(u->log, "spulse-drain: unwind: %s: the kernel refused "
			"its table: %s%s\n", e->path, strerror(-ret),
			ret == -ENOSPC ? " (memory bound unwind_mem_kb)" : "");
		sut_table_free(t);
		f->state = UF_FAILED;
		STAT_ADD(u, failed, 1);
		return f;
	}
	f->t = t;
	f->state = UF_LOADED;
	pthread_mutex_lock(&u->mu);
	u->st.loaded++;
	u->st.cache_hits += hit;
	u->st.rows += sut_table_rows(t, NULL, NULL, NULL);
	u->st.bytes += bytes;
	pthread_mutex_unlock(&u->mu);
	return f;
}

/* ---- processes ------------------------------------------------------------ */

static struct upid *pid_get(struct drain_unwind *u, uint32_t pid)
{
	size_t i;

	if (2 * (u->npids + 1) > u->cappids) {
		size_t cap = u->cappids ? u->cappids * 2 : 64, k;
		struct upid *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (k = 0; k < u->cappids; k++) {
			if (!u->pids[k].used)
				continue;
			for (i = (u->pids[k].pid * 2654435761u) & (cap - 1);
			     v[i].used; i = (i + 1) & (cap - 1))
				;
			v[i] = u->pids[k];
		}
		free(u->pids);
		u->pids = v;
		u->cappids = cap;
	}
	for (i = (pid * 2654435761u) & (u->cappids - 1);;
	     i = (i + 1) & (u->cappids - 1)) {
		struct upid *p = &u->pids[i];

		if (p->used && p->pid == pid)
			return p;
		if (!p->used) {
			memset(p, 0, sizeof(*p));
			p->used = true;
			p->pid = pid;
			u->npids++;
			return p;
		}
	}
}

static int pid_add(struct upid *p, uint32_t id)
{
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 8, *v;

		v = realloc(p->ids, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->ids = v;
		p->cap = cap;
	}
	p->ids[p->n++] = id;
	p->dirty = true;
	return 0;
}

static void pid_remove(struct upid *p, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < p->n; i++)
		if (p->ids[i] == id) {
			p->ids[i] = p->ids[--p->n];
			p->dirty = true;
			return;
		}
}

static int cmp_map(const void *a, const void *b)
{
	const struct spulse_ut_map *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->rsvd > y->rsvd) - (x->rsvd < y->rsvd);	/* seeds last */
}

/* Forget the seeds overlapping [start, end) (the meta stream has it now). */
static void seeds_drop(struct drain_unwind *u, uint32_t pid, uint64_t start,
		       uint64_t end)
{
	uint32_t i = 0;

	if (pid != u->seed_pid)
		return;
	while (i < u->nseeds) {
		if (u->seeds[i].start < end && start < u->seeds[i].end)
			u->seeds[i] = u->seeds[--u->nseeds];
		else
			i++;
	}
}

/* Send @p's whole set (op MAP), sorted, overlaps and excess dropped. */
static void send_map(struct drain_unwind *u, struct upid *p)
{
	struct spulse_ut_msg *h;
	struct spulse_ut_mapset *ms;
	struct spulse_ut_map *m;
	uint32_t i, n = 0, keep = 0;
	size_t len;
	int ret;

	uint32_t nseed = p->pid == u->seed_pid ? u->nseeds : 0;

	p->dirty = false;
	if (!p->n && !p->sent && !nseed)
		return;		/* nothing the kernel knows of */
	len = sizeof(*h) + sizeof(*ms) + (size_t)(p->n + nseed) * sizeof(*m);
	h = calloc(1, len);
	if (!h)
		return;
	ms = (struct spulse_ut_mapset *)(h + 1);
	m = (struct spulse_ut_map *)(ms + 1);
	for (i = 0; i < p->n; i++) {
		const struct umod *md = &u->mods[p->ids[i]];

		m[n].start = md->start;
		m[n].end = md->end;
		m[n].bias = md->bias;
		m[n].table_id = md->table_id;
		n++;
	}
	for (i = 0; i < nseed; i++) {
		m[n] = u->seeds[i];
		m[n++].rsvd = 1;
	}
	if (n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(m, n, sizeof(*m), cmp_map);
	for (i = 0; i < n; i++) {
		if (keep && m[i].start < m[keep - 1].end)
			continue;	/* overlaps the previous: meta's view is stale */
		if (keep == SPULSE_UT_MAPS_MAX)
			break;
		m[keep] = m[i];
		m[keep++].rsvd = 0;
	}
	len = sizeof(*h) + sizeof(*ms) + (size_t)keep * sizeof(*m);
	msg_header(h, SPULSE_UT_OP_MAP, len);
	ms->pid = p->pid;
	ms->n = keep;
	ret = send_msg(u, h, len);
	free(h);
	if (!ret) {
		p->sent = keep > 0;
		STAT_ADD(u, maps, 1);
		return;
	}
	if (!keep)
		return;	/* forgetting a process the kernel already retired */
	STAT_ADD(u, map_errors, 1);
	if (!u->map_warned) {
		fprintf(u->log, "spulse-drain: unwind: mapping pid %u (%u "
			"tables): %s\n", p->pid, keep, strerror(-ret));
		u->map_warned = true;
	}
}

/* ---- events ------------------------------------------------------------ */

static int mods_reserve(struct drain_unwind *u, uint32_t id)
{
	size_t cap;
	struct umod *v;

	if (id < u->capmods)
		return 0;
	cap = u->capmods ? u->capmods * 2 : 64;
	while (cap <= id)
		cap *= 2;
	v = realloc(u->mods, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + u->capmods, 0, (cap - u->capmods) * sizeof(*v));
	u->mods = v;
	u->capmods = cap;
	return 0;
}

/*
 * The vDSO's table (docs/UNWIND.md "The vDSO"): every 64-bit process of
 * this kernel maps the same image, so it is built once, from this
 * process's own copy (getauxval(AT_SYSINFO_EHDR)), and shared by every
 * [vdso] mapping. When the record carries a build-id it must match.
 */
static size_t vdso_size(const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph;
	uint64_t size = 0, shend;
	unsigned int i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD &&
		    ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	shend = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (shend > size && shend - size < 4096)	/* same last page */
		size = shend;
	return size <= (64u << 20) ? (size_t)size : 0;
}

static struct ufile *vdso_get(struct drain_unwind *u, const struct uev *e)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const uint8_t *tbid = NULL;
	struct sut_table *t = NULL;
	char err[256] = "";
	size_t len, bytes = 0, tlen;
	bool hit = false;
	struct ufile *f;
	int64_t t0;
	int ret;

	if (u->vdso_idx >= 0) {
		f = &u->files[u->vdso_idx];
		tlen = f->bid_len;
		if (e->bid_len && (tlen != e->bid_len ||
				   memcmp(f->bid, e->bid, tlen)))
			return NULL;	/* another image (said below once) */
		return f;
	}
	if (u->vdso_tried)
		return NULL;
	u->vdso_tried = true;
	len = vdso_size(eh);
	if (!len) {
		STAT_ADD(u, skipped, 1);
		return NULL;
	}
	if (u->nfiles == u->capfiles) {
		size_t cap = u->capfiles ? u->capfiles * 2 : 32;
		struct ufile *v = realloc(u->files, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->files = v;
		u->capfiles = cap;
	}
	t0 = now_ns();
	/* by build-id from the cache: the image is the kernel's, the same
	 * in every recording of this kernel */
	ret = sut_cache_load_image(u->cache, eh, len, "[vdso]", NULL, &t, &hit,
				   err, sizeof(err));
	STAT_ADD(u, build_ns, (uint64_t)(now_ns() - t0));
	if (ret < 0) {
		STAT_ADD(u, failed, 1);
		fprintf(u->log, "spulse-drain: unwind: [vdso]: %s; no table\n",
			err[0] ? err : strerror(-ret));
		return NULL;
	}
	tlen = sut_table_build_id(t, &tbid);
	if (e->bid_len && (tlen != e->bid_len || memcmp(tbid, e->bid, tlen))) {
		fprintf(u->log, "spulse-drain: unwind: [vdso]: this process's "
			"vDSO is not the mapped one; table refused\n");
		sut_table_free(t);
		STAT_ADD(u, refused, 1);
		return NULL;
	}
	f = &u->files[u->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup("[vdso]");
	if (!f->path) {
		sut_table_free(t);
		return NULL;
	}
	if (tlen > UW_KEY_MAX)
		tlen = UW_KEY_MAX;
	memcpy(f->bid, tbid, tlen);
	f->bid_len = (uint8_t)tlen;
	ret = add_table(u, t, &f->table_id, &bytes);
	if (ret < 0) {
		fprintf(u->log, "spulse-drain: unwind: [vdso]: the kernel "
			"refused its table: %s\n", strerror(-ret));
		sut_table_free(t);
		free(f->path);
		STAT_ADD(u, failed, 1);
		return NULL;
	}
	f->t = t;
	f->state = UF_LOADED;
	u->vdso_idx = (long)u->nfiles++;
	pthread_mutex_lock(&u->mu);
	u->st.loaded++;
	u->st.cache_hits += hit;
	u->st.rows += sut_table_rows(t, NULL, NULL, NULL);
	u->st.bytes += bytes;
	pthread_mutex_unlock(&u->mu);
	return f;
}

static void ev_module(struct drain_unwind *u, const struct uev *e)
{
	struct ufile *f;
	struct upid *p;
	struct umod *md;
	uint64_t bias;

	if (mods_reserve(u, e->id) < 0)
		return;
	md = &u->mods[e->id];
	if (md->active && md->table_id) {	/* redefined: drop the old */
		p = pid_get(u, md->pid);
		if (p)
			pid_remove(p, e->id);
	}
	seeds_drop(u, e->pid, e->start, e->end);
	memset(md, 0, sizeof(*md));
	md->pid = e->pid;
	md->start = e->start;
	md->end = e->end;
	md->active = true;
	if (!strcmp(e->path, "[vdso]")) {
		f = vdso_get(u, e);
	} else if (!e->path[0] || e->path[0] == '[') {
		STAT_ADD(u, skipped, 1);	/* no file to read */
		return;
	} else {
		f = file_get(u, e, false);
	}
	if (!f || f->state != UF_LOADED)
		return;
	if (sut_table_bias(f->t, e->start, e->pgoff, &bias) < 0) {
		if (!f->bias_warned)
			fprintf(u->log, "spulse-drain: unwind: %s: no segment "
				"at file offset 0x%" PRIx64 "; not mapped\n",
				e->path, e->pgoff);
		f->bias_warned = true;
		return;
	}
	p = pid_get(u, e->pid);
	if (!p)
		return;
	md->bias = bias;
	md->table_id = f->table_id;
	if (pid_add(p, e->id) < 0)
		md->table_id = 0;
}

static void ev_module_gone(struct drain_unwind *u, uint32_t id)
{
	struct umod *md;
	struct upid *p;

	if (id >= u->capmods || !u->mods[id].active)
		return;
	md = &u->mods[id];
	md->active = false;
	if (!md->table_id)
		return;
	p = pid_get(u, md->pid);
	if (p)
		pid_remove(p, id);
	md->table_id = 0;
}

static void ev_process_gone(struct drain_unwind *u, uint32_t pid)
{
	struct upid *p = pid_get(u, pid);
	uint32_t i;

	if (pid == u->seed_pid)
		u->nseeds = 0;	/* exit or exec: the image is gone */

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		u->mods[p->ids[i]].active = false;
		u->mods[p->ids[i]].table_id = 0;
	}
	if (p->n || p->sent)
		p->dirty = true;
	p->n = 0;
}

static void ev_free(struct uev *e)
{
	while (e) {
		struct uev *n = e->next;

		free(e->path);
		free(e);
		e = n;
	}
}

static void send_dirty(struct drain_unwind *u)
{
	size_t i;

	for (i = 0; i < u->cappids; i++)
		if (u->pids[i].used && u->pids[i].dirty)
			send_map(u, &u->pids[i]);
}

/*
 * Process a batch in order; the processes whose set changed get their MAP
 * at the end, or as soon as 50 ms went by (a table build), so one slow
 * build does not hold back the sets that are ready.
 */
static void process_batch(struct drain_unwind *u, struct uev *list)
{
	int64_t last = now_ns();
	struct uev *e;

	for (e = list; e; e = e->next) {
		bool quit;

		pthread_mutex_lock(&u->mu);
		quit = u->quit;
		if (!quit)
			u->st.queued--;
		pthread_mutex_unlock(&u->mu);
		if (quit)
			break;
		switch (e->type) {
		case UEV_MODULE:
			ev_module(u, e);
			break;
		case UEV_MODULE_GONE:
			ev_module_gone(u, e->id);
			break;
		case UEV_PROCESS_GONE:
			ev_process_gone(u, e->pid);
			break;
		}
		if (now_ns() - last > 50000000) {
			send_dirty(u);
			last = now_ns();
		}
	}
	send_dirty(u);
}

static void *worker(void *arg)
{
	struct drain_unwind *u = arg;

	pthread_mutex_lock(&u->mu);
	for (;;) {
		struct uev *list;

		if (u->quit)
			break;
		if (!u->head) {
			u->busy = false;
			pthread_cond_broadcast(&u->cv_idle);
			pthread_cond_wait(&u->cv_work, &u->mu);
			continue;
		}
		list = u->head;
		u->head = u->tail = NULL;
		u->busy = true;
		pthread_mutex_unlock(&u->mu);
		process_batch(u, list);
		ev_free(list);
		pthread_mutex_lock(&u->mu);
	}
	u->busy = false;
	pthread_cond_broadcast(&u->cv_idle);
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

/* ---- the pre-exec fork of this process ---------------------------------- */

static void read_self_maps(struct drain_unwind *u)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096 + 128];
	size_t cap = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perm[8], *p;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &s, &e, perm,
			   &n) < 3 || !n || !strchr(perm, 'x'))
			continue;
		p = line + n;
		p[strcspn(p, "\n")] = 0;
		if (*p != '/')
			continue;
		if (u->nself == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct selfmap *v = realloc(u->self, nc * sizeof(*v));

			if (!v)
				break;
			u->self = v;
			cap = nc;
		}
		u->self[u->nself].path = strdup(p);
		if (!u->self[u->nself].path)
			break;
		u->self[u->nself].start = s;
		u->self[u->nself].end = e;
		u->nself++;
	}
	fclose(f);
}

static bool is_self_map(const struct drain_unwind *u,
			const struct spulse_module *m)
{
	size_t i;

	for (i = 0; i < u->nself; i++)
		if (u->self[i].start == m->start && u->self[i].end == m->end &&
		    m->path && !strcmp(u->self[i].path, m->path))
			return true;
	return false;
}

/* ---- API ---------------------------------------------------------------- */

/* A loader without its worker (drain_unwind_open() starts it). */
static int loader_new(const struct drain_unwind_opts *o,
		      struct drain_unwind **out)
{
	struct drain_unwind_opts d = { 0 };
	struct drain_unwind *u;
	int ret;

	memcpy(&d, o, o->sz && o->sz < sizeof(d) ? o->sz : sizeof(d));
	if (!d.path)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->log = d.log ? d.log : stderr;
	u->max_files = d.max_files ? d.max_files : 4096;
	u->skip_pid = d.skip_pid;
	u->vdso_idx = -1;
	u->trace = getenv("SPULSE_UNWIND_TRACE") &&
		   !strcmp(getenv("SPULSE_UNWIND_TRACE"), "1");
	u->t0 = now_ns();
	ret = open(d.path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (ret < 0) {
		ret = -errno;
		free(u);
		return ret;
	}
	close(ret);
	u->path = strdup(d.path);
	if (!u->path) {
		free(u);
		return -ENOMEM;
	}
	if (!d.cache_dir)
		u->cache = drain_unwind_default_cache();
	else if (d.cache_dir[0])
		u->cache = strdup(d.cache_dir);
	if (u->cache)
		mkdir_p(u->cache);
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv_work, NULL);
	pthread_cond_init(&u->cv_idle, NULL);
	*out = u;
	return 0;
}

/* Tables drain_unwind_preload() loaded, for the next drain_unwind_open(). */
static struct drain_unwind *preloaded;

/* Take over @p's tables (same debugfs file): no second ADD for them. */
static void adopt(struct drain_unwind *u, struct drain_unwind *p)
{
	u->files = p->files;
	u->nfiles = p->nfiles;
	u->capfiles = p->capfiles;
	u->vdso_idx = p->vdso_idx;
	u->vdso_tried = p->vdso_tried;
	u->next_table = p->next_table;
	u->st = p->st;
	u->seed_pid = p->seed_pid;
	u->nseeds = p->nseeds;
	u->seeds = p->seeds;
	p->seeds = NULL;
	p->nseeds = 0;
	p->files = NULL;
	p->nfiles = p->capfiles = 0;
}

int drain_unwind_preload(const struct drain_unwind_opts *o,
			 const char *const *paths, size_t n, bool vdso,
			 unsigned int timeout_ms,
			 struct drain_unwind_preload_stats *ps)
{
	int64_t t0 = now_ns(), limit = (int64_t)timeout_ms * 1000000;
	struct drain_unwind *u = preloaded;
	size_t i;
	int ret;

	memset(ps, 0, sizeof(*ps));
	if (!u) {
		ret = loader_new(o, &u);
		if (ret < 0)
			return ret;
		preloaded = u;
	}
	ps->files = n + vdso;
	if (vdso) {
		struct uev e = { .path = (char *)"[vdso]" };

		ps->done++;
		if (vdso_get(u, &e))
			ps->loaded++;
	}
	for (i = 0; i < n; i++) {
		struct uev e = { .path = (char *)paths[i] };
		struct ufile *f;

		if (timeout_ms && now_ns() - t0 > limit) {
			ps->timed_out = true;
			break;
		}
		ps->done++;
		f = file_get(u, &e, true);
		if (f && f->state == UF_LOADED)
			ps->loaded++;
	}
	ps->ns = (uint64_t)(now_ns() - t0);
	return 0;
}

/* The preloaded file @path names (as given, or its real path), or NULL. */
static struct ufile *pre_file(struct drain_unwind *u, const char *path)
{
	char *rp = realpath(path, NULL);
	struct ufile *hit = NULL;
	size_t i;

	for (i = 0; i < u->nfiles && !hit; i++) {
		struct ufile *f = &u->files[i];

		if (f->state == UF_LOADED && (!strcmp(f->path, path) ||
					      (rp && !strcmp(f->path, rp))))
			hit = f;
	}
	free(rp);
	return hit;
}

int drain_unwind_preload_map(uint32_t pid)
{
	struct drain_unwind *u = preloaded;
	struct spulse_ut_msg *h;
	struct spulse_ut_mapset *ms;
	struct spulse_ut_map *m;
	char mpath[64], line[4096 + 128];
	size_t len;
	uint32_t n = 0;
	FILE *fp;
	int ret;

	if (!u)
		return -ENOENT;
	snprintf(mpath, sizeof(mpath), "/proc/%u/maps", pid);
	fp = fopen(mpath, "re");
	if (!fp)
		return -errno;
	len = sizeof(*h) + sizeof(*ms) + SPULSE_UT_MAPS_MAX * sizeof(*m);
	h = calloc(1, len);
	if (!h) {
		fclose(fp);
		return -ENOMEM;
	}
	ms = (struct spulse_ut_mapset *)(h + 1);
	m = (struct spulse_ut_map *)(ms + 1);
	while (fgets(line, sizeof(line), fp) && n < SPULSE_UT_MAPS_MAX) {
		unsigned long long s, e, off;
		struct ufile *f = NULL;
		uint64_t bias;
		char perm[8], *p;
		int k = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perm,
			   &off, &k) < 4 || !k || !strchr(perm, 'x'))
			continue;
		p = line + k;
		p[strcspn(p, "\n")] = 0;
		if (!strcmp(p, "[vdso]") && u->vdso_idx >= 0)
			f = &u->files[u->vdso_idx];
		else if (*p == '/')
			f = pre_file(u, p);
		if (!f || sut_table_bias(f->t, s, off, &bias) < 0)
			continue;
		if (n && s < m[n - 1].end)
			continue;
		m[n].start = s;
		m[n].end = e;
		m[n].bias = bias;
		m[n].table_id = f->table_id;
		n++;
	}
	fclose(fp);
	if (!n) {
		free(h);
		return 0;
	}
	len = sizeof(*h) + sizeof(*ms) + (size_t)n * sizeof(*m);
	msg_header(h, SPULSE_UT_OP_MAP, len);
	ms->pid = pid;
	ms->n = n;
	ret = send_msg(u, h, len);
	if (ret < 0) {
		free(h);
		return ret;
	}
	free(u->seeds);
	u->seeds = malloc((size_t)n * sizeof(*m));
	u->seed_pid = u->seeds ? pid : 0;
	u->nseeds = u->seeds ? n : 0;
	if (u->seeds)
		memcpy(u->seeds, m, (size_t)n * sizeof(*m));
	free(h);
	STAT_ADD(u, maps, 1);
	return (int)n;
}

void drain_unwind_preload_drop(void)
{
	struct drain_unwind *p = preloaded;

	preloaded = NULL;
	drain_unwind_close(p);
}

int drain_unwind_open(const struct drain_unwind_opts *o,
		      struct drain_unwind **out)
{
	struct drain_unwind *u;
	int ret;

	ret = loader_new(o, &u);
	if (ret < 0)
		return ret;
	if (preloaded) {
		struct drain_unwind *p = preloaded;

		preloaded = NULL;
		if (!strcmp(p->path, u->path))
			adopt(u, p);
		drain_unwind_close(p);	/* DELs only what was not adopted */
	}
	if (u->skip_pid)
		read_self_maps(u);
	ret = pthread_create(&u->thr, NULL, worker, u);
	if (ret) {
		drain_unwind_close(u);
		return -ret;
	}
	u->thr_started = true;
	*out = u;
	return 0;
}

int drain_unwind_meta(struct drain_unwind *u, const struct spulse_record *r)
{
	struct uev *e;

	if (r->tag != SPULSE_TAG_MODULE && r->tag != SPULSE_TAG_MODULE_DEACTIVATE &&
	    r->tag != SPULSE_TAG_PROCESS_DEACTIVATE)
		return 0;
	/*
	 * The fork of us before its exec maps what we map. Its exec ends the
	 * skipping: the retirement of its announced image, or a file mapping
	 * of it that is not ours (without ASLR, as in the test VM, the
	 * command's libc lands where ours is: not to be skipped then).
	 */
	if (u->skip_pid && r->tag == SPULSE_TAG_PROCESS_DEACTIVATE &&
	    r->u.process_deactivate.pid == u->skip_pid)
		u->skip_pid = 0;
	if (u->skip_pid && r->tag == SPULSE_TAG_MODULE &&
	    r->u.module.pid == u->skip_pid) {
		if (is_self_map(u, &r->u.module))
			return 0;
		if (r->u.module.path && r->u.module.path[0] == '/')
			u->skip_pid = 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (u->trace)
		fprintf(u->log, "spulse-drain: unwind trace: +%.3f s meta tag %u "
			"pid %u %s\n", (double)(now_ns() - u->t0) / 1e9, r->tag,
			r->tag == SPULSE_TAG_MODULE ? r->u.module.pid :
			r->tag == SPULSE_TAG_PROCESS_DEACTIVATE ?
			r->u.process_deactivate.pid : 0,
			r->tag == SPULSE_TAG_MODULE && r->u.module.path ?
			r->u.module.path : "");
	if (r->tag == SPULSE_TAG_MODULE) {
		const struct spulse_module *m = &r->u.module;

		e->type = UEV_MODULE;
		e->id = m->id;
		e->pid = m->pid;
		e->start = m->start;
		e->end = m->end;
		e->pgoff = m->file_offset;
		e->path = strndup(m->path ? m->path : "", m->path_len);
		if (!e->path) {
			free(e);
			return -ENOMEM;
		}
		e->bid_len = (uint8_t)(m->build_id_len < UW_KEY_MAX ?
				       m->build_id_len : UW_KEY_MAX);
		if (e->bid_len)
			memcpy(e->bid, m->build_id, e->bid_len);
	} else if (r->tag == SPULSE_TAG_MODULE_DEACTIVATE) {
		e->type = UEV_MODULE_GONE;
		e->id = r->u.module_deactivate.module;
	} else {
		e->type = UEV_PROCESS_GONE;
		e->pid = r->u.process_deactivate.pid;
	}
	pthread_mutex_lock(&u->mu);
	if (u->tail)
		u->tail->next = e;
	else
		u->head = e;
	u->tail = e;
	u->st.queued++;
	pthread_cond_signal(&u->cv_work);
	pthread_mutex_unlock(&u->mu);
	return 0;
}

int drain_unwind_wait(struct drain_unwind *u, unsigned int timeout_ms)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&u->mu);
	while ((u->head || u->busy) && !u->quit && ret == 0)
		ret = pthread_cond_timedwait(&u->cv_idle, &u->mu, &ts);
	ret = (u->head || u->busy) ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&u->mu);
	return ret;
}

void drain_unwind_get_stats(struct drain_unwind *u,
			    struct drain_unwind_stats *st)
{
	pthread_mutex_lock(&u->mu);
	*st = u->st;
	pthread_mutex_unlock(&u->mu);
}

void drain_unwind_close(struct drain_unwind *u)
{
	size_t i;

	if (!u)
		return;
	if (u->thr_started) {
		pthread_mutex_lock(&u->mu);
		u->quit = true;
		pthread_cond_signal(&u->cv_work);
		pthread_mutex_unlock(&u->mu);
		pthread_join(u->thr, NULL);
	}
	ev_free(u->head);
	for (i = 0; i < u->nfiles; i++) {
		struct ufile *f = &u->files[i];

		if (f->state == UF_LOADED) {
			struct {
				struct spulse_ut_msg h;
				struct spulse_ut_del d;
			} m;

			msg_header(&m.h, SPULSE_UT_OP_DEL, sizeof(m));
			memset(&m.d, 0, sizeof(m.d));
			m.d.table_id = f->table_id;
			(void)send_msg(u, &m, sizeof(m));
		}
		sut_table_free(f->t);
		free(f->path);
	}
	free(u->files);
	free(u->mods);
	for (i = 0; i < u->cappids; i++)
		free(u->pids[i].ids);
	free(u->pids);
	free(u->path);
	pthread_cond_destroy(&u->cv_work);
	pthread_cond_destroy(&u->cv_idle);
	pthread_mutex_destroy(&u->mu);
	for (i = 0; i < u->nself; i++)
		free(u->self[i].path);
	free(u->self);
	free(u->seeds);
	free(u->cache);
	free(u);
}
