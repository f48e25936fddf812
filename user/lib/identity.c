// SPDX-License-Identifier: MIT
/*
 * spulse_identity_local(): who is recording (FORMAT.md 3.10 kind 4).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

/* First line of @path (at most @limit bytes, trailing newline dropped). */
static size_t read_line(const char *path, char *dst, size_t limit)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return 0;
	n = read(fd, dst, limit);
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (dst[i] == '\n' || dst[i] == '\0')
			return (size_t)i;
	return (size_t)n;
}

/* Append @n bytes of @s and a NUL to @buf at *@pos. */
static const char *put(char *buf, size_t *pos, const char *s, size_t n)
{
	char *dst = buf + *pos;

	memmove(dst, s, n);
	dst[n] = '\0';
	*pos += n + 1;
	return dst;
}

#define IDENTITY_BUF_MIN	(SPULSE_MAX_HOST + SPULSE_MAX_MACHINE_ID + \
				 SPULSE_MAX_BOOT_ID + SPULSE_MAX_KERNEL + 4)

SPULSE_EXPORT int spulse_identity_local(struct spulse_identity *id,
					uint64_t start_us, char *buf,
					size_t buflen)
{
	char line[SPULSE_MAX_BOOT_ID + 1];
	struct utsname u;
	size_t pos = 0, n, got = 0;

	if (!id || !buf)
		return -EINVAL;
	if (buflen < IDENTITY_BUF_MIN)
		return -ENOSPC;
	if (start_us > SPULSE_MAX_START_US)
		return -EINVAL;
	if (uname(&u))
		return -errno;
	memset(id, 0, sizeof(*id));
	id->start_us = start_us;
	n = strnlen(u.nodename, sizeof(u.nodename));
	id->host = put(buf, &pos, u.nodename, n);
	n = read_line("/etc/machine-id", line, SPULSE_MAX_MACHINE_ID);
	id->machine_id = put(buf, &pos, line, n);
	n = read_line("/proc/sys/kernel/random/boot_id", line,
		      SPULSE_MAX_BOOT_ID);
	id->boot_id = put(buf, &pos, line, n);
	n = strnlen(u.release, sizeof(u.release));
	id->kernel = put(buf, &pos, u.release, n);
	id->host_len = (uint32_t)strlen(id->host);
	id->machine_id_len = (uint32_t)strlen(id->machine_id);
	id->boot_id_len = (uint32_t)strlen(id->boot_id);
	id->kernel_len = (uint32_t)strlen(id->kernel);
	while (got < sizeof(id->recording_id)) {
		ssize_t r = getrandom(id->recording_id + got,
				      sizeof(id->recording_id) - got, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	/* UUID version 4, variant 1 */
	id->recording_id[6] = (uint8_t)((id->recording_id[6] & 0x0f) | 0x40);
	id->recording_id[8] = (uint8_t)((id->recording_id[8] & 0x3f) | 0x80);
	return 0;
}
