/* SPDX-License-Identifier: MIT */
/* perf map files for JIT code (sym_jit.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym_jit.h"

static int parse(char *line, struct jit_sym *out)
{
	unsigned long long start, size;
	char *end, *name;
	size_t len;

	start = strtoull(line, &end, 16);
	if (end == line || (*end != ' ' && *end != '\t'))
		return 0;
	line = end;
	size = strtoull(line, &end, 16);
	if (end == line || (*end != ' ' && *end != '\t') || !size)
		return 0;
	name = end + 1;
	len = strlen(name);
	while (len && (name[len - 1] == '\n' || name[len - 1] == '\r'))
		name[--len] = 0;
	if (!len)
		return 0;
	out->start = start;
	out->size = size;
	out->name = strdup(name);
	return out->name ? 1 : -ENOMEM;
}

/* Sort by start; among equal starts keep file order (the later wins). */
struct order {
	struct jit_sym s;
	size_t line;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->s.start != y->s.start)
		return x->s.start < y->s.start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

long jit_map_load(const char *path, uint32_t pid, struct jit_map *out)
{
	struct order *v = NULL;
	size_t n = 0, cap = 0, linecap = 0, i, k;
	char *line = NULL;
	struct stat st;
	long rc = 0;
	FILE *f;
	int fd;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->path = strdup(path);
	if (!out->path)
		return -ENOMEM;
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
		struct jit_sym s;
		int r = parse(line, &s);

		if (r < 0) {
			rc = r;
			break;
		}
		if (!r)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct order *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				free(s.name);
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[n].s = s;
		v[n].line = n;
		n++;
	}
	free(line);
	fclose(f);
	if (!rc && n) {
		qsort(v, n, sizeof(*v), cmp_order);
		out->syms = malloc(n * sizeof(*out->syms));
		if (!out->syms)
			rc = -ENOMEM;
	}
	/* keep the last definition of each start */
	for (i = 0, k = 0; i < n; i++) {
		if (rc || (i + 1 < n && v[i + 1].s.start == v[i].s.start)) {
			free(v[i].s.name);
			continue;
		}
		out->syms[k++] = v[i].s;
	}
	out->n = k;
	free(v);
	return rc ? rc : (long)k;
}

const struct jit_sym *jit_map_lookup(const struct jit_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* an earlier, longer range may still hold it (overlaps are rare):
	 * look back a few entries */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++)
		if (addr - m->syms[i].start < m->syms[i].size)
			return &m->syms[i];
	return NULL;
}

void jit_map_free(struct jit_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->syms[i].name);
	free(m->syms);
	free(m->path);
	memset(m, 0, sizeof(*m));
}
