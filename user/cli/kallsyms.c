/* SPDX-License-Identifier: MIT */
/*
 * /proc/kallsyms parser: "ADDR TYPE NAME[\t[MODULE]]" lines. Only text
 * symbols (t, T, w, W) with a non-zero address are kept (an all-zero file
 * comes from kptr_restrict and resolves nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int parse_line(char *line, struct ksym *out)
{
	char *end, *type, *name, *mod;
	unsigned long long addr;

	addr = strtoull(line, &end, 16);
	if (end == line || (*end != ' ' && *end != '\t'))
		return 0;
	type = strtok(end, " \t\n");
	name = strtok(NULL, " \t\n");
	mod = strtok(NULL, " \t\n");
	if (!type || !name || !addr || strlen(type) != 1 ||
	    !strchr("tTwW", type[0]))
		return 0;
	out->addr = addr;
	out->name = strdup(name);
	out->module = NULL;
	if (mod && mod[0] == '[') {
		size_t len = strlen(mod);

		if (len > 2 && mod[len - 1] == ']') {
			mod[len - 1] = 0;
			out->module = strdup(mod + 1);
		}
	}
	if (!out->name)
		return -ENOMEM;
	return 1;
}

int kallsyms_load(const char *path, struct kallsyms *k)
{
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	struct stat st;
	FILE *f;
	int rc = 0, fd;

	memset(k, 0, sizeof(*k));
	/* never block (a FIFO), regular files only */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (getline(&line, &linecap, f) > 0) {
		struct ksym s;
		int r = parse_line(line, &s);

		if (r < 0) {
			rc = r;
			break;
		}
		if (!r)
			continue;
		if (k->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));

			if (!ns) {
				free(s.name);
				free(s.module);
				rc = -ENOMEM;
				break;
			}
			k->syms = ns;
			cap = ncap;
		}
		k->syms[k->n++] = s;
	}
	free(line);
	fclose(f);
	if (!rc && k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	for (size_t i = 0; !rc && i < k->n; i++) {
		if (k->syms[i].module)
			continue;
		if (!strcmp(k->syms[i].name, "_stext"))
			k->stext = k->syms[i].addr;
		else if (!strcmp(k->syms[i].name, "_etext"))
			k->etext = k->syms[i].addr;
	}
	return rc;
}

static bool same_owner(const struct ksym *a, const struct ksym *b)
{
	if (!a->module || !b->module)
		return !a->module && !b->module;
	return !strcmp(a->module, b->module);
}

/* @i: the symbol with the greatest address <= @addr; is @addr inside? */
static const struct ksym *kallsyms_bounded(const struct kallsyms *k,
					   size_t i, uint64_t addr)
{
	const struct ksym *s = &k->syms[i];

	if (!s->module && k->etext && s->addr <= k->etext && addr >= k->etext)
		return NULL;
	/* the next symbol of the same owner bounds it; the last one of a
	 * module (or of an image without _etext) gets KSYM_TAIL_MAX */
	if (i + 1 < k->n && same_owner(s, &k->syms[i + 1]))
		return s;
	if (!s->module && k->etext && s->addr < k->etext)
		return s;
	return addr - s->addr <= KSYM_TAIL_MAX ? s : NULL;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return kallsyms_bounded(k, lo - 1, addr);
}

void kallsyms_free(struct kallsyms *k)
{
	size_t i;

	for (i = 0; i < k->n; i++) {
		free(k->syms[i].name);
		free(k->syms[i].module);
	}
	free(k->syms);
	memset(k, 0, sizeof(*k));
}
