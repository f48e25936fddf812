/* SPDX-License-Identifier: MIT */
/* Save the kernel's text symbols beside a spool (docs/FORMAT.md section 5). */
#ifndef SPULSE_DRAIN_KALLSYMS_COPY_H
#define SPULSE_DRAIN_KALLSYMS_COPY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy the text symbols (type t/T) of @src, in /proc/kallsyms format, to
 * @dst through a temporary file and rename. Returns lines kept or -errno.
 */
long drain_copy_kallsyms(const char *src, const char *dst);

/*
 * Save this process's [vdso] image (getauxval(AT_SYSINFO_EHDR); its size
 * from the ELF headers) to @spool.vdso, through a temporary file and
 * rename. Every process of one boot maps the same kernel vdso, so the
 * reader names [vdso] frames of the recorded processes from it.
 * Returns the bytes written, -ENOENT without a vdso, or -errno.
 */
long drain_capture_vdso(const char *spool);

/*
 * Copy /tmp/perf-PID.map (a JIT's symbol map, perf's format) of each of
 * the @n processes in @pids to @spool.perf-PID.map while the process may
 * still be running. A process without a map is skipped; the source is
 * opened O_NONBLOCK and must be a regular file.
 * Returns the number of maps copied, or -errno of the first failure.
 */
int drain_capture_jit_maps(const char *spool, const uint32_t *pids, size_t n);

#endif
