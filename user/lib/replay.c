// SPDX-License-Identifier: MIT
/*
 * Replay: validates the whole file on open in one sequential pass, keeping
 * only the definitions and a bounded sample-range index; iteration then
 * decodes the validated prefix again with a trusted decoder (no checks that
 * validation already proved). Both passes read through mapped windows of
 * REPLAY_MAP_WINDOW bytes (no copy into a buffer): memory, RSS included,
 * does not depend on the number of samples or the file size.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define REPLAY_INDEX_LIMIT	4096
#define REPLAY_INDEX_STRIDE	65536
#define REPLAY_BATCH		512	/* samples decoded ahead by iteration */
#define REPLAY_MAP_WINDOW	(1u << 20)	/* mapped window */

/*
 * Where sample number @sample starts, and the decoder state before it: the
 * running sample time, the event clock and the current cpu.
 */
struct index_entry {
	uint64_t offset;
	uint64_t sample;
	int64_t time_ns;
	int64_t event_ns;
	uint32_t cpu;
};

struct spulse_replay {
	struct spulse_dec dec;		/* definitions + info of the whole file */
	int fd;
	uint64_t data_start;		/* first record */
	struct index_entry *index;
	size_t nindex, cap_index, index_limit;
	uint32_t stride;

	/* iteration */
	struct spulse_dec it;		/* trusted decoder sharing dec.defs */
	struct spulse_filebuf fb;
	/* samples handed out before the batch (+ bpos: so far) */
	uint64_t it_sample;
	bool started;
	/*
	 * Samples decoded ahead: consecutive sample records starting at file
	 * offset batch_off, with running time batch_time before the first.
	 */
	struct spulse_sample batch[REPLAY_BATCH];
	unsigned int bpos, bn;
	uint64_t batch_off;
	int64_t batch_time;

	/* off-CPU interval iteration: a decoder and a buffer of its own */
	struct spulse_dec oit;
	struct spulse_filebuf ofb;	/* allocated on first use */
	uint64_t offcpu_done;		/* intervals handed out */
	bool ostarted;
};

#define REPLAY_OFFCPU_BUF	(64u << 10)

static int add_index(struct spulse_replay *r, uint64_t offset)
{
	if (r->nindex == r->cap_index) {
		size_t ncap = r->cap_index ? r->cap_index * 2 : 16;
		void *p;

		if (ncap > r->index_limit)
			ncap = r->index_limit;
		p = realloc(r->index, ncap * sizeof(*r->index));
		if (!p)
			return -ENOMEM;
		r->index = p;
		r->cap_index = ncap;
	}
	r->index[r->nindex++] = (struct index_entry){
		.offset = offset, .sample = r->dec.info.samples,
		.time_ns = r->dec.time_ns, .event_ns = r->dec.event_ns,
		.cpu = r->dec.cpu };
	return 0;
}

/*
 * The validation pass: one sequential pass over the file through mapped
 * windows of REPLAY_MAP_WINDOW bytes (no copy), @fb.
 */
static int validate(struct spulse_replay *r, struct spulse_filebuf *fb,
		    struct spulse_error *err)
{
	struct spulse_dec *dec = &r->dec;
	struct spulse_info *info = &dec->info;
	uint64_t next_mark = 0;
	struct spulse_record rec;
	ssize_t got;
	size_t n;
	int ret;

	for (;;) {
		ret = spulse_dec_header(dec, fb->buf + fb->pos,
					fb->fill - fb->pos, &n, err);
		if (ret < 0)
			return ret;
		if (ret == 1)
			break;
		got = spulse_filebuf_refill(fb, UINT64_MAX);
		if (got < 0)
			return spulse_fail_errno(err, (int)got, "read");
		if (got == 0)	/* shorter than the header: FORMAT.md 6 */
			return spulse_fail_short_header(err,
							fb->fill - fb->pos);
	}
	fb->pos += n;
	r->data_start = spulse_filebuf_offset(fb);
	for (;;) {
		const uint8_t *p = fb->buf + fb->pos;
		size_t avail = fb->fill - fb->pos;

		if (avail && *p == SPULSE_TAG_SAMPLE) {
			size_t max = SIZE_MAX;

			if (r->nindex < r->index_limit) {
				if (info->samples == next_mark) {
					if (add_index(r, spulse_filebuf_offset(fb)))
						return spulse_fail_errno(err, -ENOMEM,
									 "index");
					next_mark += r->stride;
				}
				max = next_mark - info->samples;
			}
			spulse_dec_samples(dec, p, avail, NULL, max, &n);
			fb->pos += n;
			if (n)
				continue;
		}
		if (avail) {
			ret = spulse_dec_record(dec, p, avail,
						spulse_filebuf_offset(fb), &rec,
						&n, err);
			if (ret < 0)
				return ret;
			if (ret == 1) {
				fb->pos += n;
				continue;
			}
		}
		got = spulse_filebuf_refill(fb, UINT64_MAX);
		if (got < 0)
			return spulse_fail_errno(err, (int)got, "read");
		if (got == 0)
			break;
	}
	info->complete_bytes = spulse_filebuf_offset(fb);
	info->recovered_from_truncated_tail = fb->fill > fb->pos;
	return 0;
}

SPULSE_EXPORT int spulse_replay_open(const char *path,
				     const struct spulse_read_opts *opts,
				     struct spulse_replay **out,
				     struct spulse_error *err)
{
	struct spulse_filebuf vfb;
	struct spulse_replay *r;
	struct stat st;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return spulse_fail_errno(err, -ENOMEM, "replay");
	spulse_dec_init(&r->dec, opts);
	r->index_limit = REPLAY_INDEX_LIMIT;
	r->stride = REPLAY_INDEX_STRIDE;
	if (opts && opts->sz >= sizeof(*opts)) {
		if (opts->replay_index_limit)
			r->index_limit = opts->replay_index_limit;
		if (opts->replay_index_stride)
			r->stride = opts->replay_index_stride;
	}
	r->fd = spulse_open_spool(path, err);
	if (r->fd < 0) {
		ret = r->fd;
		free(r);
		return ret;
	}
	if (fstat(r->fd, &st) < 0) {
		ret = spulse_fail_errno(err, -errno, path);
		goto fail;
	}
	ret = spulse_filebuf_init_map(&r->fb, r->fd, REPLAY_MAP_WINDOW,
				      (uint64_t)st.st_size);
	if (ret) {
		spulse_fail_errno(err, ret, "replay window");
		goto fail;
	}
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	ret = spulse_filebuf_init_map(&vfb, r->fd, REPLAY_MAP_WINDOW,
				      (uint64_t)st.st_size);
	if (!ret)
		ret = validate(r, &vfb, err);
	else
		ret = spulse_fail_errno(err, ret, "replay window");
	spulse_filebuf_fini(&vfb);
	if (ret)
		goto fail;
	spulse_replay_rewind(r);
	*out = r;
	return 0;
fail:
	spulse_replay_close(r);
	return ret;
}

SPULSE_EXPORT void spulse_replay_close(struct spulse_replay *r)
{
	if (!r)
		return;
	spulse_dec_fini(&r->dec);
	spulse_filebuf_fini(&r->fb);
	spulse_filebuf_fini(&r->ofb);
	free(r->index);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

SPULSE_EXPORT const struct spulse_info *
spulse_replay_info(const struct spulse_replay *r)
{
	return &r->dec.info;
}

SPULSE_EXPORT const struct spulse_defs *
spulse_replay_defs(const struct spulse_replay *r)
{
	return &r->dec.defs;
}

SPULSE_EXPORT bool
spulse_replay_recovered_from_truncated_tail(const struct spulse_replay *r)
{
	return r->dec.info.recovered_from_truncated_tail;
}

/* Position the iterator at @e (@e->sample samples before it). */
static void position(struct spulse_replay *r, const struct index_entry *e)
{
	r->it = r->dec;		/* shares the (complete) definition tables */
	r->it.trusted = true;
	r->it.time_ns = e->time_ns;
	r->it.event_ns = e->event_ns;
	r->it.cpu = e->cpu;
	r->it_sample = e->sample;
	spulse_filebuf_seek(&r->fb, e->offset);
	r->started = true;
	r->bpos = r->bn = 0;
}

static struct index_entry start_entry(const struct spulse_replay *r)
{
	return (struct index_entry){ .offset = r->data_start,
				     .cpu = SPULSE_NONE };
}

SPULSE_EXPORT int spulse_replay_rewind(struct spulse_replay *r)
{
	struct index_entry e = start_entry(r);

	position(r, &e);
	return 0;
}

/*
 * Decode the next record of the validated prefix. Return 1, 0 at the end,
 * or <0 if the file changed under us.
 */
static int next_any(struct spulse_replay *r, struct spulse_record *out)
{
	struct spulse_filebuf *fb = &r->fb;
	struct spulse_error err;
	size_t n;
	int ret;

	for (;;) {
		ret = spulse_dec_record(&r->it, fb->buf + fb->pos,
					fb->fill - fb->pos,
					spulse_filebuf_offset(fb), out, &n, &err);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			fb->pos += n;
			if (out->tag == SPULSE_TAG_SAMPLE)
				r->it_sample++;
			return 1;
		}
		ret = (int)spulse_filebuf_refill(fb, r->dec.info.complete_bytes);
		if (ret < 0)
			return ret;
		if (ret == 0)	/* short of the validated prefix: it shrank */
			return fb->fill > fb->pos ||
			       spulse_filebuf_offset(fb) <
			       r->dec.info.complete_bytes ? -EIO : 0;
	}
}

/*
 * Put the file position back right after the last sample handed out, so
 * that record iteration continues from there: re-decode the consumed part
 * of the batch from its start.
 */
static int unbatch(struct spulse_replay *r)
{
	struct spulse_filebuf *fb = &r->fb;
	unsigned int done = r->bpos;
	size_t n;

	r->it_sample += r->bpos;
	if (r->bpos >= r->bn) {
		r->bpos = r->bn = 0;
		return 0;
	}
	spulse_filebuf_seek(fb, r->batch_off);
	r->it.time_ns = r->batch_time;
	r->bpos = r->bn = 0;
	if (!done)
		return 0;
	if (spulse_filebuf_refill(fb, r->dec.info.complete_bytes) < 0)
		return -EIO;
	if (spulse_dec_samples(&r->it, fb->buf, fb->fill, NULL, done, &n) != done)
		return -EIO;
	fb->pos = n;
	return 0;
}

SPULSE_EXPORT int spulse_replay_next_record(struct spulse_replay *r,
					    struct spulse_record *out)
{
	int ret;

	if (!r->started)
		spulse_replay_rewind(r);
	if (!r->dec.header_done)
		return 0;
	ret = unbatch(r);
	if (ret)
		return ret;
	return next_any(r, out);
}

/* Decode the next run of samples into the batch: 1, 0 at the end, <0. */
static int fill_batch(struct spulse_replay *r)
{
	struct spulse_filebuf *fb = &r->fb;
	struct spulse_record rec;
	size_t n;
	int ret;

	r->it_sample += r->bpos;
	r->bpos = r->bn = 0;
	for (;;) {
		if (fb->fill - fb->pos < 4096 &&
		    spulse_filebuf_refill(fb, r->dec.info.complete_bytes) < 0)
			return -EIO;
		r->batch_off = spulse_filebuf_offset(fb);
		r->batch_time = r->it.time_ns;
		r->bn = (unsigned int)spulse_dec_samples(&r->it, fb->buf + fb->pos,
							 fb->fill - fb->pos,
							 r->batch, REPLAY_BATCH,
							 &n);
		fb->pos += n;
		if (r->bn)
			return 1;
		ret = next_any(r, &rec);
		if (ret <= 0)
			return ret;
		if (rec.tag == SPULSE_TAG_SAMPLE) {
			r->it_sample--;	/* counted when handed out */
			r->batch[0] = rec.u.sample;
			r->bn = 1;
			return 1;
		}
	}
}

SPULSE_EXPORT int spulse_replay_next_sample(struct spulse_replay *r,
					    struct spulse_sample *out)
{
	int ret;

	if (__builtin_expect(r->bpos < r->bn, 1)) {
		*out = r->batch[r->bpos++];
		return 1;
	}
	if (!r->dec.header_done)
		return 0;
	ret = fill_batch(r);
	if (ret <= 0)
		return ret;
	*out = r->batch[r->bpos++];
	return 1;
}

SPULSE_EXPORT int spulse_replay_next_samples(struct spulse_replay *r,
					     struct spulse_sample *out,
					     size_t max)
{
	size_t n = 0;
	int ret;

	if (max > INT32_MAX)
		max = INT32_MAX;
	while (n < max) {
		size_t k;

		if (r->bpos >= r->bn) {
			if (!r->dec.header_done)
				break;
			ret = fill_batch(r);
			if (ret < 0)
				return ret;
			if (ret == 0)
				break;
		}
		k = r->bn - r->bpos;
		if (k > max - n)
			k = max - n;
		memcpy(out + n, r->batch + r->bpos, k * sizeof(*out));
		r->bpos += (unsigned int)k;
		n += k;
	}
	return (int)n;
}

SPULSE_EXPORT int spulse_replay_seek_sample(struct spulse_replay *r,
					    uint64_t index)
{
	struct spulse_sample s;
	size_t lo = 0, hi = r->nindex;
	int ret;

	if (index > r->dec.info.samples)
		return -ERANGE;
	/* last entry with sample <= index */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->index[mid].sample <= index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		spulse_replay_rewind(r);
	else
		position(r, &r->index[lo - 1]);
	while (r->it_sample + r->bpos < index) {
		ret = spulse_replay_next_sample(r, &s);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -EIO;
	}
	return 0;
}

SPULSE_EXPORT size_t spulse_replay_index_entries(const struct spulse_replay *r)
{
	return r->nindex;
}

SPULSE_EXPORT size_t spulse_replay_memory_bytes(const struct spulse_replay *r)
{
	return sizeof(*r) + r->ofb.cap +
	       r->cap_index * sizeof(*r->index) +
	       spulse_defs_bytes(&r->dec.defs);
}

/* ---- off-CPU intervals: an iterator of their own ---- */

SPULSE_EXPORT int spulse_replay_rewind_offcpu(struct spulse_replay *r)
{
	r->ostarted = false;
	return 0;
}

SPULSE_EXPORT int spulse_replay_next_offcpu(struct spulse_replay *r,
					    struct spulse_offcpu *out)
{
	struct spulse_filebuf *fb = &r->ofb;
	struct spulse_record rec;
	struct spulse_error err;
	size_t n;
	ssize_t got;
	int ret;

	if (!r->dec.header_done)
		return 0;
	if (!r->ostarted) {
		if (!fb->buf) {
			ret = spulse_filebuf_init(fb, r->fd, REPLAY_OFFCPU_BUF,
						  r->data_start);
			if (ret)
				return ret;
		}
		spulse_filebuf_seek(fb, r->data_start);
		r->oit = r->dec;	/* shares the complete definitions */
		r->oit.trusted = true;
		r->oit.time_ns = 0;
		r->oit.event_ns = 0;
		r->oit.cpu = SPULSE_NONE;
		r->offcpu_done = 0;
		r->ostarted = true;
	}
	/* after the last interval, do not read the rest of the file */
	if (r->offcpu_done >= r->dec.info.offcpu)
		return 0;
	for (;;) {
		const uint8_t *p = fb->buf + fb->pos;
		size_t avail = fb->fill - fb->pos;

		if (avail) {
			spulse_dec_samples(&r->oit, p, avail, NULL, SIZE_MAX, &n);
			fb->pos += n;
			if (n)
				continue;
			ret = spulse_dec_record(&r->oit, p, avail,
						spulse_filebuf_offset(fb), &rec,
						&n, &err);
			if (ret < 0)
				return ret;
			if (ret == 1) {
				fb->pos += n;
				if (rec.ext_kind == SPULSE_EXT_OFFCPU) {
					*out = rec.u.offcpu;
					r->offcpu_done++;
					return 1;
				}
				continue;
			}
		}
		got = spulse_filebuf_refill(fb, r->dec.info.complete_bytes);
		if (got < 0)
			return (int)got;
		if (got == 0)
			return fb->fill > fb->pos ||
			       spulse_filebuf_offset(fb) <
			       r->dec.info.complete_bytes ? -EIO : 0;
	}
}
