/* SPDX-License-Identifier: MIT */
/*
 * Room analysis (user/analysis/, build/analysis/libanalysis.a): what the
 * samples add up to. Owns profile.c (aggregation), calltree.c (merged call
 * trees), filter.c (--pid/--comm/... filters), sort.c (report rows, diff)
 * and util.c (exit codes and helpers every room above shares). Includes
 * sym/ and libspulse only.
 *
 * Sample aggregation for report/flame/export: a Replay over the spool, the
 * sample count per leaf stack node, and a symbolizer for the frames.
 */
#ifndef SPULSE_PROFILE_H
#define SPULSE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "filter.h"
#include "sym/symbolize.h"

/* Weight of one (stack, thread) pair after counting. */
struct profile_cell {
	uint32_t stack;		/* leaf stack id */
	uint32_t thread;	/* thread id, SPULSE_NONE unless ->by_thread */
	uint64_t weight;	/* samples, or ns with ->offcpu */
};

struct profile {
	const char *file;
	struct spulse_replay *replay;
	const struct spulse_defs *defs;
	const struct spulse_info *info;
	struct symbolizer *sym;
	uint64_t *stack_count;	/* samples per leaf stack id */
	uint32_t nstacks;
	uint64_t total;		/* samples counted (after the pid filter) */
	bool has_pid;
	uint32_t pid;
	const char *kallsyms;	/* --kallsyms, or NULL for FILE.kallsyms */
	const char *symfs;	/* --symfs, or NULL */
	/* off-CPU analysis (--off-cpu, --state, --metric) */
	bool offcpu;		/* weights are ns of off-CPU intervals */
	int metric;		/* enum profile_metric */
	uint32_t state_mask;	/* bit per enum spulse_offcpu_state; 0 = all */
	uint64_t intervals;	/* intervals counted by profile_count() */
	bool offcpu_opts;	/* --state or --metric was given */
	/* filters (filter.h), resolved to per-id tables by profile_open() */
	struct filter filter;
	uint8_t *thread_ok;	/* per thread id; NULL = every thread */
	uint32_t nthreads;
	uint8_t *frame_ok;	/* per frame id; NULL = every frame */
	uint32_t nframes;
	uint8_t *stack_ok;	/* per stack id: 0 unknown, 1 kept, 2 not;
				 * NULL when no stack-level filter is set */
	int64_t origin_ns;	/* --time origin: the earliest sample (or,
				 * without samples, interval) */
	int64_t t_lo, t_hi;	/* --time window in ns from the profile
				 * start, [t_lo, t_hi) */
	/* set before profile_count() to keep counts per (stack, thread) */
	bool by_thread;
	/* --inline: profile_stack_frames() expands each frame into its
	 * inline chain, outermost first; entries of a chain longer than one
	 * get virtual frame ids >= nframes (profile_frame() resolves both) */
	bool inline_frames;
	bool no_demangle;		/* --no-demangle */
	const char *debug_dir;		/* --debug-dir DIR */
	uint32_t *chain_first;		/* frame id -> first virtual id,
					 * UINT32_MAX = not looked up */
	uint32_t *chain_len;		/* frame id -> chain length */
	const struct sym_frame **vframes;	/* virtual id - nframes -> */
	uint32_t *vreal;		/* virtual id - nframes -> frame id */
	uint32_t nvframes, capvframes;
	struct profile_cell *cells;	/* after profile_count() */
	size_t ncells;
};

/* What an off-CPU interval weighs. */
enum profile_metric {
	METRIC_OFFCPU = 0,	/* blocked_ns + runq_ns (default) */
	METRIC_BLOCKED,		/* blocked_ns: switch-out -> wakeup */
	METRIC_RUNQ,		/* runq_ns: wakeup -> switch-in */
};

/*
 * Options shared by report, flame and export, as getopt_long() codes:
 * 'p' --pid P, 'k' --kallsyms PATH, 'S' --symfs DIR.
 */
#define PROFILE_LONGOPTS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "kallsyms", required_argument, NULL, 'k' }, \
	{ "symfs", required_argument, NULL, 'S' }

/*
 * The filters beyond --pid (filter.h): --tid, --comm, --dso, --time,
 * --kernel, --user; handled by profile_option() too.
 */
#define PROFILE_FILTER_LONGOPTS FILTER_LONGOPTS

/* Symbolizer switches: --inline, --no-demangle, --debug-dir DIR. */
enum {
	PROFILE_OPT_INLINE = 0x1100,
	PROFILE_OPT_NO_DEMANGLE,
	PROFILE_OPT_DEBUG_DIR,
};

#define PROFILE_SYM_LONGOPTS \
	{ "inline", no_argument, NULL, PROFILE_OPT_INLINE }, \
	{ "no-demangle", no_argument, NULL, PROFILE_OPT_NO_DEMANGLE }, \
	{ "debug-dir", required_argument, NULL, PROFILE_OPT_DEBUG_DIR }

/* Off-CPU options: 'O' --off-cpu, 's' --state S,D,..., 'M' --metric M. */
#define PROFILE_OFFCPU_LONGOPTS \
	{ "off-cpu", no_argument, NULL, 'O' }, \
	{ "state", required_argument, NULL, 's' }, \
	{ "metric", required_argument, NULL, 'M' }

/**
 * profile_option() - apply one shared option to @p
 * @p: profile being set up
 * @c: getopt code
 * @arg: its argument
 *
 * Return: 1 when @c was a shared option, 0 when it is not one, or
 * EXIT_USAGE (after a message) for a bad value.
 */
int profile_option(struct profile *p, int c, const char *arg);

/**
 * profile_open() - open @file and symbolizer (no counting yet)
 * @p: zero-initialized; set ->has_pid/->pid first to filter by process
 * @file: spool (->kallsyms and ->symfs, set by profile_option(), apply)
 *
 * Return: an exit code (EXIT_OK, or EXIT_INVALID after printing the error).
 */
int profile_open(struct profile *p, const char *file);

/*
 * Count samples per leaf stack, or with ->offcpu the metric's nanoseconds
 * of the wanted intervals per leaf stack (->total is then in ns). Returns
 * an exit code.
 */
int profile_count(struct profile *p);

/*
 * --state/--metric without --off-cpu: print a usage error for @cmd and
 * return EXIT_USAGE; else EXIT_OK.
 */
int profile_check_offcpu_opts(const struct profile *p, const char *cmd);

/* Does interval @iv pass the pid and state filters? */
bool profile_wants_offcpu(const struct profile *p,
			  const struct spulse_offcpu *iv);

/* The weight of @iv under ->metric, in ns. */
uint64_t profile_offcpu_weight(const struct profile *p,
			       const struct spulse_offcpu *iv);

/* "offcpu (blocked+runq)", "blocked" or "runq": for header lines. */
const char *profile_metric_text(const struct profile *p);

/* The --state filter as "S,D" (or "all"), into @buf of @len bytes. */
const char *profile_states_text(const struct profile *p, char *buf,
				size_t len);

/*
 * Every wanted interval, in stream order, into a malloc'd *@out (*@n
 * entries; caller frees). Returns an exit code.
 */
int profile_load_offcpu(struct profile *p, struct spulse_offcpu **out,
			size_t *n);

/*
 * Print "FILE: no off-CPU intervals ..." to stderr when the spool holds
 * none at all (recorded without offcpu=1, or an older spool).
 */
void profile_note_no_offcpu(const struct profile *p);

/* Does sample @s pass the thread, time and stack filters? */
bool profile_wants(const struct profile *p, const struct spulse_sample *s);

/*
 * Frames of stack @leaf, root first, into @frames (room for
 * SPULSE_MAX_DEPTH), without the frames --kernel/--user drop. Returns the
 * depth (0 when every frame was dropped), or -1 for a broken chain.
 */
int profile_stack_frames(const struct profile *p, uint32_t leaf,
			 uint32_t *frames);

/*
 * Group the defined threads by (pid, tid): *@keys gets the sorted distinct
 * pid << 32 | tid (*@n of them), *@map thread id -> index in *@keys, and
 * *@latest (may be NULL) per index the last thread id defining it (for its
 * newest comm). Caller frees all three. Returns 0 or -1 (out of memory).
 */
int profile_thread_groups(const struct profile *p, uint64_t **keys,
			  size_t *n, uint32_t **map, uint32_t **latest);

/*
 * The symbolized frame of a frame id from profile_stack_frames(): a real
 * frame id, or with --inline a virtual id of an inline-chain entry. NULL
 * on error.
 */
const struct sym_frame *profile_frame(const struct profile *p, uint32_t id);

/* Label id of frame id @id (real or virtual); -1 on error. */
int64_t profile_label_id(const struct profile *p, uint32_t id);

/* The real frame id behind @id (itself unless virtual). */
uint32_t profile_real_frame(const struct profile *p, uint32_t id);

/*
 * Does stack @stack pass the stack-level filters (--dso: a frame in one of
 * the modules; --kernel/--user: a frame left)? Cached per stack id.
 */
bool profile_stack_ok(const struct profile *p, uint32_t stack);

/* Does a sample or interval at @time_ns pass --time? */
static inline bool profile_time_ok(const struct profile *p, int64_t time_ns)
{
	return !p->filter.has_time ||
	       (time_ns >= p->t_lo && time_ns < p->t_hi);
}

/* Does thread id @thread pass --pid/--tid/--comm? */
static inline bool profile_thread_ok(const struct profile *p, uint32_t thread)
{
	return !p->thread_ok || (thread < p->nthreads && p->thread_ok[thread]);
}

/*
 * Label text of thread id @thread for --root / --sort keys: "COMM" (key
 * 'c'), "COMM PID" ('p') or "COMM PID/TID" ('t'), into @buf.
 */
const char *profile_thread_label(const struct profile *p, uint32_t thread,
				 int key, char *buf, size_t len);

/*
 * Copy the options of @src (filters, --kallsyms, --symfs, off-CPU
 * options, ->by_thread) into the zeroed, unopened @dst, for a second
 * profile read the same way (diff). Returns 0 or -ENOMEM.
 */
int profile_copy_options(struct profile *dst, const struct profile *src);

void profile_close(struct profile *p);

#endif /* SPULSE_PROFILE_H */
