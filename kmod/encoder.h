/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU SPULSE stream encoder (encode.c, pure): frames, the stack
 * cache, the encoder state and the batches one sample (or off-CPU
 * interval, or trigger) is built into before its relay reservation.
 */
#ifndef SPULSE_KMOD_ENCODER_H
#define SPULSE_KMOD_ENCODER_H

#include <linux/string.h>
#include <linux/types.h>

#include <spulse/format.h>
#include <spulse/encode.h>

#include "intern.h"

struct spulse_frame {
	u8 kind;	/* SPULSE_FRAME_USER/KERNEL/TRUNCATED */
	u64 addr;	/* already normalized */
};

/* Stack cache (encode.c): off-CPU stacks already interned in this stream. */
#define SPULSE_SCACHE_SHIFT	8	/* 256 entries, direct mapped */
#define SPULSE_SCACHE_DEPTH	64	/* deeper stacks are not cached */

/**
 * struct spulse_scache_ent - one cached stack
 * @hash: spulse_scache_hash() of the stack
 * @gen: encoder generation + 1 it was stored in (0 = empty)
 * @leaf: the interned leaf stack id
 * @trunc: the stack's @trunc
 * @nu: user frames
 * @nk: kernel frames
 * @addr: the @nu + @nk addresses, compared exactly on a hit
 */
struct spulse_scache_ent {
	u64 hash;
	u64 gen;
	u32 leaf;
	bool trunc;
	u16 nu;
	u16 nk;
	u64 addr[SPULSE_SCACHE_DEPTH];
};

/**
 * struct spulse_scache - per-CPU stack cache (NULL @ent = no cache)
 * @ent: 2^@shift entries, allocated by the caller
 * @shift: log2 of the number of entries
 * @hits: lookups answered from the cache
 * @misses: lookups of cacheable stacks that were interned frame by frame
 */
struct spulse_scache {
	struct spulse_scache_ent *ent;
	u32 shift;
	u64 hits;
	u64 misses;
};

/* spulse_scache_hash()'s per-address multiplier (and the sample path's) */
#define SPULSE_SCACHE_HASH_MUL	0xff51afd7ed558ccdULL

/* A stack cache hash's start: its shape (@trunc, @nu, @nk), mixed */
static inline u64 spulse_scache_hash_seed(bool trunc, u16 nu, u16 nk)
{
	return ((u64)nu << 32 | (u64)nk << 1 | trunc) * 0x9e3779b97f4a7c15ULL;
}

/* The entry of @c (whose @ent is set) that a stack of hash @hash uses */
static inline struct spulse_scache_ent *
spulse_scache_slot(const struct spulse_scache *c, u64 hash)
{
	return &c->ent[hash >> (64 - c->shift)];
}

/* Does @x hold a stack of this shape (@trunc, @nu, @nk) of generation @gen? */
static inline bool spulse_scache_ent_shape(const struct spulse_scache_ent *x,
					   u64 gen, bool trunc, u16 nu, u16 nk)
{
	return x->gen == gen + 1 && x->trunc == trunc && x->nu == nu &&
	       x->nk == nk;
}

/*
 * Does @x hold a stack of hash @hash and shape @trunc, @nu, @nk stored in
 * generation @gen? (Its addresses are for the caller to compare.)
 */
static inline bool spulse_scache_ent_is(const struct spulse_scache_ent *x,
					u64 gen, u64 hash, bool trunc, u16 nu,
					u16 nk)
{
	return x->hash == hash && spulse_scache_ent_shape(x, gen, trunc, nu, nk);
}

/* Make @x hold a stack's hash, shape and @leaf for generation @gen */
static inline void spulse_scache_ent_set(struct spulse_scache_ent *x,
					 u64 gen, u64 hash, u32 leaf,
					 bool trunc, u16 nu, u16 nk)
{
	x->hash = hash;
	x->gen = gen + 1;
	x->leaf = leaf;
	x->trunc = trunc;
	x->nu = nu;
	x->nk = nk;
}

/* Stack nodes of the previous frame-by-frame stack remembered (encode.c). */
#define SPULSE_ENC_PFX_DEPTH	64

/**
 * struct spulse_enc_pfx - the root side of the last stack interned frame by
 *	frame, to skip the lookups of a next stack that starts the same way
 * @addr: frame @i's address as given (a truncated marker's is not interned)
 * @node: the stack node id frame @i got (its parent: @node[@i - 1])
 * @kind: frame @i's kind
 * @n: valid entries
 * @gen: the encoder's @gen when they were stored
 * @resets_frames: its @resets_frames then
 * @resets_stacks: its @resets_stacks then
 *
 * Frame @i's node is the stacks table's answer for (node @i - 1, the
 * frames table's answer for (kind, addr)); neither table loses an entry
 * but by a reset, and every reset bumps one of the three 64-bit counters
 * (spulse_enc_reset() the generation, a table's reset alone its count),
 * so while all three are the ones stored a stack whose first @i frames
 * equal these has the same first @i nodes, all defined: the lookups would
 * find exactly these ids and write nothing.
 */
struct spulse_enc_pfx {
	u64 addr[SPULSE_ENC_PFX_DEPTH];
	u32 node[SPULSE_ENC_PFX_DEPTH];
	u8 kind[SPULSE_ENC_PFX_DEPTH];
	u32 n;
	u64 gen;
	u64 resets_frames;
	u64 resets_stacks;
};

/**
 * struct spulse_enc_thr - the thread the last spulse_batch_thread() interned
 * @k: its key in the threads table
 * @id: the id the table gave it
 * @gen: the encoder's @gen then, plus 1 (0: none)
 * @resets_threads: the encoder's @resets_threads then
 *
 * The threads table loses an entry only by a reset, which bumps the
 * encoder's @gen (spulse_enc_reset(), and so every rollback and epoch) or
 * its @resets_threads (the table's reset alone): while both are the ones
 * stored, the lookup of @k would find @id and write nothing.
 */
struct spulse_enc_thr {
	u64 k[3];
	u32 id;
	u64 gen;
	u64 resets_threads;
};

/* The threads table's key of (@pid, @tid, @comm): pid:tid, comm[0..15] */
static __always_inline void spulse_enc_thr_key(u64 k[3], u32 pid, u32 tid,
					       const char *comm)
{
	k[0] = (u64)pid << 32 | tid;
	memcpy(&k[1], comm, 8);
	memcpy(&k[2], comm + 8, 8);
}

/* Is @k the thread @m remembers for @e's @gen and @resets_threads? */
static __always_inline bool spulse_enc_thr_is(const struct spulse_enc_thr *m,
					      u64 gen, u64 resets_threads,
					      const u64 k[3])
{
	return m->gen == gen + 1 && m->resets_threads == resets_threads &&
	       m->k[0] == k[0] && m->k[1] == k[1] && m->k[2] == k[2];
}

/**
 * struct spulse_enc - per-CPU encoder state (one SPULSE stream)
 * @frames: frames by (kind, addr)
 * @stacks: stack nodes by (parent + 1 or 0, frame id)
 * @threads: threads by (pid << 32 | tid, comm[0..7], comm[8..15])
 * @next_frame: next frame id of this stream
 * @next_stack: next stack id of this stream
 * @next_thread: next thread id of this stream
 * @cpu: the CPU of this stream (its kind-1 cpu record follows the header)
 * @header_done: the stream header (and cpu record) has been written
 * @last_ns: time of the previous written sample (ns since session start)
 * @last_event_ns: event clock (FORMAT.md 3.10) of the previous written
 *	off-CPU interval or trigger record
 * @records: records written
 * @bytes: bytes written
 * @gen: definition generation: bumped by every spulse_enc_reset() (and so
 *	by every rollback and epoch); @scache entries of another generation
 *	are empty
 * @scache: off-CPU stacks already interned, by their raw frames
 * @id_limit: ids per kind in one epoch (0 = SPULSE_EPOCH_IDS); a batch that
 *	would pass it starts a new epoch (docs/FORMAT.md section 7)
 * @epochs: epochs started after the first (each a fresh stream header)
 * @resets_frames: resets of @frames alone (table full or probes exhausted)
 * @resets_stacks: resets of @stacks alone
 * @resets_threads: resets of @threads alone
 * @pfx: the last frame-by-frame stack's first nodes (zeroed: none)
 * @pfx_hits: frames whose two lookups @pfx answered
 * @thr: the last thread interned (zeroed: none)
 */
struct spulse_enc {
	struct spulse_intern frames;
	struct spulse_intern stacks;
	struct spulse_intern threads;
	u32 next_frame;
	u32 next_stack;
	u32 next_thread;
	u32 cpu;
	bool header_done;
	u64 last_ns;
	u64 last_event_ns;
	u64 records;
	u64 bytes;
	u64 gen;
	struct spulse_scache scache;
	u32 id_limit;
	u64 epochs;
	u64 resets_frames;
	u64 resets_stacks;
	u64 resets_threads;
	struct spulse_enc_pfx pfx;
	u64 pfx_hits;
	struct spulse_enc_thr thr;
};

/*
 * Ids per kind in one epoch of a per-CPU stream. The drainer keeps every
 * definition of the current epoch (about 40 bytes per id), so the limit
 * bounds its memory per CPU; an epoch costs one redefinition of the working
 * set, as a table reset does. At most SPULSE_MAX_ID.
 */
#define SPULSE_EPOCH_IDS	(1U << 20)

/**
 * struct spulse_batch - one sample's records, built before reservation
 * @buf: scratch buffer
 * @cap: size of @buf
 * @len: bytes used
 * @records: records in @buf
 * @saved_frame: encoder id counter before the batch (for rollback)
 * @saved_stack: see @saved_frame
 * @saved_thread: see @saved_frame
 * @saved_header: header state before the batch
 * @leaf: leaf stack id of the sample spulse_batch_build() encoded
 * @saved_last_ns: sample clock before the batch (an epoch restarts it)
 * @saved_last_event_ns: event clock before the batch
 * @epoch: the batch starts a new epoch (its first bytes are a stream header)
 */
struct spulse_batch {
	u8 *buf;
	size_t cap;
	size_t len;
	u32 records;
	u32 saved_frame;
	u32 saved_stack;
	u32 saved_thread;
	bool saved_header;
	u32 leaf;
	u64 saved_last_ns;
	u64 saved_last_event_ns;
	bool epoch;
};

/**
 * struct spulse_sample - what the handler captured
 * @pid: tgid
 * @tid: thread id
 * @comm: command name (TASK_COMM_LEN bytes, NUL padded)
 * @frames: root .. leaf
 * @n: number of @frames
 * @t_ns: sample time, ns since session start
 */
struct spulse_sample {
	u32 pid;
	u32 tid;
	char comm[16];
	const struct spulse_frame *frames;
	u32 n;
	u64 t_ns;
};

/**
 * spulse_enc_account() - account records written to the stream
 * @e: encoder
 * @clock: the clock the records advance (@e->last_ns for a sample,
 *	@e->last_event_ns for an off-CPU interval or a trigger)
 * @t_ns: the time it now holds (the next delta is relative to it)
 * @records: records written
 * @bytes: their bytes
 * @epoch: they began a new epoch
 *
 * The one commit accounting of spulse_batch_commit(),
 * spulse_batch_commit_event() and spulse_batch_leaf_direct().
 */
static __always_inline void spulse_enc_account(struct spulse_enc *e,
					       u64 *clock, u64 t_ns,
					       u32 records, size_t bytes,
					       bool epoch)
{
	*clock = t_ns;
	e->records += records;
	e->bytes += bytes;
	e->epochs += epoch;
}

/**
 * spulse_batch_leaf_direct() - a cached sample's record, when that is the
 *	whole batch, encoded at once
 * @e: this CPU's encoder
 * @p: destination with room for SPULSE_SAMPLE_MAX bytes
 * @s: the sample (@s->frames and @s->n are not used)
 * @leaf: its leaf stack id, interned and written in this stream
 * @gen: @e->gen when @leaf was written
 *
 * spulse_batch_build_leaf() and spulse_batch_commit() in one, without the
 * batch, for the case where their batch would be the sample record alone:
 * @leaf's generation is current, the header is written, no intern table
 * is full (spulse_batch_begin() would reset it, and a reset threads table
 * makes the thread new again) and the thread is the one @e->thr
 * remembers. Then the record is written at @p and accounted as committed
 * (the caller publishes exactly those bytes; nothing can be rolled back).
 * Otherwise nothing is written or changed: the caller builds the batch,
 * which does what it would have done without this call. Inline: it is
 * the whole encoding of most samples (sample.c).
 *
 * Return: the record's length, or 0.
 */
static __always_inline size_t spulse_batch_leaf_direct(struct spulse_enc *e,
						       u8 *p,
						       const struct spulse_sample *s,
						       u32 leaf, u64 gen)
{
	u64 k[3];
	size_t n;

	if (e->gen != gen || !e->header_done ||
	    spulse_intern_full(&e->frames) || spulse_intern_full(&e->stacks) ||
	    spulse_intern_full(&e->threads))
		return 0;
	spulse_enc_thr_key(k, s->pid, s->tid, s->comm);
	if (!spulse_enc_thr_is(&e->thr, e->gen, e->resets_threads, k))
		return 0;
	n = spulse_enc_sample(p, (s64)(s->t_ns - e->last_ns), e->thr.id, leaf);
	spulse_enc_account(e, &e->last_ns, s->t_ns, 1, n, false);
	return n;
}

void spulse_enc_reset(struct spulse_enc *e);
int spulse_batch_build(struct spulse_enc *e, struct spulse_batch *b,
		       const struct spulse_sample *s, u64 start_us,
		       u64 interval_us);
int spulse_batch_build_leaf(struct spulse_enc *e, struct spulse_batch *b,
			    const struct spulse_sample *s, u32 leaf, u64 gen,
			    u64 start_us, u64 interval_us);
void spulse_batch_commit(struct spulse_enc *e, const struct spulse_batch *b,
			 u64 t_ns);
void spulse_batch_rollback(struct spulse_enc *e, const struct spulse_batch *b);
void spulse_batch_commit_event(struct spulse_enc *e,
			       const struct spulse_batch *b, u64 t_ns);
int spulse_batch_build_trigger(struct spulse_enc *e, struct spulse_batch *b,
			       u64 t_ns, u32 reason, const char *text,
			       u64 start_us, u64 interval_us);

struct spulse_oc_stack;
struct spulse_oc_slot;

u64 spulse_scache_hash(const struct spulse_oc_stack *st);
bool spulse_scache_find(const struct spulse_scache *c, u64 gen, u64 hash,
			const struct spulse_oc_stack *st, u32 *leaf);
void spulse_scache_put(struct spulse_scache *c, u64 gen, u64 hash,
		       const struct spulse_oc_stack *st, u32 leaf);
int spulse_batch_build_offcpu(struct spulse_enc *e, struct spulse_batch *b,
			      const struct spulse_oc_slot *s, u64 t_in,
			      u32 cpu_in, struct spulse_frame *scratch,
			      u64 start_us, u64 interval_us);

#endif /* SPULSE_KMOD_ENCODER_H */
