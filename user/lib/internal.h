/* SPDX-License-Identifier: MIT */
/*
 * libspulse internals shared by the library's source files. Not installed.
 */
#ifndef SPULSE_LIB_INTERNAL_H
#define SPULSE_LIB_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <spulse/format.h>
#include <spulse/varint.h>
#include <libspulse.h>

#define SPULSE_EXPORT __attribute__((visibility("default")))

/* ---- errors.c ---- */

/**
 * spulse_fail() - fill @err (if non-NULL) and return -EBADMSG
 * @err: error to fill, may be NULL
 * @offset: byte offset of the offending field or record
 * @fmt: printf format naming the rule broken
 */
int spulse_fail(struct spulse_error *err, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A whole file (Snapshot, Replay) of @len bytes that ends inside the stream
 * header: -EBADMSG at offset @len (FORMAT.md 6: not a spool, not a tail).
 */
int spulse_fail_short_header(struct spulse_error *err, uint64_t len);
/* Fill @err with a system error (@code is a negative errno) and return @code. */
int spulse_fail_errno(struct spulse_error *err, int code, const char *what);
/*
 * Open a spool for reading: never blocks (a FIFO without a writer), refuses
 * anything but a regular file (-EINVAL, "not a regular file"). Returns the
 * fd or a negative errno with @err filled in.
 */
int spulse_open_spool(const char *path, struct spulse_error *err);

/* ---- intern.c: small open-addressing tables ---- */

/*
 * Every table is seeded (a random 64-bit seed per table, drawn when it is
 * first used), so that no file can choose keys that share a probe cluster:
 * each reader's cost stays linear in its input whatever the ids. probes
 * counts the occupied slots passed over (a cost measure for tests).
 */
#define SPULSE_PROBE(t)	((*(uint64_t *)&(t)->probes)++)

/* A fresh random seed (getrandom(2); a clock/pid mix if it has no entropy). */
uint64_t spulse_hash_seed(void);
/* Seeded 64-bit -> 32-bit hash; without the seed, slots are unpredictable. */
uint32_t spulse_hash64(uint64_t x, uint64_t seed);

/* spulse_hash64() inline (the Recorder's interning, per definition). */
static inline uint64_t spulse_fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline uint32_t spulse_hash64_inline(uint64_t x, uint64_t seed)
{
	return (uint32_t)spulse_fmix64(spulse_fmix64(x ^ seed) + seed);
}
/* Seeded hash of @len bytes. */
uint32_t spulse_hash_bytes(const void *p, size_t len, uint64_t seed);

/*
 * struct spulse_htab - hash set of ids; equality is decided by the caller,
 * which owns the keyed objects. Each slot keeps the id + 1 (0 = empty) and
 * the 32-bit hash so that growing never needs the keys. Callers hash their
 * keys with spulse_htab_seed(h) as the seed.
 */
struct spulse_htab {
	uint64_t *slots;	/* (hash << 32) | (id + 1) */
	uint32_t mask;		/* capacity - 1, capacity a power of two */
	uint32_t count;
	uint64_t seed;		/* 0 until first used */
	uint64_t probes;
};

/* The table's seed (drawn on first call). */
uint64_t spulse_htab_seed(struct spulse_htab *h);
uint64_t spulse_htab_probes(const struct spulse_htab *h);

typedef bool (*spulse_htab_eq)(const void *ctx, uint32_t id);

uint32_t spulse_htab_find(const struct spulse_htab *h, uint32_t hash,
			  spulse_htab_eq eq, const void *ctx);
int spulse_htab_insert(struct spulse_htab *h, uint32_t hash, uint32_t id);

/*
 * The probe of @hash (spulse_htab_find() is this without @pos), keeping
 * for a miss where spulse_htab_insert() would put @hash (the empty slot
 * ending its probe sequence) and the slots it passed over, so that
 * spulse_htab_insert_at() inserts without probing again: the same slots
 * and the same probe counts as find + insert. The position is valid
 * until the table changes.
 */
struct spulse_htab_pos {
	uint32_t slot;		/* UINT32_MAX: none (empty table, or a hit) */
	uint32_t passed;
};

static inline uint32_t spulse_htab_lookup(const struct spulse_htab *h,
					  uint32_t hash,
					  spulse_htab_eq eq, const void *ctx,
					  struct spulse_htab_pos *pos)
{
	uint32_t i, passed = 0;

	pos->slot = UINT32_MAX;
	if (!h->slots)
		return SPULSE_NONE;
	for (i = hash & h->mask;; i = (i + 1) & h->mask) {
		uint64_t s = h->slots[i];

		if (!s)
			break;
		SPULSE_PROBE(h);
		passed++;
		if ((uint32_t)(s >> 32) == hash &&
		    eq(ctx, (uint32_t)s - 1))
			return (uint32_t)s - 1;
	}
	pos->slot = i;
	pos->passed = passed;
	return SPULSE_NONE;
}

/* The table's seed, inline (drawn on first use by spulse_htab_seed()). */
static inline uint64_t spulse_htab_seed_inline(struct spulse_htab *h)
{
	return h->seed ? h->seed : spulse_htab_seed(h);
}
int spulse_htab_insert_at(struct spulse_htab *h, const struct spulse_htab_pos *pos,
			  uint32_t hash, uint32_t id);
void spulse_htab_free(struct spulse_htab *h);
size_t spulse_htab_bytes(const struct spulse_htab *h);

/* struct spulse_u32map - map from a u32 key to a u32 value. */
struct spulse_u32map {
	uint32_t *keys;
	uint32_t *vals;
	uint8_t *used;
	uint32_t mask;
	uint32_t count;
	uint64_t seed;		/* drawn when the table is first allocated */
	uint64_t probes;
};

/* Return a pointer to the value of @key, inserting @def if absent; NULL on ENOMEM. */
uint32_t *spulse_u32map_get(struct spulse_u32map *m, uint32_t key, uint32_t def);
/* Return a pointer to the value of @key or NULL. */
uint32_t *spulse_u32map_find(const struct spulse_u32map *m, uint32_t key);
void spulse_u32map_free(struct spulse_u32map *m);
size_t spulse_u32map_bytes(const struct spulse_u32map *m);
uint64_t spulse_u32map_probes(const struct spulse_u32map *m);

/* ---- defs.c: definition tables ---- */

struct spulse_arena_block;

/* Chunked arena: pointers into it stay valid until the arena is freed. */
struct spulse_arena {
	struct spulse_arena_block *head;
	size_t used, cap;	/* of the head block */
	size_t bytes;		/* total allocated */
};

struct spulse_mod_def {
	uint64_t start, end, file_offset;
	const char *path;
	const uint8_t *build_id;
	uint32_t pid, path_len, build_id_len;
	uint32_t next_same_pid;	/* next module of this pid's active list, or SPULSE_NONE */
	bool active;
};

struct spulse_frame_def {
	uint64_t addr;
	uint32_t module;
	uint8_t kind;
};

struct spulse_stack_def {
	uint32_t parent;	/* SPULSE_NONE for a root */
	uint32_t frame;
	uint32_t depth;
};

struct spulse_thread_def {
	const char *comm;
	uint32_t pid, tid, comm_len;
	uint32_t source;	/* from a kind-5 record, else SPULSE_NONE */
};

struct spulse_ident_def {
	uint8_t recording_id[SPULSE_RECORDING_ID_LEN];
	uint64_t start_us;
	const char *host, *machine_id, *boot_id, *kernel;
	uint32_t lens[4];	/* host, machine_id, boot_id, kernel */
};

struct spulse_defs {
	struct spulse_mod_def *mods;
	struct spulse_frame_def *frames;
	struct spulse_stack_def *stacks;
	struct spulse_thread_def *threads;
	struct spulse_ident_def *idents;
	uint32_t nmods, nframes, nstacks, nthreads, nidents;
	uint32_t cap_mods, cap_frames, cap_stacks, cap_threads, cap_idents;
	struct spulse_arena arena;
	struct spulse_u32map pid_active;	/* pid -> head of active-module list */
};

void spulse_defs_init(struct spulse_defs *d);
void spulse_defs_fini(struct spulse_defs *d);
size_t spulse_defs_bytes(const struct spulse_defs *d);
/* Copy @len bytes into the arena with a trailing NUL. */
char *spulse_arena_copy(struct spulse_arena *a, const void *p, size_t len);
int spulse_defs_add_module(struct spulse_defs *d, const struct spulse_mod_def *m);
int spulse_defs_add_frame(struct spulse_defs *d, const struct spulse_frame_def *f);
int spulse_defs_add_stack(struct spulse_defs *d, const struct spulse_stack_def *s);
int spulse_defs_add_thread(struct spulse_defs *d, const struct spulse_thread_def *t);
/* Copy @id (strings of the given lengths) as the next identity. */
int spulse_defs_add_ident(struct spulse_defs *d, const struct spulse_ident_def *id,
			  const uint32_t lens[4]);
void spulse_defs_retire_module(struct spulse_defs *d, uint32_t id);
void spulse_defs_retire_pid(struct spulse_defs *d, uint32_t pid);

/* ---- decode.c: the one decoder/validator ---- */

/*
 * struct spulse_dec - validation state of one stream: definitions, the
 * running sample time and the counts of struct spulse_info.
 */
struct spulse_dec {
	struct spulse_defs defs;
	struct spulse_info info;
	int64_t time_ns;	/* running offset from the profile start */
	int64_t event_ns;	/* event clock (extension kinds 2 and 3) */
	/*
	 * Largest offset either clock may reach: start_us * 1000 + offset
	 * must fit in an i64 of epoch nanoseconds (FORMAT.md 3.6).
	 */
	int64_t time_max;
	uint32_t cpu;		/* from the last cpu record; SPULSE_NONE */
	uint32_t max_ids;
	bool header_done;
	bool trusted;		/* replay iteration: defs already complete */
	/* strings of the identity record being decoded (kind 4) */
	const char *ident_str[4];
	uint32_t ident_lens[4];
	/* text of the last trigger decoded, NUL-terminated */
	char text[SPULSE_MAX_TRIGGER_TEXT + 1];
};

enum spulse_dec_status {
	SPULSE_DEC_NEED_MORE = 0,	/* input ends inside the record */
	SPULSE_DEC_OK = 1,
};

void spulse_dec_init(struct spulse_dec *dec, const struct spulse_read_opts *opts);
void spulse_dec_fini(struct spulse_dec *dec);

/**
 * spulse_dec_header() - decode the stream header
 * @dec: decoder; sets info.start_us/interval_us
 * @buf: bytes from offset 0
 * @len: bytes available
 * @consumed: header length on success
 * @err: error detail
 *
 * Return: 1 decoded, 0 input ends inside the header (and agrees with the
 * magic so far), -EBADMSG on bad magic or a bad varint.
 */
int spulse_dec_header(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		      size_t *consumed, struct spulse_error *err);

/**
 * spulse_dec_record() - decode and validate one record
 * @dec: decoder; definitions are committed and counts updated on success
 * @buf: bytes starting at the record's tag
 * @len: bytes available
 * @off: file offset of @buf[0], for error messages and @out->offset
 * @out: decoded record (strings point into the definition arena)
 * @consumed: record length on success
 * @err: error detail
 *
 * Return: 1 decoded, 0 the record is cut by the end of @buf, -EBADMSG.
 */
int spulse_dec_record(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		      uint64_t off, struct spulse_record *out, size_t *consumed,
		      struct spulse_error *err);

/**
 * spulse_dec_samples() - fast path for a run of sample records
 * @dec: decoder
 * @buf: bytes starting at a record's tag
 * @len: bytes available
 * @out: where to store samples (may be NULL to only count/validate)
 * @max: room in @out
 * @consumed: bytes consumed by the samples decoded
 *
 * Decodes consecutive, valid sample records as long as a whole maximal
 * sample fits in the input. Stops, without consuming it, at anything else
 * (another tag, an invalid sample, the end of the input); the caller then
 * uses spulse_dec_record(), which reports the error precisely.
 *
 * Return: number of samples decoded.
 */
size_t spulse_dec_samples(struct spulse_dec *dec, const uint8_t *buf,
			  size_t len, struct spulse_sample *out, size_t max,
			  size_t *consumed);

/* The same with the portable loop only (no SIMD/BMI2 dispatch), for tests. */
size_t spulse_dec_samples_portable(struct spulse_dec *dec, const uint8_t *buf,
				   size_t len, struct spulse_sample *out,
				   size_t max, size_t *consumed);

/**
 * spulse_dec_defs() - fast path for a run of frame and stack definitions
 * @dec: decoder (not trusted: the run adds to its definitions)
 * @buf: bytes starting at a record's tag
 * @len: bytes available
 * @consumed: bytes consumed by the definitions decoded
 *
 * Decodes consecutive frame (kinds 1-3) and stack records into @dec's
 * definitions with spulse_dec_record()'s checks, as long as a whole
 * maximal record fits in the input. Stops, without consuming it, at
 * anything else (another tag, a module frame, a record it would refuse,
 * the end of the input); the caller then uses spulse_dec_record(), which
 * takes that record or reports its error precisely.
 *
 * Return: number of definitions decoded.
 */
size_t spulse_dec_defs(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		       size_t *consumed);

/* ---- filebuf.c: sequential pread buffer ---- */

struct spulse_filebuf {
	int fd;
	uint8_t *buf;
	size_t cap;
	size_t pos, fill;	/* consumed / valid bytes in buf */
	uint64_t base;		/* file offset of buf[0] */
	/* mapped mode: buf points into a window mapping of @cap bytes */
	uint8_t *map;
	size_t map_len;
	uint64_t size;		/* file size at init (mapped mode) */
	bool mapped;
};

int spulse_filebuf_init(struct spulse_filebuf *fb, int fd, size_t cap,
			uint64_t offset);
/*
 * The same over read-only mappings of @window bytes of the first @size
 * bytes of the file (no copy; mapped file pages count in RSS only while
 * their window is mapped, so RSS stays bounded by @window). Used for
 * Replay's one-shot validation pass; a file truncated under a mapping
 * faults (SIGBUS), as for Snapshot.
 */
int spulse_filebuf_init_map(struct spulse_filebuf *fb, int fd, size_t window,
			    uint64_t size);
void spulse_filebuf_fini(struct spulse_filebuf *fb);
/* Move unconsumed bytes to the front and read more, not past @limit (file
 * offset, UINT64_MAX = none). Return bytes added, 0 at EOF/limit, <0 errno. */
ssize_t spulse_filebuf_refill(struct spulse_filebuf *fb, uint64_t limit);
/* Reposition to file offset @offset (drops buffered bytes). */
void spulse_filebuf_seek(struct spulse_filebuf *fb, uint64_t offset);

static inline uint64_t spulse_filebuf_offset(const struct spulse_filebuf *fb)
{
	return fb->base + fb->pos;
}

void spulse_info_sync_counts(struct spulse_info *info,
			     const struct spulse_defs *d);

#endif /* SPULSE_LIB_INTERNAL_H */
