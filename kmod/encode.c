// SPDX-License-Identifier: GPL-2.0
/*
 * Where records are encoded. Each sample becomes one batch: the definitions
 * it needs that this CPU's stream does not have yet (stream header, thread,
 * frames, stack nodes root to leaf) followed by the sample record. The batch
 * is written with one relay reservation; when that fails the id counters are
 * rolled back and the intern tables forgotten, so nothing that was not
 * written is ever referenced by a later batch.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "spulse.h"

/**
 * spulse_enc_reset() - forget every definition (the ids keep counting)
 * @e: encoder
 */
void spulse_enc_reset(struct spulse_enc *e)
{
	spulse_intern_reset(&e->frames);
	spulse_intern_reset(&e->stacks);
	spulse_intern_reset(&e->threads);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_enc_reset);

static int spulse_intern_get(struct spulse_intern *t, const u64 k[3], u32 *next,
			     u32 *id)
{
	struct spulse_intern_ent *slot;
	int r = spulse_intern_find(t, k, id, &slot);

	if (r == 1)
		return 0;
	if (r < 0) {
		spulse_intern_reset(t);
		r = spulse_intern_find(t, k, id, &slot);
		if (r < 0)
			return r;
	}
	if (*next >= SPULSE_MAX_ID)
		return -EOVERFLOW;
	*id = (*next)++;
	spulse_intern_set(t, slot, k, *id);
	return 1;
}

static bool spulse_batch_room(const struct spulse_batch *b, size_t need)
{
	return b->cap - b->len >= need;
}

/**
 * spulse_batch_build() - encode one sample and its missing definitions
 * @e: this CPU's encoder
 * @b: batch (buffer and capacity set by the caller)
 * @s: the captured sample, frames root..leaf (kinds 1-3, normalized)
 * @start_us: header start_us
 * @interval_us: header interval_us
 *
 * On success the caller writes @b->buf[0..@b->len) in one reservation and
 * then calls spulse_batch_commit(), or spulse_batch_rollback() when the
 * write failed. On error the encoder is already rolled back.
 *
 * Return: 0, -E2BIG (batch does not fit @b->cap), -EINVAL (no frames or a
 * truncated marker that is not the root), -EOVERFLOW (id space exhausted).
 */
int spulse_batch_build(struct spulse_enc *e, struct spulse_batch *b,
		       const struct spulse_sample *s, u64 start_us,
		       u64 interval_us)
{
	u64 parent = SPULSE_STACK_ROOT;
	u32 i, id = 0, frame;
	u64 k[3];
	size_t clen;
	int r;

	b->len = 0;
	b->records = 0;
	b->saved_frame = e->next_frame;
	b->saved_stack = e->next_stack;
	b->saved_thread = e->next_thread;
	b->saved_header = e->header_done;
	if (!s->n)
		return -EINVAL;

	if (spulse_intern_full(&e->frames) || spulse_intern_full(&e->stacks) ||
	    spulse_intern_full(&e->threads))
		spulse_enc_reset(e);

	if (!e->header_done) {
		if (!spulse_batch_room(b, SPULSE_HEADER_MAX))
			goto too_big;
		b->len += spulse_enc_header(b->buf, start_us, interval_us);
		e->header_done = true;
	}

	k[0] = (u64)s->pid << 32 | s->tid;
	memcpy(&k[1], s->comm, 8);
	memcpy(&k[2], s->comm + 8, 8);
	r = spulse_intern_get(&e->threads, k, &e->next_thread, &id);
	if (r < 0)
		goto fail;
	if (r) {
		if (!spulse_batch_room(b, SPULSE_THREAD_REC_MAX))
			goto too_big;
		clen = strnlen(s->comm, sizeof(s->comm));
		b->len += spulse_enc_thread(b->buf + b->len, id, s->pid, s->tid,
					    s->comm, clen);
		b->records++;
	}
	k[2] = id;	/* thread id, kept for the sample below */

	for (i = 0; i < s->n; i++) {
		const struct spulse_frame *f = &s->frames[i];
		u64 fk[3] = { f->kind, f->addr, 0 };

		if (f->kind == SPULSE_FRAME_TRUNCATED && i) {
			r = -EINVAL;
			goto fail;
		}
		if (f->kind == SPULSE_FRAME_TRUNCATED)
			fk[1] = 0;
		r = spulse_intern_get(&e->frames, fk, &e->next_frame, &frame);
		if (r < 0)
			goto fail;
		if (r) {
			if (!spulse_batch_room(b, SPULSE_FRAME_REC_MAX))
				goto too_big;
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
		r = spulse_intern_get(&e->stacks, fk, &e->next_stack, &id);
		if (r < 0)
			goto fail;
		if (r) {
			if (!spulse_batch_room(b, SPULSE_STACK_REC_MAX))
				goto too_big;
			b->len += spulse_enc_stack(b->buf + b->len, id, parent,
						   frame);
			b->records++;
		}
		parent = (u64)id + 1;
	}

	if (!spulse_batch_room(b, SPULSE_SAMPLE_MAX))
		goto too_big;
	b->len += spulse_enc_sample(b->buf + b->len,
				    (s64)(s->t_ns - e->last_ns), (u32)k[2], id);
	b->records++;
	return 0;

too_big:
	r = -E2BIG;
fail:
	spulse_batch_rollback(e, b);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_build);

/**
 * spulse_batch_commit() - account a batch that was written
 * @e: encoder
 * @b: the batch
 * @t_ns: its sample time (the next sample's delta is relative to it)
 */
void spulse_batch_commit(struct spulse_enc *e, const struct spulse_batch *b,
			 u64 t_ns)
{
	e->last_ns = t_ns;
	e->records += b->records;
	e->bytes += b->len;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_commit);

/**
 * spulse_batch_rollback() - undo a batch that was not written
 * @e: encoder
 * @b: the batch
 *
 * Restores the id counters and header state and forgets every interned
 * definition (O(1)), since the tables may now name ids that were never
 * written.
 */
void spulse_batch_rollback(struct spulse_enc *e, const struct spulse_batch *b)
{
	e->next_frame = b->saved_frame;
	e->next_stack = b->saved_stack;
	e->next_thread = b->saved_thread;
	e->header_done = b->saved_header;
	spulse_enc_reset(e);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_batch_rollback);
