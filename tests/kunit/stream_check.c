// SPDX-License-Identifier: GPL-2.0
/*
 * Independent checker of kernel SPULSE streams for the KUnit suites; see
 * stream_check.h. Only complete input is accepted: a record cut by the end
 * of a chunk is an error here, because the kernel writes whole batches.
 * Tag 9 (FORMAT.md 3.10): kinds 1-3 are decoded field by field against
 * their payload length; a kernel stream has no other kind.
 */
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include <spulse/format.h>
#include <spulse/varint.h>

#include "stream_check.h"

void sk_init(struct sk_stream *s)
{
	memset(s, 0, sizeof(*s));
	s->cpu = -1;
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

/* The event clock: add a signed delta, reject overflow and negatives. */
static bool sk_event(struct sk_stream *s, u64 zz, size_t off, s64 *t, int *err)
{
	s64 d = spulse_unzigzag(zz), v;

	if (check_add_overflow(s->event_ns, d, &v)) {
		*err = sk_fail(s, off, "event clock overflows");
		return false;
	}
	if (v < 0) {
		*err = sk_fail(s, off, "event before profile start");
		return false;
	}
	s->event_ns = v;
	*t = v;
	return true;
}

/* One tag-9 record whose payload is p[off, end). */
static int sk_ext(struct sk_stream *s, const u8 *p, size_t off, size_t end,
		  u64 kind, size_t rec)
{
	struct spulse_offcpu_fields oc = {};
	struct spulse_trigger_fields tr = {};
	u64 v[11], waker;
	size_t fo;
	int err = 0;
	s64 t;
	u32 i;

	switch (kind) {
	case SPULSE_EXT_CPU:
		if (!sk_uvar(s, p, end, &off, &v[0], &err))
			return err;
		if (v[0] >= SPULSE_MAX_CPU)
			return sk_fail(s, rec, "cpu record: cpu >= 65536");
		s->cpu = (s32)v[0];
		s->first_is_cpu |= s->n_records == 0;
		s->n_epoch_cpu += s->n_epochs && s->epoch_first;
		s->n_cpu_records++;
		break;
	case SPULSE_EXT_OFFCPU:
		fo = off;
		for (i = 0; i < 9; i++)
			if (!sk_uvar(s, p, end, &off, &v[i], &err))
				return err;
		waker = v[8];
		if (waker) {
			if (!sk_uvar(s, p, end, &off, &v[9], &err) ||
			    !sk_uvar(s, p, end, &off, &v[10], &err))
				return err;
		}
		if (off != end)
			return sk_fail(s, off, "extension payload length mismatch");
		if (v[1] >= s->n_threads)
			return sk_fail(s, rec, "interval thread not defined");
		if (v[2] >= s->n_stacks)
			return sk_fail(s, rec, "interval stack not defined");
		if (v[3] > SPULSE_STATE_MAX)
			return sk_fail(s, rec, "interval state > 8");
		if (v[4] >= SPULSE_MAX_CPU || v[5] >= SPULSE_MAX_CPU)
			return sk_fail(s, rec, "interval cpu >= 65536");
		if (waker && waker - 1 >= s->n_threads)
			return sk_fail(s, rec, "waker thread not defined");
		if (waker && v[9] >= s->n_stacks)
			return sk_fail(s, rec, "waker stack not defined");
		if (waker && v[10] >= SPULSE_MAX_CPU)
			return sk_fail(s, rec, "waker cpu >= 65536");
		if (v[3] == SPULSE_STATE_RUNNABLE && (v[6] || waker))
			return sk_fail(s, rec, "R interval with blocked time or waker");
		if (!sk_event(s, v[0], fo, &t, &err))
			return err;
		if (v[6] + v[7] < v[6] || v[6] + v[7] > (u64)S64_MAX - (u64)t)
			return sk_fail(s, rec, "off-CPU interval overflows");
		oc.dt_ns = spulse_unzigzag(v[0]);
		oc.thread = v[1];
		oc.stack = v[2];
		oc.state = v[3];
		oc.cpu_out = v[4];
		oc.cpu_in = v[5];
		oc.blocked_ns = v[6];
		oc.runq_ns = v[7];
		oc.has_waker = waker != 0;
		oc.waker_thread = waker ? waker - 1 : 0;
		oc.waker_stack = waker ? v[9] : 0;
		oc.waker_cpu = waker ? v[10] : 0;
		s->oc = oc;
		s->oc_t = t;
		s->oc_stack_depth = oc.stack < SK_MAX_FRAMES ?
				    s->stack_depth[oc.stack] : 0;
		s->oc_leaf_addr = oc.stack < SK_MAX_FRAMES &&
				  s->stack_frame[oc.stack] < SK_MAX_FRAMES ?
				  s->frame_addr[s->stack_frame[oc.stack]] : 0;
		s->n_offcpu++;
		break;
	case SPULSE_EXT_TRIGGER:
		fo = off;
		for (i = 0; i < 8; i++)
			if (!sk_uvar(s, p, end, &off, &v[i], &err))
				return err;
		if (v[7] > SPULSE_MAX_TRIGGER_TEXT)
			return sk_fail(s, rec, "trigger text longer than 256");
		if (v[7] != end - off)
			return sk_fail(s, off, "extension payload length mismatch");
		if (v[1] < 1 || v[1] > SPULSE_TRIGGER_REASON_MAX)
			return sk_fail(s, rec, "trigger reason not 1-4");
		if (v[2] > U32_MAX)
			return sk_fail(s, rec, "trigger seq > u32");
		if (v[5] > v[6])
			return sk_fail(s, rec, "trigger window start > end");
		if (!sk_event(s, v[0], fo, &t, &err))
			return err;
		tr.dt_ns = spulse_unzigzag(v[0]);
		tr.reason = v[1];
		tr.seq = v[2];
		tr.value_ns = v[3];
		tr.threshold_ns = v[4];
		tr.window_start_ns = v[5];
		tr.window_end_ns = v[6];
		tr.text_len = v[7];
		memcpy(s->tr_text, p + off, v[7]);
		s->tr_text[v[7]] = 0;
		tr.text = s->tr_text;
		s->tr = tr;
		s->tr_t = t;
		s->n_triggers++;
		break;
	default:
		return sk_fail(s, rec, "extension kind not written by the kernel");
	}
	return 0;
}

/**
 * sk_feed() - check one chunk of a stream
 * @s: state (sk_init() before the first chunk)
 * @p: bytes
 * @len: length of @p
 *
 * Return: 0 when every record is valid, -EINVAL with @s->err/@s->err_off.
 */
/* A stream header at p[*off]: the first one, or a new epoch. */
static int sk_header(struct sk_stream *s, const u8 *p, size_t len, size_t *off)
{
	size_t rec = *off;
	int err = 0;
	u64 a, b;

	if (len - rec < SPULSE_MAGIC_LEN ||
	    memcmp(p + rec, SPULSE_MAGIC, SPULSE_MAGIC_LEN))
		return sk_fail(s, rec, s->header_seen ? "bad epoch header" :
			       "stream does not start with the header");
	*off = rec + SPULSE_MAGIC_LEN;
	if (!sk_uvar(s, p, len, off, &a, &err) ||
	    !sk_uvar(s, p, len, off, &b, &err))
		return err;
	if (s->header_seen && a != s->start_us)
		return sk_fail(s, rec, "epoch header with another start_us");
	if (s->header_seen) {
		/* ids and clocks restart: ids of earlier epochs are gone */
		s->n_epochs++;
		s->n_frames = 0;
		s->n_stacks = 0;
		s->n_threads = 0;
		s->event_ns = 0;
		s->sample_ns = 0;
		s->cpu = -1;
	}
	s->start_us = a;
	s->header_seen = true;
	s->epoch_first = true;
	return 0;
}

int sk_feed(struct sk_stream *s, const u8 *p, size_t len)
{
	size_t off = 0;
	int err = 0;
	u64 a, b, c;

	if (!s->header_seen) {
		err = sk_header(s, p, len, &off);
		if (err)
			return err;
	}
	while (off < len) {
		size_t rec = off;
		u8 tag = p[off++];

		if (tag == SPULSE_MAGIC[0]) {	/* 'S': no record has this tag */
			off = rec;
			err = sk_header(s, p, len, &off);
			if (err)
				return err;
			continue;
		}
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
			if (check_add_overflow(s->sample_ns, spulse_unzigzag(a),
					       &s->sample_ns) || s->sample_ns < 0)
				return sk_fail(s, rec, "sample clock out of range");
			s->last_sample_thread = b;
			s->last_sample_stack = c;
			if (s->leaf_pred && c < SK_MAX_FRAMES &&
			    s->stack_frame[c] < SK_MAX_FRAMES &&
			    s->leaf_pred(s->frame_kind[s->stack_frame[c]],
					 s->frame_addr[s->stack_frame[c]]))
				s->n_leaf_pred++;
			s->n_samples++;
			break;
		case SPULSE_TAG_EXT:
			if (!sk_uvar(s, p, len, &off, &a, &err) ||
			    !sk_uvar(s, p, len, &off, &b, &err))
				return err;
			if (!a)
				return sk_fail(s, rec, "extension kind 0");
			if (b > SPULSE_EXT_MAX_LEN)
				return sk_fail(s, rec, "extension payload longer than 4096");
			if (b > len - off)
				return sk_fail(s, rec, "record cut by end of chunk");
			err = sk_ext(s, p, off, off + b, a, rec);
			if (err)
				return err;
			off += b;
			break;
		default:
			return sk_fail(s, rec, "unexpected record tag in a cpu stream");
		}
		s->n_records++;
		s->epoch_first = false;
	}
	return 0;
}
