/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel stacks (kstack.c): capture and trimming of the handler's own
 * frames.
 */
#ifndef SPULSE_KMOD_KSTACK_H
#define SPULSE_KMOD_KSTACK_H

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/types.h>
#include <asm/unwind.h>

struct pt_regs;

int spulse_kstack_trim(const unsigned long *ent, unsigned int n,
		       unsigned long ip);
#define SPULSE_KSTACK_SLACK	64	/* handler frames stack_trace_save sees */
int spulse_kstack_capture(struct pt_regs *regs, unsigned long *out, u32 cap,
			  u32 max, bool *too_deep, bool *truncated);

/**
 * spulse_kstack_here() - the current kernel stack, leaf first
 * @out: frames (room for @max + SPULSE_KSTACK_SLACK)
 * @max: most frames kept
 * @too_deep: set when there are more than @max
 * @to_irq: stop at the interrupt entry (the walk's first register frame)
 *
 * Description:
 * For the off-CPU probes: the ORC unwinder started at the current frame
 * (the same walk stack_trace_save() does), with the leading frames inside
 * this module left out, so the leaf is the scheduler or wakeup code that
 * fired the tracepoint. Every frame is a return address (stored - 1)
 * except one reached through an interrupt register frame, which is an
 * exact IP.
 *
 * With @to_irq (a wakeup in interrupt context: the waker is the interrupt,
 * not the task it interrupted) the walk ends at the first frame reached
 * through a register frame: the stack ends at the interrupt entry
 * (asm_sysvec_..., asm_common_interrupt, ...) and the interrupted context
 * is not walked. In task context there is no such frame below the
 * syscall entry (user registers end the walk), so the flag changes
 * nothing there. Without ORC: stack_trace_save(), same trimming, and
 * @to_irq is ignored (no register frames are reported).
 *
 * Always inlined into the probe, so the unwinder steps through one module
 * frame (the probe's) instead of three: each module frame costs two
 * module-tree lookups (ORC table and kernel-text check), ~0.3 us each
 * under TCG.
 *
 * Return: the number of frames in @out.
 */
static __always_inline int spulse_kstack_here(unsigned long *out, u32 max,
					      bool *too_deep, bool to_irq)
{
	bool mine = true;
	u32 n = 0;
#ifdef CONFIG_UNWINDER_ORC
	struct unwind_state st;
	unsigned long addr;

	*too_deep = false;
	if (!max)
		return 0;
	for (unwind_start(&st, current, NULL, NULL); !unwind_done(&st);
	     unwind_next_frame(&st)) {
		if (to_irq && st.signal)
			break;
		addr = unwind_get_return_address(&st);
		if (!addr)
			break;
		if (mine && within_module(addr, THIS_MODULE))
			continue;
		mine = false;
		if (n >= max) {
			*too_deep = true;
			break;
		}
		out[n++] = st.signal ? addr : addr - 1;
	}
	return n;
#else
	u32 i, got;

	*too_deep = false;
	got = stack_trace_save(out, max + SPULSE_KSTACK_SLACK, 0);
	for (i = 0; i < got; i++) {
		if (mine && within_module(out[i], THIS_MODULE))
			continue;
		mine = false;
		if (n >= max) {
			*too_deep = true;
			break;
		}
		out[n++] = out[i] - 1;
	}
	return n;
#endif
}

#endif /* SPULSE_KMOD_KSTACK_H */
