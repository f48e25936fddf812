/* SPDX-License-Identifier: MIT */
/*
 * libspulse-unwind internals: the table object shared by the builder
 * (build.c), the accessors (table.c) and the cache (cache.c).
 */
#ifndef SPULSE_UNWIND_INTERNAL_H
#define SPULSE_UNWIND_INTERNAL_H

#include "unwind_build.h"

/* Load segments kept for sut_table_bias(). At most this many. */
#define SUT_LOADS_MAX	16

struct sut_load {
	uint64_t offset;	/* p_offset */
	uint64_t vaddr;		/* p_vaddr */
	uint64_t filesz;	/* p_filesz */
	uint32_t flags;		/* p_flags (PF_X ...) */
	uint32_t rsvd;
};

struct sut_table {
	uint64_t lo, hi;
	uint32_t n_rows;
	uint32_t n_loads;
	uint8_t build_id[SPULSE_UT_BUILD_ID_MAX];
	uint32_t build_id_len;
	struct sut_load loads[SUT_LOADS_MAX];
	struct spulse_ut_row *rows;
};

/* Write one line into @err (if any). Returns @rc. */
int sut_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Check rows the way the kernel validates an ADD message: 1..ROWS_MAX
 * rows, first start 0, starts strictly increasing and below @hi - @lo,
 * known kinds, flags 0, bp_off 0 or a negative multiple of 8 >= -2048.
 * Returns NULL or a static reason.
 */
const char *sut_rows_invalid(const struct spulse_ut_row *rows, uint32_t n,
			     uint64_t lo, uint64_t hi);

/* Read the GNU build-id of the ELF file at @path (0 if none) into @id. */
int sut_file_build_id(const char *path, uint8_t id[SPULSE_UT_BUILD_ID_MAX],
		      size_t *len, char *err, size_t errlen);

/* Open @path O_RDONLY|O_NONBLOCK|O_CLOEXEC, refusing non-regular files. */
int sut_open_regular(const char *path, char *err, size_t errlen);

#endif /* SPULSE_UNWIND_INTERNAL_H */
