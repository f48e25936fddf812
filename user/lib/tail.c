// SPDX-License-Identifier: MIT
/*
 * Tail: incremental reader of a spool that is still being written. Each poll
 * reads what became visible, validates it record by record, and returns at
 * most SPULSE_TAIL_BATCH samples (and at most SPULSE_TAIL_BATCH off-CPU
 * intervals, spulse_tail_offcpu()) in storage reused by the next poll. A
 * record cut by the current end of file is left for a later poll.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define TAIL_BUF	(256u << 10)

struct spulse_tail {
	struct spulse_dec dec;
	int fd;
	struct spulse_filebuf fb;
	struct spulse_sample *samples;	/* SPULSE_TAIL_BATCH entries */
	struct spulse_offcpu *offcpu;	/* SPULSE_TAIL_BATCH entries */
	unsigned int noffcpu;		/* of the last poll */
	struct spulse_error failed;	/* sticky, code 0 = none */
};

SPULSE_EXPORT int spulse_tail_open(const char *path,
				   const struct spulse_read_opts *opts,
				   struct spulse_tail **out,
				   struct spulse_error *err)
{
	struct spulse_tail *t;
	int ret;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return spulse_fail_errno(err, -ENOMEM, "tail");
	spulse_dec_init(&t->dec, opts);
	t->fd = spulse_open_spool(path, err);
	if (t->fd < 0) {
		ret = t->fd;
		spulse_dec_fini(&t->dec);
		free(t);
		return ret;
	}
	t->samples = malloc(SPULSE_TAIL_BATCH * sizeof(*t->samples));
	t->offcpu = malloc(SPULSE_TAIL_BATCH * sizeof(*t->offcpu));
	ret = t->samples && t->offcpu ?
	      spulse_filebuf_init(&t->fb, t->fd, TAIL_BUF, 0) : -ENOMEM;
	if (ret) {
		spulse_tail_close(t);
		return spulse_fail_errno(err, ret, "tail buffers");
	}
	*out = t;
	return 0;
}

SPULSE_EXPORT void spulse_tail_close(struct spulse_tail *t)
{
	if (!t)
		return;
	spulse_dec_fini(&t->dec);
	spulse_filebuf_fini(&t->fb);
	free(t->samples);
	free(t->offcpu);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

static int fail(struct spulse_tail *t, int ret, struct spulse_error *err)
{
	/* pending bytes that are corrupt are an error, not a truncated tail */
	t->dec.info.recovered_from_truncated_tail = false;
	if (!t->failed.code)
		t->failed.code = ret;
	if (err)
		*err = t->failed;
	return t->failed.code;
}

SPULSE_EXPORT int spulse_tail_poll(struct spulse_tail *t,
				   const struct spulse_sample **samples,
				   struct spulse_error *err)
{
	struct spulse_filebuf *fb = &t->fb;
	struct spulse_info *info = &t->dec.info;
	struct spulse_record rec;
	size_t count = 0, n;
	bool cut = false;	/* stopped at EOF inside a record */
	ssize_t got;
	int ret;

	*samples = t->samples;
	t->noffcpu = 0;
	if (t->failed.code)
		return fail(t, t->failed.code, err);
	while (!t->dec.header_done) {
		ret = spulse_dec_header(&t->dec, fb->buf + fb->pos,
					fb->fill - fb->pos, &n, &t->failed);
		if (ret < 0)
			return fail(t, ret, err);
		if (ret == 1) {
			fb->pos += n;
			info->complete_bytes = spulse_filebuf_offset(fb);
			break;
		}
		got = spulse_filebuf_refill(fb, UINT64_MAX);
		if (got < 0)
			return fail(t, spulse_fail_errno(&t->failed, (int)got,
							 "read"), err);
		if (got == 0) {
			/* an empty file has no incomplete header yet */
			info->recovered_from_truncated_tail = fb->fill > fb->pos;
			return 0;
		}
	}
	while (count < SPULSE_TAIL_BATCH && t->noffcpu < SPULSE_TAIL_BATCH) {
		const uint8_t *p = fb->buf + fb->pos;
		size_t avail = fb->fill - fb->pos;

		if (avail) {
			count += spulse_dec_samples(&t->dec, p, avail,
						    t->samples + count,
						    SPULSE_TAIL_BATCH - count, &n);
			fb->pos += n;
			if (n)
				continue;
			ret = spulse_dec_record(&t->dec, p, avail,
						spulse_filebuf_offset(fb), &rec,
						&n, &t->failed);
			if (ret < 0) {
				/* deliver what came before; the error is sticky */
				if (!t->failed.code)
					t->failed.code = ret;
				if (count || t->noffcpu) {
					info->complete_bytes =
						spulse_filebuf_offset(fb);
					info->recovered_from_truncated_tail = false;
					return (int)count;
				}
				return fail(t, ret, err);
			}
			if (ret == 1) {
				fb->pos += n;
				if (rec.tag == SPULSE_TAG_SAMPLE)
					t->samples[count++] = rec.u.sample;
				else if (rec.ext_kind == SPULSE_EXT_OFFCPU)
					t->offcpu[t->noffcpu++] = rec.u.offcpu;
				continue;
			}
		}
		got = spulse_filebuf_refill(fb, UINT64_MAX);
		if (got < 0)
			return fail(t, spulse_fail_errno(&t->failed, (int)got,
							 "read"), err);
		if (got == 0) {
			/* the file ends here: inside a record if bytes remain */
			cut = fb->fill > fb->pos;
			break;
		}
	}
	/*
	 * A poll that stopped at a full batch has not looked at what
	 * follows: only a poll that reached the end of the file inside a
	 * record reports a truncated tail (docs/API.md, Tail).
	 */
	info->complete_bytes = spulse_filebuf_offset(fb);
	info->recovered_from_truncated_tail = cut;
	return (int)count;
}

SPULSE_EXPORT const struct spulse_info *spulse_tail_info(const struct spulse_tail *t)
{
	return &t->dec.info;
}

SPULSE_EXPORT const struct spulse_defs *spulse_tail_defs(const struct spulse_tail *t)
{
	return &t->dec.defs;
}

SPULSE_EXPORT uint64_t spulse_tail_offset(const struct spulse_tail *t)
{
	return spulse_filebuf_offset(&t->fb);
}

SPULSE_EXPORT int spulse_tail_offcpu(const struct spulse_tail *t,
				     const struct spulse_offcpu **intervals)
{
	*intervals = t->offcpu;
	return (int)t->noffcpu;
}
