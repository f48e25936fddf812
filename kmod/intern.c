// SPDX-License-Identifier: GPL-2.0
/*
 * Intern tables: fixed-size open-addressing hash tables keyed by three u64,
 * mapping content to the id it was defined under in this CPU's stream. No
 * allocation, bounded probing, O(1) reset by bumping a generation counter:
 * an entry whose generation differs from the table's is empty. The
 * lookup itself (spulse_intern_find(), spulse_intern_set()) is inline in
 * intern.h: it runs for every frame of a sample the stack cache misses.
 */
#include <linux/string.h>

#include "intern.h"
#include "kunit_export.h"

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
	t->full_at = (3U << shift) / 4;
	t->mask = (1U << shift) - 1;
	t->hshift = 64 - shift;
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
