// SPDX-License-Identifier: GPL-2.0
/*
 * User stack walker: follows the x86-64 frame-pointer chain
 * ([bp] = caller's bp, [bp + 8] = return address) through a caller-supplied
 * memory reader, so the same code runs in the NMI-safe sampler (reader =
 * copy_from_user_nmi) and in KUnit (reader = a crafted buffer). Also the
 * one user-stack capture of the current task (spulse_ustack_capture()),
 * shared by the sampler and the off-CPU probes: same reader, walker,
 * limits and truncation rules.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "ustack.h"
#include "percpu.h"
#include "unwind.h"
#include "kunit_export.h"

/**
 * spulse_ustack_walk() - walk a user frame-pointer chain
 * @r: user registers at kernel entry (ip exact, sp, bp)
 * @task_size: first address that is not user memory (TASK_SIZE)
 * @rd: reads @len bytes at user address @addr into @dst; 0 on success;
 *	NULL: the current task's memory, spulse_ustack_read(@ctx, ...)
 * @ctx: passed to @rd (a struct spulse_ucache when @rd is NULL)
 * @out: receives the frames, leaf (= @r->ip) first; return addresses are
 *	normalized (return address - 1)
 * @max: capacity of @out, the depth limit (>= 1)
 * @truncated: set when the walk was cut rather than ending cleanly
 *
 * The chain ends cleanly at a frame pointer of 0 or a return address of 0.
 * It is cut (truncated) when the depth limit is reached with a non-zero
 * frame pointer left, when a frame pointer is misaligned, not above the
 * previous frame (below @r->sp for the first), or not below @task_size,
 * when the frame cannot be read, or when a return address read from the
 * stack is not a user address (a kernel address is never followed).
 *
 * Return: number of frames stored in @out (0 only if @r->ip is not a user
 * address).
 */
int spulse_ustack_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx, u64 *out, u32 max,
		       bool *truncated)
{
	u64 bp = r->bp, lo = r->sp, fr[2];
	u32 n = 0;

	*truncated = false;
	if (!max || r->ip >= task_size || task_size < 16) {
		*truncated = true;
		return 0;
	}
	out[n++] = r->ip;
	while (bp) {
		if ((bp & 7) || bp < lo || bp > task_size - 16 || n >= max) {
			*truncated = true;
			break;
		}
		if (rd ? rd(ctx, bp, fr, sizeof(fr)) != 0 :
			 !spulse_ustack_read(ctx, bp, fr, sizeof(fr))) {
			*truncated = true;
			break;
		}
		if (!fr[1])
			break;
		if (fr[1] >= task_size) {
			*truncated = true;
			break;
		}
		out[n++] = fr[1] - 1;
		lo = bp + 16;
		bp = fr[0];
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ustack_walk);

/**
 * spulse_ustack_read_slow() - spulse_ustack_read() through a whole copy
 * @uc: the capture's reader state
 * @addr: user address
 * @dst: receives the bytes
 * @len: how many
 *
 * copy_from_user_nmi(); once one completes, @uc->ok lets the following
 * reads of the capture take the inline path.
 *
 * Return: true when all @len bytes were read.
 */
bool spulse_ustack_read_slow(struct spulse_ucache *uc, u64 addr, void *dst,
			     size_t len)
{
	if (copy_from_user_nmi(dst, (const void __user *)(uintptr_t)addr, len))
		return false;
	uc->ok = true;
	return true;
}

#ifdef PF_USER_WORKER
#define SPULSE_PF_NO_USER	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER)
#else
#define SPULSE_PF_NO_USER	(PF_KTHREAD | PF_IO_WORKER)
#endif

/**
 * spulse_task_has_user() - whether a task has a user stack to capture
 * @t: the task
 *
 * Kernel threads, tasks without an mm and kernel-created workers that
 * share a process's mm but never run in user mode (io_uring's io-wq
 * workers, PF_IO_WORKER in 6.1; PF_USER_WORKER where it exists) have none:
 * a worker's saved user registers are its creator's with ip = sp = 0, so
 * a walk would give a frame at 0 and the creator's stale frames.
 *
 * Return: true when @t has user registers worth walking.
 */
bool spulse_task_has_user(const struct task_struct *t)
{
	return t->mm && !(t->flags & SPULSE_PF_NO_USER);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_task_has_user);

/**
 * spulse_ustack_cut_key() - the stats key of a cut user stack
 * @cut: the walk's enum spulse_uw_cut (not SPULSE_UW_CUT_NONE)
 * @mode: enum spulse_unwind_mode (parameter unwind)
 * @tables: at least one table is loaded (a table loader is at work)
 *
 * A walk cut where no table covered the PC is "no table yet" when its
 * table can still come: tables are in use (@mode not fp, @tables) and the
 * process has no map set (the loader sends one per process it has seen,
 * after the meta stream announced its modules) or the PC lies outside
 * every mapping of its set (a module mapped since the set was sent, e.g.
 * by dlopen(), whose table or MAP is still being made). The kernel cannot
 * tell those from memory the loader never gives a table (JIT code, a file
 * without .eh_frame) unless the set maps it without a table: that, and
 * tables not in use, is "no table".
 *
 * Return: the enum spulse_ucut key.
 */
enum spulse_ucut spulse_ustack_cut_key(u8 cut, enum spulse_unwind_mode mode,
				       bool tables)
{
	bool can_come = mode != SPULSE_UNWIND_FP && tables;

	switch (cut) {
	case SPULSE_UW_CUT_NO_SET:
	case SPULSE_UW_CUT_NO_MAP:
		return can_come ? SPULSE_UCUT_NO_TABLE_YET :
				  SPULSE_UCUT_NO_TABLE;
	case SPULSE_UW_CUT_NO_TAB:
		return SPULSE_UCUT_NO_TABLE;
	case SPULSE_UW_CUT_NO_ROW:
		return SPULSE_UCUT_NO_ROW;
	case SPULSE_UW_CUT_UNKNOWN:
		return SPULSE_UCUT_TABLE_UNKNOWN;
	case SPULSE_UW_CUT_DEPTH:
		return SPULSE_UCUT_DEPTH;
	case SPULSE_UW_CUT_UNREADABLE:
		return SPULSE_UCUT_UNREADABLE;
	case SPULSE_UW_CUT_COMPAT32:
		return SPULSE_UCUT_COMPAT32;
	default:
		return SPULSE_UCUT_BAD_FRAME;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ustack_cut_key);

/**
 * spulse_ustack_cut_count() - count one cut user stack under its key
 * @st: the calling CPU's counters
 * @k: the key (spulse_ustack_cut_key())
 */
void spulse_ustack_cut_count(struct spulse_cpu_stats *st, enum spulse_ucut k)
{
	switch (k) {
	case SPULSE_UCUT_NO_TABLE_YET:
		st->ustack_cut_no_table_yet++;
		break;
	case SPULSE_UCUT_NO_TABLE:
		st->ustack_cut_no_table++;
		break;
	case SPULSE_UCUT_NO_ROW:
		st->ustack_cut_no_row++;
		break;
	case SPULSE_UCUT_TABLE_UNKNOWN:
		st->ustack_cut_table_unknown++;
		break;
	case SPULSE_UCUT_DEPTH:
		st->ustack_cut_depth++;
		break;
	case SPULSE_UCUT_UNREADABLE:
		st->ustack_cut_unreadable++;
		break;
	case SPULSE_UCUT_COMPAT32:
		st->ustack_cut_compat32++;
		break;
	default:
		st->ustack_cut_bad_frame++;
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ustack_cut_count);

/* The frame-pointer walker's cut, in the table walker's terms. */
static void spulse_ustack_fp_cut(struct spulse_uw_res *res, const u64 *out,
				 int n, u32 max)
{
	if (!res->truncated)
		return;
	res->cut = !n ? SPULSE_UW_CUT_BAD_FRAME :
		   (u32)n >= max ? SPULSE_UW_CUT_DEPTH : SPULSE_UW_CUT_NO_SET;
	res->cut_pc = n ? out[n - 1] : 0;
}

/**
 * spulse_ustack_capture() - capture the current task's user stack
 * @uregs: its user registers (the interrupt registers when they are user
 *	mode, else task_pt_regs(current))
 * @mode: enum spulse_unwind_mode (parameter unwind)
 * @uc: the calling CPU's reader state, &c->uc of its struct spulse_cpu;
 *	a cut stack is counted in that struct's stats
 * @out: receives the frames, leaf first, normalized
 * @max: depth limit (>= 1)
 * @res: what the walk did (@res->truncated: the walk was cut, @res->cut:
 *	why)
 *
 * 64-bit tasks: with a map set loaded for the current process (and @mode
 * not fp) spulse_unwind_walk_uc() (spulse_unwind_walk_memo() with the CPU's
 * memo of recent lookups, @uc->memo), under rcu_read_lock_sched(), falling back to the frame-pointer step where no row
 * covers the PC unless @mode is tables; without one, spulse_ustack_walk()
 * (@mode tables: the leaf alone, truncated). A 32-bit (compat) task gets
 * only its IP, marked truncated. Every cut stack (samples and off-CPU
 * captures alike) adds 1 to one ustack_cut_* counter of the CPU
 * (spulse_ustack_cut_key()). Callers check spulse_task_has_user() before
 * using task_pt_regs(). Safe in NMI, hardirq and scheduler context
 * (pagefault_disable(), copy_from_user_nmi() then __get_user(): no fault
 * handling, no sleeping; the counters and @uc are the CPU's own, written
 * under its busy flag).
 *
 * Return: number of frames in @out.
 */
int spulse_ustack_capture(struct pt_regs *uregs, enum spulse_unwind_mode mode,
			  struct spulse_ucache *uc, u64 *out, u32 max,
			  struct spulse_uw_res *res)
{
	struct spulse_cpu *c = container_of(uc, struct spulse_cpu, uc);
	struct spulse_uregs *ur = &uc->regs;
	const struct spulse_ut_pset *ps;
	int n = 0;

	ur->ip = uregs->ip;
	ur->sp = uregs->sp;
	ur->bp = uregs->bp;

	memset(res, 0, sizeof(*res));
	if (user_64bit_mode(uregs)) {
		uc->ok = false;
		ps = NULL;
		pagefault_disable();
		if (mode != SPULSE_UNWIND_FP &&
		    (READ_ONCE(spulse_ut.nprocs) ||
		     mode == SPULSE_UNWIND_TABLES)) {
			/*
			 * a preempt-disabled RCU reader: since the flavours
			 * were merged (4.20) synchronize_rcu() and
			 * kfree_rcu() wait for it as for rcu_read_lock(),
			 * which under PREEMPT_RCU costs two calls a sample
			 */
			rcu_read_lock_sched();
			ps = spulse_ut_pset_find(&spulse_ut,
						 task_tgid_nr(current));
			if (ps || mode == SPULSE_UNWIND_TABLES)
				n = spulse_unwind_walk_uc(ur, uc, ps,
							  mode == SPULSE_UNWIND_AUTO,
							  out, max, res);
			rcu_read_unlock_sched();
		}
		if (!ps && mode != SPULSE_UNWIND_TABLES) {
			n = spulse_ustack_walk(ur, TASK_SIZE_MAX, NULL, uc,
					       out, max, &res->truncated);
			res->fp_steps = n > 1 ? n - 1 : 0;
			spulse_ustack_fp_cut(res, out, n, max);
		}
		pagefault_enable();
	} else if (ur->ip < TASK_SIZE_MAX && max) {
		out[n++] = ur->ip;
		res->truncated = true;
		res->cut = SPULSE_UW_CUT_COMPAT32;
		res->cut_pc = ur->ip;
	}
	if (res->truncated) {
		bool tables = READ_ONCE(spulse_ut.ntables);

		spulse_ustack_cut_count(&c->stats,
					spulse_ustack_cut_key(res->cut, mode,
							      tables));
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ustack_capture);
