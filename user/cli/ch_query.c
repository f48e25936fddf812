/* SPDX-License-Identifier: MIT */
/* report / flame --clickhouse (ch_query.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_http.h"
#include "ch_query.h"
#include "ch_schema.h"
#include "cli.h"

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
	ch_buf_printf(q, "SELECT %s, c FROM (SELECT push_id, stack, count() "
		      "AS c FROM spulse_samples WHERE %s GROUP BY push_id, "
		      "stack) ANY INNER JOIN (SELECT push_id, stack, %s FROM "
		      "spulse_stacks WHERE %s) USING (push_id, stack)",
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

int ch_flame_folded(const struct ch_query_opts *o, const char *out)
{
	struct ch_buf w = { 0 }, q = { 0 }, ans = { 0 };
	struct ch_path *paths = NULL;
	size_t n = 0, pos = 0, i;
	struct ch_conn c;
	FILE *fo = stdout;
	char *f[2];
	size_t l[2];
	int rc = open_conn(&c, o, "flame");

	if (rc != EXIT_OK)
		return rc;
	rc = sample_where(&c, o, &w);
	if (!rc) {
		ch_buf_printf(&q, "SELECT folded, sum(c) FROM (");
		joined(&q, w.p, "folded");
		ch_buf_printf(&q, ") WHERE folded != '' GROUP BY folded "
			      "FORMAT TabSeparated");
		rc = q.oom ? -ENOMEM : ch_query(&c, q.p, NULL, 0, &ans, true);
	}
	while (!rc && ch_tsv_row(&ans, &pos, f, l, 2) == 2) {
		struct ch_path *np = realloc(paths, (n + 1) * sizeof(*np));

		if (!np) {
			rc = -ENOMEM;
			break;
		}
		paths = np;
		paths[n].text = f[0];
		paths[n].count = strtoull(f[1], NULL, 10);
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
	if (out && strcmp(out, "-")) {
		fo = fopen(out, "w");
		if (!fo) {
			fprintf(stderr, "spulse flame: %s: %s\n", out,
				strerror(errno));
			rc = EXIT_INVALID;
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		fprintf(fo, "%s %llu\n", paths[i].text,
			(unsigned long long)paths[i].count);
	if (ferror(fo) || (fo != stdout && fclose(fo))) {
		fprintf(stderr, "spulse flame: write failed\n");
		rc = EXIT_INVALID;
	} else {
		rc = EXIT_OK;
	}
out:
	free(paths);
	ch_buf_free(&ans);
	ch_buf_free(&q);
	ch_buf_free(&w);
	ch_close(&c);
	return rc;
}
