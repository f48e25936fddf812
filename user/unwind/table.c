/* SPDX-License-Identifier: MIT */
/*
 * libspulse-unwind: table accessors, the kernel-style lookup, the ADD
 * message and the per-mapping bias.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int sut_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int sut_open_regular(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return sut_err(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return sut_err(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sut_err(err, errlen, -EINVAL, "%s: not a regular file",
			       path);
	}
	return fd;
}

void sut_table_free(struct sut_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

size_t sut_table_build_id(const struct sut_table *t, const uint8_t **id)
{
	*id = t->build_id;
	return t->build_id_len;
}

uint32_t sut_table_rows(const struct sut_table *t,
			const struct spulse_ut_row **rows, uint64_t *lo,
			uint64_t *hi)
{
	if (rows)
		*rows = t->rows;
	if (lo)
		*lo = t->lo;
	if (hi)
		*hi = t->hi;
	return t->n_rows;
}

const char *sut_rows_invalid(const struct spulse_ut_row *rows, uint32_t n,
			     uint64_t lo, uint64_t hi)
{
	uint32_t i;

	if (lo >= hi || hi - lo >= (1ull << 32))
		return "bad range";
	if (n == 0 || n > SPULSE_UT_ROWS_MAX)
		return "bad row count";
	if (rows[0].start != 0)
		return "first row does not start at lo";
	for (i = 0; i < n; i++) {
		const struct spulse_ut_row *r = &rows[i];

		if (r->start >= hi - lo)
			return "row start beyond hi";
		if (i && r->start <= rows[i - 1].start)
			return "row starts not increasing";
		if (r->kind > SPULSE_UT_KIND_MAX)
			return "bad row kind";
		if (r->flags)
			return "row flags not 0";
		if (r->bp_off > 0 || r->bp_off < -2048 || r->bp_off % 8)
			return "bad bp_off";
	}
	return NULL;
}

const struct spulse_ut_row *sut_table_lookup(const struct sut_table *t,
					     uint64_t addr)
{
	uint32_t lo = 0, hi = t->n_rows, off;

	if (addr < t->lo || addr >= t->hi || !t->n_rows)
		return NULL;
	off = (uint32_t)(addr - t->lo);
	/* The last row whose start <= off (rows[0].start is 0). */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

int sut_table_add_msg(const struct sut_table *t, uint32_t table_id,
		      void **msg, size_t *len)
{
	struct spulse_ut_msg h = { 0 };
	struct spulse_ut_add a = { 0 };
	size_t rows_len = (size_t)t->n_rows * sizeof(*t->rows);
	size_t n = sizeof(h) + sizeof(a) + rows_len;
	unsigned char *p;

	*msg = NULL;
	*len = 0;
	if (!table_id || !t->n_rows || n > UINT32_MAX)
		return -EINVAL;
	p = malloc(n);
	if (!p)
		return -ENOMEM;
	h.magic = SPULSE_UT_MAGIC;
	h.version = SPULSE_UT_VERSION;
	h.op = SPULSE_UT_OP_ADD;
	h.len = (uint32_t)n;
	a.table_id = table_id;
	a.n_rows = t->n_rows;
	a.lo = t->lo;
	a.hi = t->hi;
	memcpy(a.build_id, t->build_id, t->build_id_len);
	a.build_id_len = (uint8_t)t->build_id_len;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), &a, sizeof(a));
	memcpy(p + sizeof(h) + sizeof(a), t->rows, rows_len);
	*msg = p;
	*len = n;
	return 0;
}

#define SUT_PAGE 4096ull

/* Does load segment @l hold file offset @pgoff (page-rounded as mmap)? */
static bool load_covers(const struct sut_load *l, uint64_t pgoff)
{
	uint64_t first = l->offset & ~(SUT_PAGE - 1);

	return l->filesz && pgoff >= first && pgoff < l->offset + l->filesz;
}

int sut_table_bias(const struct sut_table *t, uint64_t start,
		   uint64_t pgoff, uint64_t *bias)
{
	const struct sut_load *best = NULL;
	uint32_t i;

	/* Prefer an executable segment: pages may be shared by two. */
	for (i = 0; i < t->n_loads && !best; i++)
		if ((t->loads[i].flags & 1) && load_covers(&t->loads[i], pgoff))
			best = &t->loads[i];
	for (i = 0; i < t->n_loads && !best; i++)
		if (load_covers(&t->loads[i], pgoff))
			best = &t->loads[i];
	if (!best)
		return -ENOENT;
	/* File offset pgoff sits at vaddr - offset + pgoff in ELF space. */
	*bias = start - (best->vaddr - best->offset + pgoff);
	return 0;
}
