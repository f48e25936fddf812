/* SPDX-License-Identifier: MIT */
/* Minimal protobuf encoder (see pprof_pb.h). */
#include <stdlib.h>
#include <string.h>

#include "pprof_pb.h"

void pb_init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_free(struct pb_buf *b)
{
	free(b->p);
	pb_init(b);
}

static bool reserve(struct pb_buf *b, size_t more)
{
	size_t nc;
	uint8_t *np;

	if (b->oom)
		return false;
	if (b->len + more <= b->cap)
		return true;
	nc = b->cap ? b->cap : 256;
	while (nc < b->len + more)
		nc *= 2;
	np = realloc(b->p, nc);
	if (!np) {
		b->oom = true;
		return false;
	}
	b->p = np;
	b->cap = nc;
	return true;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (!reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static void tag(struct pb_buf *b, uint32_t field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	tag(b, field, 0);
	pb_varint(b, v);
}

void pb_uint_nz(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (v)
		pb_uint(b, field, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	tag(b, field, 2);
	pb_varint(b, len);
	if (!reserve(b, len))
		return;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
	if (msg->oom) {
		b->oom = true;
		return;
	}
	pb_bytes(b, field, msg->p, msg->len);
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += varint_len(v[i]);
	tag(b, field, 2);
	pb_varint(b, len);
	for (i = 0; i < n; i++)
		pb_varint(b, v[i]);
}
