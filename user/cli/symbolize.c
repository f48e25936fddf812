/* SPDX-License-Identifier: MIT */
/* Frame symbolization with per-path and per-frame caches (symbolize.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_syms.h"
#include "kallsyms.h"
#include "strtab.h"
#include "symbolize.h"

struct elf_cache_entry {
	bool tried, ok;
	struct elf_syms syms;
};

struct frame_cache_entry {
	bool done;
	int64_t label_id;
	struct sym_frame sf;
};

struct symbolizer {
	const struct spulse_defs *defs;
	struct kallsyms ksyms;
	bool have_ksyms;
	struct strtab paths;		/* module path -> elf cache index */
	struct elf_cache_entry *elves;
	size_t nelves;
	struct strtab labels;		/* display labels */
	struct strtab dsos;		/* kernel module names "[mod]" */
	struct frame_cache_entry *frames;
	uint32_t nframes;
	const char *symfs;
};

void symbolizer_set_symfs(struct symbolizer *s, const char *dir)
{
	s->symfs = dir && *dir ? dir : NULL;
}

/* Stubs until the libdwfl symbolizer lands (same file, next commits). */
void symbolizer_set_spool(struct symbolizer *s, const char *spool,
			  uint64_t start_us)
{
	(void)s; (void)spool; (void)start_us;
}

void symbolizer_set_demangle(struct symbolizer *s, bool on)
{
	(void)s; (void)on;
}

void symbolizer_set_debuginfod(struct symbolizer *s, bool on)
{
	(void)s; (void)on;
}

void symbolizer_set_inline(struct symbolizer *s, bool on)
{
	(void)s; (void)on;
}

void symbolizer_set_srcline(struct symbolizer *s, bool on)
{
	(void)s; (void)on;
}

void symbolizer_set_debug_dir(struct symbolizer *s, const char *dir)
{
	(void)s; (void)dir;
}

uint32_t symbolizer_inline_chain(struct symbolizer *s, uint32_t frame_id,
				 const struct sym_frame **chain)
{
	*chain = symbolizer_frame(s, frame_id);
	return *chain ? 1 : 0;
}

char *symbolizer_default_kallsyms(const char *spool)
{
	size_t n = strlen(spool) + sizeof(".kallsyms");
	char *p = malloc(n);

	if (!p)
		return NULL;
	snprintf(p, n, "%s.kallsyms", spool);
	if (access(p, R_OK)) {
		free(p);
		return NULL;
	}
	return p;
}

struct symbolizer *symbolizer_new(const struct spulse_defs *defs,
				  const char *kallsyms)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->defs = defs;
	strtab_init(&s->paths);
	strtab_init(&s->labels);
	strtab_init(&s->dsos);
	s->nframes = spulse_defs_count(defs, SPULSE_TAG_FRAME);
	s->frames = calloc(s->nframes ? s->nframes : 1, sizeof(*s->frames));
	if (!s->frames) {
		symbolizer_free(s);
		return NULL;
	}
	if (kallsyms) {
		int rc = kallsyms_load(kallsyms, &s->ksyms);

		if (rc < 0)
			fprintf(stderr, "spulse: %s: %s (kernel frames stay hex)\n",
				kallsyms, strerror(-rc));
		else
			s->have_ksyms = true;
	}
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nelves; i++)
		elf_syms_free(&s->elves[i].syms);
	free(s->elves);
	kallsyms_free(&s->ksyms);
	strtab_free(&s->paths);
	strtab_free(&s->labels);
	strtab_free(&s->dsos);
	free(s->frames);
	free(s);
}

static struct elf_cache_entry *elf_for_module(struct symbolizer *s,
					      const struct spulse_module *m)
{
	int64_t id = strtab_intern(&s->paths, m->path);
	struct elf_cache_entry *e;

	if (id < 0)
		return NULL;
	if ((size_t)id >= s->nelves) {
		size_t n = (size_t)id + 16;
		struct elf_cache_entry *ne = realloc(s->elves, n * sizeof(*ne));

		if (!ne)
			return NULL;
		memset(ne + s->nelves, 0, (n - s->nelves) * sizeof(*ne));
		s->elves = ne;
		s->nelves = n;
	}
	e = &s->elves[id];
	if (!e->tried) {
		int rc = -ENOENT;

		e->tried = true;
		if (m->path[0] != '[' && s->symfs) {
			size_t n = strlen(s->symfs) + strlen(m->path) + 2;
			char *p = malloc(n);

			if (!p)
				return NULL;
			snprintf(p, n, "%s/%s", s->symfs, m->path);
			rc = elf_syms_load(p, m->build_id, m->build_id_len,
					   &e->syms);
			free(p);
			if (rc)
				elf_syms_free(&e->syms);
		}
		if (rc && m->path[0] != '[')	/* [vdso], [anon] are no files */
			rc = elf_syms_load(m->path, m->build_id,
					   m->build_id_len, &e->syms);
		e->ok = rc == 0;
		if (rc && m->path[0] != '[')
			fprintf(stderr, "spulse: %s: no symbols (%s)\n",
				m->path, strerror(-rc));
	}
	return e;
}

static int resolve(struct symbolizer *s, uint32_t id, struct sym_frame *sf)
{
	struct spulse_frame f;
	char buf[512];
	int64_t lid;

	if (spulse_defs_frame(s->defs, id, &f) < 0)
		return -ENOENT;
	memset(sf, 0, sizeof(*sf));
	sf->kind = f.kind;
	sf->addr = f.addr;
	sf->dso = "[unknown]";
	switch (f.kind) {
	case SPULSE_FRAME_MODULE: {
		struct spulse_module m;
		struct elf_cache_entry *e;
		const struct elf_sym *sym = NULL;

		if (spulse_defs_module(s->defs, f.module, &m) < 0)
			return -ENOENT;
		/* interned so the string outlives this call */
		lid = strtab_intern(&s->paths, m.path);
		if (lid < 0)
			return -ENOMEM;
		sf->dso = strtab_str(&s->paths, (uint32_t)lid);
		e = elf_for_module(s, &m);
		if (!e)
			return -ENOMEM;
		if (e->ok)
			sym = elf_syms_lookup(&e->syms, f.addr, &sf->func_off);
		if (sym) {
			sf->func = sym->name;
			snprintf(buf, sizeof(buf), "%s", sym->name);
		} else {
			snprintf(buf, sizeof(buf), "0x%llx [%s]",
				 (unsigned long long)f.addr, sf->dso);
		}
		break;
	}
	case SPULSE_FRAME_KERNEL: {
		const struct ksym *k = NULL;

		sf->dso = "[kernel.kallsyms]";
		if (s->have_ksyms)
			k = kallsyms_lookup(&s->ksyms, f.addr);
		if (k) {
			sf->func = k->name;
			sf->func_off = f.addr - k->addr;
			if (k->module) {
				snprintf(buf, sizeof(buf), "[%s]", k->module);
				lid = strtab_intern(&s->dsos, buf);
				if (lid < 0)
					return -ENOMEM;
				sf->dso = strtab_str(&s->dsos, (uint32_t)lid);
			}
			snprintf(buf, sizeof(buf), "%s", k->name);
		} else {
			snprintf(buf, sizeof(buf), "0x%llx",
				 (unsigned long long)f.addr);
		}
		break;
	}
	case SPULSE_FRAME_TRUNCATED:
		sf->dso = "";
		snprintf(buf, sizeof(buf), "[truncated]");
		break;
	default:
		snprintf(buf, sizeof(buf), "0x%llx",
			 (unsigned long long)f.addr);
		break;
	}
	lid = strtab_intern(&s->labels, buf);
	if (lid < 0)
		return -ENOMEM;
	sf->label = strtab_str(&s->labels, (uint32_t)lid);
	sf->label_id = (uint32_t)lid;
	s->frames[id].label_id = lid;
	return 0;
}

const struct sym_frame *symbolizer_frame(struct symbolizer *s, uint32_t id)
{
	struct frame_cache_entry *c;

	if (id >= s->nframes)
		return NULL;
	c = &s->frames[id];
	if (!c->done) {
		if (resolve(s, id, &c->sf) < 0)
			return NULL;
		c->done = true;
	}
	return &c->sf;
}

int64_t symbolizer_label_id(struct symbolizer *s, uint32_t id)
{
	if (!symbolizer_frame(s, id))
		return -1;
	return s->frames[id].label_id;
}

const char *symbolizer_label(const struct symbolizer *s, uint32_t label_id)
{
	return strtab_str(&s->labels, label_id);
}

uint32_t symbolizer_label_count(const struct symbolizer *s)
{
	return (uint32_t)s->labels.n;
}

int64_t symbolizer_intern_label(struct symbolizer *s, const char *text)
{
	return strtab_intern(&s->labels, text);
}
