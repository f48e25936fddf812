/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks (ustack.c): the frame-pointer walker over a "read memory"
 * callback (pure) and the capture of the current task's user stack, by
 * frame pointers or unwind tables, reading user memory word by word.
 */
#ifndef SPULSE_KMOD_USTACK_H
#define SPULSE_KMOD_USTACK_H

#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/types.h>
#include <linux/uaccess.h>

#include "params.h"

typedef int (*spulse_read_fn)(void *ctx, u64 addr, void *dst, size_t len);

/**
 * struct spulse_uregs - the user registers the walker starts from
 * @ip: user instruction pointer (exact)
 * @sp: user stack pointer
 * @bp: user frame pointer
 */
struct spulse_uregs {
	u64 ip;
	u64 sp;
	u64 bp;
};

int spulse_ustack_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx, u64 *out, u32 max,
		       bool *truncated);

struct spulse_ut_row;
struct spulse_ut_pset;

/*
 * 1024 entries, 2-way sets (24 KiB a CPU): bench-insns' python3 stacks,
 * replayed, miss 0.33-0.36 times a sample where 512 entries miss
 * 0.61-0.68 and 128 about 1.4 (docs/UNWIND.md)
 */
#define SPULSE_UT_MEMO_SHIFT	10
#define SPULSE_UT_MEMO_SETS	(1U << (SPULSE_UT_MEMO_SHIFT - 1))
/*
 * An entry's key is its PC plus the memo's tag (stamp << 56): a PC is
 * below 2^56 (TASK_SIZE_MAX), so a key names the PC and the stamp at once
 * and a hit is one compare. PCs at or above 2^56 are not remembered.
 */
#define SPULSE_UT_MEMO_TAG_SHIFT	56

/**
 * enum spulse_ut_run - the step the walk's run takes for a row (unwind.c)
 * @SPULSE_UT_RUN_NO: none, the walk's own step (no row, NONE, END,
 *	SIGNAL, CFA_DEREF_BP, UNKNOWN, and a CFA_SP or PLT row that
 *	spulse_uw_run_kind() leaves to the walk)
 * @SPULSE_UT_RUN_FP: a frame-pointer body (CFA_BP 16, caller's BP at CFA -
 *	16): one check of the BP, one 16-byte read at BP
 * @SPULSE_UT_RUN_SP: any other CFA_SP row: CFA = SP + cfa_off, where
 *	cfa_off is a positive multiple of 8 and the caller's BP slot (if
 *	any) at or above the SP: from an 8-byte aligned SP the only check
 *	left is the CFA's upper bound
 * @SPULSE_UT_RUN_BP: any other CFA_BP row: CFA = BP + cfa_off
 * @SPULSE_UT_RUN_PLT: a PLT row: CFA = SP + cfa_off (+ 8 at PC & 15 >= 11),
 *	cfa_off as for @SPULSE_UT_RUN_SP
 * @SPULSE_UT_RUN_END: an END row (in a memo entry only): the run ends the
 *	walk, complete
 */
enum spulse_ut_run {
	SPULSE_UT_RUN_NO,
	SPULSE_UT_RUN_FP,
	SPULSE_UT_RUN_SP,
	SPULSE_UT_RUN_BP,
	SPULSE_UT_RUN_PLT,
	SPULSE_UT_RUN_END,
};

/**
 * struct spulse_ut_memo - one CPU's recent PC -> row lookups, all of one
 *	map set (unwind.c, spulse_ut_memo_begin())
 * @key: per entry, the PC looked up (spulse_ut_lookup_why()'s @pc) + the
 *	memo's @tag it was stored under (another tag, or 0: empty). Entry
 *	j < SPULSE_UT_MEMO_SETS is way 0 of set j, entry j +
 *	SPULSE_UT_MEMO_SETS its way 1 (the older of the set's two lookups):
 *	two PCs of one stack whose sets meet both stay. One array per field,
 *	so that the walk reaches each field of entry j in one instruction
 *	(base + j scaled), with no multiply or shift of j
 * @row: its result (NULL: none)
 * @cfa_off: @row's cfa_off (0 without a row)
 * @bp_off: @row's bp_off (likewise)
 * @miss: its *@miss (why there is no row)
 * @run: enum spulse_ut_run: how the walk's run steps @row without leaving
 *	its loop or reading @row (SPULSE_UT_RUN_NO: it does not)
 * @ps: the map set the entries were looked up in
 * @serial: @ps->serial then (a map set is never changed once published
 *	and every one gets a new serial, so the pair names one set for good)
 * @tag: the stamp (1 .. 255) << SPULSE_UT_MEMO_TAG_SHIFT, 0 before the
 *	first walk; entries stored under another tag are empty; bumped
 *	whenever the set changes, so forgetting everything costs nothing
 *	(on its wrap the entries are cleared)
 *
 * A row pointer is only used while the set it was found in is the walk's
 * set: that set, and every table it names, is alive for the walk (the
 * caller's rcu_read_lock()), so no pointer of a freed table is ever read.
 */
struct spulse_ut_memo {
	u64 key[2 * SPULSE_UT_MEMO_SETS];
	const struct spulse_ut_row *row[2 * SPULSE_UT_MEMO_SETS];
	s32 cfa_off[2 * SPULSE_UT_MEMO_SETS];
	s16 bp_off[2 * SPULSE_UT_MEMO_SETS];
	u8 miss[2 * SPULSE_UT_MEMO_SETS];
	u8 run[2 * SPULSE_UT_MEMO_SETS];
	const struct spulse_ut_pset *ps;
	u64 serial;
	u64 tag;
};

/**
 * spulse_ut_memo_set() - the set of a memo that remembers a PC
 * @pc: user address
 *
 * A multiplicative hash of the PC's low 32 bits (one 32-bit multiply by a
 * constant and a shift): the return addresses of one stack spread over
 * the sets, and two PCs 4 GiB apart only share a set.
 *
 * Return: the set, 0 .. SPULSE_UT_MEMO_SETS - 1 (its way 0's entry).
 */
static __always_inline unsigned long spulse_ut_memo_set(u64 pc)
{
	/* hash_32(), computed in a long: the walk indexes with it as is */
	return (unsigned long)((u32)pc * GOLDEN_RATIO_32) >>
	       (32 - (SPULSE_UT_MEMO_SHIFT - 1));
}

/**
 * struct spulse_ucache - one CPU's user-stack reader state
 * @ok: this capture has read user memory through copy_from_user_nmi()
 *	once (so the interrupted context's mm is the task's, and stays so
 *	until the capture ends): the following reads are single loads
 * @regs: the capture's user registers (here rather than on the stack:
 *	the walkers take them by address, and no local of the capture then
 *	has its address taken, which spares it a stack canary)
 * @memo: recent row lookups (kept from capture to capture)
 */
struct spulse_ucache {
	bool ok;
	struct spulse_uregs regs;
	struct spulse_ut_memo memo;
};

bool spulse_ustack_read_slow(struct spulse_ucache *uc, u64 addr, void *dst,
			     size_t len);

/**
 * spulse_ustack_read() - read the current task's user memory in a capture
 * @uc: the capture's reader state (spulse_ustack_capture() set it up, and
 *	holds pagefault_disable() while it runs)
 * @addr: user address; [@addr, @addr + @len) below TASK_SIZE_MAX
 * @dst: receives the bytes (8-byte aligned)
 * @len: 8 or 16 (the walkers' reads; anything else takes the slow path)
 *
 * copy_from_user_nmi() checks on every call that the interrupted context
 * runs on the task's own mm (nmi_uaccess_okay(), not exported) and sets up
 * a copy of any length: ~50 instructions before the bytes. perf's user
 * callchain makes that check once per stack, then loads word by word. The
 * same here: the first read of a capture that copy_from_user_nmi()
 * completes (spulse_ustack_read_slow()) proves the check, and what it
 * checked cannot change before the capture ends (the sampler's NMI or
 * interrupt, or a scheduler probe with interrupts off, holds this CPU
 * while the interrupted code waits), so the following reads are inline
 * loads between user_access_begin() and user_access_end(). With page
 * faults disabled a word that is not resident fails through the exception
 * fixup, as the copy would, and is never faulted in.
 *
 * Return: true when all @len bytes were read.
 */
static __always_inline bool spulse_ustack_read(struct spulse_ucache *uc,
					       u64 addr, void *dst, size_t len)
{
	const u64 __user *p = (const u64 __user *)(uintptr_t)addr;
	u64 *d = dst;

	if (likely(uc->ok) && (len == 8 || len == 16)) {
		if (!user_access_begin(p, len))
			return false;
		unsafe_get_user(d[0], p, fault);
		if (len == 16)
			unsafe_get_user(d[1], p + 1, fault);
		user_access_end();
		return true;
fault:
		user_access_end();
		return false;
	}
	return spulse_ustack_read_slow(uc, addr, dst, len);
}

/**
 * spulse_ustack_read2() - spulse_ustack_read() of two words, by value
 * @uc: the capture's reader state
 * @addr: user address; [@addr, @addr + 16) below TASK_SIZE_MAX
 * @w0: receives the word at @addr
 * @w1: receives the word at @addr + 8
 *
 * The same reads as spulse_ustack_read(@uc, @addr, buf, 16); the words
 * come back in registers (a frame-pointer frame's caller's BP and return
 * address).
 *
 * Return: true when both words were read.
 */
static __always_inline bool spulse_ustack_read2(struct spulse_ucache *uc,
						u64 addr, u64 *w0, u64 *w1)
{
	const u64 __user *p = (const u64 __user *)(uintptr_t)addr;
	u64 a, b, t[2];

	if (likely(uc->ok)) {
		if (!user_access_begin(p, 16))
			return false;
		unsafe_get_user(a, p, fault);
		unsafe_get_user(b, p + 1, fault);
		user_access_end();
		*w0 = a;
		*w1 = b;
		return true;
fault:
		user_access_end();
		return false;
	}
	if (!spulse_ustack_read_slow(uc, addr, t, sizeof(t)))
		return false;
	*w0 = t[0];
	*w1 = t[1];
	return true;
}

struct pt_regs;
struct task_struct;
struct spulse_uw_res;
struct spulse_cpu_stats;

/**
 * enum spulse_ucut - the stats key a cut user stack counts under
 *	(ustack_cut_*, docs/KERNEL.md "User unwinding")
 * @SPULSE_UCUT_NO_TABLE_YET: no table covered the PC and its frame pointer
 *	did not lead on, while its table can still come: tables are in use
 *	(unwind auto or tables, some loaded) but the process has no map set
 *	yet, or the PC is in none of its set's mappings
 * @SPULSE_UCUT_NO_TABLE: the same with no table to come: unwind=fp, no
 *	table loaded at all, or the PC's mapping is one the set says has no
 *	table
 * @SPULSE_UCUT_NO_ROW: the PC's table has no rule there (no CFI)
 * @SPULSE_UCUT_TABLE_UNKNOWN: the PC's row is UNKNOWN
 * @SPULSE_UCUT_DEPTH: max_user_depth reached with frames left
 * @SPULSE_UCUT_UNREADABLE: a table step could not read the stack
 * @SPULSE_UCUT_BAD_FRAME: a table step broke a safety rule
 * @SPULSE_UCUT_COMPAT32: a 32-bit task (only its IP)
 * @SPULSE_UCUT_NR: number of keys
 */
enum spulse_ucut {
	SPULSE_UCUT_NO_TABLE_YET,
	SPULSE_UCUT_NO_TABLE,
	SPULSE_UCUT_NO_ROW,
	SPULSE_UCUT_TABLE_UNKNOWN,
	SPULSE_UCUT_DEPTH,
	SPULSE_UCUT_UNREADABLE,
	SPULSE_UCUT_BAD_FRAME,
	SPULSE_UCUT_COMPAT32,
	SPULSE_UCUT_NR
};

enum spulse_ucut spulse_ustack_cut_key(u8 cut, enum spulse_unwind_mode mode,
				       bool tables);
void spulse_ustack_cut_count(struct spulse_cpu_stats *st, enum spulse_ucut k);

bool spulse_task_has_user(const struct task_struct *t);
int spulse_ustack_capture(struct pt_regs *uregs, enum spulse_unwind_mode mode,
			  struct spulse_ucache *uc, u64 *out, u32 max,
			  struct spulse_uw_res *res);

#endif /* SPULSE_KMOD_USTACK_H */
