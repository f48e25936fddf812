// SPDX-License-Identifier: MIT
/*
 * Open-addressing hash tables used for interning (Recorder) and for the
 * per-process active-module lists (definitions).
 *
 * Every table hashes with a seed of its own, drawn from getrandom(2) when
 * the table is first used: ids and addresses come from the file being read,
 * and with a fixed hash a crafted file can put every key in one probe
 * cluster (130,557 module records with colliding pids took 14 s in
 * `spulse check`, issue 10 item 15). A key's slot is unpredictable without
 * the seed, so probe sequences stay short whatever the ids.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static inline uint64_t fmix64(uint64_t x)
{
	return spulse_fmix64(x);
}

uint64_t spulse_hash_seed(void)
{
	static uint64_t counter;
	uint64_t seed = 0;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed) &&
	    seed)
		return seed;
	/* no entropy yet (early boot): still differs per table and run */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = fmix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
		      ((uint64_t)getpid() << 48) ^ (uint64_t)(uintptr_t)&ts ^
		      __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ULL,
					 __ATOMIC_RELAXED));
	return seed | 1;
}

uint32_t spulse_hash64(uint64_t x, uint64_t seed)
{
	return spulse_hash64_inline(x, seed);
}

uint32_t spulse_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return spulse_hash64(h ^ len, seed);
}

uint64_t spulse_htab_seed(struct spulse_htab *h)
{
	if (!h->seed)
		h->seed = spulse_hash_seed();
	return h->seed;
}

uint32_t spulse_htab_find(const struct spulse_htab *h, uint32_t hash,
			  spulse_htab_eq eq, const void *ctx)
{
	struct spulse_htab_pos pos;

	return spulse_htab_lookup(h, hash, eq, ctx, &pos);
}

/* Must @h grow (or be allocated) before it takes one more entry? */
static inline bool htab_must_grow(const struct spulse_htab *h)
{
	return !h->slots ||
	       (uint64_t)(h->count + 1) * 4 > (uint64_t)(h->mask + 1) * 3;
}

/* Place @s in its probe sequence; return the slots passed over. */
static uint64_t htab_put(uint64_t *slots, uint32_t mask, uint64_t s)
{
	uint64_t probes = 0;
	uint32_t i;

	for (i = (uint32_t)(s >> 32) & mask; slots[i]; i = (i + 1) & mask)
		probes++;
	slots[i] = s;
	return probes;
}

int spulse_htab_insert(struct spulse_htab *h, uint32_t hash, uint32_t id)
{
	if (htab_must_grow(h)) {
		uint32_t ncap = h->slots ? (h->mask + 1) * 2 : 64;
		uint64_t *ns;
		uint32_t i;

		if (ncap == 0)
			return -ENOMEM;
		ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		if (h->slots) {
			for (i = 0; i <= h->mask; i++)
				if (h->slots[i])
					h->probes += htab_put(ns, ncap - 1,
							      h->slots[i]);
			free(h->slots);
		}
		h->slots = ns;
		h->mask = ncap - 1;
	}
	h->probes += htab_put(h->slots, h->mask,
			      ((uint64_t)hash << 32) | ((uint64_t)id + 1));
	h->count++;
	return 0;
}

int spulse_htab_insert_at(struct spulse_htab *h, const struct spulse_htab_pos *pos,
			  uint32_t hash, uint32_t id)
{
	/* no room without growing, or no position: insert as usual */
	if (pos->slot == UINT32_MAX || htab_must_grow(h))
		return spulse_htab_insert(h, hash, id);
	h->slots[pos->slot] = ((uint64_t)hash << 32) | ((uint64_t)id + 1);
	h->probes += pos->passed;
	h->count++;
	return 0;
}

void spulse_htab_free(struct spulse_htab *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

uint64_t spulse_htab_probes(const struct spulse_htab *h)
{
	return h->probes;
}

size_t spulse_htab_bytes(const struct spulse_htab *h)
{
	return h->slots ? ((size_t)h->mask + 1) * sizeof(*h->slots) : 0;
}

uint32_t *spulse_u32map_find(const struct spulse_u32map *m, uint32_t key)
{
	uint32_t i;

	if (!m->keys)
		return NULL;
	for (i = spulse_hash64(key, m->seed) & m->mask; m->used[i];
	     i = (i + 1) & m->mask) {
		SPULSE_PROBE(m);
		if (m->keys[i] == key)
			return &m->vals[i];
	}
	return NULL;
}

static int u32map_grow(struct spulse_u32map *m)
{
	uint32_t ncap = m->keys ? (m->mask + 1) * 2 : 16;
	uint32_t *nk, *nv, i;
	uint8_t *nu;

	if (ncap == 0)
		return -ENOMEM;
	if (!m->seed)
		m->seed = spulse_hash_seed();
	nk = malloc(ncap * sizeof(*nk));
	nv = malloc(ncap * sizeof(*nv));
	nu = calloc(ncap, 1);
	if (!nk || !nv || !nu) {
		free(nk);
		free(nv);
		free(nu);
		return -ENOMEM;
	}
	for (i = 0; m->keys && i <= m->mask; i++) {
		uint32_t j;

		if (!m->used[i])
			continue;
		for (j = spulse_hash64(m->keys[i], m->seed) & (ncap - 1); nu[j];
		     j = (j + 1) & (ncap - 1))
			SPULSE_PROBE(m);
		nu[j] = 1;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = nk;
	m->vals = nv;
	m->used = nu;
	m->mask = ncap - 1;
	return 0;
}

uint32_t *spulse_u32map_get(struct spulse_u32map *m, uint32_t key, uint32_t def)
{
	uint32_t *v = spulse_u32map_find(m, key);
	uint32_t i;

	if (v)
		return v;
	if (!m->keys || (uint64_t)(m->count + 1) * 4 > (uint64_t)(m->mask + 1) * 3)
		if (u32map_grow(m))
			return NULL;
	for (i = spulse_hash64(key, m->seed) & m->mask; m->used[i];
	     i = (i + 1) & m->mask)
		SPULSE_PROBE(m);
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = def;
	m->count++;
	return &m->vals[i];
}

void spulse_u32map_free(struct spulse_u32map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

uint64_t spulse_u32map_probes(const struct spulse_u32map *m)
{
	return m->probes;
}

size_t spulse_u32map_bytes(const struct spulse_u32map *m)
{
	return m->keys ? ((size_t)m->mask + 1) * 9 : 0;
}
