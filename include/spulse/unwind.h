/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Unwind-table ABI between userspace (the table builder in user/unwind/ and
 * the loader in spulse-drain) and spulse.ko (kmod/unwind_table.c validates
 * and publishes, kmod/unwind.c steps). docs/UNWIND.md is the prose for every
 * value here and docs/CONTRACTS.md names the debugfs file; change all three
 * together.
 *
 * Userspace writes messages to debugfs spulse/unwind (root only, mode 0200
 * for writes). One write(2) carries exactly one message: a struct
 * spulse_ut_msg followed by the op's body; @len is the whole message. The
 * write returns the message length on success or a negative errno:
 * -EINVAL for anything malformed (the message is refused whole, nothing of
 * it is kept), -ENOSPC when the module's memory bound (unwind_mem_kb) would
 * be exceeded, -EEXIST for a table id already loaded, -ENOENT for a map
 * naming a table that is not loaded, -E2BIG for more maps per process than
 * SPULSE_UT_MAPS_MAX. Every field is little-endian, as the host.
 *
 * Table addresses are the ELF file's virtual addresses (p_vaddr space). A
 * process mapping [start, end) uses table @table_id with
 * table_address = user_pc - @bias.
 */
#ifndef SPULSE_UNWIND_H
#define SPULSE_UNWIND_H

#include "types.h"

#define SPULSE_UT_MAGIC		0x54555053u	/* "SPUT" */
#define SPULSE_UT_VERSION	1
#define SPULSE_UT_ROWS_MAX	(1u << 22)	/* rows per table */
#define SPULSE_UT_MAPS_MAX	512		/* mappings per process */
#define SPULSE_UT_BUILD_ID_MAX	20

/* Message ops. */
enum spulse_ut_op {
	SPULSE_UT_OP_ADD = 1,	/* struct spulse_ut_add, then n_rows rows */
	SPULSE_UT_OP_DEL = 2,	/* struct spulse_ut_del */
	SPULSE_UT_OP_MAP = 3,	/* struct spulse_ut_mapset, then n entries */
};

/**
 * struct spulse_ut_msg - header of every message
 * @magic: SPULSE_UT_MAGIC
 * @version: SPULSE_UT_VERSION
 * @op: enum spulse_ut_op
 * @len: bytes of the whole message, this header included
 * @rsvd: 0
 */
struct spulse_ut_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t len;
	uint32_t rsvd;
};

/**
 * struct spulse_ut_add - load one table (op ADD)
 * @table_id: chosen by userspace, non-zero, not loaded yet
 * @n_rows: rows that follow (1 .. SPULSE_UT_ROWS_MAX)
 * @lo: first ELF address the table covers
 * @hi: end of the covered range (exclusive), @lo < @hi, @hi - @lo < 2^32
 * @build_id: the ELF's build-id (informational, shown in debugfs)
 * @build_id_len: bytes used in @build_id (0 .. SPULSE_UT_BUILD_ID_MAX)
 * @rsvd: 0
 *
 * Row i covers [@lo + row[i].start, @lo + row[i + 1].start), the last row
 * up to @hi. Starts are strictly increasing and below @hi - @lo. An
 * address inside [@lo, @hi) that no FDE covers is a row of kind
 * SPULSE_UT_NONE (the unwinder then falls back to the frame-pointer step).
 */
struct spulse_ut_add {
	uint32_t table_id;
	uint32_t n_rows;
	uint64_t lo;
	uint64_t hi;
	uint8_t build_id[SPULSE_UT_BUILD_ID_MAX];
	uint8_t build_id_len;
	uint8_t rsvd[3];
};

/*
 * How a row finds the CFA (canonical frame address = the caller's SP):
 * NONE: no CFI covers the address: the frame-pointer step is used.
 * CFA_SP: CFA = SP + cfa_off.
 * CFA_BP: CFA = BP + cfa_off.
 * PLT: the lazy-binding PLT stub expression:
 *	CFA = SP + cfa_off + ((PC & 15) >= 11 ? 8 : 0).
 * CFA_DEREF_BP: a function that realigned its stack (GCC's DRAP prologue:
 *	lea 8(%rsp),%r10; and $-N,%rsp; push -8(%r10); push %rbp;
 *	mov %rsp,%rbp; push %r10): CFA = *(BP + cfa_off), and the caller's BP
 *	is *(BP) (CFA - BP is not constant there); @bp_off is 0.
 * SIGNAL: the signal return trampoline (__restore_rt): SP points at the
 *	kernel's struct ucontext; the caller's BP, SP and exact IP are read
 *	from its uc_mcontext.
 * END: the outermost frame (return address undefined: _start, the thread
 *	start path): the stack is complete.
 * UNKNOWN: the CFI here says what a row cannot: stop, truncated.
 */
enum spulse_ut_kind {
	SPULSE_UT_NONE = 0,
	SPULSE_UT_CFA_SP = 1,
	SPULSE_UT_CFA_BP = 2,
	SPULSE_UT_PLT = 3,
	SPULSE_UT_CFA_DEREF_BP = 4,
	SPULSE_UT_SIGNAL = 5,
	SPULSE_UT_END = 6,
	SPULSE_UT_UNKNOWN = 7,
};
#define SPULSE_UT_KIND_MAX	7

/**
 * struct spulse_ut_row - one address range's rule (12 bytes)
 * @start: offset of the range from the table's @lo
 * @cfa_off: see enum spulse_ut_kind
 * @bp_off: the caller's BP is saved at CFA + @bp_off (a negative multiple
 *	of 8, >= -2048); 0 = BP is unchanged in this range (kinds CFA_SP,
 *	CFA_BP, PLT); 0 for CFA_DEREF_BP, whose rule is in the kind
 * @kind: enum spulse_ut_kind
 * @flags: 0
 *
 * For kinds CFA_SP, CFA_BP, PLT and CFA_DEREF_BP the return address is at
 * CFA - 8 (the x86-64 call convention; the builder emits UNKNOWN where the
 * CFI says otherwise) and the caller's SP is the CFA.
 */
struct spulse_ut_row {
	uint32_t start;
	int32_t cfa_off;
	int16_t bp_off;
	uint8_t kind;
	uint8_t flags;
};

/**
 * struct spulse_ut_del - unload a table (op DEL); its mappings in every
 *	process are dropped with it
 * @table_id: a loaded table
 * @rsvd: 0
 */
struct spulse_ut_del {
	uint32_t table_id;
	uint32_t rsvd;
};

/**
 * struct spulse_ut_map - one mapping of a process onto a table
 * @start: first user address of the mapping
 * @end: end (exclusive), @start < @end <= TASK_SIZE
 * @bias: table_address = user address - @bias
 * @table_id: a loaded table
 * @rsvd: 0
 */
struct spulse_ut_map {
	uint64_t start;
	uint64_t end;
	uint64_t bias;
	uint32_t table_id;
	uint32_t rsvd;
};

/**
 * struct spulse_ut_mapset - replace all mappings of one process (op MAP)
 * @pid: tgid as the meta stream's module records name it
 * @n: entries that follow (0 = forget the process), sorted by @start,
 *	not overlapping, at most SPULSE_UT_MAPS_MAX
 * @rsvd: 0
 */
struct spulse_ut_mapset {
	uint32_t pid;
	uint32_t n;
	uint64_t rsvd;
};

#endif /* SPULSE_UNWIND_H */
