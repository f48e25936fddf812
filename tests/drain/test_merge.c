// SPDX-License-Identifier: MIT
/*
 * Unit tests of the drainer's windowed k-way merge (user/drain/merge.c).
 * Prints "PASS name" / "FAIL name: why" per test; exit 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"

#define MS 1000000LL

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s: ", __func__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed++; \
		return; \
	} \
} while (0)

static void push(struct drain_merge *m, unsigned int src, int64_t t,
		 int64_t wall)
{
	struct drain_msample s = { .time_ns = t, .thread = src,
				   .stack = (uint32_t)t, .queued_ns = wall };

	if (drain_merge_push(m, src, &s)) {
		printf("push failed\n");
		exit(1);
	}
}

/* Pop everything releasable at @now into @out; returns the count. */
static size_t pop_all(struct drain_merge *m, int64_t now, bool drain,
		      int64_t *out, unsigned int *srcs, size_t max)
{
	struct drain_msample s;
	unsigned int src;
	size_t n = 0;

	while (n < max && drain_merge_pop(m, now, drain, &src, &s) == 1) {
		if (s.thread != src || s.stack != (uint32_t)s.time_ns) {
			printf("payload mismatch\n");
			exit(1);
		}
		srcs[n] = src;
		out[n++] = s.time_ns;
	}
	return n;
}

/* Two interleaved sources come out in time order once both have passed. */
static void test_interleaved_sorted(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n, i;

	drain_merge_init(&m, 2, 100 * MS);
	push(&m, 0, 10, 0);
	push(&m, 0, 30, 0);
	push(&m, 0, 50, 0);
	push(&m, 1, 20, 0);
	push(&m, 1, 40, 0);
	n = pop_all(&m, 0, false, out, src, 16);
	/* watermark = min(50, 40) = 40: 10 20 30 40 released, 50 held */
	CHECK(n == 4, "released %zu, want 4", n);
	for (i = 0; i < n; i++)
		CHECK(out[i] == (int64_t)(i + 1) * 10, "out[%zu] = %lld", i,
		      (long long)out[i]);
	CHECK(src[0] == 0 && src[1] == 1 && src[2] == 0 && src[3] == 1,
	      "wrong sources");
	push(&m, 1, 60, 0);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 1 && out[0] == 50, "after 60: n %zu first %lld", n,
	      (long long)out[0]);
	n = pop_all(&m, 0, true, out, src, 16);
	CHECK(n == 1 && out[0] == 60, "drain: n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* A source that has not reached a time holds later samples back. */
static void test_watermark_holds(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 3, 100 * MS);
	push(&m, 0, 5 * MS, 0);
	push(&m, 1, 1 * MS, 0);
	push(&m, 2, 2 * MS, 0);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 1 && out[0] == 1 * MS, "n %zu", n);
	/* source 1 is at 1 ms: 2 ms and 5 ms must wait */
	n = pop_all(&m, 50 * MS, false, out, src, 16);
	CHECK(n == 0, "released %zu while source 1 lags", n);
	push(&m, 1, 3 * MS, 50 * MS);
	n = pop_all(&m, 50 * MS, false, out, src, 16);
	CHECK(n == 1 && out[0] == 2 * MS, "n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* A source that never produced stops holding back after a window. */
static void test_silent_source_window(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 2, 100 * MS);
	push(&m, 0, 10 * MS, 0);
	push(&m, 0, 50 * MS, 0);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 0, "released %zu with source 1 unseen", n);
	push(&m, 0, 115 * MS, 0);
	/* newest 115 ms: 10 ms is a window old, but source 1 was not read */
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 0, "released %zu before source 1 was read dry", n);
	drain_merge_dry(&m, 1, 1);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 1 && out[0] == 10 * MS, "n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* The sample-time window never overtakes a source that is behind. */
static void test_window_respects_seen_lag(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 3, 100 * MS);	/* source 2 stays unseen */
	push(&m, 0, 500 * MS, 0);
	push(&m, 1, 100 * MS, 0);
	push(&m, 1, 200 * MS, 0);
	drain_merge_dry(&m, 2, 1);
	drain_merge_dry(&m, 1, 1);
	n = pop_all(&m, 0, false, out, src, 16);
	/* source 1 is at 200 ms: nothing later may pass it */
	CHECK(n == 2 && out[0] == 100 * MS && out[1] == 200 * MS, "n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* Held longer than the window in wall time: released anyway. */
static void test_wall_clock_bound(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 2, 100 * MS);
	push(&m, 0, 10, 1000 * MS);
	push(&m, 1, 5, 1000 * MS);
	push(&m, 1, 7, 1000 * MS);
	n = pop_all(&m, 1099 * MS, false, out, src, 16);
	CHECK(n == 2 && out[0] == 5 && out[1] == 7, "early: n %zu", n);
	n = pop_all(&m, 1050 * MS, false, out, src, 16);
	CHECK(n == 0, "released %zu before the window passed", n);
	/* source 1 lags and has not been read since: keep waiting */
	n = pop_all(&m, 5000 * MS, false, out, src, 16);
	CHECK(n == 0, "released %zu while source 1 may have unread data", n);
	drain_merge_dry(&m, 1, 1001 * MS);
	n = pop_all(&m, 1099 * MS, false, out, src, 16);
	CHECK(n == 0, "released %zu before the window passed", n);
	n = pop_all(&m, 1100 * MS, false, out, src, 16);
	CHECK(n == 1 && out[0] == 10, "after the window: n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* Read dry before the sample was queued does not count. */
static void test_dry_must_follow_queueing(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 2, 100 * MS);
	drain_merge_dry(&m, 1, 10 * MS);
	push(&m, 0, 5, 20 * MS);
	n = pop_all(&m, 500 * MS, false, out, src, 16);
	CHECK(n == 0, "released %zu on a stale dry mark", n);
	drain_merge_dry(&m, 1, 20 * MS);
	n = pop_all(&m, 500 * MS, false, out, src, 16);
	CHECK(n == 1 && out[0] == 5, "n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* A finished source no longer holds the watermark. */
static void test_finished_source(void)
{
	struct drain_merge m;
	int64_t out[16];
	unsigned int src[16];
	size_t n;

	drain_merge_init(&m, 2, 100 * MS);
	push(&m, 0, 30, 0);
	push(&m, 1, 10, 0);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 1 && out[0] == 10, "n %zu", n);
	drain_merge_finish(&m, 1);
	n = pop_all(&m, 0, false, out, src, 16);
	CHECK(n == 1 && out[0] == 30, "after finish: n %zu", n);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/* Random interleavings: drain order is sorted and nothing is lost. */
static void test_random_sorted(void)
{
	enum { NSRC = 5, PER = 2000 };
	struct drain_merge m;
	static int64_t out[NSRC * PER];
	static unsigned int src[NSRC * PER];
	int64_t last[NSRC] = { 0 };
	unsigned int pushed[NSRC] = { 0 }, s;
	size_t n = 0, i, total = 0;

	srand(7);
	drain_merge_init(&m, NSRC, 1000 * MS);
	while (total < NSRC * PER) {
		s = (unsigned int)rand() % NSRC;
		if (pushed[s] == PER)
			continue;
		last[s] += 1 + rand() % 1000;
		last[s] = last[s] - last[s] % NSRC + s; /* unique times */
		push(&m, s, last[s], 0);
		pushed[s]++;
		total++;
		n += pop_all(&m, 0, false, out + n, src + n, NSRC * PER - n);
	}
	n += pop_all(&m, 0, true, out + n, src + n, NSRC * PER - n);
	CHECK(n == NSRC * PER, "popped %zu of %d", n, NSRC * PER);
	for (i = 1; i < n; i++)
		CHECK(out[i] >= out[i - 1], "out of order at %zu", i);
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/*
 * drain_merge_take() releases, in one call after one peek, the whole run
 * that rule 2 releases past an idle source (read dry after the run was
 * queued), and the run that rule 3 releases past a source that stopped;
 * it stops exactly where those rules stop, which the survey then confirms
 * (as test_take_equals_pop, one item at a time, checks on random input).
 */
static void test_take_runs_past_idle_sources(void)
{
	uint32_t len[3] = { 0 };
	size_t pos[3], xpos[3], taken;
	unsigned int order[3], src = 9, nsrc;
	bool emitted = false;
	int64_t last = 0;
	uint64_t late = 0;
	struct drain_mgroup g = { len, pos, xpos, order, 0, 0, 0,
				  &emitted, &last, &late };
	struct drain_merge m;
	const struct drain_mitem *it;
	int64_t t;

	/* rule 2: source 1 idle and read dry after the queueing */
	for (nsrc = 2; nsrc <= 3; nsrc++) {
		memset(len, 0, sizeof(len));
		g.nsrc = 0;
		g.n = 0;
		drain_merge_init(&m, nsrc, 100 * MS);
		for (t = 1; t <= 500; t++)
			push(&m, 0, t * MS, 10);
		drain_merge_dry(&m, 1, 11);
		if (nsrc == 3)
			drain_merge_dry(&m, 2, 11);
		it = drain_merge_peek(&m, 20, false, &src);
		CHECK(it && src == 0 && it->time_ns == 1 * MS, "nsrc %u: peek",
		      nsrc);
		taken = drain_merge_take(&m, src, 20, false, INT64_MAX, 4096,
					 &g);
		/* a window older than the newest (500 ms): 1..400 ms */
		CHECK(taken == 400 && len[0] == 400 && g.nsrc == 1 &&
		      m.queued == 100, "nsrc %u: took %zu, queued %zu", nsrc,
		      taken, m.queued);
		CHECK(!drain_merge_peek(&m, 20, false, &src),
		      "nsrc %u: the survey releases more", nsrc);
		drain_merge_free(&m);
	}
	/* rule 3: source 1 produced up to 5 ms, then stopped (read dry) */
	memset(len, 0, sizeof(len));
	g.nsrc = 0;
	g.n = 0;
	drain_merge_init(&m, 2, 100 * MS);
	push(&m, 1, 5 * MS, 0);
	for (t = 1; t <= 50; t++)
		push(&m, 0, t * MS, t < 30 ? 10 : 1000);
	drain_merge_dry(&m, 0, 2000);
	drain_merge_dry(&m, 1, 2000);
	/* at wall 1050 a window (100 ms) has passed for items queued at 10 */
	it = drain_merge_peek(&m, 100 * MS + 10, false, &src);
	CHECK(it && it->time_ns == 1 * MS, "rule 3: peek");
	taken = drain_merge_take(&m, src, 100 * MS + 10, false, INT64_MAX,
				 4096, &g);
	/* 1..29 ms of source 0 and source 1's 5 ms; not those queued at 1000 */
	CHECK(taken == 30 && len[0] == 29 && len[1] == 1 && g.nsrc == 2,
	      "rule 3: took %zu (%u + %u)", taken, len[0], len[1]);
	CHECK(!drain_merge_peek(&m, 100 * MS + 10, false, &src),
	      "rule 3: the survey releases more");
	drain_merge_free(&m);
	printf("PASS %s\n", __func__);
}

/*
 * drain_merge_peek() + drain_merge_take() (the grouped release) against
 * drain_merge_pop() one item at a time on the same random input: ties,
 * times going back within a source, intervals and triggers with
 * payloads, dry marks, finished sources, releases with and without
 * drain, a cut limit and a group size. Each group's items per source (in
 * order), its sources' order of first appearance, and the late count must
 * be the same.
 */
#define GT_MAXN 4096

struct gtrace {
	uint32_t v[GT_MAXN];	/* per group: sep, then src:id... */
	size_t n;
	uint64_t late;
};

static void gt_put(struct gtrace *t, uint32_t x)
{
	if (t->n < GT_MAXN)
		t->v[t->n++] = x;
}

/* A group collected by pops, in the merge's order: write it per source. */
static void gt_flush_pops(struct gtrace *t, const uint32_t *ids,
			  const unsigned int *srcs, size_t n)
{
	unsigned int order[8], no = 0, k;
	size_t i;

	gt_put(t, 0xffffffffu);
	for (i = 0; i < n; i++) {
		for (k = 0; k < no && order[k] != srcs[i]; k++)
			;
		if (k == no)
			order[no++] = srcs[i];
	}
	for (k = 0; k < no; k++)
		for (i = 0; i < n; i++)
			if (srcs[i] == order[k])
				gt_put(t, order[k] << 24 | ids[i]);
}

static void gt_flush_group(struct gtrace *t, struct drain_merge *m,
			   struct drain_mgroup *g)
{
	unsigned int k;
	uint32_t i;

	gt_put(t, 0xffffffffu);
	for (k = 0; k < g->nsrc; k++) {
		unsigned int src = g->order[k];
		const struct drain_mqueue *q = &m->q[src];

		size_t x = g->xpos[src];

		for (i = 0; i < g->len[src]; i++) {
			const struct drain_mitem *it =
				&q->v[(g->pos[src] + i) & (q->cap - 1)];

			gt_put(t, src << 24 | it->thread);
			/* a payload goes with its item */
			if (it->kind != DRAIN_ITEM_SAMPLE &&
			    q->xv[x++ & (q->xcap - 1)].iv.thread != it->thread)
				gt_put(t, 0xdeadu);
		}
		g->len[src] = 0;
	}
	g->nsrc = 0;
	g->n = 0;
}

static void test_take_equals_pop(void)
{
	static struct gtrace ta, tb;
	unsigned int seed, round;

	for (seed = 1; seed <= 300; seed++) {
		struct drain_merge a, b;
		unsigned int nsrc = 1 + seed % 4, i;
		uint32_t len[4] = { 0 };
		size_t pos[4], xpos[4];
		unsigned int order[4];
		bool emitted_a = false, emitted_b = false;
		int64_t last_a = 0, last_b = 0, tt[4] = { 0 };
		uint64_t late_b = 0;
		struct drain_mgroup g = { len, pos, xpos, order, 0, 0, 0,
					  &emitted_b, &last_b, &late_b };
		uint32_t id = 1;

		srand(seed);
		memset(&ta, 0, sizeof(ta));
		memset(&tb, 0, sizeof(tb));
		drain_merge_init(&a, nsrc, 50);
		drain_merge_init(&b, nsrc, 50);
		for (round = 0; round < 40; round++) {
			int64_t now = round * 20, limit;
			bool drain = round == 39 || rand() % 8 == 0;
			uint32_t gmax = 1 + (uint32_t)(rand() % 9);
			uint32_t ids[GT_MAXN];
			unsigned int srcs[GT_MAXN];
			size_t np = 0;
			struct drain_msample s;
			const struct drain_mitem *it;
			unsigned int src;

			/* pushes: the same on both */
			for (i = 0; i < nsrc; i++) {
				int k, cnt = rand() % 6;

				if (rand() % 10 == 0 && round > 5) {
					drain_merge_finish(&a, i);
					drain_merge_finish(&b, i);
				}
				for (k = 0; k < cnt; k++) {
					memset(&s, 0, sizeof(s));
					tt[i] += rand() % 7 - (rand() % 9 == 0 ? 8 : 0);
					s.time_ns = tt[i] < 0 ? 0 : tt[i];
					s.thread = id++;
					s.queued_ns = now;
					s.kind = (uint8_t)(rand() % 5 == 0 ? DRAIN_ITEM_OFFCPU :
						 rand() % 7 == 0 ? DRAIN_ITEM_TRIGGER :
						 DRAIN_ITEM_SAMPLE);
					s.x.iv.thread = s.thread;
					if (s.kind == DRAIN_ITEM_TRIGGER)
						s.x.trig.text = NULL;
					if (drain_merge_push(&a, i, &s) ||
					    drain_merge_push(&b, i, &s)) {
						printf("push failed\n");
						exit(1);
					}
				}
				if (rand() % 3 == 0) {
					int64_t dn = now + rand() % 3;

					drain_merge_dry(&a, i, dn);
					drain_merge_dry(&b, i, dn);
				}
			}
			limit = rand() % 4 == 0 ? INT64_MAX : tt[0] - rand() % 10;
			/* a: pop one by one, cut as release_grouped() cuts */
			while (drain_merge_pop(&a, now, drain, &src, &s) == 1) {
				if (s.kind != DRAIN_ITEM_SAMPLE &&
				    (s.x.iv.thread != s.thread)) {
					printf("FAIL %s: payload order\n", __func__);
					failed++;
					return;
				}
				if (s.time_ns > limit || np == gmax) {
					gt_flush_pops(&ta, ids, srcs, np);
					np = 0;
				}
				if (s.kind == DRAIN_ITEM_SAMPLE) {
					if (emitted_a && s.time_ns < last_a)
						ta.late++;
					else
						last_a = s.time_ns;
					emitted_a = true;
				}
				ids[np] = s.thread;
				srcs[np++] = src;
			}
			gt_flush_pops(&ta, ids, srcs, np);
			/* b: peek and take */
			while ((it = drain_merge_peek(&b, now, drain, &src))) {
				if (it->time_ns > limit || g.n == gmax)
					gt_flush_group(&tb, &b, &g);
				drain_merge_take(&b, src, now, drain, limit,
						 gmax, &g);
			}
			gt_flush_group(&tb, &b, &g);
			if (ta.n != tb.n || memcmp(ta.v, tb.v, ta.n * sizeof(ta.v[0]))) {
				size_t k;

				for (k = 0; k < ta.n && k < tb.n && ta.v[k] == tb.v[k]; k++)
					;
				printf("FAIL %s: seed %u round %u: traces differ at %zu "
				       "(%zu vs %zu entries)\n", __func__, seed, round,
				       k, ta.n, tb.n);
				failed++;
				drain_merge_free(&a);
				drain_merge_free(&b);
				return;
			}
		}
		CHECK(ta.late == late_b, "seed %u: late %llu vs %llu", seed,
		      (unsigned long long)ta.late, (unsigned long long)late_b);
		CHECK(!a.queued && !b.queued, "seed %u: left queued", seed);
		drain_merge_free(&a);
		drain_merge_free(&b);
	}
	printf("PASS %s\n", __func__);
}

int main(void)
{
	test_interleaved_sorted();
	test_watermark_holds();
	test_silent_source_window();
	test_window_respects_seen_lag();
	test_wall_clock_bound();
	test_dry_must_follow_queueing();
	test_finished_source();
	test_random_sorted();
	test_take_runs_past_idle_sources();
	test_take_equals_pop();
	return failed ? 1 : 0;
}
