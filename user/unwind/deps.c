// SPDX-License-Identifier: MIT
/*
 * The files a command will map before its first instruction, found the
 * way the dynamic loader finds them (docs/UNWIND.md "Load timing"): the
 * executable, its PT_INTERP, and the DT_NEEDED closure. Search order per
 * needed name (glibc's ld.so): a name with a slash is a path; else
 * DT_RPATH of the object that needs it (only when it has no DT_RUNPATH),
 * LD_LIBRARY_PATH, DT_RUNPATH, the ld.so cache (`ldconfig -p`), then the
 * default directories. $ORIGIN in RPATH/RUNPATH is the needing object's
 * directory. Candidates must be 64-bit x86-64 ELF files.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind_build.h"

#define DEPS_MAX	256

struct deps {
	char **v;
	size_t n, cap;
	char **cache_name, **cache_path;	/* ldconfig -p, x86-64 only */
	size_t ncache;
	bool cache_read;
};

static int push(char ***v, size_t *n, size_t *cap, char *s)
{
	if (!s)
		return -ENOMEM;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv) {
			free(s);
			return -ENOMEM;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = s;
	return 0;
}

static bool have(const struct deps *d, const char *p)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i], p))
			return true;
	return false;
}

/* A readable 64-bit x86-64 ELF file (what ld.so would accept here). */
static bool is_elf64(const char *p)
{
	unsigned char h[20];
	int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	     pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	     !memcmp(h, ELFMAG, SELFMAG) && h[EI_CLASS] == ELFCLASS64 &&
	     h[18] == 62 && h[19] == 0;	/* EM_X86_64, little-endian */
	close(fd);
	return ok;
}

static void read_ld_cache(struct deps *d)
{
	size_t cap = 0, capp = 0, np = 0;
	char line[PATH_MAX + 256];
	FILE *f;

	d->cache_read = true;
	f = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null",
		  "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *name = line + strspn(line, " \t"), *arrow, *e;

		arrow = strstr(name, " => ");
		e = strchr(name, ' ');
		if (!arrow || !e || !strstr(line, "x86-64"))
			continue;
		*e = 0;
		arrow += 4;
		arrow[strcspn(arrow, "\n")] = 0;
		if (push(&d->cache_name, &d->ncache, &cap, strdup(name)))
			break;
		if (push(&d->cache_path, &np, &capp, strdup(arrow))) {
			free(d->cache_name[--d->ncache]);
			break;
		}
	}
	pclose(f);
}

/* Try DIR/NAME for each dir of a colon list ($ORIGIN expanded). */
static char *search_list(const char *list, const char *name,
			 const char *origin)
{
	const char *p = list;

	while (p && *p) {
		size_t len = strcspn(p, ":");
		char dir[PATH_MAX], path[2 * PATH_MAX + 2];

		if (len && len < sizeof(dir)) {
			memcpy(dir, p, len);
			dir[len] = 0;
			if (!strncmp(dir, "$ORIGIN", 7) ||
			    !strncmp(dir, "${ORIGIN}", 9)) {
				const char *rest = dir + (dir[1] == '{' ? 9 : 7);

				snprintf(path, sizeof(path), "%s%s/%s", origin,
					 rest, name);
			} else {
				snprintf(path, sizeof(path), "%s/%s", dir, name);
			}
			if (is_elf64(path))
				return realpath(path, NULL);
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return NULL;
}

static char *resolve(struct deps *d, const char *name, const char *rpath,
		     const char *runpath, const char *origin)
{
	static const char dflt[] = "/lib/x86_64-linux-gnu:"
		"/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";
	char *r = NULL;
	size_t i;

	if (strchr(name, '/'))
		return is_elf64(name) ? realpath(name, NULL) : NULL;
	if (rpath && !runpath)
		r = search_list(rpath, name, origin);
	if (!r && getenv("LD_LIBRARY_PATH"))
		r = search_list(getenv("LD_LIBRARY_PATH"), name, origin);
	if (!r && runpath)
		r = search_list(runpath, name, origin);
	if (!r) {
		if (!d->cache_read)
			read_ld_cache(d);
		for (i = 0; i < d->ncache && !r; i++)
			if (!strcmp(d->cache_name[i], name) &&
			    is_elf64(d->cache_path[i]))
				r = realpath(d->cache_path[i], NULL);
	}
	if (!r)
		r = search_list(dflt, name, origin);
	return r;
}

/* Add @path's interpreter and needed libraries (the path itself is in). */
static int scan(struct deps *d, const char *path)
{
	char *needed[DEPS_MAX], *rpath = NULL, *runpath = NULL, *interp = NULL;
	char origin[PATH_MAX];
	size_t nneeded = 0, i, k;
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;
	size_t nph;
	Elf *e;
	int fd, ret = 0;
	const char *sl;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	sl = strrchr(path, '/');
	snprintf(origin, sizeof(origin), "%.*s", sl ? (int)(sl - path) : 1,
		 sl ? path : ".");
	if (!elf_getphdrnum(e, &nph))
		for (i = 0; i < nph; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP &&
			    ph.p_filesz > 1 && ph.p_filesz < PATH_MAX) {
				interp = calloc(1, ph.p_filesz + 1);
				if (interp && pread(fd, interp, ph.p_filesz,
					(off_t)ph.p_offset) != (ssize_t)ph.p_filesz) {
					free(interp);
					interp = NULL;
				}
			}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Dyn dyn;
		size_t j, cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (j = 0; j < cnt && gelf_getdyn(data, (int)j, &dyn); j++) {
			const char *s = NULL;

			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && nneeded < DEPS_MAX)
				needed[nneeded++] = strdup(s);
			else if (dyn.d_tag == DT_RPATH && !rpath)
				rpath = strdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !runpath)
				runpath = strdup(s);
		}
	}
	elf_end(e);
	close(fd);

	if (interp) {
		char *r = is_elf64(interp) ? realpath(interp, NULL) : NULL;

		if (r && !have(d, r) && d->n < DEPS_MAX)
			ret = push(&d->v, &d->n, &d->cap, r);
		else
			free(r);
	}
	for (k = 0; k < nneeded && !ret; k++) {
		char *r = needed[k] ? resolve(d, needed[k], rpath, runpath,
					      origin) : NULL;

		if (!r)
			continue;	/* ld.so would fail: not ours to say */
		if (have(d, r) || d->n >= DEPS_MAX) {
			free(r);
			continue;
		}
		ret = push(&d->v, &d->n, &d->cap, r);
	}
	for (k = 0; k < nneeded; k++)
		free(needed[k]);
	free(interp);
	free(rpath);
	free(runpath);
	return ret;
}

int sut_deps(const char *exe, char ***out, size_t *n)
{
	struct deps d = { 0 };
	size_t i;
	char *r;
	int ret;

	*out = NULL;
	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	if (!is_elf64(exe))
		return access(exe, R_OK) ? -errno : -ENOEXEC;
	r = realpath(exe, NULL);
	ret = push(&d.v, &d.n, &d.cap, r);
	/* breadth first: each object's own RPATH/RUNPATH for its needs */
	for (i = 0; !ret && i < d.n; i++)
		ret = scan(&d, d.v[i]);
	for (i = 0; i < d.ncache; i++) {
		free(d.cache_name[i]);
		free(d.cache_path[i]);
	}
	free(d.cache_name);
	free(d.cache_path);
	if (ret < 0 && !d.n) {
		free(d.v);
		return ret;
	}
	*out = d.v;
	*n = d.n;
	return 0;
}

void sut_deps_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
