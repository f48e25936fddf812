/* SPDX-License-Identifier: MIT */
/*
 * Unwind-table loading (docs/DRAIN.md "Unwind tables", docs/UNWIND.md
 * "Loading"): for every module record of the meta stream, build or fetch
 * from the build-id cache the file's unwind table (libspulse-unwind,
 * user/unwind/unwind_build.h), check it against the record's build-id, ADD
 * it to debugfs spulse/unwind once per build-id, and send the process's
 * whole mapping set (op MAP) whenever its set of mapped tables changes.
 *
 * The table work runs in a worker thread: drain_unwind_meta() only copies
 * the record into a queue, so the drain loop never waits for a build.
 */
#ifndef SPULSE_DRAIN_UNWIND_LOAD_H
#define SPULSE_DRAIN_UNWIND_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libspulse.h>

/**
 * struct drain_unwind_opts - loader options
 * @sz: sizeof(struct drain_unwind_opts) as the caller knows it
 * @path: the debugfs unwind file (DIR/unwind); required
 * @cache_dir: table cache (NULL: $HOME/.cache/spulse/unwind, none without
 *	$HOME; "" : no cache, every table is built)
 * @log: diagnostics (NULL = stderr)
 * @max_files: distinct files remembered (0 = 4096); later ones are counted
 *	as failed
 * @skip_pid: module records of this process that map exactly what this
 *	process maps (start, end, path: a fork of it before its exec) are
 *	ignored (0 = none): `spulse record -- CMD` forks a copy of itself that
 *	execs CMD, and the module may report the copy's libraries first
 */
struct drain_unwind_opts {
	size_t sz;
	const char *path;
	const char *cache_dir;
	FILE *log;
	unsigned int max_files;
	uint32_t skip_pid;
};

/**
 * struct drain_unwind_stats - what the loader did
 * @loaded: tables ADDed to the kernel
 * @cache_hits: of those, tables read from the cache
 * @refused: files whose table's build-id differs from the module record's
 * @failed: files with no table (no CFI, unreadable, kernel refused the ADD)
 * @skipped: module records with no file to read ([vdso] and the like)
 * @maps: MAP messages the kernel accepted
 * @map_errors: MAP messages it refused
 * @rows: rows in the loaded tables
 * @bytes: bytes of the ADD messages written (tables as sent)
 * @build_ns: wall time spent obtaining tables (build or cache)
 * @queued: records waiting for the worker now
 */
struct drain_unwind_stats {
	uint64_t loaded, cache_hits, refused, failed, skipped;
	uint64_t maps, map_errors;
	uint64_t rows, bytes, build_ns;
	uint64_t queued;
};

struct drain_unwind;

/**
 * drain_unwind_open() - open the debugfs unwind file, start the worker
 * @o: options (@o->path required)
 * @out: the loader
 *
 * Return: 0, -ENOENT when @o->path does not exist (the module takes no
 * tables: the caller goes on with frame-pointer stacks), another -errno.
 */
int drain_unwind_open(const struct drain_unwind_opts *o,
		      struct drain_unwind **out);

/**
 * drain_unwind_meta() - hand over one validated meta-stream record
 * @u: the loader
 * @r: the record; module, module-deactivate and process-deactivate records
 *	are queued (path and build-id copied), others ignored
 *
 * Return: 0 or -ENOMEM.
 */
int drain_unwind_meta(struct drain_unwind *u, const struct spulse_record *r);

/**
 * drain_unwind_wait() - wait until every queued record is processed
 * @u: the loader
 * @timeout_ms: at most this long
 *
 * Return: 0, or -ETIMEDOUT with records still queued.
 */
int drain_unwind_wait(struct drain_unwind *u, unsigned int timeout_ms);

/**
 * drain_unwind_get_stats() - current totals
 * @u: the loader
 * @st: filled in
 */
void drain_unwind_get_stats(struct drain_unwind *u,
			    struct drain_unwind_stats *st);

/**
 * drain_unwind_close() - stop the worker (records still queued are
 *	dropped), DEL every table this loader added, close the file, free
 * @u: the loader (NULL is allowed)
 */
void drain_unwind_close(struct drain_unwind *u);

/**
 * struct drain_unwind_preload_stats - what drain_unwind_preload() did
 * @files: files asked for (the vDSO counted as one)
 * @done: of those, tried before the time bound
 * @loaded: tables in the kernel (the same file by two paths counts twice)
 * @timed_out: the bound passed with files left
 * @ns: time taken
 */
struct drain_unwind_preload_stats {
	size_t files, done, loaded;
	bool timed_out;
	uint64_t ns;
};

/**
 * drain_unwind_preload() - load tables before sampling needs them
 * @o: options as for drain_unwind_open() (@o->path required; @o->skip_pid
 *	unused here)
 * @paths: files whose tables to build or read from the cache and ADD
 * @n: how many
 * @vdso: also the running kernel's vDSO (this process's image)
 * @timeout_ms: stop starting new files after this long (0 = no bound);
 *	@ps->timed_out says so
 * @ps: filled in
 *
 * Runs in the caller's thread. The tables are kept in this process and
 * handed to the next drain_unwind_open() on the same file, which then
 * only MAPs them when the meta stream reports their mappings (keyed by
 * build-id, so another path to the same file matches). Call again to add
 * files; drain_unwind_preload_drop() DELs them when no loader is opened.
 *
 * Return: 0, or -errno opening @o->path (nothing loaded).
 */
int drain_unwind_preload(const struct drain_unwind_opts *o,
			 const char *const *paths, size_t n, bool vdso,
			 unsigned int timeout_ms,
			 struct drain_unwind_preload_stats *ps);

/**
 * drain_unwind_preload_map() - MAP a process onto the preloaded tables now
 * @pid: a process whose executable mappings (/proc/PID/maps) the
 *	preloaded files and the vDSO cover
 *
 * For a process that will not exec before sampling starts (`spulse record
 * -- CMD` holds its command under ptrace after the exec; -p PID): its set
 * is in the kernel before the first sample, instead of after the meta
 * stream's round trip. The loader replaces it with the meta stream's view
 * later. Not after drain_unwind_open() adopted the tables.
 *
 * Return: the number of mappings sent, 0 (none covered), -ENOENT (nothing
 * preloaded), another -errno (the kernel's refusal).
 */
int drain_unwind_preload_map(uint32_t pid);

/** drain_unwind_preload_drop() - DEL and forget preloaded tables not adopted */
void drain_unwind_preload_drop(void);

/**
 * drain_unwind_default_cache() - the default cache directory
 *
 * Return: malloc'd "$HOME/.cache/spulse/unwind", or NULL without $HOME.
 */
char *drain_unwind_default_cache(void);

#endif
