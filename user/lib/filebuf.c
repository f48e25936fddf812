// SPDX-License-Identifier: MIT
/*
 * Sequential pread(2) buffer used by Replay and Tail: a window of the file
 * that slides forward; bytes before the window are never kept, so memory is
 * bounded by the buffer size whatever the file size.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int spulse_filebuf_init_map(struct spulse_filebuf *fb, int fd, size_t window,
			    uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(fb, 0, sizeof(*fb));
	fb->fd = fd;
	fb->cap = window;
	fb->size = size;
	fb->mapped = true;
	fb->buf = (uint8_t *)"";
	if (page <= 0 || window < 2 * (size_t)page)
		return -EINVAL;
	return 0;
}

void spulse_filebuf_fini(struct spulse_filebuf *fb)
{
	if (fb->mapped) {
		if (fb->map)
			munmap(fb->map, fb->map_len);
		fb->map = NULL;
		fb->buf = NULL;
		return;
	}
	free(fb->buf);
	fb->buf = NULL;
}

/* Mapped mode: map the window that starts at the first unconsumed byte. */
static ssize_t refill_map(struct spulse_filebuf *fb, uint64_t limit)
{
	uint64_t start = fb->base + fb->pos, end = fb->size, aoff;
	size_t old = fb->fill - fb->pos, page = (size_t)sysconf(_SC_PAGESIZE);
	struct stat st;
	void *m;

	/* never map past the current end: a shrunk file reads as short */
	if (fstat(fb->fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < end)
		end = (uint64_t)st.st_size;
	if (limit < end)
		end = limit;
	if (start + old >= end)
		return 0;
	aoff = start & ~(uint64_t)(page - 1);
	if (end - aoff > fb->cap)
		end = aoff + fb->cap;
	if (end <= start + old)
		return 0;
	m = mmap(NULL, (size_t)(end - aoff), PROT_READ,
		 MAP_PRIVATE | MAP_POPULATE, fb->fd, (off_t)aoff);
	if (m == MAP_FAILED)
		return -errno;
	if (fb->map)
		munmap(fb->map, fb->map_len);
	fb->map = m;
	fb->map_len = (size_t)(end - aoff);
	fb->buf = fb->map + (start - aoff);
	fb->base = start;
	fb->pos = 0;
	fb->fill = (size_t)(end - start);
	return (ssize_t)(fb->fill - old);
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

	if (fb->mapped)
		return refill_map(fb, limit);
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
