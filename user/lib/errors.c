// SPDX-License-Identifier: MIT
/*
 * Error reporting and record-kind names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
	};

	if (tag < SPULSE_TAG_MIN || tag > SPULSE_TAG_MAX)
		return "unknown";
	return names[tag];
}
