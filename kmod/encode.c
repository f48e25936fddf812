// SPDX-License-Identifier: GPL-2.0
/*
 * Where records are encoded. Each sample becomes one batch: the definitions
 * it needs that this CPU's stream does not have yet (stream header and cpu
 * record, thread, frames, stack nodes root to leaf) followed by the sample
 * record; an off-CPU interval or a trigger mark likewise. The batch
 * is written with one relay reservation; when that fails the id counters are
 * rolled back and the intern tables forgotten, so nothing that was not
 * written is ever referenced by a later batch.
 *
 * Ids only grow within an epoch, so a full intern table is reset alone: its
 * content is defined again under new ids, and what the other tables name
 * stays defined. A batch that would take an id past the epoch limit starts
 * a new epoch instead: a fresh stream header (docs/FORMAT.md section 7),
 * every id space and both clocks from 0.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "encoder.h"
#include "offcpu.h"
#include "kunit_export.h"

/**
 * spulse_enc_reset() - forget every definition (the ids keep counting)
 * @e: encoder
 */
void spulse_enc_reset(struct spulse_enc *e)
{
	e->gen++;
	spulse_intern_reset(&e->frames);
	spulse_intern_reset(&e->stacks);
	spulse_intern_reset(&e->threads);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_enc_reset);

static u32 spulse_enc_id_limit(const struct spulse_enc *e)
{
	if (!e->id_limit)
		return SPULSE_EPOCH_IDS;
	return min(e->id_limit, SPULSE_MAX_ID);
}

/* Reset one full table alone (its resets counted in *@resets). */
static void spulse_intern_reset_one(struct spulse_intern *t, u64 *resets)
{
	spulse_intern_reset(t);
	(*resets)++;
}

/*
 * Intern @k in @t: 1 and a new id in *@id (taken from *@next, below
 * @limit), 0 and its id when known, or a negative errno. A table whose
 * probes are exhausted is reset alone (counted in *@resets) and asked
 * again. Inline in spulse_batch_stack(), where it runs twice a frame.
 */
static __always_inline int spulse_intern_get_inl(struct spulse_intern *t,
						 const u64 k[3], u32 *next,
						 u32 limit, u64 *resets,
						 u32 *id)
{
	struct spulse_intern_ent *slot;
	int r = spulse_intern_find(t, k, id, &slot);

	if (r == 1)
		return 0;
	if (r < 0) {
		spulse_intern_reset_one(t, resets);
		r = spulse_intern_find(t, k, id, &slot);
		if (r < 0)
			return r;
	}
	if (*next >= limit)
		return -EOVERFLOW;
	*id = (*next)++;
	spulse_intern_set(t, slot, k, *id);
	return 1;
}

/* spulse_intern_get_inl() out of line, for the threads table. */
static int spulse_intern_get(struct spulse_intern *t, const u64 k[3], u32 *next,
			     u32 limit, u64 *resets, u32 *id)
{
	return spulse_intern_get_inl(t, k, next, limit, resets, id);
}

static bool spulse_batch_room(const struct spulse_batch *b, size_t need)
{
	return b->cap - b->len >= need;
}

/*
 * Start a batch: save the counters, reset any full table alone, and with
 * @epoch start a new epoch (ids and clocks from 0, a new header); write the
 * header + cpu record if needed.
 */
static __always_inline int spulse_batch_begin(struct spulse_enc *e,
					      struct spulse_batch *b,
					      u64 start_us, u64 interval_us,
					      bool epoch)
{
	b->len = 0;
	b->records = 0;
	b->saved_frame = e->next_frame;
	b->saved_stack = e->next_stack;
	b->saved_thread = e->next_thread;
	b->saved_header = e->header_done;
	b->saved_last_ns = e->last_ns;
	b->saved_last_event_ns = e->last_event_ns;
	b->epoch = epoch;

	if (epoch) {
		e->next_frame = 0;
		e->next_stack = 0;
		e->next_thread = 0;
		e->header_done = false;
		e->last_ns = 0;
		e->last_event_ns = 0;
		spulse_enc_reset(e);
	}
	if (spulse_intern_full(&e->frames))
		spulse_intern_reset_one(&e->frames, &e->resets_frames);
	if (spulse_intern_full(&e->stacks))
		spulse_intern_reset_one(&e->stacks, &e->resets_stacks);
	if (spulse_intern_full(&e->threads))
		spulse_intern_reset_one(&e->threads, &e->resets_threads);

	if (!e->header_done) {
		if (!spulse_batch_room(b, SPULSE_HEADER_MAX + SPULSE_EXT_CPU_MAX))
			return -E2BIG;
		b->len += spulse_enc_header(b->buf, start_us, interval_us);
		b->len += spulse_enc_ext_cpu(b->buf + b->len, e->cpu);
		b->records++;
		e->header_done = true;
	}
	return 0;
}

/*
 * Intern a thread (defining it in @b if new); its id in *@id. The same
 * thread as the last call's takes its id from @e->thr without the lookup
 * (struct spulse_enc_thr says why that is the lookup's answer). Inline:
 * with spulse_batch_begin() it is most of a cached sample's encoding.
 */
static __always_inline int spulse_batch_thread(struct spulse_enc *e,
					       struct spulse_batch *b, u32 pid,
					       u32 tid, const char *comm,
					       u32 *id)
{
	struct spulse_enc_thr *m = &e->thr;
	u64 k[3];
	size_t clen;
	int r;

	spulse_enc_thr_key(k, pid, tid, comm);
	if (spulse_enc_thr_is(m, e->gen, e->resets_threads, k)) {
		*id = m->id;
		return 0;
	}
	r = spulse_intern_get(&e->threads, k, &e->next_thread,
			      spulse_enc_id_limit(e), &e->resets_threads, id);
	if (r < 0)
		return r;
	m->k[0] = k[0];
	m->k[1] = k[1];
	m->k[2] = k[2];
	m->id = *id;
	m->gen = e->gen + 1;
	m->resets_threads = e->resets_threads;
	if (!r)
		return 0;
	if (!spulse_batch_room(b, SPULSE_THREAD_REC_MAX))
		return -E2BIG;
	clen = strnlen(comm, 16);
	b->len += spulse_enc_thread(b->buf + b->len, *id, pid, tid, comm, clen);
	b->records++;
	return 0;
}

/*
 * How many of @frames' first frames the previous frame-by-frame stack
 * shares (struct spulse_enc_pfx): their nodes are @e->pfx.node[].
 */
static u32 spulse_pfx_match(const struct spulse_enc *e,
			    const struct spulse_frame *frames, u32 n)
{
	const struct spulse_enc_pfx *p = &e->pfx;
	u32 i, lim = min(n, p->n);

	if (p->gen != e->gen || p->resets_frames != e->resets_frames ||
	    p->resets_stacks != e->resets_stacks)
		return 0;
	/*
	 * Frames as given: a truncated marker is interned without its
	 * address, so two markers with different ones are the same frame and
	 * this only misses a match (the lookups then find the same ids).
	 */
	for (i = 0; i < lim; i++)
		if (frames[i].addr != p->addr[i] || frames[i].kind != p->kind[i])
			break;
	return i;
}

/* Intern a stack root..leaf (defining what is new in @b); leaf in *@leaf. */
static int spulse_batch_stack(struct spulse_enc *e, struct spulse_batch *b,
			      const struct spulse_frame *frames, u32 n,
			      u32 *leaf)
{
	struct spulse_enc_pfx *p = &e->pfx;
	u64 parent = SPULSE_STACK_ROOT;
	u32 i, id = 0, frame, limit = spulse_enc_id_limit(e), same;
	int r;

	if (!n)
		return -EINVAL;
	same = spulse_pfx_match(e, frames, n);
	if (same) {
		id = p->node[same - 1];
		parent = (u64)id + 1;
		e->pfx_hits += same;
	}
	/* from here on @p holds this stack's nodes, once complete */
	p->n = same;
	p->gen = e->gen;
	p->resets_frames = e->resets_frames;
	p->resets_stacks = e->resets_stacks;
	for (i = same; i < n; i++) {
		const struct spulse_frame *f = &frames[i];
		u64 fk[3] = { f->kind, f->addr, 0 };

		if (f->kind == SPULSE_FRAME_TRUNCATED && i)
			return -EINVAL;
		if (f->kind == SPULSE_FRAME_TRUNCATED)
			fk[1] = 0;
		r = spulse_intern_get_inl(&e->frames, fk, &e->next_frame,
					  limit, &e->resets_frames, &frame);
		if (r < 0)
			return r;
		if (r) {
			if (!spulse_batch_room(b, SPULSE_FRAME_REC_MAX))
				return -E2BIG;
			if (f->kind == SPULSE_FRAME_TRUNCATED)
				b->len += spulse_enc_frame_truncated(b->buf + b->len,
								     frame);
			else
				b->len += spulse_enc_frame_abs(b->buf + b->len,
							       frame, f->kind,
							       f->addr);
			b->records++;
		}
		fk[0] = parent;
		fk[1] = frame;
		r = spulse_intern_get_inl(&e->stacks, fk, &e->next_stack,
					  limit, &e->resets_stacks, &id);
		if (r < 0)
			return r;
		if (r) {
			if (!spulse_batch_room(b, SPULSE_STACK_REC_MAX))
				return -E2BIG;
			b->len += spulse_enc_stack(b->buf + b->len, id, parent,
						   frame);
			b->records++;
		}
		parent = (u64)id + 1;
		if (i < SPULSE_ENC_PFX_DEPTH) {
			p->addr[i] = f->addr;
			p->node[i] = id;
			p->kind[i] = f->kind;
		}
	}
	/*
	 * A table reset on the way (probes exhausted) changed its generation:
	 * the nodes stored before it are not its answers any more.
	 */
	if (p->resets_frames == e->resets_frames &&
	    p->resets_stacks == e->resets_stacks)
		p->n = min_t(u32, n, SPULSE_ENC_PFX_DEPTH);
	*leaf = id;
	return 0;
}

/* One attempt of spulse_batch_build(), in a new epoch with @epoch. */
static int spulse_batch_build_one(struct spulse_enc *e, struct spulse_batch *b,
				  const struct spulse_sample *s, u64 start_us,
				  u64 interval_us, bool epoch)
{
	u32 thread, leaf;
	int r;

	r = spulse_batch_begin(e, b, start_us, interval_us, epoch);
	if (!r && !s->n)
		r = -EINVAL;
	if (!r)
		r = spulse_batch_thread(e, b, s->pid, s->tid, s->comm, &thread);
	if (!r)
		r = spulse_batch_stack(e, b, s->frames, s->n, &leaf);
	if (!r && !spulse_batch_room(b, SPULSE_SAMPLE_MAX))
		r = -E2BIG;
	if (r) {
		spulse_batch_rollback(e, b);
		return r;
	}
	b->len += spulse_enc_sample(b->buf + b->len,
				    (s64)(s->t_ns - e->last_ns), thread, leaf);
	b->records++;
	b->leaf = leaf;
	return 0;
}

/**
 * spulse_batch_build() - encode one sample and its missing definitions
 * @e: this CPU's encoder
 * @b: batch (buffer and capacity set by the caller)
 * @s: the captured sample, frames root..leaf (kinds 1-3, normalized)
 * @start_us: header start_us
 * @interval_us: header interval_us
 *
 * The first batch of a stream (and of each epoch) starts with the header
 * and the stream's cpu record (extension kind 1, @e->cpu). A batch that
 * would take an id past the epoch limit (@e->id_limit) is built again as
 * the first batch of a new epoch. On success the caller writes
 * @b->buf[0..@b->len) in one reservation and then calls
 * spulse_batch_commit(), or spulse_batch_rollback() when the write failed.
 * On error the encoder is already rolled back.
 *
 * Return: 0, -E2BIG (batch does not fit @b->cap), -EINVAL (no frames or a
 * truncated marker that is not the root), -EOVERFLOW (the batch alone needs
 * more ids than one epoch has).
 */
int spulse_batch_build(struct spulse_enc *e, struct spulse_batch *b,
		       const struct spulse_sample *s, u64 start_us,
		       u64 interval_us)
{
	int r = spulse_batch_build_one(e, b, s, start_us, interval_us, false);

	if (r == -EOVERFLOW)
		r = spulse_batch_build_one(e, b, s, start_us, interval_us, true);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_build);

/**
 * spulse_scache_hash() - hash of a compact stack for the stack cache
 * @st: the stack
 *
 * Return: a 64-bit hash of @st->trunc, @st->nu, @st->nk and every address.
 */
u64 spulse_scache_hash(const struct spulse_oc_stack *st)
{
	u64 h = spulse_scache_hash_seed(st->trunc, st->nu, st->nk);
	u32 i, n = (u32)st->nu + st->nk;

	/*
	 * Multiply per address, no shift: bit k of a product depends on
	 * bits 0..k of its operand, so the top bits (the slot) depend on
	 * every bit of every address; a hash only picks the slot and
	 * filters, the stack is compared whole.
	 */
	for (i = 0; i < n; i++)
		h = (h ^ st->addr[i]) * SPULSE_SCACHE_HASH_MUL;
	return h;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_scache_hash);

/**
 * spulse_scache_find() - look a stack up in the stack cache
 * @c: cache (@c->ent may be NULL: no cache)
 * @gen: the encoder's generation (spulse_enc.gen)
 * @hash: spulse_scache_hash(@st)
 * @st: the stack, compared exactly (trunc, nu, nk, every address)
 * @leaf: set to the cached leaf stack id on a hit
 *
 * Return: true on a hit: the stack was interned as @leaf in generation
 * @gen, so all its frames and nodes are defined in this stream.
 */
bool spulse_scache_find(const struct spulse_scache *c, u64 gen, u64 hash,
			const struct spulse_oc_stack *st, u32 *leaf)
{
	const struct spulse_scache_ent *x;
	u32 i, n = (u32)st->nu + st->nk;

	if (!c->ent)
		return false;
	x = spulse_scache_slot(c, hash);
	if (!spulse_scache_ent_is(x, gen, hash, st->trunc, st->nu, st->nk))
		return false;
	for (i = 0; i < n; i++)
		if (x->addr[i] != st->addr[i])
			return false;
	*leaf = x->leaf;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_scache_find);

/**
 * spulse_scache_put() - remember an interned stack (replacing its slot)
 * @c: cache (@c->ent may be NULL: nothing is stored)
 * @gen: the encoder's generation
 * @hash: spulse_scache_hash(@st)
 * @st: the stack; one deeper than SPULSE_SCACHE_DEPTH is not stored
 * @leaf: its leaf stack id
 */
void spulse_scache_put(struct spulse_scache *c, u64 gen, u64 hash,
		       const struct spulse_oc_stack *st, u32 leaf)
{
	struct spulse_scache_ent *x;
	u32 n = (u32)st->nu + st->nk;

	if (!c->ent || n > SPULSE_SCACHE_DEPTH)
		return;
	x = spulse_scache_slot(c, hash);
	spulse_scache_ent_set(x, gen, hash, leaf, st->trunc, st->nu, st->nk);
	memcpy(x->addr, st->addr, (size_t)n * sizeof(u64));
}
EXPORT_SYMBOL_IF_KUNIT(spulse_scache_put);

/*
 * Intern a compact stack: from the stack cache when this generation has
 * interned the same frames before, else frame by frame (then cached).
 */
static int spulse_batch_oc_stack(struct spulse_enc *e, struct spulse_batch *b,
				 const struct spulse_oc_stack *st,
				 struct spulse_frame *scratch, u32 *leaf)
{
	bool cacheable = e->scache.ent &&
			 (u32)st->nu + st->nk <= SPULSE_SCACHE_DEPTH;
	u64 h = 0;
	int r;

	if (cacheable) {
		h = spulse_scache_hash(st);
		if (spulse_scache_find(&e->scache, e->gen, h, st, leaf)) {
			e->scache.hits++;
			return 0;
		}
		e->scache.misses++;
	}
	r = spulse_batch_stack(e, b, scratch, spulse_oc_stack_frames(st, scratch),
			       leaf);
	if (!r && cacheable)
		spulse_scache_put(&e->scache, e->gen, h, st, *leaf);
	return r;
}

/* One attempt of spulse_batch_build_offcpu(), in a new epoch with @epoch. */
static int spulse_batch_build_offcpu_one(struct spulse_enc *e,
					 struct spulse_batch *b,
					 const struct spulse_oc_slot *s,
					 u64 t_in, u32 cpu_in,
					 struct spulse_frame *scratch,
					 u64 start_us, u64 interval_us,
					 bool epoch)
{
	struct spulse_offcpu_fields f = {};
	int r;

	r = spulse_batch_begin(e, b, start_us, interval_us, epoch);
	if (!r)
		r = spulse_batch_thread(e, b, s->self.pid, s->self.tid,
					s->self.comm, &f.thread);
	if (!r)
		r = spulse_batch_oc_stack(e, b, &s->self.st, scratch, &f.stack);
	if (!r && s->has_waker && s->state != SPULSE_STATE_RUNNABLE) {
		f.has_waker = true;
		f.waker_cpu = s->waker_cpu;
		r = spulse_batch_thread(e, b, s->waker.pid, s->waker.tid,
					s->waker.comm, &f.waker_thread);
		if (!r)
			r = spulse_batch_oc_stack(e, b, &s->waker.st, scratch,
						  &f.waker_stack);
	}
	if (!r && !spulse_batch_room(b, SPULSE_EXT_OFFCPU_MAX))
		r = -E2BIG;
	if (r) {
		spulse_batch_rollback(e, b);
		return r;
	}
	f.dt_ns = (s64)(s->t_out - e->last_event_ns);
	f.state = s->state;
	f.cpu_out = s->cpu_out;
	f.cpu_in = cpu_in;
	spulse_oc_interval(s, t_in, &f.blocked_ns, &f.runq_ns);
	b->len += spulse_enc_ext_offcpu(b->buf + b->len, &f);
	b->records++;
	return 0;
}


/**
 * spulse_batch_build_offcpu() - encode one closed off-CPU interval
 * @e: the switch-in CPU's encoder
 * @b: batch
 * @s: the closed slot (spulse_oc_close())
 * @t_in: switch-in time (ns since session start)
 * @cpu_in: switch-in CPU
 * @scratch: room for max depth + 1 frames (the stacks are expanded here)
 * @start_us: header start_us
 * @interval_us: header interval_us
 *
 * Defines what this stream lacks (header and cpu record, both threads, the
 * frames and nodes of both stacks), then the kind-2 record: event-clock
 * delta from @e->last_event_ns to the switch-out time, blocked and run-queue
 * time from spulse_oc_interval(). Commit with spulse_batch_commit_event()
 * at @s->t_out.
 *
 * A new epoch starts as in spulse_batch_build().
 *
 * Return: as spulse_batch_build().
 */
int spulse_batch_build_offcpu(struct spulse_enc *e, struct spulse_batch *b,
			      const struct spulse_oc_slot *s, u64 t_in,
			      u32 cpu_in, struct spulse_frame *scratch,
			      u64 start_us, u64 interval_us)
{
	int r = spulse_batch_build_offcpu_one(e, b, s, t_in, cpu_in, scratch,
					      start_us, interval_us, false);

	if (r == -EOVERFLOW)
		r = spulse_batch_build_offcpu_one(e, b, s, t_in, cpu_in,
						  scratch, start_us,
						  interval_us, true);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_build_offcpu);

/**
 * spulse_batch_build_trigger() - encode a trigger mark (extension kind 3)
 * @e: this CPU's encoder
 * @b: batch
 * @t_ns: trigger time (ns since session start)
 * @reason: enum spulse_trigger_reason
 * @text: NUL-terminated description (clamped to SPULSE_MAX_TRIGGER_TEXT)
 * @start_us: header start_us
 * @interval_us: header interval_us
 *
 * seq, value, threshold and the window are 0 (a kernel mark). Commit with
 * spulse_batch_commit_event() at @t_ns.
 *
 * Return: 0 or -E2BIG (encoder rolled back).
 */
int spulse_batch_build_trigger(struct spulse_enc *e, struct spulse_batch *b,
			       u64 t_ns, u32 reason, const char *text,
			       u64 start_us, u64 interval_us)
{
	struct spulse_trigger_fields f = {
		.dt_ns = (s64)(t_ns - e->last_event_ns),
		.reason = reason,
		.text = text,
		.text_len = strnlen(text, SPULSE_MAX_TRIGGER_TEXT),
	};
	int r = spulse_batch_begin(e, b, start_us, interval_us, false);

	if (!r && !spulse_batch_room(b, SPULSE_EXT_HDR_MAX + 7 * SPULSE_VARINT_MAX +
				     2 + f.text_len))
		r = -E2BIG;
	if (r) {
		spulse_batch_rollback(e, b);
		return r;
	}
	b->len += spulse_enc_ext_trigger(b->buf + b->len, &f);
	b->records++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_build_trigger);

/**
 * spulse_batch_commit() - account a batch that was written
 * @e: encoder
 * @b: the batch
 * @t_ns: its sample time (the next sample's delta is relative to it)
 */
void spulse_batch_commit(struct spulse_enc *e, const struct spulse_batch *b,
			 u64 t_ns)
{
	spulse_enc_account(e, &e->last_ns, t_ns, b->records, b->len, b->epoch);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_commit);

/**
 * spulse_batch_commit_event() - account a written off-CPU or trigger batch
 * @e: encoder
 * @b: the batch
 * @t_ns: its event-clock time (the next event's delta is relative to it)
 */
void spulse_batch_commit_event(struct spulse_enc *e,
			       const struct spulse_batch *b, u64 t_ns)
{
	spulse_enc_account(e, &e->last_event_ns, t_ns, b->records, b->len,
			   b->epoch);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_commit_event);

/**
 * spulse_batch_rollback() - undo a batch that was not written
 * @e: encoder
 * @b: the batch
 *
 * Restores the id counters, header state and clocks (so an epoch the batch
 * began is undone) and forgets every interned definition (O(1)), since the
 * tables may now name ids that were never written.
 */
void spulse_batch_rollback(struct spulse_enc *e, const struct spulse_batch *b)
{
	e->next_frame = b->saved_frame;
	e->next_stack = b->saved_stack;
	e->next_thread = b->saved_thread;
	e->header_done = b->saved_header;
	e->last_ns = b->saved_last_ns;
	e->last_event_ns = b->saved_last_event_ns;
	spulse_enc_reset(e);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_rollback);

/**
 * spulse_batch_build_leaf() - encode one sample whose stack is interned
 * @e: this CPU's encoder
 * @b: batch
 * @s: the sample (@s->frames and @s->n are not used)
 * @leaf: its leaf stack id, interned and written in this stream
 * @gen: @e->gen when @leaf was written (a stack cache's entry)
 * @start_us: header start_us
 * @interval_us: header interval_us
 *
 * For a caller that keeps its own cache of stacks already written (the
 * sampler's raw-chain cache): only the thread (if new) and the sample
 * record are encoded. @leaf stays valid while @e->gen is @gen; every
 * rollback or reset bumps it. Commit as spulse_batch_build().
 *
 * Return: 0, -ESTALE (@gen is not the current generation, or the epoch's
 * ids ran out: nothing was encoded, build from the frames instead), or as
 * spulse_batch_build().
 */
int spulse_batch_build_leaf(struct spulse_enc *e, struct spulse_batch *b,
			    const struct spulse_sample *s, u32 leaf, u64 gen,
			    u64 start_us, u64 interval_us)
{
	u32 thread;
	int r;

	if (e->gen != gen || !e->header_done)
		return -ESTALE;
	/* the header is written: this only saves the counters (or resets) */
	r = spulse_batch_begin(e, b, start_us, interval_us, false);
	if (r || e->gen != gen)
		return -ESTALE;	/* the tables were full and reset */
	r = spulse_batch_thread(e, b, s->pid, s->tid, s->comm, &thread);
	if (!r && !spulse_batch_room(b, SPULSE_SAMPLE_MAX))
		r = -E2BIG;
	if (r) {
		spulse_batch_rollback(e, b);
		/* the epoch's ids ran out: the full build starts a new one */
		return r == -EOVERFLOW ? -ESTALE : r;
	}
	b->len += spulse_enc_sample(b->buf + b->len,
				    (s64)(s->t_ns - e->last_ns), thread, leaf);
	b->records++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_build_leaf);
