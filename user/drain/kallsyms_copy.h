/* SPDX-License-Identifier: MIT */
/* Save the kernel's text symbols beside a spool (docs/FORMAT.md section 5). */
#ifndef SPULSE_DRAIN_KALLSYMS_COPY_H
#define SPULSE_DRAIN_KALLSYMS_COPY_H

/*
 * Copy the text symbols (type t/T) of @src, in /proc/kallsyms format, to
 * @dst through a temporary file and rename. Returns lines kept or -errno.
 */
long drain_copy_kallsyms(const char *src, const char *dst);

#endif
