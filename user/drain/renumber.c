// SPDX-License-Identifier: MIT
/*
 * Lazy per-CPU -> global id mapping through the Recorder's interning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "renumber.h"

#define PID_ANY UINT32_MAX	/* cache entry valid for every pid */

void drain_idmap_free(struct drain_idmap *m)
{
	free(m->threads.v);
	free(m->frames.v);
	free(m->stacks.v);
	memset(m, 0, sizeof(*m));
}

static struct drain_idmap_ent *slot(struct drain_idvec *vec, uint32_t id)
{
	if (id >= vec->cap) {
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
	}
	return &vec->v[id];
}

static bool valid(const struct drain_idmap_ent *e, uint32_t pid, uint32_t gen)
{
	return e->gen && (e->pid == PID_ANY ||
			  (e->pid == pid && e->gen == gen));
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
	if (valid(e, pid, gen)) {
		*out = e->global;
		*pid_dependent = e->pid != PID_ANY;
		return 0;
	}
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
	e->global = g;
	e->pid = *pid_dependent ? pid : PID_ANY;
	e->gen = gen;
	*out = g;
	return 0;
}

static int map_stack(struct spulse_recorder *rec,
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
		if (valid(e, pid, gen)) {
			parent = e->global;
			parent_dep = e->pid != PID_ANY;
			break;
		}
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
		struct drain_idmap_ent *e;
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
		e = slot(&map->stacks, id);
		if (!e)
			return -ENOMEM;
		e->global = g;
		e->pid = parent_dep ? pid : PID_ANY;
		e->gen = gen;
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
	ret = spulse_defs_thread(defs, thread, &th);
	if (ret < 0)
		return ret;
	if (!e->gen) {
		ret = spulse_rec_thread(rec, th.pid, th.tid, th.comm, &e->global);
		if (ret < 0)
			return ret;
		e->pid = PID_ANY;
		e->gen = 1;
	}
	*gthread = e->global;
	*pid = th.pid;
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
	uint32_t pid;
	int ret = drain_map_thread(rec, defs, map, thread, gthread, &pid);

	if (ret < 0)
		return ret;
	return map_stack(rec, defs, map, gen, pid, stack, gstack);
}

int drain_map_offcpu(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t gen,
		     struct spulse_offcpu *iv)
{
	uint32_t pid;
	int ret;

	ret = drain_map_thread(rec, defs, map, iv->thread, &iv->thread, &pid);
	if (ret < 0)
		return ret;
	ret = map_stack(rec, defs, map, gen, pid, iv->stack, &iv->stack);
	if (ret < 0 || iv->waker_thread == SPULSE_NONE)
		return ret;
	/* the waker's user frames resolve in the waker's process */
	ret = drain_map_thread(rec, defs, map, iv->waker_thread,
			       &iv->waker_thread, &pid);
	if (ret < 0)
		return ret;
	return map_stack(rec, defs, map, gen, pid, iv->waker_stack,
			 &iv->waker_stack);
}
