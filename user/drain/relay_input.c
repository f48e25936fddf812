// SPDX-License-Identifier: MIT
/*
 * Per-CPU relay / meta input: sequential non-blocking reads into a stream.
 *
 * Relay files are read-once streams (read consumes); a regular file used as
 * a stand-in in tests behaves the same here because we only ever read()
 * forward and never seek. read() returning 0 means "nothing ready yet", not
 * end of stream: the file may grow later.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <spulse/varint.h>

#include "relay_input.h"

#define READ_CHUNK 65536
#define DEBUGFS_FS_MAGIC 0x64626720	/* linux/magic.h DEBUGFS_MAGIC */

int drain_input_open(struct drain_input *in, const char *path, int cpu)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	int ret;

	memset(in, 0, sizeof(*in));
	in->cpu = cpu;
	in->fd = -1;
	in->path = strdup(path);
	if (!in->path)
		return -ENOMEM;
	in->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in->fd < 0) {
		ret = -errno;
		free(in->path);
		in->path = NULL;
		return ret;
	}
	ret = spulse_stream_new(&ro, &in->stream);
	if (ret < 0) {
		close(in->fd);
		free(in->path);
		in->path = NULL;
		in->fd = -1;
		return ret;
	}
	{
		struct statfs sf;
		struct stat st;

		in->sized = !fstat(in->fd, &st) && S_ISREG(st.st_mode);
		in->relay = !fstatfs(in->fd, &sf) &&
			    (unsigned long)sf.f_type == DEBUGFS_FS_MAGIC;
	}
	in->state = DRAIN_INPUT_OPEN;
	return 0;
}

void drain_input_set_start(struct drain_input *in, uint64_t start)
{
	in->start = start;
}

/*
 * Bytes that may be read now: the file's size (a relay file's counts the
 * published sub-buffers only) less what readers consumed. UINT64_MAX when
 * the file has no size to go by.
 */
static uint64_t readable(const struct drain_input *in)
{
	uint64_t pos = in->start + in->bytes_read;
	struct stat st;

	if (!in->sized || fstat(in->fd, &st) || st.st_size < 0)
		return UINT64_MAX;
	return (uint64_t)st.st_size > pos ? (uint64_t)st.st_size - pos : 0;
}

void drain_input_mark_owed(struct drain_input *in)
{
	uint64_t r = readable(in);

	in->owed = r == UINT64_MAX ? r : in->start + in->bytes_read + r;
}

bool drain_input_owes(const struct drain_input *in)
{
	return in->state == DRAIN_INPUT_OPEN && in->owed != UINT64_MAX &&
	       in->start + in->bytes_read < in->owed;
}

/*
 * Collect the header bytes (magic, start_us, interval_us) as they pass.
 * A header that is not SPULSE is left to the stream to report.
 */
static void parse_header(struct drain_input *in, const uint8_t *p, size_t n)
{
	uint64_t start, interval;
	int a, b;

	while (n && in->hdr_len < sizeof(in->hdr) && !in->have_header) {
		in->hdr[in->hdr_len++] = *p++;
		n--;
		if (in->hdr_len <= SPULSE_MAGIC_LEN)
			continue;
		a = spulse_get_uvar(in->hdr + SPULSE_MAGIC_LEN,
				    in->hdr_len - SPULSE_MAGIC_LEN, &start);
		if (a <= 0)
			continue;
		b = spulse_get_uvar(in->hdr + SPULSE_MAGIC_LEN + a,
				    in->hdr_len - SPULSE_MAGIC_LEN - a,
				    &interval);
		if (b <= 0)
			continue;
		if (memcmp(in->hdr, SPULSE_MAGIC, SPULSE_MAGIC_LEN))
			break;
		in->start_us = start;
		in->interval_us = interval;
		in->have_header = true;
	}
}

long drain_input_read(struct drain_input *in, size_t max)
{
	uint8_t buf[READ_CHUNK];
	long total = 0;
	uint64_t room;
	bool capped = false;

	in->dry = false;
	if (in->state != DRAIN_INPUT_OPEN)
		return 0;
	room = readable(in);
	if (!room) {
		in->dry = true;
		return 0;
	}
	if (room != UINT64_MAX && (!max || room < max)) {
		max = (size_t)room;
		capped = true;
	}
	while (in->state == DRAIN_INPUT_OPEN && (!max || (size_t)total < max)) {
		size_t want = sizeof(buf);
		ssize_t n;
		int ret;

		if (max && max - (size_t)total < want)
			want = max - (size_t)total;
		n = read(in->fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				in->dry = true;
				break;
			}
			ret = -errno;
			close(in->fd);
			in->fd = -1;
			in->state = DRAIN_INPUT_GONE;
			return ret;
		}
		if (n == 0) {
			in->dry = true;
			break;
		}
		in->bytes_read += (uint64_t)n;
		total += n;
		if (!in->have_header)
			parse_header(in, buf, (size_t)n);
		ret = spulse_stream_feed(in->stream, buf, (size_t)n);
		if (ret < 0)
			return ret;
		/*
		 * A short read is a dry read: relay's read copies sub-buffer
		 * after sub-buffer until the count is met or nothing more was
		 * produced (under the inode lock), and a regular file returns
		 * less only at its end. So the read that would return 0 or
		 * EAGAIN is saved.
		 */
		if ((size_t)n < want) {
			in->dry = true;
			break;
		}
	}
	/* all that was published is read: the rest waits for a switch */
	if (capped && (size_t)total == max)
		in->dry = true;
	return total;
}

int64_t drain_input_relay_gap(const struct drain_input *in,
			      uint64_t kernel_bytes, bool *comparable)
{
	/*
	 * An abandoned input was not read to the end; an input without the
	 * header at its start (it began mid-stream) cannot be matched either.
	 */
	*comparable = in->cpu >= 0 && in->state != DRAIN_INPUT_ABANDONED &&
		      (in->bytes_read == 0 || in->have_header);
	if (!*comparable)
		return 0;
	return (int64_t)(in->start + in->bytes_read - kernel_bytes);
}

void drain_input_abandon(struct drain_input *in, const struct spulse_error *err)
{
	if (err)
		in->err = *err;
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->state = DRAIN_INPUT_ABANDONED;
}

/* Free the retired epochs older than @seq (all with UINT32_MAX). */
static void drop_old(struct drain_input *in, uint32_t seq)
{
	unsigned int i, k = 0;

	for (i = 0; i < in->nold; i++) {
		if (in->old[i].seq < seq) {
			spulse_stream_free(in->old[i].stream);
			drain_idmap_free(&in->old[i].map);
		} else {
			in->old[k++] = in->old[i];
		}
	}
	in->nold = k;
}

void drain_input_close(struct drain_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	spulse_stream_free(in->stream);
	in->stream = NULL;
	drain_idmap_free(&in->map);
	drop_old(in, UINT32_MAX);
	free(in->old);
	in->old = NULL;
	in->capold = 0;
	free(in->path);
	in->path = NULL;
}

int drain_input_next_epoch(struct drain_input *in, const struct spulse_error *err)
{
	const struct spulse_info *info;
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_stream *ns;
	const uint8_t *p;
	uint64_t done;
	size_t len;
	int ret;

	if (in->cpu < 0 || !in->stream || err->code != -EBADMSG)
		return 0;
	info = spulse_stream_info(in->stream);
	done = info->complete_bytes;
	/* a record boundary after a complete header, where a magic begins */
	if (!done || err->offset != done)
		return 0;
	p = spulse_stream_pending_bytes(in->stream, &len);
	if (!len || p[0] != (uint8_t)SPULSE_MAGIC[0])
		return 0;
	if (in->nold == in->capold) {
		unsigned int cap = in->capold ? 2 * in->capold : 4;
		struct drain_epoch *v = realloc(in->old, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		in->old = v;
		in->capold = cap;
	}
	ret = spulse_stream_new(&ro, &ns);
	if (ret < 0)
		return ret;
	ret = spulse_stream_feed(ns, p, len);
	if (ret < 0) {
		spulse_stream_free(ns);
		return ret;
	}
	in->old[in->nold++] = (struct drain_epoch){ in->stream, in->map,
						    in->epoch };
	memset(&in->map, 0, sizeof(in->map));
	in->stream = ns;
	in->epoch_base += done;
	in->epoch++;
	return 1;
}

/* drain_input_epoch() where older epochs are held or @epoch is not current */
int drain_input_epoch_held(struct drain_input *in, uint32_t epoch,
			   const struct spulse_defs **defs,
			   struct drain_idmap **map)
{
	unsigned int i;

	drop_old(in, epoch);
	if (epoch == in->epoch) {
		*defs = spulse_stream_defs(in->stream);
		*map = &in->map;
		return 0;
	}
	for (i = 0; i < in->nold; i++)
		if (in->old[i].seq == epoch) {
			*defs = spulse_stream_defs(in->old[i].stream);
			*map = &in->old[i].map;
			return 0;
		}
	return -ENOENT;
}

void drain_input_forget_maps(struct drain_input *in)
{
	unsigned int i;

	drain_idmap_free(&in->map);
	for (i = 0; i < in->nold; i++)
		drain_idmap_free(&in->old[i].map);
}
