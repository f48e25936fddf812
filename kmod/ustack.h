/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks (ustack.c): the frame-pointer walker over a "read memory"
 * callback (pure) and the capture of the current task's user stack, by
 * frame pointers or unwind tables, through a window of user memory.
 */
#ifndef SPULSE_KMOD_USTACK_H
#define SPULSE_KMOD_USTACK_H

#include <linux/types.h>

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

#define SPULSE_UCACHE		512
#define SPULSE_UCACHE_FIRST	128	/* first window; doubles per copy */

/**
 * struct spulse_ucache - window of user stack read in one copy
 * @base: user address of @buf[0]
 * @len: valid bytes in @buf (0 = empty)
 * @win: bytes the next copy asks for (SPULSE_UCACHE_FIRST, doubling up to
 *	SPULSE_UCACHE)
 * @buf: the bytes
 */
struct spulse_ucache {
	u64 base;
	u32 len;
	u32 win;
	u8 buf[SPULSE_UCACHE];
};

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
