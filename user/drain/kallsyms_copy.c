// SPDX-License-Identifier: MIT
/*
 * Copy /proc/kallsyms text symbols to FILE.kallsyms. Lines look like
 * "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo	[mod]"; only
 * types t and T are kept, unchanged.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms_copy.h"

static int is_text(const char *line)
{
	const char *sp = strchr(line, ' ');

	return sp && (sp[1] == 't' || sp[1] == 'T') && sp[2] == ' ';
}

long drain_copy_kallsyms(const char *src, const char *dst)
{
	char *tmp = NULL, *line = NULL;
	size_t cap = 0;
	long kept = 0;
	FILE *in, *out;
	int ret = 0;

	in = fopen(src, "re");
	if (!in)
		return -errno;
	if (asprintf(&tmp, "%s.tmp", dst) < 0) {
		fclose(in);
		return -ENOMEM;
	}
	out = fopen(tmp, "we");
	if (!out) {
		ret = -errno;
		goto done;
	}
	while (getline(&line, &cap, in) > 0) {
		if (!is_text(line))
			continue;
		if (fputs(line, out) == EOF) {
			ret = -errno;
			break;
		}
		kept++;
	}
	if (ferror(in) && !ret)
		ret = -EIO;
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, dst))
		ret = -errno;
	if (ret)
		unlink(tmp);
done:
	fclose(in);
	free(line);
	free(tmp);
	return ret ? ret : kept;
}

/* Write @len bytes of @buf to @dst through @dst.tmp and rename. */
static long write_atomic(const char *dst, const void *buf, size_t len)
{
	char *tmp = NULL;
	size_t done = 0;
	long ret = 0;
	int fd;

	if (asprintf(&tmp, "%s.tmp", dst) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, dst))
		ret = -errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret ? ret : (long)len;
}

long drain_capture_vdso(const char *spool)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	uint64_t size = 0, shend;
	char *dst;
	long ret;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	/* the image is mapped whole: its PT_LOAD spans the file (sections
	 * and their headers included) */
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (unsigned int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD &&
		    ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	shend = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (shend > size && shend - size < 4096)	/* same last page */
		size = shend;
	if (!size || size > (64u << 20))
		return -ENOENT;
	if (asprintf(&dst, "%s.vdso", spool) < 0)
		return -ENOMEM;
	ret = write_atomic(dst, eh, (size_t)size);
	free(dst);
	return ret;
}

/* Read a whole regular file without blocking (*buf malloc()ed). */
static long read_regular(const char *path, char **buf)
{
	size_t cap = 65536, len = 0;
	struct stat st;
	char *b;
	int fd;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	b = malloc(cap);
	while (b) {
		ssize_t r;

		if (len == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(b);
			close(fd);
			return e;
		}
		if (!r) {
			close(fd);
			*buf = b;
			return (long)len;
		}
		len += (size_t)r;
	}
	free(b);
	close(fd);
	return -ENOMEM;
}

int drain_capture_jit_maps(const char *spool, const uint32_t *pids, size_t n)
{
	int copied = 0;

	for (size_t i = 0; i < n; i++) {
		char src[64], *dst, *buf;
		long len, w;

		snprintf(src, sizeof(src), "/tmp/perf-%u.map", pids[i]);
		len = read_regular(src, &buf);
		if (len == -ENOENT)
			continue;
		if (len < 0)
			return (int)len;
		if (asprintf(&dst, "%s.perf-%u.map", spool, pids[i]) < 0) {
			free(buf);
			return -ENOMEM;
		}
		w = write_atomic(dst, buf, (size_t)len);
		free(dst);
		free(buf);
		if (w < 0)
			return (int)w;
		copied++;
	}
	return copied;
}
