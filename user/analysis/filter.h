/* SPDX-License-Identifier: MIT */
/*
 * Sample / interval filters shared by report, flame, diff and latency
 * (docs/CLI.md "Filters"): --pid, --tid, --comm (per thread), --time
 * START,END (per sample or interval), --dso (per stack) and --kernel /
 * --user (per frame). Every decision is made once per thread, stack or
 * frame id and cached, so the cost per sample is a table lookup.
 */
#ifndef SPULSE_FILTER_H
#define SPULSE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libspulse.h>

/* --kernel / --user: which frames of each stack are kept. */
enum filter_frames {
	FILTER_FRAMES_ALL = 0,
	FILTER_FRAMES_KERNEL,	/* kernel frames only */
	FILTER_FRAMES_USER,	/* module, user and [truncated] frames */
};

struct filter {
	uint32_t *pids, *tids;	/* malloc'd lists (--pid, --tid) */
	size_t npids, ntids;
	char **comms, **dsos;	/* malloc'd copies (--comm, --dso) */
	size_t ncomms, ndsos;
	char **hosts;		/* malloc'd copies (--host) */
	size_t nhosts;
	bool has_time;		/* --time START,END */
	double t_start, t_end;	/* seconds from the origin; END may be inf */
	int frames;		/* enum filter_frames */
};

/* getopt_long() codes of the filter options (above any short option). */
enum {
	FILTER_OPT_TID = 0x1000,
	FILTER_OPT_COMM,
	FILTER_OPT_DSO,
	FILTER_OPT_TIME,
	FILTER_OPT_KERNEL,
	FILTER_OPT_USER,
	FILTER_OPT_HOST,
};

#define FILTER_LONGOPTS \
	{ "tid", required_argument, NULL, FILTER_OPT_TID }, \
	{ "comm", required_argument, NULL, FILTER_OPT_COMM }, \
	{ "dso", required_argument, NULL, FILTER_OPT_DSO }, \
	{ "time", required_argument, NULL, FILTER_OPT_TIME }, \
	{ "kernel", no_argument, NULL, FILTER_OPT_KERNEL }, \
	{ "user", no_argument, NULL, FILTER_OPT_USER }, \
	{ "host", required_argument, NULL, FILTER_OPT_HOST }

/**
 * filter_option() - apply one filter option
 * @f: filter being set up
 * @c: getopt code ('p' for --pid, or a FILTER_OPT_* code)
 * @arg: its argument (NULL for --kernel/--user)
 *
 * Lists are comma-separated and repeatable (values accumulate).
 *
 * Return: 1 when @c was a filter option, 0 when not, or 2 (EXIT_USAGE)
 * after printing a message for a bad value.
 */
int filter_option(struct filter *f, int c, const char *arg);

/* Is any per-thread filter (pid, tid, comm, host) set? */
bool filter_has_thread(const struct filter *f);

/* Does a thread with this pid, tid and comm pass? */
bool filter_thread(const struct filter *f, uint32_t pid, uint32_t tid,
		   const char *comm, size_t comm_len);

/*
 * Host name of @thread: its source's identity host (docs/FLEET.md), or
 * "unknown" in a spool without identities.
 */
const char *filter_thread_host(const struct spulse_defs *d, uint32_t thread);
/* The same host with its length (a host may hold NUL bytes). */
const char *filter_thread_host_n(const struct spulse_defs *d, uint32_t thread,
				 size_t *len);

/* Does a thread of host @host pass --host? */
bool filter_host(const struct filter *f, const char *host);

/* Does the module path (or "[kernel.kallsyms]"-style name) @dso (@len
 * bytes) match --dso (exactly, or by its last path component)? */
bool filter_dso_matches(const struct filter *f, const char *dso,
			size_t len);

/* Does a frame of kind @kind (enum spulse_frame_kind) stay? */
bool filter_frame_kind(const struct filter *f, uint8_t kind);

/*
 * Text of the active filters but --pid for header lines, as ", tid 5, comm
 * x, ..." ("" when none), into @buf.
 */
const char *filter_describe(const struct filter *f, char *buf, size_t len);

/* Deep copy of @src into @dst (zeroed first); 0 or -ENOMEM. */
int filter_copy(struct filter *dst, const struct filter *src);

void filter_free(struct filter *f);

#endif /* SPULSE_FILTER_H */
