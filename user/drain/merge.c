// SPDX-License-Identifier: MIT
/*
 * Windowed k-way merge of per-CPU sample queues (see merge.h for the rule).
 * The earliest head is found by a linear scan over the sources' head times
 * (one array: the number of CPUs is small next to the number of samples
 * held per window); rule 1 is checked against a cached watermark, and only
 * a head past it looks at every source (survey()), which also refreshes
 * the watermark. Queues are power-of-two rings (index & mask).
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
	m->head_ns = calloc(nsrc ? nsrc : 1, sizeof(*m->head_ns));
	if (!m->q || !m->head_ns) {
		free(m->q);
		free(m->head_ns);
		memset(m, 0, sizeof(*m));
		return -ENOMEM;
	}
	m->nsrc = nsrc;
	m->window_ns = window_ns;
	m->wm = INT64_MIN;
	for (i = 0; i < nsrc; i++) {
		m->q[i].dry_ns = INT64_MIN;
		m->head_ns[i] = INT64_MAX;
	}
	return 0;
}

void drain_merge_free(struct drain_merge *m)
{
	unsigned int i;

	for (i = 0; i < m->nsrc; i++) {
		struct drain_mqueue *q = &m->q[i];
		size_t k, x = 0;

		for (k = 0; k < q->len; k++) {
			const struct drain_mitem *s =
				&q->v[(q->head + k) & (q->cap - 1)];

			if (s->kind == DRAIN_ITEM_SAMPLE)
				continue;
			if (s->kind == DRAIN_ITEM_TRIGGER)
				free(q->xv[(q->xhead + x) & (q->xcap - 1)].trig.text);
			x++;
		}
		free(q->v);
		free(q->xv);
	}
	free(m->q);
	free(m->head_ns);
	memset(m, 0, sizeof(*m));
}

static int grow(struct drain_mqueue *q)
{
	size_t cap = q->cap ? q->cap * 2 : 256, i;
	struct drain_mitem *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < q->len; i++)
		v[i] = q->v[(q->head + i) & (q->cap - 1)];
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
	return 0;
}

static int grow_payloads(struct drain_mqueue *q)
{
	size_t cap = q->xcap ? q->xcap * 2 : 16, i;
	union drain_mpayload *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < q->xlen; i++)
		v[i] = q->xv[(q->xhead + i) & (q->xcap - 1)];
	free(q->xv);
	q->xv = v;
	q->xcap = cap;
	q->xhead = 0;
	return 0;
}

int drain_merge_push(struct drain_merge *m, unsigned int src,
		     const struct drain_msample *s)
{
	struct drain_mqueue *q = &m->q[src];
	struct drain_mitem *it;

	if (q->len == q->cap && grow(q))
		return -ENOMEM;
	if (s->kind != DRAIN_ITEM_SAMPLE) {
		if (q->xlen == q->xcap && grow_payloads(q))
			return -ENOMEM;
		q->xv[(q->xhead + q->xlen) & (q->xcap - 1)] = s->x;
		q->xlen++;
	}
	it = &q->v[(q->head + q->len) & (q->cap - 1)];
	it->time_ns = s->time_ns;
	it->queued_ns = s->queued_ns;
	it->thread = s->thread;
	it->stack = s->stack;
	it->cpu = (uint16_t)s->cpu;
	it->epoch = s->epoch;
	it->kind = s->kind;
	if (!q->len)
		m->head_ns[src] = s->time_ns;
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

int drain_merge_push_samples(struct drain_merge *m, unsigned int src,
			     const struct spulse_sample *v, size_t n,
			     int64_t shift, uint32_t cpu, uint32_t epoch,
			     int64_t queued_ns)
{
	struct drain_mqueue *q = &m->q[src];
	size_t mask, pos, k;
	int64_t hi = INT64_MIN, first;

	if (!n)
		return 0;
	while (q->cap - q->len < n)
		if (grow(q))
			return -ENOMEM;
	mask = q->cap - 1;
	pos = q->head + q->len;
	first = shift + v[0].time_ns;
	for (k = 0; k < n; k++) {
		struct drain_mitem *it = &q->v[(pos + k) & mask];
		int64_t t = shift + v[k].time_ns;

		t = t < 0 ? 0 : t;
		it->time_ns = t;
		it->queued_ns = queued_ns;
		it->thread = v[k].thread;
		it->stack = v[k].stack;
		it->epoch = epoch;
		it->cpu = (uint16_t)(v[k].cpu != SPULSE_NONE ? v[k].cpu : cpu);
		it->kind = DRAIN_ITEM_SAMPLE;
		hi = t > hi ? t : hi;
	}
	if (!q->len)
		m->head_ns[src] = first < 0 ? 0 : first;
	q->len += n;
	m->queued += n;
	if (!q->seen || hi > q->last_ns)
		q->last_ns = hi;
	q->seen = true;
	if (!m->any || hi > m->newest_ns)
		m->newest_ns = hi;
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
 * not past @b) have all been read dry since @b was queued. Refreshes the
 * cached watermark on the way.
 */
static void survey(struct drain_merge *m, const struct drain_mitem *b,
		   bool *passed, bool *seen_passed, bool *unseen_dry,
		   bool *lagging_dry)
{
	int64_t wm = INT64_MAX;
	unsigned int i;

	*passed = *seen_passed = *unseen_dry = *lagging_dry = true;
	for (i = 0; i < m->nsrc; i++) {
		const struct drain_mqueue *q = &m->q[i];
		bool dry = q->dry_ns >= b->queued_ns;

		if (!q->finished)
			wm = !q->seen ? INT64_MIN :
			     q->last_ns < wm ? q->last_ns : wm;
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
	m->wm = wm;
}

int drain_merge_pop(struct drain_merge *m, int64_t now_ns, bool drain,
		    unsigned int *src, struct drain_msample *out)
{
	const struct drain_mitem *best = drain_merge_peek(m, now_ns, drain, src);
	struct drain_mqueue *q;
	unsigned int bi;

	if (!best)
		return 0;
	bi = *src;
	q = &m->q[bi];
	out->time_ns = best->time_ns;
	out->queued_ns = best->queued_ns;
	out->thread = best->thread;
	out->stack = best->stack;
	out->cpu = best->cpu;
	out->epoch = best->epoch;
	out->kind = best->kind;
	if (best->kind != DRAIN_ITEM_SAMPLE) {
		out->x = q->xv[q->xhead];
		q->xhead = (q->xhead + 1) & (q->xcap - 1);
		q->xlen--;
	}
	q->head = (q->head + 1) & (q->cap - 1);
	q->len--;
	/*
	 * The queue was filled a whole read round ago (every CPU's records
	 * decoded in between), and the sources' rings are read in turn, so
	 * the hardware's stream prefetch loses track: fetch this queue's
	 * next lines ahead (measured on bench-drain's 8-CPU merge, 64 KiB
	 * rounds, interleaved runs: median CPU 213 -> 188 ms).
	 */
	if (q->len > 8)
		__builtin_prefetch(&q->v[(q->head + 8) & (q->cap - 1)]);
	m->head_ns[bi] = q->len ? q->v[q->head].time_ns : INT64_MAX;
	m->queued--;
	return 1;
}

const struct drain_mitem *drain_merge_peek(struct drain_merge *m,
					   int64_t now_ns, bool drain,
					   unsigned int *src)
{
	const int64_t *hn = m->head_ns;
	const struct drain_mitem *best;
	struct drain_mqueue *q;
	int64_t bt = INT64_MAX;
	unsigned int i, bi = 0;

	if (!m->queued)
		return NULL;
	for (i = 0; i < m->nsrc; i++)
		if (hn[i] < bt) {
			bt = hn[i];
			bi = i;
		}
	if (bt == INT64_MAX) {
		/* a head at INT64_MAX itself: the first non-empty queue */
		for (bi = 0; !m->q[bi].len; bi++)
			;
	}
	q = &m->q[bi];
	best = &q->v[q->head];
	if (!drain && best->time_ns > m->wm) {
		bool passed, seen_passed, unseen_dry, lagging_dry;

		survey(m, best, &passed, &seen_passed, &unseen_dry,
		       &lagging_dry);
		if (!passed &&
		    !(seen_passed && unseen_dry &&
		      m->newest_ns - best->time_ns >= m->window_ns) &&
		    !(lagging_dry && now_ns - best->queued_ns >= m->window_ns))
			return NULL;
	}
	*src = bi;
	return best;
}

/*
 * What drain_merge_take() may pop without peek's survey, given that the
 * sources do not change while it pops: an item (time t, queued q) the
 * merge's order brings next is released by rule 1 when t <= wm, by rule 2
 * exactly when t <= b2 and q <= q2, and by rule 3 at least when q <= q3.
 */
struct take_rules {
	int64_t wm, b2, q2, q3;
};

static void take_rules(const struct drain_merge *m, int64_t now_ns,
		       struct take_rules *r)
{
	int64_t seen_wm = INT64_MAX, d3 = INT64_MAX;
	unsigned int i;

	r->wm = m->wm;
	r->q2 = INT64_MAX;
	for (i = 0; i < m->nsrc; i++) {
		const struct drain_mqueue *q = &m->q[i];

		if (q->finished)
			continue;
		if (!q->seen)
			r->q2 = q->dry_ns < r->q2 ? q->dry_ns : r->q2;
		else if (q->last_ns < seen_wm)
			seen_wm = q->last_ns;
		/* possibly lagging behind an item: not past every one */
		if ((!q->seen || q->last_ns < m->newest_ns) && q->dry_ns < d3)
			d3 = q->dry_ns;
	}
	/* rule 2: past every seen source, a window older than the newest */
	r->b2 = m->newest_ns - m->window_ns;
	if (seen_wm < r->b2)
		r->b2 = seen_wm;
	/* rule 3: held for a window, every source that may lag read dry */
	r->q3 = now_ns - m->window_ns;
	if (d3 < r->q3)
		r->q3 = d3;
}

static inline bool take_ok(const struct take_rules *r,
			   const struct drain_mitem *it)
{
	return it->time_ns <= r->wm ||
	       (it->time_ns <= r->b2 && it->queued_ns <= r->q2) ||
	       it->queued_ns <= r->q3;
}

/*
 * The earliest head of the sources other than @src (*@oi: the first on a
 * tie; @nsrc when all are empty): @src's items come next while they are
 * not later than the returned stop (earlier, or equal when @src comes
 * first), which is also capped at @limit_ns.
 */
static inline int64_t take_stop(const int64_t *hn, unsigned int nsrc,
				unsigned int src, int64_t limit_ns,
				int64_t *other, unsigned int *oi)
{
	int64_t o = INT64_MAX, stop;
	unsigned int i, k = nsrc;

	if (nsrc == 2) {	/* two CPUs: no loop */
		if (hn[src ^ 1] < INT64_MAX) {
			o = hn[src ^ 1];
			k = src ^ 1;
		}
	} else {
		for (i = 0; i < nsrc; i++)
			if (i != src && hn[i] < o) {
				o = hn[i];
				k = i;
			}
	}
	*other = o;
	*oi = k;
	stop = src < k ? o : o - 1;
	return stop < limit_ns ? stop : limit_ns;
}

/* @src joins @g (when it is not in it yet) from ring index @head on. */
static inline void take_group(struct drain_mgroup *g, unsigned int src,
			      size_t head, size_t xhead)
{
	if (!g->len[src]) {
		g->order[g->nsrc++] = src;
		g->pos[src] = head;
		g->xpos[src] = xhead;
	}
}

/*
 * Count a popped item into @g: a sample earlier than the last one
 * (@last_ns: INT64_MIN before the first) is late; an interval's or a
 * trigger's payload leaves the payload ring of source @src with it.
 * Returns the time of the last sample that was not late.
 */
static inline int64_t take_item(struct drain_merge *m, unsigned int src,
				struct drain_mgroup *g,
				const struct drain_mitem *it, int64_t last_ns)
{
	struct drain_mqueue *q;

	if (__builtin_expect(it->kind == DRAIN_ITEM_SAMPLE, 1)) {
		if (__builtin_expect(it->time_ns >= last_ns, 1))
			return it->time_ns;
		(*g->late)++;
	} else {
		q = &m->q[src];
		g->ntrig += it->kind == DRAIN_ITEM_TRIGGER;
		q->xhead = (q->xhead + 1) & (q->xcap - 1);
		q->xlen--;
	}
	return last_ns;
}

/*
 * drain_merge_take() for two sources (a 2-CPU machine), a plain two-way
 * merge: the source being popped in locals, the other's head time at
 * hand, so a change of source (the items of two busy CPUs alternate) is
 * a swap, not a survey.
 */
static size_t take_two(struct drain_merge *m, unsigned int src,
		       const struct take_rules *rules, int64_t limit_ns,
		       size_t most, struct drain_mgroup *g, int64_t *last)
{
	size_t sh[2], sr[2] = { 0, 0 }, left = most;
	const struct drain_mitem *v = m->q[src].v;
	size_t mask = m->q[src].cap - 1, head = m->q[src].head;
	size_t len = m->q[src].len, run = 0;
	int64_t nt, no = m->head_ns[src ^ 1], last_ns = *last;
	unsigned int k;

	sh[0] = m->q[0].head;
	sh[1] = m->q[1].head;
	take_group(g, src, head, m->q[src].xhead);
	for (;;) {
		last_ns = take_item(m, src, g, &v[head], last_ns);
		head = (head + 1) & mask;
		run++;
		nt = run < len ? v[head].time_ns : INT64_MAX;
		if (!--left)
			break;
		/* the next pop: the earlier head, source 0 on a tie */
		if (no < nt || (no == nt && src)) {
			int64_t t = nt;

			sh[src] = head;
			sr[src] = run;
			src ^= 1;
			v = m->q[src].v;
			mask = m->q[src].cap - 1;
			head = sh[src];
			len = m->q[src].len;
			run = sr[src];
			nt = no;
			no = t;
			if (nt > limit_ns || (nt > rules->wm &&
					      !take_ok(rules, &v[head])))
				break;
			if (!run)
				take_group(g, src, head, m->q[src].xhead);
			continue;
		}
		if (nt > limit_ns || (nt > rules->wm &&
				      !take_ok(rules, &v[head])))
			break;
	}
	sh[src] = head;
	sr[src] = run;
	m->head_ns[src] = nt;
	m->head_ns[src ^ 1] = no;
	for (k = 0; k < 2; k++) {
		m->q[k].head = sh[k];
		m->q[k].len -= sr[k];
		g->len[k] += (uint32_t)sr[k];
	}
	*last = last_ns;
	return most - left;
}

size_t drain_merge_take(struct drain_merge *m, unsigned int src,
			int64_t now_ns, bool drain, int64_t limit_ns,
			uint32_t max, struct drain_mgroup *g)
{
	int64_t *hn = m->head_ns;
	const unsigned int nsrc = m->nsrc;
	/* INT64_MIN: no sample yet (times are never negative) */
	int64_t last_ns = *g->emitted ? *g->last_ns : INT64_MIN;
	/* at most this many: the group's room, what is queued */
	const size_t most = max - g->n < m->queued ? max - g->n : m->queued;
	size_t left = most;
	struct drain_mqueue *q = &m->q[src];
	const struct drain_mitem *v = q->v;
	size_t mask = q->cap - 1, head = q->head;
	struct take_rules rules;
	int64_t other, stop, nt;
	uint32_t run = 0;
	unsigned int oi;

	if (drain)
		rules = (struct take_rules){ INT64_MAX, INT64_MIN, INT64_MIN,
					     INT64_MIN };
	else
		take_rules(m, now_ns, &rules);
	/* a head at INT64_MAX itself is left to drain_merge_peek() */
	if (limit_ns == INT64_MAX)
		limit_ns = INT64_MAX - 1;
	if (nsrc == 2) {
		left = most - take_two(m, src, &rules, limit_ns, most, g,
				       &last_ns);
		goto out;
	}
	/*
	 * Each item is what drain_merge_pop() would pop: the earliest head
	 * (the first source on a tie). The other sources' earliest head is
	 * looked up only when the source changes (only the popped source's
	 * head moves), so a run of one source costs no scan per item, and
	 * the source's ring index stays in a local until it changes.
	 */
	stop = take_stop(hn, nsrc, src, limit_ns, &other, &oi);
	/* the first item is peek's (released already) */
	take_group(g, src, head, q->xhead);
	for (;;) {
		last_ns = take_item(m, src, g, &v[head], last_ns);
		head = (head + 1) & mask;
		run++;
		if (!--left)
			break;
		nt = run < q->len ? v[head].time_ns : INT64_MAX;
		if (nt > stop) {
			/* still the earliest head: it is past the limit */
			if (nt < other || (nt == other && src < oi) ||
			    oi == nsrc)
				break;
			/* the source changes: its items so far into @g */
			q->head = head;
			q->len -= run;
			g->len[src] += run;
			hn[src] = nt;
			run = 0;
			src = oi;
			q = &m->q[src];
			stop = take_stop(hn, nsrc, src, limit_ns, &other, &oi);
			nt = hn[src];
			head = q->head;
			if (nt > stop || (nt > rules.wm &&
					  !take_ok(&rules, &q->v[head])))
				goto out;
			v = q->v;
			mask = q->cap - 1;
			take_group(g, src, head, q->xhead);
			continue;
		}
		if (nt > rules.wm && !take_ok(&rules, &v[head]))
			break;
	}
	q->head = head;
	q->len -= run;
	g->len[src] += run;
	hn[src] = q->len ? v[head].time_ns : INT64_MAX;
out:
	m->queued -= most - left;
	g->n += (uint32_t)(most - left);
	if (last_ns != INT64_MIN) {
		*g->last_ns = last_ns;
		*g->emitted = true;
	}
	return most - left;
}
