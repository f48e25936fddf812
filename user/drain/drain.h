/* SPDX-License-Identifier: MIT */
/*
 * spulse drain session: debugfs spulse/{meta,cpuN} (or /proc/spulse/, iface.h)
 * -> one SPULSE spool.
 * Used by build/spulse-drain and by `spulse record` (in process).
 */
#ifndef SPULSE_DRAIN_H
#define SPULSE_DRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flight.h"

#define DRAIN_DEFAULT_DEBUGFS	"/sys/kernel/debug/spulse"
#define DRAIN_DEFAULT_KALLSYMS	"/proc/kallsyms"

struct drain_opts {
	const char *debugfs;	/* directory with meta, cpuN, control, stats:
				   debugfs spulse/ or /proc/spulse (iface.h) */
	const char *output;	/* spool path (truncated if it exists) */
	const char *kallsyms;	/* copied to OUTPUT.kallsyms; NULL = don't */
	/* the kernel-symbol cache for /proc/kallsyms (docs/DRAIN.md "Kernel
	 * symbols"): NULL = $HOME/.cache/spulse/kallsyms, "" = none */
	const char *kallsyms_cache;
	unsigned int sync_ms;	/* fsync period; 0 = only at the end */
	unsigned int window_ms;	/* merge window */
	bool control;		/* write start/stop to DIR/control */
	FILE *log;		/* diagnostics (stream errors); NULL = stderr */
	/*
	 * Flight recorder (docs/DRAIN.md): with seconds_ns set, nothing is
	 * written to @output itself; the last seconds are kept in memory and
	 * each trigger writes OUTPUT-NNN.EXT. NULL = off.
	 */
	const struct drain_flight_opts *flight;
	/*
	 * Unwind tables (docs/DRAIN.md "Unwind tables"): unless @no_unwind,
	 * tables of the modules meta reports are loaded into DIR/unwind when
	 * that file exists. @unwind_cache: NULL = $HOME/.cache/spulse/unwind,
	 * "" = no cache. @unwind_wait_ms: at drain_finish(), how long to let
	 * the loader finish what is queued (0 = do not wait).
	 */
	bool no_unwind;
	const char *unwind_cache;
	unsigned int unwind_wait_ms;
	uint32_t unwind_skip_pid;	/* see drain_unwind_opts.skip_pid */
};

struct drain;

/** Totals for the final line and for `spulse record`'s summary. */
struct drain_stats {
	uint64_t samples;		/* written to the spool */
	uint64_t spool_bytes;
	uint64_t meta_bytes;
	unsigned int ncpus;
	const uint64_t *cpu_bytes;	/* [ncpus], valid while the drain lives */
	unsigned int stream_errors;	/* abandoned streams */
	unsigned int truncated_tails;	/* streams ending inside a record */
	unsigned int relay_gaps;	/* cpuN streams whose bytes read !=
					   the stopped module's count */
	uint64_t late_samples;		/* emitted out of order (beyond window) */
	int64_t kernel_dropped;		/* stats samples_dropped; -1 unknown */
	/* extension records (FORMAT.md 3.10) */
	uint64_t offcpu;		/* intervals written */
	uint64_t triggers;		/* trigger marks passed through */
	uint64_t ext_dropped;		/* unknown extension kinds dropped */
	uint64_t epochs;		/* per-CPU stream epochs (FORMAT.md 7) */
	/* flight recorder */
	unsigned int dumps;		/* dump files written */
	uint64_t triggers_fired;	/* triggers seen (accepted or not) */
	uint64_t triggers_suppressed;	/* by --min-gap or --max-dumps */
	unsigned int generations;	/* held now */
	uint64_t gen_bytes;		/* bytes held by the generations now */
	uint64_t gen_bytes_max;		/* most ever held at once */
	uint64_t ring_bound;		/* the stated bound (flight.h) */
	/* unwind tables (unwind_load.h); all 0 when not loading */
	bool unwind;			/* DIR/unwind open, tables loaded */
	uint64_t unwind_loaded, unwind_cache_hits, unwind_refused;
	uint64_t unwind_failed, unwind_skipped, unwind_maps, unwind_map_errors;
	uint64_t unwind_rows, unwind_bytes, unwind_build_ns;
};

/* Open inputs, copy kallsyms, open the spool lazily on the first header. */
int drain_open(const struct drain_opts *opts, struct drain **out);
/* Write "start" to control (done by drain_open when opts->control). */
int drain_control(struct drain *d, const char *cmd);
/*
 * How long a partial relay sub-buffer waits before the drainer reads it
 * (relay's poll() wakes only on a sub-buffer switch): the timeout of
 * drain_step() used by spulse-drain (--wake-ms) and `spulse record`.
 */
#define DRAIN_WAKE_MS_DEFAULT	200
/*
 * One round: unless the previous round stopped at its per-input byte
 * limit, wait up to @timeout_ms for input (relay poll wakes on a sub-buffer
 * switch; at the timeout the partial sub-buffers are read), then read every
 * input once, decode, merge, write what the window releases, fsync when
 * due. Returns bytes read this round (>= 0) or a fatal -errno.
 */
long drain_step(struct drain *d, int timeout_ms);
/*
 * Stop: (with control) write "stop", read until every input is dry, write
 * every queued sample, fsync. The spool is complete afterwards.
 */
int drain_finish(struct drain *d);
/* True when no input can be read any more (all closed or abandoned, e.g.
 * after rmmod: relay reads then fail with EIO). */
bool drain_inputs_closed(const struct drain *d);
/* Current totals (kernel_dropped re-read from DIR/stats). */
void drain_get_stats(struct drain *d, struct drain_stats *st);
/*
 * Flight mode: fire a SIGUSR1 trigger now (call from the main loop after
 * the signal handler set a flag). 1 accepted, 0 suppressed, <0 not flight.
 */
int drain_flight_signal(struct drain *d);
/* Print the one-line final summary. */
void drain_print_stats(struct drain *d, FILE *f);
/* Close the spool (if still open) and free. Returns the first error. */
int drain_close(struct drain *d);

#endif
