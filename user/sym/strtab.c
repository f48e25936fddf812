/* SPDX-License-Identifier: MIT */
/* String interning with an open-addressing hash table (FNV-1a). */
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
}

void strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int grow_slots(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < t->n; i++) {
		size_t j = hash_str(t->strs[i], t->lens[i]) & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

int64_t strtab_intern_n(struct strtab *t, const char *s, size_t len)
{
	size_t j;
	char *copy;

	if ((t->n + 1) * 2 > t->nslots && grow_slots(t))
		return -1;
	j = hash_str(s, len) & (t->nslots - 1);
	while (t->slots[j]) {
		uint32_t id = t->slots[j] - 1;

		if (t->lens[id] == len && !memcmp(t->strs[id], s, len))
			return id;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **strs = realloc(t->strs, cap * sizeof(*strs));
		size_t *lens;

		if (!strs)
			return -1;
		t->strs = strs;
		lens = realloc(t->lens, cap * sizeof(*lens));
		if (!lens)
			return -1;
		t->lens = lens;
		t->cap = cap;
	}
	if (len == SIZE_MAX || !(copy = malloc(len + 1)))
		return -1;
	memcpy(copy, s, len);
	copy[len] = 0;
	t->strs[t->n] = copy;
	t->lens[t->n] = len;
	t->slots[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

int64_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}
