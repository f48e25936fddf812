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
	return failed ? 1 : 0;
}
