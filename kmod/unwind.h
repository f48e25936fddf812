/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table-driven user unwinding (unwind.c: the walk and lookups, pure;
 * unwind_table.c: the registry the debugfs file "unwind" fills), see
 * docs/UNWIND.md, "In the kernel". Tables and per-process map sets are
 * published with RCU; readers (sampler, off-CPU probes) hold
 * rcu_read_lock_sched() across a walk (a preempt-disabled section, which
 * synchronize_rcu() and kfree_rcu() wait for).
 */
#ifndef SPULSE_KMOD_UNWIND_H
#define SPULSE_KMOD_UNWIND_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <spulse/unwind.h>

#include "ustack.h"

#define SPULSE_UT_HASH_SHIFT	10	/* pid -> map set buckets */
/*
 * Map sets per bucket at most (a new pid whose bucket is full is refused,
 * -ENOSPC): a reader walks at most this many + 1 (a replacement in flight)
 * whatever pids a writer sends.
 */
#define SPULSE_UT_BUCKET_MAX	16

/* Offsets in the kernel's struct ucontext (x86-64) read at a SIGNAL row. */
#define SPULSE_UC_MCONTEXT	40
#define SPULSE_UC_BP		(SPULSE_UC_MCONTEXT + 80)
#define SPULSE_UC_SP		(SPULSE_UC_MCONTEXT + 120)
#define SPULSE_UC_IP		(SPULSE_UC_MCONTEXT + 128)

/**
 * struct spulse_ut_tab - one loaded table
 * @node: in spulse_ut_reg.tables (writers only)
 * @id: table id chosen by userspace
 * @n_rows: rows in @rows (>= 1)
 * @lo: first ELF address covered
 * @hi: end of the covered range (exclusive)
 * @rows: the rows, inside @msg (never written after publication)
 * @idx: block index (NULL = none): @idx[b] is the row covering table
 *	offset b << @shift, so a lookup searches only rows @idx[b] ..
 *	@idx[b + 1]; @idx_len entries, the last one n_rows - 1
 * @idx_len: entries in @idx
 * @shift: log2 of the index block size
 * @msg: the ADD message buffer that holds @rows (kvmalloc'd, owned)
 * @bytes: memory charged against the bound
 * @build_id: the ELF's build-id (informational)
 * @build_id_len: bytes used in @build_id
 */
struct spulse_ut_tab {
	struct list_head node;
	u32 id;
	u32 n_rows;
	u64 lo;
	u64 hi;
	const struct spulse_ut_row *rows;
	u32 *idx;
	u32 idx_len;
	u8 shift;
	void *msg;
	size_t bytes;
	u8 build_id[SPULSE_UT_BUILD_ID_MAX];
	u8 build_id_len;
};

/**
 * struct spulse_ut_ment - one mapping of a process onto a table
 * @start: first user address
 * @end: end (exclusive)
 * @bias: table address = user address - @bias
 * @tab: the table (outlives every map set that names it); NULL: the
 *	mapping is known to have no table (walked by the frame-pointer step)
 */
struct spulse_ut_ment {
	u64 start;
	u64 end;
	u64 bias;
	const struct spulse_ut_tab *tab;
};

/**
 * struct spulse_ut_pset - the mappings of one process, sorted by @start
 * @node: in a spulse_ut_reg.procs bucket (RCU hlist)
 * @rcu: for kfree_rcu()
 * @pid: tgid
 * @n: entries in @map (>= 1)
 * @serial: non-zero, different for every map set ever made (never changed
 *	after publication, like the rest): what a struct spulse_ut_memo
 *	remembers lookups in
 * @dead: the process exited or exec'd; readers ignore the set, the reap
 *	work unpublishes it
 * @bytes: memory charged against the bound
 * @map: the mappings
 */
struct spulse_ut_pset {
	struct hlist_node node;
	struct rcu_head rcu;
	u32 pid;
	u32 n;
	u64 serial;
	bool dead;
	size_t bytes;
	struct spulse_ut_ment map[];
};

/**
 * struct spulse_ut_reg - a registry of tables and map sets
 * @lock: serializes writers (messages, retirement, teardown)
 * @tables: loaded tables (@lock)
 * @tab_ids: the same tables by id (@lock; lookups not linear in their number)
 * @procs: map sets by hash_32(pid); readers walk them under RCU
 * @reap: work that unpublishes map sets marked dead
 * @limit: memory bound in bytes
 * @bytes: memory charged (tables + map sets)
 * @ntables: loaded tables
 * @rows: rows over all tables
 * @nprocs: published map sets (read locklessly as a hint)
 * @nmaps: mappings over all map sets
 * @refused_invalid: messages refused with -EINVAL (or -E2BIG)
 * @refused_nomem: messages refused for the memory bound (or no memory)
 * @refused_other: messages refused with -EEXIST or -ENOENT
 */
struct spulse_ut_reg {
	struct mutex lock;
	struct list_head tables;
	struct xarray tab_ids;
	struct hlist_head procs[1U << SPULSE_UT_HASH_SHIFT];
	struct work_struct reap;
	u64 limit;
	u64 bytes;
	u32 ntables;
	u64 rows;
	u32 nprocs;
	u32 nmaps;
	u64 refused_invalid;
	u64 refused_nomem;
	u64 refused_other;
};

/**
 * enum spulse_uw_cut - why a user stack walk was cut (docs/KERNEL.md,
 *	"User unwinding": the ustack_cut_* keys)
 * @SPULSE_UW_CUT_NONE: not cut
 * @SPULSE_UW_CUT_NO_SET: no row covered the PC and the frame-pointer step
 *	did not lead on (or was not allowed): the process has no map set
 * @SPULSE_UW_CUT_NO_MAP: the same, and the process has a map set but the
 *	PC is in none of its mappings
 * @SPULSE_UW_CUT_NO_TAB: the same, and the PC's mapping says it has no
 *	table (a mapping without a table: @tab NULL)
 * @SPULSE_UW_CUT_NO_ROW: the same, and the PC's mapping has a table with
 *	no rule there (outside the table's range, or a NONE row: no CFI)
 * @SPULSE_UW_CUT_UNKNOWN: the PC's row is UNKNOWN (the CFI says what a
 *	row cannot)
 * @SPULSE_UW_CUT_DEPTH: the depth limit was reached with frames left
 * @SPULSE_UW_CUT_UNREADABLE: a table step's read failed (not resident,
 *	or not user memory)
 * @SPULSE_UW_CUT_BAD_FRAME: a table step broke a safety rule (the SP does
 *	not move up, a misaligned CFA, a return address or signal IP that is
 *	not a user address), or the IP itself is not a user address
 * @SPULSE_UW_CUT_COMPAT32: a 32-bit task: only its IP is taken
 * @SPULSE_UW_CUT_NR: number of values
 *
 * A frame-pointer step is taken only where no row covers the PC, so
 * whatever stops it (a BP that is no frame pointer, an unreadable or
 * non-user frame) is counted as the missing table's cause (NO_SET, NO_MAP,
 * NO_TAB or NO_ROW), except the depth limit.
 */
enum spulse_uw_cut {
	SPULSE_UW_CUT_NONE = 0,
	SPULSE_UW_CUT_NO_SET,
	SPULSE_UW_CUT_NO_MAP,
	SPULSE_UW_CUT_NO_TAB,
	SPULSE_UW_CUT_NO_ROW,
	SPULSE_UW_CUT_UNKNOWN,
	SPULSE_UW_CUT_DEPTH,
	SPULSE_UW_CUT_UNREADABLE,
	SPULSE_UW_CUT_BAD_FRAME,
	SPULSE_UW_CUT_COMPAT32,
	SPULSE_UW_CUT_NR
};

/**
 * struct spulse_uw_res - what one table-driven walk did
 * @table_steps: frames found through a table row
 * @fp_steps: frames found through the frame-pointer step
 * @complete: the walk ended on an END row (the stack's real root)
 * @truncated: the walk was cut (the truncated marker is due)
 * @cut: why (enum spulse_uw_cut; SPULSE_UW_CUT_NONE unless @truncated)
 * @cut_pc: the PC of the frame the walk stopped at (the last one in the
 *	output; 0 when none)
 */
struct spulse_uw_res {
	u32 table_steps;
	u32 fp_steps;
	bool complete;
	bool truncated;
	u8 cut;
	u64 cut_pc;
};

#define SPULSE_UT_BLOCK_SHIFT_MIN	8	/* index blocks >= 256 bytes */
u32 spulse_ut_index_len(u64 span, u32 n_rows, u8 *shift);
void spulse_ut_index_fill(const struct spulse_ut_row *rows, u32 n_rows,
			  u8 shift, u32 *idx, u32 len);
const struct spulse_ut_row *spulse_ut_row_find(const struct spulse_ut_tab *t,
					       u64 addr);
const struct spulse_ut_ment *spulse_ut_map_find(const struct spulse_ut_pset *ps,
						u64 pc);
const struct spulse_ut_row *spulse_ut_lookup(const struct spulse_ut_pset *ps,
					     u64 pc);
const struct spulse_ut_row *spulse_ut_lookup_why(const struct spulse_ut_pset *ps,
						 u64 pc, u8 *miss);
int spulse_unwind_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx,
		       const struct spulse_ut_pset *ps, bool fp_fallback,
		       u64 *out, u32 max, struct spulse_uw_res *res);
int spulse_unwind_walk_uc(const struct spulse_uregs *r,
			  struct spulse_ucache *uc,
			  const struct spulse_ut_pset *ps, bool fp_fallback,
			  u64 *out, u32 max, struct spulse_uw_res *res);
void spulse_ut_memo_begin(struct spulse_ut_memo *m,
			  const struct spulse_ut_pset *ps);
const struct spulse_ut_row *spulse_ut_memo_lookup(struct spulse_ut_memo *m,
						  const struct spulse_ut_pset *ps,
						  u64 pc, u8 *miss);
int spulse_unwind_walk_memo(const struct spulse_uregs *r, u64 task_size,
			    spulse_read_fn rd, void *ctx,
			    const struct spulse_ut_pset *ps,
			    struct spulse_ut_memo *memo, bool fp_fallback,
			    u64 *out, u32 max, struct spulse_uw_res *res);

u64 spulse_ut_serial_next(void);
int spulse_ut_check_rows(const struct spulse_ut_add *a,
			 const struct spulse_ut_row *rows);
int spulse_ut_check_maps(const struct spulse_ut_mapset *ms,
			 const struct spulse_ut_map *m);
void spulse_ut_reg_init(struct spulse_ut_reg *reg, u64 limit);
void spulse_ut_reg_free(struct spulse_ut_reg *reg);
ssize_t spulse_ut_apply(struct spulse_ut_reg *reg, void *msg, size_t len);
const struct spulse_ut_pset *spulse_ut_pset_find(struct spulse_ut_reg *reg,
						 u32 pid);
void spulse_ut_forget(struct spulse_ut_reg *reg, u32 pid);
void spulse_ut_mark_dead(struct spulse_ut_reg *reg, u32 pid);
void spulse_ut_reap(struct spulse_ut_reg *reg);

extern struct spulse_ut_reg spulse_ut;
int spulse_unwind_init(void);
void spulse_unwind_exit(void);

#endif /* SPULSE_KMOD_UNWIND_H */
