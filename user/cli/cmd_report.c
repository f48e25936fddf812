/* SPDX-License-Identifier: MIT */
/* spulse report: top functions by self and total samples. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"
#include "strtab.h"

static const char report_help[] =
"usage: spulse report FILE [--top N] [--by self|total] [--pid P]\n"
"                     [--kallsyms PATH] [--symfs DIR] [--json]\n"
"                     [--off-cpu [--state S,D,...]\n"
"                      [--metric offcpu|blocked|runq]]\n"
"\n"
"Print the functions with the most samples: self (the function is the\n"
"leaf) and total (the function is anywhere on the stack, counted once per\n"
"sample), with percentages of all samples counted.\n"
"\n"
"Symbolization: module-relative frames through the module file's ELF\n"
"symbols (.symtab/.dynsym, or /usr/lib/debug/.build-id/ by build-id);\n"
"kernel frames through a /proc/kallsyms-format file; anything unresolved\n"
"prints as hex with its module path; the truncated marker as [truncated].\n"
"A missing module file only leaves its frames as hex.\n"
"\n"
"  --top N          rows to print (default 20, 0 = all)\n"
"  --by self|total  sort key (default self)\n"
"  --pid P          only samples of process P\n"
"  --kallsyms PATH  kernel symbols (default FILE.kallsyms when present)\n"
"  --symfs DIR   look module files up under DIR first (DIR/PATH)\n"
"  --json           one JSON object instead of the table:\n"
"                   {\"unit\":\"samples\"|\"ns\",\"total\":N,\"rows\":[{\"function\":..,\n"
"                    \"module\":..,\"self\":N,\"total\":N},...]} (same rows)\n"
"\n"
"Off-CPU (spools recorded with offcpu=1):\n"
"  --off-cpu        time off CPU by function instead of samples: self =\n"
"                   the function is the leaf of the stack at switch-out,\n"
"                   total = anywhere on it (once per interval), in ms and\n"
"                   % of all the off-CPU time counted\n"
"  --state S,D,...  only intervals that left in these states (R S D T t\n"
"                   X Z P I; default all)\n"
"  --metric M       offcpu = blocked + run-queue time (default, as\n"
"                   offcputime), blocked = switch-out to wakeup only,\n"
"                   runq = wakeup to switch-in only\n";

struct row {
	uint64_t self, total;
	uint64_t stamp;		/* last stack counted into total, + 1 */
	const char *dso;	/* module of the first frame (symbolizer's) */
};

struct report {
	struct strtab keys;	/* "label\tdso" */
	struct row *rows;
	size_t nrows;
	int64_t *frame_key;	/* frame id -> key id, -2 = not yet */
	uint32_t nframes;
};

static int64_t frame_key(struct report *r, struct profile *p, uint32_t fid)
{
	const struct sym_frame *sf;
	char buf[1024];
	int64_t k;

	if (fid >= r->nframes)
		return -1;
	if (r->frame_key[fid] != -2)
		return r->frame_key[fid];
	sf = symbolizer_frame(p->sym, fid);
	if (!sf)
		return -1;
	snprintf(buf, sizeof(buf), "%s\t%s", sf->label,
		 sf->func ? sf->dso : "");
	k = strtab_intern(&r->keys, buf);
	if (k < 0)
		return -1;
	if ((size_t)k >= r->nrows) {
		size_t n = (size_t)k * 2 + 64;
		struct row *nr = realloc(r->rows, n * sizeof(*nr));

		if (!nr)
			return -1;
		memset(nr + r->nrows, 0, (n - r->nrows) * sizeof(*nr));
		r->rows = nr;
		r->nrows = n;
	}
	if (!r->rows[k].dso)
		r->rows[k].dso = sf->dso;
	r->frame_key[fid] = k;
	return k;
}

static bool by_total;
static const struct report *sort_report;

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = &sort_report->rows[*(const uint32_t *)a];
	const struct row *y = &sort_report->rows[*(const uint32_t *)b];
	uint64_t kx = by_total ? x->total : x->self;
	uint64_t ky = by_total ? y->total : y->self;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	kx = by_total ? x->self : x->total;
	ky = by_total ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(strtab_str(&sort_report->keys, *(const uint32_t *)a),
		      strtab_str(&sort_report->keys, *(const uint32_t *)b));
}

static int aggregate(struct report *r, struct profile *p)
{
	uint32_t frames[SPULSE_MAX_DEPTH], s;
	int n, i;

	r->nframes = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	r->frame_key = malloc(sizeof(*r->frame_key) *
			      (r->nframes ? r->nframes : 1));
	if (!r->frame_key)
		return -1;
	for (s = 0; s < r->nframes; s++)
		r->frame_key[s] = -2;
	for (s = 0; s < p->nstacks; s++) {
		uint64_t c = p->stack_count[s];

		if (!c)
			continue;
		n = profile_stack_frames(p, s, frames);
		if (n <= 0)
			return -1;
		for (i = 0; i < n; i++) {
			int64_t k = frame_key(r, p, frames[i]);

			if (k < 0)
				return -1;
			if (r->rows[k].stamp != (uint64_t)s + 1) {
				r->rows[k].stamp = (uint64_t)s + 1;
				r->rows[k].total += c;
			}
			if (i == n - 1)
				r->rows[k].self += c;
		}
	}
	return 0;
}

static uint32_t *sorted_keys(const struct report *r)
{
	size_t nkeys = r->keys.n, i;
	uint32_t *order = malloc(sizeof(*order) * (nkeys ? nkeys : 1));

	if (!order)
		return NULL;
	for (i = 0; i < nkeys; i++)
		order[i] = (uint32_t)i;
	sort_report = r;
	qsort(order, nkeys, sizeof(*order), cmp_rows);
	return order;
}

/* Values: samples, or ms with three decimals (ns weights). */
static void put_value(const struct profile *p, uint64_t v)
{
	if (p->offcpu)
		printf(" %10.3f", (double)v / 1e6);
	else
		printf(" %10llu", (unsigned long long)v);
}

static int print_report(const struct report *r, const struct profile *p,
			uint64_t top)
{
	size_t nkeys = r->keys.n, i;
	uint32_t *order = sorted_keys(r);
	double tot = p->total ? (double)p->total : 1.0;
	char states[32];

	if (!order)
		return -1;
	if (p->offcpu)
		printf("# %s: %.3f ms off-CPU, metric %s, in %llu intervals",
		       p->file, (double)p->total / 1e6, profile_metric_text(p),
		       (unsigned long long)p->intervals);
	else
		printf("# %s: %llu samples", p->file,
		       (unsigned long long)p->total);
	if (p->has_pid)
		printf(" of pid %u", p->pid);
	if (p->offcpu && p->state_mask)
		printf(", states %s", profile_states_text(p, states,
							 sizeof(states)));
	printf(", %zu functions, sorted by %s\n", nkeys,
	       by_total ? "total" : "self");
	printf("%8s %10s %8s %10s  %s\n", "self%",
	       p->offcpu ? "self ms" : "self", "total%",
	       p->offcpu ? "total ms" : "total", "function [module]");
	for (i = 0; i < nkeys && (!top || i < top); i++) {
		const struct row *w = &r->rows[order[i]];
		const char *key = strtab_str(&r->keys, order[i]);
		const char *tab = strchr(key, '\t');
		int flen = tab ? (int)(tab - key) : (int)strlen(key);

		printf("%7.2f%%", 100.0 * (double)w->self / tot);
		put_value(p, w->self);
		printf(" %7.2f%%", 100.0 * (double)w->total / tot);
		put_value(p, w->total);
		printf("  %.*s", flen, key);
		if (tab && tab[1])
			printf(tab[1] == '[' ? " %s" : " [%s]", tab + 1);
		putchar('\n');
	}
	free(order);
	return ferror(stdout) ? -1 : 0;
}

static int print_json(const struct report *r, const struct profile *p,
		      uint64_t top)
{
	size_t nkeys = r->keys.n, i;
	uint32_t *order = sorted_keys(r);

	if (!order)
		return -1;
	printf("{\"unit\":\"%s\",\"total\":%llu,\"rows\":[",
	       p->offcpu ? "ns" : "samples", (unsigned long long)p->total);
	for (i = 0; i < nkeys && (!top || i < top); i++) {
		const struct row *w = &r->rows[order[i]];
		const char *key = strtab_str(&r->keys, order[i]);
		const char *tab = strchr(key, '\t');
		size_t flen = tab ? (size_t)(tab - key) : strlen(key);
		const char *dso = w->dso ? w->dso : "";

		fputs(i ? ",{\"function\":" : "{\"function\":", stdout);
		cli_json_string(stdout, key, flen);
		fputs(",\"module\":", stdout);
		cli_json_string(stdout, dso, strlen(dso));
		printf(",\"self\":%llu,\"total\":%llu}",
		       (unsigned long long)w->self,
		       (unsigned long long)w->total);
	}
	fputs("]}\n", stdout);
	free(order);
	return ferror(stdout) ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		PROFILE_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct profile p = { 0 };
	struct report r = { 0 };
	uint64_t top = 20;
	bool json = false;
	int c, rc;

	by_total = false;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rc = profile_option(&p, c, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (c) {
		case 'n':
			if (!cli_parse_u64("--top", optarg, &top))
				return EXIT_USAGE;
			break;
		case 'b':
			if (!strcmp(optarg, "self"))
				by_total = false;
			else if (!strcmp(optarg, "total"))
				by_total = true;
			else
				return cli_usage_error("report",
					"--by must be self or total");
			break;
		case 'j': json = true; break;
		case 'h': fputs(report_help, stdout); return EXIT_OK;
		default: return cli_usage_error("report", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("report", "expected exactly one FILE");
	rc = profile_check_offcpu_opts(&p, "report");
	if (rc != EXIT_OK)
		return rc;
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK && p.offcpu)
		profile_note_no_offcpu(&p);
	if (rc == EXIT_OK)
		rc = profile_count(&p);
	if (rc == EXIT_OK) {
		strtab_init(&r.keys);
		if (aggregate(&r, &p) < 0) {
			fprintf(stderr, "%s: cannot aggregate stacks\n",
				argv[optind]);
			rc = EXIT_INVALID;
		} else if ((json ? print_json(&r, &p, top) :
				   print_report(&r, &p, top)) < 0) {
			fprintf(stderr, "spulse report: write failed\n");
			rc = EXIT_INVALID;
		}
		strtab_free(&r.keys);
		free(r.rows);
		free(r.frame_key);
	}
	profile_close(&p);
	return rc;
}
