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

/* Keep the text lines (type t or T) of @p..@end, appending to @out. */
static size_t keep_text(const char *p, const char *end, char *out)
{
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl + 1 : end;
		const char *sp = memchr(p, ' ', (size_t)(eol - p));

		if (sp && eol - sp >= 3 && (sp[1] == 't' || sp[1] == 'T') &&
		    sp[2] == ' ') {
			memmove(out + n, p, (size_t)(eol - p));
			n += (size_t)(eol - p);
		}
		p = eol;
	}
	return n;
}

/*
 * What says whether @src changed since it was read: for a file under
 * /proc (the kernel's symbols change when modules load or unload) the
 * text of /proc/modules, for another file its identity, size and mtime.
 */
static char *signature(const char *src, size_t *len)
{
	struct stat st;
	char *sig;
	int n;

	if (!strncmp(src, "/proc/", 6)) {
		char buf[65536];
		size_t cap = 0, got = 0;
		int fd = open("/proc/modules", O_RDONLY | O_CLOEXEC);

		sig = NULL;
		if (fd < 0)
			return NULL;
		for (;;) {
			ssize_t r = read(fd, buf, sizeof(buf));
			char *v;

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (r < 0) {
					free(sig);
					sig = NULL;
				}
				break;
			}
			if (got + (size_t)r > cap) {
				cap = (got + (size_t)r) * 2;
				v = realloc(sig, cap);
				if (!v) {
					free(sig);
					sig = NULL;
					break;
				}
				sig = v;
			}
			memcpy(sig + got, buf, (size_t)r);
			got += (size_t)r;
		}
		close(fd);
		if (sig && !got) {
			free(sig);
			sig = strdup("");
		}
		*len = got;
		return sig;
	}
	if (stat(src, &st))
		return NULL;
	n = asprintf(&sig, "%llu %llu %lld %lld.%09ld",
		     (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return sig;
}

void drain_ksyms_free(struct drain_ksyms *k)
{
	free(k->text);
	free(k->sig);
	memset(k, 0, sizeof(*k));
}

long drain_ksyms_load(struct drain_ksyms *k, const char *src)
{
	size_t cap = 1u << 20, len = 0, sig_len = 0;
	char *buf, *sig;
	long lines = 0;
	int fd, ret = 0;

	/* the signature first: a change during the read is seen next time */
	sig = signature(src, &sig_len);
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(sig);
		return ret;
	}
	buf = malloc(cap);
	/* large reads: the kernel formats /proc/kallsyms per read call */
	while (buf) {
		ssize_t r;

		if (cap - len < (1u << 16)) {
			char *v = realloc(buf, cap * 2);

			if (!v) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = v;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf || ret) {
		free(buf);
		free(sig);
		return ret ? ret : -ENOMEM;
	}
	len = keep_text(buf, buf + len, buf);
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	if (len && buf[len - 1] != '\n')
		lines++;
	free(k->text);
	free(k->sig);
	k->text = buf;
	k->len = len;
	k->lines = lines;
	k->sig = sig;
	k->sig_len = sig_len;
	k->loaded = true;
	k->reads++;
	return lines;
}

bool drain_ksyms_changed(const struct drain_ksyms *k, const char *src)
{
	size_t len = 0;
	char *sig;
	bool changed;

	if (!k->loaded || !k->sig)
		return true;
	sig = signature(src, &len);
	changed = !sig || len != k->sig_len || memcmp(sig, k->sig, len);
	free(sig);
	return changed;
}

static long write_atomic(const char *dst, const void *buf, size_t len);

long drain_ksyms_save(struct drain_ksyms *k, const char *src, const char *dst)
{
	long r;

	if (drain_ksyms_changed(k, src)) {
		r = drain_ksyms_load(k, src);
		if (r < 0)
			return r;
	}
	r = write_atomic(dst, k->text, k->len);
	return r < 0 ? r : k->lines;
}

long drain_copy_kallsyms(const char *src, const char *dst)
{
	struct drain_ksyms k = { 0 };
	long r = drain_ksyms_save(&k, src, dst);

	drain_ksyms_free(&k);
	return r;
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
