/* SPDX-License-Identifier: MIT */
/*
 * Report rows keyed by --sort keys (sym, dso, comm, pid, tid, srcline, host,
 * comma-combined): self and total weight per row, aggregated once per
 * (stack, thread) cell of a counted profile, never per sample. Shared by
 * spulse report and spulse diff.
 */
#ifndef SPULSE_SORT_H
#define SPULSE_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "sym/strtab.h"

enum sort_key {
	SORT_SYM = 0,	/* function (label) and its module */
	SORT_DSO,	/* module path */
	SORT_COMM,
	SORT_PID,
	SORT_TID,
	SORT_SRCLINE,	/* file:line of the frame address (sym_frame) */
	SORT_HOST,	/* the thread's host (identity, docs/FLEET.md) */
	SORT_NKEYS
};

#define SORT_MAX_KEYS 8

struct sort_spec {
	int keys[SORT_MAX_KEYS];	/* enum sort_key, in the order given */
	int nkeys;			/* 0 = default (sym) */
	/* self goes to the first frame from the leaf that is not the
	 * scheduler's (sort_sched_frame(): the wait site, e.g.
	 * futex_wait_queue, not __schedule), or to the leaf when every
	 * frame is (report --off-cpu's default) */
	bool wait_leaf;
};

/* A kernel frame of the scheduler itself (__schedule, schedule*,
 * io_schedule*, preempt_schedule*, cond_resched, rt_mutex_schedule...):
 * the leaf of every off-CPU stack, which says nothing of what was
 * waited for. */
bool sort_sched_frame(const struct sym_frame *sf);

struct sort_row {
	uint64_t self, total;
	uint64_t stamp;		/* last cell counted into total, + 1 */
	uint32_t frame;		/* a frame of the row (for display) */
	uint32_t thread;	/* a thread of the row, SPULSE_NONE if none */
	uint32_t fpart, tpart;	/* ids in ->parts of the key's two halves */
};

struct sort_table {
	struct sort_spec spec;
	struct profile *p;
	struct sort_row *rows;
	size_t nrows, cap;
	struct strtab parts;	/* frame-part and thread-part texts */
	int64_t *frame_part;	/* frame id -> parts id, -2 = not yet */
	uint32_t nframes;
	int64_t *thread_part;	/* thread id -> parts id, -2 = not yet */
	uint32_t nthreads;
	uint64_t *map_keys;	/* (frame part, thread part) -> row */
	uint32_t *map_vals;	/* row + 1, 0 = empty */
	size_t nslots;
};

/**
 * sort_parse() - parse a --sort argument ("sym", "comm,dso,sym", ...)
 * @s: spec to fill (keys accumulate over repeated options)
 * @arg: comma-separated key names
 *
 * Return: 1, or EXIT_USAGE after a message naming the bad key.
 */
int sort_parse(struct sort_spec *s, const char *arg);

/* Do the keys need per-thread cells (comm, pid, tid)? */
bool sort_needs_thread(const struct sort_spec *s);

/* Does the spec hold @key? */
bool sort_has(const struct sort_spec *s, int key);

/**
 * sort_aggregate() - rows of a counted profile
 * @t: zeroed table; @spec is copied
 * @p: profile after profile_count() (with ->by_thread set when
 *     sort_needs_thread())
 * @spec: the keys
 *
 * Self: the cell's leaf frame's row; total: every row on the stack,
 * counted once per cell even under recursion.
 *
 * Return: 0 or a negative errno.
 */
int sort_aggregate(struct sort_table *t, struct profile *p,
		   const struct sort_spec *spec);

/* Row of frame @frame in thread @thread (created if new); -1 on error. */
int64_t sort_row_of(struct sort_table *t, uint32_t frame, uint32_t thread);

/*
 * Row indices sorted by self (or total) descending, then the other value,
 * then key text; malloc'd, caller frees; NULL on allocation failure.
 */
uint32_t *sort_order(const struct sort_table *t, bool by_total);

/*
 * Display text of @key for row @row (function label, module, comm, pid,
 * tid or file:line) into @buf (may be returned as is, or a symbolizer
 * string).
 */
const char *sort_field(const struct sort_table *t, uint32_t row, int key,
		       char *buf, size_t len);

/* Key text of row @row (all parts), for matching rows across profiles. */
const char *sort_key_text(const struct sort_table *t, uint32_t row,
			  char *buf, size_t len);

/*
 * Module of row @row for JSON: a module frame's path exactly as recorded
 * (arbitrary bytes, *@len of them), else the symbolizer's dso name
 * ("[kernel.kallsyms]", "" for the truncated marker, ...).
 */
const char *sort_module(const struct sort_table *t, uint32_t row,
			size_t *len);

/* Name of @key as written on the command line ("sym", "dso", ...). */
const char *sort_key_name(int key);

void sort_free(struct sort_table *t);

#endif /* SPULSE_SORT_H */
