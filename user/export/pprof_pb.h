/* SPDX-License-Identifier: MIT */
/*
 * A minimal protocol-buffers encoder for profile.proto: varints, 64-bit
 * integers, length-delimited strings/bytes, packed repeated integers and
 * nested messages (built in a child buffer, then appended with its length).
 * Only what the pprof writer needs; every write keeps the buffer valid.
 */
#ifndef SPULSE_PPROF_PB_H
#define SPULSE_PPROF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A growable byte buffer; ->oom sticks once an allocation failed. */
struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void pb_init(struct pb_buf *b);
void pb_free(struct pb_buf *b);
/* Empty @b, keeping its memory. */
static inline void pb_reset(struct pb_buf *b) { b->len = 0; }

/* Raw unsigned varint (no tag). */
void pb_varint(struct pb_buf *b, uint64_t v);
/* Field @field, wire type 0, value @v (int64/uint64/bool as two's complement). */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* As pb_uint(), but nothing is written for 0 (proto3 default). */
void pb_uint_nz(struct pb_buf *b, uint32_t field, uint64_t v);
/* Field @field, wire type 2: @len bytes of @data. */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* Field @field, wire type 2: the bytes of message @msg. */
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);
/* Field @field, packed repeated varints (nothing for @n == 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);

#endif /* SPULSE_PPROF_PB_H */
