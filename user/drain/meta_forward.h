/* SPDX-License-Identifier: MIT */
/*
 * Forwarding of the kernel's meta stream (modules, module and process
 * deactivations, Python records) into the spool, in order, with
 * deactivations held until the samples read before them are written.
 */
#ifndef SPULSE_DRAIN_META_FORWARD_H
#define SPULSE_DRAIN_META_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include <libspulse.h>

/*
 * A meta record waiting to be applied. A deactivation waits until every
 * sample up to @until_ns (the newest sample time read when the deactivation
 * was read) has been written; records after it wait behind it, in order.
 */
struct drain_pending_meta {
	struct spulse_record r;
	int64_t until_ns;
	bool barrier;
};

struct drain_pid_head {
	uint32_t pid;
	uint32_t head;		/* first meta module id, UINT32_MAX none */
	bool used;
};

/**
 * struct drain_meta_fwd - meta forwarding state
 * @mod_map: meta module id -> spool module id
 * @act_pos: meta module id -> index in @act, UINT32_MAX when not active
 *           in the spool (as applied so far)
 * @act: the active meta module ids (dense, unordered)
 * @nact: entries in @act
 * @pid_next: meta module id -> next id of the same pid's list
 * @ph: pid -> head of its list (open addressing), emptied by a process
 *      deactivation, so each id is walked at most once
 * @phcap: slots in @ph
 * @phn: slots used
 * @mod_cap: entries in @mod_map, @act_pos, @act and @pid_next
 * @gen: module generation (from 1), bumped whenever the set of active
 *       modules in the spool changes; renumbering caches key on it
 * @pend: ring of held records
 * @npend: records held
 * @head: index of the oldest held record
 * @cap: ring capacity
 */
struct drain_meta_fwd {
	uint32_t *mod_map;
	uint32_t *act_pos;
	uint32_t *act;
	size_t nact;
	uint32_t *pid_next;
	struct drain_pid_head *ph;
	size_t phcap, phn;
	size_t mod_cap;
	uint32_t gen;
	struct drain_pending_meta *pend;
	size_t npend, head, cap;
};

void drain_meta_init(struct drain_meta_fwd *m);
void drain_meta_free(struct drain_meta_fwd *m);

/**
 * drain_meta_record() - forward one validated meta record
 * @m: state
 * @rec: the spool's Recorder
 * @r: the record (module path/build-id must stay valid until applied: they
 *     point into the meta stream's definitions)
 * @samples_read: at least one sample has been read from a CPU stream
 * @newest_ns: the newest sample time read so far
 *
 * Module definitions and Python records apply at once unless something is
 * held; a deactivation is held while samples were read before it.
 *
 * Return: 0 or a negative errno.
 */
int drain_meta_record(struct drain_meta_fwd *m, struct spulse_recorder *rec,
		      const struct spulse_record *r, bool samples_read,
		      int64_t newest_ns);

/*
 * Apply held records, in order, up to the first deactivation that still
 * waits for samples at or before its time; @next_ns is the time of the next
 * sample to be written (INT64_MAX: apply everything). 0 or -errno.
 */
int drain_meta_apply_pending(struct drain_meta_fwd *m,
			     struct spulse_recorder *rec, int64_t next_ns);

/*
 * How long the held records wait: drain_meta_apply_pending() with a
 * @next_ns greater than this applies at least the oldest one, and with a
 * @next_ns at or below it applies nothing. INT64_MAX when nothing is held,
 * INT64_MIN when the oldest held record waits for no sample.
 */
int64_t drain_meta_wait_ns(const struct drain_meta_fwd *m);

/*
 * Define every module active in the spool so far again, into a new
 * Recorder @rec (a flight-recorder generation), from the meta stream's
 * definitions; the meta id -> spool id map then names @rec's ids and the
 * module generation is bumped. 0 or -errno.
 */
int drain_meta_redefine(struct drain_meta_fwd *m, struct spulse_recorder *rec,
			const struct spulse_defs *meta_defs);

#endif
