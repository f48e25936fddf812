/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intern tables (intern.c): fixed-size open-addressing tables with O(1)
 * generation reset. Pure: the caller owns the memory.
 */
#ifndef SPULSE_KMOD_INTERN_H
#define SPULSE_KMOD_INTERN_H

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
 */
struct spulse_intern {
	struct spulse_intern_ent *ent;
	u32 shift;
	u32 count;
	u32 gen;
};

#define SPULSE_INTERN_PROBES	32

void spulse_intern_init(struct spulse_intern *t, struct spulse_intern_ent *ent,
			u32 shift);
void spulse_intern_reset(struct spulse_intern *t);
bool spulse_intern_full(const struct spulse_intern *t);
int spulse_intern_find(struct spulse_intern *t, const u64 k[3], u32 *id,
		       struct spulse_intern_ent **slot);
void spulse_intern_set(struct spulse_intern *t, struct spulse_intern_ent *slot,
		       const u64 k[3], u32 id);

#endif /* SPULSE_KMOD_INTERN_H */
