/* SPDX-License-Identifier: MIT */
/* report / flame --clickhouse (ch_query.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calltree.h"
#include "ch_http.h"
#include "ch_query.h"
#include "ch_schema.h"
#include "analysis/util.h"
#include "export/svg.h"

int ch_query_add_hosts(struct ch_query_opts *o, const char *arg)
{
	const char *c = arg;

	for (;;) {
		const char *e = strchr(c, ',');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		char **nh;

		if (!len || len > 255)
			return cli_usage_error("report", "--host: empty or too "
					       "long name in '%s'", arg);
		nh = realloc(o->hosts, (o->nhosts + 1) * sizeof(*nh));
		if (!nh)
			return EXIT_USAGE;
		o->hosts = nh;
		o->hosts[o->nhosts] = strndup(c, len);
		if (!o->hosts[o->nhosts])
			return EXIT_USAGE;
		o->nhosts++;
		if (!e)
			return 1;
		c = e + 1;
	}
}

void ch_query_free(struct ch_query_opts *o)
{
	size_t i;

	for (i = 0; i < o->nhosts; i++)
		free(o->hosts[i]);
	free(o->hosts);
	o->hosts = NULL;
	o->nhosts = 0;
}

/*
 * The sample condition: committed pushes, --host, --time (seconds from
 * the earliest committed sample, as the local --time counts from the
 * spool's earliest sample).
 */
static int sample_where(struct ch_conn *c, const struct ch_query_opts *o,
			struct ch_buf *w)
{
	const struct filter *f = o->filter;
	size_t i;

	ch_buf_printf(w, "%s", CH_COMMITTED);
	if (o->nhosts) {
		ch_buf_printf(w, " AND host IN (");
		for (i = 0; i < o->nhosts; i++) {
			if (i)
				ch_buf_add(w, ",", 1);
			ch_sql_quote(w, o->hosts[i], strlen(o->hosts[i]));
		}
		ch_buf_add(w, ")", 1);
	}
	if (f && f->has_time) {
		uint64_t origin = 0;
		double lo, hi;
		int rc = ch_query_u64(c, "SELECT min(time_ns) FROM "
				      "spulse_samples WHERE " CH_COMMITTED,
				      &origin);

		if (rc)
			return rc;
		lo = f->t_start * 1e9;
		hi = f->t_end * 1e9;
		ch_buf_printf(w, " AND time_ns >= %llu",
			      (unsigned long long)(origin + (uint64_t)lo));
		if (hi < 9.2e18)
			ch_buf_printf(w, " AND time_ns < %llu",
				      (unsigned long long)(origin +
							   (uint64_t)hi));
	}
	return w->oom ? -ENOMEM : 0;
}

/* (samples per (push, stack)) joined with the stacks' columns @cols. */
static void joined(struct ch_buf *q, const char *where, const char *cols)
{
	ch_buf_printf(q, "SELECT %s, c FROM (SELECT push_key, stack, count() "
		      "AS c FROM spulse_samples WHERE %s GROUP BY push_key, "
		      "stack) ANY INNER JOIN (SELECT push_key, stack, %s FROM "
		      "spulse_stacks WHERE %s) USING (push_key, stack)",
		      cols, where, cols, CH_COMMITTED);
}

struct ch_row {
	char *key, *module;
	size_t key_len, module_len;
	uint64_t self, total;
};

static bool cmp_total;

static int cmp_row(const void *a, const void *b)
{
	const struct ch_row *x = a, *y = b;
	uint64_t kx = cmp_total ? x->total : x->self;
	uint64_t ky = cmp_total ? y->total : y->self;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	kx = cmp_total ? x->self : x->total;
	ky = cmp_total ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* label and module-of-key of a row key "label\x1fdso\x1f". */
static void key_parts(const char *key, const char **label, size_t *llen,
		      const char **dso, size_t *dlen)
{
	const char *s1 = strchr(key, '\x1f'), *s2;

	*label = key;
	*llen = s1 ? (size_t)(s1 - key) : strlen(key);
	*dso = s1 ? s1 + 1 : "";
	s2 = strchr(*dso, '\x1f');
	*dlen = s2 ? (size_t)(s2 - *dso) : strlen(*dso);
}

static int open_conn(struct ch_conn *c, const struct ch_query_opts *o,
		     const char *cmd)
{
	uint64_t n;

	if (ch_open(c, o->url, o->db) < 0) {
		fprintf(stderr, "spulse %s: %s\n", cmd, c->err);
		return EXIT_USAGE;
	}
	struct ch_buf q = { 0 }, ans = { 0 };
	int rc;

	ch_buf_printf(&q, "SELECT count() FROM system.tables WHERE database "
		      "= '%s' AND name = 'spulse_pushes'", c->db);
	rc = q.oom ? -ENOMEM : ch_query(c, q.p, NULL, 0, &ans, false);
	n = !rc && ans.p ? strtoull(ans.p, NULL, 10) : 0;
	ch_buf_free(&q);
	ch_buf_free(&ans);
	if (rc < 0) {
		fprintf(stderr, "spulse %s: %s\n", cmd, c->err);
		ch_close(c);
		return EXIT_INVALID;
	}
	if (!n) {
		fprintf(stderr, "spulse %s: %s database %s: no spulse tables "
			"(nothing pushed yet: spulse push --clickhouse)\n", cmd,
			c->url, c->db);
		ch_close(c);
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

static void put_title(const struct ch_conn *c, const struct ch_query_opts *o,
		      uint64_t total, size_t nrows)
{
	char filt[512];
	size_t i;

	printf("# clickhouse %s/%s: %llu samples", c->url, c->db,
	       (unsigned long long)total);
	for (i = 0; i < o->nhosts; i++)
		printf("%s%s", i ? "," : ", host ", o->hosts[i]);
	if (o->filter)
		fputs(filter_describe(o->filter, filt, sizeof(filt)), stdout);
	printf(", %zu functions, sorted by %s", nrows,
	       o->by_total ? "total" : "self");
	if (o->percent_limit > 0)
		printf(", rows >= %g%%", o->percent_limit);
	putchar('\n');
}

static void print_rows(const struct ch_query_opts *o, const struct ch_row *r,
		       size_t n, uint64_t total)
{
	double tot = total ? (double)total : 1.0;
	size_t i;

	if (o->json) {
		printf("{\"unit\":\"samples\",\"total\":%llu,\"rows\":[",
		       (unsigned long long)total);
		for (i = 0; i < n; i++) {
			const char *l, *d;
			size_t ll, dl;

			key_parts(r[i].key, &l, &ll, &d, &dl);
			fputs(i ? ",{\"function\":" : "{\"function\":", stdout);
			cli_json_string(stdout, l, ll);
			fputs(",\"module\":", stdout);
			cli_json_string(stdout, r[i].module, r[i].module_len);
			printf(",\"self\":%llu,\"total\":%llu}",
			       (unsigned long long)r[i].self,
			       (unsigned long long)r[i].total);
		}
		fputs("]}\n", stdout);
		return;
	}
	printf("%8s %10s %8s %10s", "self%", "self", "total%", "total");
	fputs("  function [module]\n", stdout);
	for (i = 0; i < n; i++) {
		const char *l, *d;
		size_t ll, dl;

		key_parts(r[i].key, &l, &ll, &d, &dl);
		printf("%7.2f%%", 100.0 * (double)r[i].self / tot);
		printf(" %10llu", (unsigned long long)r[i].self);
		printf(" %7.2f%%", 100.0 * (double)r[i].total / tot);
		printf(" %10llu", (unsigned long long)r[i].total);
		printf("  %.*s", (int)ll, l);
		if (dl)
			printf(d[0] == '[' ? " %.*s" : " [%.*s]", (int)dl, d);
		putchar('\n');
	}
}

int ch_report(const struct ch_query_opts *o)
{
	struct ch_buf w = { 0 }, q = { 0 }, ans = { 0 };
	struct ch_row *rows = NULL;
	size_t nrows = 0, pos = 0, shown;
	uint64_t total = 0;
	struct ch_conn c;
	char *f[4];
	size_t l[4];
	int rc = open_conn(&c, o, "report");

	if (rc != EXIT_OK)
		return rc;
	rc = sample_where(&c, o, &w);
	if (!rc) {
		ch_buf_printf(&q, "SELECT count() FROM spulse_samples WHERE %s",
			      w.p);
		rc = q.oom ? -ENOMEM : ch_query_u64(&c, q.p, &total);
	}
	if (!rc) {
		q.n = 0;
		ch_buf_printf(&q, "SELECT k, any(m), sum(if(k = leaf, c, 0)), "
			      "sum(c) FROM (");
		joined(&q, w.p, "keys, modules, leaf");
		ch_buf_printf(&q, ") ARRAY JOIN keys AS k, modules AS m "
			      "GROUP BY k FORMAT TabSeparated");
		rc = q.oom ? -ENOMEM : ch_query(&c, q.p, NULL, 0, &ans, true);
	}
	while (!rc && ch_tsv_row(&ans, &pos, f, l, 4) == 4) {
		struct ch_row *nr = realloc(rows, (nrows + 1) * sizeof(*nr));

		if (!nr) {
			rc = -ENOMEM;
			break;
		}
		rows = nr;
		rows[nrows].key = f[0];
		rows[nrows].key_len = l[0];
		rows[nrows].module = f[1];
		rows[nrows].module_len = l[1];
		rows[nrows].self = strtoull(f[2], NULL, 10);
		rows[nrows].total = strtoull(f[3], NULL, 10);
		nrows++;
	}
	if (rc) {
		fprintf(stderr, "spulse report: %s\n",
			rc == -ENOMEM ? "out of memory" : c.err);
		rc = EXIT_INVALID;
	} else {
		double tot = total ? (double)total : 1.0;

		cmp_total = o->by_total;
		if (nrows)
			qsort(rows, nrows, sizeof(*rows), cmp_row);
		for (shown = 0; shown < nrows && (!o->top || shown < o->top);
		     shown++) {
			uint64_t v = o->by_total ? rows[shown].total
						 : rows[shown].self;

			if (100.0 * (double)v / tot < o->percent_limit)
				break;
		}
		if (!o->json)
			put_title(&c, o, total, nrows);
		print_rows(o, rows, shown, total);
		rc = ferror(stdout) ? EXIT_INVALID : EXIT_OK;
	}
	free(rows);
	ch_buf_free(&ans);
	ch_buf_free(&q);
	ch_buf_free(&w);
	ch_close(&c);
	return rc;
}

/* ---- folded stacks --------------------------------------------------- */

struct ch_path {
	char *text;		/* "a;b;c" */
	char *labels;		/* labels, root first, \x01-separated */
	char *kinds;		/* frame kinds, comma-separated */
	uint64_t count;
};

/* Frame by frame, as the call tree's depth-first order (children by
 * label text): a path before its extensions, siblings by strcmp. */
static int cmp_path(const void *a, const void *b)
{
	const char *x = ((const struct ch_path *)a)->text;
	const char *y = ((const struct ch_path *)b)->text;

	for (;;) {
		size_t lx = strcspn(x, ";"), ly = strcspn(y, ";");
		size_t m = lx < ly ? lx : ly;
		int d = memcmp(x, y, m);

		if (d)
			return d;
		if (lx != ly)
			return lx < ly ? -1 : 1;
		if (!x[lx] || !y[ly])
			return !x[lx] && !y[ly] ? 0 : !x[lx] ? -1 : 1;
		x += lx + 1;
		y += ly + 1;
	}
}

/* Next \x01-separated label of *@s (NUL-terminated in place). */
static char *next_part(char **s, char sep)
{
	char *b = *s, *e;

	if (!b)
		return NULL;
	e = strchr(b, sep);
	if (e) {
		*e = 0;
		*s = e + 1;
	} else {
		*s = NULL;
	}
	return b;
}

/*
 * The call tree of the sorted paths: a path shares its first nodes with
 * the previous path's (the sort keeps every prefix's paths together), so
 * each path adds only its new tail, without a search.
 */
static int build_tree(struct calltree *t, struct ch_path *paths, size_t n)
{
	uint32_t stack[SPULSE_MAX_DEPTH + 1];
	char *prev[SPULSE_MAX_DEPTH + 1];
	uint32_t depth = 0;
	size_t i;

	if (!t->cap) {
		t->cap = 1024;
		t->nodes = calloc(t->cap, sizeof(*t->nodes));
		t->parent = calloc(t->cap, sizeof(*t->parent));
		if (!t->nodes || !t->parent)
			return -ENOMEM;
		t->n = 1;
		t->nodes[0].child = t->nodes[0].sibling = CALLTREE_NONE;
		t->parent[0] = CALLTREE_NONE;
	}
	for (i = 0; i < n; i++) {
		char *ls = paths[i].labels, *ks = paths[i].kinds, *l;
		uint32_t d = 0, cur = 0;
		bool same = true;

		t->nodes[0].value += paths[i].count;
		while ((l = next_part(&ls, '\x01')) != NULL &&
		       d < SPULSE_MAX_DEPTH) {
			char *k = next_part(&ks, ',');
			struct ct_node *nd;
			int64_t lid;

			if (same && d < depth && !strcmp(prev[d], l)) {
				cur = stack[d];
			} else {
				same = false;
				lid = symbolizer_intern_label(t->sym, l);
				if (lid < 0)
					return -ENOMEM;
				if (t->n == t->cap) {
					uint32_t nc = t->cap * 2;
					struct ct_node *nn = realloc(t->nodes,
						nc * sizeof(*nn));
					uint32_t *np;

					if (!nn)
						return -ENOMEM;
					t->nodes = nn;
					np = realloc(t->parent, nc * sizeof(*np));
					if (!np)
						return -ENOMEM;
					t->parent = np;
					t->cap = nc;
				}
				nd = &t->nodes[t->n];
				memset(nd, 0, sizeof(*nd));
				nd->label = (uint32_t)lid;
				nd->kind = k ? (uint8_t)atoi(k) : 0;
				nd->child = CALLTREE_NONE;
				nd->sibling = t->nodes[cur].child;
				t->nodes[cur].child = t->n;
				t->parent[t->n] = cur;
				cur = t->n++;
			}
			t->nodes[cur].value += paths[i].count;
			stack[d] = cur;
			prev[d] = l;
			d++;
		}
		t->nodes[cur].self += paths[i].count;
		depth = d;
	}
	return 0;
}

int ch_flame(const struct ch_query_opts *o, const char *out, bool folded,
	     const char *title)
{
	struct ch_buf w = { 0 }, q = { 0 }, ans = { 0 }, tb = { 0 };
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_stream *empty = NULL;
	struct calltree t = { 0 };
	struct ch_path *paths = NULL;
	size_t n = 0, pos = 0, i;
	struct ch_conn c;
	FILE *fo = stdout;
	char *f[4];
	size_t l[4];
	int rc = open_conn(&c, o, "flame");

	if (rc != EXIT_OK)
		return rc;
	rc = sample_where(&c, o, &w);
	if (!rc) {
		ch_buf_printf(&q, "SELECT folded, arrayStringConcat(any(labels), "
			      "'\\x01'), arrayStringConcat(arrayMap(x -> "
			      "toString(x), any(kinds)), ','), sum(c) FROM (");
		joined(&q, w.p, "folded, labels, kinds");
		ch_buf_printf(&q, ") WHERE folded != '' GROUP BY folded "
			      "FORMAT TabSeparated");
		rc = q.oom ? -ENOMEM : ch_query(&c, q.p, NULL, 0, &ans, true);
	}
	while (!rc && ch_tsv_row(&ans, &pos, f, l, 4) == 4) {
		struct ch_path *np = realloc(paths, (n + 1) * sizeof(*np));

		if (!np) {
			rc = -ENOMEM;
			break;
		}
		paths = np;
		paths[n].text = f[0];
		paths[n].labels = f[1];
		paths[n].kinds = f[2];
		paths[n].count = strtoull(f[3], NULL, 10);
		n++;
	}
	if (rc) {
		fprintf(stderr, "spulse flame: %s\n",
			rc == -ENOMEM ? "out of memory" : c.err);
		rc = EXIT_INVALID;
		goto out;
	}
	if (n)
		qsort(paths, n, sizeof(*paths), cmp_path);
	if (!folded) {
		/* labels live in a symbolizer over an empty definition set */
		if (spulse_stream_new(&ro, &empty) < 0 ||
		    !(t.sym = symbolizer_new(spulse_stream_defs(empty), NULL)) ||
		    build_tree(&t, paths, n) < 0) {
			fprintf(stderr, "spulse flame: out of memory\n");
			rc = EXIT_INVALID;
			goto out;
		}
		calltree_sort(&t);
	}
	if (out && strcmp(out, "-")) {
		fo = fopen(out, "w");
		if (!fo) {
			fprintf(stderr, "spulse flame: %s: %s\n", out,
				strerror(errno));
			rc = EXIT_INVALID;
			goto out;
		}
	}
	if (folded) {
		for (i = 0; i < n; i++)
			fprintf(fo, "%s %llu\n", paths[i].text,
				(unsigned long long)paths[i].count);
	} else {
		struct svg_opts so = { .title = title,
					.inverted = o->inverted };

		if (!title) {
			ch_buf_printf(&tb, "clickhouse %s/%s", c.url, c.db);
			so.title = tb.p;
		}
		svg_write(&t, fo, &so);
	}
	rc = ferror(fo) ? EXIT_INVALID : EXIT_OK;
	if (fo != stdout && fclose(fo))
		rc = EXIT_INVALID;
	if (rc)
		fprintf(stderr, "spulse flame: write failed\n");
out:
	if (t.sym)
		symbolizer_free(t.sym);
	t.sym = NULL;
	calltree_free(&t);
	if (empty)
		spulse_stream_free(empty);
	free(paths);
	ch_buf_free(&tb);
	ch_buf_free(&ans);
	ch_buf_free(&q);
	ch_buf_free(&w);
	ch_close(&c);
	return rc;
}
