// SPDX-License-Identifier: MIT
/*
 * Lazy per-CPU -> global id mapping through the Recorder's interning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "renumber.h"

#define PID_ANY DRAIN_PID_ANY

static void idvec_free(struct drain_idvec *vec)
{
	free(vec->v);
	free(vec->alt);
}

void drain_idmap_free(struct drain_idmap *m)
{
	idvec_free(&m->threads);
	idvec_free(&m->frames);
	idvec_free(&m->stacks);
	memset(m, 0, sizeof(*m));
}

/* slot()'s slow path: grow @vec to hold @id (new entries zeroed). */
static __attribute__((noinline)) struct drain_idmap_ent *
slot_grow(struct drain_idvec *vec, uint32_t id)
{
	size_t cap = vec->cap ? vec->cap : 64;
	struct drain_idmap_ent *v;

	while (cap <= id)
		cap *= 2;
	v = realloc(vec->v, cap * sizeof(*v));
	if (!v)
		return NULL;
	memset(v + vec->cap, 0, (cap - vec->cap) * sizeof(*v));
	vec->v = v;
	vec->cap = cap;
	return &vec->v[id];
}

/* The entry of @id, growing @vec when needed (NULL: no memory). Per
 * sample and per stack node: the common case inlines to a compare. */
static inline struct drain_idmap_ent *slot(struct drain_idvec *vec, uint32_t id)
{
	if (__builtin_expect(id < vec->cap, 1))
		return &vec->v[id];
	return slot_grow(vec, id);
}

static size_t alt_hash(uint32_t id, uint32_t pid)
{
	uint64_t h = ((uint64_t)pid << 32 | id) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32);
}

/* The alternative mapping of (@id, @pid) in generation @gen, or NULL. */
static const struct drain_idalt_ent *alt_find(const struct drain_idvec *vec,
					      uint32_t id, uint32_t pid,
					      uint32_t gen)
{
	size_t mask = vec->altcap - 1, i;

	if (!vec->altlen)
		return NULL;
	for (i = alt_hash(id, pid) & mask; vec->alt[i].gen; i = (i + 1) & mask)
		if (vec->alt[i].id == id && vec->alt[i].pid == pid)
			return vec->alt[i].gen == gen ? &vec->alt[i] : NULL;
	return NULL;
}

static struct drain_idalt_ent *alt_slot(struct drain_idalt_ent *t, size_t cap,
					uint32_t id, uint32_t pid)
{
	size_t mask = cap - 1, i;

	for (i = alt_hash(id, pid) & mask; t[i].gen; i = (i + 1) & mask)
		if (t[i].id == id && t[i].pid == pid)
			break;
	return &t[i];
}

/*
 * Set the alternative mapping of (@id, @pid). Growing the table keeps only
 * the current generation's entries (the others can never match again).
 */
static int alt_put(struct drain_idvec *vec, uint32_t id, uint32_t pid,
		   uint32_t gen, uint32_t global)
{
	struct drain_idalt_ent *e;

	if (2 * (vec->altlen + 1) > vec->altcap) {
		size_t cap = vec->altcap ? 2 * vec->altcap : 64, i, n = 0;
		struct drain_idalt_ent *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (i = 0; i < vec->altcap; i++)
			if (vec->alt[i].gen == gen) {
				*alt_slot(t, cap, vec->alt[i].id,
					  vec->alt[i].pid) = vec->alt[i];
				n++;
			}
		free(vec->alt);
		vec->alt = t;
		vec->altcap = cap;
		vec->altlen = n;
	}
	e = alt_slot(vec->alt, vec->altcap, id, pid);
	if (!e->gen)
		vec->altlen++;
	*e = (struct drain_idalt_ent){ id, pid, gen, global };
	return 0;
}

/*
 * The cached mapping of local @id for (@pid, @gen): 1 and *@global (and
 * *@dep: whether it depends on the pid) when there is one, else 0.
 */
static inline int cached(const struct drain_idvec *vec, const struct drain_idmap_ent *e,
		  uint32_t id, uint32_t pid, uint32_t gen, uint32_t *global,
		  bool *dep)
{
	const struct drain_idalt_ent *a;

	if (drain_idmap_valid(e, pid, gen)) {
		*global = e->global;
		*dep = e->pid != PID_ANY;
		return 1;
	}
	/* the direct entry holds another process of this generation */
	if (e->gen != gen)
		return 0;
	a = alt_find(vec, id, pid, gen);
	if (!a)
		return 0;
	*global = a->global;
	*dep = true;
	return 1;
}

/*
 * Remember local @id -> @global for @pid (PID_ANY: every pid) in @gen. The
 * direct entry takes it unless it holds another process's mapping of this
 * generation; then the alternative table does. @id < vec->cap.
 */
static inline int remember(struct drain_idvec *vec, uint32_t id, uint32_t pid,
		    uint32_t gen, uint32_t global)
{
	struct drain_idmap_ent *e = &vec->v[id];

	if (pid != PID_ANY && e->gen == gen && e->pid != PID_ANY &&
	    e->pid != pid)
		return alt_put(vec, id, pid, gen, global);
	e->global = global;
	e->pid = pid;
	e->gen = gen;
	return 0;
}

static int map_frame(struct spulse_recorder *rec,
		     const struct spulse_defs *defs, struct drain_idmap *map,
		     uint32_t gen, uint32_t pid, uint32_t id, uint32_t *out,
		     bool *pid_dependent)
{
	struct drain_idmap_ent *e = slot(&map->frames, id);
	struct spulse_frame f;
	uint32_t g;
	int ret;

	if (!e)
		return -ENOMEM;
	if (cached(&map->frames, e, id, pid, gen, out, pid_dependent))
		return 0;
	ret = spulse_defs_frame(defs, id, &f);
	if (ret < 0)
		return ret;
	switch (f.kind) {
	case SPULSE_FRAME_USER:
		ret = spulse_rec_frame_addr(rec, pid, f.addr, false, false, &g);
		*pid_dependent = true;
		break;
	case SPULSE_FRAME_KERNEL:
		ret = spulse_rec_frame_abs(rec, SPULSE_FRAME_KERNEL, f.addr, &g);
		*pid_dependent = false;
		break;
	case SPULSE_FRAME_TRUNCATED:
		ret = spulse_rec_frame_truncated(rec, &g);
		*pid_dependent = false;
		break;
	default:
		/* per-CPU streams carry no modules, so no kind 0 frames */
		return -EBADMSG;
	}
	if (ret < 0)
		return ret;
	ret = remember(&map->frames, id, *pid_dependent ? pid : PID_ANY, gen, g);
	if (ret < 0)
		return ret;
	*out = g;
	return 0;
}

/* Out of line: its frame (two SPULSE_MAX_DEPTH arrays) would otherwise cost
 * drain_map_sample()'s mapped-leaf fast path a full prologue per sample. */
static __attribute__((noinline)) int map_stack(struct spulse_recorder *rec,
		     const struct spulse_defs *defs, struct drain_idmap *map,
		     uint32_t gen, uint32_t pid, uint32_t leaf, uint32_t *out)
{
	uint32_t chain[SPULSE_MAX_DEPTH + 1], frames[SPULSE_MAX_DEPTH + 1];
	uint32_t n = 0, parent = SPULSE_NONE, id = leaf;
	bool parent_dep = false;
	int ret;

	/* Walk up from the leaf to the first node already mapped (or root). */
	for (;;) {
		struct drain_idmap_ent *e = slot(&map->stacks, id);
		struct spulse_stack st;

		if (!e)
			return -ENOMEM;
		if (cached(&map->stacks, e, id, pid, gen, &parent, &parent_dep))
			break;
		if (n > SPULSE_MAX_DEPTH)
			return -EBADMSG;
		ret = spulse_defs_stack(defs, id, &st);
		if (ret < 0)
			return ret;
		chain[n] = id;
		frames[n++] = st.frame;
		if (st.parent == SPULSE_NONE)
			break;
		id = st.parent;
	}
	/* Map downwards: root side first so parents exist. */
	while (n) {
		uint32_t gf, g;
		bool fdep;

		id = chain[--n];
		ret = map_frame(rec, defs, map, gen, pid, frames[n], &gf, &fdep);
		if (ret < 0)
			return ret;
		ret = spulse_rec_stack(rec, parent, gf, &g);
		if (ret < 0)
			return ret;
		parent_dep = parent_dep || fdep;
		/* slot(id) succeeded on the way up: id < cap */
		ret = remember(&map->stacks, id, parent_dep ? pid : PID_ANY,
			       gen, g);
		if (ret < 0)
			return ret;
		parent = g;
	}
	*out = parent;
	return 0;
}

int drain_map_thread(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t thread, uint32_t *gthread,
		     uint32_t *pid)
{
	struct drain_idmap_ent *e = slot(&map->threads, thread);
	struct spulse_thread th;
	int ret;

	if (!e)
		return -ENOMEM;
	if (!e->gen) {
		ret = spulse_defs_thread(defs, thread, &th);
		if (ret < 0)
			return ret;
		ret = spulse_rec_thread(rec, th.pid, th.tid, th.comm, &e->global);
		if (ret < 0)
			return ret;
		e->pid = th.pid;	/* the thread's process, not PID_ANY */
		e->gen = 1;
	}
	*gthread = e->global;
	*pid = e->pid;
	return 0;
}

int drain_map_stack(struct spulse_recorder *rec, const struct spulse_defs *defs,
		    struct drain_idmap *map, uint32_t gen, uint32_t pid,
		    uint32_t stack, uint32_t *gstack)
{
	return map_stack(rec, defs, map, gen, pid, stack, gstack);
}

int drain_map_sample(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t gen, uint32_t thread,
		     uint32_t stack, uint32_t *gthread, uint32_t *gstack)
{
	const struct drain_idmap_ent *e;
	uint32_t pid;
	int ret;

	/* per sample: the thread and the leaf are nearly always mapped */
	if (thread < map->threads.cap && map->threads.v[thread].gen) {
		*gthread = map->threads.v[thread].global;
		pid = map->threads.v[thread].pid;
	} else {
		ret = drain_map_thread(rec, defs, map, thread, gthread, &pid);
		if (ret < 0)
			return ret;
	}
	if (stack < map->stacks.cap) {
		e = &map->stacks.v[stack];
		if (drain_idmap_valid(e, pid, gen)) {
			*gstack = e->global;
			return 0;
		}
	}
	return map_stack(rec, defs, map, gen, pid, stack, gstack);
}

/* drain_map_thread() with a mapped thread inline */
static inline int map_thread_cached(struct spulse_recorder *rec,
				    const struct spulse_defs *defs,
				    struct drain_idmap *map, uint32_t thread,
				    uint32_t *gthread, uint32_t *pid)
{
	if (thread < map->threads.cap && map->threads.v[thread].gen) {
		*gthread = map->threads.v[thread].global;
		*pid = map->threads.v[thread].pid;
		return 0;
	}
	return drain_map_thread(rec, defs, map, thread, gthread, pid);
}

/* map_stack() with a leaf mapped directly for (@pid, @gen) inline */
static inline int map_stack_cached(struct spulse_recorder *rec,
				   const struct spulse_defs *defs,
				   struct drain_idmap *map, uint32_t gen,
				   uint32_t pid, uint32_t stack, uint32_t *gstack)
{
	if (stack < map->stacks.cap && drain_idmap_valid(&map->stacks.v[stack], pid, gen)) {
		*gstack = map->stacks.v[stack].global;
		return 0;
	}
	return map_stack(rec, defs, map, gen, pid, stack, gstack);
}

int drain_map_offcpu(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t gen,
		     struct spulse_offcpu *iv)
{
	uint32_t pid;
	int ret;

	/* as drain_map_sample(): mapped threads and leaves inline */
	ret = map_thread_cached(rec, defs, map, iv->thread, &iv->thread, &pid);
	if (ret < 0)
		return ret;
	ret = map_stack_cached(rec, defs, map, gen, pid, iv->stack, &iv->stack);
	if (ret < 0 || iv->waker_thread == SPULSE_NONE)
		return ret;
	/* the waker's user frames resolve in the waker's process */
	ret = map_thread_cached(rec, defs, map, iv->waker_thread,
				&iv->waker_thread, &pid);
	if (ret < 0)
		return ret;
	return map_stack_cached(rec, defs, map, gen, pid, iv->waker_stack,
				&iv->waker_stack);
}
