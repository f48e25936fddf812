// SPDX-License-Identifier: GPL-2.0
/*
 * Where samples are taken: with events=cpu one perf event per online CPU
 * (created and destroyed by a CPU-hotplug state); with events=task one
 * event per thread of the target at start, inherited by the threads it
 * creates later (so a CPU that never runs the target takes no interrupt);
 * and the overflow handler, which runs in hardirq (cpu-clock) or NMI
 * (cycles; bp, a breakpoint at the kernel symbol bp_symbol, an execute
 * breakpoint at a function's entry or a watchpoint on a variable: x86
 * enters a kernel-mode debug exception like an NMI, and perf's breakpoint
 * overflow runs from it). The handler filters by target
 * process, captures the mixed stack (user chain then kernel chain, root to
 * leaf), encodes it as one batch and writes it to this CPU's relay buffer.
 * NMI-safe: no locks, no allocation, bounded work (depth limits).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hw_breakpoint.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/pgtable.h>

#include "spulse.h"
#include "sample.h"
#include "compat/perf.h"
#include "kstack.h"
#include "meta.h"
#include "percpu.h"
#include "stream.h"
#include "unwind.h"
#include "ustack.h"

/*
 * event=bp: where to break. Declared here, beside their only user, rather
 * than with the other parameters in main.c; validated at load by
 * spulse_bp_resolve().
 */
static char *bp_symbol;
module_param(bp_symbol, charp, 0444);
MODULE_PARM_DESC(bp_symbol, "event=bp: core-kernel symbol to break on: a function (execute breakpoint at its entry) or a variable (watchpoint)");

static ulong bp_addr;
module_param(bp_addr, ulong, 0444);
MODULE_PARM_DESC(bp_addr, "event=bp: bp_symbol's address from /proc/kallsyms (must be exactly bp_symbol+0x0); needed for variables and on kernels without kprobes");

static char *bp_access = "auto";
module_param(bp_access, charp, 0444);
MODULE_PARM_DESC(bp_access, "event=bp: auto (x for a function, w for a variable), x (execute), w (write) or rw (read or write)");

/* the resolved breakpoint (event=bp) */
static unsigned long spulse_bp_at;
static u32 spulse_bp_type;
static u64 spulse_bp_len;

/* perf's "throttled until the next tick" mark (kernel/events/core.c). */
#define SPULSE_PERF_THROTTLED	(~0ULL)

/*
 * sample_phase_stats=1: the phase times of one sample, added to the stats
 * at its end unless the whole sample took longer than
 * SPULSE_PHASE_OUTLIER_NS (under TCG on a busy host the vCPU is preempted
 * mid-sample now and then; such a sample would swamp the means).
 */
#define SPULSE_PHASE_OUTLIER_NS	(1000 * NSEC_PER_USEC)

struct spulse_phases {
	u64 kstack;
	u64 ustack;
	u64 meta;
	u64 encode;
	u64 relay;
};

/*
 * Add the time since *@t to *@acc and restart *@t. Off it is one
 * predictable branch on a read-only parameter.
 */
static __always_inline void spulse_ph(bool on, u64 *t, u64 *acc)
{
	u64 now;

	if (likely(!on))
		return;
	now = ktime_get_mono_fast_ns();
	*acc += now - *t;
	*t = now;
}

/*
 * Capture one sample: the kernel frames in c->kbuf, the user frames in
 * c->ubuf (both leaf first, as captured) and their counts and truncation in
 * c->nk, c->nu, c->trunc; returns the node count (spulse_capture_frames()
 * makes them c->frames, root..leaf).
 * A kernel unwind that stopped on an error keeps only the kernel part,
 * under the truncated marker: the frames lost are its outer ones, and the
 * format's marker (a root node) says exactly that.
 */
static u32 spulse_capture(struct spulse_cpu *c, struct pt_regs *regs,
			  struct task_struct *tsk, u32 tgid, bool *too_deep,
			  bool ph, u64 *pt, struct spulse_phases *pp)
{
	const struct spulse_params *p = &spulse.p;
	struct pt_regs *uregs = NULL;
	struct spulse_uw_res res = {};
	bool ktrunc = false;
	int nk = 0, nu = 0;

	*too_deep = false;
	if (user_mode(regs)) {
		uregs = regs;
	} else {
		nk = spulse_kstack_capture(regs, c->kbuf,
					   p->max_kernel_depth +
					   SPULSE_KSTACK_SLACK,
					   p->max_kernel_depth, too_deep,
					   &ktrunc);
		spulse_ph(ph, pt, &pp->kstack);
		if (*too_deep)
			return 0;
		if (ktrunc)
			c->stats.kstack_truncated++;
		else if (spulse_task_has_user(tsk))
			uregs = task_pt_regs(tsk);
	}
	if (uregs) {
		nu = spulse_ustack_capture(uregs, p->unwind, &c->uc, c->ubuf,
					   p->max_user_depth, &res);
		c->stats.ustack_table_steps += res.table_steps;
		c->stats.ustack_fp_steps += res.fp_steps;
		c->stats.ustack_complete += res.complete;
		c->stats.ustack_truncated += res.truncated;
		spulse_ph(ph, pt, &pp->ustack);
		if (!p->target_pid && tgid)
			spulse_note_pid(c, tgid);
		if (nu && !spulse_meta_known(tgid, c->ubuf[0]))
			spulse_meta_kick();
		spulse_ph(ph, pt, &pp->meta);
	}
	c->trunc = ktrunc || res.truncated || (!nu && !nk);
	c->nu = nu;
	c->nk = nk;
	return c->trunc + nu + nk;
}

/*
 * The captured stack as frames (c->frames, root..leaf: the truncated
 * marker, the user frames, the kernel frames), made only when the sample
 * is encoded frame by frame (the stack cache answers most samples without
 * them).
 */
static void spulse_capture_frames(struct spulse_cpu *c)
{
	/* locals: stores to the frames cannot change them (no reloads) */
	struct spulse_frame *f = c->frames;
	const u64 *u = c->ubuf + c->nu;
	const unsigned long *k = c->kbuf + c->nk;

	if (c->trunc)
		*f++ = (struct spulse_frame){ SPULSE_FRAME_TRUNCATED, 0 };
	while (u != c->ubuf)
		*f++ = (struct spulse_frame){ SPULSE_FRAME_USER, *--u };
	while (k != c->kbuf)
		*f++ = (struct spulse_frame){ SPULSE_FRAME_KERNEL, *--k };
}

/*
 * The raw-chain cache (c->scache) is keyed by the capture as it stands,
 * leaf first: the kernel frames (c->kbuf) then the user frames (c->ubuf),
 * with c->trunc, c->nu and c->nk; an entry's addr[] holds them in that
 * order. Nothing is copied for a lookup: the hash and the comparison read
 * the two capture buffers, four addresses per round. Only this cache uses
 * this order (the off-CPU stack cache, spulse_scache_hash(), has its own).
 */

/* Fold @n addresses into @h (see spulse_scache_hash() for the mixing). */
static __always_inline u64 spulse_take_hash_seg(u64 h, const u64 *a, u32 n)
{
	const u64 *end4 = a + (n & ~3U), *end = a + n;

	for (; a != end4; a += 4) {
		h = (h ^ a[0]) * SPULSE_SCACHE_HASH_MUL;
		h = (h ^ a[1]) * SPULSE_SCACHE_HASH_MUL;
		h = (h ^ a[2]) * SPULSE_SCACHE_HASH_MUL;
		h = (h ^ a[3]) * SPULSE_SCACHE_HASH_MUL;
	}
	for (; a != end; a++)
		h = (h ^ *a) * SPULSE_SCACHE_HASH_MUL;
	return h;
}

/*
 * Do @n addresses of @x equal those of @a? Pointers, not an index: the
 * loop keeps its state in registers inside the large spulse_take().
 */
static __always_inline bool spulse_take_same(const u64 *x, const u64 *a, u32 n)
{
	const u64 *end4 = a + (n & ~3U), *end = a + n;

	for (; a != end4; a += 4, x += 4)
		if ((x[0] ^ a[0]) | (x[1] ^ a[1]) | (x[2] ^ a[2]) |
		    (x[3] ^ a[3]))
			return false;
	for (; a != end; a++, x++)
		if (*x != *a)
			return false;
	return true;
}

/* c->kbuf as the u64 addresses the cache holds (a 64-bit kernel's). */
static __always_inline const u64 *spulse_take_kaddr(const struct spulse_cpu *c)
{
	BUILD_BUG_ON(sizeof(*c->kbuf) != sizeof(u64));
	return (const u64 *)c->kbuf;
}

/* The cache hash of the captured stack. */
static __always_inline u64 spulse_take_hash(const struct spulse_cpu *c)
{
	u64 h = spulse_scache_hash_seed(c->trunc, c->nu, c->nk);

	h = spulse_take_hash_seg(h, spulse_take_kaddr(c), c->nk);
	return spulse_take_hash_seg(h, c->ubuf, c->nu);
}

/* Are @x's addresses those of the captured stack (its shape checked)? */
static __always_inline bool spulse_take_same_stack(const struct spulse_cpu *c,
						   const struct spulse_scache_ent *x)
{
	return spulse_take_same(x->addr, spulse_take_kaddr(c), c->nk) &&
	       spulse_take_same(x->addr + c->nk, c->ubuf, c->nu);
}

/* Is the captured stack, of hash @h, cached for generation @gen? */
static __always_inline bool spulse_take_find(struct spulse_cpu *c, u64 gen,
					     u64 h, u32 *leaf)
{
	const struct spulse_scache_ent *x = spulse_scache_slot(&c->scache, h);

	if (!spulse_scache_ent_is(x, gen, h, c->trunc, c->nu, c->nk) ||
	    !spulse_take_same_stack(c, x))
		return false;
	c->sc_last = x;
	*leaf = x->leaf;
	return true;
}

/*
 * Is the captured stack the one of the entry the previous sample found or
 * stored (@c->sc_last), for generation @gen? The same comparison as
 * spulse_take_find() but the hash's, which only picks a slot: a stack
 * that repeats (a loop, a blocking call) is answered without hashing
 * it. The leaf addresses are compared first: they differ first.
 */
static __always_inline bool spulse_take_last(const struct spulse_cpu *c,
					     u64 gen, u32 *leaf)
{
	const struct spulse_scache_ent *x = c->sc_last;
	const u64 *k = spulse_take_kaddr(c);

	if (!x || !spulse_scache_ent_shape(x, gen, c->trunc, c->nu, c->nk))
		return false;
	/* the leaf alone first: where two stacks differ most often */
	if (c->nk ? x->addr[0] != k[0] : c->nu && x->addr[0] != c->ubuf[0])
		return false;
	if (!spulse_take_same_stack(c, x))
		return false;
	*leaf = x->leaf;
	return true;
}

/* Remember the captured stack, of hash @h, as @leaf of generation @gen. */
/*
 * Copy @n addresses, a word at a time: a few dozen at most, where a call to
 * memcpy() (rep movsb where the CPU has ERMS) costs its setup and, under
 * emulation, an instruction per byte. The barrier keeps the compiler from
 * turning the loop back into that call.
 */
static __always_inline u64 *spulse_take_copy(u64 *d, const u64 *a, u32 n)
{
	const u64 *end = a + n;

	while (a != end) {
		*d++ = *a++;
		barrier();
	}
	return d;
}

static void spulse_take_put(struct spulse_cpu *c, u64 gen, u64 h, u32 leaf)
{
	struct spulse_scache_ent *x = spulse_scache_slot(&c->scache, h);

	spulse_scache_ent_set(x, gen, h, leaf, c->trunc, c->nu, c->nk);
	spulse_take_copy(spulse_take_copy(x->addr, spulse_take_kaddr(c), c->nk),
			 c->ubuf, c->nu);
	c->sc_last = x;
}

/*
 * The cached sample whose batch would be its sample record alone
 * (spulse_batch_leaf_direct() says when), encoded straight into this
 * CPU's relay buffer @rb when it fits in the current sub-buffer whatever
 * its length: what spulse_batch_build_leaf(), spulse_batch_put() and
 * spulse_batch_commit() would write and account, without the batch and
 * its copy. The write is spulse_relay_put()'s (relay.c): the bytes first,
 * then the offset a reader may see. False: nothing was written, the
 * caller takes the batch path.
 */
static __always_inline bool spulse_take_direct(struct spulse_cpu *c,
					       struct rchan_buf *rb,
					       const struct spulse_sample *s,
					       u32 leaf)
{
	size_t off = rb->offset, n;

	if (!spulse_relay_fits(rb, off, SPULSE_SAMPLE_MAX))
		return false;
	n = spulse_batch_leaf_direct(&c->enc, (u8 *)rb->data + off, s, leaf,
				     c->enc.gen);
	if (!n)
		return false;
	spulse_relay_publish(rb, off + n);
	return true;
}

/*
 * Point @c's batch at this CPU's relay buffer @rb, at its offset, when the
 * current sub-buffer has room for a whole batch (the scratch's capacity,
 * so exactly the batches that fit the scratch fit) whatever its length:
 * the batch is then built in place and only published (spulse_take()),
 * without spulse_relay_put()'s copy. Bytes past the offset are not
 * published, so a batch rolled back there is simply not. Returns where it
 * is built, or NULL: in the scratch, copied by spulse_batch_put() (which
 * switches sub-buffers when it does not fit).
 */
static __always_inline u8 *spulse_take_inplace(struct spulse_cpu *c,
					       struct rchan_buf *rb)
{
	size_t off;

	if (!rb)
		return NULL;
	off = rb->offset;
	if (!spulse_relay_fits(rb, off, c->batch.cap))
		return NULL;
	c->batch.buf = (u8 *)rb->data + off;
	return c->batch.buf;
}

/*
 * Publish the batch built in place at @rb's offset
 * (spulse_take_inplace()): spulse_relay_put()'s write without its copy.
 */
static __always_inline void spulse_take_publish(const struct spulse_cpu *c,
						struct rchan_buf *rb)
{
	spulse_relay_publish(rb, rb->offset + c->batch.len);
}

/*
 * Encode the captured sample: from the raw-chain cache when this stream
 * has written the same stack before (only the thread if new and the
 * sample record are encoded; with @rb, when that is the record alone, it
 * is written at once: spulse_take_direct()), else frame by frame through
 * the intern tables. With @rb a batch is built in place when it can be
 * (spulse_take_inplace(); *@dst says where, else NULL). Returns 1 when
 * the sample is written, else spulse_batch_build()'s result; *@h and
 * *@put say what to cache once the batch is written.
 */
static int spulse_encode(struct spulse_cpu *c, struct rchan_buf *rb,
			 const struct spulse_sample *s, u64 *h, bool *put,
			 u8 **dst)
{
	u8 *scratch = c->batch.buf;
	u32 leaf;
	bool hit;
	int r;

	*put = false;
	*dst = NULL;
	if (c->scache.ent && (u32)c->nu + c->nk <= SPULSE_SCACHE_DEPTH) {
		hit = spulse_take_last(c, c->enc.gen, &leaf);
		if (!hit) {
			*h = spulse_take_hash(c);
			hit = spulse_take_find(c, c->enc.gen, *h, &leaf);
		}
		if (hit) {
			if (rb && spulse_take_direct(c, rb, s, leaf)) {
				c->scache.hits++;
				return 1;
			}
			*dst = spulse_take_inplace(c, rb);
			r = spulse_batch_build_leaf(&c->enc, &c->batch, s, leaf,
						    c->enc.gen, spulse.start_us,
						    spulse.interval_us);
			c->batch.buf = scratch;
			if (r != -ESTALE) {
				c->scache.hits += !r;
				return r;
			}
			/* a hit by the last entry computed no hash */
			*h = spulse_take_hash(c);
		}
		c->scache.misses++;
		*put = true;
	}
	spulse_capture_frames(c);
	*dst = spulse_take_inplace(c, rb);
	r = spulse_batch_build(&c->enc, &c->batch, s, spulse.start_us,
			       spulse.interval_us);
	c->batch.buf = scratch;
	return r;
}

static void spulse_phases_add(struct spulse_cpu_stats *st,
			      const struct spulse_phases *pp, u64 total)
{
	if (total > SPULSE_PHASE_OUTLIER_NS) {
		st->sample_phase_outliers++;
		return;
	}
	st->sample_phase_n++;
	st->sample_phase_ns += total;
	st->sample_phase_kstack_ns += pp->kstack;
	st->sample_phase_ustack_ns += pp->ustack;
	st->sample_phase_meta_ns += pp->meta;
	st->sample_phase_encode_ns += pp->encode;
	st->sample_phase_relay_ns += pp->relay;
}

static void spulse_take(struct spulse_cpu *c, struct pt_regs *regs)
{
	struct task_struct *tsk = current;
	bool ph = spulse.p.sample_phase_stats;
	struct spulse_phases pp = {};
	struct spulse_sample *s = &c->smp;
	struct rchan_buf *rb;
	u8 *dst = NULL;
	bool too_deep, put;
	u64 pt = 0, d, h = 0;
	int r;

	/* the target's struct pid, not its number: NMI-safe, reuse-proof */
	if (spulse.target && task_tgid(tsk) != spulse.target)
		return;
	/*
	 * A task event fires on whatever CPU runs the target: one without
	 * sampler state (busy for good, percpu.c) or relay buffer drops.
	 */
	rb = *this_cpu_ptr(spulse.chan->buf);
	if (c->busy || unlikely(!rb)) {
		c->stats.dropped_busy++;
		c->stats.taken++;
		return;
	}
	c->busy = 1;
	barrier();
	s->pid = task_tgid_nr(tsk);
	s->t_ns = ktime_get_mono_fast_ns() - spulse.start_mono;
	pt = s->t_ns + spulse.start_mono;
	s->tid = task_pid_nr(tsk);
	memcpy(s->comm, tsk->comm, sizeof(s->comm));
	s->n = spulse_capture(c, regs, tsk, s->pid, &too_deep, ph, &pt,
				 &pp);
	/*
	 * sample_phase_stats=1 times the encoding and the relay write apart
	 * (no direct write, no batch built in place)
	 */
	r = too_deep ? 0 : spulse_encode(c, ph ? NULL : rb, s, &h, &put, &dst);
	if (too_deep) {
		c->stats.dropped_too_deep++;
	} else if (r > 0) {
		c->stats.written++;
	} else if (r) {
		/* cannot happen with validated sizes; counted, not lost */
		c->stats.dropped_too_deep++;
		spulse_ph(ph, &pt, &pp.encode);
	} else {
		spulse_ph(ph, &pt, &pp.encode);
		if (!dst && !spulse_batch_put(c)) {
			c->stats.dropped_buffer_full++;
		} else {
			if (dst)
				spulse_take_publish(c, rb);
			spulse_batch_commit(&c->enc, &c->batch, s->t_ns);
			if (put)
				spulse_take_put(c, c->enc.gen, h,
						c->batch.leaf);
			c->stats.written++;
		}
		spulse_ph(ph, &pt, &pp.relay);
	}
	/*
	 * Timed: one sample in SPULSE_HANDLER_TIME_EVERY of those past the
	 * busy check (all with sample_phase_stats=1); the second clock read
	 * cost a tenth of a cached sample. stats.c scales the sum.
	 */
	if (unlikely(ph) || !((c->stats.taken - c->stats.dropped_busy) &
			      (SPULSE_HANDLER_TIME_EVERY - 1))) {
		d = ktime_get_mono_fast_ns() - spulse.start_mono - s->t_ns;
		c->stats.handler_ns += d;
		c->stats.handler_timed++;
		if (unlikely(ph))
			spulse_phases_add(&c->stats, &pp, d);
	}
	c->stats.taken++;
	barrier();
	c->busy = 0;
}

static bool spulse_task_mode(void)
{
	return spulse.p.events == SPULSE_EVENTS_TASK;
}

/*
 * Throttling: perf stops an event that overflowed max_samples_per_tick
 * times in one tick (hw.interrupts set to its mark in the overflow that
 * does it, which still reaches this handler) until the next tick restarts
 * it. Count the episode and, at the event's next overflow on this CPU, the
 * periods it missed. Per event: with events=task the next overflow on a
 * CPU can be another thread's event, which says nothing about the
 * throttled one (its pending episode is then dropped, not estimated), and
 * a task event also restarts when its thread is switched in again, so
 * while it was off CPU nothing was missed: its gap counts at most one tick.
 */
static void spulse_throttle_account(struct spulse_cpu *c,
				    struct perf_event *event)
{
	u64 now, period, gap;

	if (unlikely(c->thr_ns)) {
		if (c->thr_ev == event) {
			now = ktime_get_mono_fast_ns();
			period = NSEC_PER_SEC / spulse.p.freq;
			gap = now - c->thr_ns;
			if (spulse_task_mode())
				gap = min_t(u64, gap, TICK_NSEC);
			if (gap > period)
				c->stats.lost_throttled +=
					div64_u64(gap, period) - 1;
		}
		c->thr_ns = 0;
		c->thr_ev = NULL;
	}
	if (unlikely(event->hw.interrupts == SPULSE_PERF_THROTTLED)) {
		c->stats.throttled++;
		c->thr_ns = ktime_get_mono_fast_ns();
		c->thr_ev = event;
	}
}

/* Count an overflow while running: this CPU's state, or NULL if stopped. */
static __always_inline struct spulse_cpu *spulse_seen(struct perf_event *event)
{
	struct spulse_cpu *c;

	if (!READ_ONCE(spulse.running))
		return NULL;
	c = this_cpu_ptr(spulse.cpu);
	c->stats.seen++;
	spulse_throttle_account(c, event);
	return c;
}

static void spulse_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	struct spulse_cpu *c = spulse_seen(event);

	if (c)
		spulse_take(c, regs);
}

/* sample_null=1 (debug): the overflow is counted, nothing is taken. */
static void spulse_overflow_null(struct perf_event *event,
				 struct perf_sample_data *data,
				 struct pt_regs *regs)
{
	spulse_seen(event);
}

/*
 * A disabled event on @cpu, or an enabled one with @task on that thread on
 * any CPU, inherited by the threads it creates (inherit_thread: not by
 * forked processes, which are other tgids the handler would filter out).
 *
 * A task event is never turned on or off after creation, only gated by
 * spulse.running: perf_event_enable() acts on one event, not on the
 * children inherited meanwhile, and perf swaps the contexts of a parent
 * and a child at a context switch between them while their generations
 * match (context_equiv() in kernel/events/core.c; enabling does not bump
 * the generation). A thread created while the parent event was still off
 * inherits an off copy, and a swap hands that copy to the parent, whose
 * later threads then inherit it off too: the target went unsampled for
 * good (seen in the e2e and fault storms, about one run in ten).
 */
static struct perf_event *spulse_event_create(int cpu, struct task_struct *task)
{
	struct perf_event_attr attr = {
		.type = spulse.ev_type,
		.config = spulse.ev_config,
		.size = sizeof(attr),
		.sample_freq = spulse.p.freq,
		.freq = 1,
		.disabled = 1,
	};

	if (spulse.ev_type == PERF_TYPE_BREAKPOINT) {
		attr.bp_type = spulse_bp_type;
		attr.bp_addr = spulse_bp_at;
		attr.bp_len = spulse_bp_len;
	}
	if (task) {
		spulse_attr_inherit_threads(&attr);
		attr.disabled = 0;
		cpu = -1;
	}
	return perf_event_create_kernel_counter(&attr, cpu, task,
						spulse.p.sample_null ?
						spulse_overflow_null :
						spulse_overflow, NULL);
}

/*
 * Add what @c->event was enabled and running since the last fold to the
 * stats (time running < time enabled: the event was multiplexed off the
 * PMU). Process context, hotplug excluded, the event off or on.
 */
static void spulse_event_fold(struct spulse_cpu *c)
{
	u64 enabled = 0, running = 0;

	if (!c->event)
		return;
	perf_event_read_value(c->event, &enabled, &running);
	if (enabled >= c->ev_enabled && running >= c->ev_running) {
		WRITE_ONCE(c->stats.event_enabled_ns, c->stats.event_enabled_ns +
			   enabled - c->ev_enabled);
		WRITE_ONCE(c->stats.event_running_ns, c->stats.event_running_ns +
			   running - c->ev_running);
	}
	c->ev_enabled = enabled;
	c->ev_running = running;
}

/*
 * A CPU came online: give it an event. At load a failure fails the load;
 * later the CPU comes online without one (counted in cpus_no_event, said
 * once in dmesg), so a failed event never vetoes a CPU. A CPU without
 * sampler state (percpu.c) gets no event either.
 */
static int spulse_cpu_online(unsigned int cpu)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);
	struct perf_event *ev = ERR_PTR(-ENOMEM);

	if (c->ready)
		ev = spulse_event_create(cpu, NULL);
	if (IS_ERR(ev)) {
		if (spulse.ev_loading) {
			pr_err("cannot create perf event on cpu%u: %ld\n", cpu,
			       PTR_ERR(ev));
			return PTR_ERR(ev);
		}
		WRITE_ONCE(spulse.cpus_no_event, spulse.cpus_no_event + 1);
		pr_warn_once("cpu%u came online without a perf event (%ld): not sampled (cpus_no_event in stats)\n",
			     cpu, PTR_ERR(ev));
		return 0;
	}
	c->event = ev;
	c->ev_enabled = 0;
	c->ev_running = 0;
	c->thr_ns = 0;
	c->thr_ev = NULL;
	if (spulse.running)
		perf_event_enable(ev);
	return 0;
}

static int spulse_cpu_offline(unsigned int cpu)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

	if (c->event) {
		perf_event_disable(c->event);
		spulse_event_fold(c);
		perf_event_release_kernel(c->event);
		c->event = NULL;
	}
	return 0;
}

/*
 * Is @addr exactly the start of the core-kernel symbol @name? sprint_symbol()
 * spells it "name+0x0/0xsize", with " [module]" after it for module text.
 */
static bool spulse_bp_is(unsigned long addr, const char *name)
{
	char *buf = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	size_t n = strlen(name);
	bool is;

	if (!buf)
		return false;
	sprint_symbol(buf, addr);
	is = !strncmp(buf, name, n) && !strncmp(buf + n, "+0x0/", 5) &&
	     !strchr(buf + n, ' ');
	kfree(buf);
	return is;
}

/*
 * Is @addr mapped executable? kallsyms also names data (KALLSYMS_ALL), and
 * without kprobes nothing else tells text from data: the kernel maps its
 * data NX (STRICT_KERNEL_RWX), its text not.
 */
static bool spulse_bp_exec(unsigned long addr)
{
#ifdef CONFIG_X86
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);

	return pte && pte_present(*pte) && pte_exec(*pte);
#else
	return true;
#endif
}

/*
 * event=bp: resolve bp_symbol (and bp_access) into spulse_bp_at/_type/_len.
 * kallsyms_lookup_name() is not exported (5.7+): for a function a kprobe
 * registered disabled (never armed: no text is patched) resolves the name
 * and refuses what kprobes refuse (not text, the kprobe blacklist: entry
 * code, noinstr), and is unregistered at once. Otherwise the caller gives
 * the address (bp_addr=, from /proc/kallsyms), accepted only where kallsyms
 * names it as the start of bp_symbol in the core kernel. Module symbols are
 * refused (an unloaded module would leave the breakpoint on freed memory).
 * Text (mapped executable) gets an execute breakpoint, which x86 allows in
 * the kernel only with CONFIG_KPROBES; anything else a watchpoint of the
 * widest length its alignment allows. Any problem is one pr_err line and
 * -EINVAL.
 */
static int spulse_bp_resolve(void)
{
	const char *name = bp_symbol ? bp_symbol : "";
	const char *acc = bp_access ? bp_access : "";
	unsigned long at = 0;
	bool text;

	if (spulse.p.event != SPULSE_EVENT_BP) {
		if (*name || bp_addr || !sysfs_streq(acc, "auto")) {
			pr_err("invalid bp_symbol/bp_addr/bp_access: only with event=bp\n");
			return -EINVAL;
		}
		return 0;
	}
	if (!*name || strlen(name) >= KSYM_NAME_LEN || strpbrk(name, " +/[]\n")) {
		pr_err("invalid bp_symbol=%s: event=bp needs bp_symbol=SYMBOL (a core-kernel function or variable)\n",
		       name);
		return -EINVAL;
	}
#ifdef CONFIG_KPROBES
	if (!bp_addr) {
		struct kprobe kp = {
			.symbol_name = name,
			.flags = KPROBE_FLAG_DISABLED,
		};
		int r = register_kprobe(&kp);

		if (r) {
			pr_err("invalid bp_symbol=%s: no kernel function kprobes accept by that name (%d; a variable needs bp_addr=)\n",
			       name, r);
			return -EINVAL;
		}
		at = (unsigned long)kp.addr;
		unregister_kprobe(&kp);
	}
#endif
	if (bp_addr)
		at = bp_addr;
	if (!at) {
		pr_err("invalid bp_symbol=%s: this kernel has no kprobes to resolve it; give bp_addr= too (from /proc/kallsyms)\n",
		       name);
		return -EINVAL;
	}
	if (at < TASK_SIZE_MAX || !spulse_bp_is(at, name)) {
		pr_err("invalid bp_symbol=%s: 0x%lx (%pS) is not the start of that core-kernel symbol\n",
		       name, at, (void *)at);
		return -EINVAL;
	}
	text = spulse_bp_exec(at);
	if (sysfs_streq(acc, "auto")) {
		spulse_bp_type = text ? HW_BREAKPOINT_X : HW_BREAKPOINT_W;
	} else if (sysfs_streq(acc, "x")) {
		spulse_bp_type = HW_BREAKPOINT_X;
	} else if (sysfs_streq(acc, "w")) {
		spulse_bp_type = HW_BREAKPOINT_W;
	} else if (sysfs_streq(acc, "rw")) {
		spulse_bp_type = HW_BREAKPOINT_RW;
	} else {
		pr_err("invalid bp_access=%s: must be auto, x, w or rw\n", acc);
		return -EINVAL;
	}
	if ((spulse_bp_type == HW_BREAKPOINT_X) != text) {
		pr_err("invalid bp_access=%s: %pS is %s\n", acc, (void *)at,
		       text ? "text (use x)" : "not executable (use w or rw)");
		return -EINVAL;
	}
	if (text)
		spulse_bp_len = sizeof(long);
	else
		spulse_bp_len = !(at & 7) ? HW_BREAKPOINT_LEN_8 :
				!(at & 3) ? HW_BREAKPOINT_LEN_4 :
				!(at & 1) ? HW_BREAKPOINT_LEN_2 :
				HW_BREAKPOINT_LEN_1;
	spulse_bp_at = at;
	return 0;
}

static const char *spulse_bp_kind(void)
{
	return spulse_bp_type == HW_BREAKPOINT_X ? "execute" :
	       spulse_bp_type == HW_BREAKPOINT_W ? "write" : "read/write";
}

/*
 * Decide the event type; cycles falls back to cpu-clock without a PMU;
 * bp is a breakpoint event at spulse_bp_at, with no fallback (the kernel's
 * refusal fails the load: no breakpoint support, all four debug registers
 * taken, or an address it does not allow, such as any kernel text for an
 * execute breakpoint on x86 without CONFIG_KPROBES).
 */
static int spulse_pick_event(void)
{
	struct perf_event *probe;
	long err;

	spulse.ev_type = PERF_TYPE_SOFTWARE;
	spulse.ev_config = PERF_COUNT_SW_CPU_CLOCK;
	err = spulse_bp_resolve();
	if (err)
		return err;
	if (spulse.p.event == SPULSE_EVENT_BP) {
		spulse.ev_type = PERF_TYPE_BREAKPOINT;
		spulse.ev_config = 0;
		probe = spulse_event_create(cpumask_first(cpu_online_mask), NULL);
		if (IS_ERR(probe)) {
			pr_err("cannot create a breakpoint event (%s) at %pS: %ld%s\n",
			       spulse_bp_kind(), (void *)spulse_bp_at,
			       PTR_ERR(probe),
			       !IS_ENABLED(CONFIG_KPROBES) &&
			       spulse_bp_type == HW_BREAKPOINT_X ?
			       " (x86 refuses kernel execute breakpoints without CONFIG_KPROBES)" :
			       "");
			return PTR_ERR(probe);
		}
		perf_event_release_kernel(probe);
		pr_info("event=bp: %s breakpoint at %pS (0x%lx, length %llu)\n",
			spulse_bp_kind(), (void *)spulse_bp_at, spulse_bp_at,
			spulse_bp_len);
		return 0;
	}
	if (spulse.p.event != SPULSE_EVENT_CYCLES)
		return 0;
	spulse.ev_type = PERF_TYPE_HARDWARE;
	spulse.ev_config = PERF_COUNT_HW_CPU_CYCLES;
	probe = spulse_event_create(cpumask_first(cpu_online_mask), NULL);
	if (!IS_ERR(probe)) {
		perf_event_release_kernel(probe);
		return 0;
	}
	err = PTR_ERR(probe);
	if (err != -ENOENT && err != -EOPNOTSUPP) {
		pr_err("cannot create cycles event: %ld\n", err);
		return err;
	}
	pr_info("no hardware cycles event (%ld), falling back to cpu-clock\n",
		err);
	spulse.p.event = SPULSE_EVENT_CPU_CLOCK;
	spulse.ev_type = PERF_TYPE_SOFTWARE;
	spulse.ev_config = PERF_COUNT_SW_CPU_CLOCK;
	return 0;
}

/*
 * Take a reference on each live thread of the target (a global tgid, as
 * the handler compares it), up to @max; the rest are counted in *@over.
 * Returns the count, or -ESRCH when the target is gone.
 */
static int spulse_threads_collect(struct task_struct **t, u32 max, u32 *over)
{
	struct task_struct *leader, *th;
	int n = 0;

	*over = 0;
	rcu_read_lock();
	leader = pid_task(find_pid_ns(spulse.p.target_pid, &init_pid_ns),
			  PIDTYPE_TGID);
	if (!leader) {
		rcu_read_unlock();
		return -ESRCH;
	}
	for_each_thread(leader, th) {
		if (th->flags & PF_EXITING)
			continue;
		if (n == max) {
			(*over)++;
			continue;
		}
		get_task_struct(th);
		t[n++] = th;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Add what each task event (with its inherited children, which
 * perf_event_read_value() sums, exited ones included) was enabled and
 * running since the last fold to the stats of the first possible CPU
 * (the handler never writes these two keys). With @add false, only take
 * the times so far as the baseline (at start: the events ran since their
 * creation, before the gate opened).
 */
static void spulse_task_fold(bool add)
{
	struct spulse_cpu *c = per_cpu_ptr(spulse.cpu,
					   cpumask_first(cpu_possible_mask));
	u64 enabled, running;
	u32 i;

	for (i = 0; i < spulse.ntev; i++) {
		struct spulse_tev *t = &spulse.tev[i];

		enabled = 0;
		running = 0;
		perf_event_read_value(t->ev, &enabled, &running);
		if (add && enabled >= t->enabled && running >= t->running) {
			WRITE_ONCE(c->stats.event_enabled_ns,
				   c->stats.event_enabled_ns + enabled -
				   t->enabled);
			WRITE_ONCE(c->stats.event_running_ns,
				   c->stats.event_running_ns + running -
				   t->running);
		}
		t->enabled = enabled;
		t->running = running;
	}
}

/*
 * Release every task event. perf_event_release_kernel() removes and frees
 * the inherited children too, each off its CPU first, so no handler runs
 * on any of them afterwards.
 */
static void spulse_task_release(void)
{
	u32 i;

	for (i = 0; i < spulse.ntev; i++)
		perf_event_release_kernel(spulse.tev[i].ev);
	kvfree(spulse.tev);
	spulse.tev = NULL;
	spulse.ntev = 0;
}

/**
 * spulse_sample_prepare() - create the task events (events=task)
 *
 * Context: process context, spulse.lock held, stopped. One event (on,
 * gated by spulse.running) per thread of the target now (at most
 * SPULSE_TASK_EVENTS_MAX; the rest and failed creations are counted in
 * task_events_failed), created outside
 * RCU since creation sleeps; threads the target creates later inherit
 * them. A thread created while this runs, by a thread whose event does not
 * exist yet, is missed (perf record -p has the same window). A no-op with
 * events=cpu or when the events exist.
 *
 * Return: 0, -ESRCH (the target is gone), -ENOMEM, or the creation error
 * when no thread got an event.
 */
int spulse_sample_prepare(void)
{
	struct task_struct **t;
	struct perf_event *ev;
	u32 over = 0, failed = 0;
	int n, i, r = 0;

	if (!spulse_task_mode() || spulse.tev)
		return 0;
	t = kvcalloc(SPULSE_TASK_EVENTS_MAX, sizeof(*t), GFP_KERNEL);
	spulse.tev = kvcalloc(SPULSE_TASK_EVENTS_MAX, sizeof(*spulse.tev),
			      GFP_KERNEL);
	if (!t || !spulse.tev) {
		r = -ENOMEM;
		goto out;
	}
	n = spulse_threads_collect(t, SPULSE_TASK_EVENTS_MAX, &over);
	if (n < 0) {
		r = n;
		goto out;
	}
	for (i = 0; i < n; i++) {
		ev = spulse_event_create(-1, t[i]);
		put_task_struct(t[i]);
		if (IS_ERR(ev)) {
			/* -ESRCH: the thread exited meanwhile, nothing lost */
			if (PTR_ERR(ev) != -ESRCH) {
				failed++;
				if (!r)
					r = PTR_ERR(ev);
			}
			continue;
		}
		spulse.tev[spulse.ntev++].ev = ev;
	}
	WRITE_ONCE(spulse.task_events, spulse.ntev);
	WRITE_ONCE(spulse.task_events_failed, failed + over);
	if (failed)
		pr_warn("%u of the target's threads got no perf event (%d)\n",
			failed, r);
	if (over)
		pr_warn("target has more than %u threads: %u not sampled\n",
			SPULSE_TASK_EVENTS_MAX, over);
	if (spulse.ntev)
		r = 0;
	else if (!r)
		r = -ESRCH;
out:
	kvfree(t);
	if (r)
		spulse_task_release();
	return r;
}

/*
 * events=task: open the gate, or close it and release the events (a new
 * start creates them again on the threads of that moment). The events
 * were created on (spulse_event_create() says why they are never turned
 * on or off); on opening, their enabled and running times so far become
 * the baseline, so the stats count from here. Closing: spulse.running
 * off, then the release, which removes every inherited child off its CPU
 * first, so no handler runs afterwards.
 */
/* Forget every pending throttle: its event is gone or off. */
static void spulse_throttle_forget(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		c->thr_ns = 0;
		c->thr_ev = NULL;
	}
}

static void spulse_task_enable(bool on)
{
	if (on) {
		spulse_task_fold(false);
		WRITE_ONCE(spulse.running, true);
		return;
	}
	WRITE_ONCE(spulse.running, false);
	spulse_task_fold(true);
	spulse_task_release();
	spulse_throttle_forget();
}

/**
 * spulse_sample_init() - pick the event and create one per online CPU
 *
 * Context: process context (load). Events are created disabled;
 * spulse_sample_enable() turns them on. CPUs coming online later get
 * theirs from the hotplug state set up here.
 *
 * Return: 0 or a negative errno (nothing left allocated).
 */
int spulse_sample_init(void)
{
	int r = spulse_pick_event();

	if (r || spulse_task_mode())
		return r;
	spulse.ev_loading = true;
	r = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "spulse:online",
			      spulse_cpu_online, spulse_cpu_offline);
	spulse.ev_loading = false;
	if (r < 0)
		return r;
	spulse.cpuhp_state = r;
	return 0;
}

/**
 * spulse_sample_exit() - release every event (no handler runs afterwards)
 */
void spulse_sample_exit(void)
{
	if (spulse.tev) {
		WRITE_ONCE(spulse.running, false);
		spulse_task_release();
	}
	if (spulse.cpuhp_state > 0)
		cpuhp_remove_state(spulse.cpuhp_state);
	spulse.cpuhp_state = 0;
	spulse.cpus_no_event = 0;
}

/**
 * spulse_sample_enable() - enable or disable every CPU's event
 * @on: enable
 *
 * Caller holds spulse.lock. Takes the hotplug read lock so that the set of
 * events and spulse.running change together. perf_event_disable() returns
 * once the event is off on its CPU, so no handler is running afterwards;
 * then each event's enabled/running times are folded into the stats and a
 * pending throttle gap is forgotten (the off time is not a throttle loss).
 * With events=task, off also releases the task events (inherited children
 * included), so no handler runs afterwards either.
 */
void spulse_sample_enable(bool on)
{
	int cpu;

	if (spulse_task_mode()) {
		spulse_task_enable(on);
		return;
	}
	cpus_read_lock();
	WRITE_ONCE(spulse.running, on);
	for_each_online_cpu(cpu) {
		struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

		if (!c->event)
			continue;
		if (on) {
			perf_event_enable(c->event);
			continue;
		}
		perf_event_disable(c->event);
		spulse_event_fold(c);
		c->thr_ns = 0;
		c->thr_ev = NULL;
	}
	cpus_read_unlock();
}
