/* SPDX-License-Identifier: MIT */
/*
 * Flight recorder (docs/DRAIN.md, "Flight recorder"): options and trigger
 * specs, the bound on the generation ring, and cutting a dump out of
 * generations (complete spools in memfds) into a new spool.
 */
#ifndef SPULSE_DRAIN_FLIGHT_H
#define SPULSE_DRAIN_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libspulse.h>

#define DRAIN_MAX_TRIGGER_SPECS	16
#define DRAIN_FLIGHT_GEN_BYTES	(32u << 20)	/* default generation cap */
#define DRAIN_FLIGHT_MAX_DUMPS	10
#define DRAIN_FLIGHT_POST_NS	1000000000ULL
#define DRAIN_FLIGHT_MIN_GAP_NS	1000000000ULL

/* One --trigger: reason 1 manual, 2 signal, 3 offcpu>DUR, 4 runq>DUR. */
struct drain_trigger_spec {
	uint8_t reason;
	uint64_t threshold_ns;	/* reasons 3 and 4 */
	char text[40];		/* the spec as given, normalized */
};

/**
 * struct drain_flight_opts - flight recorder configuration
 * @seconds_ns: history kept before a trigger (--flight); 0 = off
 * @post_ns: recorded after the trigger before the dump is cut (--post)
 * @min_gap_ns: triggers closer than this to the last accepted one are
 *              suppressed (--min-gap)
 * @max_dumps: at most this many dumps (--max-dumps)
 * @gen_ns: generation length; 0 = @seconds_ns / 2
 * @gen_bytes: generation byte cap (--gen-bytes); 0 = DRAIN_FLIGHT_GEN_BYTES
 * @nspecs: entries in @specs
 * @specs: threshold triggers (manual and signal triggers are always on)
 * @hold_pid: with @hold_comm: the recorder's own pre-exec child (`spulse
 *	record -- CMD` forks a copy of itself that waits for the start and
 *	then execs CMD); 0 = none. See drain_flight_offcpu_spec().
 * @hold_comm: the name that child carries until its exec
 *	(DRAIN_FLIGHT_HOLD_COMM; exec gives it CMD's name)
 */
struct drain_flight_opts {
	uint64_t seconds_ns;
	uint64_t post_ns;
	uint64_t min_gap_ns;
	unsigned int max_dumps;
	uint64_t gen_ns;
	uint64_t gen_bytes;
	unsigned int nspecs;
	struct drain_trigger_spec specs[DRAIN_MAX_TRIGGER_SPECS];
	uint32_t hold_pid;
	char hold_comm[16];
};

/*
 * The name (task comm) `spulse record` gives its forked child until the
 * child execs CMD: intervals of that thread under this name are the
 * recorder's own (waiting for the start, execvp's path search).
 */
#define DRAIN_FLIGHT_HOLD_COMM	"spulse-preexec"

/**
 * drain_flight_offcpu_spec() - which threshold trigger an off-CPU interval
 *	fires
 * @f: the options (specs, hold)
 * @iv: the interval (blocked_ns, runq_ns)
 * @th: its thread (pid and comm; NULL when unknown)
 *
 * An interval of the pre-exec child (@th's pid is @f->hold_pid and its
 * comm @f->hold_comm) fires nothing: it is the recorder waiting, not the
 * command. Otherwise the first spec it exceeds: offcpu>D compares
 * blocked + runq, runq>D the run-queue delay alone, strictly above D.
 *
 * Return: the index in @f->specs, or -1 (none).
 */
struct spulse_offcpu;
struct spulse_thread;
int drain_flight_offcpu_spec(const struct drain_flight_opts *f,
			     const struct spulse_offcpu *iv,
			     const struct spulse_thread *th);

/* Defaults: post 1 s, min gap 1 s, 10 dumps, 32 MiB generations. */
void drain_flight_defaults(struct drain_flight_opts *f);

/* "50ms", "200us", "1s", "1.5s", "100ns": 0 or -EINVAL (unit required). */
int drain_parse_duration(const char *s, uint64_t *ns);
/* Seconds: "10", "2.5", or a duration with a unit. */
int drain_parse_seconds(const char *s, uint64_t *ns);
/*
 * Parse "manual", "signal" (or "sigusr1"), "offcpu>DUR", "runq>DUR".
 * On error returns -EINVAL with a message in @msg.
 */
int drain_trigger_parse(const char *s, struct drain_trigger_spec *out,
			char *msg, size_t msglen);

/*
 * Command-line options shared by spulse-drain and spulse record. Codes
 * start at DRAIN_FLIGHT_OPT_BASE; drain_flight_option() handles one.
 */
#define DRAIN_FLIGHT_OPT_BASE	0x4600
enum {
	DRAIN_OPT_FLIGHT = DRAIN_FLIGHT_OPT_BASE,
	DRAIN_OPT_TRIGGER,
	DRAIN_OPT_POST,
	DRAIN_OPT_MAX_DUMPS,
	DRAIN_OPT_MIN_GAP,
	DRAIN_OPT_GEN_BYTES,
};
#define DRAIN_FLIGHT_LONGOPTS \
	{ "flight", required_argument, NULL, DRAIN_OPT_FLIGHT }, \
	{ "trigger", required_argument, NULL, DRAIN_OPT_TRIGGER }, \
	{ "post", required_argument, NULL, DRAIN_OPT_POST }, \
	{ "max-dumps", required_argument, NULL, DRAIN_OPT_MAX_DUMPS }, \
	{ "min-gap", required_argument, NULL, DRAIN_OPT_MIN_GAP }, \
	{ "gen-bytes", required_argument, NULL, DRAIN_OPT_GEN_BYTES }
#define DRAIN_FLIGHT_USAGE \
"  --flight SECONDS    flight recorder: keep only the last SECONDS in memory\n" \
"                      and write OUT-001.EXT, -002, ... on each trigger\n" \
"  --trigger SPEC      manual | signal | offcpu>DUR | runq>DUR (DUR: 50ms,\n" \
"                      200us, 1s); manual (the control file) and SIGUSR1\n" \
"                      always trigger in flight mode\n" \
"  --post SECONDS      keep recording this long after a trigger (default 1)\n" \
"  --max-dumps N       at most N dumps (default 10)\n" \
"  --min-gap SECONDS   ignore triggers closer than this (default 1)\n" \
"  --gen-bytes N       generation byte cap (default 32 MiB)\n"
/* 0 handled, -EINVAL bad argument (message in @msg). */
int drain_flight_option(struct drain_flight_opts *f, int code, const char *arg,
			char *msg, size_t msglen);
/* After parsing: 0, or -EINVAL when an option needs --flight. */
int drain_flight_check(const struct drain_flight_opts *f, bool any_flight_opt,
		       char *msg, size_t msglen);

/* Generation length and how many generations are kept at most. */
uint64_t drain_flight_gen_ns(const struct drain_flight_opts *f);
unsigned int drain_flight_max_gens(const struct drain_flight_opts *f);
/*
 * Bound on the bytes held by the ring (sum of generation sizes):
 * max_gens * (gen_bytes + DRAIN_FLIGHT_ITEM_MAX) + max_gens * modules *
 * SPULSE_MODULE_REC_MAX, @modules = modules active at a rotation.
 */
#define DRAIN_FLIGHT_ITEM_MAX \
	(2 * SPULSE_MAX_DEPTH * (SPULSE_STACK_REC_MAX + SPULSE_FRAME_REC_MAX) + \
	 2 * SPULSE_THREAD_REC_MAX + SPULSE_EXT_OFFCPU_MAX + SPULSE_EXT_CPU_MAX + \
	 SPULSE_HEADER_MAX)
uint64_t drain_flight_bound(const struct drain_flight_opts *f,
			    uint64_t modules);

/* "OUT.spulse" + 3 -> "OUT-003.spulse"; no extension -> "OUT-003". */
char *drain_dump_name(const char *out, unsigned int n);

/** What a cut copied. */
struct drain_cut_stats {
	uint64_t samples, offcpu, triggers, modules;
};

/**
 * drain_cut() - write one flight dump
 * @fds: the generations (readable fds of complete spools), oldest first
 * @nfds: how many
 * @path: the dump's path (replaced if it exists)
 * @start_us: spool start (every generation has the same)
 * @interval_us: spool interval
 * @ws: window start (offset ns, inclusive)
 * @we: window end (inclusive)
 * @mark: the trigger record written first (time, reason, seq, window, text)
 * @id: the recording identity written before it (NULL: none)
 * @st: counts copied
 * @err: what failed
 *
 * Every sample (by its time), off-CPU interval (by its close time) and
 * trigger (by its time) of the generations inside [@ws, @we] is copied, in
 * the generations' order, into a new Recorder; threads, frames, stacks and
 * modules are re-interned by content on demand; module and process
 * deactivations are carried for modules already copied; Python records
 * inside the window are copied.
 *
 * Return: 0 or a negative errno.
 */
int drain_cut(const int *fds, size_t nfds, const char *path, uint64_t start_us,
	      uint64_t interval_us, int64_t ws, int64_t we,
	      const struct spulse_trigger *mark,
	      const struct spulse_identity *id, struct drain_cut_stats *st,
	      struct spulse_error *err);

#endif
