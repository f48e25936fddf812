/* SPDX-License-Identifier: MIT */
/*
 * One input of the drainer: a per-CPU relay file (cpuN) or the meta file,
 * read sequentially and non-blocking and fed into its own spulse_stream.
 */
#ifndef SPULSE_DRAIN_RELAY_INPUT_H
#define SPULSE_DRAIN_RELAY_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include <libspulse.h>

#include "renumber.h"

enum drain_input_state {
	DRAIN_INPUT_OPEN,	/* reading */
	DRAIN_INPUT_GONE,	/* read() failed (e.g. EIO after rmmod): closed */
	DRAIN_INPUT_ABANDONED,	/* stream error: no longer read or decoded */
};

/**
 * struct drain_epoch - a finished epoch of a per-CPU stream, kept while
 * queued items still name its ids
 * @stream: its decoder (definitions)
 * @map: its local -> spool id cache
 * @seq: its epoch number
 */
struct drain_epoch {
	struct spulse_stream *stream;
	struct drain_idmap map;
	uint32_t seq;
};

/**
 * struct drain_input - a read-once byte source and its stream decoder
 * @path: file path
 * @cpu: CPU number, or -1 for meta
 * @fd: non-blocking descriptor, -1 once closed
 * @state: see enum drain_input_state
 * @stream: validating push decoder; kept after an error so that the
 *          definitions of samples already queued stay readable
 * @bytes_read: total bytes read from @fd
 * @start: where this reader began in the file: what readers before it
 *         consumed (the module's stats "read"; 0 for a fresh file)
 * @sized: @fd is a regular file (relay files on debugfs are): reads stop at
 *         its size, which for a relay file counts only published
 *         sub-buffers (docs/DRAIN.md, "Reading")
 * @relay: @fd is on debugfs (a real relay file, not a test's stand-in)
 * @hdr: the stream header bytes seen so far (parsed here, not by the
 *       stream, so the drainer knows start_us before any record)
 * @hdr_len: bytes in @hdr
 * @have_header: @start_us and @interval_us are valid
 * @start_us: header start_us
 * @interval_us: header interval_us
 * @err: the error that abandoned the stream
 * @dry: the last drain_input_read() stopped because nothing more was
 *       readable (not because of its byte limit)
 * @map: the current epoch's local -> spool id cache
 * @epoch: current epoch number (0 = the stream's first header); a per-CPU
 *         kernel stream is a sequence of SPULSE streams, one per epoch,
 *         each starting with a stream header (docs/FORMAT.md section 7)
 * @epoch_base: input offset of the current epoch's first byte
 * @old: earlier epochs still referenced by queued items, oldest first
 * @nold: entries in @old
 * @capold: capacity of @old
 * @owed: see drain_input_mark_owed() (0 until it is called)
 */
struct drain_input {
	char *path;
	int cpu;
	int fd;
	enum drain_input_state state;
	struct spulse_stream *stream;
	uint64_t bytes_read;
	uint64_t start;
	bool sized;
	bool relay;
	uint8_t hdr[SPULSE_HEADER_MAX];
	unsigned int hdr_len;
	bool have_header;
	uint64_t start_us;
	uint64_t interval_us;
	struct spulse_error err;
	bool dry;
	struct drain_idmap map;
	uint32_t epoch;
	uint64_t epoch_base;
	struct drain_epoch *old;
	unsigned int nold, capold;
	uint64_t owed;
};

/* Open @path (O_RDONLY|O_NONBLOCK) and create its stream. 0 or -errno. */
int drain_input_open(struct drain_input *in, const char *path, int cpu);

/*
 * Read what is available (at most @max bytes, 0 = no limit) and feed it to
 * the stream. A regular file is read only up to its size less @start: for
 * a relay file, the sub-buffers published so far, never the one the
 * module is writing (relay's read() races a switch there). Returns bytes
 * read (0 = nothing ready) or -errno on a read error, after which the
 * input is DRAIN_INPUT_GONE. Never seeks.
 */
long drain_input_read(struct drain_input *in, size_t max);

/* Where the file's unread bytes begin (the module's stats "read"). */
void drain_input_set_start(struct drain_input *in, uint64_t start);

/*
 * Remember in @owed the file offset up to which @in is readable now (what
 * was read plus what a read may return; UINT64_MAX when the file has no
 * size): the backlog a finishing drainer owes.
 */
void drain_input_mark_owed(struct drain_input *in);

/* @in is open and has not been read up to @owed yet. */
bool drain_input_owes(const struct drain_input *in);

/*
 * After the last read of a stopped module: compare the bytes read from a
 * cpuN input with the bytes the module wrote into that relay buffer
 * (@kernel_bytes, stats "cpuN ... bytes B"). Returns @start + read -
 * written: 0 when relay delivered exactly what was written, < 0 when
 * bytes were lost, > 0 when bytes were delivered twice. Only an input read
 * from a stream header and not abandoned can be compared: *@comparable
 * says whether this one could.
 */
int64_t drain_input_relay_gap(const struct drain_input *in,
			      uint64_t kernel_bytes, bool *comparable);

/* Mark the stream abandoned after @err; closes the fd, keeps the stream. */
void drain_input_abandon(struct drain_input *in, const struct spulse_error *err);

/* Close the fd and free the stream (every epoch's stream and map). */
void drain_input_close(struct drain_input *in);

/*
 * After in->stream failed with @err: when the failure is a new stream
 * header at a record boundary of a per-CPU stream (an epoch: the kernel
 * restarted its ids), continue with a fresh stream from there. The old
 * epoch's stream and map are kept for the items already queued. Returns 1
 * when a new epoch began, 0 when @err is a real error, or -ENOMEM.
 */
int drain_input_next_epoch(struct drain_input *in, const struct spulse_error *err);

/*
 * The definitions and id cache of epoch @epoch, for writing an item of it.
 * Items of a CPU are written in the order they were read, so the epochs
 * before @epoch are no longer needed and are freed here. 0 or -ENOENT.
 */
int drain_input_epoch_held(struct drain_input *in, uint32_t epoch,
			   const struct spulse_defs **defs,
			   struct drain_idmap **map);

/* Inline: per item, the current epoch with none older held is the case. */
static inline int drain_input_epoch(struct drain_input *in, uint32_t epoch,
				    const struct spulse_defs **defs,
				    struct drain_idmap **map)
{
	if (epoch == in->epoch && !in->nold) {
		*defs = spulse_stream_defs(in->stream);
		*map = &in->map;
		return 0;
	}
	return drain_input_epoch_held(in, epoch, defs, map);
}

/* Forget every epoch's id cache (the spool's ids restart: flight mode). */
void drain_input_forget_maps(struct drain_input *in);

#endif
