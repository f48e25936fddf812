/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel stacks (kstack.c): capture and trimming of the handler's own
 * frames.
 */
#ifndef SPULSE_KMOD_KSTACK_H
#define SPULSE_KMOD_KSTACK_H

#include <linux/types.h>

struct pt_regs;

int spulse_kstack_trim(const unsigned long *ent, unsigned int n,
		       unsigned long ip);
#define SPULSE_KSTACK_SLACK	64	/* handler frames stack_trace_save sees */
int spulse_kstack_capture(struct pt_regs *regs, unsigned long *out, u32 cap,
			  u32 max, bool *too_deep, bool *truncated);

#endif /* SPULSE_KMOD_KSTACK_H */
