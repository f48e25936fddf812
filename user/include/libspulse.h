/* SPDX-License-Identifier: MIT */
/*
 * libspulse — read and write SPULSE spool files (docs/FORMAT.md).
 *
 * Conventions (as liburing/libbpf): opaque handles; functions return 0 or a
 * positive count on success and a negative errno on failure; data errors are
 * -EBADMSG with struct spulse_error filling in the byte offset and the rule
 * broken; options structs start with their own size so they can grow.
 * Per-call documentation: docs/API.md.
 */
#ifndef LIBSPULSE_H
#define LIBSPULSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <spulse/format.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPULSE_TAIL_BATCH	16384	/* max samples returned by one poll */
#define SPULSE_NONE		UINT32_MAX /* "no id": root parent, no module */

/** Where and why a read failed. */
struct spulse_error {
	uint64_t offset;	/* byte offset of the offending field/record */
	int code;		/* negative errno, -EBADMSG for bad data */
	char msg[192];		/* rule broken, e.g. "forward reference to stack 7" */
};

/* ---- Decoded definitions and records ------------------------------- */

struct spulse_module {
	uint32_t id;
	uint32_t pid;
	uint64_t start, end, file_offset;
	const char *path;		/* NUL-terminated copy, stable */
	uint32_t path_len;
	const uint8_t *build_id;	/* NULL when build_id_len == 0 */
	uint32_t build_id_len;
	bool active;			/* not retired (as of the reader's position) */
};

struct spulse_frame {
	uint32_t id;
	uint8_t kind;			/* enum spulse_frame_kind */
	uint32_t module;		/* SPULSE_FRAME_MODULE only, else SPULSE_NONE */
	uint64_t addr;			/* rel for MODULE, absolute for USER/KERNEL, 0 for TRUNCATED */
};

struct spulse_stack {
	uint32_t id;
	uint32_t parent;		/* SPULSE_NONE for a root node */
	uint32_t frame;
	uint32_t depth;			/* 1 for a root node */
};

struct spulse_thread {
	uint32_t id;
	uint32_t pid, tid;
	const char *comm;		/* NUL-terminated copy, stable */
	uint32_t comm_len;
};

struct spulse_sample {
	int64_t time_ns;		/* offset from the profile start (>= 0) */
	uint32_t thread;
	uint32_t stack;			/* leaf node */
	uint32_t cpu;			/* from the last cpu record; SPULSE_NONE = unknown */
	uint32_t reserved;		/* 0 */
};

/** One closed off-CPU interval (extension kind 2). */
struct spulse_offcpu {
	int64_t time_ns;		/* switch-out, offset from the profile start (>= 0) */
	uint32_t thread;
	uint32_t stack;			/* leaf node of the stack at switch-out */
	uint8_t state;			/* enum spulse_offcpu_state */
	uint32_t cpu_out, cpu_in;
	uint64_t blocked_ns;		/* switch-out -> wakeup */
	uint64_t runq_ns;		/* wakeup (or switch-out) -> switch-in */
	uint32_t waker_thread;		/* SPULSE_NONE = no waker recorded */
	uint32_t waker_stack;		/* SPULSE_NONE when no waker */
	uint32_t waker_cpu;		/* SPULSE_NONE when no waker */
};

/** A flight-recorder trigger mark (extension kind 3). */
struct spulse_trigger {
	int64_t time_ns;		/* offset from the profile start (>= 0) */
	uint8_t reason;			/* enum spulse_trigger_reason */
	uint32_t seq;
	uint64_t value_ns, threshold_ns;
	uint64_t window_start_ns, window_end_ns;
	const char *text;		/* NUL-terminated; valid as long as the record */
	uint32_t text_len;
};

/**
 * A recording identity (extension kind 4): which host and recording a
 * source of the spool is. Strings are NUL-terminated copies that stay
 * valid as long as the reader (or, for a Recorder argument, the call).
 * A string may itself hold NUL bytes (FORMAT.md: strings are bytes): the
 * *_len fields (appended; every reader fills them) give the whole length,
 * so use them, not strlen(). spulse_rec_identity() ignores them (strlen of
 * each string, as before); spulse_rec_identity_n() writes exactly them.
 */
struct spulse_identity {
	uint32_t source;		/* index in the spool: 0, 1, ... */
	uint8_t recording_id[16];	/* random id of the recording */
	uint64_t start_us;		/* the recording's own start (realtime us) */
	const char *host;		/* uname nodename */
	const char *machine_id;		/* /etc/machine-id or "" */
	const char *boot_id;		/* boot id or "" */
	const char *kernel;		/* uname release */
	uint32_t host_len, machine_id_len, boot_id_len, kernel_len;
};

/** One record of any kind, in stream order. */
struct spulse_record {
	uint8_t tag;			/* enum spulse_tag */
	uint64_t offset;		/* byte offset of the tag */
	union {
		struct spulse_module module;
		struct spulse_frame frame;
		struct spulse_stack stack;
		struct spulse_thread thread;
		struct spulse_sample sample;
		struct { uint32_t pid; uint8_t state; } python;
		struct { uint32_t pid; } process_deactivate;
		struct { uint32_t module; } module_deactivate;
		struct { uint32_t cpu; } cpu;			/* SPULSE_TAG_EXT, ext_kind 1 */
		struct spulse_offcpu offcpu;			/* ext_kind 2 */
		struct spulse_trigger trigger;			/* ext_kind 3 */
		struct spulse_identity identity;		/* ext_kind 4 */
		struct { uint32_t thread, source; } thread_source; /* ext_kind 5 */
		struct { uint32_t kind; uint32_t len; } ext_unknown; /* skipped */
	} u;
	uint32_t ext_kind;		/* tag SPULSE_TAG_EXT: the kind, else 0 */
};

/** Header fields and counts; valid for the prefix read so far. */
struct spulse_info {
	uint64_t start_us;
	uint64_t interval_us;
	uint64_t modules, frames, stacks, threads;
	uint64_t samples;
	uint64_t python, process_deactivations, module_deactivations;
	uint64_t complete_bytes;	/* end of the last complete record */
	bool recovered_from_truncated_tail;
	/* extension records (appended fields) */
	uint64_t cpu_records, offcpu, triggers;
	uint64_t ext_skipped;		/* unknown extension kinds skipped by length */
	uint64_t identities;		/* identity records (kind 4) */
};

/** Reader options; zero-initialize, set .sz = sizeof(opts). */
struct spulse_read_opts {
	size_t sz;
	uint32_t max_ids;		/* per kind; 0 = SPULSE_MAX_ID */
	size_t replay_index_limit;	/* Replay: max index entries; 0 = 4096 */
	uint32_t replay_index_stride;	/* Replay: samples per entry; 0 = 65536 */
};

/* ---- Definitions (shared by every reader) --------------------------- */

struct spulse_defs;

uint32_t spulse_defs_count(const struct spulse_defs *d, enum spulse_tag kind);
int spulse_defs_module(const struct spulse_defs *d, uint32_t id,
		       struct spulse_module *out);
int spulse_defs_frame(const struct spulse_defs *d, uint32_t id,
		      struct spulse_frame *out);
int spulse_defs_stack(const struct spulse_defs *d, uint32_t id,
		      struct spulse_stack *out);
int spulse_defs_thread(const struct spulse_defs *d, uint32_t id,
		       struct spulse_thread *out);
/* Absolute address of a frame (module-relative ones resolved); -ENOENT for the marker. */
int spulse_defs_frame_address(const struct spulse_defs *d, uint32_t frame,
			      uint64_t *addr);

/* ---- Snapshot: whole file in memory, random access to samples -------- */

struct spulse_snapshot;

int spulse_snapshot_open(const char *path, const struct spulse_read_opts *opts,
			 struct spulse_snapshot **out, struct spulse_error *err);
int spulse_snapshot_open_mem(const void *buf, size_t len,
			     const struct spulse_read_opts *opts,
			     struct spulse_snapshot **out,
			     struct spulse_error *err);
void spulse_snapshot_close(struct spulse_snapshot *s);
const struct spulse_info *spulse_snapshot_info(const struct spulse_snapshot *s);
const struct spulse_defs *spulse_snapshot_defs(const struct spulse_snapshot *s);
uint64_t spulse_snapshot_sample_count(const struct spulse_snapshot *s);
int spulse_snapshot_sample(const struct spulse_snapshot *s, uint64_t index,
			   struct spulse_sample *out);
bool spulse_snapshot_recovered_from_truncated_tail(const struct spulse_snapshot *s);

/* ---- Replay: validated on open, sequential, bounded memory ----------- */

struct spulse_replay;

int spulse_replay_open(const char *path, const struct spulse_read_opts *opts,
		       struct spulse_replay **out, struct spulse_error *err);
void spulse_replay_close(struct spulse_replay *r);
const struct spulse_info *spulse_replay_info(const struct spulse_replay *r);
const struct spulse_defs *spulse_replay_defs(const struct spulse_replay *r);
bool spulse_replay_recovered_from_truncated_tail(const struct spulse_replay *r);
/* Iterate samples: 1 = *out filled, 0 = end, <0 error. */
int spulse_replay_next_sample(struct spulse_replay *r, struct spulse_sample *out);
/* Iterate every record in order (rewinds on first call after open/rewind). */
int spulse_replay_next_record(struct spulse_replay *r, struct spulse_record *out);
int spulse_replay_rewind(struct spulse_replay *r);
/* Position so that the next sample returned is sample @index. */
int spulse_replay_seek_sample(struct spulse_replay *r, uint64_t index);
/* Index entries retained (<= replay_index_limit) and heap bytes in use. */
size_t spulse_replay_index_entries(const struct spulse_replay *r);
size_t spulse_replay_memory_bytes(const struct spulse_replay *r);

/* ---- Tail: incremental reader of a growing file ---------------------- */

struct spulse_tail;

int spulse_tail_open(const char *path, const struct spulse_read_opts *opts,
		     struct spulse_tail **out, struct spulse_error *err);
void spulse_tail_close(struct spulse_tail *t);
/*
 * Read what became visible since the last poll. Returns the number of samples
 * (0..SPULSE_TAIL_BATCH) now in *samples, valid until the next poll, or a
 * negative errno. An incomplete final record stays unread until it grows.
 */
int spulse_tail_poll(struct spulse_tail *t, const struct spulse_sample **samples,
		     struct spulse_error *err);
const struct spulse_info *spulse_tail_info(const struct spulse_tail *t);
const struct spulse_defs *spulse_tail_defs(const struct spulse_tail *t);
uint64_t spulse_tail_offset(const struct spulse_tail *t); /* bytes consumed */

/* ---- Stream: push decoder for bytes arriving in pieces (relay, pipes) - */

struct spulse_stream;

int spulse_stream_new(const struct spulse_read_opts *opts,
		      struct spulse_stream **out);
void spulse_stream_free(struct spulse_stream *s);
int spulse_stream_feed(struct spulse_stream *s, const void *buf, size_t len);
/* 1 = *out is the next validated record, 0 = need more bytes, <0 error. */
int spulse_stream_next(struct spulse_stream *s, struct spulse_record *out,
		       struct spulse_error *err);
/*
 * A run of sample records at once (the next records, when they are
 * samples): up to @max of them into @out, validated as spulse_stream_next()
 * validates them. Stops, consuming nothing more, at anything else (another
 * record kind, an invalid or incomplete sample, the last bytes fed, which
 * may hold a sample cut short): spulse_stream_next() then takes the next
 * record and reports any error. Returns the number of samples taken; 0
 * also after an error or before the header.
 */
size_t spulse_stream_samples(struct spulse_stream *s, struct spulse_sample *out,
			     size_t max);
/*
 * A run of definitions at once (the next records, when they are frame or
 * stack definitions): validated and added to the stream's definitions as
 * spulse_stream_next() adds them, without returning them. For a reader
 * that needs only the definitions (spulse_stream_defs()), not the records.
 * Stops, consuming nothing more, where spulse_stream_samples() stops (any
 * other record, module frames included, an invalid or incomplete one, the
 * last bytes fed): spulse_stream_next() then takes the next record and
 * reports any error. Returns the number of definitions taken; 0 also
 * after an error, before the header, or with a trusted decoder.
 */
size_t spulse_stream_take_defs(struct spulse_stream *s);
const struct spulse_info *spulse_stream_info(const struct spulse_stream *s);
const struct spulse_defs *spulse_stream_defs(const struct spulse_stream *s);
/* Bytes fed but not yet consumed by complete records. */
size_t spulse_stream_pending(const struct spulse_stream *s);
/*
 * Those bytes (*len = spulse_stream_pending()), valid until the next feed
 * or free; after an error they start at the record that failed.
 */
const void *spulse_stream_pending_bytes(const struct spulse_stream *s,
					size_t *len);

/* ---- Recorder: writes a spool with small appends only ---------------- */

struct spulse_recorder;

struct spulse_recorder_opts {
	size_t sz;
	uint64_t start_us;		/* 0 = now (CLOCK_REALTIME) */
	uint64_t interval_us;
	size_t flush_bytes;		/* append when this much is buffered; 0 = 4096 */
	bool truncate;			/* O_TRUNC an existing file (else O_EXCL) */
};

int spulse_recorder_open(const char *path, const struct spulse_recorder_opts *opts,
			 struct spulse_recorder **out);
/* Takes ownership of @fd, which must be writable (appends only). */
int spulse_recorder_fdopen(int fd, const struct spulse_recorder_opts *opts,
			   struct spulse_recorder **out);
/* Define a module (mapping); active until deactivated. */
int spulse_rec_module(struct spulse_recorder *r, uint32_t pid, uint64_t start,
		      uint64_t end, uint64_t file_offset, const char *path,
		      const uint8_t *build_id, size_t build_id_len,
		      uint32_t *id);
int spulse_rec_module_deactivate(struct spulse_recorder *r, uint32_t module);
int spulse_rec_process_deactivate(struct spulse_recorder *r, uint32_t pid);
int spulse_rec_python(struct spulse_recorder *r, uint32_t pid, bool enter);
/*
 * Intern a frame for @addr seen in process @pid. @is_return: @addr is a
 * return address and is normalized to the calling instruction (addr - 1,
 * checked). User addresses inside an active module of @pid become
 * module-relative frames; others, and kernel addresses, are absolute.
 */
int spulse_rec_frame_addr(struct spulse_recorder *r, uint32_t pid,
			  uint64_t addr, bool is_kernel, bool is_return,
			  uint32_t *id);
/* Intern a module-relative frame directly (rel already normalized). */
int spulse_rec_frame_module(struct spulse_recorder *r, uint32_t module,
			    uint64_t rel, uint32_t *id);
/* Intern an absolute frame (addr already normalized). */
int spulse_rec_frame_abs(struct spulse_recorder *r, uint8_t kind,
			 uint64_t addr, uint32_t *id);
int spulse_rec_frame_truncated(struct spulse_recorder *r, uint32_t *id);
/* Intern a stack node; @parent is SPULSE_NONE for a root node. */
int spulse_rec_stack(struct spulse_recorder *r, uint32_t parent,
		     uint32_t frame, uint32_t *id);
/* Intern a whole stack, frames ordered root first; *leaf gets the leaf id. */
int spulse_rec_stack_frames(struct spulse_recorder *r, const uint32_t *frames,
			    size_t n, uint32_t *leaf);
int spulse_rec_thread(struct spulse_recorder *r, uint32_t pid, uint32_t tid,
		      const char *comm, uint32_t *id);
/* @time_ns: offset from the profile start (>= 0). */
int spulse_rec_sample(struct spulse_recorder *r, int64_t time_ns,
		      uint32_t thread, uint32_t stack);
int spulse_recorder_flush(struct spulse_recorder *r);	/* write buffered */
int spulse_recorder_sync(struct spulse_recorder *r);	/* flush + fsync */
/* Flush, fsync and free. Returns the first error seen, if any. */
int spulse_recorder_close(struct spulse_recorder *r);
uint64_t spulse_recorder_bytes(const struct spulse_recorder *r);
uint64_t spulse_recorder_samples(const struct spulse_recorder *r);

/* ---- Misc ------------------------------------------------------------- */

const char *spulse_tag_name(uint8_t tag);	/* "module", "frame", ... */

/* ---- Additions (appended; earlier declarations are unchanged) -------- */

/* ---- Off-CPU intervals, cpu and trigger records (FORMAT.md 3.10) ------ */

/* Snapshot: intervals and triggers in stream order. */
uint64_t spulse_snapshot_offcpu_count(const struct spulse_snapshot *s);
int spulse_snapshot_offcpu(const struct spulse_snapshot *s, uint64_t index,
			   struct spulse_offcpu *out);
uint64_t spulse_snapshot_trigger_count(const struct spulse_snapshot *s);
/* out->text stays valid until the snapshot is closed. */
int spulse_snapshot_trigger(const struct spulse_snapshot *s, uint64_t index,
			    struct spulse_trigger *out);

/*
 * Replay: iterate intervals only (1 = *out filled, 0 = end, <0 error); an
 * iterator of its own, independent of next_sample/next_record positions.
 */
int spulse_replay_next_offcpu(struct spulse_replay *r, struct spulse_offcpu *out);
int spulse_replay_rewind_offcpu(struct spulse_replay *r);

/*
 * Tail: the intervals that the last spulse_tail_poll() made visible (at most
 * SPULSE_TAIL_BATCH; a poll stops when either its samples or its intervals
 * fill a batch). Valid until the next poll. Returns the count.
 */
int spulse_tail_offcpu(const struct spulse_tail *t,
		       const struct spulse_offcpu **intervals);

/*
 * Recorder. spulse_rec_cpu() writes a cpu record only when @cpu differs from
 * the current one; spulse_rec_sample_cpu() is rec_cpu + rec_sample.
 * spulse_rec_offcpu() checks every rule a reader checks (ids defined, state,
 * durations that overflow, RUNNABLE with blocked time or a waker).
 * Intervals and triggers share the event clock: their times may go backwards
 * relative to each other (signed deltas) but never below 0.
 */
int spulse_rec_cpu(struct spulse_recorder *r, uint32_t cpu);
int spulse_rec_sample_cpu(struct spulse_recorder *r, int64_t time_ns,
			  uint32_t thread, uint32_t stack, uint32_t cpu);
/*
 * spulse_rec_sample_cpu() for each of @n samples in turn (time_ns, thread,
 * stack, cpu; reserved ignored), stopping at the first error, which it
 * returns (else 0); *@done gets how many it wrote.
 */
int spulse_rec_samples(struct spulse_recorder *r, const struct spulse_sample *v,
		       size_t n, size_t *done);
int spulse_rec_offcpu(struct spulse_recorder *r, const struct spulse_offcpu *iv);
int spulse_rec_trigger(struct spulse_recorder *r, const struct spulse_trigger *t);
/* Write an extension record of any kind verbatim (for tests and pass-through). */
int spulse_rec_ext_raw(struct spulse_recorder *r, uint32_t kind,
		       const void *payload, size_t len);

const char *spulse_state_name(uint8_t state);	/* "R", "S", "D", ... or NULL */
const char *spulse_state_long_name(uint8_t state);	/* "runnable", "sleeping", ... */
const char *spulse_trigger_reason_name(uint8_t reason); /* "manual", ... or NULL */

/*
 * Replay: copy up to @max next samples into @out. Returns the number copied
 * (0 at the end) or a negative errno. Same sequence as next_sample, faster.
 */
int spulse_replay_next_samples(struct spulse_replay *r,
			       struct spulse_sample *out, size_t max);

/* ---- Identity and thread sources (FORMAT.md 3.10 kinds 4 and 5) ----- */

/* Number of identity records (sources) defined so far; 0 in old spools. */
uint32_t spulse_defs_identity_count(const struct spulse_defs *d);
/* Fill @out with source @source's identity; -ENOENT when undefined. */
int spulse_defs_identity(const struct spulse_defs *d, uint32_t source,
			 struct spulse_identity *out);
/*
 * The source a thread belongs to: its kind-5 record's, else 0 when the
 * spool has an identity, else SPULSE_NONE (also for an undefined thread).
 */
uint32_t spulse_defs_thread_source(const struct spulse_defs *d,
				   uint32_t thread);

/*
 * Recorder: write identity @id as the next source (id->source is ignored;
 * the source number given is returned in *@source). Strings must fit the
 * format's limits (host, kernel <= 255 bytes, machine_id, boot_id <= 64;
 * NULL is ""), start_us <= SPULSE_MAX_START_US: else -EINVAL; more than
 * 65536 sources: -ENOSPC. Write it right after opening, before any other
 * record.
 */
int spulse_rec_identity(struct spulse_recorder *r,
			const struct spulse_identity *id, uint32_t *source);
/*
 * Recorder: bind @thread to @source (kind 5). -ENOENT for an undefined
 * thread or source, -EEXIST when the thread already has a source record.
 */
int spulse_rec_thread_source(struct spulse_recorder *r, uint32_t thread,
			     uint32_t source);
/*
 * Fill @id for this host now: uname nodename and release, /etc/machine-id,
 * /proc/sys/kernel/random/boot_id (empty when unreadable), a random
 * recording id (getrandom, UUID v4 bits) and @start_us. The strings are
 * stored in @buf (at least 642 bytes: -ENOSPC otherwise). Returns 0 or a
 * negative errno.
 */
int spulse_identity_local(struct spulse_identity *id, uint64_t start_us,
			  char *buf, size_t buflen);
/* Lower-case hex of a recording id into @out (33 bytes with the NUL). */
void spulse_recording_id_hex(const uint8_t id[16], char out[33]);

/* ---- Strings with lengths (FORMAT.md: strings are arbitrary bytes) --- */
/*
 * Every string the readers hand out comes with its length: module path_len,
 * thread comm_len, trigger text_len and identity *_len. A string may hold
 * NUL bytes; the pointer is also NUL-terminated after its last byte, for
 * convenience only. The _n recorder calls below write exactly @len bytes
 * (NUL bytes included); the older calls measure with strlen().
 */
/* spulse_rec_module() with an explicit @path_len (<= SPULSE_MAX_STRING). */
int spulse_rec_module_n(struct spulse_recorder *r, uint32_t pid,
			uint64_t start, uint64_t end, uint64_t file_offset,
			const char *path, size_t path_len,
			const uint8_t *build_id, size_t build_id_len,
			uint32_t *id);
/*
 * spulse_rec_thread() with an explicit @comm_len (<= SPULSE_MAX_COMM, else
 * -EINVAL; the old call clamps at the first NUL or the limit).
 */
int spulse_rec_thread_n(struct spulse_recorder *r, uint32_t pid, uint32_t tid,
			const char *comm, size_t comm_len, uint32_t *id);
/*
 * spulse_rec_identity() using id->host_len, machine_id_len, boot_id_len and
 * kernel_len (each within the format's limit, else -EINVAL; a NULL string
 * needs length 0).
 */
int spulse_rec_identity_n(struct spulse_recorder *r,
			  const struct spulse_identity *id, uint32_t *source);

#ifdef __cplusplus
}
#endif

#endif /* LIBSPULSE_H */
