// SPDX-License-Identifier: MIT
/*
 * Windowed k-way merge of per-CPU sample queues (see merge.h for the rule).
 * The earliest head is found by a linear scan over the sources: the number
 * of CPUs is small next to the number of samples held per window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"

int drain_merge_init(struct drain_merge *m, unsigned int nsrc,
		     int64_t window_ns)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->q = calloc(nsrc ? nsrc : 1, sizeof(*m->q));
	if (!m->q)
		return -ENOMEM;
	m->nsrc = nsrc;
	m->window_ns = window_ns;
	for (i = 0; i < nsrc; i++)
		m->q[i].dry_ns = INT64_MIN;
	return 0;
}

void drain_merge_free(struct drain_merge *m)
{
	unsigned int i;

	for (i = 0; i < m->nsrc; i++) {
		struct drain_mqueue *q = &m->q[i];
		size_t k;

		for (k = 0; k < q->len; k++) {
			struct drain_msample *s = &q->v[(q->head + k) % q->cap];

			if (s->kind == DRAIN_ITEM_TRIGGER)
				free(s->x.trig.text);
		}
		free(q->v);
	}
	free(m->q);
	memset(m, 0, sizeof(*m));
}

static int grow(struct drain_mqueue *q)
{
	size_t cap = q->cap ? q->cap * 2 : 256, i;
	struct drain_msample *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < q->len; i++)
		v[i] = q->v[(q->head + i) % q->cap];
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
	return 0;
}

int drain_merge_push(struct drain_merge *m, unsigned int src,
		     const struct drain_msample *s)
{
	struct drain_mqueue *q = &m->q[src];

	if (q->len == q->cap && grow(q))
		return -ENOMEM;
	q->v[(q->head + q->len) % q->cap] = *s;
	q->len++;
	m->queued++;
	if (!q->seen || s->time_ns > q->last_ns)
		q->last_ns = s->time_ns;
	q->seen = true;
	if (!m->any || s->time_ns > m->newest_ns)
		m->newest_ns = s->time_ns;
	m->any = true;
	return 0;
}

void drain_merge_finish(struct drain_merge *m, unsigned int src)
{
	m->q[src].finished = true;
}

void drain_merge_dry(struct drain_merge *m, unsigned int src, int64_t now_ns)
{
	m->q[src].dry_ns = now_ns;
}

/*
 * Is every live source past @b or known to hold nothing earlier? Sets
 * *passed when every live source has pushed a time >= @b's (rule 1),
 * *seen_passed when every live source that pushed something has, and
 * *unseen_dry / *lagging_dry when the sources left out (never pushed /
 * not past @b) have all been read dry since @b was queued.
 */
static void survey(const struct drain_merge *m, const struct drain_msample *b,
		   bool *passed, bool *seen_passed, bool *unseen_dry,
		   bool *lagging_dry)
{
	unsigned int i;

	*passed = *seen_passed = *unseen_dry = *lagging_dry = true;
	for (i = 0; i < m->nsrc; i++) {
		const struct drain_mqueue *q = &m->q[i];
		bool dry = q->dry_ns >= b->queued_ns;

		if (q->finished || (q->seen && q->last_ns >= b->time_ns))
			continue;
		*passed = false;
		if (q->seen)
			*seen_passed = false;
		else if (!dry)
			*unseen_dry = false;
		if (!dry)
			*lagging_dry = false;
	}
}

int drain_merge_pop(struct drain_merge *m, int64_t now_ns, bool drain,
		    unsigned int *src, struct drain_msample *out)
{
	const struct drain_msample *best = NULL;
	unsigned int i, bi = 0;

	if (!m->queued)
		return 0;
	for (i = 0; i < m->nsrc; i++) {
		const struct drain_mqueue *q = &m->q[i];
		const struct drain_msample *h;

		if (!q->len)
			continue;
		h = &q->v[q->head];
		if (!best || h->time_ns < best->time_ns) {
			best = h;
			bi = i;
		}
	}
	if (!drain) {
		bool passed, seen_passed, unseen_dry, lagging_dry;

		survey(m, best, &passed, &seen_passed, &unseen_dry,
		       &lagging_dry);
		if (!passed &&
		    !(seen_passed && unseen_dry &&
		      m->newest_ns - best->time_ns >= m->window_ns) &&
		    !(lagging_dry && now_ns - best->queued_ns >= m->window_ns))
			return 0;
	}
	*out = *best;
	*src = bi;
	m->q[bi].head = (m->q[bi].head + 1) % m->q[bi].cap;
	m->q[bi].len--;
	m->queued--;
	return 1;
}
