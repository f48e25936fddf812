/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the libspulse unit tests: a byte builder over the shared
 * encoders (include/spulse/encode.h), temp files, a realistic spool written
 * through the Recorder, and "read with every reader" wrappers.
 */
#ifndef SPULSE_TEST_HELPERS_H
#define SPULSE_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <cmocka.h>

#include <libspulse.h>
#include <spulse/encode.h>

/* Growable byte buffer for hand-built spools. */
struct tbuf {
	uint8_t *p;
	size_t len, cap;
};

void tb_free(struct tbuf *b);
/* Room for one maximal record at the end; returns the write pointer. */
uint8_t *tb_room(struct tbuf *b);
/* Append @n bytes written by an encoder at tb_room(). Returns the record offset. */
size_t tb_commit(struct tbuf *b, size_t n);
void tb_raw(struct tbuf *b, const void *p, size_t n);

#define TB(b, enc, ...) tb_commit((b), enc(tb_room(b), __VA_ARGS__))

/* Header with start 1000 us, interval 1000 us. */
void tb_header(struct tbuf *b);
/* The largest time offset after tb_header(): INT64_MAX - 1000 us in ns. */
#define TB_TIME_MAX	(INT64_MAX - 1000 * 1000)
/* Header + module 0 (pid 100, [0x400000,0x500000), off 0x1000) + thread 0 +
 * frame 0 (abs user 0x1234) + stack 0 (root, frame 0). */
void tb_basic(struct tbuf *b);

/* Write @len bytes to a new temp file; returns its malloc'd path. */
char *tmp_write(const void *p, size_t len);
char *tmp_path(void);
void tmp_remove(char *path);
uint8_t *read_file(const char *path, size_t *len);

/*
 * What one reader made of a spool: its info, and the samples and records
 * it produced (records only for Replay/Stream).
 */
struct read_result {
	int ret;			/* 0 or negative errno */
	struct spulse_error err;
	struct spulse_info info;
	struct spulse_sample *samples;
	size_t nsamples;
	struct spulse_record *records;
	size_t nrecords;
	/* off-CPU intervals (every reader) and triggers (not Tail) */
	struct spulse_offcpu *offcpu;
	size_t noffcpu;
	struct spulse_trigger *triggers;	/* text: malloc'd copies */
	size_t ntriggers;
};

void rr_free(struct read_result *r);
void read_snapshot_mem(const void *p, size_t len, struct read_result *out);
void read_replay(const char *path, struct read_result *out);
/* Stream fed in chunks of @chunk bytes (0 = all at once). */
void read_stream(const void *p, size_t len, size_t chunk, struct read_result *out);
/* Tail polled until no progress. */
void read_tail(const char *path, struct read_result *out);

/* Assert every reader reports -EBADMSG at @offset with @msg in the reason. */
void expect_corrupt(const void *p, size_t len, uint64_t offset, const char *msg);
/* Assert every reader accepts the bytes; returns the Snapshot's sample count. */
uint64_t expect_valid(const void *p, size_t len);

/*
 * Realistic spool through the Recorder: several processes and threads,
 * modules that come and go, shared stack prefixes, kernel + user frames,
 * truncated stacks, python records. @samples samples; @seed varies it.
 */
void make_realistic(const char *path, unsigned samples, unsigned seed);
/*
 * The same spool with extension records mixed in: samples carry cpus (cpu
 * records), off-CPU intervals of every state (wakers from other threads,
 * out-of-order switch-out times), triggers, and unknown kinds (skipped).
 */
void make_realistic_ext(const char *path, unsigned samples, unsigned seed);
/* Field-by-field equality with a useful message. */
void assert_offcpu_equal(const struct spulse_offcpu *a,
			 const struct spulse_offcpu *b);
void assert_trigger_equal(const struct spulse_trigger *a,
			  const struct spulse_trigger *b);

#endif
