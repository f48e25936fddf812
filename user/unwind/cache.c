/* SPDX-License-Identifier: MIT */
/*
 * libspulse-unwind: the build-id cache. A table is stored at
 * DIR/xx/rest.sut (xx = first build-id byte in hex, rest = the others):
 * a header with a checksum, the load segments, the rows. A cache file is
 * validated whole on read (size, magic, builder version, build-id, rows as
 * the kernel checks them, checksum); anything wrong means it is rebuilt.
 * Writes go to a temporary file in the same directory, renamed into place.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CACHE_MAGIC	0x43545553u	/* "SUTC" */
/* Bump when the builder's output for the same input changes (3: the
 * checksum taken a 64-bit word at a time). */
#define CACHE_VERSION	3

struct cache_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t lo, hi;
	uint32_t n_rows;
	uint32_t n_loads;
	uint8_t build_id[SPULSE_UT_BUILD_ID_MAX];
	uint32_t build_id_len;
	uint64_t checksum;	/* sum64() of the file with this field 0 */
};

/*
 * The file's checksum: FNV-1a's step taken over 64-bit little-endian
 * words (an odd tail byte by byte) with a multiplier that carries every
 * bit up, folded back down. A cache hit checksums the whole table (1.3 MB
 * for python3.11) at every recording's start: a word at a time is about
 * a sixth of the instructions of the byte loop it replaces (version 2).
 */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (; n >= 8; n -= 8, c += 8) {
		uint64_t w;

		memcpy(&w, c, 8);
		h ^= w;
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return h;
}

#define FNV_INIT 0xcbf29ce484222325ull

static uint64_t table_sum(const struct cache_hdr *h, const void *loads,
			  size_t loads_len, const void *rows, size_t rows_len)
{
	struct cache_hdr c = *h;
	uint64_t s;

	c.checksum = 0;
	s = fnv1a(FNV_INIT, &c, sizeof(c));
	s = fnv1a(s, loads, loads_len);
	return fnv1a(s, rows, rows_len);
}

static void cache_path(char *buf, size_t n, const char *dir,
		       const uint8_t *id, size_t len, const char *suffix)
{
	char hex[2 * SPULSE_UT_BUILD_ID_MAX + 1];
	size_t i;

	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(buf, n, "%s/%.2s%s%s", dir, hex, suffix ? "" : "/",
		 suffix ? "" : hex + 2);
	if (!suffix)
		strncat(buf, ".sut", n - strlen(buf) - 1);
}

/* pread() all @n bytes: reads may come back short (9p, FUSE, NFS). */
static bool pread_full(int fd, void *p, size_t n, off_t off)
{
	char *c = p;

	while (n) {
		ssize_t r = pread(fd, c, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
		off += r;
	}
	return true;
}

/* Read and validate one cache file. 0 and *out, or -errno (any). */
static int cache_read(const char *file, const uint8_t *id, size_t id_len,
		      struct sut_table **out)
{
	struct cache_hdr h;
	struct sut_table *t = NULL;
	struct stat st;
	size_t loads_len, rows_len;
	int fd, rc = -EINVAL;

	*out = NULL;
	fd = sut_open_regular(file, NULL, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(h))
		goto out;
	if (!pread_full(fd, &h, sizeof(h), 0) || h.magic != CACHE_MAGIC ||
	    h.version != CACHE_VERSION || h.n_loads > SUT_LOADS_MAX ||
	    h.n_rows == 0 || h.n_rows > SPULSE_UT_ROWS_MAX ||
	    h.build_id_len != id_len || memcmp(h.build_id, id, id_len))
		goto out;
	loads_len = (size_t)h.n_loads * sizeof(struct sut_load);
	rows_len = (size_t)h.n_rows * sizeof(struct spulse_ut_row);
	if ((uint64_t)st.st_size != sizeof(h) + loads_len + rows_len)
		goto out;
	rc = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	t->rows = malloc(rows_len);
	if (!t->rows)
		goto out;
	rc = -EINVAL;
	if (!pread_full(fd, t->loads, loads_len, sizeof(h)) ||
	    !pread_full(fd, t->rows, rows_len, (off_t)(sizeof(h) + loads_len)))
		goto out;
	if (table_sum(&h, t->loads, loads_len, t->rows, rows_len) != h.checksum)
		goto out;
	if (sut_rows_invalid(t->rows, h.n_rows, h.lo, h.hi))
		goto out;
	t->lo = h.lo;
	t->hi = h.hi;
	t->n_rows = h.n_rows;
	t->n_loads = h.n_loads;
	memcpy(t->build_id, h.build_id, id_len);
	t->build_id_len = h.build_id_len;
	*out = t;
	t = NULL;
	rc = 0;
out:
	sut_table_free(t);
	close(fd);
	return rc;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Store @t under its build-id; errors are returned, not fatal to callers. */
static int cache_write(const char *dir, const struct sut_table *t)
{
	char sub[4096], file[4096], tmp[4200];
	struct cache_hdr h = { 0 };
	size_t loads_len = (size_t)t->n_loads * sizeof(struct sut_load);
	size_t rows_len = (size_t)t->n_rows * sizeof(struct spulse_ut_row);
	int fd, rc;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	cache_path(sub, sizeof(sub), dir, t->build_id, t->build_id_len, "");
	if (mkdir(sub, 0755) < 0 && errno != EEXIST)
		return -errno;
	cache_path(file, sizeof(file), dir, t->build_id, t->build_id_len, NULL);
	snprintf(tmp, sizeof(tmp), "%s/.tmp.XXXXXX", sub);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	h.magic = CACHE_MAGIC;
	h.version = CACHE_VERSION;
	h.lo = t->lo;
	h.hi = t->hi;
	h.n_rows = t->n_rows;
	h.n_loads = t->n_loads;
	memcpy(h.build_id, t->build_id, t->build_id_len);
	h.build_id_len = t->build_id_len;
	h.checksum = table_sum(&h, t->loads, loads_len, t->rows, rows_len);
	rc = write_all(fd, &h, sizeof(h));
	if (!rc)
		rc = write_all(fd, t->loads, loads_len);
	if (!rc)
		rc = write_all(fd, t->rows, rows_len);
	if (!rc && fchmod(fd, 0644) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, file) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int sut_cache_file(const char *dir, const struct sut_table *t, char *buf,
		   size_t n)
{
	if (t->build_id_len < 2)
		return -ENOENT;
	cache_path(buf, n, dir, t->build_id, t->build_id_len, NULL);
	/* Full length: dir + '/' + 2 + '/' + rest + ".sut". */
	if (strlen(buf) != strlen(dir) + 2 * t->build_id_len + 6)
		return -ENAMETOOLONG;
	return 0;
}

int sut_cache_load(const char *dir, const char *path,
		   const struct sut_build_opts *o, struct sut_table **out,
		   bool *hit, char *err, size_t errlen)
{
	uint8_t id[SPULSE_UT_BUILD_ID_MAX];
	char file[4096];
	size_t id_len;
	int rc;

	*out = NULL;
	if (hit)
		*hit = false;
	rc = sut_file_build_id(path, id, &id_len, err, errlen);
	if (rc)
		return rc;
	if (id_len < 2 || !dir)
		return sut_build_file(path, o, out, err, errlen);
	cache_path(file, sizeof(file), dir, id, id_len, NULL);
	if (cache_read(file, id, id_len, out) == 0) {
		if (hit)
			*hit = true;
		return 0;
	}
	rc = sut_build_file(path, o, out, err, errlen);
	if (rc)
		return rc;
	cache_write(dir, *out);
	return 0;
}

/* The GNU build-id note of an ELF image in memory (its PT_NOTEs); 0 when
 * it has none or the headers do not fit in @len. */
static size_t image_build_id(const void *image, size_t len,
			     uint8_t id[SPULSE_UT_BUILD_ID_MAX])
{
	const unsigned char *b = image;
	const Elf64_Ehdr *eh = image;
	unsigned int i;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff)
		return 0;
	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t off, end;

		memcpy(&ph, b + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > len ||
		    ph.p_filesz > len - ph.p_offset)
			continue;
		off = ph.p_offset;
		end = ph.p_offset + ph.p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			uint64_t name, desc, next;

			memcpy(&nh, b + off, sizeof(nh));
			name = off + sizeof(nh);
			desc = name + ((nh.n_namesz + 3ull) & ~3ull);
			next = desc + ((nh.n_descsz + 3ull) & ~3ull);
			if (next > end)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(b + name, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= SPULSE_UT_BUILD_ID_MAX) {
				memcpy(id, b + desc, nh.n_descsz);
				return nh.n_descsz;
			}
			off = next;
		}
	}
	return 0;
}

int sut_cache_load_image(const char *dir, const void *image, size_t len,
			 const char *name, const struct sut_build_opts *o,
			 struct sut_table **out, bool *hit, char *err,
			 size_t errlen)
{
	uint8_t id[SPULSE_UT_BUILD_ID_MAX];
	char file[4096];
	size_t id_len;
	int rc;

	*out = NULL;
	if (hit)
		*hit = false;
	id_len = image_build_id(image, len, id);
	if (id_len < 2 || !dir)
		return sut_build_image(image, len, name, o, out, err, errlen);
	cache_path(file, sizeof(file), dir, id, id_len, NULL);
	if (cache_read(file, id, id_len, out) == 0) {
		if (hit)
			*hit = true;
		return 0;
	}
	rc = sut_build_image(image, len, name, o, out, err, errlen);
	if (rc)
		return rc;
	cache_write(dir, *out);
	return 0;
}
