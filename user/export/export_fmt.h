/* SPDX-License-Identifier: MIT */
/*
 * Room export (user/export/, build/export/libexport.a): files other tools
 * read. Owns export_common.c, export_pprof.c (protobuf-c, proto/),
 * export_speedscope.c, export_text.c (perf-script, JSON), trace_event.c
 * (Chrome trace events) and svg.c (flame graphs). Includes analysis/, sym/
 * and libspulse only.
 *
 * spulse export: the formats other tools read (docs/CLI.md "export").
 * Each writer takes an opened profile (profile_open(), not yet counted)
 * and returns an exit code (EXIT_OK, or EXIT_INVALID after a message).
 */
#ifndef SPULSE_EXPORT_FMT_H
#define SPULSE_EXPORT_FMT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/profile.h"

/** Options shared by the export writers. */
struct export_opts {
	bool inline_frames;	/* expand inline chains (--inline) */
};

/** One sample as the writers keep it. */
struct export_sample {
	int64_t time_ns;	/* from the profile start */
	uint32_t thread;	/* thread id */
	uint32_t stack;		/* leaf stack node */
	uint32_t cpu;		/* SPULSE_NONE = unknown */
};

/**
 * export_load_samples() - every sample that passes the filters, in memory
 * @p: opened profile
 * @sort: order them by time (stable: equal times keep stream order)
 * @out: malloc'd array (caller frees), *@n entries
 *
 * Return: an exit code.
 */
int export_load_samples(struct profile *p, bool sort,
			struct export_sample **out, size_t *n);

/* The profile's sampling period in ns (interval_us * 1000). */
uint64_t export_period_ns(const struct profile *p);

/* --format pprof: gzipped profile.proto to @f (export_pprof.c). */
int export_pprof(struct profile *p, FILE *f, const struct export_opts *o);

/* --format speedscope: speedscope's file format (export_speedscope.c). */
int export_speedscope(struct profile *p, FILE *f,
		      const struct export_opts *o);

/* --format perf-script: perf script text, time-ordered (export_text.c). */
int export_perf_script(struct profile *p, FILE *f,
		       const struct export_opts *o);

/* --format json: one object with a frame table (export_text.c). */
int export_json(struct profile *p, FILE *f, const struct export_opts *o);

#endif /* SPULSE_EXPORT_FMT_H */
