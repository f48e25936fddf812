/* SPDX-License-Identifier: MIT */
/*
 * /proc/kallsyms parser: "ADDR TYPE NAME[\t[MODULE]]" lines. Only text
 * symbols (t, T, w, W) with a non-zero address are kept (an all-zero file
 * comes from kptr_restrict and resolves nothing).
 *
 * Cost (a 5 MB, 120k-line host file): the file is read whole into one
 * buffer kept in struct kallsyms and parsed in place: names and module
 * names are NUL-terminated inside it, no allocation per line. The kernel
 * writes the image and each module in address order, so the symbols are
 * sorted by a natural merge of their ascending runs: no work at all when
 * the file is sorted, O(n log runs) otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"

/* Read all of @fd (st_size is 0 for /proc/kallsyms itself); NUL-ended. */
static int read_all(int fd, size_t hint, char **out, size_t *len)
{
	size_t cap = hint + 1 > 65536 ? hint + 1 : 65536, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (cap - n < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line [p, end) (end is its '\n' or the buffer's NUL): 1 and @out
 * filled when it is a text symbol, else 0. Writes NULs into the line. */
static int parse_line(char *p, char *end, struct ksym *out)
{
	uint64_t addr = 0;
	char *name, *mod = NULL;
	char type;
	int digits = 0, h;

	while (p < end && (h = hexval((unsigned char)*p)) >= 0) {
		if (++digits > 16)
			return 0;
		addr = addr << 4 | (uint64_t)h;
		p++;
	}
	if (!digits || p == end || !is_blank(*p) || !addr)
		return 0;
	while (p < end && is_blank(*p))
		p++;
	if (p + 1 >= end || !is_blank(p[1]))
		return 0;
	type = *p;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	p += 2;
	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p == '\r')
		return 0;
	name = p;
	while (p < end && !is_blank(*p) && *p != '\r')
		p++;
	if (p < end) {
		*p++ = 0;
		while (p < end && is_blank(*p))
			p++;
		if (p < end && *p == '[') {
			char *m = ++p;

			while (p < end && !is_blank(*p) && *p != '\r')
				p++;
			if (p - m > 1 && p[-1] == ']') {
				p[-1] = 0;
				mod = m;
			}
		}
	}
	/* the name may run to the line's end: end the line there */
	*end = 0;
	out->addr = addr;
	out->name = name;
	out->module = mod;
	return 1;
}

/* Address order; equal addresses in file order (names point into the
 * buffer, so their pointers are the file order) until tie_names(). */
static bool ksym_before(const struct ksym *x, const struct ksym *y)
{
	if (x->addr != y->addr)
		return x->addr < y->addr;
	return x->name < y->name;
}

static int cmp_name(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Natural merge sort: merge neighbouring ascending runs until one is left. */
static int sort_syms(struct kallsyms *k)
{
	struct ksym *a = k->syms, *b = NULL;
	size_t n = k->n, i;

	for (i = 1; i < n && !ksym_before(&a[i], &a[i - 1]); i++)
		;
	if (i >= n)
		return 0;
	b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (;;) {
		size_t runs = 0, lo = 0;

		while (lo < n) {
			size_t mid = lo + 1, hi, x, y, o = lo;

			while (mid < n && !ksym_before(&a[mid], &a[mid - 1]))
				mid++;
			hi = mid < n ? mid + 1 : n;
			while (hi < n && !ksym_before(&a[hi], &a[hi - 1]))
				hi++;
			for (x = lo, y = mid; x < mid || y < hi;)
				b[o++] = y >= hi || (x < mid &&
					 !ksym_before(&a[y], &a[x])) ? a[x++]
								     : a[y++];
			runs++;
			lo = hi;
		}
		{
			struct ksym *t = a;

			a = b;
			b = t;
		}
		if (runs == 1)
			break;
	}
	if (a != k->syms) {
		memcpy(k->syms, a, n * sizeof(*a));
		b = a;
	}
	free(b);
	return 0;
}

/* Of several symbols at one address, lookups return the last: order each
 * such group by name so that the pick never depends on the file's order. */
static void tie_names(struct kallsyms *k)
{
	size_t i = 0, j;

	while (i < k->n) {
		for (j = i + 1; j < k->n && k->syms[j].addr == k->syms[i].addr;
		     j++)
			;
		if (j - i > 1)
			qsort(&k->syms[i], j - i, sizeof(*k->syms), cmp_name);
		i = j;
	}
}

/* Parse the NUL-ended buffer @buf of @len bytes (owned by @k from now). */
static int parse_buf(char *buf, size_t len, struct kallsyms *k)
{
	size_t cap, lines = 0;
	char *p, *end;
	int rc;

	k->buf = buf;
	for (p = k->buf; (p = memchr(p, '\n', len - (size_t)(p - k->buf)));
	     p++)
		lines++;
	cap = lines + 1;
	k->syms = malloc(cap * sizeof(*k->syms));
	if (!k->syms)
		return -ENOMEM;
	for (p = k->buf; p < k->buf + len; p = end + 1) {
		end = memchr(p, '\n', len - (size_t)(p - k->buf));
		if (!end)
			end = k->buf + len;
		if (parse_line(p, end, &k->syms[k->n]))
			k->n++;
	}
	rc = sort_syms(k);
	if (rc < 0)
		return rc;
	tie_names(k);
	for (size_t i = 0; i < k->n; i++) {
		if (k->syms[i].module || k->syms[i].name[0] != '_')
			continue;
		if (!strcmp(k->syms[i].name, "_stext"))
			k->stext = k->syms[i].addr;
		else if (!strcmp(k->syms[i].name, "_etext"))
			k->etext = k->syms[i].addr;
	}
	return 0;
}

/* Read @path whole (O_NONBLOCK, regular files only: else -EINVAL). */
static int read_path(const char *path, char **buf, size_t *len)
{
	struct stat st;
	int rc, fd;

	/* never block (a FIFO), regular files only */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	rc = read_all(fd, (size_t)st.st_size, buf, len);
	close(fd);
	return rc;
}

int kallsyms_load(const char *path, struct kallsyms *k)
{
	size_t len = 0;
	char *buf;
	int rc;

	memset(k, 0, sizeof(*k));
	rc = read_path(path, &buf, &len);
	if (rc < 0)
		return rc;
	return parse_buf(buf, len, k);
}

int kallsyms_parse(const char *text, size_t len, struct kallsyms *k)
{
	char *buf = malloc(len + 1);

	memset(k, 0, sizeof(*k));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = 0;
	return parse_buf(buf, len, k);
}

/* "LO-HI" ranges of a "#frames" line [p, end): appended to @sec. */
static int parse_ranges(const char *p, const char *end,
			struct kallsyms_section *sec)
{
	while (p < end) {
		unsigned long long lo = 0, hi = 0;
		struct kallsyms_range *v;
		int d = 0;

		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			break;
		for (; p < end && *p >= '0' && *p <= '9'; p++, d++)
			lo = lo * 10 + (unsigned)(*p - '0');
		if (!d || d > 10 || p == end || *p != '-')
			return -EINVAL;
		for (p++, d = 0; p < end && *p >= '0' && *p <= '9'; p++, d++)
			hi = hi * 10 + (unsigned)(*p - '0');
		if (!d || d > 10 || hi < lo || hi > UINT32_MAX)
			return -EINVAL;
		v = realloc(sec->ranges, (sec->nranges + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		sec->ranges = v;
		v[sec->nranges].lo = (uint32_t)lo;
		v[sec->nranges].hi = (uint32_t)hi;
		sec->nranges++;
	}
	return 0;
}

int kallsyms_file_read(const char *path, struct kallsyms_file *f)
{
	static const char fr[] = KALLSYMS_FRAMES_LINE;
	size_t ml = strlen(KALLSYMS_MERGED_MAGIC), fl = sizeof(fr) - 1;
	char *p, *end, *lim;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = read_path(path, &f->buf, &f->len);
	if (rc < 0)
		return rc;
	lim = f->buf + f->len;
	if (f->len < ml || memcmp(f->buf, KALLSYMS_MERGED_MAGIC, ml)) {
		f->secs = calloc(1, sizeof(*f->secs));
		if (!f->secs)
			return -ENOMEM;
		f->nsecs = 1;
		f->secs[0].text = f->buf;
		f->secs[0].len = f->len;
		return 0;
	}
	f->merged = true;
	for (p = f->buf; p < lim; p = end + 1) {
		end = memchr(p, '\n', (size_t)(lim - p));
		if (!end)
			end = lim;
		if ((size_t)(end - p) >= fl && !memcmp(p, fr, fl)) {
			struct kallsyms_section *v;

			v = realloc(f->secs, (f->nsecs + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			f->secs = v;
			memset(&v[f->nsecs], 0, sizeof(*v));
			rc = parse_ranges(p + fl, end, &v[f->nsecs]);
			f->nsecs++;
			if (rc < 0)
				return rc;
			v[f->nsecs - 1].text = end < lim ? end + 1 : end;
		} else if (f->nsecs) {
			struct kallsyms_section *c = &f->secs[f->nsecs - 1];

			c->len = (size_t)((end < lim ? end + 1 : end) - c->text);
		}
	}
	return 0;
}

void kallsyms_file_free(struct kallsyms_file *f)
{
	for (size_t i = 0; i < f->nsecs; i++)
		free(f->secs[i].ranges);
	free(f->secs);
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

static bool same_owner(const struct ksym *a, const struct ksym *b)
{
	if (!a->module || !b->module)
		return !a->module && !b->module;
	return a->module == b->module || !strcmp(a->module, b->module);
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
	free(k->syms);
	free(k->buf);
	memset(k, 0, sizeof(*k));
}
