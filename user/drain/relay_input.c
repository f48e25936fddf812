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
#include <unistd.h>

#include <spulse/varint.h>

#include "relay_input.h"

#define READ_CHUNK 65536

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
	in->state = DRAIN_INPUT_OPEN;
	return 0;
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

	in->dry = false;
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
	}
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
	return (int64_t)(in->bytes_read - kernel_bytes);
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

void drain_input_close(struct drain_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	spulse_stream_free(in->stream);
	in->stream = NULL;
	free(in->path);
	in->path = NULL;
}
