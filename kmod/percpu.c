// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU sampler state: encoder intern tables, batch scratch buffer and
 * capture buffers (with offcpu=1 also the off-CPU capture and close
 * scratch and the encoder's stack cache), all allocated at load so the
 * handlers never allocate.
 */
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "spulse.h"

#define SPULSE_FRAMES_SHIFT	13
#define SPULSE_STACKS_SHIFT	14
#define SPULSE_THREADS_SHIFT	9

static void *spulse_zalloc(size_t n, size_t size)
{
	return kvcalloc(n, size, GFP_KERNEL);
}

static int spulse_cpu_alloc_one(struct spulse_cpu *c, int cpu)
{
	const struct spulse_params *p = &spulse.p;
	u32 depth = p->max_user_depth + p->max_kernel_depth;
	u32 nodes = depth + 1;
	struct spulse_intern_ent *fe, *se, *te;

	c->batch.cap = max(spulse_batch_max(p->max_user_depth,
					    p->max_kernel_depth),
			   spulse_batch_max_trigger());
	if (p->offcpu) {
		c->batch.cap = max(c->batch.cap,
				   spulse_batch_max_offcpu(p->max_user_depth,
							   p->max_kernel_depth));
		c->oc_cap.st.addr = spulse_zalloc(depth, sizeof(u64));
		c->oc_close.self.st.addr = spulse_zalloc(depth, sizeof(u64));
		c->oc_close.waker.st.addr = spulse_zalloc(depth, sizeof(u64));
		c->enc.scache.ent = spulse_zalloc(1U << SPULSE_SCACHE_SHIFT,
						  sizeof(*c->enc.scache.ent));
		c->enc.scache.shift = SPULSE_SCACHE_SHIFT;
		if (!c->oc_cap.st.addr || !c->oc_close.self.st.addr ||
		    !c->oc_close.waker.st.addr || !c->enc.scache.ent)
			return -ENOMEM;
	}
	c->batch.buf = kvmalloc(c->batch.cap, GFP_KERNEL);
	c->frames = spulse_zalloc(nodes, sizeof(*c->frames));
	c->ubuf = spulse_zalloc(p->max_user_depth, sizeof(*c->ubuf));
	c->kbuf = spulse_zalloc(p->max_kernel_depth + SPULSE_KSTACK_SLACK,
				sizeof(*c->kbuf));
	fe = spulse_zalloc(1U << SPULSE_FRAMES_SHIFT, sizeof(*fe));
	se = spulse_zalloc(1U << SPULSE_STACKS_SHIFT, sizeof(*se));
	te = spulse_zalloc(1U << SPULSE_THREADS_SHIFT, sizeof(*te));
	spulse_intern_init(&c->enc.frames, fe, SPULSE_FRAMES_SHIFT);
	spulse_intern_init(&c->enc.stacks, se, SPULSE_STACKS_SHIFT);
	spulse_intern_init(&c->enc.threads, te, SPULSE_THREADS_SHIFT);
	c->enc.cpu = cpu;
	if (!c->batch.buf || !c->frames || !c->ubuf || !c->kbuf || !fe ||
	    !se || !te)
		return -ENOMEM;
	return 0;
}

/**
 * spulse_cpu_alloc() - allocate every possible CPU's state
 *
 * Return: 0 or -ENOMEM (partial allocations are freed by spulse_cpu_free()).
 */
int spulse_cpu_alloc(void)
{
	int cpu, r;

	spulse.cpu = alloc_percpu(struct spulse_cpu);
	if (!spulse.cpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		r = spulse_cpu_alloc_one(per_cpu_ptr(spulse.cpu, cpu), cpu);
		if (r)
			return r;
	}
	return 0;
}

/**
 * spulse_cpu_free() - free what spulse_cpu_alloc() allocated
 */
void spulse_cpu_free(void)
{
	int cpu;

	if (!spulse.cpu)
		return;
	for_each_possible_cpu(cpu) {
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		kvfree(c->batch.buf);
		kvfree(c->frames);
		kvfree(c->ubuf);
		kvfree(c->kbuf);
		kvfree(c->enc.frames.ent);
		kvfree(c->enc.stacks.ent);
		kvfree(c->enc.threads.ent);
		kvfree(c->oc_cap.st.addr);
		kvfree(c->oc_close.self.st.addr);
		kvfree(c->oc_close.waker.st.addr);
		kvfree(c->enc.scache.ent);
	}
	free_percpu(spulse.cpu);
	spulse.cpu = NULL;
}
