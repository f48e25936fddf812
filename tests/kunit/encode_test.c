// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the per-CPU batch encoder (kmod/encode.c). Every emitted byte
 * string is decoded by the independent checker (stream_check.c): dense ids,
 * no reference to anything not written, including after batches are dropped
 * because the relay buffer was full (rollback) and after intern tables fill.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/string.h>

#include "encoder.h"
#include "percpu.h"
#include "stream_check.h"

struct enc_fix {
	struct spulse_enc e;
	struct spulse_batch b;
	struct sk_stream *sk;
};

static struct enc_fix *new_fix(struct kunit *test, u32 shift, size_t cap)
{
	struct enc_fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	size_t n = 1U << shift;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->sk = kunit_kzalloc(test, sizeof(*f->sk), GFP_KERNEL);
	f->b.buf = kunit_kzalloc(test, cap, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->sk);
	KUNIT_ASSERT_NOT_NULL(test, f->b.buf);
	f->b.cap = cap;
	spulse_intern_init(&f->e.frames,
			   kunit_kcalloc(test, n, sizeof(struct spulse_intern_ent),
					 GFP_KERNEL), shift);
	spulse_intern_init(&f->e.stacks,
			   kunit_kcalloc(test, n, sizeof(struct spulse_intern_ent),
					 GFP_KERNEL), shift);
	spulse_intern_init(&f->e.threads,
			   kunit_kcalloc(test, n, sizeof(struct spulse_intern_ent),
					 GFP_KERNEL), shift);
	KUNIT_ASSERT_NOT_NULL(test, f->e.frames.ent);
	KUNIT_ASSERT_NOT_NULL(test, f->e.stacks.ent);
	KUNIT_ASSERT_NOT_NULL(test, f->e.threads.ent);
	sk_init(f->sk);
	return f;
}

static void mk_sample(struct spulse_sample *s, struct spulse_frame *fr, u32 n,
		      u32 tid, u64 t_ns)
{
	memset(s, 0, sizeof(*s));
	s->pid = 1000;
	s->tid = tid;
	strscpy(s->comm, "worker", sizeof(s->comm));
	s->frames = fr;
	s->n = n;
	s->t_ns = t_ns;
}

/* Build, "write" (feed the checker) and commit one sample. */
static void write_one(struct kunit *test, struct enc_fix *f,
		      const struct spulse_sample *s)
{
	KUNIT_ASSERT_EQ(test, spulse_batch_build(&f->e, &f->b, s, 1, 1000), 0);
	KUNIT_ASSERT_EQ_MSG(test, sk_feed(f->sk, f->b.buf, f->b.len), 0,
			    "checker: %s at batch offset %zu", f->sk->err,
			    f->sk->err_off);
	spulse_batch_commit(&f->e, &f->b, s->t_ns);
}

static void batch_first_sample_defines_all_it_references(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[] = {
		{ SPULSE_FRAME_USER, 0x401000 },
		{ SPULSE_FRAME_USER, 0x401234 },
		{ SPULSE_FRAME_KERNEL, 0xffffffff81000010ULL },
	};
	struct spulse_sample s;

	mk_sample(&s, fr, ARRAY_SIZE(fr), 1001, 5000);
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_samples, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->max_depth, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->last_sample_stack, 2U);	/* the leaf */
	/* cpu record (after the header) + thread + 3 frames + 3 stacks + sample */
	KUNIT_EXPECT_EQ(test, f->b.records, 9U);
	KUNIT_EXPECT_EQ(test, f->e.records, 9ULL);
	KUNIT_EXPECT_TRUE(test, f->sk->first_is_cpu);
	KUNIT_EXPECT_EQ(test, f->sk->n_cpu_records, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->cpu, 0);
	KUNIT_EXPECT_EQ(test, f->e.bytes, (u64)f->b.len);
}

static void batch_repeated_sample_is_one_record(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[] = {
		{ SPULSE_FRAME_USER, 0x401000 },
		{ SPULSE_FRAME_KERNEL, 0xffffffff81000010ULL },
	};
	static const u8 want[] = { SPULSE_TAG_SAMPLE, 0x80, 0x7d, 0x00, 0x01 };
	struct spulse_sample s;

	mk_sample(&s, fr, ARRAY_SIZE(fr), 1001, 5000);
	write_one(test, f, &s);
	s.t_ns = 13000;	/* dt 8000 ns = zigzag 16000 = 80 7d */
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->b.records, 1U);
	KUNIT_ASSERT_EQ(test, f->b.len, sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, want, sizeof(want)), 0);
}

static void batch_shares_common_prefix_between_stacks(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame a[] = {
		{ SPULSE_FRAME_USER, 0x1000 }, { SPULSE_FRAME_USER, 0x2000 },
	};
	struct spulse_frame b[] = {
		{ SPULSE_FRAME_USER, 0x1000 }, { SPULSE_FRAME_USER, 0x3000 },
	};
	struct spulse_sample s;

	mk_sample(&s, a, 2, 7, 1);
	write_one(test, f, &s);
	mk_sample(&s, b, 2, 7, 2);
	write_one(test, f, &s);
	/* root shared: 3 frames, 3 stack nodes, 1 thread */
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 1U);
}

static void batch_rollback_redefines_after_dropped_batch(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame a[] = { { SPULSE_FRAME_USER, 0x1000 } };
	struct spulse_frame b[] = { { SPULSE_FRAME_USER, 0x2000 } };
	struct spulse_sample s;

	mk_sample(&s, a, 1, 7, 1);
	write_one(test, f, &s);
	/* the second batch defines frame 1 ... and is dropped */
	mk_sample(&s, b, 1, 7, 2);
	KUNIT_ASSERT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000), 0);
	spulse_batch_rollback(&f->e, &f->b);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 1U);
	/* ... so the next one must define it again, as id 1 */
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 2U);
	/* and a sample of the first stack still only references written ids */
	mk_sample(&s, a, 1, 7, 3);
	write_one(test, f, &s);
}

static void batch_random_drops_never_dangle(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 5, 8192);	/* 32 slots: resets */
	struct spulse_frame fr[24];
	struct spulse_sample s;
	u32 i, j, written = 0, dropped = 0;
	struct rnd_state rnd;

	prandom_seed_state(&rnd, 42);
	for (i = 0; i < 3000; i++) {
		u32 n = 1 + prandom_u32_state(&rnd) % ARRAY_SIZE(fr);

		for (j = 0; j < n; j++) {
			fr[j].kind = j < n / 2 ? SPULSE_FRAME_USER :
						 SPULSE_FRAME_KERNEL;
			fr[j].addr = 0x1000 + 16 * (prandom_u32_state(&rnd) % 40);
		}
		if (prandom_u32_state(&rnd) % 4 == 0) {
			fr[0].kind = SPULSE_FRAME_TRUNCATED;
			fr[0].addr = 0;
		}
		mk_sample(&s, fr, n, 100 + prandom_u32_state(&rnd) % 6, i * 10);
		KUNIT_ASSERT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1,
							 1000), 0);
		if (prandom_u32_state(&rnd) % 3 == 0) {	/* relay full */
			spulse_batch_rollback(&f->e, &f->b);
			dropped++;
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, sk_feed(f->sk, f->b.buf, f->b.len), 0,
				    "sample %u: %s at offset %zu", i, f->sk->err,
				    f->sk->err_off);
		spulse_batch_commit(&f->e, &f->b, s.t_ns);
		written++;
		KUNIT_ASSERT_EQ(test, f->sk->n_frames, f->e.next_frame);
		KUNIT_ASSERT_EQ(test, f->sk->n_stacks, f->e.next_stack);
		KUNIT_ASSERT_EQ(test, f->sk->n_threads, f->e.next_thread);
	}
	KUNIT_EXPECT_EQ(test, f->sk->n_samples, written);
	KUNIT_EXPECT_GT(test, dropped, 0U);
	/* small tables: content was redefined under new ids after resets */
	KUNIT_EXPECT_GT(test, f->sk->n_frames, 40U);
}

static void batch_too_big_is_rolled_back(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 24);	/* < header + thread */
	struct spulse_frame fr[] = { { SPULSE_FRAME_USER, 0x1000 } };
	struct spulse_sample s;

	mk_sample(&s, fr, 1, 7, 1);
	KUNIT_EXPECT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000),
			-E2BIG);
	KUNIT_EXPECT_FALSE(test, f->e.header_done);
	KUNIT_EXPECT_EQ(test, f->e.next_thread, 0U);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 0U);
	KUNIT_EXPECT_EQ(test, f->e.next_stack, 0U);
}

static void batch_rejects_truncated_marker_below_root(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[] = {
		{ SPULSE_FRAME_USER, 0x1000 }, { SPULSE_FRAME_TRUNCATED, 0 },
	};
	struct spulse_sample s;

	mk_sample(&s, fr, 2, 7, 1);
	KUNIT_EXPECT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 0U);
	mk_sample(&s, fr, 0, 7, 1);
	KUNIT_EXPECT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000),
			-EINVAL);
}

static void batch_thread_redefined_when_comm_changes(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[] = { { SPULSE_FRAME_USER, 0x1000 } };
	struct spulse_sample s;

	mk_sample(&s, fr, 1, 7, 1);
	write_one(test, f, &s);
	strscpy(s.comm, "renamed", sizeof(s.comm));
	s.t_ns = 2;
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 2U);
	KUNIT_EXPECT_EQ(test, f->sk->last_sample_thread, 1U);
}

/* Write one trigger mark at @t_ns (event clock) and check it decodes. */
static void write_trigger(struct kunit *test, struct enc_fix *f, u64 t_ns)
{
	int r = spulse_batch_build_trigger(&f->e, &f->b, t_ns,
					   SPULSE_TRIGGER_MANUAL, "mark", 1, 1000);

	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_ASSERT_EQ_MSG(test, sk_feed(f->sk, f->b.buf, f->b.len), 0,
			    "checker: %s at batch offset %zu", f->sk->err,
			    f->sk->err_off);
	spulse_batch_commit_event(&f->e, &f->b, t_ns);
}

/*
 * Ids near the limit start a new epoch: a fresh header and cpu record, ids
 * and both clocks from 0, and the stream still decodes with every time
 * continuous across epochs. (Before epochs, every sample past the limit
 * failed with -EOVERFLOW.)
 */
static void batch_epoch_restarts_ids_and_clocks(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[4];
	struct spulse_sample s;
	u32 i, j, max_frame = 0;

	f->e.id_limit = 40;
	for (i = 0; i < 300; i++) {
		for (j = 0; j < ARRAY_SIZE(fr); j++) {
			fr[j].kind = SPULSE_FRAME_USER;
			fr[j].addr = 0x1000 + 0x10 * (i % 50) + j;
		}
		mk_sample(&s, fr, ARRAY_SIZE(fr), 100 + i % 3, 1000 + i * 10);
		write_one(test, f, &s);
		/* the checker's per-epoch counts are the encoder's */
		KUNIT_ASSERT_EQ(test, f->sk->n_frames, f->e.next_frame);
		KUNIT_ASSERT_EQ(test, f->sk->n_stacks, f->e.next_stack);
		KUNIT_ASSERT_EQ(test, f->sk->n_threads, f->e.next_thread);
		KUNIT_ASSERT_LE(test, f->e.next_frame, 40U);
		KUNIT_ASSERT_LE(test, f->e.next_stack, 40U);
		KUNIT_ASSERT_EQ(test, f->sk->sample_ns, (s64)s.t_ns);
		max_frame = max(max_frame, f->e.next_frame);
		if (i % 7 == 3) {
			write_trigger(test, f, s.t_ns + 5);
			KUNIT_ASSERT_EQ(test, f->sk->tr_t, (s64)s.t_ns + 5);
		}
	}
	KUNIT_EXPECT_EQ(test, f->sk->n_samples, 300U);
	/* 50 distinct stacks of 4 new frames each: many epochs of <= 40 ids */
	KUNIT_EXPECT_GE(test, f->sk->n_epochs, 10U);
	KUNIT_EXPECT_EQ(test, (u64)f->sk->n_epochs, f->e.epochs);
	KUNIT_EXPECT_EQ(test, f->sk->n_epoch_cpu, f->sk->n_epochs);
	KUNIT_EXPECT_EQ(test, max_frame, 40U);
}

/* A dropped batch that began an epoch undoes it; the next one redoes it. */
static void batch_epoch_rollback_undoes_it(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame a[] = { { SPULSE_FRAME_USER, 0x1000 },
				    { SPULSE_FRAME_USER, 0x1001 } };
	struct spulse_frame b[] = { { SPULSE_FRAME_USER, 0x2000 },
				    { SPULSE_FRAME_USER, 0x2001 } };
	struct spulse_sample s;

	f->e.id_limit = 3;
	mk_sample(&s, a, 2, 7, 100);
	write_one(test, f, &s);
	KUNIT_ASSERT_EQ(test, f->e.next_frame, 2U);
	mk_sample(&s, b, 2, 7, 250);
	KUNIT_ASSERT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000), 0);
	KUNIT_EXPECT_TRUE(test, f->b.epoch);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 2U);	/* 0, 1 of the new epoch */
	spulse_batch_rollback(&f->e, &f->b);		/* relay full */
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 2U);
	KUNIT_EXPECT_EQ(test, f->e.next_thread, 1U);
	KUNIT_EXPECT_TRUE(test, f->e.header_done);
	KUNIT_EXPECT_EQ(test, f->e.last_ns, 100ULL);
	KUNIT_EXPECT_EQ(test, f->e.epochs, 0ULL);
	/* the retry starts the epoch again and decodes */
	s.t_ns = 300;
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->sk->n_epochs, 1U);
	KUNIT_EXPECT_EQ(test, f->e.epochs, 1ULL);
	KUNIT_EXPECT_EQ(test, f->sk->sample_ns, 300LL);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 2U);
}

/* One batch needing more ids than an epoch has fails, rolled back. */
static void batch_larger_than_epoch_fails(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 8, 4096);
	struct spulse_frame fr[] = { { SPULSE_FRAME_USER, 0x1000 },
				     { SPULSE_FRAME_USER, 0x2000 },
				     { SPULSE_FRAME_USER, 0x3000 } };
	struct spulse_sample s;

	f->e.id_limit = 2;
	mk_sample(&s, fr, 3, 7, 1);
	KUNIT_EXPECT_EQ(test, spulse_batch_build(&f->e, &f->b, &s, 1, 1000),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, f->e.next_frame, 0U);
	KUNIT_EXPECT_FALSE(test, f->e.header_done);
	/* and a sample that fits is written */
	mk_sample(&s, fr, 2, 7, 2);
	write_one(test, f, &s);
	KUNIT_EXPECT_EQ(test, f->e.epochs, 0ULL);
}

/*
 * The prefix memo (struct spulse_enc_pfx) changes no byte: two encoders
 * fed the same random samples (shared prefixes, truncated markers, small
 * tables that reset alone and run out of probes, dropped batches, an
 * epoch limit), one with its memo wiped before every build, write the same
 * batches; and the memo did answer lookups.
 */
static void batch_prefix_memo_writes_the_same_bytes(struct kunit *test)
{
	struct enc_fix *a = new_fix(test, 6, 8192);
	struct enc_fix *r = new_fix(test, 6, 8192);
	struct spulse_frame fr[80];
	struct spulse_sample s;
	u32 i, j, n = 0;
	struct rnd_state rnd;
	int ra, rr;

	a->e.id_limit = 700;
	r->e.id_limit = 700;
	prandom_seed_state(&rnd, 7);
	for (i = 0; i < 4000; i++) {
		u32 keep = n ? prandom_u32_state(&rnd) % (n + 1) : 0;

		/* keep a random prefix of the previous stack, redo the rest */
		n = 1 + prandom_u32_state(&rnd) % ARRAY_SIZE(fr);
		for (j = keep < n ? keep : n; j < n; j++) {
			fr[j].kind = j < n / 2 ? SPULSE_FRAME_USER :
						 SPULSE_FRAME_KERNEL;
			fr[j].addr = 0x1000 + 16 * (prandom_u32_state(&rnd) % 24);
		}
		if (fr[0].kind == SPULSE_FRAME_TRUNCATED ||
		    prandom_u32_state(&rnd) % 8 == 0) {
			fr[0].kind = prandom_u32_state(&rnd) % 2 ?
				     SPULSE_FRAME_TRUNCATED : SPULSE_FRAME_USER;
			fr[0].addr = 0x1000;
		}
		mk_sample(&s, fr, n, 100 + prandom_u32_state(&rnd) % 3, i * 10);
		memset(&r->e.pfx, 0, sizeof(r->e.pfx));
		ra = spulse_batch_build(&a->e, &a->b, &s, 1, 1000);
		rr = spulse_batch_build(&r->e, &r->b, &s, 1, 1000);
		KUNIT_ASSERT_EQ_MSG(test, ra, rr, "sample %u", i);
		if (ra)
			continue;
		KUNIT_ASSERT_EQ_MSG(test, a->b.len, r->b.len, "sample %u", i);
		KUNIT_ASSERT_EQ_MSG(test, memcmp(a->b.buf, r->b.buf, a->b.len),
				    0, "sample %u", i);
		if (prandom_u32_state(&rnd) % 5 == 0) {	/* relay full */
			spulse_batch_rollback(&a->e, &a->b);
			spulse_batch_rollback(&r->e, &r->b);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, sk_feed(a->sk, a->b.buf, a->b.len), 0,
				    "sample %u: %s at offset %zu", i, a->sk->err,
				    a->sk->err_off);
		spulse_batch_commit(&a->e, &a->b, s.t_ns);
		spulse_batch_commit(&r->e, &r->b, s.t_ns);
	}
	KUNIT_EXPECT_GT(test, a->e.pfx_hits, 10000ULL);
	KUNIT_EXPECT_EQ(test, r->e.pfx_hits, 0ULL);
	KUNIT_EXPECT_GT(test, a->e.resets_frames + a->e.resets_stacks, 0ULL);
	KUNIT_EXPECT_GT(test, a->e.epochs, 0ULL);
}

/*
 * A full thread table is reset alone: the frames and stack nodes stay
 * defined and are not written again (before, >= 3/4 of the thread table
 * reset all three tables).
 */
static void batch_thread_table_full_keeps_frames(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 4, 4096);	/* 16 slots, full at 12 */
	struct spulse_frame fr[] = { { SPULSE_FRAME_USER, 0x1000 },
				     { SPULSE_FRAME_USER, 0x2000 },
				     { SPULSE_FRAME_KERNEL, 0xffffffff81000010ULL } };
	struct spulse_sample s;
	u32 i;

	for (i = 0; i < 100; i++) {
		mk_sample(&s, fr, ARRAY_SIZE(fr), 1000 + i, 10 + i);
		write_one(test, f, &s);
	}
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 100U);
	KUNIT_EXPECT_GT(test, f->e.resets_threads, 0ULL);
	KUNIT_EXPECT_EQ(test, f->e.resets_frames, 0ULL);
	KUNIT_EXPECT_EQ(test, f->e.resets_stacks, 0ULL);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_stacks, 3U);
	KUNIT_EXPECT_EQ(test, f->sk->n_epochs, 0U);
}

/* A full frame table is reset alone: threads are not redefined. */
static void batch_frame_table_full_keeps_threads(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 4, 4096);
	struct spulse_frame fr[1];
	struct spulse_sample s;
	u32 i;

	for (i = 0; i < 60; i++) {
		fr[0].kind = SPULSE_FRAME_USER;
		fr[0].addr = 0x1000 + i;
		mk_sample(&s, fr, 1, 7, 10 + i);
		write_one(test, f, &s);
	}
	KUNIT_EXPECT_GT(test, f->e.resets_frames, 0ULL);
	KUNIT_EXPECT_EQ(test, f->e.resets_threads, 0ULL);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 1U);
	KUNIT_EXPECT_EQ(test, f->sk->n_frames, 60U);
}

/* The two encoders are in the same state (counters, clocks, resets). */
static void expect_same_enc(struct kunit *test, const struct spulse_enc *a,
			    const struct spulse_enc *d, u32 i)
{
	KUNIT_ASSERT_EQ_MSG(test, a->gen, d->gen, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->next_frame, d->next_frame, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->next_stack, d->next_stack, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->next_thread, d->next_thread, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->header_done, d->header_done, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->last_ns, d->last_ns, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->records, d->records, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->bytes, d->bytes, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->epochs, d->epochs, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->resets_frames, d->resets_frames, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->resets_stacks, d->resets_stacks, "step %u", i);
	KUNIT_ASSERT_EQ_MSG(test, a->resets_threads, d->resets_threads,
			    "step %u", i);
}

/*
 * spulse_batch_leaf_direct() (the sampler's cached sample written without
 * a batch) writes exactly what spulse_batch_build_leaf() and
 * spulse_batch_commit() write, and leaves the encoder as they do; when it
 * declines (new thread, a table due for its reset, stale generation, no
 * header) nothing changed and the batch path does the rest. Small tables
 * (resets), many threads, an id limit (epochs) and dropped batches.
 */
static void batch_leaf_direct_writes_the_same_bytes(struct kunit *test)
{
	struct enc_fix *a = new_fix(test, 5, 8192);
	struct enc_fix *d = new_fix(test, 5, 8192);
	struct spulse_enc *snap = kunit_kzalloc(test, sizeof(*snap), GFP_KERNEL);
	struct spulse_frame fr[12][6];
	u32 depth[12], leaf[12], direct = 0, declined = 0, i, j, k;
	u64 gen[12];
	bool cached[12] = {}, full;
	struct spulse_sample s;
	struct rnd_state rnd;
	u8 out[SPULSE_SAMPLE_MAX];
	size_t n;
	int ra, rd;

	KUNIT_ASSERT_NOT_NULL(test, snap);
	a->e.id_limit = 300;
	d->e.id_limit = 300;
	prandom_seed_state(&rnd, 11);
	for (k = 0; k < ARRAY_SIZE(fr); k++) {
		depth[k] = 1 + prandom_u32_state(&rnd) % 6;
		for (j = 0; j < depth[k]; j++) {
			fr[k][j].kind = SPULSE_FRAME_USER;
			fr[k][j].addr = 0x1000 + 16 * (prandom_u32_state(&rnd) % 40);
		}
	}
	for (i = 0; i < 6000; i++) {
		k = prandom_u32_state(&rnd) % ARRAY_SIZE(fr);
		/* mostly a few threads, now and then one of many (resets) */
		mk_sample(&s, fr[k], depth[k],
			  prandom_u32_state(&rnd) % 4 ? 7 :
			  100 + prandom_u32_state(&rnd) % 40,
			  1000ULL * i + prandom_u32_state(&rnd) % 1000);
		if (prandom_u32_state(&rnd) % 50 == 0)
			s.comm[0] = 'a' + prandom_u32_state(&rnd) % 3;
		full = false;
		if (cached[k] && gen[k] == a->e.gen) {
			*snap = d->e;
			n = spulse_batch_leaf_direct(&d->e, out, &s, leaf[k],
						     gen[k]);
			ra = spulse_batch_build_leaf(&a->e, &a->b, &s, leaf[k],
						     gen[k], 1, 1000);
			if (n) {
				direct++;
				KUNIT_ASSERT_EQ_MSG(test, ra, 0, "step %u", i);
				KUNIT_ASSERT_EQ_MSG(test, a->b.len, n, "step %u", i);
				KUNIT_ASSERT_EQ_MSG(test, memcmp(a->b.buf, out, n),
						    0, "step %u", i);
				ra = sk_feed(a->sk, a->b.buf, a->b.len);
				KUNIT_ASSERT_EQ_MSG(test, ra, 0, "step %u: %s", i,
						    a->sk->err);
				spulse_batch_commit(&a->e, &a->b, s.t_ns);
				expect_same_enc(test, &a->e, &d->e, i);
				continue;
			}
			declined++;
			/* declined: nothing changed */
			expect_same_enc(test, snap, &d->e, i);
			rd = spulse_batch_build_leaf(&d->e, &d->b, &s, leaf[k],
						     gen[k], 1, 1000);
			KUNIT_ASSERT_EQ_MSG(test, ra, rd, "step %u", i);
			if (ra && ra != -ESTALE)
				continue;
		} else {
			ra = -ESTALE;
		}
		if (ra == -ESTALE) {
			full = true;
			ra = spulse_batch_build(&a->e, &a->b, &s, 1, 1000);
			rd = spulse_batch_build(&d->e, &d->b, &s, 1, 1000);
			KUNIT_ASSERT_EQ_MSG(test, ra, rd, "step %u", i);
			if (ra)
				continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, a->b.len, d->b.len, "step %u", i);
		KUNIT_ASSERT_EQ_MSG(test, memcmp(a->b.buf, d->b.buf, a->b.len),
				    0, "step %u", i);
		if (prandom_u32_state(&rnd) % 6 == 0) {	/* relay full */
			spulse_batch_rollback(&a->e, &a->b);
			spulse_batch_rollback(&d->e, &d->b);
			expect_same_enc(test, &a->e, &d->e, i);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, sk_feed(a->sk, a->b.buf, a->b.len), 0,
				    "step %u: %s at offset %zu", i, a->sk->err,
				    a->sk->err_off);
		spulse_batch_commit(&a->e, &a->b, s.t_ns);
		spulse_batch_commit(&d->e, &d->b, s.t_ns);
		expect_same_enc(test, &a->e, &d->e, i);
		if (full) {
			cached[k] = true;
			leaf[k] = a->b.leaf;
			gen[k] = a->e.gen;
		}
	}
	KUNIT_EXPECT_GT(test, direct, 1000U);
	KUNIT_EXPECT_GT(test, declined, 100U);
	KUNIT_EXPECT_GT(test, a->e.epochs, 0ULL);
	/* a stale generation or a stream without its header: declined */
	mk_sample(&s, fr[0], depth[0], 7, 1000ULL * i);
	KUNIT_EXPECT_EQ(test, spulse_batch_leaf_direct(&d->e, out, &s, 0,
						       d->e.gen + 1), (size_t)0);
	d->e.header_done = false;
	KUNIT_EXPECT_EQ(test, spulse_batch_leaf_direct(&d->e, out, &s, 0,
						       d->e.gen), (size_t)0);
	d->e.header_done = true;
	expect_same_enc(test, &a->e, &d->e, i);
}

/*
 * A threads table due for its reset declines the direct record even for
 * the remembered thread: the batch path resets the table first and so
 * defines the thread again.
 */
static void batch_leaf_direct_declines_full_thread_table(struct kunit *test)
{
	struct enc_fix *f = new_fix(test, 4, 4096);	/* 16 slots, full at 12 */
	struct spulse_frame fr[] = { { SPULSE_FRAME_USER, 0x1000 } };
	struct spulse_sample s;
	u8 out[SPULSE_SAMPLE_MAX];
	u32 i, leaf;
	size_t n;
	u64 gen;

	mk_sample(&s, fr, 1, 100, 10);
	write_one(test, f, &s);
	leaf = f->b.leaf;
	gen = f->e.gen;
	/* not the remembered thread: declined */
	mk_sample(&s, fr, 1, 101, 20);
	KUNIT_EXPECT_EQ(test, spulse_batch_leaf_direct(&f->e, out, &s, leaf,
						       gen), (size_t)0);
	/* the remembered one: the record alone */
	mk_sample(&s, fr, 1, 100, 30);
	n = spulse_batch_leaf_direct(&f->e, out, &s, leaf, gen);
	KUNIT_ASSERT_GT(test, n, (size_t)0);
	KUNIT_ASSERT_EQ(test, sk_feed(f->sk, out, n), 0);
	/* ten more threads, then 7: the table holds 12, due for its reset */
	for (i = 1; i <= 10; i++) {
		mk_sample(&s, fr, 1, 100 + i, 40 + i);
		write_one(test, f, &s);
	}
	mk_sample(&s, fr, 1, 7, 100);
	write_one(test, f, &s);
	KUNIT_ASSERT_TRUE(test, spulse_intern_full(&f->e.threads));
	KUNIT_ASSERT_EQ(test, f->e.gen, gen);
	KUNIT_ASSERT_EQ(test, f->e.resets_threads, 0ULL);
	mk_sample(&s, fr, 1, 7, 200);
	KUNIT_EXPECT_EQ(test, spulse_batch_leaf_direct(&f->e, out, &s, leaf,
						       gen), (size_t)0);
	KUNIT_ASSERT_EQ(test, spulse_batch_build_leaf(&f->e, &f->b, &s, leaf,
						      gen, 1, 1000), 0);
	KUNIT_EXPECT_EQ(test, f->b.records, 2U);	/* thread + sample */
	KUNIT_EXPECT_EQ(test, f->e.resets_threads, 1ULL);
	KUNIT_EXPECT_EQ(test, sk_feed(f->sk, f->b.buf, f->b.len), 0);
	KUNIT_EXPECT_EQ(test, f->sk->n_threads, 13U);
}

/* The checker refuses a second header that is not one. */
static void stream_check_epoch_header_rules(struct kunit *test)
{
	struct sk_stream *sk = kunit_kzalloc(test, sizeof(*sk), GFP_KERNEL);
	u8 buf[128];
	size_t n;

	KUNIT_ASSERT_NOT_NULL(test, sk);
	n = spulse_enc_header(buf, 5, 1000);
	n += spulse_enc_thread(buf + n, 0, 1, 1, "t", 1);
	sk_init(sk);
	KUNIT_ASSERT_EQ(test, sk_feed(sk, buf, n), 0);
	/* a new epoch: thread id 0 again is dense there */
	n = spulse_enc_header(buf, 5, 1000);
	n += spulse_enc_thread(buf + n, 0, 1, 1, "t", 1);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), 0);
	KUNIT_EXPECT_EQ(test, sk->n_epochs, 1U);
	/* ... but not a header with another start */
	n = spulse_enc_header(buf, 6, 1000);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "epoch header with another start_us");
	/* ... nor a broken magic */
	sk_init(sk);
	n = spulse_enc_header(buf, 5, 1000);
	KUNIT_ASSERT_EQ(test, sk_feed(sk, buf, n), 0);
	n = spulse_enc_header(buf, 5, 1000);
	buf[3] ^= 1;
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "bad epoch header");
}

/* The checker the suites rely on must itself reject what it guards against. */
static void stream_check_rejects_dangling_and_gaps(struct kunit *test)
{
	struct sk_stream *sk = kunit_kzalloc(test, sizeof(*sk), GFP_KERNEL);
	u8 buf[64];
	size_t n;

	KUNIT_ASSERT_NOT_NULL(test, sk);
	n = spulse_enc_header(buf, 1, 1000);
	n += spulse_enc_thread(buf + n, 0, 1, 1, "t", 1);
	n += spulse_enc_frame_abs(buf + n, 0, SPULSE_FRAME_USER, 0x1000);
	n += spulse_enc_stack(buf + n, 0, SPULSE_STACK_ROOT, 0);
	sk_init(sk);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), 0);
	/* sample naming stack 1: never defined */
	n = spulse_enc_sample(buf, 1, 0, 1);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "sample stack not defined");
	/* frame id 2 after frame 0: a gap */
	n = spulse_enc_frame_abs(buf, 2, SPULSE_FRAME_USER, 0x2000);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	/* truncated marker below the root */
	n = spulse_enc_frame_truncated(buf, 1);
	n += spulse_enc_stack(buf + n, 1, 1, 1);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, buf, n), -EINVAL);
	KUNIT_EXPECT_STREQ(test, sk->err, "truncated marker not at the root");
}

static struct kunit_case spulse_encode_cases[] = {
	KUNIT_CASE(stream_check_rejects_dangling_and_gaps),
	KUNIT_CASE(batch_first_sample_defines_all_it_references),
	KUNIT_CASE(batch_repeated_sample_is_one_record),
	KUNIT_CASE(batch_shares_common_prefix_between_stacks),
	KUNIT_CASE(batch_rollback_redefines_after_dropped_batch),
	KUNIT_CASE(batch_random_drops_never_dangle),
	KUNIT_CASE(batch_prefix_memo_writes_the_same_bytes),
	KUNIT_CASE(batch_too_big_is_rolled_back),
	KUNIT_CASE(batch_rejects_truncated_marker_below_root),
	KUNIT_CASE(batch_thread_redefined_when_comm_changes),
	KUNIT_CASE(stream_check_epoch_header_rules),
	KUNIT_CASE(batch_epoch_restarts_ids_and_clocks),
	KUNIT_CASE(batch_epoch_rollback_undoes_it),
	KUNIT_CASE(batch_larger_than_epoch_fails),
	KUNIT_CASE(batch_thread_table_full_keeps_frames),
	KUNIT_CASE(batch_frame_table_full_keeps_threads),
	KUNIT_CASE(batch_leaf_direct_writes_the_same_bytes),
	KUNIT_CASE(batch_leaf_direct_declines_full_thread_table),
	{}
};

static struct kunit_suite spulse_encode_suite = {
	.name = "spulse_encode",
	.test_cases = spulse_encode_cases,
};

kunit_test_suite(spulse_encode_suite);
