/* SPDX-License-Identifier: MIT */
/*
 * Sample aggregation for report/flame/export: a Replay over the spool, the
 * sample count per leaf stack node, and a symbolizer for the frames.
 */
#ifndef SPULSE_PROFILE_H
#define SPULSE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize.h"

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
};

/*
 * Options shared by report, flame and export, as getopt_long() codes:
 * 'p' --pid P, 'k' --kallsyms PATH, 'S' --symfs DIR.
 */
#define PROFILE_LONGOPTS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "kallsyms", required_argument, NULL, 'k' }, \
	{ "symfs", required_argument, NULL, 'S' }

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

/* Count samples per leaf stack. Returns an exit code. */
int profile_count(struct profile *p);

/* Does sample @s pass the pid filter? */
bool profile_wants(const struct profile *p, const struct spulse_sample *s);

/*
 * Frames of stack @leaf, root first, into @frames (room for
 * SPULSE_MAX_DEPTH). Returns the depth, or -1 for a broken chain.
 */
int profile_stack_frames(const struct profile *p, uint32_t leaf,
			 uint32_t *frames);

void profile_close(struct profile *p);

#endif /* SPULSE_PROFILE_H */
