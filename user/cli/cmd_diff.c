/* SPDX-License-Identifier: MIT */
/*
 * spulse diff: per-function (or per --sort key) deltas between two
 * profiles, self and total, in % of each profile and in samples (or ns),
 * sorted by the absolute change of the share.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "analysis/profile.h"
#include "analysis/sort.h"
#include "sym/strtab.h"

int cmd_diff(int argc, char **argv);

static const char diff_help[] =
"NAME\n"
"    spulse diff - compare two profiles function by function\n"
"\n"
"SYNOPSIS\n"
"    spulse diff BEFORE AFTER [--by self|total] [--top N] [--json]\n"
"                [--sort KEYS] [--percent-limit P] [FILTERS]\n"
"                [--off-cpu [--state S,D,...] [--metric M]]\n"
"                [--kallsyms PATH] [--symfs DIR] [--inline]\n"
"                [--no-demangle] [--debug-dir DIR]\n"
"\n"
"DESCRIPTION\n"
"    Aggregates both spools as spulse report does (the same --sort keys\n"
"    and filters applied to each) and prints one row per function present\n"
"    in either: its self and total share in BEFORE and in AFTER (in % of\n"
"    each profile's own total, so profiles of different lengths compare),\n"
"    the change of each share in percentage points (AFTER - BEFORE), and\n"
"    the raw samples (or ms with --off-cpu) of both. Rows are sorted by\n"
"    the absolute change of the --by share, largest first (ties: the\n"
"    other share's change, then the key text). With the sym key (the\n"
"    default) and no dso key, a function matches across module paths: by\n"
"    its name and its module's file name, where modules with the same\n"
"    build-id count as one name, so the same binary built or installed at\n"
"    /a/gt and /b/gt is one row (the module shown is AFTER's). With --sort\n"
"    dso (or any dso key) rows match by the whole module path.\n"
"\n"
"OPTIONS\n"
"    --by self|total     the share whose change sorts the rows (default\n"
"                        self)\n"
"    --top N             rows to print (default 20, 0 = all)\n"
"    --percent-limit P   leave out rows whose --by change is below P\n"
"                        percentage points\n"
"    --sort KEYS         row keys as in spulse report: sym, dso, comm,\n"
"                        pid, tid, srcline, host, comma-separated\n"
"                        (default sym)\n"
"    --json              one JSON object instead of the table:\n"
"                        {\"unit\":\"samples\"|\"ns\",\"total_a\":N,\n"
"                         \"total_b\":N,\"rows\":[{\"function\":..,\n"
"                         \"module\":..,\"self_a\":N,\"self_b\":N,\n"
"                         \"total_a\":N,\"total_b\":N,\"self_pct_a\":X,\n"
"                         \"self_pct_b\":X,\"total_pct_a\":X,\n"
"                         \"total_pct_b\":X,\"delta_self_pct\":X,\n"
"                         \"delta_total_pct\":X},...]}\n"
"                        (function/module as the --sort keys give them)\n"
"    FILTERS             --pid, --tid, --comm, --host, --dso, --time,\n"
"                        --kernel, --user, as in spulse report; applied\n"
"                        to both\n"
"    --off-cpu, --state, --metric\n"
"                        compare off-CPU time instead of samples\n"
"    --kallsyms PATH     kernel symbols for both spools (default: each\n"
"                        spool's FILE.kallsyms when present)\n"
"    --symfs DIR         look module files up under DIR first\n"
"    --inline            expand frames into their inline chains (as in\n"
"                        spulse report)\n"
"    --no-demangle       keep C++/Rust names mangled\n"
"    --debug-dir DIR     look for separate debug files under DIR first\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse diff before.spulse after.spulse --top 10\n"
"    spulse diff a.spulse b.spulse --by total --json\n"
"    spulse flame --diff a.spulse b.spulse -o diff.svg   (the graph)\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 invalid or unreadable spool, 2 usage error.\n";

struct side {
	struct profile p;
	struct sort_table t;
};

struct drow {
	uint64_t self[2], total[2];
	int side;		/* where the display fields come from */
	uint32_t row;
	double d_self, d_total;	/* percentage points, B - A */
};

struct diff {
	struct side s[2];
	struct strtab keys;
	struct strtab bids;		/* build-ids seen */
	const char **bid_name;		/* build-id id -> first module name */
	size_t *bid_name_len;
	struct drow *rows;
	size_t n;
	bool by_total;
};

static int load(struct side *s, const char *file)
{
	int rc = profile_open(&s->p, file);

	if (rc == EXIT_OK && s->p.offcpu)
		profile_note_no_offcpu(&s->p);
	if (rc == EXIT_OK)
		rc = profile_count(&s->p);
	return rc;
}

/* The module part of a function's match key (*@len bytes): the module's
 * file name, or, for a build-id already seen under another name, that
 * name. */
static const char *module_key(struct diff *d, const struct sym_frame *sf,
			      size_t *len)
{
	const char *dso = sf->dso, *base = memrchr(dso, '/', sf->dso_len);
	char id[160];
	size_t n;
	int64_t k;

	base = base && base + 1 < dso + sf->dso_len ? base + 1 : dso;
	*len = sf->dso_len - (size_t)(base - dso);
	if (!sf->build_id || !*sf->build_id)
		return base;
	snprintf(id, sizeof(id), "%s", sf->build_id);
	n = d->bids.n;
	k = strtab_intern(&d->bids, id);
	if (k < 0)
		return base;
	if ((size_t)k == n) {	/* first seen: under this name */
		const char **v = realloc(d->bid_name, (n + 1) * sizeof(*v));
		size_t *l;

		if (!v)
			return base;
		d->bid_name = v;
		l = realloc(d->bid_name_len, (n + 1) * sizeof(*l));
		if (!l)
			return base;
		d->bid_name_len = l;
		v[n] = base;	/* the symbolizer's string, lives on */
		l[n] = *len;
	}
	*len = d->bid_name_len[k];
	return d->bid_name[k];
}

/* Append @s (@n bytes) by the printing rule (injective, no NUL) and the
 * 0x1f separator at key + *@o (snprintf-like: *@o may pass @len). */
static void key_part(char *key, size_t len, size_t *o, const char *s,
		     size_t n)
{
	if (*o < len)
		*o += cli_text_escape(key + *o, len - *o, s, n);
	if (*o < len)
		*o += (size_t)snprintf(key + *o, len - *o, "\x1f");
}

/*
 * The text rows match by. With a sym key and no dso key, the function
 * matches across module paths: name + module file name (a build-id seen
 * under one name keeps it), so the same binary at /a/gt and /b/gt is one
 * row (as perf diff matches by DSO name); an unresolved address keys by
 * its offset in that module. Otherwise the --sort key text as is.
 */
static const char *match_key(struct diff *d, const struct sort_table *t,
			     uint32_t row, char *key, size_t len)
{
	const struct sym_frame *sf;
	char field[1024];
	size_t o;
	int k;

	if (!sort_has(&t->spec, SORT_SYM) || sort_has(&t->spec, SORT_DSO))
		return sort_key_text(t, row, key, len);
	sf = profile_frame(t->p, t->rows[row].frame);
	if (!sf)
		return sort_key_text(t, row, key, len);
	o = 0;
	for (k = 0; k < t->spec.nkeys && o < len; k++) {
		int sk = t->spec.keys[k];

		if (sk == SORT_SYM && sf->kind == SPULSE_FRAME_MODULE) {
			size_t ml;
			const char *mk = module_key(d, sf, &ml);

			if (sf->func)
				key_part(key, len, &o, sf->func,
					 strlen(sf->func));
			else
				o += (size_t)snprintf(key + o, len - o,
					"0x%llx\x1f",
					(unsigned long long)sf->addr);
			key_part(key, len, &o, mk, ml);
		} else if (sk == SORT_SYM) {
			key_part(key, len, &o, sf->label, sf->label_len);
			key_part(key, len, &o, sf->dso, sf->dso_len);
		} else if (sk == SORT_SRCLINE)
			o += (size_t)snprintf(key + o, len - o, "%s\x1f",
				sort_field(t, row, sk, field, sizeof(field)));
	}
	if (o < len)
		snprintf(key + o, len - o, "\x1e%s",
			 strtab_str(&t->parts, t->rows[row].tpart));
	return key;
}

static int merge(struct diff *d, const struct sort_spec *spec)
{
	char key[4096];
	int k;

	for (k = 0; k < 2; k++) {
		struct sort_table *t = &d->s[k].t;
		size_t i;

		if (sort_aggregate(t, &d->s[k].p, spec) < 0)
			return -1;
		for (i = 0; i < t->nrows; i++) {
			int64_t id = strtab_intern(&d->keys,
				match_key(d, t, (uint32_t)i, key, sizeof(key)));

			if (id < 0)
				return -1;
			if ((size_t)id >= d->n) {
				struct drow *nr = realloc(d->rows,
					((size_t)id + 1) * sizeof(*nr));

				if (!nr)
					return -1;
				d->rows = nr;
				memset(&nr[d->n], 0,
				       ((size_t)id + 1 - d->n) * sizeof(*nr));
				d->n = (size_t)id + 1;
				nr[id].side = k;
				nr[id].row = (uint32_t)i;
			}
			/* two rows of one side may share a key (one function
			 * in two copies of a library): they add up */
			d->rows[id].self[k] += t->rows[i].self;
			d->rows[id].total[k] += t->rows[i].total;
			if (k == 1) {
				d->rows[id].side = 1;
				d->rows[id].row = (uint32_t)i;
			}
		}
	}
	return 0;
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

static const struct diff *cmp_diff;

static double absd(double x)
{
	return x < 0 ? -x : x;
}

static int cmp_drows(const void *a, const void *b)
{
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct drow *x = &cmp_diff->rows[ia], *y = &cmp_diff->rows[ib];
	double kx = absd(cmp_diff->by_total ? x->d_total : x->d_self);
	double ky = absd(cmp_diff->by_total ? y->d_total : y->d_self);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	kx = absd(cmp_diff->by_total ? x->d_self : x->d_total);
	ky = absd(cmp_diff->by_total ? y->d_self : y->d_total);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(strtab_str(&cmp_diff->keys, ia),
		      strtab_str(&cmp_diff->keys, ib));
}

static void put_value(bool ns, uint64_t v)
{
	if (ns)
		printf(" %10.3f", (double)v / 1e6);
	else
		printf(" %10llu", (unsigned long long)v);
}

/* The key fields of a row: "function [module]" or the --sort fields. */
static void put_keys(const struct diff *d, const struct drow *r)
{
	const struct sort_table *t = &d->s[r->side].t;
	bool dso = sort_has(&t->spec, SORT_DSO);
	char buf[1024];
	int k;

	for (k = 0; k < t->spec.nkeys; k++) {
		int key = t->spec.keys[k];

		fputs("  ", stdout);
		if (key == SORT_SYM) {
			const struct sym_frame *sf = profile_frame(
				t->p, t->rows[r->row].frame);

			/* spool text by the one printing rule (docs/CLI.md) */
			if (sf)
				cli_put_text(stdout, sf->label, sf->label_len);
			else
				fputs("?", stdout);
			if (sf && !dso && sf->func && sf->dso_len) {
				bool br = sf->dso[0] != '[';

				fputs(br ? " [" : " ", stdout);
				cli_put_text(stdout, sf->dso, sf->dso_len);
				if (br)
					putchar(']');
			}
			continue;
		}
		cli_put_cstr(stdout, sort_field(t, r->row, key, buf, sizeof(buf)));
	}
}

static void put_key_names(const struct sort_spec *spec)
{
	bool dso = sort_has(spec, SORT_DSO);
	int k;

	if (!spec->nkeys) {
		fputs("  function [module]", stdout);
		return;
	}
	for (k = 0; k < spec->nkeys; k++) {
		int key = spec->keys[k];

		printf("  %s", key == SORT_SYM ? (dso ? "function" :
						   "function [module]") :
		       key == SORT_DSO ? "module" : sort_key_name(key));
	}
}

static void json_str(const char *s)
{
	cli_json_string(stdout, s, strlen(s));
}

static void put_json_row(const struct diff *d, const struct drow *r,
			 uint64_t ta, uint64_t tb)
{
	const struct sort_table *t = &d->s[r->side].t;
	const struct sym_frame *sf = profile_frame(t->p, t->rows[r->row].frame);
	char buf[1024];
	int k;

	putchar('{');
	if (sort_has(&t->spec, SORT_SYM)) {
		fputs("\"function\":", stdout);
		if (sf)
			cli_json_string(stdout, sf->label, sf->label_len);
		else
			json_str("?");
		putchar(',');
	}
	if (sort_has(&t->spec, SORT_SYM) || sort_has(&t->spec, SORT_DSO)) {
		size_t mlen;
		const char *mod = sort_module(t, r->row, &mlen);

		fputs("\"module\":", stdout);
		cli_json_string(stdout, mod, mlen);
		putchar(',');
	}
	for (k = 0; k < t->spec.nkeys; k++) {
		int key = t->spec.keys[k];

		if (key == SORT_SYM || key == SORT_DSO)
			continue;
		printf("\"%s\":", sort_key_name(key));
		if (key == SORT_PID || key == SORT_TID)
			fputs(sort_field(t, r->row, key, buf, sizeof(buf)),
			      stdout);
		else
			json_str(sort_field(t, r->row, key, buf, sizeof(buf)));
		putchar(',');
	}
	printf("\"self_a\":%llu,\"self_b\":%llu,\"total_a\":%llu,"
	       "\"total_b\":%llu,\"self_pct_a\":%.4f,\"self_pct_b\":%.4f,"
	       "\"total_pct_a\":%.4f,\"total_pct_b\":%.4f,"
	       "\"delta_self_pct\":%.4f,\"delta_total_pct\":%.4f}",
	       (unsigned long long)r->self[0], (unsigned long long)r->self[1],
	       (unsigned long long)r->total[0], (unsigned long long)r->total[1],
	       pct(r->self[0], ta), pct(r->self[1], tb), pct(r->total[0], ta),
	       pct(r->total[1], tb), r->d_self, r->d_total);
}

static int output(struct diff *d, uint64_t top, double limit, bool json,
		  const char *fa, const char *fb)
{
	uint64_t ta = d->s[0].p.total, tb = d->s[1].p.total;
	bool ns = d->s[0].p.offcpu;
	uint32_t *order = malloc((d->n ? d->n : 1) * sizeof(*order));
	size_t i, shown;

	if (!order)
		return -1;
	for (i = 0; i < d->n; i++) {
		struct drow *r = &d->rows[i];

		r->d_self = pct(r->self[1], tb) - pct(r->self[0], ta);
		r->d_total = pct(r->total[1], tb) - pct(r->total[0], ta);
		order[i] = (uint32_t)i;
	}
	cmp_diff = d;
	if (d->n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(order, d->n, sizeof(*order), cmp_drows);
	for (shown = 0; shown < d->n && (!top || shown < top); shown++) {
		const struct drow *r = &d->rows[order[shown]];

		if (absd(d->by_total ? r->d_total : r->d_self) < limit)
			break;
	}
	if (json) {
		printf("{\"unit\":\"%s\",\"total_a\":%llu,\"total_b\":%llu,"
		       "\"rows\":[", ns ? "ns" : "samples",
		       (unsigned long long)ta, (unsigned long long)tb);
		for (i = 0; i < shown; i++) {
			if (i)
				putchar(',');
			put_json_row(d, &d->rows[order[i]], ta, tb);
		}
		fputs("]}\n", stdout);
	} else {
		if (ns)
			printf("# %s (%.3f ms off-CPU) -> %s (%.3f ms off-CPU)",
			       fa, (double)ta / 1e6, fb, (double)tb / 1e6);
		else
			printf("# %s (%llu samples) -> %s (%llu samples)", fa,
			       (unsigned long long)ta, fb,
			       (unsigned long long)tb);
		printf(": %zu rows, sorted by |delta %s%%|\n", d->n,
		       d->by_total ? "total" : "self");
		printf("%8s %8s %8s %8s %8s %8s %10s %10s %10s %10s",
		       "d.self", "self%A", "self%B", "d.total", "total%A",
		       "total%B", ns ? "self ms A" : "self A",
		       ns ? "self ms B" : "self B",
		       ns ? "total ms A" : "total A",
		       ns ? "total ms B" : "total B");
		put_key_names(&d->s[1].t.spec);
		putchar('\n');
		for (i = 0; i < shown; i++) {
			const struct drow *r = &d->rows[order[i]];

			printf("%+7.2f%% %7.2f%% %7.2f%% %+7.2f%% %7.2f%% "
			       "%7.2f%%", r->d_self, pct(r->self[0], ta),
			       pct(r->self[1], tb), r->d_total,
			       pct(r->total[0], ta), pct(r->total[1], tb));
			put_value(ns, r->self[0]);
			put_value(ns, r->self[1]);
			put_value(ns, r->total[0]);
			put_value(ns, r->total[1]);
			put_keys(d, r);
			putchar('\n');
		}
	}
	free(order);
	return ferror(stdout) ? -1 : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "sort", required_argument, NULL, 'o' },
		{ "percent-limit", required_argument, NULL, 'P' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		PROFILE_SYM_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct diff d;
	struct sort_spec spec = { 0 };
	uint64_t top = 20;
	double limit = 0;
	bool json = false;
	char *end;
	int c, rc = EXIT_OK;

	memset(&d, 0, sizeof(d));
	strtab_init(&d.keys);
	strtab_init(&d.bids);
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = profile_option(&d.s[1].p, c, optarg);
		if (rc == 1) {
			rc = EXIT_OK;
			continue;
		}
		if (rc)
			goto out;
		switch (c) {
		case 'n':
			if (!cli_parse_u64("--top", optarg, &top))
				rc = EXIT_USAGE;
			break;
		case 'b':
			rc = cli_parse_by("diff", optarg, &d.by_total);
			break;
		case 'j': json = true; break;
		case 'o':
			rc = sort_parse(&spec, optarg) == 1 ? EXIT_OK :
							      EXIT_USAGE;
			break;
		case 'P':
			limit = strtod(optarg, &end);
			if (end == optarg || *end || !(limit >= 0) ||
			    limit > 100)
				rc = cli_usage_error("diff", "--percent-limit "
					"must be 0..100, not '%s'", optarg);
			break;
		case 'h': fputs(diff_help, stdout); goto out;
		default: rc = cli_usage_error("diff", "bad option");
		}
		if (rc != EXIT_OK)
			goto out;
	}
	if (argc - optind != 2) {
		rc = cli_usage_error("diff", "expected two FILEs (before, "
				     "after)");
		goto out;
	}
	rc = profile_check_offcpu_opts(&d.s[1].p, "diff");
	if (rc != EXIT_OK)
		goto out;
	d.s[1].p.by_thread = sort_needs_thread(&spec);
	if (profile_copy_options(&d.s[0].p, &d.s[1].p) < 0) {
		fprintf(stderr, "spulse: out of memory\n");
		rc = EXIT_INVALID;
		goto out;
	}
	rc = load(&d.s[0], argv[optind]);
	if (rc == EXIT_OK)
		rc = load(&d.s[1], argv[optind + 1]);
	if (rc == EXIT_OK && merge(&d, &spec) < 0) {
		fprintf(stderr, "spulse diff: out of memory\n");
		rc = EXIT_INVALID;
	}
	if (rc == EXIT_OK &&
	    output(&d, top, limit, json, argv[optind], argv[optind + 1]) < 0) {
		fprintf(stderr, "spulse diff: write failed\n");
		rc = EXIT_INVALID;
	}
out:
	for (c = 0; c < 2; c++) {
		sort_free(&d.s[c].t);
		profile_close(&d.s[c].p);
	}
	strtab_free(&d.keys);
	strtab_free(&d.bids);
	free(d.bid_name);
	free(d.bid_name_len);
	free(d.rows);
	return rc;
}
