// SPDX-License-Identifier: MIT
/*
 * The definition fast path spulse_dec_defs() (a run of frame and stack
 * records, as the drainer takes them with spulse_stream_take_defs())
 * against the general decoder spulse_dec_record() on randomized runs:
 * ids of 1..4 bytes, every frame kind (module frames and unknown kinds
 * stop the fast path), duplicate and gap ids, forward references, a
 * truncated marker below a root, overlong and overflowing varints, other
 * records between, and a random cut. The fast path plus the general
 * decoder on what it leaves must define the same frames and stacks, count
 * the same and end with the same error (offset and message) as the general
 * decoder alone. The Recorder's module index (spulse_rec_frame_addr() with
 * many modules of a process) against the newest-first scan, modelled here.
 */
#include <stdlib.h>
#include <string.h>

#include "fastpath_gen.h"
#include "internal.h"

/* Mostly the right next id, sometimes a duplicate or a gap. */
static uint64_t next_id(uint32_t count, unsigned int bad_pct)
{
	if (rnd() % 100 < bad_pct)
		return rnd() % 2 && count ? rnd() % count : count + 1 + rnd() % 3;
	return count;
}

/* What a valid stream has defined so far (gen()). */
#define GEN_MAX	(1u << 16)
struct gstate {
	uint32_t nf, ns, nt;
	uint8_t fk[GEN_MAX];	/* frame kinds */
	uint16_t sd[GEN_MAX];	/* stack depths */
};

/*
 * A run of definitions (frames of every kind, stacks chained to recent
 * ones so that depth grows to ~100, some roots) with other records
 * between; at most GEN_MAX / 2 of them.
 */
static void gen(struct tbuf *b, unsigned int count, unsigned int bad_pct,
		struct gstate *g)
{
	uint32_t *nf = &g->nf, *ns = &g->ns;
	unsigned int i;

	for (i = 0; i < count; i++) {
		unsigned int k = (unsigned int)(rnd() % 100);
		uint8_t tag;

		if (k < 30) {
			/* frame: kinds 1, 2, 3 mostly; 0 (module) and 9 rarely */
			static const uint8_t kinds[] = {
				SPULSE_FRAME_USER, SPULSE_FRAME_USER,
				SPULSE_FRAME_KERNEL, SPULSE_FRAME_TRUNCATED,
				SPULSE_FRAME_USER, SPULSE_FRAME_KERNEL,
			};
			uint8_t kind = rnd() % 50 == 0 ? SPULSE_FRAME_MODULE :
				       rnd() % 100 < bad_pct ? 9 :
				       kinds[rnd() % 6];

			tag = SPULSE_TAG_FRAME;
			tb_raw(b, &tag, 1);
			put_field(b, next_id(*nf, bad_pct), bad_pct);
			tb_raw(b, &kind, 1);
			g->fk[*nf % GEN_MAX] = kind;
			if (kind == SPULSE_FRAME_MODULE) {
				put_field(b, 0, bad_pct);	/* module 0 */
				put_field(b, 0x1000 + rnd() % 0x2000, bad_pct);
			} else if (kind != SPULSE_FRAME_TRUNCATED) {
				put_field(b, kind == SPULSE_FRAME_KERNEL ?
					  0xffffffff81000000ULL + rnd() % 0x100000 :
					  rnd() >> (rnd() % 64), bad_pct);
			}
			(*nf)++;
		} else if (k < 92) {
			uint64_t parent, frame;

			tag = SPULSE_TAG_STACK;
			tb_raw(b, &tag, 1);
			put_field(b, next_id(*ns, bad_pct), bad_pct);
			frame = rnd() % 100 < bad_pct ? *nf + rnd() % 3 :
				rnd() % *nf;
			if (!*ns || rnd() % 8 == 0 || (frame < *nf &&
			    g->fk[frame % GEN_MAX] == SPULSE_FRAME_TRUNCATED &&
			    rnd() % 100 >= bad_pct))
				parent = SPULSE_STACK_ROOT;
			else if (rnd() % 100 < bad_pct)
				parent = *ns + 1 + rnd() % 5;	/* forward */
			else	/* a recent stack: chains grow deep */
				parent = *ns - rnd() % (*ns < 4 ? *ns : 4);
			if (parent != SPULSE_STACK_ROOT && parent <= *ns &&
			    g->sd[(parent - 1) % GEN_MAX] >= 100)
				parent = SPULSE_STACK_ROOT;
			g->sd[*ns % GEN_MAX] = parent == SPULSE_STACK_ROOT ||
				parent > *ns ? 1 : g->sd[(parent - 1) % GEN_MAX] + 1;
			put_field(b, parent, bad_pct);
			put_field(b, frame, bad_pct);
			(*ns)++;
		} else if (k < 96) {
			TB(b, spulse_enc_thread, (uint32_t)next_id(g->nt, bad_pct),
			   1, 2, "x", 1);
			g->nt++;
		} else if (k < 98) {
			TB(b, spulse_enc_python, (uint32_t)(rnd() % 300), 1);
		} else if (rnd() % 100 < bad_pct) {
			uint8_t junk = 0x85;

			tb_raw(b, &junk, 1);
		}
	}
}

struct outcome {
	struct spulse_defs defs;	/* the decoder's, moved here */
	struct spulse_info info;
	int ret;
	struct spulse_error err;
	size_t end;
	size_t fast;			/* definitions the fast path took */
};

/* The general decoder alone (@fast false) or the fast path first. */
static void run(const struct tbuf *b, bool fast, struct outcome *o)
{
	struct spulse_dec dec;
	struct spulse_record rec;
	size_t pos, n, k;

	memset(o, 0, sizeof(*o));
	spulse_dec_init(&dec, NULL);
	assert_int_equal(spulse_dec_header(&dec, b->p, b->len, &n, &o->err), 1);
	pos = n;
	for (;;) {
		if (fast) {
			k = spulse_dec_defs(&dec, b->p + pos, b->len - pos, &n);
			assert_true(n <= b->len - pos);
			assert_true(!k == !n);
			o->fast += k;
			pos += n;
		}
		o->ret = spulse_dec_record(&dec, b->p + pos, b->len - pos, pos,
					   &rec, &n, &o->err);
		if (o->ret != 1)
			break;
		pos += n;
	}
	o->end = pos;
	o->info = dec.info;
	o->defs = dec.defs;
	memset(&dec.defs, 0, sizeof(dec.defs));
	spulse_dec_fini(&dec);
}

static void same(const struct outcome *a, const struct outcome *b)
{
	uint32_t i;

	assert_int_equal(a->ret, b->ret);
	assert_int_equal(a->end, b->end);
	if (a->ret < 0) {
		assert_int_equal(a->err.offset, b->err.offset);
		assert_string_equal(a->err.msg, b->err.msg);
	}
	assert_int_equal(a->info.frames, b->info.frames);
	assert_int_equal(a->info.stacks, b->info.stacks);
	assert_int_equal(a->defs.nframes, b->defs.nframes);
	assert_int_equal(a->defs.nstacks, b->defs.nstacks);
	for (i = 0; i < a->defs.nframes; i++) {
		assert_true(a->defs.frames[i].addr == b->defs.frames[i].addr);
		assert_int_equal(a->defs.frames[i].kind, b->defs.frames[i].kind);
		assert_int_equal(a->defs.frames[i].module,
				 b->defs.frames[i].module);
	}
	for (i = 0; i < a->defs.nstacks; i++) {
		assert_int_equal(a->defs.stacks[i].parent,
				 b->defs.stacks[i].parent);
		assert_int_equal(a->defs.stacks[i].frame, b->defs.stacks[i].frame);
		assert_int_equal(a->defs.stacks[i].depth, b->defs.stacks[i].depth);
	}
}

/* Header, module 0 (for module frames), frame 0 (user), then gen(). */
static void gen_stream(struct tbuf *b, unsigned int count, unsigned int bad_pct)
{
	static struct gstate g;

	memset(&g, 0, sizeof(g));
	tb_header(b);
	TB(b, spulse_enc_module, 0, 1, 0x400000, 0x500000, 0x1000, "m", 1,
	   NULL, 0);
	TB(b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 0x401000);
	g.fk[0] = SPULSE_FRAME_USER;
	g.nf = 1;
	gen(b, count, bad_pct, &g);
}

static size_t check_stream(unsigned int count, unsigned int bad_pct)
{
	struct tbuf b = { 0 };
	struct outcome ref, o;
	size_t cut, len, taken = 0;

	gen_stream(&b, count, bad_pct);
	len = b.len;
	/* whole input, then cut at random points (a truncated tail) */
	for (cut = 0; cut < 3; cut++) {
		b.len = cut ? (size_t)(rnd() % (len + 1)) : len;
		if (b.len < SPULSE_HEADER_MAX)
			b.len = len;
		run(&b, false, &ref);
		run(&b, true, &o);
		same(&ref, &o);
		taken += o.fast;
		spulse_defs_fini(&ref.defs);
		spulse_defs_fini(&o.defs);
	}
	b.len = len;
	tb_free(&b);
	return taken;
}

static void defs_fast_path_matches_general_decoder_on_valid_runs(void **state)
{
	size_t taken = 0;
	unsigned int k;

	(void)state;
	rs = 0x9e3779b97f4a7c15ULL;
	for (k = 0; k < 10; k++) {
		size_t t = check_stream(5000, 0);

		/* the fast path took most of them (3 runs, cut ones too) */
		assert_true(t > 5000);
		taken += t;
	}
}

static void defs_fast_path_matches_general_decoder_on_broken_runs(void **state)
{
	unsigned int k;

	(void)state;
	rs = 4242;
	for (k = 0; k < 300; k++)
		check_stream(1 + (unsigned int)(rnd() % 400),
			     1 + (unsigned int)(rnd() % 4));
}

/* Deep chains: the depth limit stops the fast path as it stops dec_stack. */
static void defs_fast_path_stops_at_the_depth_limit(void **state)
{
	struct tbuf b = { 0 };
	struct outcome ref, o;
	uint32_t i;

	(void)state;
	tb_header(&b);
	TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 0x1234);
	TB(&b, spulse_enc_stack, 0, SPULSE_STACK_ROOT, 0);
	for (i = 1; i < SPULSE_MAX_DEPTH + 5; i++)
		TB(&b, spulse_enc_stack, i, i, 0);
	run(&b, false, &ref);
	run(&b, true, &o);
	assert_true(ref.ret < 0);
	assert_int_equal(ref.defs.nstacks, SPULSE_MAX_DEPTH);
	same(&ref, &o);
	assert_int_equal(o.fast, 1 + SPULSE_MAX_DEPTH);	/* the frame too */
	spulse_defs_fini(&ref.defs);
	spulse_defs_fini(&o.defs);
	tb_free(&b);
}

/*
 * Each refusal of dec_frame() / dec_stack() on its own, after a valid
 * prefix long enough for the fast path: the fast path stops before the
 * record and the general decoder reports it (or takes it: module frames).
 */
static void defs_fast_path_stops_at_each_refusal(void **state)
{
	enum { DUP, GAP, FWD_PARENT, FWD_FRAME, TRUNC_BELOW, MODULE_FRAME,
	       UNKNOWN_KIND, OVERLONG_ID, OVERFLOW_ADDR, TRUNC_ROOT, NCASES };
	unsigned int c;

	(void)state;
	for (c = 0; c < NCASES; c++) {
		struct tbuf b = { 0 };
		struct outcome ref, o;
		uint8_t raw[32];
		uint32_t i;

		tb_header(&b);
		TB(&b, spulse_enc_module, 0, 1, 0x400000, 0x500000, 0x1000,
		   "m", 1, NULL, 0);
		TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 0x401000);
		TB(&b, spulse_enc_frame_truncated, 1);
		for (i = 0; i < 40; i++)
			TB(&b, spulse_enc_stack, i, i ? i : SPULSE_STACK_ROOT, 0);
		switch (c) {
		case DUP:
			TB(&b, spulse_enc_stack, 39, SPULSE_STACK_ROOT, 0);
			break;
		case GAP:
			TB(&b, spulse_enc_stack, 41, SPULSE_STACK_ROOT, 0);
			break;
		case FWD_PARENT:
			TB(&b, spulse_enc_stack, 40, 41, 0);
			break;
		case FWD_FRAME:
			TB(&b, spulse_enc_stack, 40, SPULSE_STACK_ROOT, 2);
			break;
		case TRUNC_BELOW:
			TB(&b, spulse_enc_stack, 40, 5, 1);
			break;
		case TRUNC_ROOT:	/* accepted */
			TB(&b, spulse_enc_stack, 40, SPULSE_STACK_ROOT, 1);
			break;
		case MODULE_FRAME:	/* accepted by the general decoder */
			TB(&b, spulse_enc_frame_module, 2, 0, 0x1800);
			TB(&b, spulse_enc_stack, 40, SPULSE_STACK_ROOT, 2);
			break;
		case UNKNOWN_KIND:
			raw[0] = SPULSE_TAG_FRAME;
			raw[1] = 2;
			raw[2] = 7;
			raw[3] = 1;
			tb_raw(&b, raw, 4);
			break;
		case OVERLONG_ID:
			raw[0] = SPULSE_TAG_STACK;
			raw[1] = 40 | 0x80;
			raw[2] = 0;
			raw[3] = 0;
			raw[4] = 0;
			tb_raw(&b, raw, 5);
			break;
		case OVERFLOW_ADDR:
			raw[0] = SPULSE_TAG_FRAME;
			raw[1] = 2;
			raw[2] = SPULSE_FRAME_USER;
			memset(raw + 3, 0xff, 9);
			raw[12] = 2;
			tb_raw(&b, raw, 13);
			break;
		}
		/* more valid records after it, and room for the fast path */
		for (i = 0; i < 40; i++)
			TB(&b, spulse_enc_stack, 41 + i, SPULSE_STACK_ROOT, 0);
		run(&b, false, &ref);
		run(&b, true, &o);
		same(&ref, &o);
		assert_true(o.fast >= 42);
		if (c == TRUNC_ROOT || c == MODULE_FRAME)
			assert_int_equal(ref.ret, 0);
		else
			assert_true(ref.ret < 0);
		spulse_defs_fini(&ref.defs);
		spulse_defs_fini(&o.defs);
		tb_free(&b);
	}
}

/* Stream level: spulse_stream_take_defs() + spulse_stream_next() fed in
 * random pieces defines what spulse_stream_next() alone defines. */
static void stream_take_defs_matches_stream_next(void **state)
{
	struct tbuf b = { 0 };
	unsigned int k;

	(void)state;
	rs = 777;
	gen_stream(&b, 20000, 0);
	for (k = 0; k < 2; k++) {
		struct spulse_stream *s[2];
		struct spulse_record rec;
		struct spulse_error err;
		size_t pos = 0, taken = 0;
		int i, r;

		for (i = 0; i < 2; i++)
			assert_int_equal(spulse_stream_new(NULL, &s[i]), 0);
		while (pos < b.len) {
			size_t n = 1 + (size_t)(rnd() % (k ? 4000 : 40));

			if (n > b.len - pos)
				n = b.len - pos;
			for (i = 0; i < 2; i++) {
				assert_int_equal(spulse_stream_feed(s[i], b.p + pos, n), 0);
				for (;;) {
					if (i)
						taken += spulse_stream_take_defs(s[i]);
					r = spulse_stream_next(s[i], &rec, &err);
					if (r < 0)
						print_message("# %d at %llu: %s\n", r, (unsigned long long)err.offset, err.msg);
					assert_true(r >= 0);
					if (!r)
						break;
				}
			}
			pos += n;
			assert_int_equal(spulse_stream_pending(s[0]),
					 spulse_stream_pending(s[1]));
			assert_int_equal(spulse_stream_info(s[0])->complete_bytes,
					 spulse_stream_info(s[1])->complete_bytes);
		}
		assert_true(taken > 0);
		{
			const struct spulse_defs *a = spulse_stream_defs(s[0]);
			const struct spulse_defs *d = spulse_stream_defs(s[1]);

			assert_int_equal(a->nframes, d->nframes);
			assert_int_equal(a->nstacks, d->nstacks);
			assert_memory_equal(a->stacks, d->stacks,
					    a->nstacks * sizeof(*a->stacks));
			for (i = 0; i < (int)a->nframes; i++) {
				assert_true(a->frames[i].addr == d->frames[i].addr);
				assert_int_equal(a->frames[i].kind, d->frames[i].kind);
				assert_int_equal(a->frames[i].module, d->frames[i].module);
			}
			assert_int_equal(spulse_stream_info(s[0])->stacks,
					 spulse_stream_info(s[1])->stacks);
			assert_int_equal(spulse_stream_info(s[0])->frames,
					 spulse_stream_info(s[1])->frames);
		}
		for (i = 0; i < 2; i++)
			spulse_stream_free(s[i]);
	}
	tb_free(&b);
}

/* ---- off-CPU records: the whole-payload fast path ---- */

/* One off-CPU record, mostly valid; bad_pct % of its parts broken. */
static void put_offcpu(struct tbuf *b, unsigned int bad_pct)
{
	struct tbuf pl = { 0 };
	bool bad = rnd() % 100 < bad_pct;
	unsigned int which = (unsigned int)(rnd() % 12);
	uint64_t state = rnd() % 3, waker = state && rnd() % 2 ? 1 + rnd() % 4 : 0;
	uint8_t h[24];
	size_t n = 0, len;

#define BADV(k, good, badv) (bad && which == (k) ? (badv) : (good))
	put_field(&pl, BADV(0, spulse_zigzag((int64_t)(rnd() % 3000000)),
			    spulse_zigzag(-(int64_t)(1 + rnd() % 5)) |
			    (rnd() % 2 ? 0 : 1ULL << 62)), bad ? 1 : 0);
	put_field(&pl, BADV(1, rnd() % 4, 4 + rnd() % 9), 0);	/* thread */
	put_field(&pl, BADV(2, rnd() % 50, 50 + rnd() % 9), 0);	/* stack */
	put_field(&pl, BADV(3, state, 3 + rnd() % 200), 0);
	put_field(&pl, BADV(4, rnd() % 64, SPULSE_MAX_CPU + rnd() % 9), 0);
	put_field(&pl, rnd() % 64, 0);
	put_field(&pl, BADV(5, state ? rnd() >> (rnd() % 64) >> 2 : 0,
			    1 + rnd() % 100), 0);		/* blocked */
	put_field(&pl, BADV(6, rnd() >> (20 + rnd() % 44), UINT64_MAX - rnd() % 9),
		  0);						/* runq */
	put_field(&pl, BADV(7, waker, 5 + rnd() % 9), 0);
	if (waker || (bad && which == 7)) {
		put_field(&pl, BADV(8, rnd() % 50, 50 + rnd() % 9), 0);
		put_field(&pl, BADV(9, rnd() % 64, SPULSE_MAX_CPU + rnd() % 3), 0);
	}
	if (bad && which == 10) {	/* a byte left over */
		uint8_t x = 0;

		tb_raw(&pl, &x, 1);
	}
	len = pl.len;
	if (bad && which == 11)		/* the payload is cut short */
		len -= 1 + rnd() % 2;
	h[n++] = SPULSE_TAG_EXT;
	n += spulse_put_uvar(h + n, SPULSE_EXT_OFFCPU);
	n += spulse_put_uvar(h + n, len);
	tb_raw(b, h, n);
	tb_raw(b, pl.p, pl.len);
	tb_free(&pl);
#undef BADV
}

/* Bytes of the record at @p (its ext header's length), capped at @avail. */
static size_t ext_extent(const uint8_t *p, size_t avail)
{
	uint64_t kind, len;
	int a, b;

	if (avail < 2 || p[0] != SPULSE_TAG_EXT)
		return avail;
	a = spulse_get_uvar(p + 1, avail - 1, &kind);
	if (a <= 0)
		return avail;
	b = spulse_get_uvar(p + 1 + a, avail - 1 - (size_t)a, &len);
	if (b <= 0 || len > avail - 1 - (size_t)a - (size_t)b)
		return avail;
	return 1 + (size_t)a + (size_t)b + (size_t)len;
}

/*
 * Each record decoded with the input going on past it (the fast path may
 * run) and with the input ending where it ends (the general decoder): the
 * same record, the same bytes taken, the same error.
 */
static void offcpu_fast_path_matches_general_decoder(void **state)
{
	unsigned int round;
	size_t fast_ok = 0;

	(void)state;
	rs = 31337;
	for (round = 0; round < 200; round++) {
		struct tbuf b = { 0 };
		struct spulse_dec da, db;
		struct spulse_error ea, eb;
		unsigned int bad_pct = round < 20 ? 0 : 1 + (unsigned int)(rnd() % 30);
		size_t pos, n, na, nb, i;
		uint32_t k;

		tb_header(&b);
		for (k = 0; k < 4; k++)
			TB(&b, spulse_enc_thread, k, 7, k, "t", 1);
		TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 0x401000);
		for (k = 0; k < 50; k++)
			TB(&b, spulse_enc_stack, k, SPULSE_STACK_ROOT, 0);
		pos = b.len;
		for (i = 0; i < 200; i++)
			put_offcpu(&b, bad_pct);
		spulse_dec_init(&da, NULL);
		spulse_dec_init(&db, NULL);
		{
			/* the header and definitions, the same way into both */
			size_t q = 0;
			struct spulse_record r;

			assert_int_equal(spulse_dec_header(&da, b.p, b.len, &q, &ea), 1);
			assert_int_equal(spulse_dec_header(&db, b.p, b.len, &n, &eb), 1);
			while (q < pos) {
				assert_int_equal(spulse_dec_record(&da, b.p + q, b.len - q,
								   q, &r, &na, &ea), 1);
				assert_int_equal(spulse_dec_record(&db, b.p + q, pos - q,
								   q, &r, &nb, &eb), 1);
				q += na;
			}
		}
		for (;;) {
			struct spulse_record ra, rb;
			size_t ext = ext_extent(b.p + pos, b.len - pos);
			int a, c;

			memset(&ra, 0xa5, sizeof(ra));
			memset(&rb, 0xa5, sizeof(rb));
			memset(&ea, 0, sizeof(ea));
			memset(&eb, 0, sizeof(eb));
			a = spulse_dec_record(&da, b.p + pos, b.len - pos, pos, &ra,
					      &na, &ea);
			c = spulse_dec_record(&db, b.p + pos, ext, pos, &rb, &nb,
					      &eb);
			if (a == 0 && ext < b.len - pos)
				break;	/* an impossible split: stop here */
			assert_int_equal(a, c);
			if (a < 0) {
				assert_int_equal(ea.offset, eb.offset);
				assert_string_equal(ea.msg, eb.msg);
				break;
			}
			if (a == 0)
				break;
			assert_int_equal(na, nb);
			assert_int_equal(ra.tag, rb.tag);
			assert_int_equal(ra.ext_kind, rb.ext_kind);
			assert_memory_equal(&ra.u.offcpu, &rb.u.offcpu,
					    sizeof(ra.u.offcpu));
			assert_true(da.event_ns == db.event_ns);
			assert_int_equal(da.info.offcpu, db.info.offcpu);
			fast_ok++;
			pos += na;
			if (pos == b.len)
				break;
		}
		spulse_dec_fini(&da);
		spulse_dec_fini(&db);
		tb_free(&b);
	}
	assert_true(fast_ok > 2000);
}

/* ---- the Recorder's module index ---- */

struct mmod {
	uint64_t start, end, off;
	uint32_t id, pid;
	bool active;
};

/* The newest active module of @pid holding @addr (the scan), or NULL. */
static const struct mmod *model_find(const struct mmod *m, size_t n,
				     uint32_t pid, uint64_t addr)
{
	size_t i;

	for (i = n; i-- > 0;)
		if (m[i].active && m[i].pid == pid && addr >= m[i].start &&
		    addr < m[i].end)
			return &m[i];
	return NULL;
}

static void module_index_resolves_as_the_newest_first_scan(void **state)
{
	static struct mmod m[4000];
	unsigned int round;

	(void)state;
	rs = 99;
	for (round = 0; round < 40; round++) {
		struct spulse_recorder_opts o = { .sz = sizeof(o),
						  .truncate = true,
						  .start_us = 1 };
		struct spulse_recorder *r;
		char *path = tmp_path();
		/* some rounds lay modules over older ones (the scan then) */
		bool overlap = round % 4 == 3;
		size_t n = 0, step;

		assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
		for (step = 0; step < 3000; step++) {
			unsigned int k = (unsigned int)(rnd() % 100);
			uint32_t pid = 1 + (uint32_t)(rnd() % 3);

			if (k < 8 && n < sizeof(m) / sizeof(m[0])) {
				/* define: disjoint 64 KiB slots, or anywhere */
				uint64_t slot = rnd() % 512, len;

				len = overlap ? 0x1000 + rnd() % 0x40000 :
				      0x1000 + rnd() % 0xf000;
				m[n] = (struct mmod){
					.start = 0x10000000 + slot * 0x10000 +
						 (overlap ? rnd() % 0x8000 : 0),
					.off = rnd() % 0x100000, .pid = pid,
					.active = true };
				m[n].end = m[n].start + len;
				if (!overlap) {
					/* keep one active module per slot */
					size_t j;

					for (j = 0; j < n; j++)
						if (m[j].active && m[j].pid == pid &&
						    m[j].start == m[n].start)
							break;
					if (j < n)
						continue;
				}
				assert_int_equal(spulse_rec_module(r, pid, m[n].start,
						m[n].end, m[n].off, "x", NULL, 0,
						&m[n].id), 0);
				n++;
			} else if (k < 10 && n) {
				size_t j = (size_t)(rnd() % n);

				if (m[j].active) {
					assert_int_equal(spulse_rec_module_deactivate(
							r, m[j].id), 0);
					m[j].active = false;
				}
			} else if (k == 10 && rnd() % 10 == 0) {
				size_t j;

				assert_int_equal(spulse_rec_process_deactivate(r, pid), 0);
				for (j = 0; j < n; j++)
					if (m[j].pid == pid)
						m[j].active = false;
			} else {
				/* resolve an address near the modules */
				uint64_t addr = 0x10000000 + rnd() % (513 * 0x10000);
				const struct mmod *w = model_find(m, n, pid, addr);
				uint32_t got, want;

				assert_int_equal(spulse_rec_frame_addr(r, pid, addr,
						false, false, &got), 0);
				if (w)
					assert_int_equal(spulse_rec_frame_module(r,
						w->id, addr - w->start + w->off,
						&want), 0);
				else
					assert_int_equal(spulse_rec_frame_abs(r,
						SPULSE_FRAME_USER, addr, &want), 0);
				/* the same content interns to the same id */
				assert_int_equal(got, want);
			}
		}
		assert_int_equal(spulse_recorder_close(r), 0);
		tmp_remove(path);
	}
}

/*
 * The Recorder's own stack, sample and off-CPU encoders (short varints
 * unrolled, the off-CPU payload in one pass) write the bytes of the shared
 * encoders (spulse_enc_stack(), spulse_enc_sample(),
 * spulse_enc_ext_offcpu()) for values of every varint length.
 */
static uint64_t any_len(void)
{
	return of_len(1 + (unsigned int)(rnd() % 10));
}

static void recorder_encodes_as_the_shared_encoders(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .start_us = 1 };
	struct spulse_recorder *r;
	struct tbuf ref = { 0 };
	char *path = tmp_path();
	uint64_t base;
	uint8_t *file;
	size_t flen, i;
	uint32_t th, f, id, nstacks = 0, k;
	int64_t t = 0, ev = 0;

	(void)state;
	rs = 2718;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "a", &th), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 0x1000, &f), 0);
	for (k = 1; k < 300; k++)
		assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER,
						      0x1000 + k, &id), 0);
	assert_int_equal(spulse_recorder_flush(r), 0);
	base = spulse_recorder_bytes(r);
	/* stacks: ids, parents and frames of 1..3 bytes */
	for (i = 0; i < 40000; i++) {
		uint32_t parent = nstacks && rnd() % 4 ? (uint32_t)(rnd() % nstacks) :
				  SPULSE_NONE;
		uint32_t frame = (uint32_t)(rnd() % 300);

		if (parent != SPULSE_NONE && rnd() % 2)
			parent = nstacks - 1 - (uint32_t)(rnd() % (nstacks < 8 ? nstacks : 8));
		if (spulse_rec_stack(r, parent, frame, &id))
			continue;	/* too deep: refused, nothing written */
		if (id == nstacks) {
			TB(&ref, spulse_enc_stack, id, parent == SPULSE_NONE ?
			   SPULSE_STACK_ROOT : (uint64_t)parent + 1, frame);
			nstacks++;
		}
	}
	assert_true(nstacks > 20000);
	/* samples and intervals, time steps of every length */
	for (i = 0; i < 20000; i++) {
		if (rnd() % 3) {
			int64_t nt = t + (int64_t)(any_len() >> 8 >> (rnd() % 50));
			uint32_t st = (uint32_t)(rnd() % nstacks);

			if (rnd() % 8 == 0 && nt > 1000)
				nt = t - (int64_t)(rnd() % (uint64_t)(t + 1));
			if (nt < 0)
				nt = 0;
			assert_int_equal(spulse_rec_sample(r, nt, th, st), 0);
			TB(&ref, spulse_enc_sample, nt - t, th, st);
			t = nt;
		} else {
			struct spulse_offcpu iv = { 0 };
			struct spulse_offcpu_fields fl = { 0 };
			int64_t nt = ev + (int64_t)(any_len() >> 12 >> (rnd() % 50));

			if (rnd() % 8 == 0)
				nt = ev - (int64_t)(rnd() % (uint64_t)(ev + 1));
			iv.time_ns = nt;
			iv.thread = th;
			iv.stack = (uint32_t)(rnd() % nstacks);
			iv.state = (uint8_t)(1 + rnd() % 2);
			iv.cpu_out = (uint32_t)(rnd() % SPULSE_MAX_CPU);
			iv.cpu_in = (uint32_t)(rnd() % 100);
			iv.blocked_ns = any_len() >> 12 >> (rnd() % 40);
			iv.runq_ns = any_len() >> 12 >> (rnd() % 40);
			iv.waker_thread = iv.waker_stack = iv.waker_cpu = SPULSE_NONE;
			if (rnd() % 2) {
				iv.waker_thread = th;
				iv.waker_stack = (uint32_t)(rnd() % nstacks);
				iv.waker_cpu = (uint32_t)(rnd() % SPULSE_MAX_CPU);
			}
			assert_int_equal(spulse_rec_offcpu(r, &iv), 0);
			fl = (struct spulse_offcpu_fields){
				.dt_ns = nt - ev, .thread = iv.thread,
				.stack = iv.stack, .state = iv.state,
				.cpu_out = iv.cpu_out, .cpu_in = iv.cpu_in,
				.blocked_ns = iv.blocked_ns, .runq_ns = iv.runq_ns,
				.has_waker = iv.waker_thread != SPULSE_NONE,
				.waker_thread = iv.waker_thread,
				.waker_stack = iv.waker_stack,
				.waker_cpu = iv.waker_cpu };
			TB(&ref, spulse_enc_ext_offcpu, &fl);
			ev = nt;
		}
	}
	assert_int_equal(spulse_recorder_close(r), 0);
	file = read_file(path, &flen);
	assert_int_equal(flen - base, ref.len);
	assert_memory_equal(file + base, ref.p, ref.len);
	free(file);
	tb_free(&ref);
	tmp_remove(path);
}

/* The position spulse_htab_lookup() keeps inserts where find + insert
 * would: same slots, same probe counts. */
static bool eq_none(const void *ctx, uint32_t id)
{
	(void)ctx;
	(void)id;
	return false;
}

static void htab_insert_at_equals_insert(void **state)
{
	struct spulse_htab a = { 0 }, b = { 0 };
	uint32_t i;

	(void)state;
	rs = 5;
	a.seed = b.seed = 1;
	for (i = 0; i < 50000; i++) {
		/* few distinct hashes: long probe sequences */
		uint32_t h = (uint32_t)(rnd() % (i % 3 ? 1000 : 0xffffffffu));
		struct spulse_htab_pos pos;

		assert_int_equal(spulse_htab_find(&a, h, eq_none, NULL),
				 SPULSE_NONE);
		assert_int_equal(spulse_htab_insert(&a, h, i), 0);
		assert_int_equal(spulse_htab_lookup(&b, h, eq_none, NULL, &pos),
				 SPULSE_NONE);
		assert_int_equal(spulse_htab_insert_at(&b, &pos, h, i), 0);
		assert_int_equal(a.mask, b.mask);
		assert_int_equal(a.count, b.count);
		assert_true(spulse_htab_probes(&a) == spulse_htab_probes(&b));
	}
	assert_memory_equal(a.slots, b.slots, (a.mask + 1) * sizeof(*a.slots));
	spulse_htab_free(&a);
	spulse_htab_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defs_fast_path_matches_general_decoder_on_valid_runs),
		cmocka_unit_test(defs_fast_path_matches_general_decoder_on_broken_runs),
		cmocka_unit_test(defs_fast_path_stops_at_the_depth_limit),
		cmocka_unit_test(defs_fast_path_stops_at_each_refusal),
		cmocka_unit_test(stream_take_defs_matches_stream_next),
		cmocka_unit_test(offcpu_fast_path_matches_general_decoder),
		cmocka_unit_test(module_index_resolves_as_the_newest_first_scan),
		cmocka_unit_test(recorder_encodes_as_the_shared_encoders),
		cmocka_unit_test(htab_insert_at_equals_insert),
	};

	return cmocka_run_group_tests_name("defs_fastpath", tests, NULL, NULL);
}
