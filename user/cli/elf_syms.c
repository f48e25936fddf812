/* SPDX-License-Identifier: MIT */
/* ELF function symbol tables through libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_syms.h"

static int add_sym(struct elf_syms *e, size_t *cap, uint64_t start,
		   uint64_t size, const char *name)
{
	if (e->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct elf_sym *s = realloc(e->syms, ncap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		e->syms = s;
		*cap = ncap;
	}
	e->syms[e->n].name = strdup(name);
	if (!e->syms[e->n].name)
		return -ENOMEM;
	e->syms[e->n].start = start;
	e->syms[e->n].size = size;
	e->n++;
	return 0;
}

static int read_symtabs(Elf *elf, struct elf_syms *e, size_t *cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (add_sym(e, cap, sym.st_value, sym.st_size, name))
				return -ENOMEM;
		}
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* prefer a sized symbol, then the shorter (non-versioned) name */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_unique(struct elf_syms *e)
{
	size_t i, w = 0;

	if (!e->n)
		return;
	qsort(e->syms, e->n, sizeof(*e->syms), cmp_sym);
	for (i = 0; i < e->n; i++) {
		if (w && e->syms[w - 1].start == e->syms[i].start) {
			free(e->syms[i].name);
			continue;
		}
		e->syms[w++] = e->syms[i];
	}
	e->n = w;
}

/* Open @path with libelf; on success *fd and *elf must be released. */
static int open_elf(const char *path, int *fd, Elf **elf)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

static int read_loads(Elf *elf, struct elf_syms *e)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	e->loads = calloc(n ? n : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nloads].offset = ph.p_offset;
		e->loads[e->nloads].filesz = ph.p_filesz;
		e->loads[e->nloads].vaddr = ph.p_vaddr;
		e->nloads++;
	}
	return 0;
}

int elf_syms_load(const char *path, const uint8_t *build_id,
		  size_t build_id_len, struct elf_syms *out)
{
	size_t cap = 0, i;
	Elf *elf;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	rc = open_elf(path, &fd, &elf);
	if (rc)
		return rc;
	rc = read_loads(elf, out);
	if (!rc)
		rc = read_symtabs(elf, out, &cap);
	elf_end(elf);
	close(fd);
	if (!rc && !out->n && build_id_len > 1) {
		char dbg[64 + 2 * 64];
		int n = snprintf(dbg, sizeof(dbg),
				 "/usr/lib/debug/.build-id/%02x/", build_id[0]);

		for (i = 1; i < build_id_len; i++)
			n += snprintf(dbg + n, sizeof(dbg) - (size_t)n, "%02x",
				      build_id[i]);
		snprintf(dbg + n, sizeof(dbg) - (size_t)n, ".debug");
		if (!open_elf(dbg, &fd, &elf)) {
			rc = read_symtabs(elf, out, &cap);
			elf_end(elf);
			close(fd);
		}
	}
	if (!rc)
		sort_unique(out);
	return rc;
}

const struct elf_sym *elf_syms_lookup(const struct elf_syms *e, uint64_t rel,
				      uint64_t *off)
{
	uint64_t vaddr = rel;
	size_t i, lo = 0, hi = e->n;
	const struct elf_sym *s;

	for (i = 0; i < e->nloads; i++) {
		const struct elf_load *l = &e->loads[i];

		if (rel >= l->offset && rel - l->offset < l->filesz) {
			vaddr = rel - l->offset + l->vaddr;
			break;
		}
	}
	/* last symbol with start <= vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &e->syms[lo - 1];
	if (s->size && vaddr - s->start >= s->size)
		return NULL;
	*off = vaddr - s->start;
	return s;
}

void elf_syms_free(struct elf_syms *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->syms[i].name);
	free(e->syms);
	free(e->loads);
	memset(e, 0, sizeof(*e));
}
