// SPDX-License-Identifier: MIT
/*
 * Error reporting and the names of record kinds, off-CPU states and
 * trigger reasons.
 */
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int spulse_fail(struct spulse_error *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -EBADMSG;
	err->offset = offset;
	err->code = -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

int spulse_fail_errno(struct spulse_error *err, int code, const char *what)
{
	if (err) {
		err->offset = 0;
		err->code = code;
		snprintf(err->msg, sizeof(err->msg), "%s: %s", what,
			 strerror(-code));
	}
	return code;
}

int spulse_open_spool(const char *path, struct spulse_error *err)
{
	struct stat st;
	int fd, r;

	/* O_NONBLOCK: opening a FIFO with no writer must not block */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return spulse_fail_errno(err, -errno, path);
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return spulse_fail_errno(err, r, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (err) {
			err->offset = 0;
			err->code = -EINVAL;
			snprintf(err->msg, sizeof(err->msg),
				 "%s: not a regular file", path);
		}
		return -EINVAL;
	}
	r = fcntl(fd, F_GETFL);
	if (r >= 0)
		fcntl(fd, F_SETFL, r & ~O_NONBLOCK);
	return fd;
}

SPULSE_EXPORT const char *spulse_tag_name(uint8_t tag)
{
	static const char *const names[] = {
		[SPULSE_TAG_MODULE] = "module",
		[SPULSE_TAG_FRAME] = "frame",
		[SPULSE_TAG_STACK] = "stack",
		[SPULSE_TAG_THREAD] = "thread",
		[SPULSE_TAG_SAMPLE] = "sample",
		[SPULSE_TAG_PYTHON] = "python",
		[SPULSE_TAG_PROCESS_DEACTIVATE] = "process-deactivate",
		[SPULSE_TAG_MODULE_DEACTIVATE] = "module-deactivate",
		[SPULSE_TAG_EXT] = "ext",
	};

	if (tag < SPULSE_TAG_MIN || tag > SPULSE_TAG_MAX)
		return "unknown";
	return names[tag];
}

SPULSE_EXPORT const char *spulse_state_name(uint8_t state)
{
	static const char *const strs[] = { "R", "S", "D", "T", "t", "X", "Z",
					    "P", "I" };

	if (state > SPULSE_STATE_MAX)
		return NULL;
	return strs[state];
}

SPULSE_EXPORT const char *spulse_state_long_name(uint8_t state)
{
	static const char *const names[] = {
		[SPULSE_STATE_RUNNABLE] = "runnable",
		[SPULSE_STATE_SLEEPING] = "sleeping",
		[SPULSE_STATE_DISK] = "disk-sleep",
		[SPULSE_STATE_STOPPED] = "stopped",
		[SPULSE_STATE_TRACED] = "tracing-stop",
		[SPULSE_STATE_DEAD] = "dead",
		[SPULSE_STATE_ZOMBIE] = "zombie",
		[SPULSE_STATE_PARKED] = "parked",
		[SPULSE_STATE_IDLE] = "idle",
	};

	if (state > SPULSE_STATE_MAX)
		return NULL;
	return names[state];
}

SPULSE_EXPORT const char *spulse_trigger_reason_name(uint8_t reason)
{
	static const char *const names[] = {
		[SPULSE_TRIGGER_MANUAL] = "manual",
		[SPULSE_TRIGGER_SIGNAL] = "signal",
		[SPULSE_TRIGGER_OFFCPU] = "offcpu",
		[SPULSE_TRIGGER_RUNQ] = "runq",
	};

	if (reason < SPULSE_TRIGGER_MANUAL || reason > SPULSE_TRIGGER_REASON_MAX)
		return NULL;
	return names[reason];
}

int spulse_fail_short_header(struct spulse_error *err, uint64_t len)
{
	return spulse_fail(err, len, "file ends inside the stream header "
			   "(%" PRIu64 " bytes; a spool starts with the "
			   "8-byte magic SPULSE3, start_us and interval_us)",
			   len);
}
