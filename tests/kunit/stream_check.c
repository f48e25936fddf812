// SPDX-License-Identifier: GPL-2.0
/*
 * Independent checker of kernel SPULSE streams for the KUnit suites; see
 * stream_check.h. Only complete input is accepted: a record cut by the end
 * of a chunk is an error here, because the kernel writes whole batches.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include <spulse/format.h>
#include <spulse/varint.h>

#include "stream_check.h"

void sk_init(struct sk_stream *s)
{
	memset(s, 0, sizeof(*s));
}

static int sk_fail(struct sk_stream *s, size_t off, const char *why)
{
	s->err_off = off;
	s->err = why;
	return -EINVAL;
}

/* Read one uvar at *off; on failure record why and return false. */
static bool sk_uvar(struct sk_stream *s, const u8 *p, size_t len, size_t *off,
		    u64 *v, int *err)
{
	int n = spulse_get_uvar(p + *off, len - *off, v);

	if (n <= 0) {
		*err = sk_fail(s, *off, n == SPULSE_VARINT_SHORT ?
			       "record cut by end of chunk" : "bad varint");
		return false;
	}
	*off += n;
	return true;
}

/**
 * sk_feed() - check one chunk of a stream
 * @s: state (sk_init() before the first chunk)
 * @p: bytes
 * @len: length of @p
 *
 * Return: 0 when every record is valid, -EINVAL with @s->err/@s->err_off.
 */
int sk_feed(struct sk_stream *s, const u8 *p, size_t len)
{
	size_t off = 0;
	int err = 0;
	u64 a, b, c;

	if (!s->header_seen) {
		if (len < SPULSE_MAGIC_LEN ||
		    memcmp(p, SPULSE_MAGIC, SPULSE_MAGIC_LEN))
			return sk_fail(s, 0, "stream does not start with the header");
		off = SPULSE_MAGIC_LEN;
		if (!sk_uvar(s, p, len, &off, &a, &err) ||
		    !sk_uvar(s, p, len, &off, &b, &err))
			return err;
		s->header_seen = true;
	}
	while (off < len) {
		size_t rec = off;
		u8 tag = p[off++];

		switch (tag) {
		case SPULSE_TAG_FRAME: {
			u8 kind;

			b = 0;
			if (!sk_uvar(s, p, len, &off, &a, &err))
				return err;
			if (a != s->n_frames)
				return sk_fail(s, rec, "frame id not dense");
			if (off >= len)
				return sk_fail(s, rec, "record cut by end of chunk");
			kind = p[off++];
			if (kind == SPULSE_FRAME_USER || kind == SPULSE_FRAME_KERNEL) {
				if (!sk_uvar(s, p, len, &off, &b, &err))
					return err;
			} else if (kind != SPULSE_FRAME_TRUNCATED) {
				return sk_fail(s, rec, "frame kind not allowed in a kernel stream");
			}
			if (s->n_frames < SK_MAX_FRAMES) {
				s->frame_kind[s->n_frames] = kind;
				s->frame_addr[s->n_frames] = b;
			}
			s->n_kernel_frames += kind == SPULSE_FRAME_KERNEL;
			s->n_user_frames += kind == SPULSE_FRAME_USER;
			s->n_trunc_frames += kind == SPULSE_FRAME_TRUNCATED;
			s->n_frames++;
			break;
		}
		case SPULSE_TAG_STACK: {
			u32 depth = 1;

			if (!sk_uvar(s, p, len, &off, &a, &err) ||
			    !sk_uvar(s, p, len, &off, &b, &err) ||
			    !sk_uvar(s, p, len, &off, &c, &err))
				return err;
			if (a != s->n_stacks)
				return sk_fail(s, rec, "stack id not dense");
			if (b != SPULSE_STACK_ROOT && b - 1 >= s->n_stacks)
				return sk_fail(s, rec, "stack parent not defined");
			if (c >= s->n_frames)
				return sk_fail(s, rec, "stack frame not defined");
			if (c < SK_MAX_FRAMES &&
			    s->frame_kind[c] == SPULSE_FRAME_TRUNCATED &&
			    b != SPULSE_STACK_ROOT)
				return sk_fail(s, rec, "truncated marker not at the root");
			if (b != SPULSE_STACK_ROOT && b - 1 < SK_MAX_FRAMES)
				depth = s->stack_depth[b - 1] + 1;
			if (depth > SPULSE_MAX_DEPTH)
				return sk_fail(s, rec, "stack deeper than SPULSE_MAX_DEPTH");
			if (s->n_stacks < SK_MAX_FRAMES) {
				s->stack_depth[s->n_stacks] = depth;
				s->stack_frame[s->n_stacks] = c;
			}
			if (depth > s->max_depth)
				s->max_depth = depth;
			s->n_stacks++;
			break;
		}
		case SPULSE_TAG_THREAD:
			if (!sk_uvar(s, p, len, &off, &a, &err) ||
			    !sk_uvar(s, p, len, &off, &b, &err) ||
			    !sk_uvar(s, p, len, &off, &b, &err) ||
			    !sk_uvar(s, p, len, &off, &c, &err))
				return err;
			if (a != s->n_threads)
				return sk_fail(s, rec, "thread id not dense");
			if (c > SPULSE_MAX_COMM || c > len - off)
				return sk_fail(s, rec, "bad comm length");
			off += c;
			s->n_threads++;
			break;
		case SPULSE_TAG_SAMPLE:
			if (!sk_uvar(s, p, len, &off, &a, &err) ||
			    !sk_uvar(s, p, len, &off, &b, &err) ||
			    !sk_uvar(s, p, len, &off, &c, &err))
				return err;
			if (b >= s->n_threads)
				return sk_fail(s, rec, "sample thread not defined");
			if (c >= s->n_stacks)
				return sk_fail(s, rec, "sample stack not defined");
			s->last_sample_thread = b;
			s->last_sample_stack = c;
			if (s->leaf_pred && c < SK_MAX_FRAMES &&
			    s->stack_frame[c] < SK_MAX_FRAMES &&
			    s->leaf_pred(s->frame_kind[s->stack_frame[c]],
					 s->frame_addr[s->stack_frame[c]]))
				s->n_leaf_pred++;
			s->n_samples++;
			break;
		default:
			return sk_fail(s, rec, "unexpected record tag in a cpu stream");
		}
	}
	return 0;
}
