/* SPDX-License-Identifier: MIT */
/* libspulse-unwind (stubs until the builder lands). */
#include <errno.h>
#include <stdio.h>

#include "unwind_build.h"

int sut_build_file(const char *path, const struct sut_build_opts *o,
		   struct sut_table **out, char *err, size_t errlen)
{
	(void)o;
	*out = NULL;
	if (err && errlen)
		snprintf(err, errlen, "%s: unwind tables not built yet", path);
	return -ENOSYS;
}

void sut_table_free(struct sut_table *t)
{
	(void)t;
}

size_t sut_table_build_id(const struct sut_table *t, const uint8_t **id)
{
	(void)t;
	*id = NULL;
	return 0;
}

uint32_t sut_table_rows(const struct sut_table *t,
			const struct spulse_ut_row **rows, uint64_t *lo,
			uint64_t *hi)
{
	(void)t;
	if (rows)
		*rows = NULL;
	if (lo)
		*lo = 0;
	if (hi)
		*hi = 0;
	return 0;
}

int sut_table_add_msg(const struct sut_table *t, uint32_t table_id,
		      void **msg, size_t *len)
{
	(void)t;
	(void)table_id;
	*msg = NULL;
	*len = 0;
	return -ENOSYS;
}

int sut_table_bias(const struct sut_table *t, uint64_t start,
		   uint64_t pgoff, uint64_t *bias)
{
	(void)t;
	(void)start;
	(void)pgoff;
	*bias = 0;
	return -ENOSYS;
}

int sut_cache_load(const char *dir, const char *path,
		   const struct sut_build_opts *o, struct sut_table **out,
		   bool *hit, char *err, size_t errlen)
{
	(void)dir;
	if (hit)
		*hit = false;
	return sut_build_file(path, o, out, err, errlen);
}

const struct spulse_ut_row *sut_table_lookup(const struct sut_table *t,
					     uint64_t addr)
{
	(void)t;
	(void)addr;
	return NULL;
}
