/* SPDX-License-Identifier: MIT */
/* Save the kernel's text symbols beside a spool (docs/FORMAT.md section 5). */
#ifndef SPULSE_DRAIN_KALLSYMS_COPY_H
#define SPULSE_DRAIN_KALLSYMS_COPY_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

/*
 * The text symbols (type t/T) of a kallsyms file, read once and kept, so
 * that several spools (flight dumps) get their copy without the kernel
 * formatting /proc/kallsyms again while nothing changed.
 * @sig: what the change check compares (drain_ksyms_changed()).
 */
struct drain_ksyms {
	char *text;
	size_t len;
	long lines;
	char *sig;
	size_t sig_len;
	bool loaded;
	unsigned int reads;	/* times @src was read (tests, statistics) */
	/*
	 * The kernel-symbol cache (set by the caller before the first load;
	 * docs/DRAIN.md "Kernel symbols"): @cache_dir NULL or "" = none.
	 * Used only when the source is @sysroot/proc/kallsyms (@sysroot NULL
	 * = "", the real one; tests set a fake tree, which also skips the BPF
	 * lookup). A hit leaves @text NULL and @cache_file naming the cached
	 * copy, which is hard-linked (else copied) to each destination.
	 */
	const char *cache_dir;
	const char *sysroot;
	char *cache_file;
	unsigned int cache_hits, cache_stores;
};

/* Read @src (large reads) and keep its text lines, or take them from the
 * cache (k->cache_dir). Lines kept or -errno. */
long drain_ksyms_load(struct drain_ksyms *k, const char *src);
/*
 * Did @src change since it was loaded? For a file under /proc: did
 * /proc/modules change (module load/unload is what changes the kernel's
 * text symbols; BPF programs and ftrace trampolines that come and go are
 * not looked for); for another file: its device, inode, size or mtime.
 * True when nothing is loaded.
 */
bool drain_ksyms_changed(const struct drain_ksyms *k, const char *src);
/*
 * Write the kept text to @dst (through @dst.tmp and rename), loading or
 * reloading @src first when drain_ksyms_changed(). Lines or -errno.
 */
long drain_ksyms_save(struct drain_ksyms *k, const char *src, const char *dst);
void drain_ksyms_free(struct drain_ksyms *k);

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
