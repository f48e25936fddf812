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
	free(m->mod_pid);
	free(m->mod_active);
	free(m->pend);
	memset(m, 0, sizeof(*m));
}

static int meta_map_set(struct drain_meta_fwd *d, uint32_t meta_id,
			uint32_t id)
{
	if (meta_id >= d->mod_cap) {
		size_t cap = d->mod_cap ? d->mod_cap * 2 : 64;
		uint32_t *v, *p;
		bool *a;

		while (cap <= meta_id)
			cap *= 2;
		v = realloc(d->mod_map, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->mod_map = v;
		p = realloc(d->mod_pid, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		d->mod_pid = p;
		a = realloc(d->mod_active, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		memset(a + d->mod_cap, 0, (cap - d->mod_cap) * sizeof(*a));
		d->mod_active = a;
		d->mod_cap = cap;
	}
	d->mod_map[meta_id] = id;
	return 0;
}

int drain_meta_redefine(struct drain_meta_fwd *d, struct spulse_recorder *rec,
			const struct spulse_defs *meta_defs)
{
	size_t i;

	for (i = 0; i < d->mod_cap; i++) {
		struct spulse_module m;
		int ret;

		if (!d->mod_active[i])
			continue;
		ret = spulse_defs_module(meta_defs, (uint32_t)i, &m);
		if (ret < 0)
			return ret;
		ret = spulse_rec_module(rec, m.pid, m.start, m.end,
					m.file_offset, m.path, m.build_id,
					m.build_id_len, &d->mod_map[i]);
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
		if (!ret) {
			d->mod_pid[m->id] = m->pid;
			d->mod_active[m->id] = true;
		}
		d->gen++;
		break;
	case SPULSE_TAG_MODULE_DEACTIVATE:
		/* the stream validated the id: it is defined and active */
		ret = spulse_rec_module_deactivate(rec,
				d->mod_map[r->u.module_deactivate.module]);
		d->mod_active[r->u.module_deactivate.module] = false;
		d->gen++;
		break;
	case SPULSE_TAG_PROCESS_DEACTIVATE:
		ret = spulse_rec_process_deactivate(rec,
				r->u.process_deactivate.pid);
		for (id = 0; id < d->mod_cap; id++)
			if (d->mod_active[id] &&
			    d->mod_pid[id] == r->u.process_deactivate.pid)
				d->mod_active[id] = false;
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
