/* SPDX-License-Identifier: MIT */
/*
 * The drain session's state (struct drain) and the functions its files
 * share; internal to user/drain (the API is drain.h). Which file does what:
 *
 *   drain.c          drain_open(), the round loop drain_step() (wait, read,
 *                    release, sync), drain_close()
 *   cpu_inputs.c     finding and starting the cpuN inputs
 *   read_round.c     one round: read every input, decode, queue in the merge
 *   recorder_open.c  the Recorder: the spool, or a flight generation
 *   release.c        writing what the merge window releases
 *   flight_ring.c    the flight recorder's generations, triggers and dumps
 *   sidecars.c       SPOOL.kallsyms, SPOOL.vdso, SPOOL.perf-PID.map
 *   finish.c         drain_finish(): stop, read dry, write the rest
 *   drain_stats.c    drain_get_stats(), drain_print_stats(), the module's
 *                    cut user stacks by cause (drain_ucut.h)
 *   iface.c          debugfs spulse/ or its lockdown-safe twin /proc/spulse
 *   kallsyms_copy.c  /proc/kallsyms's text symbols for SPOOL.kallsyms, and
 *                    their cache keyed by boot and modules (--kallsyms-cache)
 *   thp.c            the recorder's own memory out of transparent huge pages
 */
#ifndef SPULSE_DRAIN_SESSION_H
#define SPULSE_DRAIN_SESSION_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <libspulse.h>

#include "drain.h"
#include "kallsyms_copy.h"
#include "kernel_stats.h"
#include "merge.h"
#include "meta_forward.h"
#include "relay_input.h"
#include "renumber.h"
#include "unwind_load.h"

#define READ_ROUND_MAX	(64u << 10)	/* bytes per input per round */
#define SPOOL_FLUSH_BYTES (256u << 10)	/* Recorder write size (spool) */
#define GROUP_MAX	4096u		/* items release() groups at most */

/* One flight-recorder generation: a complete spool in a memfd. */
struct fgen {
	int fd;
	int64_t min_ns, max_ns;	/* times of the items written into it */
	bool any;
	uint64_t bytes;		/* size once closed */
};

/* An accepted trigger waiting for its post time. */
struct ftrig {
	struct spulse_trigger t;
	char text[SPULSE_MAX_TRIGGER_TEXT + 1];
	int64_t ws, we;		/* requested window */
	int64_t fired_wall_ns;
};

struct drain {
	struct drain_opts o;
	FILE *log;
	int out_fd;			/* spool fd until the Recorder owns it */
	struct spulse_recorder *rec;
	uint64_t base_us;		/* spool start_us */
	/* who records: written after the header of the spool and each dump */
	struct spulse_identity ident;
	char ident_buf[1024];
	bool have_ident;

	struct drain_input meta;
	bool have_meta;
	struct drain_meta_fwd fwd;	/* meta -> spool, module generation */
	struct drain_unwind *uw;	/* unwind-table loader, NULL = none */
	uint32_t *pids;			/* pids of module records (JIT maps) */
	size_t npids, cappids;

	struct drain_input *cpu;	/* sorted by CPU number */
	uint64_t *cpu_bytes;
	unsigned int ncpu;
	struct drain_merge merge;
	struct pollfd *pfd;
	bool poll_useful;
	unsigned int poll_spurious;	/* "ready" polls in a row with no data */
	bool more;			/* the last round hit READ_ROUND_MAX */
	int64_t round_ns;		/* clock after the last round's reads */
	int64_t flush_ns;		/* clock of the last control flush */

	int64_t last_sync_ns;
	int64_t last_time_ns;		/* newest sample time popped */
	bool emitted;

	/*
	 * release() outside flight mode: the items popped since the last
	 * group was written (at most GROUP_MAX), left in their merge queues
	 * (merge.h; release() writes its last group before it returns, so
	 * before the next push). merge_order (SPULSE_DRAIN_MERGE_ORDER set)
	 * writes every item as it is popped instead, as flight mode does.
	 */
	struct drain_mgroup grp;
	unsigned int last_src;		/* source of the last sample written */
	bool merge_order;
	uint64_t samples, late;
	uint64_t offcpu, triggers, ext_dropped;
	uint64_t epochs;		/* per-CPU stream epochs begun */
	unsigned int errors, tails;
	unsigned int relay_gaps;	/* cpuN byte counts != the module's */
	uint64_t interval_us;

	/* flight recorder */
	bool flight;
	struct drain_flight_opts fo;
	struct fgen *gens;		/* oldest first; the last one is open */
	unsigned int ngens, capgens;
	int64_t written_max;		/* newest item time written */
	bool written_any;
	struct ftrig *pend;
	unsigned int npend, cappend;
	unsigned int dumps;
	uint32_t seq;
	bool have_last_T;
	int64_t last_T;
	uint64_t fired, suppressed, gen_bytes_max;
	bool dropped_any;
	int64_t dropped_upto;		/* newest time in a dropped generation */
	int fatal;
	bool disk_counted;		/* after fatal: the file was read back */
	uint64_t disk_samples, disk_bytes;	/* its complete prefix */
	/* kernel symbols, read outside the recording window (drain_open with
	 * control before start, else drain_finish after the last read); flight
	 * dumps reuse them while /proc/modules is unchanged */
	struct drain_ksyms ks;
	char *ks_cache;			/* ks.cache_dir's storage */
	bool ks_pending;		/* the spool's .kallsyms not written yet */
	char *stats_path;
	struct drain_stats st;
};

static inline int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* drain.c */
int drain_maybe_sync(struct drain *d, bool force);

/* cpu_inputs.c */
int drain_find_cpus(struct drain *d);
struct drain_kstat_cpu *drain_kstat_inputs(struct drain *d, bool *stopped);
void drain_set_starts(struct drain *d);
bool drain_relay_inputs(const struct drain *d);

/* read_round.c */
const char *drain_input_name(const struct drain_input *in, char *buf,
			     size_t len);
long drain_round_read(struct drain *d);

/* recorder_open.c */
int drain_new_generation(struct drain *d);
int drain_open_recorder(struct drain *d, const struct drain_input *in);
int drain_maybe_open_recorder(struct drain *d);

/* release.c */
void drain_group_clear(struct drain *d);
int drain_release(struct drain *d, bool all);

/* flight_ring.c */
uint64_t drain_gen_size(const struct drain *d, const struct fgen *g);
void drain_ring_account(struct drain *d);
int drain_flight_before(struct drain *d, int64_t t);
int drain_flight_after(struct drain *d, const struct drain_msample *s,
		       const struct spulse_thread *th);
int drain_flight_poll(struct drain *d, bool force);

/* sidecars.c */
void drain_note_pid(struct drain *d, uint32_t pid);
void drain_save_kallsyms(struct drain *d, const char *spool);
void drain_capture_sidecars(struct drain *d, const char *spool, bool jit);

#endif
