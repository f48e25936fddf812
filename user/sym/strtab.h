/* SPDX-License-Identifier: MIT */
/* String interning: each distinct string gets a dense id (0, 1, ...). */
#ifndef SPULSE_STRTAB_H
#define SPULSE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	char **strs;		/* id -> NUL-terminated copy */
	size_t n, cap;
	uint32_t *slots;	/* open addressing: id + 1, 0 = empty */
	size_t nslots;
};

void strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* Id of @s (added if new), or -1 on allocation failure. */
int64_t strtab_intern(struct strtab *t, const char *s);
static inline const char *strtab_str(const struct strtab *t, uint32_t id)
{
	return t->strs[id];
}

#endif /* SPULSE_STRTAB_H */
