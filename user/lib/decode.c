// SPDX-License-Identifier: MIT
/*
 * The single SPULSE record decoder and validator. Every reader (Snapshot,
 * Replay, Tail, Stream) goes through spulse_dec_header(), spulse_dec_record()
 * and the sample fast path spulse_dec_samples(); every rule of
 * docs/FORMAT.md sections 1-4 (extension records: section 3.10) is checked
 * here and nowhere else.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void spulse_dec_init(struct spulse_dec *dec, const struct spulse_read_opts *opts)
{
	memset(dec, 0, sizeof(*dec));
	spulse_defs_init(&dec->defs);
	dec->cpu = SPULSE_NONE;
	dec->time_max = INT64_MAX;
	dec->max_ids = SPULSE_MAX_ID;
	if (opts && opts->sz >= offsetof(struct spulse_read_opts, max_ids) +
				 sizeof(opts->max_ids) &&
	    opts->max_ids && opts->max_ids < SPULSE_MAX_ID)
		dec->max_ids = opts->max_ids;
}

void spulse_dec_fini(struct spulse_dec *dec)
{
	spulse_defs_fini(&dec->defs);
}

/* Cursor over one record's bytes. */
struct cur {
	const uint8_t *buf;
	size_t len, pos;
	uint64_t off;		/* file offset of buf[0] */
	struct spulse_error *err;
	uint64_t len_off;	/* extension payload: offset of its len field */
	bool cut;		/* extension payload: input ends inside it */
};

static inline uint64_t cur_off(const struct cur *c)
{
	return c->off + c->pos;
}

static int varint_fail(struct cur *c, int n)
{
	if (n == SPULSE_VARINT_OVERLONG)
		return spulse_fail(c->err, cur_off(c), "overlong varint");
	return spulse_fail(c->err, cur_off(c), "varint overflows 64 bits");
}

/*
 * Unsigned varint with at least SPULSE_VARINT_MAX readable bytes at @p,
 * for fields whose length varies unpredictably (stack ids), where a
 * data-dependent one-byte shortcut costs more than it saves. Up to 8 bytes
 * are decoded without a loop or a data-dependent branch: one 64-bit load,
 * the length from the first byte with bit 7 clear, then the 7-bit groups
 * are packed pairwise (16-, 32-, 64-bit lanes). Same results as
 * spulse_get_uvar().
 */
static inline int fast_uvar_nb(const uint8_t *p, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t x, stop;
	unsigned int bit;

	memcpy(&x, p, sizeof(x));
	stop = ~x & 0x8080808080808080ULL;
	if (__builtin_expect(!stop, 0))
		return spulse_get_uvar(p, SPULSE_VARINT_MAX, v);
	bit = (unsigned int)__builtin_ctzll(stop);	/* bit 7 of the last byte */
	x &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7fULL;
	/* a last byte (not the first) with all 7 bits zero: redundant group */
	if (__builtin_expect((bit > 7) & !(x >> (bit - 7)), 0))
		return SPULSE_VARINT_OVERLONG;
	x = ((x & 0x7f007f007f007f00ULL) >> 1) | (x & 0x007f007f007f007fULL);
	x = ((x & 0x3fff00003fff0000ULL) >> 2) | (x & 0x00003fff00003fffULL);
	x = ((x & 0x0fffffff00000000ULL) >> 4) | (x & 0x000000000fffffffULL);
	*v = x;
	return (int)(bit >> 3) + 1;
#else
	return spulse_get_uvar(p, SPULSE_VARINT_MAX, v);
#endif
}

/* As fast_uvar_nb() with a shortcut for the common one-byte value. */
static inline int fast_uvar(const uint8_t *p, uint64_t *v)
{
	if (__builtin_expect(p[0] < 0x80, 1)) {
		*v = p[0];
		return 1;
	}
	return fast_uvar_nb(p, v);
}

/*
 * Unsigned varint with at least SPULSE_VARINT_MAX readable bytes at @p, for
 * definition ids: values of 1 to 3 bytes (ids below 2^21) byte by byte,
 * longer ones by fast_uvar_nb(). Same results as spulse_get_uvar().
 */
static inline __attribute__((always_inline)) int
def_uvar(const uint8_t *p, uint64_t *v)
{
	uint64_t b0 = p[0], b1, b2;

	if (b0 < 0x80) {
		*v = b0;
		return 1;
	}
	b1 = p[1];
	if (b1 < 0x80) {
		if (!b1)
			return SPULSE_VARINT_OVERLONG;
		*v = (b0 & 0x7f) | b1 << 7;
		return 2;
	}
	b2 = p[2];
	if (b2 < 0x80) {
		if (!b2)
			return SPULSE_VARINT_OVERLONG;
		*v = (b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14;
		return 3;
	}
	return fast_uvar_nb(p, v);
}

/* 1 = decoded, 0 = cut by end of input, -EBADMSG */
static inline int cur_uvar(struct cur *c, uint64_t *v)
{
	int n;

	*v = 0;
	n = spulse_get_uvar(c->buf + c->pos, c->len - c->pos, v);
	if (n > 0) {
		c->pos += (size_t)n;
		return 1;
	}
	if (n == SPULSE_VARINT_SHORT)
		return 0;
	return varint_fail(c, n);
}

static inline int cur_u8(struct cur *c, uint8_t *v)
{
	*v = 0;
	if (c->pos >= c->len)
		return 0;
	*v = c->buf[c->pos++];
	return 1;
}

/* A length-prefixed byte string of at most @limit bytes. */
static int cur_bytes(struct cur *c, uint32_t limit, const char *what,
		     const uint8_t **p, uint32_t *n)
{
	uint64_t off = cur_off(c), len;
	int r = cur_uvar(c, &len);

	if (r <= 0)
		return r;
	if (len > limit)
		return spulse_fail(c->err, off, "%s length %" PRIu64
				   " exceeds limit %u", what, len, limit);
	if (c->len - c->pos < len)
		return 0;
	*p = c->buf + c->pos;
	*n = (uint32_t)len;
	c->pos += (size_t)len;
	return 1;
}

#define TRY(expr) do { int _r = (expr); if (_r <= 0) return _r; } while (0)

static int check_u32(struct cur *c, uint64_t off, uint64_t v, const char *what)
{
	if (v > UINT32_MAX)
		return spulse_fail(c->err, off, "%s %" PRIu64 " exceeds u32",
				   what, v);
	return 1;
}

/*
 * The rules of each record live in one predicate (id_rule(), frame_rule(),
 * stack_rule(), offcpu_rule()) used by the general decoder and by the fast
 * paths: each takes the fields decoded so far (the first @nf, in field
 * order) and returns the first rule they break, or 0. The general decoder
 * decodes as far as the input goes, asks the predicate, and only then
 * reports a cut or a bad varint of the field it stopped at, so every rule
 * is still checked as soon as the field it concerns is complete (a record
 * cut after a field that breaks a rule is corruption, docs/FORMAT.md
 * section 6). The fast paths decode whole records and leave any record
 * the predicate refuses to the general decoder, which reports it.
 */

/* Dense-id rule for a new definition with @count already defined. */
enum { ID_DUP = 1, ID_GAP, ID_MANY, ID_RULE_END };

static inline int id_rule(uint64_t id, uint32_t count, uint32_t max_ids)
{
	if (id < count)
		return ID_DUP;
	if (id > count)
		return ID_GAP;
	if (count >= max_ids)
		return ID_MANY;
	return 0;
}

/* Report id_rule()'s @rule for a definition of @kind at @off. */
static int id_fail(const struct spulse_dec *dec, struct spulse_error *err,
		   int rule, uint64_t off, uint64_t id, uint32_t count,
		   const char *kind)
{
	if (rule == ID_DUP)
		return spulse_fail(err, off, "duplicate %s id %" PRIu64,
				   kind, id);
	if (rule == ID_GAP)
		return spulse_fail(err, off, "gap: %s id %" PRIu64
				   " but %u defined", kind, id, count);
	return spulse_fail(err, off, "too many %s definitions (limit %u)",
			   kind, dec->max_ids);
}

static int check_id(struct spulse_dec *dec, struct cur *c, uint64_t off,
		    uint64_t id, uint32_t count, const char *kind)
{
	int r = id_rule(id, count, dec->max_ids);

	if (r)
		return id_fail(dec, c->err, r, off, id, count, kind);
	return 1;
}

/*
 * The next varint field at @c without reporting anything: 1 and the
 * cursor moved past it, else the spulse_get_uvar() status with the cursor
 * left at the field (field_end() reports it, after the rules).
 */
static inline int cur_field(struct cur *c, uint64_t *v)
{
	int n = spulse_get_uvar(c->buf + c->pos, c->len - c->pos, v);

	if (n > 0) {
		c->pos += (size_t)n;
		return 1;
	}
	return n;
}

/* cur_field()'s failure @st at the cursor: 0 for a cut, else -EBADMSG. */
static int field_end(struct cur *c, int st)
{
	if (st == SPULSE_VARINT_SHORT)
		return 0;
	return varint_fail(c, st);
}

static int oom(struct cur *c)
{
	return spulse_fail_errno(c->err, -ENOMEM, "definition tables");
}

int spulse_dec_header(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		      size_t *consumed, struct spulse_error *err)
{
	struct cur c = { .buf = buf, .len = len, .pos = SPULSE_MAGIC_LEN,
			 .err = err };
	size_t i, n = len < SPULSE_MAGIC_LEN ? len : SPULSE_MAGIC_LEN;
	uint64_t start, interval;

	for (i = 0; i < n; i++)
		if (buf[i] != (uint8_t)SPULSE_MAGIC[i])
			return spulse_fail(err, 0, "bad magic");
	if (len < SPULSE_MAGIC_LEN)
		return 0;
	TRY(cur_uvar(&c, &start));
	if (start > SPULSE_MAX_START_US)
		return spulse_fail(err, SPULSE_MAGIC_LEN, "start_us %" PRIu64
				   " overflows the nanosecond clock (limit %"
				   PRIu64 ")", start, (uint64_t)SPULSE_MAX_START_US);
	TRY(cur_uvar(&c, &interval));
	dec->info.start_us = start;
	dec->info.interval_us = interval;
	dec->time_max = INT64_MAX - (int64_t)(start * 1000);
	dec->header_done = true;
	*consumed = c.pos;
	return 1;
}

/*
 * Every rule is checked as soon as the field it concerns is complete, in
 * field order (docs/FORMAT.md section 6): a record cut by the end of the
 * input whose complete fields already break a rule is corruption, not a
 * truncated tail. Definitions are committed only once the whole record is
 * there. A trusted decoder (Replay iteration over a validated prefix)
 * skips the checks and the commits.
 */
static int dec_module(struct spulse_dec *dec, struct cur *c,
		      struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	uint64_t id, pid, start, end, foff, o_id, o_pid, o_start;
	struct spulse_mod_def m;
	const uint8_t *path, *bid;
	uint32_t path_len, bid_len;
	bool check = !dec->trusted;

	o_id = cur_off(c);
	TRY(cur_uvar(c, &id));
	if (check)
		TRY(check_id(dec, c, o_id, id, d->nmods, "module"));
	o_pid = cur_off(c);
	TRY(cur_uvar(c, &pid));
	if (check)
		TRY(check_u32(c, o_pid, pid, "pid"));
	o_start = cur_off(c);
	TRY(cur_uvar(c, &start));
	TRY(cur_uvar(c, &end));
	if (check && start >= end)
		return spulse_fail(c->err, o_start, "module start 0x%" PRIx64
				   " not below end 0x%" PRIx64, start, end);
	TRY(cur_uvar(c, &foff));
	if (check && foff + (end - start) < foff)
		return spulse_fail(c->err, o_start,
				   "address arithmetic overflows");
	TRY(cur_bytes(c, SPULSE_MAX_STRING, "string", &path, &path_len));
	TRY(cur_bytes(c, SPULSE_MAX_BUILD_ID, "build-id", &bid, &bid_len));
	if (check) {
		m = (struct spulse_mod_def){
			.start = start, .end = end, .file_offset = foff,
			.path = (const char *)path, .path_len = path_len,
			.build_id = bid, .build_id_len = bid_len,
			.pid = (uint32_t)pid,
		};
		if (spulse_defs_add_module(d, &m))
			return oom(c);
		dec->info.modules++;
	}
	out->u.module.id = (uint32_t)id;
	out->u.module.pid = (uint32_t)pid;
	out->u.module.start = start;
	out->u.module.end = end;
	out->u.module.file_offset = foff;
	out->u.module.path_len = path_len;
	out->u.module.build_id_len = bid_len;
	out->u.module.active = true;
	if (id < d->nmods) {
		out->u.module.path = d->mods[id].path;
		out->u.module.build_id = d->mods[id].build_id;
	} else {
		out->u.module.path = "";
		out->u.module.build_id = NULL;
	}
	return 1;
}

/* Frame rules past id_rule()'s (fields: id, kind, [module,] address). */
enum { FRM_KIND = ID_RULE_END, FRM_FWD_MODULE, FRM_INACTIVE, FRM_OUTSIDE };

static inline bool frame_kind_known(uint8_t kind)
{
	return kind <= SPULSE_FRAME_TRUNCATED;
}

/*
 * The rules of a frame record whose first @nf fields are decoded: @id,
 * @kind, then the module @mod (kind 0) and the address @addr (kinds 0, 1
 * and 2). The first rule broken, or 0.
 */
static inline int frame_rule(const struct spulse_dec *dec, unsigned int nf,
			     uint64_t id, uint8_t kind, uint64_t mod,
			     uint64_t addr)
{
	const struct spulse_defs *d = &dec->defs;
	const struct spulse_mod_def *m;
	int r;

	if (nf < 1)
		return 0;
	r = id_rule(id, d->nframes, dec->max_ids);
	if (r || nf < 2)
		return r;
	if (!frame_kind_known(kind))
		return FRM_KIND;
	if (kind != SPULSE_FRAME_MODULE || nf < 3)
		return 0;
	if (mod >= d->nmods)
		return FRM_FWD_MODULE;
	m = &d->mods[mod];
	if (!m->active)
		return FRM_INACTIVE;
	if (nf >= 4 && (addr < m->file_offset ||
			addr - m->file_offset >= m->end - m->start))
		return FRM_OUTSIDE;
	return 0;
}

static int dec_frame(struct spulse_dec *dec, struct cur *c,
		     struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	uint64_t id, mod = SPULSE_NONE, addr = 0, o[4];
	unsigned int nf = 0, want = 2;
	struct spulse_frame_def f;
	uint8_t kind = 0;
	int st = 1, r;

	o[0] = cur_off(c);
	st = cur_field(c, &id);
	if (st > 0) {
		nf = 1;
		o[1] = cur_off(c);
		if (cur_u8(c, &kind)) {
			nf = 2;
			want = kind == SPULSE_FRAME_MODULE ? 4 :
			       kind == SPULSE_FRAME_TRUNCATED ||
			       !frame_kind_known(kind) ? 2 : 3;
		} else {
			st = SPULSE_VARINT_SHORT;
		}
	}
	while (st > 0 && nf < want) {
		o[nf] = cur_off(c);
		st = cur_field(c, nf == 2 && want == 4 ? &mod : &addr);
		if (st > 0)
			nf++;
	}
	if (dec->trusted)
		r = nf >= 2 && !frame_kind_known(kind) ? FRM_KIND : 0;
	else
		r = frame_rule(dec, nf, id, kind, mod, addr);
	switch (r) {
	case 0:
		break;
	case FRM_KIND:
		return spulse_fail(c->err, o[1], "unknown frame kind %u", kind);
	case FRM_FWD_MODULE:
		return spulse_fail(c->err, o[2],
				   "forward reference to module %" PRIu64, mod);
	case FRM_INACTIVE:
		return spulse_fail(c->err, o[2],
				   "frame names deactivated module %" PRIu64,
				   mod);
	case FRM_OUTSIDE:
		return spulse_fail(c->err, o[3],
				   "frame address outside module %" PRIu64
				   " span", mod);
	default:
		return id_fail(dec, c->err, r, o[0], id, d->nframes, "frame");
	}
	if (nf < want)
		return field_end(c, st);
	if (!dec->trusted) {
		f = (struct spulse_frame_def){ .addr = addr, .kind = kind,
			.module = (uint32_t)mod };
		if (spulse_defs_add_frame(d, &f))
			return oom(c);
		dec->info.frames++;
	}
	out->u.frame.id = (uint32_t)id;
	out->u.frame.kind = kind;
	out->u.frame.module = (uint32_t)mod;
	out->u.frame.addr = addr;
	return 1;
}

/* Stack rules past id_rule()'s (fields: id, parent + 1, frame). */
enum { STK_FWD_PARENT = ID_RULE_END, STK_DEPTH, STK_FWD_FRAME, STK_TRUNC };

/*
 * The rules of a stack record whose first @nf fields are in @f (id,
 * parent + 1, frame): the first rule broken, or 0 and *@s the definition
 * as far as the fields go.
 */
static inline int stack_rule(const struct spulse_dec *dec, unsigned int nf,
			     const uint64_t *f, struct spulse_stack_def *s)
{
	const struct spulse_defs *d = &dec->defs;
	int r;

	s->parent = SPULSE_NONE;
	s->depth = 1;
	if (nf < 1)
		return 0;
	r = id_rule(f[0], d->nstacks, dec->max_ids);
	if (r || nf < 2)
		return r;
	if (f[1] != SPULSE_STACK_ROOT) {
		if (f[1] - 1 >= d->nstacks)
			return STK_FWD_PARENT;
		s->parent = (uint32_t)(f[1] - 1);
		s->depth = d->stacks[s->parent].depth + 1;
		if (s->depth > SPULSE_MAX_DEPTH)
			return STK_DEPTH;
	}
	if (nf < 3)
		return 0;
	if (f[2] >= d->nframes)
		return STK_FWD_FRAME;
	if (d->frames[f[2]].kind == SPULSE_FRAME_TRUNCATED &&
	    f[1] != SPULSE_STACK_ROOT)
		return STK_TRUNC;
	s->frame = (uint32_t)f[2];
	return 0;
}

static int dec_stack(struct spulse_dec *dec, struct cur *c,
		     struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	struct spulse_stack_def s;
	uint64_t f[3], o[3], id, parent;
	unsigned int nf;
	int st = 1, r = 0;

	for (nf = 0; nf < 3; nf++) {
		o[nf] = cur_off(c);
		st = cur_field(c, &f[nf]);
		if (st <= 0)
			break;
	}
	if (!dec->trusted)
		r = stack_rule(dec, nf, f, &s);
	switch (r) {
	case 0:
		break;
	case STK_FWD_PARENT:
		return spulse_fail(c->err, o[1],
				   "forward reference to stack %" PRIu64,
				   f[1] - 1);
	case STK_DEPTH:
		return spulse_fail(c->err, o[1], "stack depth exceeds %u",
				   SPULSE_MAX_DEPTH);
	case STK_FWD_FRAME:
		return spulse_fail(c->err, o[2],
				   "forward reference to frame %" PRIu64, f[2]);
	case STK_TRUNC:
		return spulse_fail(c->err, o[1],
				   "truncated marker must be a root node");
	default:
		return id_fail(dec, c->err, r, o[0], f[0], d->nstacks, "stack");
	}
	if (nf < 3)
		return field_end(c, st);
	id = f[0];
	parent = f[1];
	if (!dec->trusted) {
		if (spulse_defs_add_stack(d, &s))
			return oom(c);
		dec->info.stacks++;
	}
	out->u.stack.id = (uint32_t)id;
	out->u.stack.parent = parent ? (uint32_t)(parent - 1) : SPULSE_NONE;
	out->u.stack.frame = (uint32_t)f[2];
	out->u.stack.depth = id < d->nstacks ? d->stacks[id].depth : 0;
	return 1;
}

static int dec_thread(struct spulse_dec *dec, struct cur *c,
		      struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	uint64_t id, pid, tid, o_id, o_pid, o_tid;
	const uint8_t *comm;
	uint32_t comm_len;
	struct spulse_thread_def t;
	bool check = !dec->trusted;

	o_id = cur_off(c);
	TRY(cur_uvar(c, &id));
	if (check)
		TRY(check_id(dec, c, o_id, id, d->nthreads, "thread"));
	o_pid = cur_off(c);
	TRY(cur_uvar(c, &pid));
	if (check)
		TRY(check_u32(c, o_pid, pid, "pid"));
	o_tid = cur_off(c);
	TRY(cur_uvar(c, &tid));
	if (check)
		TRY(check_u32(c, o_tid, tid, "tid"));
	TRY(cur_bytes(c, SPULSE_MAX_COMM, "comm", &comm, &comm_len));
	if (check) {
		t = (struct spulse_thread_def){ .comm = (const char *)comm,
			.comm_len = comm_len, .pid = (uint32_t)pid,
			.tid = (uint32_t)tid };
		if (spulse_defs_add_thread(d, &t))
			return oom(c);
		dec->info.threads++;
	}
	out->u.thread.id = (uint32_t)id;
	out->u.thread.pid = (uint32_t)pid;
	out->u.thread.tid = (uint32_t)tid;
	out->u.thread.comm_len = comm_len;
	out->u.thread.comm = id < d->nthreads ? d->threads[id].comm : "";
	return 1;
}

static int dec_sample(struct spulse_dec *dec, struct cur *c,
		      struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	uint64_t z, thread, stack, o_dt, o_thread, o_stack;
	int64_t t;

	o_dt = cur_off(c);
	TRY(cur_uvar(c, &z));
	if (__builtin_add_overflow(dec->time_ns, spulse_unzigzag(z), &t) ||
	    t > dec->time_max)
		return spulse_fail(c->err, o_dt, "sample time overflows");
	if (t < 0)
		return spulse_fail(c->err, o_dt, "sample before profile start");
	o_thread = cur_off(c);
	TRY(cur_uvar(c, &thread));
	if (thread >= d->nthreads)
		return spulse_fail(c->err, o_thread,
				   "forward reference to thread %" PRIu64, thread);
	o_stack = cur_off(c);
	TRY(cur_uvar(c, &stack));
	if (stack >= d->nstacks)
		return spulse_fail(c->err, o_stack,
				   "forward reference to stack %" PRIu64, stack);
	dec->time_ns = t;
	dec->info.samples++;
	out->u.sample.time_ns = t;
	out->u.sample.thread = (uint32_t)thread;
	out->u.sample.stack = (uint32_t)stack;
	out->u.sample.cpu = dec->cpu;
	out->u.sample.reserved = 0;
	return 1;
}

static int dec_python(struct spulse_dec *dec, struct cur *c,
		      struct spulse_record *out)
{
	uint64_t pid, o_pid = cur_off(c), o_state;
	uint8_t state;

	TRY(cur_uvar(c, &pid));
	TRY(check_u32(c, o_pid, pid, "pid"));
	o_state = cur_off(c);
	TRY(cur_u8(c, &state));
	if (state > SPULSE_PYTHON_ENTER)
		return spulse_fail(c->err, o_state, "unknown python state %u",
				   state);
	dec->info.python++;
	out->u.python.pid = (uint32_t)pid;
	out->u.python.state = state;
	return 1;
}

static int dec_process_deactivate(struct spulse_dec *dec, struct cur *c,
				  struct spulse_record *out)
{
	uint64_t pid, o_pid = cur_off(c);

	TRY(cur_uvar(c, &pid));
	TRY(check_u32(c, o_pid, pid, "pid"));
	if (!dec->trusted)
		spulse_defs_retire_pid(&dec->defs, (uint32_t)pid);
	dec->info.process_deactivations++;
	out->u.process_deactivate.pid = (uint32_t)pid;
	return 1;
}

static int dec_module_deactivate(struct spulse_dec *dec, struct cur *c,
				 struct spulse_record *out)
{
	struct spulse_defs *d = &dec->defs;
	uint64_t mod, o_mod = cur_off(c);

	TRY(cur_uvar(c, &mod));
	if (!dec->trusted) {
		if (mod >= d->nmods)
			return spulse_fail(c->err, o_mod,
					   "forward reference to module %" PRIu64,
					   mod);
		if (!d->mods[mod].active)
			return spulse_fail(c->err, o_mod,
					   "module already inactive");
		spulse_defs_retire_module(d, (uint32_t)mod);
	}
	dec->info.module_deactivations++;
	out->u.module_deactivate.module = (uint32_t)mod;
	return 1;
}

/* ---- tag 9: extension records (FORMAT.md section 3.10) ---- */

/*
 * Inside an extension payload that is all present, a field that is cut by
 * the payload's end runs past len. It is reported at its first byte; a
 * field with no byte inside the payload at all is reported at the len
 * field (that offset may be the end of the file). When the file ends
 * inside the payload (p->cut), a cut field only means "need more": the
 * fields before it were already checked.
 */
static int ext_short(struct cur *p, uint64_t off, const char *what)
{
	if (p->cut)
		return 0;
	if (off == p->off + p->len)
		return spulse_fail(p->err, p->len_off,
				   "extension payload length mismatch: %s "
				   "runs past the payload end (len too small)",
				   what);
	return spulse_fail(p->err, off, "extension payload length mismatch: "
			   "%s runs past the payload end", what);
}

static inline __attribute__((always_inline)) int
ext_uvar(struct cur *p, uint64_t *off, uint64_t *v, const char *what)
{
	int r;

	*off = cur_off(p);
	r = cur_uvar(p, v);
	if (r == 0)
		return ext_short(p, *off, what);
	return r;
}

static inline int ext_cpu_field(struct cur *p, uint64_t off, uint64_t v,
				const char *what)
{
	if (v >= SPULSE_MAX_CPU)
		return spulse_fail(p->err, off, "%s %" PRIu64
				   " out of range (limit %u)", what, v,
				   SPULSE_MAX_CPU);
	return 1;
}

/* The event clock field: the new running offset in *t, not yet committed. */
static inline int ext_clock(struct spulse_dec *dec, struct cur *p, int64_t *t)
{
	uint64_t z, off;

	TRY(ext_uvar(p, &off, &z, "dt_ns"));
	if (__builtin_add_overflow(dec->event_ns, spulse_unzigzag(z), t) ||
	    *t > dec->time_max)
		return spulse_fail(p->err, off, "event clock overflows");
	if (*t < 0)
		return spulse_fail(p->err, off, "event before profile start");
	return 1;
}

static int ext_cpu(struct cur *p, struct spulse_record *out)
{
	uint64_t cpu, off;

	TRY(ext_uvar(p, &off, &cpu, "cpu"));
	TRY(ext_cpu_field(p, off, cpu, "cpu"));
	out->u.cpu.cpu = (uint32_t)cpu;
	return 1;
}

/* The fields of an off-CPU payload (kind 2), in order. */
enum {
	OC_DT, OC_THREAD, OC_STACK, OC_STATE, OC_CPU_OUT, OC_CPU_IN,
	OC_BLOCKED, OC_RUNQ, OC_WAKER, OC_WAKER_STACK, OC_WAKER_CPU, OC_NF
};

static const char *const oc_name[OC_NF] = {
	"dt_ns", "thread", "stack", "state", "cpu_out", "cpu_in",
	"blocked_ns", "runq_ns", "waker", "waker_stack", "waker_cpu",
};

/* Fields of a payload whose waker field is @waker. */
static inline unsigned int oc_fields(uint64_t waker)
{
	return waker ? OC_NF : OC_WAKER + 1;
}

/* Which rule of an off-CPU payload fails. */
enum {
	OCR_CLOCK = 1, OCR_BEFORE_START, OCR_THREAD, OCR_STACK, OCR_STATE,
	OCR_CPU_OUT, OCR_CPU_IN, OCR_RUNNABLE_BLOCKED, OCR_OVERFLOW,
	OCR_RUNNABLE_WAKER, OCR_WAKER, OCR_WAKER_STACK, OCR_WAKER_CPU,
};

/*
 * The rules of an off-CPU payload (FORMAT.md 3.10) whose first @nf fields
 * are in @f (enum above): the first rule broken, in field order, or 0;
 * *@t is the new event clock once the first field is there.
 */
static inline __attribute__((always_inline)) int
offcpu_rule(const struct spulse_dec *dec, unsigned int nf, const uint64_t *f,
	    int64_t *t)
{
	const struct spulse_defs *d = &dec->defs;
	uint64_t total;

	if (nf <= OC_DT)
		return 0;
	if (__builtin_add_overflow(dec->event_ns, spulse_unzigzag(f[OC_DT]), t) ||
	    *t > dec->time_max)
		return OCR_CLOCK;
	if (*t < 0)
		return OCR_BEFORE_START;
	if (nf <= OC_THREAD)
		return 0;
	if (f[OC_THREAD] >= d->nthreads)
		return OCR_THREAD;
	if (nf <= OC_STACK)
		return 0;
	if (f[OC_STACK] >= d->nstacks)
		return OCR_STACK;
	if (nf <= OC_STATE)
		return 0;
	if (f[OC_STATE] > SPULSE_STATE_MAX)
		return OCR_STATE;
	if (nf <= OC_CPU_OUT)
		return 0;
	if (f[OC_CPU_OUT] >= SPULSE_MAX_CPU)
		return OCR_CPU_OUT;
	if (nf <= OC_CPU_IN)
		return 0;
	if (f[OC_CPU_IN] >= SPULSE_MAX_CPU)
		return OCR_CPU_IN;
	if (nf <= OC_BLOCKED)
		return 0;
	if (f[OC_STATE] == SPULSE_STATE_RUNNABLE && f[OC_BLOCKED])
		return OCR_RUNNABLE_BLOCKED;
	if (nf <= OC_RUNQ)
		return 0;
	if (__builtin_add_overflow(f[OC_BLOCKED], f[OC_RUNQ], &total) ||
	    total > (uint64_t)(dec->time_max - *t))
		return OCR_OVERFLOW;
	if (nf <= OC_WAKER || !f[OC_WAKER])
		return 0;
	if (f[OC_STATE] == SPULSE_STATE_RUNNABLE)
		return OCR_RUNNABLE_WAKER;
	if (f[OC_WAKER] - 1 >= d->nthreads)
		return OCR_WAKER;
	if (nf <= OC_WAKER_STACK)
		return 0;
	if (f[OC_WAKER_STACK] >= d->nstacks)
		return OCR_WAKER_STACK;
	if (nf <= OC_WAKER_CPU)
		return 0;
	if (f[OC_WAKER_CPU] >= SPULSE_MAX_CPU)
		return OCR_WAKER_CPU;
	return 0;
}

/* offcpu_rule()'s @rule reported at the field it concerns (offsets @o). */
static int offcpu_fail(struct cur *p, int rule, const uint64_t *f,
		       const uint64_t *o)
{
	struct spulse_error *err = p->err;

	switch (rule) {
	case OCR_CLOCK:
		return spulse_fail(err, o[OC_DT], "event clock overflows");
	case OCR_BEFORE_START:
		return spulse_fail(err, o[OC_DT], "event before profile start");
	case OCR_THREAD:
		return spulse_fail(err, o[OC_THREAD],
				   "forward reference to thread %" PRIu64,
				   f[OC_THREAD]);
	case OCR_STACK:
		return spulse_fail(err, o[OC_STACK],
				   "forward reference to stack %" PRIu64,
				   f[OC_STACK]);
	case OCR_STATE:
		return spulse_fail(err, o[OC_STATE],
				   "unknown off-CPU state %" PRIu64,
				   f[OC_STATE]);
	case OCR_CPU_OUT:
		return ext_cpu_field(p, o[OC_CPU_OUT], f[OC_CPU_OUT],
				     "cpu_out");
	case OCR_CPU_IN:
		return ext_cpu_field(p, o[OC_CPU_IN], f[OC_CPU_IN], "cpu_in");
	case OCR_RUNNABLE_BLOCKED:
		return spulse_fail(err, o[OC_BLOCKED],
				   "runnable (preempted) interval with blocked time");
	case OCR_OVERFLOW:
		return spulse_fail(err, o[OC_RUNQ],
				   "off-CPU interval overflows");
	case OCR_RUNNABLE_WAKER:
		return spulse_fail(err, o[OC_WAKER],
				   "runnable (preempted) interval with a waker");
	case OCR_WAKER:
		return spulse_fail(err, o[OC_WAKER],
				   "forward reference to waker thread %" PRIu64,
				   f[OC_WAKER] - 1);
	case OCR_WAKER_STACK:
		return spulse_fail(err, o[OC_WAKER_STACK],
				   "forward reference to waker stack %" PRIu64,
				   f[OC_WAKER_STACK]);
	default:
		return ext_cpu_field(p, o[OC_WAKER_CPU], f[OC_WAKER_CPU],
				     "waker_cpu");
	}
}

/* The interval of a payload whose fields @f passed offcpu_rule(). */
static inline __attribute__((always_inline)) void
offcpu_out(const uint64_t *f, int64_t t, struct spulse_offcpu *iv)
{
	iv->time_ns = t;
	iv->thread = (uint32_t)f[OC_THREAD];
	iv->stack = (uint32_t)f[OC_STACK];
	iv->state = (uint8_t)f[OC_STATE];
	iv->cpu_out = (uint32_t)f[OC_CPU_OUT];
	iv->cpu_in = (uint32_t)f[OC_CPU_IN];
	iv->blocked_ns = f[OC_BLOCKED];
	iv->runq_ns = f[OC_RUNQ];
	iv->waker_thread = iv->waker_stack = iv->waker_cpu = SPULSE_NONE;
	if (f[OC_WAKER]) {
		iv->waker_thread = (uint32_t)(f[OC_WAKER] - 1);
		iv->waker_stack = (uint32_t)f[OC_WAKER_STACK];
		iv->waker_cpu = (uint32_t)f[OC_WAKER_CPU];
	}
}

static int ext_offcpu(struct spulse_dec *dec, struct cur *p,
		      struct spulse_record *out)
{
	uint64_t f[OC_NF] = { 0 }, o[OC_NF];
	unsigned int nf, want = OC_WAKER + 1;
	int64_t t = 0;
	int st = 1, r;

	for (nf = 0; nf < want; nf++) {
		o[nf] = cur_off(p);
		st = cur_field(p, &f[nf]);
		if (st <= 0)
			break;
		if (nf == OC_WAKER)
			want = oc_fields(f[OC_WAKER]);
	}
	r = offcpu_rule(dec, nf, f, &t);
	if (r)
		return offcpu_fail(p, r, f, o);
	if (nf < want) {
		if (st == SPULSE_VARINT_SHORT)
			return ext_short(p, o[nf], oc_name[nf]);
		return varint_fail(p, st);
	}
	offcpu_out(f, t, &out->u.offcpu);
	return 1;
}

/*
 * ext_offcpu() for a whole payload [@q, @end) with SPULSE_VARINT_MAX bytes
 * readable past its end: every field by def_uvar(), then offcpu_rule().
 * 1 when ext_offcpu() would accept the payload (the same fields out),
 * else 0 and nothing decided: ext_offcpu() then decodes it and reports
 * any error where it is.
 */
static int ext_offcpu_fast(const struct spulse_dec *dec, const uint8_t *q,
			   const uint8_t *end, struct spulse_offcpu *iv)
{
	uint64_t f[OC_NF];
	int64_t t;
	int n, r;

#define OC_FIELD(i) do {					\
		n = def_uvar(q, &f[i]);				\
		if (n < 0)					\
			return 0;				\
		q += n;						\
		if (q > end)					\
			return 0;				\
	} while (0)
	OC_FIELD(OC_DT);
	OC_FIELD(OC_THREAD);
	OC_FIELD(OC_STACK);
	OC_FIELD(OC_STATE);
	OC_FIELD(OC_CPU_OUT);
	OC_FIELD(OC_CPU_IN);
	OC_FIELD(OC_BLOCKED);
	OC_FIELD(OC_RUNQ);
	OC_FIELD(OC_WAKER);
	if (f[OC_WAKER]) {
		OC_FIELD(OC_WAKER_STACK);
		OC_FIELD(OC_WAKER_CPU);
		/* a constant count: the rules' field tests fold away */
		r = offcpu_rule(dec, OC_NF, f, &t);
	} else {
		r = offcpu_rule(dec, OC_WAKER + 1, f, &t);
	}
#undef OC_FIELD
	if (q != end || r)
		return 0;
	offcpu_out(f, t, iv);
	return 1;
}

static int ext_trigger(struct spulse_dec *dec, struct cur *p,
		       struct spulse_record *out)
{
	struct spulse_trigger *tr = &out->u.trigger;
	uint64_t v, off, wstart;
	const uint8_t *text;
	uint32_t text_len;
	int64_t t;
	int r;

	TRY(ext_clock(dec, p, &t));
	tr->time_ns = t;
	TRY(ext_uvar(p, &off, &v, "reason"));
	if (v < SPULSE_TRIGGER_MANUAL || v > SPULSE_TRIGGER_REASON_MAX)
		return spulse_fail(p->err, off, "unknown trigger reason %" PRIu64,
				   v);
	tr->reason = (uint8_t)v;
	TRY(ext_uvar(p, &off, &v, "seq"));
	TRY(check_u32(p, off, v, "trigger seq"));
	tr->seq = (uint32_t)v;
	TRY(ext_uvar(p, &off, &tr->value_ns, "value_ns"));
	TRY(ext_uvar(p, &off, &tr->threshold_ns, "threshold_ns"));
	TRY(ext_uvar(p, &off, &wstart, "window_start_ns"));
	TRY(ext_uvar(p, &off, &v, "window_end_ns"));
	if (v < wstart)
		return spulse_fail(p->err, off, "trigger window ends (%" PRIu64
				   ") before it starts (%" PRIu64 ")", v, wstart);
	if (v > (uint64_t)dec->time_max)
		return spulse_fail(p->err, off, "trigger window end %" PRIu64
				   " overflows the clock", v);
	tr->window_start_ns = wstart;
	tr->window_end_ns = v;
	off = cur_off(p);
	r = cur_bytes(p, SPULSE_MAX_TRIGGER_TEXT, "trigger text", &text,
		      &text_len);
	if (r == 0)
		return ext_short(p, off, "text");
	if (r < 0)
		return r;
	memcpy(dec->text, text, text_len);
	dec->text[text_len] = '\0';
	tr->text = dec->text;
	tr->text_len = text_len;
	return 1;
}

/* A string of at most @limit bytes inside a payload. */
static int ext_str(struct cur *p, uint32_t limit, const char *what,
		   const uint8_t **v, uint32_t *n)
{
	uint64_t off = cur_off(p);
	int r = cur_bytes(p, limit, what, v, n);

	if (r == 0)
		return ext_short(p, off, what);
	return r;
}

/*
 * Kind 4. The strings stay in the input until the record is complete;
 * dec_ext() then copies them into the definitions (dec->ident*).
 */
static int ext_identity(struct spulse_dec *dec, struct cur *p,
			struct spulse_record *out)
{
	struct spulse_identity *id = &out->u.identity;
	const uint8_t *s[4];
	uint64_t v, off;
	int i;

	TRY(ext_uvar(p, &off, &v, "source"));
	if (!dec->trusted) {
		if (v >= SPULSE_MAX_SOURCES)
			return spulse_fail(p->err, off, "identity source %" PRIu64
					   " out of range (limit %u)", v,
					   SPULSE_MAX_SOURCES);
		if (v != dec->defs.nidents)
			return spulse_fail(p->err, off, "identity source %" PRIu64
					   " out of order (expected %u)", v,
					   dec->defs.nidents);
	}
	id->source = (uint32_t)v;
	off = cur_off(p);
	if (p->len - p->pos < SPULSE_RECORDING_ID_LEN)
		return ext_short(p, off, "recording_id");
	memcpy(id->recording_id, p->buf + p->pos, SPULSE_RECORDING_ID_LEN);
	p->pos += SPULSE_RECORDING_ID_LEN;
	TRY(ext_uvar(p, &off, &v, "start_us"));
	if (v > SPULSE_MAX_START_US)
		return spulse_fail(p->err, off, "identity start_us %" PRIu64
				   " overflows the nanosecond clock", v);
	id->start_us = v;
	TRY(ext_str(p, SPULSE_MAX_HOST, "host", &s[0], &dec->ident_lens[0]));
	TRY(ext_str(p, SPULSE_MAX_MACHINE_ID, "machine_id", &s[1],
		    &dec->ident_lens[1]));
	TRY(ext_str(p, SPULSE_MAX_BOOT_ID, "boot_id", &s[2],
		    &dec->ident_lens[2]));
	TRY(ext_str(p, SPULSE_MAX_KERNEL, "kernel", &s[3],
		    &dec->ident_lens[3]));
	for (i = 0; i < 4; i++)
		dec->ident_str[i] = (const char *)s[i];
	return 1;
}

/* Commit a complete kind-4 record and point @out's strings at the copies. */
static int ext_identity_commit(struct spulse_dec *dec, struct cur *c,
			       struct spulse_record *out)
{
	struct spulse_identity *id = &out->u.identity;
	struct spulse_defs *d = &dec->defs;
	struct spulse_ident_def def;

	if (!dec->trusted) {
		memcpy(def.recording_id, id->recording_id,
		       sizeof(def.recording_id));
		def.start_us = id->start_us;
		def.host = dec->ident_str[0];
		def.machine_id = dec->ident_str[1];
		def.boot_id = dec->ident_str[2];
		def.kernel = dec->ident_str[3];
		if (spulse_defs_add_ident(d, &def, dec->ident_lens))
			return oom(c);
	}
	if (id->source < d->nidents) {
		id->host = d->idents[id->source].host;
		id->machine_id = d->idents[id->source].machine_id;
		id->boot_id = d->idents[id->source].boot_id;
		id->kernel = d->idents[id->source].kernel;
		id->host_len = d->idents[id->source].lens[0];
		id->machine_id_len = d->idents[id->source].lens[1];
		id->boot_id_len = d->idents[id->source].lens[2];
		id->kernel_len = d->idents[id->source].lens[3];
	} else {
		id->host = id->machine_id = id->boot_id = id->kernel = "";
		id->host_len = id->machine_id_len = 0;
		id->boot_id_len = id->kernel_len = 0;
	}
	dec->info.identities++;
	return 1;
}

/* Kind 5: a defined thread without a source yet, a defined source. */
static int ext_thread_source(struct spulse_dec *dec, struct cur *p,
			     struct spulse_record *out)
{
	const struct spulse_defs *d = &dec->defs;
	uint64_t thread, source, off_t, off_s;

	TRY(ext_uvar(p, &off_t, &thread, "thread"));
	if (!dec->trusted) {
		if (thread >= d->nthreads)
			return spulse_fail(p->err, off_t,
					   "forward reference to thread %" PRIu64,
					   thread);
		if (d->threads[thread].source != SPULSE_NONE)
			return spulse_fail(p->err, off_t, "thread %" PRIu64
					   " already has a source (%u)", thread,
					   d->threads[thread].source);
	}
	TRY(ext_uvar(p, &off_s, &source, "source"));
	if (!dec->trusted && source >= d->nidents)
		return spulse_fail(p->err, off_s,
				   "forward reference to source %" PRIu64
				   " (%u identities)", source, d->nidents);
	out->u.thread_source.thread = (uint32_t)thread;
	out->u.thread_source.source = (uint32_t)source;
	return 1;
}

static int dec_ext(struct spulse_dec *dec, struct cur *c,
		   struct spulse_record *out)
{
	uint64_t kind, len, o_kind = cur_off(c), o_len;
	struct cur p;
	int r;

	TRY(cur_uvar(c, &kind));
	if (kind == 0)
		return spulse_fail(c->err, o_kind, "reserved extension kind 0");
	TRY(check_u32(c, o_kind, kind, "extension kind"));
	o_len = cur_off(c);
	TRY(cur_uvar(c, &len));
	if (len > SPULSE_EXT_MAX_LEN)
		return spulse_fail(c->err, o_len, "extension length %" PRIu64
				   " exceeds limit %u", len, SPULSE_EXT_MAX_LEN);
	out->ext_kind = (uint32_t)kind;
	/*
	 * The payload's fields are checked as far as the input goes (p.cut:
	 * the input ends inside it); the record is only complete, and the
	 * decoder's state only moves, once all len bytes are there.
	 */
	p = (struct cur){ .buf = c->buf, .len = c->pos + (size_t)len,
			  .pos = c->pos, .off = c->off, .err = c->err,
			  .len_off = o_len };
	if (c->len - c->pos < len) {
		p.len = c->len;
		p.cut = true;
	}
	switch (kind) {
	case SPULSE_EXT_CPU:
		r = ext_cpu(&p, out);
		break;
	case SPULSE_EXT_OFFCPU:
		/* a whole payload with room to read past it: the fast path */
		if (!p.cut && c->len - p.len >= SPULSE_VARINT_MAX &&
		    ext_offcpu_fast(dec, c->buf + p.pos, c->buf + p.len,
				    &out->u.offcpu)) {
			p.pos = p.len;
			r = 1;
			break;
		}
		r = ext_offcpu(dec, &p, out);
		break;
	case SPULSE_EXT_TRIGGER:
		r = ext_trigger(dec, &p, out);
		break;
	case SPULSE_EXT_IDENTITY:
		r = ext_identity(dec, &p, out);
		break;
	case SPULSE_EXT_THREAD_SOURCE:
		r = ext_thread_source(dec, &p, out);
		break;
	default:
		out->u.ext_unknown.kind = (uint32_t)kind;
		out->u.ext_unknown.len = (uint32_t)len;
		p.pos = p.len;
		r = 1;
		break;
	}
	/*
	 * Every field of a known kind decoded while the file ends inside the
	 * payload: len already proves bytes left over, which no further
	 * bytes can fix (FORMAT.md 6: an error, not a truncated tail),
	 * reported at the first byte left over as soon as the input holds
	 * it (so every reader, fed whole or byte by byte, reports the same
	 * offset as for a complete record; before that byte, a tail).
	 */
	if (r == 1 && p.cut && p.pos < c->len && kind >= SPULSE_EXT_CPU &&
	    kind <= SPULSE_EXT_THREAD_SOURCE)
		return spulse_fail(c->err, cur_off(&p),
				   "extension payload length mismatch: %" PRIu64
				   " bytes left over",
				   (uint64_t)(c->pos + len - p.pos));
	if (r <= 0 || p.cut)
		return r < 0 ? r : 0;
	if (p.pos != p.len)
		return spulse_fail(c->err, cur_off(&p),
				   "extension payload length mismatch: %zu bytes"
				   " left over", p.len - p.pos);
	switch (kind) {
	case SPULSE_EXT_CPU:
		dec->cpu = out->u.cpu.cpu;
		dec->info.cpu_records++;
		break;
	case SPULSE_EXT_OFFCPU:
		dec->event_ns = out->u.offcpu.time_ns;
		dec->info.offcpu++;
		break;
	case SPULSE_EXT_TRIGGER:
		dec->event_ns = out->u.trigger.time_ns;
		dec->info.triggers++;
		break;
	case SPULSE_EXT_IDENTITY:
		r = ext_identity_commit(dec, c, out);
		if (r <= 0)
			return r;
		break;
	case SPULSE_EXT_THREAD_SOURCE:
		if (!dec->trusted)
			dec->defs.threads[out->u.thread_source.thread].source =
				out->u.thread_source.source;
		break;
	default:
		dec->info.ext_skipped++;
		break;
	}
	c->pos = p.pos;
	return 1;
}

int spulse_dec_record(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		      uint64_t off, struct spulse_record *out, size_t *consumed,
		      struct spulse_error *err)
{
	struct cur c = { .buf = buf, .len = len, .pos = 1, .off = off,
			 .err = err };
	int r;

	if (len == 0)
		return 0;
	out->tag = buf[0];
	out->offset = off;
	out->ext_kind = 0;
	switch (buf[0]) {
	case SPULSE_TAG_MODULE:
		r = dec_module(dec, &c, out);
		break;
	case SPULSE_TAG_FRAME:
		r = dec_frame(dec, &c, out);
		break;
	case SPULSE_TAG_STACK:
		r = dec_stack(dec, &c, out);
		break;
	case SPULSE_TAG_THREAD:
		r = dec_thread(dec, &c, out);
		break;
	case SPULSE_TAG_SAMPLE:
		r = dec_sample(dec, &c, out);
		break;
	case SPULSE_TAG_PYTHON:
		r = dec_python(dec, &c, out);
		break;
	case SPULSE_TAG_PROCESS_DEACTIVATE:
		r = dec_process_deactivate(dec, &c, out);
		break;
	case SPULSE_TAG_MODULE_DEACTIVATE:
		r = dec_module_deactivate(dec, &c, out);
		break;
	case SPULSE_TAG_EXT:
		r = dec_ext(dec, &c, out);
		break;
	default:
		return spulse_fail(err, off, "unknown record tag 0x%02x", buf[0]);
	}
	if (r == 1)
		*consumed = c.pos;
	return r;
}

/*
 * Bytes the portable sample loop may read at a sample's tag: three fields
 * of up to 10 bytes each, whatever they hold (a broken sample too).
 */
#define SAMPLE_SCAN	(1 + 3 * SPULSE_VARINT_MAX)

/*
 * Portable sample loop: one fast_uvar() per field. @out may be NULL
 * (validation only); the branch on it is hoisted by the compiler when this
 * is inlined with a constant.
 */
static inline __attribute__((always_inline)) size_t
samples_portable(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		 struct spulse_sample *out, size_t max, size_t *consumed)
{
	const uint8_t *p = buf, *safe_end;
	const uint32_t nthreads = dec->defs.nthreads;
	const uint32_t nstacks = dec->defs.nstacks;
	const uint32_t cpu = dec->cpu;
	const uint64_t tmax = (uint64_t)dec->time_max;
	int64_t t = dec->time_ns;
	size_t n = 0;

	*consumed = 0;
	if (len < SAMPLE_SCAN)
		return 0;
	safe_end = buf + len - SAMPLE_SCAN;
	while (p <= safe_end && n < max && *p == SPULSE_TAG_SAMPLE) {
		uint64_t z, th, st;
		int64_t nt;
		int a, b, e;

		a = fast_uvar(p + 1, &z);
		if (a < 0)
			break;
		b = fast_uvar(p + 1 + a, &th);
		if (b < 0)
			break;
		e = fast_uvar_nb(p + 1 + a + b, &st);
		if (e < 0)
			break;
		if ((th >= nthreads) | (st >= nstacks))
			break;
		if (__builtin_add_overflow(t, spulse_unzigzag(z), &nt) ||
		    (uint64_t)nt > tmax)
			break;
		t = nt;
		if (out) {
			out[n].time_ns = t;
			out[n].thread = (uint32_t)th;
			out[n].stack = (uint32_t)st;
			out[n].cpu = cpu;
			out[n].reserved = 0;
		}
		n++;
		p += 1 + a + b + e;
	}
	dec->time_ns = t;
	dec->info.samples += n;
	*consumed = (size_t)(p - buf);
	return n;
}

static size_t samples_portable_val(struct spulse_dec *dec, const uint8_t *buf,
				   size_t len, size_t max, size_t *consumed)
{
	return samples_portable(dec, buf, len, NULL, max, consumed);
}

static size_t samples_portable_out(struct spulse_dec *dec, const uint8_t *buf,
				   size_t len, struct spulse_sample *out,
				   size_t max, size_t *consumed)
{
	return samples_portable(dec, buf, len, out, max, consumed);
}

size_t spulse_dec_samples_portable(struct spulse_dec *dec, const uint8_t *buf,
				   size_t len, struct spulse_sample *out,
				   size_t max, size_t *consumed)
{
	if (out)
		return samples_portable_out(dec, buf, len, out, max, consumed);
	return samples_portable_val(dec, buf, len, max, consumed);
}

/* Bytes the definition loop may read at a record's tag (a stack record's
 * three fields; a frame record's id, kind and address are fewer). */
#define DEF_SCAN	(1 + 3 * SPULSE_VARINT_MAX)

/* spulse_defs_add_stack() with the room check inline. */
static inline int add_stack(struct spulse_defs *d, const struct spulse_stack_def *s)
{
	if (__builtin_expect(d->nstacks < d->cap_stacks, 1)) {
		d->stacks[d->nstacks++] = *s;
		return 0;
	}
	return spulse_defs_add_stack(d, s);
}

/*
 * dec_frame() and dec_stack() (checked, no module frames) for a run of
 * records: the same rules (frame_rule(), stack_rule(); any record either
 * refuses stops the run before it, and the slow path reports it), the
 * same definitions added and counted, one def_uvar() per field.
 */
size_t spulse_dec_defs(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		       size_t *consumed)
{
	struct spulse_defs *d = &dec->defs;
	const uint8_t *p = buf, *safe_end;
	size_t n = 0;

	*consumed = 0;
	if (dec->trusted || len < DEF_SCAN)
		return 0;
	safe_end = buf + len - DEF_SCAN;
	while (p <= safe_end) {
		uint64_t id, a;
		int x, y, z;

		if (*p == SPULSE_TAG_STACK) {
			struct spulse_stack_def s;
			uint64_t f[3];

			x = def_uvar(p + 1, &f[0]);
			if (x < 0)
				break;
			y = def_uvar(p + 1 + x, &f[1]);		/* parent + 1 */
			if (y < 0)
				break;
			z = def_uvar(p + 1 + x + y, &f[2]);	/* frame */
			if (z < 0 || stack_rule(dec, 3, f, &s))
				break;
			if (add_stack(d, &s))
				break;
			dec->info.stacks++;
			p += 1 + x + y + z;
		} else if (*p == SPULSE_TAG_FRAME) {
			struct spulse_frame_def f;
			uint8_t kind;

			x = def_uvar(p + 1, &id);
			if (x < 0)
				break;
			kind = p[1 + x];
			if (kind == SPULSE_FRAME_USER ||
			    kind == SPULSE_FRAME_KERNEL) {
				y = fast_uvar_nb(p + 2 + x, &a);
				if (y < 0)
					break;
			} else if (kind == SPULSE_FRAME_TRUNCATED) {
				y = 0;
				a = 0;
			} else {
				break;	/* module frames, unknown kinds */
			}
			if (frame_rule(dec, y ? 3 : 2, id, kind, SPULSE_NONE, a))
				break;
			f = (struct spulse_frame_def){ .addr = a, .kind = kind,
				.module = (uint32_t)SPULSE_NONE };
			if (spulse_defs_add_frame(d, &f))
				break;
			dec->info.frames++;
			p += 2 + x + y;
		} else {
			break;
		}
		n++;
	}
	*consumed = (size_t)(p - buf);
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__) && \
	defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>

#define SIMD_WINDOW		64	/* bytes whose stop bits one step sees */
#define SIMD_SAMPLE_READ	(SIMD_WINDOW + 16)	/* bytes read per step */
#define SIMD_PREFETCH		1024	/* bytes ahead (a hint, never read) */

/* Bit i set: byte @p[i] has bit 7 clear; *@zeros: byte @p[i] is 0x00. */
static inline __attribute__((always_inline)) uint64_t
stop_mask64(const uint8_t *p, uint64_t *zeros)
{
	const __m128i zero = _mm_setzero_si128();
	uint64_t cont = 0, z = 0;
	int i;

	for (i = 0; i < 4; i++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));

		cont |= (uint64_t)(uint16_t)_mm_movemask_epi8(v) << (16 * i);
		z |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))
		     << (16 * i);
	}
	*zeros = z;
	return ~cont;
}

/* As stop_mask64(), and *@fives: byte @p[i] is SPULSE_TAG_SAMPLE. */
static inline __attribute__((always_inline)) uint64_t
stop_mask64_5(const uint8_t *p, uint64_t *zeros, uint64_t *fives)
{
	const __m128i zero = _mm_setzero_si128();
	const __m128i five = _mm_set1_epi8(SPULSE_TAG_SAMPLE);
	uint64_t cont = 0, z = 0, f = 0;
	int i;

	for (i = 0; i < 4; i++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));

		cont |= (uint64_t)(uint16_t)_mm_movemask_epi8(v) << (16 * i);
		z |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))
		     << (16 * i);
		f |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, five))
		     << (16 * i);
	}
	*zeros = z;
	*fives = f;
	return ~cont;
}

/*
 * One sample at a time (one 16-byte load each, the loop of earlier
 * versions): cheaper than a 64-byte window for the first sample of a run,
 * which in spools that interleave samples with other records is often the
 * only one. The windowed loops take over from the second sample.
 */
#define SIMD_STEP_READ		32	/* bytes read at a sample's tag */
static inline __attribute__((always_inline, target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_step(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		  struct spulse_sample *out, size_t max, size_t *consumed)
{
	const uint64_t nthreads = dec->defs.nthreads;
	const uint64_t nstacks = dec->defs.nstacks;
	const uint32_t cpu = dec->cpu;
	const uint64_t tmax = (uint64_t)dec->time_max;
	const uint64_t g7 = 0x7f7f7f7f7f7f7f7fULL;
	const __m128i zero = _mm_setzero_si128();
	const uint8_t *p = buf, *safe_end;
	int64_t t = dec->time_ns;
	size_t n = 0;

	*consumed = 0;
	if (len < SIMD_STEP_READ)
		return 0;
	safe_end = buf + len - SIMD_STEP_READ;
	while (p <= safe_end && n < max) {
		__m128i v = _mm_loadu_si128((const __m128i *)p);
		uint32_t stop = ~(uint32_t)_mm_movemask_epi8(v) & 0xffff;
		uint32_t zb = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
		uint32_t t1 = stop & ~1u, t2 = _blsr_u32(t1), t3 = _blsr_u32(t2);
		uint32_t e1 = _tzcnt_u32(t1), e2 = _tzcnt_u32(t2);
		uint32_t e3 = _tzcnt_u32(t3);		/* 32: not in 16 bytes */
		uint32_t a = e1, b = e2 - e1, e = e3 - e2;
		uint32_t ends = t1 ^ _blsr_u32(t3);
		uint64_t x1, x2, x3, z, th, st;
		int64_t nt;
		bool bad;

		memcpy(&x1, p + 1, 8);
		memcpy(&x2, p + 1 + (e1 & 15), 8);
		memcpy(&x3, p + 1 + (e2 & 15), 8);
		z = _pext_u64(_bzhi_u64(x1, 8 * a), g7);
		th = _pext_u64(_bzhi_u64(x2, 8 * b), g7);
		st = _pext_u64(_bzhi_u64(x3, 8 * e), g7);
		nt = (int64_t)((uint64_t)t + (uint64_t)spulse_unzigzag(z));
		bad = (p[0] != SPULSE_TAG_SAMPLE) | (e3 > 15) |
		      (((a - 1) | (b - 1) | (e - 1)) > 7) |
		      /* a multi-byte varint whose last byte is 0x00 */
		      ((ends & ~(stop << 1) & zb) != 0) |
		      !(((th - nthreads) & (st - nstacks)) >> 63) |
		      ((uint64_t)nt > tmax);
		if (__builtin_expect(bad, 0))
			break;
		t = nt;
		if (out) {
			out[n].time_ns = t;
			out[n].thread = (uint32_t)th;
			out[n].stack = (uint32_t)st;
			out[n].cpu = cpu;
			out[n].reserved = 0;
		}
		n++;
		p += e3 + 1;
	}
	dec->time_ns = t;
	dec->info.samples += n;
	*consumed = (size_t)(p - buf);
	return n;
}

/*
 * Sample loop for x86-64 with BMI2 (runtime-dispatched). Every byte with
 * bit 7 clear ends something: a record's tag (all tags are < 0x80) or a
 * varint. So in a run of sample records the "stop" bytes come in fours
 * (tag, end of dt_ns, end of thread, end of stack), and one 64-byte window
 * (four SSE2 loads and movemasks) gives the boundaries of all the samples
 * in it: each sample takes the next four stop bits (blsr/tzcnt on a
 * register, no load on the dependency chain), and _pext_u64 compacts each
 * field's 7-bit groups. The next window starts after the last sample
 * decoded. Every condition that stops the loop (other tag, a field longer
 * than 8 bytes, overlong varint, id out of range, time past the clock
 * limit or negative) is folded into one predictable branch; the caller
 * then decodes the record with spulse_dec_record(), which reports any error
 * exactly. Fields of at most 8 bytes hold < 2^56, so one unsigned test
 * against the clock limit covers time overflow and a negative time, and
 * one sign test covers both id bounds. @trusted (Replay iteration over a
 * prefix that validation on open already proved) skips those value checks
 * and keeps only what finds the samples (tag and field lengths).
 */
static inline __attribute__((always_inline, target("popcnt,bmi,bmi2"))) size_t
samples_bmi2(struct spulse_dec *dec, const uint8_t *buf, size_t len,
	     struct spulse_sample *out, size_t max, size_t *consumed,
	     const bool trusted)
{
	const uint64_t nthreads = dec->defs.nthreads;
	const uint64_t nstacks = dec->defs.nstacks;
	const uint32_t cpu = dec->cpu;
	const uint64_t tmax = (uint64_t)dec->time_max;
	const uint64_t g7 = 0x7f7f7f7f7f7f7f7fULL;
	const uint8_t *p = buf, *safe_end;
	int64_t t = dec->time_ns;
	size_t n = 0;
	bool bad = false;

	*consumed = 0;
	if (len < SIMD_SAMPLE_READ)
		return 0;
	safe_end = buf + len - SIMD_SAMPLE_READ;
	while (p <= safe_end && n < max && !bad) {
		uint64_t zb, m;

		__builtin_prefetch(p + SIMD_PREFETCH);
		m = stop_mask64(p, &zb);
		/* a 0x00 last byte after a continuation byte: overlong */
		uint64_t ov = m & ~(m << 1) & zb;
		uint64_t k = (uint64_t)_mm_popcnt_u64(m) / 4;
		uint64_t pos = 0;

		if (k > max - n)
			k = max - n;
		if (!k)
			break;
		for (; k; k--) {
			uint64_t e1, e2, e3, a, b, c, x1, x2, x3, z, th, st;
			int64_t nt;

			m = _blsr_u64(m);	/* the tag (if p[pos] is one) */
			e1 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			e2 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			e3 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			a = e1 - pos;
			b = e2 - e1;
			c = e3 - e2;
			memcpy(&x1, p + pos + 1, 8);
			memcpy(&x2, p + (e1 & 63) + 1, 8);
			memcpy(&x3, p + (e2 & 63) + 1, 8);
			z = _pext_u64(_bzhi_u64(x1, (unsigned int)(8 * a)), g7);
			th = _pext_u64(_bzhi_u64(x2, (unsigned int)(8 * b)), g7);
			st = _pext_u64(_bzhi_u64(x3, (unsigned int)(8 * c)), g7);
			nt = (int64_t)((uint64_t)t + (uint64_t)spulse_unzigzag(z));
			bad = (p[pos] != SPULSE_TAG_SAMPLE) |
			      (((a - 1) | (b - 1) | (c - 1)) > 7);
			if (!trusted)
				bad |= (_bzhi_u64(ov, (unsigned int)e3 + 1) != 0) |
				       !(((th - nthreads) & (st - nstacks)) >> 63) |
				       ((uint64_t)nt > tmax);
			if (__builtin_expect(bad, 0))
				break;
			t = nt;
			if (out) {
				out[n].time_ns = t;
				out[n].thread = (uint32_t)th;
				out[n].stack = (uint32_t)st;
				out[n].cpu = cpu;
				out[n].reserved = 0;
			}
			n++;
			pos = e3 + 1;
		}
		p += pos;
	}
	dec->time_ns = t;
	dec->info.samples += n;
	*consumed = (size_t)(p - buf);
	return n;
}

/*
 * Validating loop for the common case: each 64-byte window is decoded
 * optimistically, with the checks folded into per-window aggregates (the
 * largest thread and stack ids, the largest running time as unsigned — a
 * negative one is huge —, the OR of the field lengths, the tag positions
 * against the bytes equal to 5, the overlong terminators up to the last
 * sample): one branch per window instead of one per sample. A window that
 * fails any of them is decoded again by samples_bmi2() from its start,
 * which stops exactly at the first bad sample, so the result is the same
 * as checking each sample.
 */
static inline __attribute__((always_inline, target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_win(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		 struct spulse_sample *out, size_t max, size_t *consumed,
		 const bool trusted)
{
	const uint64_t nthreads = dec->defs.nthreads;
	const uint64_t nstacks = dec->defs.nstacks;
	const uint32_t cpu = dec->cpu;
	const uint64_t tmax = (uint64_t)dec->time_max;
	const uint64_t g7 = 0x7f7f7f7f7f7f7f7fULL;
	const uint8_t *p = buf, *safe_end;
	int64_t t = dec->time_ns;
	size_t n = 0, c;

	*consumed = 0;
	if (len < SIMD_SAMPLE_READ)
		return 0;
	safe_end = buf + len - SIMD_SAMPLE_READ;
	while (p <= safe_end && n < max) {
		uint64_t zb, m, m0, ov, eq5, k, i;

		/* streaming from memory: ask for the lines a few windows on */
		__builtin_prefetch(p + SIMD_PREFETCH);
		m = m0 = stop_mask64_5(p, &zb, &eq5);
		ov = m & ~(m << 1) & zb;
		k = (uint64_t)_mm_popcnt_u64(m) / 4;
		uint64_t pos = 0, tags = 0, lens = 0, idok = ~0ULL, run8;
		uint64_t tm = 0;
		int64_t t0 = t;

		if (k > max - n)
			k = max - n;
		if (!k)
			break;
		for (i = 0; i < k; i++) {
			uint64_t e1, e2, e3, x1, x2, x3, z, th, st;

			if (trusted)
				tags |= 1ULL << pos;
			m = _blsr_u64(m);
			e1 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			e2 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			e3 = _tzcnt_u64(m);
			m = _blsr_u64(m);
			if (trusted)
				lens |= (e1 - pos - 1) | (e2 - e1 - 1) | (e3 - e2 - 1);
			memcpy(&x1, p + pos + 1, 8);
			memcpy(&x2, p + (e1 & 63) + 1, 8);
			memcpy(&x3, p + (e2 & 63) + 1, 8);
			z = _pext_u64(_bzhi_u64(x1, (unsigned int)(8 * (e1 - pos))), g7);
			th = _pext_u64(_bzhi_u64(x2, (unsigned int)(8 * (e2 - e1))), g7);
			st = _pext_u64(_bzhi_u64(x3, (unsigned int)(8 * (e3 - e2))), g7);
			t = (int64_t)((uint64_t)t + (uint64_t)spulse_unzigzag(z));
			if (!trusted) {
				tm = (uint64_t)t > tm ? (uint64_t)t : tm;
				/* sign bit stays set while both ids are in range */
				idok &= (th - nthreads) & (st - nstacks);
			}
			if (out) {
				out[n + i].time_ns = t;
				out[n + i].thread = (uint32_t)th;
				out[n + i].stack = (uint32_t)st;
				out[n + i].cpu = cpu;
				out[n + i].reserved = 0;
			}
			pos = (e3 & 63) + 1;
		}
		/*
		 * A field longer than 8 bytes has 8 continuation bytes in a row:
		 * run8 marks where 8 of them start (fields end before pos).
		 */
		run8 = ~m0;
		run8 &= run8 >> 1;
		run8 &= run8 >> 2;
		run8 &= run8 >> 4;
		if (!trusted) {
			/*
			 * The tags are the stop bits of rank 0, 4, 8, ... and
			 * each follows the previous sample's last byte (rank 3,
			 * 7, ...) directly; all of them must be 5.
			 */
			uint64_t low = _bzhi_u64(~0ULL, (unsigned int)pos);
			uint64_t r0 = _pdep_u64(0x1111111111111111ULL, m0) & low;
			uint64_t r3 = _pdep_u64(0x8888888888888888ULL, m0);

			lens = _bzhi_u64(run8, (unsigned int)pos) ? 8 : 0;
			tags = (r0 & ~eq5) | (((r3 << 1) & low) ^ (r0 & ~1ULL));
			eq5 = 0;	/* tags is already the mismatch */
		}
		if (__builtin_expect(!((tags & ~eq5) | (lens > 7) |
				       (!trusted &&
					((_bzhi_u64(ov, (unsigned int)pos) != 0) |
					 !(idok >> 63) | (tm > tmax)))), 1)) {
			n += k;
			p += pos;
			continue;
		}
		/* something in this window is bad: find it sample by sample */
		dec->time_ns = t0;
		k = samples_bmi2(dec, p, (size_t)(buf + len - p), out ? out + n : NULL,
				 k, &c, trusted);
		dec->info.samples -= k;
		t = dec->time_ns;
		n += k;
		p += c;
		break;
	}
	dec->time_ns = t;
	dec->info.samples += n;
	*consumed = (size_t)(p - buf);
	return n;
}

static __attribute__((target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_val(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		 size_t max, size_t *consumed)
{
	return samples_bmi2_win(dec, buf, len, NULL, max, consumed, false);
}

static __attribute__((target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_out(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		 struct spulse_sample *out, size_t max, size_t *consumed)
{
	return samples_bmi2_win(dec, buf, len, out, max, consumed, false);
}

static __attribute__((target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_first(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		   struct spulse_sample *out, size_t max, size_t *consumed)
{
	return samples_bmi2_step(dec, buf, len, out, max ? 1 : 0, consumed);
}

static __attribute__((target("popcnt,bmi,bmi2"))) size_t
samples_bmi2_trusted(struct spulse_dec *dec, const uint8_t *buf, size_t len,
		     struct spulse_sample *out, size_t max, size_t *consumed)
{
	return samples_bmi2(dec, buf, len, out, max, consumed, true);
}

static int have_bmi2 = -1;

static inline bool use_bmi2(void)
{
	if (__builtin_expect(have_bmi2 < 0, 0)) {
		__builtin_cpu_init();
		have_bmi2 = __builtin_cpu_supports("bmi2") &&
			    __builtin_cpu_supports("bmi") &&
			    __builtin_cpu_supports("popcnt") &&
			    !getenv("SPULSE_NO_BMI2");
	}
	return have_bmi2;
}

size_t spulse_dec_samples(struct spulse_dec *dec, const uint8_t *buf,
			  size_t len, struct spulse_sample *out, size_t max,
			  size_t *consumed)
{
	size_t n, c, total = 0, k;

	if (!len || buf[0] != SPULSE_TAG_SAMPLE) {	/* another record */
		*consumed = 0;
		return 0;
	}
	if (!use_bmi2())
		return spulse_dec_samples_portable(dec, buf, len, out, max,
						   consumed);
	/* the first sample alone; a run goes on through 64-byte windows */
	n = samples_bmi2_first(dec, buf, len, out, max, &c);
	if (n && n < max && len - c > SIMD_SAMPLE_READ &&
	    buf[c] == SPULSE_TAG_SAMPLE) {
		size_t w;

		if (dec->trusted)
			n += samples_bmi2_trusted(dec, buf + c, len - c,
						  out ? out + n : NULL, max - n,
						  &w);
		else if (out)
			n += samples_bmi2_out(dec, buf + c, len - c, out + n,
					      max - n, &w);
		else
			n += samples_bmi2_val(dec, buf + c, len - c, max - n, &w);
		c += w;
	}
	/*
	 * The last bytes of the input (less than SIMD_SAMPLE_READ) go
	 * through the portable loop, so both stop at the same place.
	 */
	if (n < max && len - c >= SAMPLE_SCAN &&
	    buf[c] == SPULSE_TAG_SAMPLE) {
		k = spulse_dec_samples_portable(dec, buf + c, len - c,
						out ? out + n : NULL, max - n,
						&total);
		n += k;
		c += total;
	}
	*consumed = c;
	return n;
}
#else
size_t spulse_dec_samples(struct spulse_dec *dec, const uint8_t *buf,
			  size_t len, struct spulse_sample *out, size_t max,
			  size_t *consumed)
{
	return spulse_dec_samples_portable(dec, buf, len, out, max, consumed);
}
#endif
