// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU sampler state. Small scratch (capture buffers, with offcpu=1 the
 * off-CPU capture scratch) exists for every possible CPU from
 * load on; the large part (encoder intern tables, batch buffer, with
 * offcpu=1 the encoder's stack cache: ~0.8 MiB at the defaults) only for
 * CPUs that have been online, allocated by a CPU-hotplug prepare state
 * that runs before the CPU starts (so no handler on it ever sees it
 * missing) and kept until unload (the CPU's stream goes on after an
 * offline/online cycle). Handlers never allocate.
 *
 * A CPU whose large part cannot be allocated still comes online: its busy
 * flag stays set, so every writer on it (sampler, off-CPU probes, trigger)
 * drops and counts its record as busy, and it gets no perf event.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "spulse.h"
#include "percpu.h"
#include "kstack.h"
#include "compat/cpuhp.h"

#define SPULSE_FRAMES_SHIFT	13
#define SPULSE_STACKS_SHIFT	14
#define SPULSE_THREADS_SHIFT	9
#define SPULSE_SAMPLE_CACHE_SHIFT	9	/* 512 stacks, ~270 KiB */

static void *spulse_zalloc(size_t n, size_t size)
{
	return kvcalloc(n, size, GFP_KERNEL);
}

/* The small scratch of every possible CPU, at load. */
static int spulse_cpu_alloc_small(struct spulse_cpu *c)
{
	const struct spulse_params *p = &spulse.p;
	u32 depth = p->max_user_depth + p->max_kernel_depth;

	c->busy = 1;	/* until the large part exists */
	if (p->offcpu) {
		c->oc_cap.st.addr = spulse_zalloc(depth, sizeof(u64));
		if (!c->oc_cap.st.addr)
			return -ENOMEM;
	}
	c->frames = spulse_zalloc(depth + 1, sizeof(*c->frames));
	c->smp.frames = c->frames;	/* the sampler's, for good */
	c->ubuf = spulse_zalloc(p->max_user_depth, sizeof(*c->ubuf));
	c->kbuf = spulse_zalloc(p->max_kernel_depth + SPULSE_KSTACK_SLACK,
				sizeof(*c->kbuf));
	if (!c->frames || !c->ubuf || !c->kbuf)
		return -ENOMEM;
	return 0;
}

static void spulse_cpu_free_large(struct spulse_cpu *c)
{
	kvfree(c->batch.buf);
	kvfree(c->enc.frames.ent);
	kvfree(c->enc.stacks.ent);
	kvfree(c->enc.threads.ent);
	kvfree(c->enc.scache.ent);
	kvfree(c->scache.ent);
	c->scache.ent = NULL;
	c->sc_last = NULL;
	c->batch.buf = NULL;
	c->enc.frames.ent = NULL;
	c->enc.stacks.ent = NULL;
	c->enc.threads.ent = NULL;
	c->enc.scache.ent = NULL;
}

/* Bytes spulse_cpu_alloc_large() allocates for one CPU. */
static size_t spulse_cpu_large_bytes(size_t cap)
{
	size_t n = cap + sizeof(struct spulse_intern_ent) *
		   ((1U << SPULSE_FRAMES_SHIFT) + (1U << SPULSE_STACKS_SHIFT) +
		    (1U << SPULSE_THREADS_SHIFT));

	n += sizeof(struct spulse_scache_ent) << SPULSE_SAMPLE_CACHE_SHIFT;
	if (spulse.p.offcpu)
		n += sizeof(struct spulse_scache_ent) << SPULSE_SCACHE_SHIFT;
	return n;
}

static int spulse_cpu_alloc_large(struct spulse_cpu *c, int cpu)
{
	const struct spulse_params *p = &spulse.p;
	struct spulse_intern_ent *fe, *se, *te;
	size_t cap;

	cap = max(spulse_batch_max(p->max_user_depth, p->max_kernel_depth),
		  spulse_batch_max_trigger());
	if (p->offcpu) {
		cap = max(cap, spulse_batch_max_offcpu(p->max_user_depth,
						       p->max_kernel_depth));
		c->enc.scache.ent = spulse_zalloc(1U << SPULSE_SCACHE_SHIFT,
						  sizeof(*c->enc.scache.ent));
		c->enc.scache.shift = SPULSE_SCACHE_SHIFT;
		if (!c->enc.scache.ent)
			goto nomem;
	}
	c->sc_last = NULL;
	c->scache.ent = spulse_zalloc(1U << SPULSE_SAMPLE_CACHE_SHIFT,
				      sizeof(*c->scache.ent));
	c->scache.shift = SPULSE_SAMPLE_CACHE_SHIFT;
	c->batch.buf = kvmalloc(cap, GFP_KERNEL);
	fe = spulse_zalloc(1U << SPULSE_FRAMES_SHIFT, sizeof(*fe));
	se = spulse_zalloc(1U << SPULSE_STACKS_SHIFT, sizeof(*se));
	te = spulse_zalloc(1U << SPULSE_THREADS_SHIFT, sizeof(*te));
	spulse_intern_init(&c->enc.frames, fe, SPULSE_FRAMES_SHIFT);
	spulse_intern_init(&c->enc.stacks, se, SPULSE_STACKS_SHIFT);
	spulse_intern_init(&c->enc.threads, te, SPULSE_THREADS_SHIFT);
	if (!c->batch.buf || !c->scache.ent || !fe || !se || !te)
		goto nomem;
	c->batch.cap = cap;
	c->enc.cpu = cpu;
	return 0;
nomem:
	spulse_cpu_free_large(c);
	return -ENOMEM;
}

/*
 * Hotplug prepare callback (runs on the controlling CPU before @cpu
 * starts). At load a failure fails the load; later it leaves @cpu without
 * state (busy for good, counted in cpus_no_state, said once in dmesg).
 */
static int spulse_cpu_prepare(unsigned int cpu)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

	if (c->ready)
		return 0;
	if (spulse_cpu_alloc_large(c, cpu)) {
		if (spulse.cpu_loading)
			return -ENOMEM;
		WRITE_ONCE(spulse.cpus_no_state, spulse.cpus_no_state + 1);
		pr_warn_once("cpu%u: no memory for sampler state, its records are dropped as busy (cpus_no_state in stats)\n",
			     cpu);
		return 0;
	}
	WRITE_ONCE(spulse.percpu_bytes, spulse.percpu_bytes +
		   spulse_cpu_large_bytes(c->batch.cap));
	c->ready = true;
	/* the CPU is not running yet: its writers start after this */
	c->busy = 0;
	return 0;
}

/* Has @cpu's prepare callback run (and not failed at load)? */
static bool spulse_cpu_prepared(unsigned int cpu)
{
	return per_cpu_ptr(spulse.cpu, cpu)->ready;
}

/**
 * spulse_cpu_alloc() - allocate the per-CPU state
 *
 * Context: process context (load). The small scratch for every possible CPU, the large part for every
 * online CPU now and for each CPU that comes online later (a hotplug
 * prepare state, removed by spulse_cpu_free()).
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
		r = spulse_cpu_alloc_small(per_cpu_ptr(spulse.cpu, cpu));
		if (r)
			return r;
	}
	spulse.cpu_loading = true;
	r = spulse_cpuhp_setup_prepare("spulse:prepare", spulse_cpu_prepare,
				       spulse_cpu_prepared,
				       &spulse.cpuhp_fixups);
	spulse.cpu_loading = false;
	if (r < 0)
		return r;
	spulse.cpuhp_prepare = r;
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
	if (spulse.cpuhp_prepare > 0)
		cpuhp_remove_state_nocalls(spulse.cpuhp_prepare);
	spulse.cpuhp_prepare = 0;
	for_each_possible_cpu(cpu) {
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		spulse_cpu_free_large(c);
		kvfree(c->frames);
		kvfree(c->ubuf);
		kvfree(c->kbuf);
		kvfree(c->oc_cap.st.addr);
	}
	free_percpu(spulse.cpu);
	spulse.cpu = NULL;
	spulse.percpu_bytes = 0;
	spulse.cpus_no_state = 0;
}
