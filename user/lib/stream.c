// SPDX-License-Identifier: MIT
/*
 * Stream: push decoder for SPULSE bytes arriving in pieces (relay files,
 * pipes). The caller feeds bytes and pulls validated records; a record cut
 * by the end of what was fed stays pending until more bytes arrive.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct spulse_stream {
	struct spulse_dec dec;
	uint8_t *buf;
	size_t cap, pos, fill;
	uint64_t base;		/* stream offset of buf[0] */
	struct spulse_error failed;	/* sticky error, code 0 = none */
};

SPULSE_EXPORT int spulse_stream_new(const struct spulse_read_opts *opts,
				    struct spulse_stream **out)
{
	struct spulse_stream *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	spulse_dec_init(&s->dec, opts);
	*out = s;
	return 0;
}

SPULSE_EXPORT void spulse_stream_free(struct spulse_stream *s)
{
	if (!s)
		return;
	spulse_dec_fini(&s->dec);
	free(s->buf);
	free(s);
}

SPULSE_EXPORT int spulse_stream_feed(struct spulse_stream *s, const void *buf,
				     size_t len)
{
	if (!len)
		return 0;
	if (s->cap - s->fill < len && s->pos) {
		memmove(s->buf, s->buf + s->pos, s->fill - s->pos);
		s->base += s->pos;
		s->fill -= s->pos;
		s->pos = 0;
	}
	if (s->cap - s->fill < len) {
		size_t ncap = s->cap ? s->cap : 65536;
		void *p;

		while (ncap - s->fill < len) {
			if (ncap > SIZE_MAX / 2)
				return -ENOMEM;
			ncap *= 2;
		}
		p = realloc(s->buf, ncap);
		if (!p)
			return -ENOMEM;
		s->buf = p;
		s->cap = ncap;
	}
	memcpy(s->buf + s->fill, buf, len);
	s->fill += len;
	return 0;
}

SPULSE_EXPORT int spulse_stream_next(struct spulse_stream *s,
				     struct spulse_record *out,
				     struct spulse_error *err)
{
	struct spulse_info *info = &s->dec.info;
	const uint8_t *buf = s->buf ? s->buf : (const uint8_t *)"";
	size_t n;
	int r;

	if (s->failed.code) {
		if (err)
			*err = s->failed;
		return s->failed.code;
	}
	if (!s->dec.header_done) {
		r = spulse_dec_header(&s->dec, buf + s->pos, s->fill - s->pos,
				      &n, &s->failed);
		if (r < 0)
			goto fail;
		if (r == 0) {
			/* nothing fed yet is not an incomplete header */
			info->recovered_from_truncated_tail = s->fill > s->pos;
			return 0;
		}
		s->pos += n;
		info->complete_bytes = s->base + s->pos;
	}
	r = spulse_dec_record(&s->dec, buf + s->pos, s->fill - s->pos,
			      s->base + s->pos, out, &n, &s->failed);
	if (r < 0)
		goto fail;
	if (r == 0) {
		info->recovered_from_truncated_tail = s->fill > s->pos;
		return 0;
	}
	s->pos += n;
	info->complete_bytes = s->base + s->pos;
	/* what follows is not looked at until the next call */
	info->recovered_from_truncated_tail = false;
	return 1;
fail:
	info->recovered_from_truncated_tail = false;
	if (!s->failed.code)
		s->failed.code = r;
	if (err)
		*err = s->failed;
	return r;
}

/* Samples spulse_stream_samples() takes with the portable loop first. */
#define STREAM_SHORT_RUN 8

SPULSE_EXPORT size_t spulse_stream_samples(struct spulse_stream *s,
					   struct spulse_sample *out,
					   size_t max)
{
	size_t n, c;

	if (s->failed.code || !s->dec.header_done || s->fill == s->pos ||
	    s->buf[s->pos] != SPULSE_TAG_SAMPLE)
		return 0;
	/*
	 * A stream's sample runs are often short (each new stack's
	 * definitions come before its sample), and the SIMD loop's 64-byte
	 * windows cost more than they save on those: the portable loop takes
	 * the first samples, spulse_dec_samples() the rest of a longer run.
	 */
	n = spulse_dec_samples_portable(&s->dec, s->buf + s->pos,
					s->fill - s->pos, out,
					max < STREAM_SHORT_RUN ? max :
					STREAM_SHORT_RUN, &c);
	if (n == STREAM_SHORT_RUN && max > n) {
		size_t c2;

		n += spulse_dec_samples(&s->dec, s->buf + s->pos + c,
					s->fill - s->pos - c, out + n, max - n,
					&c2);
		c += c2;
	}
	if (n) {
		s->pos += c;
		s->dec.info.complete_bytes = s->base + s->pos;
		s->dec.info.recovered_from_truncated_tail = false;
	}
	return n;
}

SPULSE_EXPORT size_t spulse_stream_take_defs(struct spulse_stream *s)
{
	size_t n, c;
	uint8_t tag;

	if (s->failed.code || !s->dec.header_done || s->fill == s->pos)
		return 0;
	tag = s->buf[s->pos];
	if (tag != SPULSE_TAG_STACK && tag != SPULSE_TAG_FRAME)
		return 0;
	n = spulse_dec_defs(&s->dec, s->buf + s->pos, s->fill - s->pos, &c);
	if (n) {
		s->pos += c;
		s->dec.info.complete_bytes = s->base + s->pos;
		s->dec.info.recovered_from_truncated_tail = false;
	}
	return n;
}

SPULSE_EXPORT const struct spulse_info *
spulse_stream_info(const struct spulse_stream *s)
{
	return &s->dec.info;
}

SPULSE_EXPORT const struct spulse_defs *
spulse_stream_defs(const struct spulse_stream *s)
{
	return &s->dec.defs;
}

SPULSE_EXPORT size_t spulse_stream_pending(const struct spulse_stream *s)
{
	return s->fill - s->pos;
}

SPULSE_EXPORT const void *
spulse_stream_pending_bytes(const struct spulse_stream *s, size_t *len)
{
	*len = s->fill - s->pos;
	return s->buf ? s->buf + s->pos : (const void *)"";
}
