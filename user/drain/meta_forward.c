// SPDX-License-Identifier: MIT
/*
 * meta stream -> spool: module definitions re-defined through the Recorder
 * (meta id -> spool id), deactivations and Python records copied, in meta's
 * order. A deactivation (exit, exec, munmap) is held until the samples read
 * before it have been written, so they still resolve against the modules
 * mapped when they were taken (docs/DRAIN.md, "Meta records").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "meta_forward.h"

void drain_meta_init(struct drain_meta_fwd *m)
{
	memset(m, 0, sizeof(*m));
	m->gen = 1;
}

void drain_meta_free(struct drain_meta_fwd *m)
{
	free(m->mod_map);
	free(m->act_pos);
	free(m->act);
	free(m->pid_next);
	free(m->ph);
	free(m->pend);
	memset(m, 0, sizeof(*m));
}

static int meta_map_set(struct drain_meta_fwd *d, uint32_t meta_id,
			uint32_t id)
{
	if (meta_id >= d->mod_cap) {
		size_t cap = d->mod_cap ? d->mod_cap * 2 : 64;
		uint32_t *v;

		while (cap <= meta_id)
			cap *= 2;
		v = realloc(d->mod_map, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->mod_map = v;
		v = realloc(d->act_pos, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + d->mod_cap, 0xff, (cap - d->mod_cap) * sizeof(*v));
		d->act_pos = v;
		v = realloc(d->act, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->act = v;
		v = realloc(d->pid_next, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->pid_next = v;
		d->mod_cap = cap;
	}
	d->mod_map[meta_id] = id;
	return 0;
}

/* ---- active modules: a dense set, and a list per pid (O(1) each) ---- */

static struct drain_pid_head *pid_slot(struct drain_meta_fwd *d, uint32_t pid)
{
	size_t i;

	if (2 * (d->phn + 1) > d->phcap) {
		size_t cap = d->phcap ? d->phcap * 2 : 64, k;
		struct drain_pid_head *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (k = 0; k < d->phcap; k++) {
			struct drain_pid_head *e = &d->ph[k];

			if (!e->used)
				continue;
			for (i = (e->pid * 2654435761u) & (cap - 1); v[i].used;
			     i = (i + 1) & (cap - 1))
				;
			v[i] = *e;
		}
		free(d->ph);
		d->ph = v;
		d->phcap = cap;
	}
	for (i = (pid * 2654435761u) & (d->phcap - 1);;
	     i = (i + 1) & (d->phcap - 1)) {
		struct drain_pid_head *e = &d->ph[i];

		if (e->used && e->pid == pid)
			return e;
		if (!e->used) {
			e->used = true;
			e->pid = pid;
			e->head = UINT32_MAX;
			d->phn++;
			return e;
		}
	}
}

static void set_inactive(struct drain_meta_fwd *d, uint32_t id)
{
	uint32_t pos = d->act_pos[id], last;

	if (pos == UINT32_MAX)
		return;
	last = d->act[--d->nact];
	d->act[pos] = last;
	d->act_pos[last] = pos;
	d->act_pos[id] = UINT32_MAX;
}

static int set_active(struct drain_meta_fwd *d, uint32_t id, uint32_t pid)
{
	struct drain_pid_head *h = pid_slot(d, pid);

	if (!h)
		return -ENOMEM;
	d->act_pos[id] = (uint32_t)d->nact;
	d->act[d->nact++] = id;
	d->pid_next[id] = h->head;
	h->head = id;
	return 0;
}

/* Every module of @pid inactive; each id is visited once over the run. */
static int pid_inactive(struct drain_meta_fwd *d, uint32_t pid)
{
	struct drain_pid_head *h = pid_slot(d, pid);
	uint32_t id;

	if (!h)
		return -ENOMEM;
	for (id = h->head; id != UINT32_MAX; id = d->pid_next[id])
		set_inactive(d, id);
	h->head = UINT32_MAX;
	return 0;
}

int drain_meta_redefine(struct drain_meta_fwd *d, struct spulse_recorder *rec,
			const struct spulse_defs *meta_defs)
{
	size_t i;

	for (i = 0; i < d->nact; i++) {
		uint32_t id = d->act[i];
		struct spulse_module m;
		int ret;

		ret = spulse_defs_module(meta_defs, id, &m);
		if (ret < 0)
			return ret;
		ret = spulse_rec_module(rec, m.pid, m.start, m.end,
					m.file_offset, m.path, m.build_id,
					m.build_id_len, &d->mod_map[id]);
		if (ret < 0)
			return ret;
	}
	d->gen++;
	return 0;
}

/* Apply one validated meta record to the spool. */
static int meta_apply(struct drain_meta_fwd *d, struct spulse_recorder *rec,
		      const struct spulse_record *r)
{
	const struct spulse_module *m = &r->u.module;
	uint32_t id;
	int ret = 0;

	switch (r->tag) {
	case SPULSE_TAG_MODULE:
		ret = spulse_rec_module(rec, m->pid, m->start, m->end,
					m->file_offset, m->path, m->build_id,
					m->build_id_len, &id);
		if (!ret)
			ret = meta_map_set(d, m->id, id);
		if (!ret)
			ret = set_active(d, m->id, m->pid);
		d->gen++;
		break;
	case SPULSE_TAG_MODULE_DEACTIVATE:
		/* the stream validated the id: it is defined and active */
		ret = spulse_rec_module_deactivate(rec,
				d->mod_map[r->u.module_deactivate.module]);
		set_inactive(d, r->u.module_deactivate.module);
		d->gen++;
		break;
	case SPULSE_TAG_PROCESS_DEACTIVATE:
		ret = spulse_rec_process_deactivate(rec,
				r->u.process_deactivate.pid);
		if (!ret)
			ret = pid_inactive(d, r->u.process_deactivate.pid);
		d->gen++;
		break;
	case SPULSE_TAG_PYTHON:
		ret = spulse_rec_python(rec, r->u.python.pid,
					r->u.python.state == SPULSE_PYTHON_ENTER);
		break;
	default:
		/* frames/stacks/threads/samples do not belong in meta */
		break;
	}
	return ret < 0 ? ret : 0;
}

int drain_meta_apply_pending(struct drain_meta_fwd *d,
			     struct spulse_recorder *rec, int64_t next_ns)
{
	while (d->npend) {
		struct drain_pending_meta *p = &d->pend[d->head];
		int ret;

		if (p->barrier && next_ns <= p->until_ns)
			return 0;
		ret = meta_apply(d, rec, &p->r);
		if (ret < 0)
			return ret;
		d->head = (d->head + 1) % d->cap;
		d->npend--;
	}
	return 0;
}

int64_t drain_meta_wait_ns(const struct drain_meta_fwd *d)
{
	const struct drain_pending_meta *p;

	if (!d->npend)
		return INT64_MAX;
	p = &d->pend[d->head];
	/* the same test as drain_meta_apply_pending()'s, solved for next_ns */
	return p->barrier ? p->until_ns : INT64_MIN;
}

static int meta_hold(struct drain_meta_fwd *d, const struct spulse_record *r,
		     int64_t until_ns, bool barrier)
{
	struct drain_pending_meta *p;

	if (d->npend == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16, i;
		struct drain_pending_meta *v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (i = 0; i < d->npend; i++)
			v[i] = d->pend[(d->head + i) % d->cap];
		free(d->pend);
		d->pend = v;
		d->cap = cap;
		d->head = 0;
	}
	p = &d->pend[(d->head + d->npend) % d->cap];
	p->r = *r;	/* module path/build-id point into the stream's defs */
	p->until_ns = until_ns;
	p->barrier = barrier;
	d->npend++;
	return 0;
}

int drain_meta_record(struct drain_meta_fwd *d, struct spulse_recorder *rec,
		      const struct spulse_record *r, bool samples_read,
		      int64_t newest_ns)
{
	bool deact = r->tag == SPULSE_TAG_MODULE_DEACTIVATE ||
		     r->tag == SPULSE_TAG_PROCESS_DEACTIVATE;

	if (deact && samples_read)
		return meta_hold(d, r, newest_ns, true);
	if (d->npend)
		return meta_hold(d, r, 0, false);
	return meta_apply(d, rec, r);
}
