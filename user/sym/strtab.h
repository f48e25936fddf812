/* SPDX-License-Identifier: MIT */
/*
 * String interning: each distinct string gets a dense id (0, 1, ...).
 * Strings are byte strings with a length (a NUL byte inside is kept and
 * makes a different string); each copy is also NUL-terminated after its
 * length, so a string without a NUL inside reads as a C string.
 */
#ifndef SPULSE_STRTAB_H
#define SPULSE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	char **strs;		/* id -> copy (NUL after its length) */
	size_t *lens;		/* id -> length in bytes */
	size_t n, cap;
	uint32_t *slots;	/* open addressing: id + 1, 0 = empty */
	size_t nslots;
};

void strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* Id of the @len bytes at @s (added if new), or -1 on allocation failure. */
int64_t strtab_intern_n(struct strtab *t, const char *s, size_t len);
/* strtab_intern_n() of a NUL-terminated string. */
int64_t strtab_intern(struct strtab *t, const char *s);
static inline const char *strtab_str(const struct strtab *t, uint32_t id)
{
	return t->strs[id];
}
static inline size_t strtab_len(const struct strtab *t, uint32_t id)
{
	return t->lens[id];
}

#endif /* SPULSE_STRTAB_H */
