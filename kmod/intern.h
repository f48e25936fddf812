/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intern tables (intern.c, the lookup inline here): fixed-size
 * open-addressing tables with O(1) generation reset. Pure: the caller owns
 * the memory.
 */
#ifndef SPULSE_KMOD_INTERN_H
#define SPULSE_KMOD_INTERN_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/types.h>

struct spulse_intern_ent {
	u64 k[3];
	u32 id;
	u32 gen;
};

/**
 * struct spulse_intern - one intern table
 * @ent: 2^@shift entries, allocated by the caller
 * @shift: log2 of the number of entries
 * @count: live entries in the current generation
 * @gen: current generation; entries of another generation are empty
 * @full_at: the load limit, 3/4 of the entries (spulse_intern_full())
 * @mask: the entries minus 1 (the probe wraps with it)
 * @hshift: 64 - @shift (a hash's top @shift bits pick the slot)
 *
 * @full_at, @mask and @hshift follow from @shift, computed once at init
 * rather than in every lookup.
 */
struct spulse_intern {
	struct spulse_intern_ent *ent;
	u32 shift;
	u32 count;
	u32 gen;
	u32 full_at;
	u32 mask;
	u32 hshift;
};

#define SPULSE_INTERN_PROBES	32

void spulse_intern_init(struct spulse_intern *t, struct spulse_intern_ent *ent,
			u32 shift);
void spulse_intern_reset(struct spulse_intern *t);

/**
 * spulse_intern_full() - whether the table passed its load limit (3/4)
 * @t: table
 *
 * Inline: every batch asks it of three tables (and the sampler's cached
 * sample of all three), so the limit is computed once, at init.
 *
 * Return: true when the next batch should reset it first.
 */
static inline bool spulse_intern_full(const struct spulse_intern *t)
{
	return t->count >= t->full_at;
}

/*
 * Multiply-shift over the three words: each word is spread over 64 bits by
 * its own odd constant, then the top @shift bits of one more product pick
 * the slot (the top bits of a product depend on every bit below them).
 * Keys are frames (kind, address, 0), stack nodes (parent + 1, frame id,
 * 0) and threads (pid:tid, comm): 3 multiplies, about half the
 * instructions of a combine-then-hash_64().
 */
static __always_inline u32 spulse_intern_hash(const u64 k[3], u32 shift)
{
	u64 h = (k[0] * 0x9e3779b97f4a7c15ULL) ^
		(k[1] * 0xc2b2ae3d27d4eb4fULL) ^ k[2];

	return (u32)((h * 0xff51afd7ed558ccdULL) >> (64 - shift));
}

/* spulse_intern_hash() with 64 - shift given (struct spulse_intern's). */
static __always_inline u32 spulse_intern_hash_h(const u64 k[3], u32 hshift)
{
	u64 h = (k[0] * 0x9e3779b97f4a7c15ULL) ^
		(k[1] * 0xc2b2ae3d27d4eb4fULL) ^ k[2];

	return (u32)((h * 0xff51afd7ed558ccdULL) >> hshift);
}

/**
 * spulse_intern_find() - look up a key
 * @t: table
 * @k: key
 * @id: set to the id when found
 * @slot: set to the free slot to insert into when not found
 *
 * Return: 1 found, 0 not found (*@slot usable), -ENOSPC when the probe
 * sequence is exhausted (the caller resets the table).
 */
static __always_inline int spulse_intern_find(struct spulse_intern *t,
					      const u64 k[3], u32 *id,
					      struct spulse_intern_ent **slot)
{
	u32 mask = t->mask;
	u32 i = spulse_intern_hash_h(k, t->hshift);
	unsigned int n;

	for (n = 0; n < SPULSE_INTERN_PROBES; n++, i = (i + 1) & mask) {
		struct spulse_intern_ent *e = &t->ent[i];

		if (e->gen != t->gen) {
			*slot = e;
			return 0;
		}
		if (e->k[0] == k[0] && e->k[1] == k[1] && e->k[2] == k[2]) {
			*id = e->id;
			return 1;
		}
	}
	return -ENOSPC;
}

/**
 * spulse_intern_set() - fill the slot returned by spulse_intern_find()
 * @t: table
 * @slot: free slot
 * @k: key
 * @id: id the content was defined under
 */
static __always_inline void spulse_intern_set(struct spulse_intern *t,
					      struct spulse_intern_ent *slot,
					      const u64 k[3], u32 id)
{
	slot->k[0] = k[0];
	slot->k[1] = k[1];
	slot->k[2] = k[2];
	slot->id = id;
	slot->gen = t->gen;
	t->count++;
}

#endif /* SPULSE_KMOD_INTERN_H */
