// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven user unwinding (the step): the lookup of a PC in a process's
 * map set and a table's rows (binary searches), and the walk that applies
 * the rows (include/spulse/unwind.h) frame by frame through a caller's
 * memory reader, falling back to the frame-pointer step where no row
 * covers the PC. Pure: no globals, no locks, no allocation; the caller
 * keeps the map set alive (rcu_read_lock_sched() in the capture, the
 * test's own memory in KUnit). docs/UNWIND.md, "In the kernel".
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/signal.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <asm/sigcontext.h>
#include <asm/ucontext.h>

#include "unwind.h"
#include "kunit_export.h"

#ifndef __uninitialized		/* before 5.18: left to the compiler */
#define __uninitialized
#endif

/* A SIGNAL row reads these fields of the kernel's rt_sigframe ucontext. */
static_assert(offsetof(struct ucontext, uc_mcontext) == SPULSE_UC_MCONTEXT);
static_assert(SPULSE_UC_MCONTEXT + offsetof(struct sigcontext, bp) ==
	      SPULSE_UC_BP);
static_assert(SPULSE_UC_MCONTEXT + offsetof(struct sigcontext, sp) ==
	      SPULSE_UC_SP);
static_assert(SPULSE_UC_MCONTEXT + offsetof(struct sigcontext, ip) ==
	      SPULSE_UC_IP);
static_assert(SPULSE_UC_IP - SPULSE_UC_SP == 8);	/* read as one pair */
static_assert(sizeof(struct spulse_ut_row) == 12);

/**
 * spulse_ut_index_len() - size of a table's block index
 * @span: hi - lo of the table (1 .. 2^32 - 1)
 * @n_rows: its rows (>= 1)
 * @shift: set to log2 of the block size: the smallest (>=
 *	SPULSE_UT_BLOCK_SHIFT_MIN) that makes at most one block per row, so
 *	the index costs at most 4 bytes per row
 *
 * Return: the number of index entries (blocks + 1).
 */
u32 spulse_ut_index_len(u64 span, u32 n_rows, u8 *shift)
{
	u8 s = SPULSE_UT_BLOCK_SHIFT_MIN;

	while (s < 32 && ((span - 1) >> s) + 1 > n_rows)
		s++;
	*shift = s;
	return (u32)(((span - 1) >> s) + 2);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_index_len);

/**
 * spulse_ut_index_fill() - build a table's block index
 * @rows: the validated rows (first start 0, strictly increasing)
 * @n_rows: their number
 * @shift: from spulse_ut_index_len()
 * @idx: receives @len entries: @idx[b] = the last row whose start is at or
 *	below b << @shift; the last entry is @n_rows - 1
 * @len: from spulse_ut_index_len()
 */
void spulse_ut_index_fill(const struct spulse_ut_row *rows, u32 n_rows,
			  u8 shift, u32 *idx, u32 len)
{
	u32 b, r = 0;

	for (b = 0; b + 1 < len; b++) {
		u64 a = (u64)b << shift;

		while (r + 1 < n_rows && rows[r + 1].start <= a)
			r++;
		idx[b] = r;
	}
	idx[len - 1] = n_rows - 1;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_index_fill);

/**
 * spulse_ut_row_find() - the row covering a table address
 * @t: the table (rows sorted by strictly increasing start; with a block
 *	index the search covers only the rows of the address's block)
 * @addr: an ELF address (user PC - bias)
 *
 * Return: the last row whose start is at or below @addr - @t->lo, or NULL
 * when @addr is outside [@t->lo, @t->hi) or before the first row.
 */
const struct spulse_ut_row *spulse_ut_row_find(const struct spulse_ut_tab *t,
					       u64 addr)
{
	u32 lo = 0, hi = t->n_rows, mid, b;
	u64 off;

	if (addr < t->lo || addr >= t->hi || !hi)
		return NULL;
	off = addr - t->lo;
	if (off < t->rows[0].start)
		return NULL;
	if (t->idx) {
		b = off >> t->shift;
		if (b + 1 < t->idx_len) {
			lo = t->idx[b];
			hi = t->idx[b + 1] + 1;
		}
	}
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_row_find);

/**
 * spulse_ut_map_find() - the mapping of a process that contains a PC
 * @ps: the map set (sorted by start, not overlapping)
 * @pc: user address
 *
 * Return: the mapping, or NULL.
 */
const struct spulse_ut_ment *spulse_ut_map_find(const struct spulse_ut_pset *ps,
						u64 pc)
{
	u32 lo = 0, hi = ps->n, mid;

	if (!hi || pc < ps->map[0].start)
		return NULL;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (ps->map[mid].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return pc < ps->map[lo].end ? &ps->map[lo] : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_map_find);

/**
 * spulse_ut_lookup() - the row for a user PC
 * @ps: the process's map set, or NULL
 * @pc: user address (exact IP for the leaf and after a signal frame,
 *	return address - 1 for callers)
 *
 * Return: the row, or NULL when no mapping or no row covers @pc.
 */
const struct spulse_ut_row *spulse_ut_lookup(const struct spulse_ut_pset *ps,
					     u64 pc)
{
	const struct spulse_ut_ment *m = ps ? spulse_ut_map_find(ps, pc) : NULL;

	return m && m->tab ? spulse_ut_row_find(m->tab, pc - m->bias) : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_lookup);

/**
 * spulse_ut_lookup_why() - the row for a user PC, and why there is none
 * @ps: the process's map set, or NULL
 * @pc: user address (as for spulse_ut_lookup())
 * @miss: set when the result is NULL or a NONE row: SPULSE_UW_CUT_NO_SET
 *	(@ps is NULL), SPULSE_UW_CUT_NO_MAP (no mapping of @ps contains @pc),
 *	SPULSE_UW_CUT_NO_TAB (the mapping has no table) or
 *	SPULSE_UW_CUT_NO_ROW (the mapping's table has no rule at @pc)
 *
 * Return: the row, or NULL when no mapping or no row covers @pc.
 */
const struct spulse_ut_row *spulse_ut_lookup_why(const struct spulse_ut_pset *ps,
						 u64 pc, u8 *miss)
{
	const struct spulse_ut_ment *m;
	const struct spulse_ut_row *row;

	if (!ps) {
		*miss = SPULSE_UW_CUT_NO_SET;
		return NULL;
	}
	m = spulse_ut_map_find(ps, pc);
	if (!m) {
		*miss = SPULSE_UW_CUT_NO_MAP;
		return NULL;
	}
	if (!m->tab) {
		*miss = SPULSE_UW_CUT_NO_TAB;
		return NULL;
	}
	row = spulse_ut_row_find(m->tab, pc - m->bias);
	*miss = SPULSE_UW_CUT_NO_ROW;
	return row;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_lookup_why);

/**
 * spulse_ut_memo_begin() - make a memo serve a map set
 * @m: the memo (zeroed at first)
 * @ps: the map set of the walk to come (non-NULL, @ps->serial non-zero)
 *
 * Keeps the entries when they were looked up in this very set (same
 * pointer and serial), else forgets them all (a new tag; on its wrap, 255
 * sets later, the keys are cleared, so an old entry can never look
 * current).
 */
void spulse_ut_memo_begin(struct spulse_ut_memo *m,
			  const struct spulse_ut_pset *ps)
{
	if (m->ps == ps && m->serial == ps->serial && m->tag)
		return;
	m->ps = ps;
	m->serial = ps->serial;
	m->tag += 1ULL << SPULSE_UT_MEMO_TAG_SHIFT;
	if (!m->tag) {
		memset(m->key, 0, sizeof(m->key));
		m->tag = 1ULL << SPULSE_UT_MEMO_TAG_SHIFT;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_memo_begin);

/* spulse_uw_read() of two words, by value */
static __always_inline bool spulse_uw_read2(spulse_read_fn rd, void *ctx,
					    u64 task_size, u64 addr, u64 *w0,
					    u64 *w1)
{
	u64 t[2];

	if (addr >= task_size || task_size - addr < sizeof(t))
		return false;
	if (!rd)
		return spulse_ustack_read2(ctx, addr, w0, w1);
	if (rd(ctx, addr, t, sizeof(t)))
		return false;
	*w0 = t[0];
	*w1 = t[1];
	return true;
}

/*
 * A CFA_SP or PLT row the run steps in its loop: CFA = SP + @c, @c a
 * positive multiple of 8, and the caller's BP (when @b is not 0) at CFA +
 * @b at or above the SP. From an 8-byte aligned SP at or below the task
 * size (every SP of the run's loop: a CFA a step checked) such a CFA is
 * above the SP and aligned, and its BP slot neither below the SP nor
 * wrapping: the table step's checks come down to the CFA's upper bound.
 */
static __always_inline bool spulse_uw_sp_ok(s32 c, s16 b)
{
	return c > 0 && !(c & 7) && (s64)c + b >= 0;
}

/*
 * How the walk's run steps @row (enum spulse_ut_run): a frame-pointer
 * body (CFA = BP + 16, caller's BP at CFA - 16) on its own, a CFA_SP or
 * PLT row that spulse_uw_sp_ok() accepts and any other CFA_BP row by its
 * cfa_off and bp_off; nothing else (the walk's own step takes it, with
 * every check).
 */
static __always_inline u8 spulse_uw_run_kind(const struct spulse_ut_row *row)
{
	if (!row)
		return SPULSE_UT_RUN_NO;
	switch (row->kind) {
	case SPULSE_UT_CFA_BP:
		return row->cfa_off == 16 && row->bp_off == -16 ?
		       SPULSE_UT_RUN_FP : SPULSE_UT_RUN_BP;
	case SPULSE_UT_CFA_SP:
		return spulse_uw_sp_ok(row->cfa_off, row->bp_off) ?
		       SPULSE_UT_RUN_SP : SPULSE_UT_RUN_NO;
	case SPULSE_UT_PLT:
		return spulse_uw_sp_ok(row->cfa_off, row->bp_off) ?
		       SPULSE_UT_RUN_PLT : SPULSE_UT_RUN_NO;
	default:
		return SPULSE_UT_RUN_NO;
	}
}

/*
 * The memo's miss, out of line (the walk keeps nothing of it live):
 * spulse_ut_lookup_why(), stored in way 0 of @pc's set, the entry it
 * replaces moved to way 1.
 *
 * Return: the entry (way 0 of the set).
 */
static noinline unsigned long
spulse_uw_memo_fill(struct spulse_ut_memo *m, const struct spulse_ut_pset *ps,
		    u64 pc)
{
	unsigned long j = spulse_ut_memo_set(pc), w = j + SPULSE_UT_MEMO_SETS;
	const struct spulse_ut_row *row;
	u8 miss, k;

	row = spulse_ut_lookup_why(ps, pc, &miss);
	k = spulse_uw_run_kind(row);
	if (row && row->kind == SPULSE_UT_END)
		k = SPULSE_UT_RUN_END;	/* the run ends the walk complete */
	m->key[w] = m->key[j];
	m->row[w] = m->row[j];
	m->cfa_off[w] = m->cfa_off[j];
	m->bp_off[w] = m->bp_off[j];
	m->miss[w] = m->miss[j];
	m->run[w] = m->run[j];
	m->key[j] = pc + m->tag;
	m->row[j] = row;
	m->cfa_off[j] = row ? row->cfa_off : 0;
	m->bp_off[j] = row ? row->bp_off : 0;
	m->miss[j] = miss;
	m->run[j] = k;
	return j;
}

/*
 * The entry of @m that holds @pc (way 0, then way 1 of its set), filled
 * on a miss; @pc below 2^56 (the walk's PCs are below its task size, and
 * it uses a memo only with a task size of at most 2^56).
 */
static __always_inline unsigned long
spulse_uw_memo_ent(struct spulse_ut_memo *m, const struct spulse_ut_pset *ps,
		   u64 pc, u64 tag)
{
	unsigned long j = spulse_ut_memo_set(pc);

	if (likely(m->key[j] == pc + tag))
		return j;
	j += SPULSE_UT_MEMO_SETS;
	if (m->key[j] == pc + tag)
		return j;
	return spulse_uw_memo_fill(m, ps, pc);
}

/* spulse_ut_memo_lookup(), inline in the walk */
static __always_inline const struct spulse_ut_row *
spulse_uw_lookup(struct spulse_ut_memo *m, const struct spulse_ut_pset *ps,
		 u64 pc, u8 *miss)
{
	unsigned long j;

	if (!m)
		return spulse_ut_lookup_why(ps, pc, miss);
	j = spulse_uw_memo_ent(m, ps, pc, m->tag);
	*miss = m->miss[j];
	return m->row[j];
}

/**
 * spulse_ut_memo_lookup() - spulse_ut_lookup_why(), remembered
 * @m: a memo spulse_ut_memo_begin() set up for @ps, or NULL (no memo)
 * @ps: the map set
 * @pc: user address
 * @miss: as for spulse_ut_lookup_why()
 *
 * Return: what spulse_ut_lookup_why(@ps, @pc, @miss) returns (and sets),
 * from the memo when it holds @pc.
 */
const struct spulse_ut_row *spulse_ut_memo_lookup(struct spulse_ut_memo *m,
						  const struct spulse_ut_pset *ps,
						  u64 pc, u8 *miss)
{
	/* a PC at or above 2^56 has no key: not remembered */
	return spulse_uw_lookup(pc >> SPULSE_UT_MEMO_TAG_SHIFT ? NULL : m, ps,
				pc, miss);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_memo_lookup);

static __always_inline bool spulse_uw_read(spulse_read_fn rd, void *ctx,
					   u64 task_size, u64 addr, void *dst,
					   size_t len)
{
	if (addr >= task_size || task_size - addr < len)
		return false;
	if (!rd)
		return spulse_ustack_read(ctx, addr, dst, len);
	return !rd(ctx, addr, dst, len);
}

/**
 * struct spulse_uw_st - a walk's state across a run of table frames
 * @sp: the frame's SP
 * @bp: its BP
 * @pc: its PC
 * @row: the row of @pc (set by the run: the first it does not step)
 * @n: frames stored
 * @steps: steps the run took
 * @miss: the last lookup's *@miss
 * @k: spulse_uw_run_kind() of @row, not SPULSE_UT_RUN_NO (the walk's, on
 *	entry to the run)
 * @w: room for a read through a call (so that no local of the run has its
 *	address taken and all stay in registers)
 */
struct spulse_uw_st {
	u64 sp;
	u64 bp;
	u64 pc;
	const struct spulse_ut_row *row;
	u32 n;
	u32 steps;
	u8 miss;
	u8 k;
	u64 w[2];
};

/* spulse_uw_run(): the walk ended cleanly (a return address of 0) */
#define SPULSE_UW_RUN_DONE	0xff
static_assert(SPULSE_UW_CUT_NR < SPULSE_UW_RUN_DONE);
/* spulse_uw_run(): the last frame's row is END (the walk is complete) */
#define SPULSE_UW_RUN_END	0xfd
static_assert(SPULSE_UW_CUT_NR < SPULSE_UW_RUN_END);

/*
 * The cut of a run's step whose BP failed the run's one check (8-byte
 * aligned, SP <= BP <= @task_size - 16): the table step's checks in its
 * order, for CFA = BP + 16 (a CFA that wraps below 16 is refused as
 * unreadable, as spulse_uw_read2() refuses a read at CFA - 16 that
 * wraps). Every BP that fails that check fails one of these.
 */
static noinline u8 spulse_uw_run_bad(u64 sp, u64 bp, u64 task_size)
{
	u64 cfa = bp + 16;

	if (cfa <= sp || (cfa & 7) || cfa > task_size || cfa - 16 < sp)
		return SPULSE_UW_CUT_BAD_FRAME;
	return SPULSE_UW_CUT_UNREADABLE;
}

/*
 * A run's first step's reads through a reader (@rd) or the sampler's
 * reads (the capture's first one through copy_from_user_nmi()), out of
 * line: the caller's BP at @a when @rb, and the return address at @cfa -
 * 8, as the table step reads them (one 16-byte read when @a is @cfa - 16,
 * else 8-byte reads, the BP's first), into @st->w[0] and @st->w[1]. Also
 * every read of the run's loop through a reader.
 */
static noinline bool spulse_uw_run_read_rd(struct spulse_uw_st *st,
					   spulse_read_fn rd, void *ctx, u64 a,
					   u64 cfa, bool rb)
{
	if (rb && a == cfa - 16)
		return !rd(ctx, a, st->w, 16);
	if (rb && rd(ctx, a, st->w, 8))
		return false;
	return !rd(ctx, cfa - 8, st->w + 1, 8);
}

static noinline bool spulse_uw_run_read_uc(struct spulse_uw_st *st,
					   struct spulse_ucache *uc, u64 a,
					   u64 cfa, bool rb)
{
	const void __user *p = (const void __user *)(uintptr_t)(cfa - 8);
	u64 *d = st->w + 1;
	size_t len = 8;

	if (likely(!uc->ok)) {
		/*
		 * the capture's first read, mostly: spulse_ustack_read_slow()
		 * inline, the words the step reads first (the BP's, or both)
		 */
		if (rb) {
			p = (const void __user *)(uintptr_t)a;
			d = st->w;
			len = a == cfa - 16 ? 16 : 8;
		}
		if (copy_from_user_nmi(d, p, len))
			return false;
		uc->ok = true;
		if (len == 16 || !rb)
			return true;
		rb = false;	/* the BP is read: the return address next */
	}
	if (rb && a == cfa - 16)
		return spulse_ustack_read(uc, a, st->w, 16);
	if (rb && !spulse_ustack_read(uc, a, st->w, 8))
		return false;
	return spulse_ustack_read(uc, cfa - 8, st->w + 1, 8);
}

static __always_inline bool spulse_uw_run_read(struct spulse_uw_st *st,
					       spulse_read_fn rd, void *ctx,
					       u64 a, u64 cfa, bool rb)
{
	if (rd)
		return spulse_uw_run_read_rd(st, rd, ctx, a, cfa, rb);
	return spulse_uw_run_read_uc(st, ctx, a, cfa, rb);
}

/* spulse_uw_run_at(): a check of the table step failed, before any read */
#define SPULSE_UW_RUN_STEP	0xfe
static_assert(SPULSE_UW_CUT_NR < SPULSE_UW_RUN_STEP);

/*
 * A run's first step's addresses for a frame at @sp, @bp whose PC is @pc
 * and whose row (its enum spulse_ut_run @k, @cfa_off, @bp_off) the run
 * steps: the CFA, and where the caller's BP is (*@a, when *@rb), from any
 * SP (the registers' or a signal frame's need not be aligned). A
 * frame-pointer body's BP gets one check that every BP the table step
 * accepts passes (one that fails it gets the table step's checks in their
 * order, spulse_uw_run_bad()); any other row the table step's checks in
 * their order, up to its reads.
 *
 * Return: SPULSE_UW_CUT_NONE (read), SPULSE_UW_RUN_STEP (leave the step
 * to the walk's own, which cuts it as the table step does) or a cut.
 */
static __always_inline u8 spulse_uw_run_at(u8 k, s32 cfa_off, s16 bp_off,
					   u64 sp, u64 bp, u64 pc,
					   u64 task_size, u64 *cfa, u64 *a,
					   bool *rb)
{
	u64 c;

	if (k == SPULSE_UT_RUN_FP) {
		if (unlikely(bp < sp || bp > task_size - 16 || (bp & 7)))
			return spulse_uw_run_bad(sp, bp, task_size);
		*cfa = bp + 16;
		*a = bp;
		*rb = true;
		return SPULSE_UW_CUT_NONE;
	}
	c = (k == SPULSE_UT_RUN_BP ? bp : sp) + (s64)cfa_off;
	if (unlikely(k == SPULSE_UT_RUN_PLT) && (pc & 15) >= 11)
		c += 8;
	if (unlikely(c <= sp || (c & 7) || c > task_size))
		return SPULSE_UW_RUN_STEP;
	*cfa = c;
	*a = c + (s64)bp_off;
	*rb = bp_off;
	/* a slot below the SP, or wrapping */
	if (bp_off && unlikely(*a < sp || *a >= c))
		return SPULSE_UW_RUN_STEP;
	return SPULSE_UW_CUT_NONE;
}

/*
 * A run of table frames: from a frame whose row the run steps (enum
 * spulse_ut_run: CFA_SP, CFA_BP and PLT rows), the walk's table step for
 * that row, frame after frame while the memo says the next PC's row is
 * one too. The first step (from the walk's SP, which need not be
 * aligned) takes every check of the table step (spulse_uw_run_at()) and
 * its reads out of line (spulse_uw_run_read(): the capture's first read
 * is copy_from_user_nmi()); where a check fails before any read the run
 * leaves the step to the walk's own (same checks, same order, same cut).
 * Every later SP is a CFA a step checked (8-byte aligned, at most
 * @task_size), so the loop's steps need fewer checks: a frame-pointer
 * body one check of its BP for all of the table step's (a BP that fails
 * it gets them in order, spulse_uw_run_bad()), a CFA_SP or PLT row only
 * the CFA's upper bound (spulse_uw_sp_ok() proved the rest when the memo
 * stored the entry), any other CFA_BP row all of them (leaving the step
 * to the walk's own where one fails). Then the reads (the caller's BP at
 * CFA + bp_off unless bp_off is 0, the return address at CFA - 8; one
 * 16-byte read where bp_off is -16), one check of the return address for
 * both 0 and not a user address, the depth limit as a pointer compare.
 * The memo's entry holds what a step needs (enum spulse_ut_run, cfa_off,
 * bp_off), so a hit is one key compare and the step does not read the
 * row; a miss fills the entry out of line (spulse_uw_memo_fill()). An END
 * row ends the run and the walk (complete), another row the run. Without
 * a memo the run takes its first step only (the walk calls it again). In
 * a function of its own, with no local whose address is taken once
 * inlined, so that what a step needs stays in registers. A frame's PC is
 * the last frame stored (the walk's invariant), so the run keeps none.
 *
 * @memo is used only with a @task_size of at most 2^56 (every PC below
 * it has a key); callers pass NULL otherwise. @user_ok (a constant): the
 * caller checked @task_size <= TASK_SIZE_MAX, so an address that passed
 * the step's checks needs no access_ok() (every read ends at or below the
 * CFA, at most @task_size). @rd NULL: the sampler's reads, inline loads
 * in the loop (the first step's read has made them valid).
 *
 * Return: SPULSE_UW_CUT_NONE (@st->row is a row for the walk's own step:
 * the walk goes on from @st), SPULSE_UW_RUN_DONE (a return address of 0),
 * SPULSE_UW_RUN_END (the last frame's row is END: complete), or the cut's
 * enum spulse_uw_cut (@st->n and @st->pc at the frame it was cut at;
 * @st->sp and @st->bp are then of no use).
 */
static __always_inline u8 spulse_uw_run(struct spulse_uw_st *st,
					u64 task_size, spulse_read_fn rd,
					void *ctx,
					const struct spulse_ut_pset *ps,
					struct spulse_ut_memo *memo,
					u64 *out, u32 max, bool user_ok)
{
	u64 sp = st->sp, bp = st->bp, nbp, ra, pc, cfa, a;
	u64 *o = out + st->n, *const end = out + max;
	u64 tag = memo ? memo->tag : 0;
	/* @task_size less 1 and 16, each one compare where it is spilled */
	const u64 ts1 = task_size - 1, ts16 = task_size - 16;
	const struct spulse_ut_row *row = st->row;
	u8 k = st->k, why = SPULSE_UW_CUT_NONE;
	struct spulse_ucache *uc = ctx;
	unsigned long j;
	bool rb;
	s16 boff;

	why = spulse_uw_run_at(k, row->cfa_off, row->bp_off, sp, bp, o[-1],
			       task_size, &cfa, &a, &rb);
	if (why == SPULSE_UW_RUN_STEP) {
		/* @st->row is the frame's: the walk's step cuts it */
		why = SPULSE_UW_CUT_NONE;
		goto out;
	}
	if (why)
		goto out;
	why = SPULSE_UW_CUT_UNREADABLE;
	if (!rd && likely(!uc->ok) && rb && a == cfa - 16) {
		/* the capture's first read: spulse_ustack_read_slow() */
		if (copy_from_user_nmi(st->w, (const void __user *)(uintptr_t)a,
				       16))
			goto out;
		uc->ok = true;
	} else if (!spulse_uw_run_read(st, rd, ctx, a, cfa, rb)) {
		goto out;
	}
	nbp = rb ? st->w[0] : bp;
	ra = st->w[1];
	for (;;) {
		/*
		 * the caller's frame (kept by a cut too: the walk uses only
		 * the frames of a cut run, so the registers need not hold
		 * the frame it was cut at)
		 */
		sp = cfa;
		bp = nbp;
		/* ra - 1 wraps for 0: one compare for both */
		if (unlikely(ra - 1 >= ts1)) {
			why = ra ? SPULSE_UW_CUT_BAD_FRAME : SPULSE_UW_RUN_DONE;
			break;
		}
		why = SPULSE_UW_CUT_DEPTH;
		if (unlikely(o == end))
			break;
		pc = ra - 1;
		*o++ = pc;
		why = SPULSE_UW_CUT_NONE;
		if (!memo) {
			st->row = spulse_ut_lookup_why(ps, pc, &st->miss);
			break;
		}
		j = spulse_uw_memo_ent(memo, ps, pc, tag);
		k = memo->run[j];
		if (likely(k == SPULSE_UT_RUN_FP)) {
			why = SPULSE_UW_CUT_UNREADABLE;
			if (unlikely(bp < sp || bp > ts16 || (bp & 7))) {
				why = spulse_uw_run_bad(sp, bp, task_size);
				break;
			}
			cfa = bp + 16;
			if (rd) {
				if (!spulse_uw_run_read(st, rd, ctx, bp, cfa,
							true))
					break;
				nbp = st->w[0];
				ra = st->w[1];
			} else {
				const u64 __user *p =
					(const u64 __user *)(uintptr_t)bp;

				/*
				 * user_access_begin() without its range check
				 * when the caller proved it: BP + 16 <=
				 * @task_size <= TASK_SIZE_MAX
				 */
				if (user_ok)
					__uaccess_begin_nospec();
				else if (!user_access_begin(p, 16))
					break;
				unsafe_get_user(nbp, p, fault);
				unsafe_get_user(ra, p + 1, fault);
				user_access_end();
			}
			continue;
		}
		if (likely(k == SPULSE_UT_RUN_SP)) {
			/* from an aligned SP only the upper bound is left */
			cfa = sp + (s64)memo->cfa_off[j];
			why = SPULSE_UW_CUT_BAD_FRAME;
			if (unlikely(cfa > task_size))
				break;
		} else if (k == SPULSE_UT_RUN_PLT) {
			cfa = sp + (s64)memo->cfa_off[j] +
			      ((pc & 15) >= 11 ? 8 : 0);
			why = SPULSE_UW_CUT_BAD_FRAME;
			if (unlikely(cfa > task_size))
				break;
		} else if (k == SPULSE_UT_RUN_BP) {
			cfa = bp + (s64)memo->cfa_off[j];
			if (unlikely(cfa <= sp || (cfa & 7) || cfa > task_size))
				goto step;
			/* a slot below the SP, or wrapping */
			a = cfa + (s64)memo->bp_off[j];
			if (memo->bp_off[j] && unlikely(a < sp || a >= cfa))
				goto step;
		} else {
			/* another row ends the run, END the walk (complete) */
			if (k != SPULSE_UT_RUN_END)
				goto step;
			why = SPULSE_UW_RUN_END;
			break;
		}
		why = SPULSE_UW_CUT_UNREADABLE;
		boff = memo->bp_off[j];
		a = cfa + (s64)boff;
		if (rd) {
			if (!spulse_uw_run_read(st, rd, ctx, a, cfa, boff))
				break;
			if (boff)
				nbp = st->w[0];
			ra = st->w[1];
		} else {
			const u64 __user *p = (const u64 __user *)(uintptr_t)cfa;

			/* both words end at or below the CFA */
			if (user_ok) {
				__uaccess_begin_nospec();
			} else {
				if (!access_ok(p - 1, 8) ||
				    (boff && !access_ok((const void __user *)
							(uintptr_t)a, 8)))
					break;
				__uaccess_begin_nospec();
			}
			if (boff)
				unsafe_get_user(nbp, (const u64 __user *)
						(uintptr_t)a, fault);
			unsafe_get_user(ra, p - 1, fault);
			user_access_end();
		}
	}
out:
	st->sp = sp;
	st->bp = bp;
	st->pc = o[-1];
	st->steps = o - out - st->n;
	st->n = o - out;
	return why;
step:
	/* the walk's own step for the row of entry j: it cuts or ends here */
	st->row = memo->row[j];
	st->miss = memo->miss[j];
	why = SPULSE_UW_CUT_NONE;
	goto out;
fault:
	user_access_end();
	why = SPULSE_UW_CUT_UNREADABLE;
	goto out;
}

/* spulse_uw_run() through inline reads, any task size and memo */
static noinline u8 spulse_uw_run_uc_any(struct spulse_uw_st *st,
					u64 task_size, void *ctx,
					const struct spulse_ut_pset *ps,
					struct spulse_ut_memo *memo, u64 *out,
					u32 max)
{
	return spulse_uw_run(st, task_size, NULL, ctx, ps,
			     task_size <= 1ULL << SPULSE_UT_MEMO_TAG_SHIFT ?
			     memo : NULL, out, max, false);
}

/* spulse_uw_run() through the sampler's inline reads (@rd NULL) */
static noinline u8 spulse_uw_run_uc(struct spulse_uw_st *st, u64 task_size,
				    void *ctx, const struct spulse_ut_pset *ps,
				    struct spulse_ut_memo *memo, u64 *out,
				    u32 max)
{
	/*
	 * the sampler's task size, a constant where TASK_SIZE_MAX is one
	 * (the other cases in a function of their own, so that this one's
	 * code stays apart); below 2^56: every PC has a memo key
	 */
	if (likely(memo && task_size == TASK_SIZE_MAX))
		return spulse_uw_run(st, TASK_SIZE_MAX, NULL, ctx, ps, memo,
				     out, max, true);
	return spulse_uw_run_uc_any(st, task_size, ctx, ps, memo, out, max);
}

/* spulse_uw_run() through a reader */
static noinline u8 spulse_uw_run_rd(struct spulse_uw_st *st, u64 task_size,
				    spulse_read_fn rd, void *ctx,
				    const struct spulse_ut_pset *ps,
				    struct spulse_ut_memo *memo, u64 *out,
				    u32 max)
{
	if (memo && task_size <= 1ULL << SPULSE_UT_MEMO_TAG_SHIFT)
		return spulse_uw_run(st, task_size, rd, ctx, ps, memo, out,
				     max, false);
	return spulse_uw_run(st, task_size, rd, ctx, ps, NULL, out, max,
			     false);
}

/*
 * spulse_unwind_walk_memo()'s walk; inlined twice, once with @rd NULL
 * (the sampler's reads, inline loads) and once with a reader.
 */
static __always_inline int spulse_uw_walk(const struct spulse_uregs *r,
					  u64 task_size, spulse_read_fn rd,
					  void *ctx,
					  const struct spulse_ut_pset *ps,
					  struct spulse_ut_memo *memo,
					  bool fp_fallback, u64 *out, u32 max,
					  struct spulse_uw_res *res)
{
	u64 sp = r->sp, bp = r->bp, pc = r->ip, cfa, nbp, ra, a;
	u64 w[2] __uninitialized;	/* read into before any use */
	const struct spulse_ut_row *row;
	u8 kind, why, miss = SPULSE_UW_CUT_NO_SET;
	u32 n = 0, tsteps = 0, fsteps = 0;

	memset(res, 0, sizeof(*res));
	why = SPULSE_UW_CUT_BAD_FRAME;
	if (!max || r->ip >= task_size || task_size < 16)
		goto cut;
	/* every PC of the walk is below task_size: with a memo, below 2^56 */
	if (memo && ps && ps->serial &&
	    task_size <= 1ULL << SPULSE_UT_MEMO_TAG_SHIFT) {
		/* spulse_ut_memo_begin() only when it has work */
		if (unlikely(memo->ps != ps || memo->serial != ps->serial ||
			     !memo->tag))
			spulse_ut_memo_begin(memo, ps);
	} else {
		memo = NULL;
	}
	out[n++] = r->ip;
	row = spulse_uw_lookup(memo, ps, pc, &miss);
	for (;;) {
		kind = spulse_uw_run_kind(row);
		if (kind) {
			/* not zeroed (INIT_STACK_ALL_ZERO): the run sets it */
			struct spulse_uw_st st __uninitialized;

			st.sp = sp;
			st.bp = bp;
			st.pc = pc;
			st.row = row;
			st.n = n;
			st.miss = miss;
			st.k = kind;
			why = rd ? spulse_uw_run_rd(&st, task_size, rd, ctx, ps,
						    memo, out, max) :
				   spulse_uw_run_uc(&st, task_size, ctx, ps,
						    memo, out, max);
			sp = st.sp;
			bp = st.bp;
			pc = st.pc;
			n = st.n;
			miss = st.miss;
			row = st.row;
			tsteps += st.steps;
			if (why == SPULSE_UW_RUN_DONE)
				goto done;
			if (why == SPULSE_UW_RUN_END) {
				res->complete = true;
				goto done;
			}
			if (why != SPULSE_UW_CUT_NONE)
				goto cut;
		}
		kind = row ? row->kind : SPULSE_UT_NONE;
		switch (kind) {
		case SPULSE_UT_NONE:
			/* whatever stops the FP step: the missing rule's cause */
			why = miss;
			if (!fp_fallback)
				goto cut;
			if (!bp)
				goto done;
			if ((bp & 7) || bp < sp || bp > task_size - 16 ||
			    !spulse_uw_read2(rd, ctx, task_size, bp, &nbp, &ra))
				goto cut;
			if (!ra)
				goto done;
			if (ra >= task_size)
				goto cut;
			if (n >= max) {
				why = SPULSE_UW_CUT_DEPTH;
				goto cut;
			}
			out[n++] = ra - 1;
			fsteps++;
			sp = bp + 16;
			bp = nbp;
			pc = ra - 1;
			row = spulse_uw_lookup(memo, ps, pc, &miss);
			continue;
		case SPULSE_UT_END:
			res->complete = true;
			goto done;
		case SPULSE_UT_SIGNAL:
			why = SPULSE_UW_CUT_UNREADABLE;
			if ((sp & 7) ||
			    !spulse_uw_read(rd, ctx, task_size,
					    sp + SPULSE_UC_BP, &w[0],
					    sizeof(w[0]))) {
				if (sp & 7)
					why = SPULSE_UW_CUT_BAD_FRAME;
				goto cut;
			}
			nbp = w[0];
			if (!spulse_uw_read(rd, ctx, task_size,
					    sp + SPULSE_UC_SP, w, sizeof(w)))
				goto cut;
			/* w[0] = interrupted SP, w[1] = its exact IP */
			why = SPULSE_UW_CUT_BAD_FRAME;
			if (w[0] <= sp || !w[1] || w[1] >= task_size)
				goto cut;
			if (n >= max) {
				why = SPULSE_UW_CUT_DEPTH;
				goto cut;
			}
			out[n++] = w[1];
			tsteps++;
			sp = w[0];
			bp = nbp;
			pc = w[1];
			row = spulse_uw_lookup(memo, ps, pc, &miss);
			continue;
		case SPULSE_UT_CFA_SP:
			cfa = sp + (s64)row->cfa_off;
			break;
		case SPULSE_UT_CFA_BP:
			cfa = bp + (s64)row->cfa_off;
			break;
		case SPULSE_UT_PLT:
			cfa = sp + (s64)row->cfa_off + ((pc & 15) >= 11 ? 8 : 0);
			break;
		case SPULSE_UT_CFA_DEREF_BP:
			/* DRAP: CFA = *(BP + cfa_off), caller's BP = *(BP) */
			a = bp + (s64)row->cfa_off;
			why = SPULSE_UW_CUT_BAD_FRAME;
			if ((a & 7) || (bp & 7) || bp < sp)
				goto cut;
			why = SPULSE_UW_CUT_UNREADABLE;
			if (!spulse_uw_read(rd, ctx, task_size, a, &w[0],
					    sizeof(w[0])) ||
			    !spulse_uw_read(rd, ctx, task_size, bp, &w[1],
					    sizeof(w[1])))
				goto cut;
			cfa = w[0];
			nbp = w[1];
			break;
		default:	/* UNKNOWN (validated tables hold nothing else) */
			why = SPULSE_UW_CUT_UNKNOWN;
			goto cut;
		}
		why = SPULSE_UW_CUT_BAD_FRAME;
		if (cfa <= sp || (cfa & 7) || cfa > task_size)
			goto cut;
		if (kind != SPULSE_UT_CFA_DEREF_BP && row->bp_off == -16) {
			/* standard frame: caller's BP, then return address */
			if (cfa - 16 < sp)
				goto cut;
			why = SPULSE_UW_CUT_UNREADABLE;
			if (!spulse_uw_read2(rd, ctx, task_size, cfa - 16, &nbp,
					     &ra))
				goto cut;
		} else {
			if (kind != SPULSE_UT_CFA_DEREF_BP)
				nbp = bp;
			if (kind != SPULSE_UT_CFA_DEREF_BP && row->bp_off) {
				a = cfa + (s64)row->bp_off;
				if (a < sp)
					goto cut;
				why = SPULSE_UW_CUT_UNREADABLE;
				if (!spulse_uw_read(rd, ctx, task_size, a, &w[0],
						    sizeof(w[0])))
					goto cut;
				nbp = w[0];
			}
			why = SPULSE_UW_CUT_UNREADABLE;
			if (!spulse_uw_read(rd, ctx, task_size, cfa - 8, &w[1],
					    sizeof(w[1])))
				goto cut;
			ra = w[1];
		}
		if (!ra)
			goto done;
		why = SPULSE_UW_CUT_BAD_FRAME;
		if (ra >= task_size)
			goto cut;
		if (n >= max) {
			why = SPULSE_UW_CUT_DEPTH;
			goto cut;
		}
		out[n++] = ra - 1;
		tsteps++;
		sp = cfa;
		bp = nbp;
		pc = ra - 1;
		row = spulse_uw_lookup(memo, ps, pc, &miss);
	}
done:
	res->table_steps = tsteps;
	res->fp_steps = fsteps;
	return n;
cut:
	res->table_steps = tsteps;
	res->fp_steps = fsteps;
	res->truncated = true;
	res->cut = why;
	res->cut_pc = n ? pc : 0;
	return n;
}

/**
 * spulse_unwind_walk_memo() - walk a user stack with unwind tables
 * @r: user registers at kernel entry (ip exact, sp, bp)
 * @task_size: first address that is not user memory (TASK_SIZE_MAX)
 * @rd: reads @len bytes at user address @addr into @dst; 0 on success;
 *	NULL: the current task's memory, spulse_ustack_read(@ctx, ...)
 * @ctx: passed to @rd (a struct spulse_ucache when @rd is NULL)
 * @ps: the process's map set, or NULL (no tables)
 * @memo: recent lookups to reuse and extend (the calling CPU's), or NULL;
 *	used only with a @ps whose serial is non-zero (a registry's) and a
 *	@task_size of at most 2^56 (TASK_SIZE_MAX is below)
 * @fp_fallback: where no row covers the PC (no mapping, outside a table,
 *	a NONE row), take the frame-pointer step; else cut the walk there
 * @out: receives the frames, leaf (= @r->ip) first; return addresses are
 *	normalized (return address - 1), a frame below a signal frame is the
 *	exact interrupted IP
 * @max: capacity of @out, the depth limit (>= 1)
 * @res: what the walk did
 *
 * Per frame the PC (the leaf's IP, a caller's return address - 1, or the
 * exact IP read from a signal frame) selects a row. CFA_SP, CFA_BP, PLT
 * and CFA_DEREF_BP compute the CFA (the caller's SP); the return address
 * is read at CFA - 8 and the caller's BP at CFA + bp_off (unchanged when
 * bp_off is 0; for CFA_DEREF_BP, GCC's DRAP frame, at BP, with CFA =
 * *(BP + cfa_off)). Where bp_off is -16 (a standard frame: push %rbp
 * right after the call) both are one 16-byte read at CFA - 16, which
 * fails exactly when one of the two 8-byte reads would; consecutive
 * CFA_SP, CFA_BP and PLT frames take these steps in a run of their own,
 * in registers (spulse_uw_run()). SIGNAL reads the interrupted BP, SP and
 * IP from the struct ucontext at SP. END ends the walk complete; UNKNOWN cuts it.
 * The frame-pointer step is spulse_ustack_walk()'s: [BP] = caller's BP,
 * [BP + 8] = return address, caller's SP = BP + 16.
 *
 * Safety: every step must move the SP strictly up (CFA > SP, a signal
 * frame's SP above it, BP >= SP for the frame-pointer step), a CFA and a
 * frame pointer are 8-byte aligned, every read lies below @task_size, a
 * return address or signal IP that is not a user address is never
 * followed, and at most @max frames are stored. Any violation or failed
 * read cuts the walk (@res->truncated). The walk ends cleanly, neither
 * complete nor truncated, at a return address of 0 or (frame-pointer step)
 * a frame pointer of 0. A cut walk says why in @res->cut (enum
 * spulse_uw_cut): a frame-pointer step is taken only where no row covers
 * the PC, so its failures are the missing rule's cause (no map set, no
 * mapping, a mapping without a table, no row), the depth limit apart; a table step's are UNKNOWN,
 * DEPTH, UNREADABLE or BAD_FRAME.
 *
 * Return: number of frames stored in @out (0 only if @r->ip is not a user
 * address).
 */
int spulse_unwind_walk_memo(const struct spulse_uregs *r, u64 task_size,
			    spulse_read_fn rd, void *ctx,
			    const struct spulse_ut_pset *ps,
			    struct spulse_ut_memo *memo, bool fp_fallback,
			    u64 *out, u32 max, struct spulse_uw_res *res)
{
	if (!rd)
		return spulse_uw_walk(r, task_size, NULL, ctx, ps, memo,
				      fp_fallback, out, max, res);
	return spulse_uw_walk(r, task_size, rd, ctx, ps, memo, fp_fallback,
			      out, max, res);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_unwind_walk_memo);

/**
 * spulse_unwind_walk_uc() - spulse_unwind_walk_memo() of the current task
 * @r: its user registers at kernel entry (ip exact, sp, bp)
 * @uc: the calling CPU's reader state (the capture's, see
 *	spulse_ustack_read()); its memo serves the walk
 * @ps: the process's map set, or NULL (no tables)
 * @fp_fallback: as for spulse_unwind_walk_memo()
 * @out: receives the frames, leaf first
 * @max: capacity of @out, the depth limit (>= 1)
 * @res: what the walk did
 *
 * spulse_unwind_walk_memo(@r, TASK_SIZE_MAX, NULL, @uc, @ps, &@uc->memo,
 * ...), the sampler's: a copy of the walk of its own, with the task size
 * and the reader fixed and fewer arguments, so that less is spilled.
 *
 * Return: number of frames stored in @out.
 */
int spulse_unwind_walk_uc(const struct spulse_uregs *r,
			  struct spulse_ucache *uc,
			  const struct spulse_ut_pset *ps, bool fp_fallback,
			  u64 *out, u32 max, struct spulse_uw_res *res)
{
	return spulse_uw_walk(r, TASK_SIZE_MAX, NULL, uc, ps, &uc->memo,
			      fp_fallback, out, max, res);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_unwind_walk_uc);

/**
 * spulse_unwind_walk() - spulse_unwind_walk_memo() without a memo
 * @r: user registers at kernel entry (ip exact, sp, bp)
 * @task_size: first address that is not user memory (TASK_SIZE_MAX)
 * @rd: reads @len bytes at user address @addr into @dst; 0 on success
 * @ctx: passed to @rd
 * @ps: the process's map set, or NULL (no tables)
 * @fp_fallback: as for spulse_unwind_walk_memo()
 * @out: receives the frames, leaf first
 * @max: capacity of @out, the depth limit (>= 1)
 * @res: what the walk did
 *
 * Return: number of frames stored in @out.
 */
int spulse_unwind_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx,
		       const struct spulse_ut_pset *ps, bool fp_fallback,
		       u64 *out, u32 max, struct spulse_uw_res *res)
{
	return spulse_unwind_walk_memo(r, task_size, rd, ctx, ps, NULL,
				       fp_fallback, out, max, res);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_unwind_walk);
