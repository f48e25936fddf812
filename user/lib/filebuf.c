// SPDX-License-Identifier: MIT
/*
 * Sequential pread(2) buffer used by Replay and Tail: a window of the file
 * that slides forward; bytes before the window are never kept, so memory is
 * bounded by the buffer size whatever the file size.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int spulse_filebuf_init(struct spulse_filebuf *fb, int fd, size_t cap,
			uint64_t offset)
{
	memset(fb, 0, sizeof(*fb));
	fb->buf = malloc(cap);
	if (!fb->buf)
		return -ENOMEM;
	fb->fd = fd;
	fb->cap = cap;
	fb->base = offset;
	return 0;
}

void spulse_filebuf_fini(struct spulse_filebuf *fb)
{
	free(fb->buf);
	fb->buf = NULL;
}

void spulse_filebuf_seek(struct spulse_filebuf *fb, uint64_t offset)
{
	fb->base = offset;
	fb->pos = 0;
	fb->fill = 0;
}

ssize_t spulse_filebuf_refill(struct spulse_filebuf *fb, uint64_t limit)
{
	uint64_t at;
	size_t room;
	ssize_t n;

	if (fb->pos) {
		memmove(fb->buf, fb->buf + fb->pos, fb->fill - fb->pos);
		fb->base += fb->pos;
		fb->fill -= fb->pos;
		fb->pos = 0;
	}
	at = fb->base + fb->fill;
	room = fb->cap - fb->fill;
	if (limit != UINT64_MAX) {
		if (at >= limit)
			return 0;
		if (limit - at < room)
			room = (size_t)(limit - at);
	}
	if (!room)
		return 0;
	do
		n = pread(fb->fd, fb->buf + fb->fill, room, (off_t)at);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	fb->fill += (size_t)n;
	return n;
}
