// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stack capture for one sample: the interrupted kernel IP (exact)
 * and its callers (return addresses, normalized to return address - 1),
 * leaf first. stack_trace_save_regs() is not exported, so the capture uses
 * the exported ORC unwinder started from the interrupt registers; without
 * ORC it falls back to stack_trace_save() trimmed at the interrupted IP.
 * The off-CPU probes capture "here" instead (spulse_oc_kstack_here() in
 * offcpu.c, inlined into the probes): the same unwinder started at the
 * current frame, minus spulse's own frames.
 */
#include <linux/errno.h>
#include <linux/ptrace.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <asm/unwind.h>

#include "kstack.h"
#include "kunit_export.h"

/* 5.10..5.18 have no __uninitialized: there the state is zeroed, as before */
#ifndef __uninitialized
#define __uninitialized
#endif

/**
 * spulse_kstack_trim() - find the interrupted IP in a stack_trace_save() trace
 * @ent: trace entries, innermost first (the sampler's own frames first)
 * @n: number of entries
 * @ip: instruction_pointer() of the interrupt registers
 *
 * Return: index of the first entry equal to @ip (everything before it is the
 * sampler itself), or -ENOENT.
 */
int spulse_kstack_trim(const unsigned long *ent, unsigned int n,
		       unsigned long ip)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ent[i] == ip)
			return i;
	return -ENOENT;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_kstack_trim);

/**
 * spulse_kstack_capture() - capture the kernel stack of a sample
 * @regs: interrupt registers (kernel mode)
 * @out: output, leaf first
 * @cap: capacity of @out (>= @max + SPULSE_KSTACK_SLACK)
 * @max: kernel depth limit
 * @too_deep: set when the stack has more than @max frames
 * @truncated: set when the unwind stopped before the stack's end: the ORC
 *	unwinder reported an error (no ORC entry, unreadable or implausible
 *	stack), or it reached a frame whose address is not kernel text other
 *	than the user-mode register frame at kernel entry. A clean end is the
 *	entry register frame of a user task or the end-of-stack hint of a
 *	kernel thread.
 *
 * NMI-safe: the ORC unwinder reads only the stack and the ORC tables.
 *
 * Return: number of frames in @out.
 */
int spulse_kstack_capture(struct pt_regs *regs, unsigned long *out, u32 cap,
			  u32 max, bool *too_deep, bool *truncated)
{
	u32 n = 0;
#ifdef CONFIG_UNWINDER_ORC
	/*
	 * __unwind_start() clears it first: no zeroing here as well under
	 * CONFIG_INIT_STACK_ALL_ZERO (112 bytes a kernel sample)
	 */
	struct unwind_state st __uninitialized;
	unsigned long addr;

	*too_deep = false;
	*truncated = false;
	if (!max)
		return 0;
	out[n++] = instruction_pointer(regs);
	for (unwind_start(&st, current, regs, NULL); !unwind_done(&st);
	     unwind_next_frame(&st)) {
		addr = unwind_get_return_address(&st);
		if (!addr) {
			/* the user register frame at kernel entry: the end */
			if (!st.regs || !user_mode(st.regs))
				*truncated = true;
			break;
		}
		if (n >= max) {
			*too_deep = true;
			break;
		}
		out[n++] = st.signal ? addr : addr - 1;
	}
	if (unwind_error(&st))
		*truncated = true;
	return n;
#else
	int first;
	u32 i, got;

	*too_deep = false;
	*truncated = false;
	got = stack_trace_save(out, cap, 0);
	first = spulse_kstack_trim(out, got, instruction_pointer(regs));
	if (first < 0) {
		out[0] = instruction_pointer(regs);
		*truncated = true;
		return 1;
	}
	for (i = first; i < got; i++) {
		if (n >= max) {
			*too_deep = true;
			break;
		}
		out[n] = n ? out[i] - 1 : out[i];
		n++;
	}
	return n;
#endif
}
