// SPDX-License-Identifier: GPL-2.0
/*
 * Intern tables: fixed-size open-addressing hash tables keyed by three u64,
 * mapping content to the id it was defined under in this CPU's stream. No
 * allocation, bounded probing, O(1) reset by bumping a generation counter:
 * an entry whose generation differs from the table's is empty.
 */
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/string.h>

#include "intern.h"
#include "kunit_export.h"

static u32 spulse_intern_hash(const u64 k[3], u32 shift)
{
	u64 h = k[0] * 0x9e3779b97f4a7c15ULL;

	h ^= k[1] + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
	h ^= k[2] + 0x85ebca77c2b2ae63ULL + (h << 6) + (h >> 2);
	return hash_64(h, shift);
}

/**
 * spulse_intern_init() - set up a table over caller-owned storage
 * @t: table
 * @ent: 1 << @shift zeroed entries
 * @shift: log2 of the entry count
 */
void spulse_intern_init(struct spulse_intern *t, struct spulse_intern_ent *ent,
			u32 shift)
{
	t->ent = ent;
	t->shift = shift;
	t->count = 0;
	t->gen = 1;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_intern_init);

/**
 * spulse_intern_reset() - forget every entry in O(1)
 * @t: table
 *
 * On the (4-billion-resets-later) wrap of the generation the storage is
 * cleared so that no stale entry can look current.
 */
void spulse_intern_reset(struct spulse_intern *t)
{
	t->count = 0;
	if (++t->gen == 0) {
		memset(t->ent, 0, sizeof(*t->ent) << t->shift);
		t->gen = 1;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_intern_reset);

/**
 * spulse_intern_full() - whether the table passed its load limit (3/4)
 * @t: table
 *
 * Return: true when the next batch should reset it first.
 */
bool spulse_intern_full(const struct spulse_intern *t)
{
	return t->count >= (3U << t->shift) / 4;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_intern_full);

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
int spulse_intern_find(struct spulse_intern *t, const u64 k[3], u32 *id,
		       struct spulse_intern_ent **slot)
{
	u32 mask = (1U << t->shift) - 1;
	u32 i = spulse_intern_hash(k, t->shift);
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
EXPORT_SYMBOL_IF_KUNIT(spulse_intern_find);

/**
 * spulse_intern_set() - fill the slot returned by spulse_intern_find()
 * @t: table
 * @slot: free slot
 * @k: key
 * @id: id the content was defined under
 */
void spulse_intern_set(struct spulse_intern *t, struct spulse_intern_ent *slot,
		       const u64 k[3], u32 id)
{
	slot->k[0] = k[0];
	slot->k[1] = k[1];
	slot->k[2] = k[2];
	slot->id = id;
	slot->gen = t->gen;
	t->count++;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_intern_set);
