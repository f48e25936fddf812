// SPDX-License-Identifier: GPL-2.0
/*
 * User stack walker: follows the x86-64 frame-pointer chain
 * ([bp] = caller's bp, [bp + 8] = return address) through a caller-supplied
 * memory reader, so the same code runs in the NMI-safe sampler (reader =
 * copy_from_user_nmi) and in KUnit (reader = a crafted buffer).
 */
#include <linux/errno.h>

#include "spulse.h"

/**
 * spulse_ustack_walk() - walk a user frame-pointer chain
 * @r: user registers at kernel entry (ip exact, sp, bp)
 * @task_size: first address that is not user memory (TASK_SIZE)
 * @rd: reads @len bytes at user address @addr into @dst; 0 on success
 * @ctx: passed to @rd
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
		if (rd(ctx, bp, fr, sizeof(fr))) {
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
