/* SPDX-License-Identifier: MIT */
/*
 * Renumbering: per-CPU (local) thread/frame/stack ids -> the Recorder's
 * (global) ids, mapped lazily when a sample is written.
 *
 * Threads map by content (pid, tid, comm). User frames are interned with
 * spulse_rec_frame_addr(pid of the sample's thread, addr) so that addresses
 * inside an active module of that process become module-relative; kernel
 * frames (kind 2) and the truncated marker are pid independent. A cached
 * user frame or stack mapping is only reused for the same pid and the same
 * module generation: the generation is bumped whenever the set of active
 * modules changes, so later samples see the module state current at the
 * time they are written.
 */
#ifndef SPULSE_DRAIN_RENUMBER_H
#define SPULSE_DRAIN_RENUMBER_H

#include <stdint.h>

#include <libspulse.h>

/** A cached local -> global mapping, valid for (@pid, @gen). */
struct drain_idmap_ent {
	uint32_t global;
	uint32_t pid;
	uint32_t gen;		/* 0 = unmapped; generations start at 1 */
};

/*
 * A mapping of a pid-dependent id for a further process: one local user
 * frame or stack id (the kernel interns raw addresses, so processes running
 * the same code share local ids) maps to a global id per process. The
 * direct entry (struct drain_idvec) holds one process; the others go to a
 * small open-addressing table keyed by (id, pid), so processes sharing
 * stacks do not evict each other's mappings.
 */
struct drain_idalt_ent {
	uint32_t id;
	uint32_t pid;
	uint32_t gen;		/* 0 = free slot */
	uint32_t global;
};

struct drain_idvec {
	struct drain_idmap_ent *v;
	size_t cap;
	struct drain_idalt_ent *alt;	/* power-of-two table, or NULL */
	size_t altcap, altlen;
};

/*
 * The mappings of one per-CPU stream. Thread entries keep the thread's
 * process in .pid (a local thread id's definition never changes within an
 * epoch), so a mapped thread needs no definition lookup.
 */
struct drain_idmap {
	struct drain_idvec threads, frames, stacks;
};

void drain_idmap_free(struct drain_idmap *m);

/* A cache entry valid for every pid (kernel frames, pid-free stacks). */
#define DRAIN_PID_ANY UINT32_MAX

/*
 * Does cache entry @e map its local id for a thread of process @pid in
 * module generation @gen? (Every entry of a pid-free one.)
 */
static inline bool drain_idmap_valid(const struct drain_idmap_ent *e,
				     uint32_t pid, uint32_t gen)
{
	return e->gen && (e->pid == DRAIN_PID_ANY ||
			  (e->pid == pid && e->gen == gen));
}

/**
 * drain_map_sample() - map a per-CPU sample's thread and stack
 * @rec: the output Recorder (definitions are written to it as needed)
 * @defs: the per-CPU stream's definitions
 * @map: that stream's cache
 * @gen: current module generation (>= 1)
 * @thread: local thread id
 * @stack: local leaf stack id
 * @gthread: global thread id
 * @gstack: global leaf stack id
 *
 * Return: 0 or a negative errno from the Recorder or a missing definition.
 */
int drain_map_sample(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t gen, uint32_t thread,
		     uint32_t stack, uint32_t *gthread, uint32_t *gstack);

/*
 * drain_map_thread() - map a local thread id (*pid gets its process);
 * drain_map_stack() - map a local leaf stack id for process @pid.
 */
int drain_map_thread(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t thread, uint32_t *gthread,
		     uint32_t *pid);
int drain_map_stack(struct spulse_recorder *rec, const struct spulse_defs *defs,
		    struct drain_idmap *map, uint32_t gen, uint32_t pid,
		    uint32_t stack, uint32_t *gstack);

/**
 * drain_map_offcpu() - map an interval's ids in place
 * @rec: the output Recorder
 * @defs: the per-CPU stream's definitions
 * @map: that stream's cache
 * @gen: current module generation
 * @iv: interval with local ids; thread, stack, waker thread and waker stack
 *      are replaced by global ids. The stack resolves user frames in the
 *      thread's process, the waker stack in the waker's process (waker
 *      stacks go through the same re-interning as sample stacks).
 *
 * Return: 0 or a negative errno.
 */
int drain_map_offcpu(struct spulse_recorder *rec, const struct spulse_defs *defs,
		     struct drain_idmap *map, uint32_t gen,
		     struct spulse_offcpu *iv);

#endif
