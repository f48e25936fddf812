// SPDX-License-Identifier: MIT
/*
 * Recorder: writes a spool with small write(2) appends of whole records.
 * Records are encoded into a buffer and appended when flush_bytes are
 * buffered, so a killed writer or a full disk leaves a file whose complete
 * prefix reads back. Definitions are interned (intern.c) and every rule of
 * docs/FORMAT.md is enforced before a record is encoded, so the Recorder
 * never writes a file the readers would reject.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spulse/encode.h>

#include "internal.h"

struct rec_mod {
	uint64_t start, end, file_offset;
	uint32_t pid;
	bool active;
};

struct rec_frame {
	uint64_t addr;
	uint32_t module;
	uint8_t kind;
};

struct rec_stack {
	uint32_t parent, frame, depth;
};

struct rec_thread {
	uint32_t pid, tid, comm_len;
	char *comm;
	bool has_source;	/* a kind-5 record was written */
};

/* One active module in a process's address order (struct pid_mods). */
struct mod_span {
	uint64_t start, end;
	uint32_t id;
};

/*
 * Active modules of one process, for spulse_rec_frame_addr(): @ids in
 * definition order (the newest last). With MOD_INDEX_MIN or more, the
 * lookup goes through @ix, the same modules sorted by start, built when
 * first needed after a change (@ix_ok) -- as long as no two of them
 * overlap (@ix_overlap): then the one module holding an address is the
 * newest holding it, as the scan newest first finds it. Overlapping
 * modules (a mapping defined over an older one) keep the scan.
 */
struct pid_mods {
	uint32_t *ids;
	uint32_t n, cap;
	struct mod_span *ix;
	uint32_t ix_cap;
	bool ix_ok, ix_overlap;
};

#define MOD_INDEX_MIN	8

struct spulse_recorder {
	int fd;
	int err;		/* first error; sticky */
	uint8_t *buf;
	size_t len, cap, flush_bytes;
	uint64_t written;	/* bytes appended to the file */
	uint64_t samples;
	int64_t last_time;
	int64_t last_event;	/* event clock of the last interval/trigger */
	int64_t time_max;	/* largest offset: INT64_MAX - start_us * 1000 */
	uint32_t cpu;		/* of the last cpu record, SPULSE_NONE */
	uint32_t nidents;	/* identity records written (sources) */

	struct rec_mod *mods;
	struct rec_frame *frames;
	struct rec_stack *stacks;
	struct rec_thread *threads;
	uint32_t nmods, nframes, nstacks, nthreads;
	uint32_t cap_mods, cap_frames, cap_stacks, cap_threads;
	struct spulse_htab frame_tab, stack_tab, thread_tab;
	struct spulse_u32map pid_index;	/* pid -> index in pids[] */
	struct pid_mods *pids;
	uint32_t npids, cap_pids;
};

static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	if (n >= SPULSE_MAX_ID)
		return -EOVERFLOW;
	ncap = *cap ? (size_t)*cap * 2 : 64;
	if (ncap > SPULSE_MAX_ID)
		ncap = SPULSE_MAX_ID;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

/* Append the whole buffer; on a short write keep what was not written. */
static int write_all(struct spulse_recorder *r)
{
	size_t done = 0;
	int ret = 0;

	while (done < r->len) {
		ssize_t n = write(r->fd, r->buf + done, r->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
		r->written += (uint64_t)n;
	}
	memmove(r->buf, r->buf + done, r->len - done);
	r->len -= done;
	return ret;
}

SPULSE_EXPORT int spulse_recorder_flush(struct spulse_recorder *r)
{
	int ret;

	if (r->err)
		return r->err;
	ret = write_all(r);
	if (ret)
		r->err = ret;
	return ret;
}

/* Room for one more record in the buffer. */
static inline uint8_t *reserve(struct spulse_recorder *r)
{
	if (r->cap - r->len < SPULSE_MAX_RECORD && spulse_recorder_flush(r))
		return NULL;
	return r->buf + r->len;
}

static inline int commit(struct spulse_recorder *r, size_t n)
{
	r->len += n;
	if (r->len >= r->flush_bytes)
		return spulse_recorder_flush(r);
	return 0;
}

static int rec_init(struct spulse_recorder *r,
		    const struct spulse_recorder_opts *opts)
{
	uint64_t start_us = 0, interval_us = 0;
	size_t n;

	r->flush_bytes = 4096;
	if (opts && opts->sz >= offsetof(struct spulse_recorder_opts, flush_bytes) +
			       sizeof(opts->flush_bytes)) {
		start_us = opts->start_us;
		interval_us = opts->interval_us;
		if (opts->flush_bytes)
			r->flush_bytes = opts->flush_bytes;
	}
	if (!start_us) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		start_us = (uint64_t)ts.tv_sec * 1000000 +
			   (uint64_t)ts.tv_nsec / 1000;
	}
	/* start_us * 1000 + every offset must fit in i64 epoch ns */
	if (start_us > SPULSE_MAX_START_US)
		return -EOVERFLOW;
	r->time_max = INT64_MAX - (int64_t)(start_us * 1000);
	r->cap = r->flush_bytes + SPULSE_MAX_RECORD;
	r->buf = malloc(r->cap);
	if (!r->buf)
		return -ENOMEM;
	n = spulse_enc_header(r->buf, start_us, interval_us);
	r->len = n;
	/* the header goes out at once: the file is a valid (empty) spool */
	return spulse_recorder_flush(r);
}

static void rec_free(struct spulse_recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i].comm);
	for (i = 0; i < r->npids; i++) {
		free(r->pids[i].ids);
		free(r->pids[i].ix);
	}
	free(r->pids);
	free(r->mods);
	free(r->frames);
	free(r->stacks);
	free(r->threads);
	spulse_htab_free(&r->frame_tab);
	spulse_htab_free(&r->stack_tab);
	spulse_htab_free(&r->thread_tab);
	spulse_u32map_free(&r->pid_index);
	free(r->buf);
	free(r);
}

SPULSE_EXPORT int spulse_recorder_fdopen(int fd,
					 const struct spulse_recorder_opts *opts,
					 struct spulse_recorder **out)
{
	struct spulse_recorder *r = calloc(1, sizeof(*r));
	int fl, ret;

	*out = NULL;
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	r->cpu = SPULSE_NONE;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_APPEND))
		fcntl(fd, F_SETFL, fl | O_APPEND);
	ret = rec_init(r, opts);
	if (ret) {
		close(fd);
		rec_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

SPULSE_EXPORT int spulse_recorder_open(const char *path,
				       const struct spulse_recorder_opts *opts,
				       struct spulse_recorder **out)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
	bool trunc = opts && opts->sz >= offsetof(struct spulse_recorder_opts,
						  truncate) + sizeof(bool) &&
		     opts->truncate;
	int fd;

	*out = NULL;
	/* refuse before creating the file */
	if (opts && opts->sz >= offsetof(struct spulse_recorder_opts, start_us) +
			       sizeof(opts->start_us) &&
	    opts->start_us > SPULSE_MAX_START_US)
		return -EOVERFLOW;
	flags |= trunc ? O_TRUNC : O_EXCL;
	fd = open(path, flags, 0644);
	if (fd < 0)
		return -errno;
	return spulse_recorder_fdopen(fd, opts, out);
}

SPULSE_EXPORT int spulse_recorder_sync(struct spulse_recorder *r)
{
	int ret = spulse_recorder_flush(r);

	if (ret)
		return ret;
	if (fsync(r->fd) < 0 && errno != EINVAL && errno != EROFS) {
		r->err = -errno;
		return r->err;
	}
	return 0;
}

SPULSE_EXPORT int spulse_recorder_close(struct spulse_recorder *r)
{
	int ret;

	if (!r)
		return 0;
	ret = spulse_recorder_sync(r);
	if (close(r->fd) < 0 && !ret)
		ret = -errno;
	rec_free(r);
	return ret;
}

SPULSE_EXPORT uint64_t spulse_recorder_bytes(const struct spulse_recorder *r)
{
	return r->written + r->len;
}

SPULSE_EXPORT uint64_t spulse_recorder_samples(const struct spulse_recorder *r)
{
	return r->samples;
}

/* ---- modules ---- */

static struct pid_mods *pid_mods(struct spulse_recorder *r, uint32_t pid,
				 bool create)
{
	uint32_t *ix;

	if (!create) {
		ix = spulse_u32map_find(&r->pid_index, pid);
		return ix ? &r->pids[*ix] : NULL;
	}
	ix = spulse_u32map_get(&r->pid_index, pid, SPULSE_NONE);
	if (!ix)
		return NULL;
	if (*ix == SPULSE_NONE) {
		if (grow((void **)&r->pids, &r->cap_pids, r->npids,
			 sizeof(*r->pids)))
			return NULL;
		memset(&r->pids[r->npids], 0, sizeof(r->pids[0]));
		*ix = r->npids++;
	}
	return &r->pids[*ix];
}

SPULSE_EXPORT int spulse_rec_module(struct spulse_recorder *r, uint32_t pid,
				    uint64_t start, uint64_t end,
				    uint64_t file_offset, const char *path,
				    const uint8_t *build_id,
				    size_t build_id_len, uint32_t *id)
{
	return spulse_rec_module_n(r, pid, start, end, file_offset, path,
				   path ? strlen(path) : 0, build_id,
				   build_id_len, id);
}

SPULSE_EXPORT int spulse_rec_module_n(struct spulse_recorder *r, uint32_t pid,
				      uint64_t start, uint64_t end,
				      uint64_t file_offset, const char *path,
				      size_t path_len, const uint8_t *build_id,
				      size_t build_id_len, uint32_t *id)
{
	struct pid_mods *pm;
	uint8_t *p;
	int ret;

	if (r->err)
		return r->err;
	if (start >= end || path_len > SPULSE_MAX_STRING ||
	    (path_len && !path) ||
	    build_id_len > SPULSE_MAX_BUILD_ID || (build_id_len && !build_id))
		return -EINVAL;
	if (file_offset + (end - start) < file_offset)
		return -EOVERFLOW;
	ret = grow((void **)&r->mods, &r->cap_mods, r->nmods, sizeof(*r->mods));
	if (ret)
		return ret;
	pm = pid_mods(r, pid, true);
	if (!pm)
		return -ENOMEM;
	if (pm->n == pm->cap) {
		uint32_t ncap = pm->cap ? pm->cap * 2 : 8;
		void *np = realloc(pm->ids, ncap * sizeof(*pm->ids));

		if (!np)
			return -ENOMEM;
		pm->ids = np;
		pm->cap = ncap;
	}
	p = reserve(r);
	if (!p)
		return r->err;
	r->mods[r->nmods] = (struct rec_mod){ .start = start, .end = end,
		.file_offset = file_offset, .pid = pid, .active = true };
	pm->ids[pm->n++] = r->nmods;
	pm->ix_ok = false;
	if (id)
		*id = r->nmods;
	ret = commit(r, spulse_enc_module(p, r->nmods++, pid, start, end,
					  file_offset, path ? path : "",
					  path_len, build_id, build_id_len));
	return ret;
}

static void pid_mods_remove(struct pid_mods *pm, uint32_t module)
{
	uint32_t i;

	for (i = 0; i < pm->n; i++)
		if (pm->ids[i] == module) {
			memmove(&pm->ids[i], &pm->ids[i + 1],
				(pm->n - i - 1) * sizeof(*pm->ids));
			pm->n--;
			pm->ix_ok = false;
			return;
		}
}

SPULSE_EXPORT int spulse_rec_module_deactivate(struct spulse_recorder *r,
					       uint32_t module)
{
	struct pid_mods *pm;
	uint8_t *p;

	if (r->err)
		return r->err;
	if (module >= r->nmods)
		return -ENOENT;
	if (!r->mods[module].active)
		return -EINVAL;
	p = reserve(r);
	if (!p)
		return r->err;
	r->mods[module].active = false;
	pm = pid_mods(r, r->mods[module].pid, false);
	if (pm)
		pid_mods_remove(pm, module);
	return commit(r, spulse_enc_module_deactivate(p, module));
}

SPULSE_EXPORT int spulse_rec_process_deactivate(struct spulse_recorder *r,
						uint32_t pid)
{
	struct pid_mods *pm;
	uint8_t *p;
	uint32_t i;

	if (r->err)
		return r->err;
	p = reserve(r);
	if (!p)
		return r->err;
	pm = pid_mods(r, pid, false);
	if (pm) {
		for (i = 0; i < pm->n; i++)
			r->mods[pm->ids[i]].active = false;
		pm->n = 0;
		pm->ix_ok = false;
	}
	return commit(r, spulse_enc_process_deactivate(p, pid));
}

SPULSE_EXPORT int spulse_rec_python(struct spulse_recorder *r, uint32_t pid,
				    bool enter)
{
	uint8_t *p;

	if (r->err)
		return r->err;
	p = reserve(r);
	if (!p)
		return r->err;
	return commit(r, spulse_enc_python(p, pid, enter ? SPULSE_PYTHON_ENTER :
						       SPULSE_PYTHON_LEAVE));
}

/* ---- frames ---- */

static uint32_t frame_hash(struct spulse_htab *tab, uint8_t kind,
			   uint32_t module, uint64_t addr)
{
	uint64_t seed = spulse_htab_seed_inline(tab);

	return spulse_hash64_inline(addr ^ (uint64_t)spulse_hash64_inline(
				     (uint64_t)module << 8 | kind, seed) << 32,
			     seed);
}

struct frame_key {
	const struct spulse_recorder *r;
	struct rec_frame f;
};

static bool frame_eq(const void *ctx, uint32_t id)
{
	const struct frame_key *k = ctx;
	const struct rec_frame *f = &k->r->frames[id];

	return f->kind == k->f.kind && f->module == k->f.module &&
	       f->addr == k->f.addr;
}

static int intern_frame(struct spulse_recorder *r, uint8_t kind,
			uint32_t module, uint64_t addr, uint32_t *id)
{
	struct frame_key k = { r, { .addr = addr, .module = module,
				    .kind = kind } };
	uint32_t h = frame_hash(&r->frame_tab, kind, module, addr);
	struct spulse_htab_pos pos;
	uint32_t found = spulse_htab_lookup(&r->frame_tab, h, frame_eq, &k,
					    &pos);
	uint8_t *p;
	size_t n;
	int ret;

	if (found != SPULSE_NONE) {
		if (id)
			*id = found;
		return 0;
	}
	if (r->err)
		return r->err;
	if (kind == SPULSE_FRAME_MODULE) {
		const struct rec_mod *m = &r->mods[module];

		if (!m->active)
			return -EINVAL;
		if (addr < m->file_offset ||
		    addr - m->file_offset >= m->end - m->start)
			return -ERANGE;
	}
	ret = grow((void **)&r->frames, &r->cap_frames, r->nframes,
		   sizeof(*r->frames));
	if (ret)
		return ret;
	ret = spulse_htab_insert_at(&r->frame_tab, &pos, h, r->nframes);
	if (ret)
		return ret;
	p = reserve(r);
	if (!p)
		return r->err;
	r->frames[r->nframes] = k.f;
	switch (kind) {
	case SPULSE_FRAME_MODULE:
		n = spulse_enc_frame_module(p, r->nframes, module, addr);
		break;
	case SPULSE_FRAME_TRUNCATED:
		n = spulse_enc_frame_truncated(p, r->nframes);
		break;
	default:
		n = spulse_enc_frame_abs(p, r->nframes, kind, addr);
		break;
	}
	if (id)
		*id = r->nframes;
	r->nframes++;
	return commit(r, n);
}

SPULSE_EXPORT int spulse_rec_frame_module(struct spulse_recorder *r,
					  uint32_t module, uint64_t rel,
					  uint32_t *id)
{
	if (module >= r->nmods)
		return -ENOENT;
	return intern_frame(r, SPULSE_FRAME_MODULE, module, rel, id);
}

SPULSE_EXPORT int spulse_rec_frame_abs(struct spulse_recorder *r, uint8_t kind,
				       uint64_t addr, uint32_t *id)
{
	if (kind != SPULSE_FRAME_USER && kind != SPULSE_FRAME_KERNEL)
		return -EINVAL;
	return intern_frame(r, kind, SPULSE_NONE, addr, id);
}

SPULSE_EXPORT int spulse_rec_frame_truncated(struct spulse_recorder *r,
					     uint32_t *id)
{
	return intern_frame(r, SPULSE_FRAME_TRUNCATED, SPULSE_NONE, 0, id);
}

static int span_cmp(const void *a, const void *b)
{
	const struct mod_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Build @pm's index of its active modules; false: no memory (scan). */
static bool mod_index_build(const struct spulse_recorder *r,
			    struct pid_mods *pm)
{
	uint32_t i;

	if (pm->ix_cap < pm->n) {
		struct mod_span *v = realloc(pm->ix, pm->cap * sizeof(*v));

		if (!v)
			return false;
		pm->ix = v;
		pm->ix_cap = pm->cap;
	}
	for (i = 0; i < pm->n; i++) {
		const struct rec_mod *m = &r->mods[pm->ids[i]];

		pm->ix[i] = (struct mod_span){ m->start, m->end, pm->ids[i] };
	}
	qsort(pm->ix, pm->n, sizeof(*pm->ix), span_cmp);
	pm->ix_overlap = false;
	for (i = 1; i < pm->n; i++)
		if (pm->ix[i].start < pm->ix[i - 1].end)
			pm->ix_overlap = true;
	pm->ix_ok = true;
	return true;
}

/*
 * The active module of @pm holding @addr, by the index: its id, or
 * SPULSE_NONE. Only for an index without overlaps.
 */
static inline uint32_t mod_index_find(const struct pid_mods *pm, uint64_t addr)
{
	uint32_t lo = 0, hi = pm->n;

	/* the last span starting at or before @addr */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pm->ix[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr >= pm->ix[lo].start && addr < pm->ix[lo].end)
		return pm->ix[lo].id;
	return SPULSE_NONE;
}

SPULSE_EXPORT int spulse_rec_frame_addr(struct spulse_recorder *r, uint32_t pid,
					uint64_t addr, bool is_kernel,
					bool is_return, uint32_t *id)
{
	struct pid_mods *pm;
	uint32_t i;

	if (is_return) {
		if (addr == 0)
			return -EOVERFLOW;
		addr -= 1;
	}
	if (is_kernel)
		return intern_frame(r, SPULSE_FRAME_KERNEL, SPULSE_NONE, addr, id);
	/* newest first: a mapping defined over an older one replaces it */
	pm = pid_mods(r, pid, false);
	if (pm && pm->n >= MOD_INDEX_MIN &&
	    (pm->ix_ok || mod_index_build(r, pm)) && !pm->ix_overlap) {
		const struct rec_mod *m;

		i = mod_index_find(pm, addr);
		if (i == SPULSE_NONE)
			return intern_frame(r, SPULSE_FRAME_USER, SPULSE_NONE,
					    addr, id);
		m = &r->mods[i];
		return intern_frame(r, SPULSE_FRAME_MODULE, i,
				    addr - m->start + m->file_offset, id);
	}
	for (i = pm ? pm->n : 0; i-- > 0;) {
		const struct rec_mod *m = &r->mods[pm->ids[i]];

		if (addr >= m->start && addr < m->end)
			/* no overflow: file_offset + (end - start) was checked */
			return intern_frame(r, SPULSE_FRAME_MODULE, pm->ids[i],
					    addr - m->start + m->file_offset,
					    id);
	}
	return intern_frame(r, SPULSE_FRAME_USER, SPULSE_NONE, addr, id);
}

/* ---- stacks ---- */

struct stack_key {
	const struct spulse_recorder *r;
	uint32_t parent, frame;
};

static bool stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct rec_stack *s = &k->r->stacks[id];

	return s->parent == k->parent && s->frame == k->frame;
}

SPULSE_EXPORT int spulse_rec_stack(struct spulse_recorder *r, uint32_t parent,
				   uint32_t frame, uint32_t *id)
{
	struct stack_key k = { r, parent, frame };
	uint32_t h = spulse_hash64_inline(((uint64_t)parent << 32) | frame,
					  spulse_htab_seed_inline(&r->stack_tab));
	struct spulse_htab_pos pos;
	uint32_t found, depth = 1;
	uint8_t *p;
	int ret;

	if (parent != SPULSE_NONE && parent >= r->nstacks)
		return -ENOENT;
	if (frame >= r->nframes)
		return -ENOENT;
	found = spulse_htab_lookup(&r->stack_tab, h, stack_eq, &k, &pos);
	if (found != SPULSE_NONE) {
		if (id)
			*id = found;
		return 0;
	}
	if (r->err)
		return r->err;
	if (parent != SPULSE_NONE) {
		if (r->frames[frame].kind == SPULSE_FRAME_TRUNCATED)
			return -EINVAL;
		depth = r->stacks[parent].depth + 1;
		if (depth > SPULSE_MAX_DEPTH)
			return -E2BIG;
	}
	ret = grow((void **)&r->stacks, &r->cap_stacks, r->nstacks,
		   sizeof(*r->stacks));
	if (ret)
		return ret;
	ret = spulse_htab_insert_at(&r->stack_tab, &pos, h, r->nstacks);
	if (ret)
		return ret;
	p = reserve(r);
	if (!p)
		return r->err;
	r->stacks[r->nstacks] = (struct rec_stack){ parent, frame, depth };
	if (id)
		*id = r->nstacks;
	ret = commit(r, spulse_enc_stack(p, r->nstacks,
				  parent == SPULSE_NONE ? SPULSE_STACK_ROOT :
				  (uint64_t)parent + 1, frame));
	r->nstacks++;
	return ret;
}

SPULSE_EXPORT int spulse_rec_stack_frames(struct spulse_recorder *r,
					  const uint32_t *frames, size_t n,
					  uint32_t *leaf)
{
	uint32_t node = SPULSE_NONE;
	size_t i;
	int ret;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = spulse_rec_stack(r, node, frames[i], &node);
		if (ret)
			return ret;
	}
	if (leaf)
		*leaf = node;
	return 0;
}

/* ---- threads ---- */

struct thread_key {
	const struct spulse_recorder *r;
	uint32_t pid, tid, len;
	const char *comm;
};

static bool thread_eq(const void *ctx, uint32_t id)
{
	const struct thread_key *k = ctx;
	const struct rec_thread *t = &k->r->threads[id];

	return t->pid == k->pid && t->tid == k->tid && t->comm_len == k->len &&
	       !memcmp(t->comm, k->comm, k->len);
}

SPULSE_EXPORT int spulse_rec_thread(struct spulse_recorder *r, uint32_t pid,
				    uint32_t tid, const char *comm, uint32_t *id)
{
	return spulse_rec_thread_n(r, pid, tid, comm,
				   comm ? strnlen(comm, SPULSE_MAX_COMM) : 0,
				   id);
}

SPULSE_EXPORT int spulse_rec_thread_n(struct spulse_recorder *r, uint32_t pid,
				      uint32_t tid, const char *comm,
				      size_t comm_len, uint32_t *id)
{
	struct thread_key k = { r, pid, tid, 0, comm ? comm : "" };
	uint32_t h, found;
	uint8_t *p;
	char *copy;
	int ret;

	if (comm_len > SPULSE_MAX_COMM || (comm_len && !comm))
		return -EINVAL;
	k.len = (uint32_t)comm_len;
	h = spulse_hash_bytes(k.comm, k.len,
			      spulse_htab_seed(&r->thread_tab) ^
			      (((uint64_t)pid << 32) | tid));
	found = spulse_htab_find(&r->thread_tab, h, thread_eq, &k);
	if (found != SPULSE_NONE) {
		if (id)
			*id = found;
		return 0;
	}
	if (r->err)
		return r->err;
	ret = grow((void **)&r->threads, &r->cap_threads, r->nthreads,
		   sizeof(*r->threads));
	if (ret)
		return ret;
	copy = malloc(k.len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, k.comm, k.len);
	copy[k.len] = '\0';
	ret = spulse_htab_insert(&r->thread_tab, h, r->nthreads);
	if (ret) {
		free(copy);
		return ret;
	}
	p = reserve(r);
	if (!p) {
		free(copy);
		return r->err;
	}
	r->threads[r->nthreads] = (struct rec_thread){ pid, tid, k.len, copy,
						      false };
	if (id)
		*id = r->nthreads;
	ret = commit(r, spulse_enc_thread(p, r->nthreads, pid, tid, copy, k.len));
	r->nthreads++;
	return ret;
}

/* ---- samples ---- */

/* Write a sample its caller has validated (no error, time and ids valid). */
static inline int rec_sample_checked(struct spulse_recorder *r,
				     int64_t time_ns, uint32_t thread,
				     uint32_t stack)
{
	uint8_t *p = reserve(r);

	if (!p)
		return r->err;
	/* both times are in [0, INT64_MAX]: the difference cannot overflow */
	r->len += spulse_enc_sample(p, time_ns - r->last_time, thread, stack);
	r->last_time = time_ns;
	r->samples++;
	if (r->len >= r->flush_bytes)
		return spulse_recorder_flush(r);
	return 0;
}

SPULSE_EXPORT int spulse_rec_sample(struct spulse_recorder *r, int64_t time_ns,
				    uint32_t thread, uint32_t stack)
{
	if (r->err)
		return r->err;
	if (time_ns < 0)
		return -EINVAL;
	if (time_ns > r->time_max)
		return -EOVERFLOW;
	if (thread >= r->nthreads || stack >= r->nstacks)
		return -ENOENT;
	return rec_sample_checked(r, time_ns, thread, stack);
}

/* ---- extension records (FORMAT.md section 3.10) ---- */

SPULSE_EXPORT int spulse_rec_cpu(struct spulse_recorder *r, uint32_t cpu)
{
	uint8_t *p;

	if (r->err)
		return r->err;
	if (cpu >= SPULSE_MAX_CPU)
		return -EINVAL;
	if (cpu == r->cpu)
		return 0;
	p = reserve(r);
	if (!p)
		return r->err;
	r->cpu = cpu;
	return commit(r, spulse_enc_ext_cpu(p, cpu));
}

SPULSE_EXPORT int spulse_rec_sample_cpu(struct spulse_recorder *r,
					int64_t time_ns, uint32_t thread,
					uint32_t stack, uint32_t cpu)
{
	int ret;

	if (r->err)
		return r->err;
	/* validate the sample first: no cpu record for a refused sample */
	if (time_ns < 0 || cpu >= SPULSE_MAX_CPU)
		return -EINVAL;
	if (time_ns > r->time_max)
		return -EOVERFLOW;
	if (thread >= r->nthreads || stack >= r->nstacks)
		return -ENOENT;
	/*
	 * Checked above: spulse_rec_sample()'s checks again, and no error
	 * (a cpu record that failed to flush returns it).
	 */
	if (cpu != r->cpu) {
		ret = spulse_rec_cpu(r, cpu);
		if (ret)
			return ret;
	}
	return rec_sample_checked(r, time_ns, thread, stack);
}

SPULSE_EXPORT int spulse_rec_samples(struct spulse_recorder *r,
				     const struct spulse_sample *v, size_t n,
				     size_t *done)
{
	size_t k = 0;
	int ret = 0;

	*done = 0;
	/* an error sets r->err and ends the loop: checked once */
	if (r->err)
		return r->err;
	while (k < n) {
		/*
		 * The run of samples that pass every check, need no cpu
		 * record and fit below both the flush size and reserve()'s
		 * room is encoded with the Recorder's state in registers
		 * (stores through the byte pointer would otherwise reload
		 * it per field); the first sample that does not goes through
		 * spulse_rec_sample_cpu(), the same steps one by one.
		 */
		size_t lim = r->cap - SPULSE_MAX_RECORD + 1;
		uint8_t *p = r->buf + r->len, *end;
		const uint64_t tmax = (uint64_t)r->time_max;
		const uint32_t nthreads = r->nthreads, nstacks = r->nstacks;
		const uint32_t cpu = r->cpu;
		int64_t last = r->last_time;
		size_t k0 = k;

		if (r->flush_bytes < lim)
			lim = r->flush_bytes;
		/* no cpu record yet: spulse_rec_sample_cpu() writes it */
		end = cpu < SPULSE_MAX_CPU ? r->buf + lim : p;
		for (; k < n && p < end; k++) {
			const struct spulse_sample *s = &v[k];

			if (((uint64_t)s->time_ns > tmax) |
			    (s->thread >= nthreads) | (s->stack >= nstacks) |
			    (s->cpu != cpu))
				break;
			p += spulse_enc_sample(p, s->time_ns - last, s->thread,
					       s->stack);
			last = s->time_ns;
		}
		r->len = (size_t)(p - r->buf);
		r->last_time = last;
		r->samples += k - k0;
		if (r->len >= r->flush_bytes) {
			ret = spulse_recorder_flush(r);
			if (ret) {
				/* as the sample whose commit failed */
				k -= k > k0;
				break;
			}
		}
		if (k == n)
			break;
		if (k > k0 && p >= end)
			continue;	/* room again: the fast run goes on */
		ret = spulse_rec_sample_cpu(r, v[k].time_ns, v[k].thread,
					    v[k].stack, v[k].cpu);
		if (ret)
			break;
		k++;
	}
	*done = k;
	return ret;
}

/* The reader's rules for kind 2 (docs/FORMAT.md section 3.10). */
static int check_offcpu(const struct spulse_recorder *r,
			const struct spulse_offcpu *iv)
{
	bool waker = iv->waker_thread != SPULSE_NONE;
	uint64_t total;

	if (iv->time_ns < 0 || iv->state > SPULSE_STATE_MAX ||
	    iv->cpu_out >= SPULSE_MAX_CPU || iv->cpu_in >= SPULSE_MAX_CPU)
		return -EINVAL;
	if (iv->thread >= r->nthreads || iv->stack >= r->nstacks)
		return -ENOENT;
	if (iv->state == SPULSE_STATE_RUNNABLE && (iv->blocked_ns || waker))
		return -EINVAL;
	if (iv->time_ns > r->time_max ||
	    __builtin_add_overflow(iv->blocked_ns, iv->runq_ns, &total) ||
	    total > (uint64_t)(r->time_max - iv->time_ns))
		return -EOVERFLOW;
	if (waker) {
		if (iv->waker_cpu >= SPULSE_MAX_CPU)
			return -EINVAL;
		if (iv->waker_thread >= r->nthreads ||
		    iv->waker_stack >= r->nstacks)
			return -ENOENT;
	}
	return 0;
}

SPULSE_EXPORT int spulse_rec_offcpu(struct spulse_recorder *r,
				    const struct spulse_offcpu *iv)
{
	struct spulse_offcpu_fields f;
	uint8_t *p;
	int ret;

	if (r->err)
		return r->err;
	ret = check_offcpu(r, iv);
	if (ret)
		return ret;
	p = reserve(r);
	if (!p)
		return r->err;
	f = (struct spulse_offcpu_fields){
		/* both times are in [0, INT64_MAX]: no overflow */
		.dt_ns = iv->time_ns - r->last_event,
		.thread = iv->thread, .stack = iv->stack, .state = iv->state,
		.cpu_out = iv->cpu_out, .cpu_in = iv->cpu_in,
		.blocked_ns = iv->blocked_ns, .runq_ns = iv->runq_ns,
		.has_waker = iv->waker_thread != SPULSE_NONE,
		.waker_thread = iv->waker_thread,
		.waker_stack = iv->waker_stack, .waker_cpu = iv->waker_cpu,
	};
	r->last_event = iv->time_ns;
	return commit(r, spulse_enc_ext_offcpu(p, &f));
}

SPULSE_EXPORT int spulse_rec_trigger(struct spulse_recorder *r,
				     const struct spulse_trigger *t)
{
	struct spulse_trigger_fields f;
	uint8_t *p;

	if (r->err)
		return r->err;
	if (t->time_ns < 0 || t->reason < SPULSE_TRIGGER_MANUAL ||
	    t->reason > SPULSE_TRIGGER_REASON_MAX ||
	    t->window_start_ns > t->window_end_ns ||
	    t->text_len > SPULSE_MAX_TRIGGER_TEXT || (t->text_len && !t->text))
		return -EINVAL;
	if (t->time_ns > r->time_max || t->window_end_ns > (uint64_t)r->time_max)
		return -EOVERFLOW;
	p = reserve(r);
	if (!p)
		return r->err;
	f = (struct spulse_trigger_fields){
		.dt_ns = t->time_ns - r->last_event,
		.reason = t->reason, .seq = t->seq, .value_ns = t->value_ns,
		.threshold_ns = t->threshold_ns,
		.window_start_ns = t->window_start_ns,
		.window_end_ns = t->window_end_ns,
		.text = t->text ? t->text : "", .text_len = t->text_len,
	};
	r->last_event = t->time_ns;
	return commit(r, spulse_enc_ext_trigger(p, &f));
}

/*
 * A raw extension record: a known kind must pass the reader's validation
 * against what this Recorder has defined (the decoder itself checks it, so
 * the rules cannot drift apart), and its clock or cpu becomes the
 * Recorder's; an unknown kind is written verbatim.
 */
SPULSE_EXPORT int spulse_rec_ext_raw(struct spulse_recorder *r, uint32_t kind,
				     const void *payload, size_t len)
{
	struct spulse_record rec;
	struct spulse_dec *dec;
	size_t n, used;
	uint8_t *p;
	int ret;

	if (r->err)
		return r->err;
	if (kind == 0 || len > SPULSE_EXT_MAX_LEN || (len && !payload))
		return -EINVAL;
	/* identities and thread sources: spulse_rec_identity/thread_source */
	if (kind == SPULSE_EXT_IDENTITY || kind == SPULSE_EXT_THREAD_SOURCE)
		return -EINVAL;
	p = reserve(r);
	if (!p)
		return r->err;
	n = spulse_put_ext_hdr(p, kind, len);
	if (len)
		memcpy(p + n, payload, len);
	n += len;
	if (kind <= SPULSE_EXT_KIND_MAX_KNOWN) {
		/* the ext decoders only look at the definition counts */
		dec = calloc(1, sizeof(*dec));
		if (!dec)
			return -ENOMEM;
		dec->defs.nthreads = r->nthreads;
		dec->defs.nstacks = r->nstacks;
		dec->event_ns = r->last_event;
		dec->time_max = r->time_max;
		dec->cpu = r->cpu;
		dec->max_ids = SPULSE_MAX_ID;
		dec->header_done = true;
		ret = spulse_dec_record(dec, p, n, 0, &rec, &used, NULL);
		if (ret == 1 && used == n) {
			if (kind == SPULSE_EXT_CPU)
				r->cpu = rec.u.cpu.cpu;
			else
				r->last_event = dec->event_ns;
		}
		free(dec);
		if (ret != 1 || used != n)
			return -EINVAL;
	}
	return commit(r, n);
}

/* ---- identity and thread sources (kinds 4 and 5) ---- */

static size_t str_len_max(const char *s, size_t limit, bool *ok)
{
	size_t n;

	if (!s)
		return 0;
	n = strnlen(s, limit + 1);
	if (n > limit)
		*ok = false;
	return n;
}

static int rec_identity(struct spulse_recorder *r,
			const struct spulse_identity *id, bool use_lens,
			uint32_t *source)
{
	struct spulse_identity_fields f;
	bool ok = true;
	uint8_t *p;

	if (r->err)
		return r->err;
	if (!id)
		return -EINVAL;
	f = (struct spulse_identity_fields){
		.source = r->nidents, .recording_id = id->recording_id,
		.start_us = id->start_us,
		.host = id->host ? id->host : "",
		.machine_id = id->machine_id ? id->machine_id : "",
		.boot_id = id->boot_id ? id->boot_id : "",
		.kernel = id->kernel ? id->kernel : "",
	};
	if (use_lens) {
		f.host_len = id->host_len;
		f.machine_id_len = id->machine_id_len;
		f.boot_id_len = id->boot_id_len;
		f.kernel_len = id->kernel_len;
		ok = f.host_len <= SPULSE_MAX_HOST &&
		     f.machine_id_len <= SPULSE_MAX_MACHINE_ID &&
		     f.boot_id_len <= SPULSE_MAX_BOOT_ID &&
		     f.kernel_len <= SPULSE_MAX_KERNEL &&
		     (id->host || !f.host_len) &&
		     (id->machine_id || !f.machine_id_len) &&
		     (id->boot_id || !f.boot_id_len) &&
		     (id->kernel || !f.kernel_len);
	} else {
		f.host_len = str_len_max(id->host, SPULSE_MAX_HOST, &ok);
		f.machine_id_len = str_len_max(id->machine_id,
					       SPULSE_MAX_MACHINE_ID, &ok);
		f.boot_id_len = str_len_max(id->boot_id, SPULSE_MAX_BOOT_ID,
					    &ok);
		f.kernel_len = str_len_max(id->kernel, SPULSE_MAX_KERNEL, &ok);
	}
	if (!ok || id->start_us > SPULSE_MAX_START_US)
		return -EINVAL;
	if (r->nidents >= SPULSE_MAX_SOURCES)
		return -ENOSPC;
	p = reserve(r);
	if (!p)
		return r->err;
	if (source)
		*source = r->nidents;
	r->nidents++;
	return commit(r, spulse_enc_ext_identity(p, &f));
}

SPULSE_EXPORT int spulse_rec_identity(struct spulse_recorder *r,
				      const struct spulse_identity *id,
				      uint32_t *source)
{
	return rec_identity(r, id, false, source);
}

SPULSE_EXPORT int spulse_rec_identity_n(struct spulse_recorder *r,
					const struct spulse_identity *id,
					uint32_t *source)
{
	return rec_identity(r, id, true, source);
}

SPULSE_EXPORT int spulse_rec_thread_source(struct spulse_recorder *r,
					   uint32_t thread, uint32_t source)
{
	uint8_t *p;

	if (r->err)
		return r->err;
	if (thread >= r->nthreads || source >= r->nidents)
		return -ENOENT;
	if (r->threads[thread].has_source)
		return -EEXIST;
	p = reserve(r);
	if (!p)
		return r->err;
	r->threads[thread].has_source = true;
	return commit(r, spulse_enc_ext_thread_source(p, thread, source));
}
