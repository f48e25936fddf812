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
#include <limits.h>
#include <linux/bpf.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms_copy.h"

/* Keep the text lines (type t or T) of @p..@end, appending to @out;
 * *lines gets how many (a last line without a newline included). */
static size_t keep_text(const char *p, const char *end, char *out,
			long *lines)
{
	size_t n = 0;
	long l = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl + 1 : end;
		const char *sp = memchr(p, ' ', (size_t)(eol - p));

		if (sp && eol - sp >= 3 && (sp[1] == 't' || sp[1] == 'T') &&
		    sp[2] == ' ') {
			memmove(out + n, p, (size_t)(eol - p));
			n += (size_t)(eol - p);
			l++;
		}
		p = eol;
	}
	*lines = l;
	return n;
}

/* Read a whole small file (/proc/modules, sysfs notes) into a malloc()ed
 * buffer, NUL-terminated; NULL on any error. */
static char *read_all(const char *path, size_t *len)
{
	char buf[65536], *all = NULL;
	size_t cap = 0, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		char *v;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(all);
			all = NULL;
			break;
		}
		if (got + (size_t)r + 1 > cap) {
			cap = (got + (size_t)r + 1) * 2;
			v = realloc(all, cap);
			if (!v) {
				free(all);
				all = NULL;
				break;
			}
			all = v;
		}
		if (!r)
			break;
		memcpy(all + got, buf, (size_t)r);
		got += (size_t)r;
	}
	close(fd);
	if (all) {
		all[got] = 0;
		*len = got;
	}
	return all;
}

/* @src under @k->sysroot's /proc (@sub NULL) or is @sysroot/proc/@sub. */
static bool under_proc(const struct drain_ksyms *k, const char *src,
		       const char *sub)
{
	const char *root = k->sysroot ? k->sysroot : "";
	size_t n = strlen(root);

	if (strncmp(src, root, n) || strncmp(src + n, "/proc/", 6))
		return false;
	return !sub || !strcmp(src + n + 6, sub);
}

/*
 * What says whether @src changed since it was read: for a file under
 * /proc (the kernel's symbols change when modules load or unload) the
 * text of /proc/modules, for another file its identity, size and mtime.
 */
static char *signature(const struct drain_ksyms *k, const char *src,
		       size_t *len)
{
	struct stat st;
	char *sig;
	int n;

	if (under_proc(k, src, NULL)) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/proc/modules",
			 k->sysroot ? k->sysroot : "");
		return read_all(p, len);
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

/* ---- the kernel-symbol cache (docs/DRAIN.md "Kernel symbols") ---- */

struct kbuf {
	char *p;
	size_t len, cap;
	bool bad;
};

static void kb_add(struct kbuf *b, const char *s, size_t n)
{
	if (b->bad)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *v = realloc(b->p, cap);

		if (!v) {
			b->bad = true;
			return;
		}
		b->p = v;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void kb_str(struct kbuf *b, const char *s)
{
	kb_add(b, s, strlen(s));
}

static void kb_hex(struct kbuf *b, const unsigned char *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		char c[2] = { hx[p[i] >> 4], hx[p[i] & 15] };

		kb_add(b, c, 2);
	}
}

/*
 * The JITed BPF programs and links (their ids, never reused until the id
 * space wraps) as a line of the key; false when they cannot be listed
 * (no permission), which makes the symbols uncacheable.
 */
static bool bpf_ids(struct kbuf *b)
{
	static const int cmds[2] = { BPF_PROG_GET_NEXT_ID, BPF_LINK_GET_NEXT_ID };

	for (int c = 0; c < 2; c++) {
		uint32_t id = 0;
		char w[24];

		kb_str(b, c ? "bpf links" : "bpf progs");
		for (;;) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.start_id = id;
			if (syscall(__NR_bpf, cmds[c], &a, sizeof(a))) {
				if (errno == ENOENT)
					break;		/* the last one */
				if (errno == ENOSYS || errno == EINVAL) {
					kb_str(b, " none");	/* no BPF (or too old) */
					break;
				}
				return false;
			}
			id = a.next_id;
			snprintf(w, sizeof(w), " %u", id);
			kb_str(b, w);
		}
		kb_str(b, "\n");
	}
	return true;
}

/*
 * The cache key: what /proc/kallsyms's text symbols depend on. The boot
 * (the kernel image and its KASLR offset: /proc/sys/kernel/random/boot_id),
 * each module's name, size, state, load address and taint from
 * /proc/modules (@mods, not its reference counts) with its build-id
 * (/sys/module/NAME/notes/.note.gnu.build-id: the same build-id at the
 * same address has the same symbols), and the BPF program and link ids.
 * NULL (do not cache) when any of it is unknown: a module without a
 * build-id note, hidden addresses (kptr_restrict), BPF not listable.
 * Not in the key, as in the in-run change check: kprobe instruction
 * pages and ftrace trampolines ([__builtin__kprobes], [__builtin__ftrace]).
 */
static char *cache_key(const struct drain_ksyms *k, const char *mods,
		       size_t *klen)
{
	const char *root = k->sysroot ? k->sysroot : "";
	struct kbuf b = { 0 };
	char p[PATH_MAX], *boot, *copy, *line, *save = NULL;
	size_t n;

	kb_str(&b, "spulse-kallsyms-key 1\n");
	snprintf(p, sizeof(p), "%s/proc/sys/kernel/random/boot_id", root);
	boot = read_all(p, &n);
	if (!boot || n < 8) {
		free(boot);
		free(b.p);
		return NULL;
	}
	kb_str(&b, "boot ");
	kb_str(&b, boot);	/* ends with its newline */
	free(boot);
	copy = strdup(mods);
	if (!copy) {
		free(b.p);
		return NULL;
	}
	for (line = strtok_r(copy, "\n", &save); line && !b.bad;
	     line = strtok_r(NULL, "\n", &save)) {
		/* name size refcnt deps state addr [taint] */
		char *f[7] = { 0 }, *fs = NULL, *t;
		unsigned char *note;
		int nf = 0;

		for (t = strtok_r(line, " ", &fs); t && nf < 7;
		     t = strtok_r(NULL, " ", &fs))
			f[nf++] = t;
		if (nf < 6 || strchr(f[0], '/') || !strcmp(f[0], "..") ||
		    strspn(f[5], "0x") == strlen(f[5]))
			goto uncacheable;	/* hidden address or odd line */
		snprintf(p, sizeof(p), "%s/sys/module/%s/notes/.note.gnu.build-id",
			 root, f[0]);
		note = (unsigned char *)read_all(p, &n);
		if (!note || !n) {
			free(note);
			goto uncacheable;
		}
		kb_str(&b, "mod ");
		for (int i = 0; i < nf; i++)
			if (i != 2 && i != 3) {		/* not refcnt, deps */
				kb_str(&b, f[i]);
				kb_str(&b, " ");
			}
		kb_hex(&b, note, n);
		kb_str(&b, "\n");
		free(note);
	}
	free(copy);
	if (!k->sysroot && !bpf_ids(&b)) {
		free(b.p);
		return NULL;
	}
	if (b.bad) {
		free(b.p);
		return NULL;
	}
	*klen = b.len;
	return b.p;
uncacheable:
	free(copy);
	free(b.p);
	return NULL;
}

static uint64_t fnv1a64(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static void cache_paths(const struct drain_ksyms *k, const char *key,
			size_t klen, char *txt, char *kf)
{
	unsigned long long h = (unsigned long long)fnv1a64(key, klen);

	snprintf(txt, PATH_MAX, "%s/kallsyms-%016llx.txt", k->cache_dir, h);
	snprintf(kf, PATH_MAX, "%s/kallsyms-%016llx.key", k->cache_dir, h);
}

/* A cached copy for @key: 0 with k->cache_file, lines and len set. */
static int cache_lookup(struct drain_ksyms *k, const char *key, size_t klen)
{
	char txt[PATH_MAX], kf[PATH_MAX], *stored, *body;
	unsigned long long lines, bytes;
	struct stat st;
	size_t n;
	int used = 0;

	cache_paths(k, key, klen, txt, kf);
	stored = read_all(kf, &n);
	if (!stored)
		return -ENOENT;
	/* "lines L bytes B\n" then the key, exactly */
	if (sscanf(stored, "lines %llu bytes %llu\n%n", &lines, &bytes,
		   &used) != 2 || !used || (body = stored + used,
		   n - (size_t)used != klen) || memcmp(body, key, klen) ||
	    stat(txt, &st) || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size != bytes) {
		free(stored);
		return -ESTALE;
	}
	free(stored);
	free(k->cache_file);
	k->cache_file = strdup(txt);
	if (!k->cache_file)
		return -ENOMEM;
	k->lines = (long)lines;
	k->len = (size_t)bytes;
	return 0;
}

static long write_unique(const char *dst, const void *buf, size_t len);

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Store k->text under @key (best effort): the text first, then the key
 * file that makes it valid (a reader checks the key and the size). */
static void cache_store(struct drain_ksyms *k, const char *key, size_t klen)
{
	char txt[PATH_MAX], kf[PATH_MAX], *hdr = NULL;
	int n;

	/* addresses hidden (kptr_restrict, lockdown): nothing worth keeping */
	if (k->len >= 16 && !memcmp(k->text, "0000000000000000", 16))
		return;
	if (mkdir_p(k->cache_dir))
		return;
	cache_paths(k, key, klen, txt, kf);
	if (write_unique(txt, k->text, k->len) < 0)
		return;
	n = asprintf(&hdr, "lines %ld bytes %zu\n", k->lines, k->len);
	if (n < 0)
		return;
	{
		char *all = malloc((size_t)n + klen);

		if (all) {
			memcpy(all, hdr, (size_t)n);
			memcpy(all + n, key, klen);
			if (write_unique(kf, all, (size_t)n + klen) >= 0) {
				free(k->cache_file);
				k->cache_file = strdup(txt);
				k->cache_stores++;
			}
			free(all);
		}
	}
	free(hdr);
}

void drain_ksyms_free(struct drain_ksyms *k)
{
	free(k->text);
	free(k->sig);
	free(k->cache_file);
	memset(k, 0, sizeof(*k));
}

long drain_ksyms_load(struct drain_ksyms *k, const char *src)
{
	size_t cap = 1u << 20, len = 0, sig_len = 0, klen = 0;
	char *buf, *sig, *key = NULL;
	long lines = 0;
	int fd, ret = 0;

	/* the signature first: a change during the read is seen next time */
	sig = signature(k, src, &sig_len);
	if (sig && k->cache_dir && k->cache_dir[0] &&
	    under_proc(k, src, "kallsyms"))
		key = cache_key(k, sig, &klen);
	if (key && !cache_lookup(k, key, klen)) {
		free(key);
		free(k->text);
		free(k->sig);
		k->text = NULL;
		k->sig = sig;
		k->sig_len = sig_len;
		k->loaded = true;
		k->cache_hits++;
		return k->lines;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(sig);
		free(key);
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
		free(key);
		return ret ? ret : -ENOMEM;
	}
	len = keep_text(buf, buf + len, buf, &lines);
	free(k->text);
	free(k->sig);
	free(k->cache_file);
	k->cache_file = NULL;
	k->text = buf;
	k->len = len;
	k->lines = lines;
	k->sig = sig;
	k->sig_len = sig_len;
	k->loaded = true;
	k->reads++;
	if (key)
		cache_store(k, key, klen);
	free(key);
	return lines;
}

bool drain_ksyms_changed(const struct drain_ksyms *k, const char *src)
{
	size_t len = 0;
	char *sig;
	bool changed;

	if (!k->loaded || !k->sig)
		return true;
	sig = signature(k, src, &len);
	changed = !sig || len != k->sig_len || memcmp(sig, k->sig, len);
	free(sig);
	return changed;
}

static long write_atomic(const char *dst, const void *buf, size_t len);

/* @dst as a hard link of @from (through @dst.tmp and rename). */
static int link_atomic(const char *from, const char *dst)
{
	char *tmp = NULL;
	int ret = 0;

	if (asprintf(&tmp, "%s.tmp", dst) < 0)
		return -ENOMEM;
	unlink(tmp);
	if (link(from, tmp) || rename(tmp, dst)) {
		ret = -errno;
		unlink(tmp);
	}
	free(tmp);
	return ret;
}

long drain_ksyms_save(struct drain_ksyms *k, const char *src, const char *dst)
{
	long r;

	if (drain_ksyms_changed(k, src)) {
		r = drain_ksyms_load(k, src);
		if (r < 0)
			return r;
	}
	/* a cached copy (unchanged once written: replaced only by rename)
	 * is linked, not copied; across file systems it is copied */
	if (k->cache_file && !link_atomic(k->cache_file, dst))
		return k->lines;
	if (!k->text && k->cache_file) {
		char *t = NULL;
		size_t n = 0;

		t = read_all(k->cache_file, &n);
		if (t && n == k->len) {
			k->text = t;
		} else {
			/* the cache went away meanwhile: read the source */
			const char *cd = k->cache_dir;

			free(t);
			k->cache_dir = NULL;
			r = drain_ksyms_load(k, src);
			k->cache_dir = cd;
			if (r < 0)
				return r;
		}
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

static long write_via(const char *suffix, const char *dst, const void *buf,
		      size_t len);

/* Write @len bytes of @buf to @dst through @dst.tmp and rename. */
static long write_atomic(const char *dst, const void *buf, size_t len)
{
	return write_via(".tmp", dst, buf, len);
}

/* The same through a temporary name of this process's own (the cache is
 * shared by concurrent recorders). */
static long write_unique(const char *dst, const void *buf, size_t len)
{
	char suffix[40];

	snprintf(suffix, sizeof(suffix), ".%ld.tmp", (long)getpid());
	return write_via(suffix, dst, buf, len);
}

static long write_via(const char *suffix, const char *dst, const void *buf,
		      size_t len)
{
	char *tmp = NULL;
	size_t done = 0;
	long ret = 0;
	int fd;

	if (asprintf(&tmp, "%s%s", dst, suffix) < 0)
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
