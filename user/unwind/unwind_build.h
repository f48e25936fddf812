/* SPDX-License-Identifier: MIT */
/*
 * libspulse-unwind: compile an ELF file's call-frame information (.eh_frame,
 * .debug_frame) into the compact unwind table of include/spulse/unwind.h,
 * cache tables by build-id and build the ADD message for debugfs
 * spulse/unwind. docs/UNWIND.md describes the table and how it is built.
 *
 * Every call returns 0 or a negative errno; calls that take @err write one
 * line (no newline) describing a failure into it.
 */
#ifndef SPULSE_UNWIND_BUILD_H
#define SPULSE_UNWIND_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <spulse/unwind.h>

/* An opaque built table. */
struct sut_table;

/**
 * struct sut_build_opts - how to build a table
 * @sz: sizeof(struct sut_build_opts) as the caller knows it (0 = defaults
 *	for every field; fields past @sz take their defaults)
 * @debug_dir: where separate debug files live (default /usr/lib/debug):
 *	DIR/.build-id/xx/rest.debug is read for .debug_frame
 * @use_debuginfod: ask libdebuginfod (DEBUGINFOD_URLS) for a debug file
 *	when none is found locally
 *
 * A NULL opts pointer means all defaults.
 */
struct sut_build_opts {
	size_t sz;
	const char *debug_dir;
	bool use_debuginfod;
};

/**
 * sut_build_file() - build the unwind table of one ELF file
 * @path: an ELF file (opened O_NONBLOCK; only regular files are read)
 * @o: options, or NULL for the defaults
 * @out: the built table, freed with sut_table_free()
 * @err: receives one line on failure (may be NULL)
 * @errlen: size of @err
 *
 * Return: 0, or -errno (-EINVAL not a regular file, -ENOEXEC not an x86-64
 * ELF file or no usable CFI, -ENOMEM, -E2BIG more than SPULSE_UT_ROWS_MAX
 * rows or a range of 4 GiB or more, I/O errors).
 */
int sut_build_file(const char *path, const struct sut_build_opts *o,
		   struct sut_table **out, char *err, size_t errlen);

/**
 * sut_build_image() - build the unwind table of an ELF image in memory
 * @image: the bytes of an ELF file, e.g. the vDSO as mapped (every process
 *	of one kernel maps the same vDSO: getauxval(AT_SYSINFO_EHDR) in the
 *	caller, the [vdso] line of /proc/self/maps for its length)
 * @len: its length
 * @name: a name for error messages (NULL: "(image)")
 * @o: options, or NULL for the defaults
 * @out: the built table, freed with sut_table_free()
 * @err: receives one line on failure (may be NULL)
 * @errlen: size of @err
 *
 * The image is copied; it need only stay valid during the call.
 *
 * Return: 0 or -errno as sut_build_file().
 */
int sut_build_image(const void *image, size_t len, const char *name,
		    const struct sut_build_opts *o, struct sut_table **out,
		    char *err, size_t errlen);

/**
 * sut_table_free() - free a table (NULL is allowed)
 * @t: the table
 */
void sut_table_free(struct sut_table *t);

/**
 * sut_table_build_id() - the ELF's build-id
 * @t: the table
 * @id: set to the build-id bytes (valid while @t lives)
 *
 * Return: its length, 0 when the file has none.
 */
size_t sut_table_build_id(const struct sut_table *t, const uint8_t **id);

/**
 * sut_table_rows() - the rows and the covered range
 * @t: the table
 * @rows: set to the rows (valid while @t lives), or NULL
 * @lo: set to the first covered ELF address, or NULL
 * @hi: set to the end of the covered range (exclusive), or NULL
 *
 * Return: the number of rows.
 */
uint32_t sut_table_rows(const struct sut_table *t,
			const struct spulse_ut_row **rows, uint64_t *lo,
			uint64_t *hi);

/**
 * sut_table_add_msg() - the whole ADD message for debugfs spulse/unwind
 * @t: the table
 * @table_id: the id to load it under (non-zero)
 * @msg: set to a malloc'd message; the caller frees it
 * @len: set to its length in bytes
 *
 * Return: 0, -EINVAL for table id 0, -ENOMEM.
 */
int sut_table_add_msg(const struct sut_table *t, uint32_t table_id,
		      void **msg, size_t *len);

/**
 * sut_table_bias() - bias of one mapping of this file
 * @t: the table
 * @start: user address where the mapping starts
 * @pgoff: file offset of the mapping (as module records carry it)
 * @bias: set so that table_address = pc - bias
 *
 * Return: 0, or -ENOENT when no PT_LOAD segment covers @pgoff.
 */
int sut_table_bias(const struct sut_table *t, uint64_t start,
		   uint64_t pgoff, uint64_t *bias);

/**
 * sut_cache_load() - a file's table from the build-id cache, built (and
 *	stored) when missing
 * @dir: cache directory; tables live at DIR/xx/rest.sut by build-id
 * @path: the ELF file
 * @o: build options, or NULL
 * @out: the table, freed with sut_table_free()
 * @hit: set to true when the table came from the cache
 * @err: receives one line on failure (may be NULL)
 * @errlen: size of @err
 *
 * Cache files are written to a temporary name and renamed into place; a
 * cache file is validated on read and a bad one is rebuilt, never trusted.
 * A file without a build-id is built and not cached. A cache that cannot
 * be written is not an error (the built table is returned).
 *
 * Return: 0 or -errno as sut_build_file().
 */
int sut_cache_load(const char *dir, const char *path,
		   const struct sut_build_opts *o, struct sut_table **out,
		   bool *hit, char *err, size_t errlen);

/**
 * sut_cache_load_image() - sut_cache_load() for an ELF image in memory
 *	(the vDSO): keyed by the build-id note in its program headers, else
 *	built by sut_build_image() and stored; without a build-id, built
 *	and not cached
 *
 * Return: 0 or -errno as sut_build_image().
 */
int sut_cache_load_image(const char *dir, const void *image, size_t len,
			 const char *name, const struct sut_build_opts *o,
			 struct sut_table **out, bool *hit, char *err,
			 size_t errlen);

/**
 * sut_cache_file() - where sut_cache_load() keeps a table
 * @dir: cache directory
 * @t: the table
 * @buf: receives DIR/xx/rest.sut
 * @n: size of @buf
 *
 * Return: 0, -ENOENT when the table has no build-id (never cached),
 * -ENAMETOOLONG when @buf is too small.
 */
int sut_cache_file(const char *dir, const struct sut_table *t, char *buf,
		   size_t n);

/**
 * sut_table_lookup() - the row covering an ELF address, as the kernel
 *	looks it up (binary search)
 * @t: the table
 * @addr: an ELF virtual address
 *
 * Return: the row, or NULL when @addr is outside [lo, hi).
 */
const struct spulse_ut_row *sut_table_lookup(const struct sut_table *t,
					     uint64_t addr);

/**
 * sut_deps() - the files a program maps before its first instruction
 * @exe: the executable (a path; resolve a bare command name first)
 * @out: receives a malloc'd array of malloc'd real paths: @exe first, then
 *	its PT_INTERP and the DT_NEEDED closure, breadth first, each once
 * @n: receives the count (at most 256)
 *
 * Libraries are searched as glibc's ld.so does: DT_RPATH (without
 * DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH ($ORIGIN expanded), the ld.so
 * cache (`ldconfig -p`), the default directories. A name that cannot be
 * found is left out (ld.so will say so when the command starts).
 *
 * Return: 0, -ENOEXEC when @exe is not a 64-bit x86-64 ELF file (a
 * script), another -errno. Free with sut_deps_free().
 */
int sut_deps(const char *exe, char ***out, size_t *n);
void sut_deps_free(char **v, size_t n);

#endif /* SPULSE_UNWIND_BUILD_H */
