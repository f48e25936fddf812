// SPDX-License-Identifier: MIT
/*
 * Snapshot: the whole spool decoded in memory, random access to samples,
 * off-CPU intervals and triggers.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct spulse_snapshot {
	struct spulse_dec dec;
	struct spulse_sample *samples;
	uint64_t nsamples, cap;
	struct spulse_offcpu *offcpu;
	uint64_t noffcpu, cap_offcpu;
	struct spulse_trigger *triggers;	/* text copied into the arena */
	uint64_t ntriggers, cap_triggers;
};

/* Append one element of @size to a doubling array. */
static int push(void **arr, uint64_t *n, uint64_t *cap, size_t size,
		const void *elem)
{
	if (*n == *cap) {
		uint64_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, ncap * size);

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	memcpy((char *)*arr + *n * size, elem, size);
	(*n)++;
	return 0;
}

static int keep_ext(struct spulse_snapshot *s, struct spulse_record *rec)
{
	struct spulse_trigger t;

	switch (rec->ext_kind) {
	case SPULSE_EXT_OFFCPU:
		return push((void **)&s->offcpu, &s->noffcpu, &s->cap_offcpu,
			    sizeof(*s->offcpu), &rec->u.offcpu);
	case SPULSE_EXT_TRIGGER:
		t = rec->u.trigger;
		t.text = spulse_arena_copy(&s->dec.defs.arena, t.text,
					   t.text_len);
		if (!t.text)
			return -ENOMEM;
		return push((void **)&s->triggers, &s->ntriggers,
			    &s->cap_triggers, sizeof(*s->triggers), &t);
	default:
		return 0;
	}
}

static int reserve(struct spulse_snapshot *s, uint64_t room)
{
	uint64_t ncap;
	void *p;

	if (s->cap - s->nsamples >= room)
		return 0;
	ncap = s->cap ? s->cap * 2 : 65536;
	if (ncap < s->nsamples + room)
		ncap = s->nsamples + room;
	p = realloc(s->samples, ncap * sizeof(*s->samples));
	if (!p)
		return -ENOMEM;
	s->samples = p;
	s->cap = ncap;
	return 0;
}

static int decode_all(struct spulse_snapshot *s, const uint8_t *buf, size_t len,
		      struct spulse_error *err)
{
	struct spulse_dec *dec = &s->dec;
	struct spulse_info *info = &dec->info;
	struct spulse_record rec;
	size_t pos, n;
	int r;

	r = spulse_dec_header(dec, buf, len, &n, err);
	if (r < 0)
		return r;
	if (r == 0)	/* shorter than the header: FORMAT.md 6 */
		return spulse_fail_short_header(err, len);
	pos = n;
	/*
	 * A sample takes at least 4 bytes: reserve for the most the file can
	 * hold (capped) so the array is not copied while growing; pages never
	 * written are never touched, so RSS follows the real count.
	 */
	if (reserve(s, (len - pos) / 4 < (1u << 26) ? (len - pos) / 4 + 1 :
			   (1u << 26)))
		return spulse_fail_errno(err, -ENOMEM, "samples");
	while (pos < len) {
		if (reserve(s, 1))
			return spulse_fail_errno(err, -ENOMEM, "samples");
		s->nsamples += spulse_dec_samples(dec, buf + pos, len - pos,
						  s->samples + s->nsamples,
						  s->cap - s->nsamples, &n);
		pos += n;
		if (pos == len || s->nsamples == s->cap)
			continue;
		r = spulse_dec_record(dec, buf + pos, len - pos, pos, &rec, &n,
				      err);
		if (r < 0)
			return r;
		if (r == 0) {
			info->recovered_from_truncated_tail = true;
			break;
		}
		if (rec.tag == SPULSE_TAG_SAMPLE)
			s->samples[s->nsamples++] = rec.u.sample;
		else if (rec.tag == SPULSE_TAG_EXT && keep_ext(s, &rec))
			return spulse_fail_errno(err, -ENOMEM, "intervals");
		pos += n;
	}
	info->complete_bytes = pos;
	if (s->cap > s->nsamples + 65536) {	/* give back the unused tail */
		void *p = realloc(s->samples, (s->nsamples + 1) * sizeof(*s->samples));

		if (p) {
			s->samples = p;
			s->cap = s->nsamples + 1;
		}
	}
	return 0;
}

SPULSE_EXPORT int spulse_snapshot_open_mem(const void *buf, size_t len,
					   const struct spulse_read_opts *opts,
					   struct spulse_snapshot **out,
					   struct spulse_error *err)
{
	struct spulse_snapshot *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return spulse_fail_errno(err, -ENOMEM, "snapshot");
	spulse_dec_init(&s->dec, opts);
	r = decode_all(s, buf, len, err);
	if (r < 0) {
		spulse_snapshot_close(s);
		return r;
	}
	*out = s;
	return 0;
}

SPULSE_EXPORT int spulse_snapshot_open(const char *path,
				       const struct spulse_read_opts *opts,
				       struct spulse_snapshot **out,
				       struct spulse_error *err)
{
	struct stat st;
	void *map = NULL;
	int fd, r;

	*out = NULL;
	fd = spulse_open_spool(path, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return spulse_fail_errno(err, r, path);
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			   fd, 0);
		if (map == MAP_FAILED) {
			r = -errno;
			close(fd);
			return spulse_fail_errno(err, r, path);
		}
		madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	close(fd);
	r = spulse_snapshot_open_mem(map ? map : "", (size_t)st.st_size, opts,
				     out, err);
	if (map)
		munmap(map, (size_t)st.st_size);
	return r;
}

SPULSE_EXPORT void spulse_snapshot_close(struct spulse_snapshot *s)
{
	if (!s)
		return;
	spulse_dec_fini(&s->dec);
	free(s->samples);
	free(s->offcpu);
	free(s->triggers);
	free(s);
}

SPULSE_EXPORT const struct spulse_info *
spulse_snapshot_info(const struct spulse_snapshot *s)
{
	return &s->dec.info;
}

SPULSE_EXPORT const struct spulse_defs *
spulse_snapshot_defs(const struct spulse_snapshot *s)
{
	return &s->dec.defs;
}

SPULSE_EXPORT uint64_t spulse_snapshot_sample_count(const struct spulse_snapshot *s)
{
	return s->nsamples;
}

SPULSE_EXPORT int spulse_snapshot_sample(const struct spulse_snapshot *s,
					 uint64_t index,
					 struct spulse_sample *out)
{
	if (index >= s->nsamples)
		return -ERANGE;
	*out = s->samples[index];
	return 0;
}

SPULSE_EXPORT bool
spulse_snapshot_recovered_from_truncated_tail(const struct spulse_snapshot *s)
{
	return s->dec.info.recovered_from_truncated_tail;
}

SPULSE_EXPORT uint64_t spulse_snapshot_offcpu_count(const struct spulse_snapshot *s)
{
	return s->noffcpu;
}

SPULSE_EXPORT int spulse_snapshot_offcpu(const struct spulse_snapshot *s,
					 uint64_t index,
					 struct spulse_offcpu *out)
{
	if (index >= s->noffcpu)
		return -ERANGE;
	*out = s->offcpu[index];
	return 0;
}

SPULSE_EXPORT uint64_t spulse_snapshot_trigger_count(const struct spulse_snapshot *s)
{
	return s->ntriggers;
}

SPULSE_EXPORT int spulse_snapshot_trigger(const struct spulse_snapshot *s,
					  uint64_t index,
					  struct spulse_trigger *out)
{
	if (index >= s->ntriggers)
		return -ERANGE;
	*out = s->triggers[index];
	return 0;
}
