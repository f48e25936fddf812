/* SPDX-License-Identifier: MIT */
/* spulse report: top functions by self and total samples. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "analysis/calltree.h"
#include "store/ch_query.h"
#include "analysis/profile.h"
#include "analysis/sort.h"
#include "analysis/filter.h"

static const char report_help[] =
"NAME\n"
"    spulse report - top functions of a profile (samples or off-CPU time)\n"
"\n"
"SYNOPSIS\n"
"    spulse report FILE [--top N] [--by self|total] [--sort KEYS]\n"
"                  [--percent-limit P] [-g caller|callee[,MIN]] [--json]\n"
"                  [--pid P,..] [--tid T,..] [--comm C,..] [--dso D,..]\n"
"                  [--time START,END] [--kernel | --user]\n"
"                  [--kallsyms PATH] [--symfs DIR] [--inline]\n"
"                  [--no-demangle] [--debug-dir DIR]\n"
"                  [--off-cpu [--state S,D,...] [--metric M] [--sched-leaf]]\n"
"    spulse report --clickhouse URL [--database DB] [--host H,..]\n"
"                  [--time START,END] [--top N] [--by self|total]\n"
"                  [--percent-limit P] [--json]\n"
"\n"
"DESCRIPTION\n"
"    Aggregates the samples of a spool by function (or by the --sort keys)\n"
"    and prints the rows with the most weight: self (the row's frame is\n"
"    the leaf of the sample's stack) and total (it is anywhere on the\n"
"    stack, counted once per sample even under recursion), as counts and\n"
"    as percentages of all samples counted after the filters. The work is\n"
"    per distinct stack and thread, never per sample, and every frame is\n"
"    symbolized once.\n"
"\n"
"    Symbolization: module-relative frames through the module file (ELF\n"
"    symbols, separate debug files, see docs/CLI.md); kernel frames\n"
"    through a /proc/kallsyms-format file; anything unresolved prints as\n"
"    hex with its module path, the truncated-stack marker as [truncated].\n"
"    A missing module file only leaves its frames as hex (one warning).\n"
"\n"
"OPTIONS\n"
"    --top N             rows to print (default 20, 0 = all)\n"
"    --by self|total     sort by self (default) or total weight\n"
"    --sort KEYS         row keys, comma-separated, combinable (as perf\n"
"                        report --sort): sym (function and module; the\n"
"                        default), dso (module path), comm, pid, tid, host,\n"
"                        srcline (file:line of the frame's address, ??:0\n"
"                        when unknown); e.g. --sort comm,sym\n"
"    --percent-limit P   leave out rows whose --by share is below P%\n"
"    -g, --call-graph caller|callee[,MIN]\n"
"                        after each row its call graph, as perf report\n"
"                        --stdio -g: callee = the function first, then\n"
"                        its callers down to the root; caller = from the\n"
"                        root down to the function; over the samples of\n"
"                        the row's --by column; branches as |--P%--name\n"
"                        with P the share of all samples; branches below\n"
"                        MIN% (default 0.5) are hidden\n"
"    --json              one JSON object on one line instead of the\n"
"                        table, the same rows in the same order:\n"
"                        {\"unit\":\"samples\"|\"ns\",\"total\":N,\"rows\":[\n"
"                         {\"function\":..,\"module\":..,\"self\":N,\n"
"                          \"total\":N},...]}; with --sort the row holds\n"
"                        the keys given (comm, pid, tid, srcline, host;\n"
"                        function and module for sym, module for dso)\n"
"\n"
"  Filters (combinable; the same in flame, diff and latency):\n"
"    --pid P,..          only samples of these processes\n"
"    --tid T,..          only samples of these threads\n"
"    --comm C,..         only threads with these names (exact)\n"
"    --host H,..         only threads of these hosts (the spool's identity;\n"
"                        \"unknown\" in spools without one; docs/FLEET.md)\n"
"    --dso D,..          only samples whose stack has a frame in one of\n"
"                        these modules (full path, or its file name, or\n"
"                        [kernel.kallsyms])\n"
"    --time START,END    only samples from START to before END, seconds\n"
"                        from the spool's earliest sample (either may be\n"
"                        left out: 1.5, or ,2)\n"
"    --kernel            keep only kernel frames of each stack (samples\n"
"                        without one are dropped)\n"
"    --user              keep only user frames (module, user, truncated)\n"
"\n"
"  Symbols:\n"
"    --kallsyms PATH     kernel symbols (default FILE.kallsyms if present)\n"
"    --symfs DIR         look module files up under DIR first (DIR/PATH)\n"
"    --inline            expand each frame into its inline chain (DWARF\n"
"                        inlined calls, outermost first): inlined\n"
"                        functions get rows, boxes and call-graph nodes\n"
"                        of their own, with their call-site srcline\n"
"    --no-demangle       keep C++/Rust names mangled\n"
"    --debug-dir DIR     look for separate debug files under DIR first\n"
"                        (DIR/.build-id/xx/rest.debug, .gnu_debuglink)\n"
"\n"
"  Fleet (docs/FLEET.md):\n"
"    --clickhouse URL    no FILE: the same report over every spool pushed\n"
"                        with spulse push, computed by ClickHouse (GROUP\n"
"                        BY on the server); --time counts from the\n"
"                        earliest pushed sample\n"
"    --database DB       ClickHouse database (default spulse)\n"
"    --host H,..         (with --clickhouse) only samples of these hosts\n"
"\n"
"  Off-CPU (spools recorded with offcpu=1):\n"
"    --off-cpu           time off CPU by function instead of samples: self\n"
"                        = the wait site: the first frame from the leaf of\n"
"                        the stack at switch-out that is not the\n"
"                        scheduler's own (__schedule, schedule*,\n"
"                        io_schedule*, preempt_schedule*, cond_resched),\n"
"                        e.g. futex_wait_queue or do_nanosleep; total =\n"
"                        anywhere on the stack (once per interval); in ms\n"
"                        and % of all the off-CPU time counted; --json\n"
"                        unit ns\n"
"    --sched-leaf        (with --off-cpu) self = the stack's leaf itself,\n"
"                        which is __schedule for almost every interval\n"
"    --state S,D,...     only intervals that left in these states (R S D\n"
"                        T t X Z P I; default all)\n"
"    --metric M          offcpu = blocked + run-queue time (default, as\n"
"                        offcputime), blocked = switch-out to wakeup,\n"
"                        runq = wakeup to switch-in\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse report app.spulse --top 20\n"
"    spulse report app.spulse --sort comm,dso --percent-limit 1\n"
"    spulse report app.spulse -g caller --top 5 --user\n"
"    spulse report app.spulse --tid 4242 --time 2,4.5 --json\n"
"    spulse report app.spulse --off-cpu --state S,D --metric blocked\n"
"\n"
"EXIT STATUS\n"
"    0 success (also for a spool recovered from a truncated tail), 1\n"
"    invalid or unreadable spool, 2 usage error.\n";

struct report_opts {
	uint64_t top;
	bool by_total, json;
	bool sched_leaf;	/* --sched-leaf */
	double percent_limit;		/* rows below this % are left out */
	struct sort_spec spec;
	int graph;			/* 0, GRAPH_CALLER, GRAPH_CALLEE */
	double graph_min;		/* % of the total; branches below hidden */
};

enum { GRAPH_CALLER = 1, GRAPH_CALLEE };

/* Values: samples, or ms with three decimals (ns weights). */
static void put_value(const struct profile *p, uint64_t v)
{
	if (p->offcpu)
		printf(" %10.3f", (double)v / 1e6);
	else
		printf(" %10llu", (unsigned long long)v);
}

static bool default_sort(const struct sort_table *t)
{
	return t->spec.nkeys == 1 && t->spec.keys[0] == SORT_SYM;
}

/* Rows shown: --top and --percent-limit applied to the sorted order. */
static size_t shown_rows(const struct sort_table *t, const struct profile *p,
			 const struct report_opts *o, const uint32_t *order)
{
	double tot = p->total ? (double)p->total : 1.0;
	size_t i;

	for (i = 0; i < t->nrows && (!o->top || i < o->top); i++) {
		const struct sort_row *w = &t->rows[order[i]];
		uint64_t v = o->by_total ? w->total : w->self;

		if (100.0 * (double)v / tot < o->percent_limit)
			break;
	}
	return i;
}

/* "function [module]" as in the default table. */
static void put_sym(const struct sort_table *t, uint32_t row, bool with_dso)
{
	const struct sym_frame *sf = profile_frame(t->p, t->rows[row].frame);

	if (!sf) {
		fputs("?", stdout);
		return;
	}
	cli_put_text(stdout, sf->label, sf->label_len);
	if (with_dso && sf->func && sf->dso_len) {
		size_t mlen;
		const char *mod = sort_module(t, row, &mlen);

		fputs(mod[0] == '[' ? " " : " [", stdout);
		cli_put_text(stdout, mod, mlen);
		if (mod[0] != '[')
			fputs("]", stdout);
	}
}

static int key_width(int key)
{
	switch (key) {
	case SORT_COMM: return 16;
	case SORT_PID:
	case SORT_TID: return 7;
	case SORT_DSO: return 28;
	case SORT_SRCLINE: return 32;
	}
	return 0;
}

/* One column: numbers right-aligned, text left-aligned, the last unpadded. */
static void put_cell(const char *s, int key, bool last)
{
	if (last)
		fputs(s, stdout);
	else if (key == SORT_PID || key == SORT_TID)
		printf("%*s", key_width(key), s);
	else
		printf("%-*s", key_width(key), s);
}

static void put_columns(const struct sort_table *t, uint32_t row)
{
	bool dso = sort_has(&t->spec, SORT_DSO);
	char buf[1024];
	int i;

	for (i = 0; i < t->spec.nkeys; i++) {
		int k = t->spec.keys[i];
		bool last = i == t->spec.nkeys - 1;

		fputs("  ", stdout);
		if (k == SORT_SYM) {
			put_sym(t, row, !dso);
			if (!last)
				fputs(" ", stdout);
			continue;
		}
		put_cell(sort_field(t, row, k, buf, sizeof(buf)), k, last);
	}
}

static void put_header_columns(const struct sort_table *t)
{
	bool dso = sort_has(&t->spec, SORT_DSO);
	int i;

	for (i = 0; i < t->spec.nkeys; i++) {
		int k = t->spec.keys[i];
		bool last = i == t->spec.nkeys - 1;
		const char *name = k == SORT_SYM ?
			(dso ? "function" : "function [module]") :
			k == SORT_DSO ? "module" : sort_key_name(k);

		fputs("  ", stdout);
		put_cell(name, k, last);
	}
}

/* ---- -g: the call graph of one row (perf report --stdio -g style) ---- */

static const struct calltree *gsort_tree;

static int cmp_child_value(const void *a, const void *b)
{
	const struct ct_node *x = &gsort_tree->nodes[*(const uint32_t *)a];
	const struct ct_node *y = &gsort_tree->nodes[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return symbolizer_label_cmp(gsort_tree->sym, x->label, y->label);
}

/* Children of @node at least @min, by value descending, into *@out. */
static uint32_t graph_children(const struct calltree *t, uint32_t node,
			       double min, uint32_t **out)
{
	uint32_t c, n = 0, *v = NULL;

	for (c = t->nodes[node].child; c != CALLTREE_NONE;
	     c = t->nodes[c].sibling) {
		uint32_t *nv;

		if ((double)t->nodes[c].value < min || !t->nodes[c].value)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n++] = c;
	}
	gsort_tree = t;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_child_value);
	*out = v;
	return n;
}

/*
 * Print the name of @node (the caller already wrote the line's prefix and
 * connector), then its subtree: a single child carrying all of the node's
 * weight continues the chain on the next line; otherwise every child is a
 * branch "|--P%--name" (the last " --P%--name") under a "|" line.
 */
static void graph_print(const struct calltree *t, uint32_t node,
			const char *prefix, double min, double tot)
{
	uint32_t *kids, n, i;
	char *sub;

	cli_put_text(stdout, symbolizer_label(t->sym, t->nodes[node].label),
		     symbolizer_label_len(t->sym, t->nodes[node].label));
	putchar('\n');
	n = graph_children(t, node, min, &kids);
	if (n == 1 && t->nodes[kids[0]].value == t->nodes[node].value) {
		fputs(prefix, stdout);
		graph_print(t, kids[0], prefix, min, tot);
		free(kids);
		return;
	}
	for (i = 0; i < n; i++) {
		char pct[32];
		size_t plen = strlen(prefix), w;
		bool last = i == n - 1;

		snprintf(pct, sizeof(pct), "%.2f%%",
			 100.0 * (double)t->nodes[kids[i]].value / tot);
		printf("%s|\n%s%s--%s--", prefix, prefix, last ? " " : "|",
		       pct);
		w = strlen(pct) + 5;
		sub = malloc(plen + w + 1);
		if (!sub)
			break;
		memcpy(sub, prefix, plen);
		sub[plen] = last ? ' ' : '|';
		memset(sub + plen + 1, ' ', w - 1);
		sub[plen + w] = 0;
		graph_print(t, kids[i], sub, min, tot);
		free(sub);
	}
	free(kids);
}

/*
 * The call graph of row @row: the paths of the cells counted in the row's
 * sort column, callee order = the function then its callers down to the
 * root, caller order = root first down to the function (for a recursive
 * function, its innermost occurrence).
 */
/*
 * For -g: per row, the (cell, frame position) pairs its graph is built
 * from — the leaf of each cell (by self) or the innermost occurrence of
 * each row on the cell's stack (by total) — found in one pass over the
 * cells, so printing every row's graph stays linear in the stack frames.
 */
struct graph_index {
	size_t *start;		/* row -> first entry; [nrows] = end */
	uint32_t *cell;		/* entries grouped by row */
	uint16_t *pos;		/* frame position of the row in that cell */
};

static void graph_index_free(struct graph_index *gi)
{
	free(gi->start);
	free(gi->cell);
	free(gi->pos);
}

/* Count the (row, cell, position) pairs per row, or with @fill store them. */
static int graph_pairs(struct sort_table *t, struct profile *p, bool by_total,
		       uint32_t *seen, struct graph_index *gi, bool fill)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	size_t c;

	for (c = 0; c < p->ncells; c++) {
		const struct profile_cell *pc = &p->cells[c];
		int n = profile_stack_frames(p, pc->stack, frames), k;

		for (k = n - 1; k >= 0; k--) {
			int64_t r = sort_row_of(t, frames[k], pc->thread);

			if (r < 0)
				return -1;
			if (seen[r] != c + 1) {
				seen[r] = (uint32_t)c + 1;
				if (fill) {
					size_t e = gi->start[r]++;

					gi->cell[e] = (uint32_t)c;
					gi->pos[e] = (uint16_t)k;
				} else {
					gi->start[r + 1]++;
				}
			}
			if (!by_total)
				break;	/* self: only the leaf counts */
		}
	}
	return 0;
}

static int graph_index_build(struct graph_index *gi, struct sort_table *t,
			     struct profile *p, bool by_total)
{
	size_t nr = t->nrows, i, total;
	uint32_t *seen = calloc(nr ? nr : 1, sizeof(*seen));
	int rc = -1;

	memset(gi, 0, sizeof(*gi));
	gi->start = calloc(nr + 2, sizeof(*gi->start));
	if (!seen || !gi->start)
		goto out;
	/* count, prefix sums, fill (start[r] advances), shift back */
	if (graph_pairs(t, p, by_total, seen, gi, false) < 0)
		goto out;
	for (i = 0; i < nr; i++)
		gi->start[i + 1] += gi->start[i];
	total = gi->start[nr];
	gi->cell = malloc((total ? total : 1) * sizeof(*gi->cell));
	gi->pos = malloc((total ? total : 1) * sizeof(*gi->pos));
	if (!gi->cell || !gi->pos)
		goto out;
	memset(seen, 0, (nr ? nr : 1) * sizeof(*seen));
	if (graph_pairs(t, p, by_total, seen, gi, true) < 0)
		goto out;
	memmove(gi->start + 1, gi->start, nr * sizeof(*gi->start));
	gi->start[0] = 0;
	rc = 0;
out:
	free(seen);
	return rc;
}

/*
 * The call graph of row @row: the paths of the cells counted in the row's
 * sort column, callee order = the function then its callers down to the
 * root, caller order = root first down to the function (for a recursive
 * function, its innermost occurrence).
 */
static int print_graph(const struct graph_index *gi, struct profile *p,
		       const struct report_opts *o, uint32_t row)
{
	uint32_t frames[SPULSE_MAX_DEPTH], *kids, nk;
	struct calltree g;
	double tot = p->total ? (double)p->total : 1.0;
	double min = o->graph_min / 100.0 * (double)p->total;
	size_t c;

	if (calltree_init(&g, p) < 0)
		return -1;
	for (c = gi->start[row]; c < gi->start[row + 1]; c++) {
		const struct profile_cell *pc = &p->cells[gi->cell[c]];
		int at = gi->pos[c];

		if (profile_stack_frames(p, pc->stack, frames) <= at)
			continue;
		if ((o->graph == GRAPH_CALLEE ?
		     calltree_add_path(&g, frames, at + 1, -1, pc->weight) :
		     calltree_add_path(&g, frames, at + 1, 1, pc->weight)) < 0) {
			calltree_free(&g);
			return -1;
		}
	}
	nk = graph_children(&g, 0, min, &kids);
	if (!nk) {
		free(kids);
		calltree_free(&g);
		return 0;
	}
	fputs("            |\n", stdout);
	if (nk == 1) {
		fputs("            ---", stdout);
		graph_print(&g, kids[0], "               ", min, tot);
	} else if (nk > 1) {
		/* several roots (caller order): branches from the start */
		for (c = 0; c < nk; c++) {
			bool last = c == nk - 1;
			char pct[32], sub[64];
			size_t w;

			snprintf(pct, sizeof(pct), "%.2f%%",
				 100.0 * (double)g.nodes[kids[c]].value / tot);
			if (c)
				fputs("            |\n", stdout);
			printf("            %s--%s--", last ? " " : "|", pct);
			w = strlen(pct) + 5;
			snprintf(sub, sizeof(sub), "            %c%*s",
				 last ? ' ' : '|', (int)(w - 1), "");
			graph_print(&g, kids[c], sub, min, tot);
		}
	}
	putchar('\n');
	free(kids);
	calltree_free(&g);
	return 0;
}

static void print_title(const struct sort_table *t, const struct profile *p,
			const struct report_opts *o)
{
	char states[32], filt[512];
	size_t i;

	if (p->offcpu)
		printf("# %s: %.3f ms off-CPU, metric %s, in %llu intervals",
		       p->file, (double)p->total / 1e6, profile_metric_text(p),
		       (unsigned long long)p->intervals);
	else
		printf("# %s: %llu samples", p->file,
		       (unsigned long long)p->total);
	for (i = 0; i < p->filter.npids; i++)
		printf("%s%u", i ? "," : " of pid ", p->filter.pids[i]);
	if (p->offcpu && p->state_mask)
		printf(", states %s", profile_states_text(p, states,
							 sizeof(states)));
	fputs(filter_describe(&p->filter, filt, sizeof(filt)), stdout);
	if (default_sort(t)) {
		printf(", %zu functions", t->nrows);
	} else {
		int k;

		printf(", %zu rows by ", t->nrows);
		for (k = 0; k < t->spec.nkeys; k++)
			printf("%s%s", k ? "," : "",
			       sort_key_name(t->spec.keys[k]));
	}
	printf(", sorted by %s", o->by_total ? "total" : "self");
	if (o->percent_limit > 0)
		printf(", rows >= %g%%", o->percent_limit);
	putchar('\n');
}

static int print_report(struct sort_table *t, struct profile *p,
			const struct report_opts *o)
{
	uint32_t *order = sort_order(t, o->by_total);
	double tot = p->total ? (double)p->total : 1.0;
	struct graph_index gi = { 0 };
	size_t n, i;

	if (!order)
		return -1;
	n = shown_rows(t, p, o, order);
	if (o->graph && graph_index_build(&gi, t, p, o->by_total) < 0) {
		graph_index_free(&gi);
		free(order);
		return -1;
	}
	print_title(t, p, o);
	printf("%8s %10s %8s %10s", "self%", p->offcpu ? "self ms" : "self",
	       "total%", p->offcpu ? "total ms" : "total");
	put_header_columns(t);
	putchar('\n');
	for (i = 0; i < n; i++) {
		const struct sort_row *w = &t->rows[order[i]];

		printf("%7.2f%%", 100.0 * (double)w->self / tot);
		put_value(p, w->self);
		printf(" %7.2f%%", 100.0 * (double)w->total / tot);
		put_value(p, w->total);
		put_columns(t, order[i]);
		putchar('\n');
		if (o->graph && print_graph(&gi, p, o, order[i]) < 0) {
			graph_index_free(&gi);
			free(order);
			return -1;
		}
	}
	graph_index_free(&gi);
	free(order);
	return ferror(stdout) ? -1 : 0;
}

static void json_str(const char *s)
{
	cli_json_string(stdout, s, strlen(s));
}

static int print_json(struct sort_table *t, struct profile *p,
		      const struct report_opts *o)
{
	uint32_t *order = sort_order(t, o->by_total);
	bool sym = sort_has(&t->spec, SORT_SYM);
	char buf[1024];
	size_t n, i;
	int k;

	if (!order)
		return -1;
	n = shown_rows(t, p, o, order);
	printf("{\"unit\":\"%s\",\"total\":%llu,\"rows\":[",
	       p->offcpu ? "ns" : "samples", (unsigned long long)p->total);
	for (i = 0; i < n; i++) {
		const struct sort_row *w = &t->rows[order[i]];
		bool first = true;

		putchar(i ? ',' : '{');
		if (i)
			putchar('{');
		if (sym || sort_has(&t->spec, SORT_DSO)) {
			const struct sym_frame *sf =
				profile_frame(p, w->frame);

			if (sym) {
				fputs("\"function\":", stdout);
				if (sf)
					cli_json_string(stdout, sf->label,
							sf->label_len);
				else
					json_str("?");
				putchar(',');
			}
			size_t mlen;
			const char *mod = sort_module(t, order[i], &mlen);

			fputs("\"module\":", stdout);
			cli_json_string(stdout, mod, mlen);
			first = false;
		}
		for (k = 0; k < t->spec.nkeys; k++) {
			int key = t->spec.keys[k];

			if (key == SORT_SYM || key == SORT_DSO)
				continue;
			printf("%s\"%s\":", first ? "" : ",",
			       sort_key_name(key));
			first = false;
			if (key == SORT_PID || key == SORT_TID) {
				fputs(sort_field(t, order[i], key, buf,
						 sizeof(buf)), stdout);
			} else if (key == SORT_COMM || key == SORT_HOST) {
				/* every byte, JSON-escaped (not the text
				 * escape of the table) */
				struct spulse_thread th;
				const char *h;
				size_t hl;

				if (w->thread == SPULSE_NONE ||
				    spulse_defs_thread(p->defs, w->thread,
						       &th) < 0)
					json_str("?");
				else if (key == SORT_COMM)
					cli_json_string(stdout, th.comm,
							th.comm_len);
				else {
					h = filter_thread_host_n(p->defs,
								 w->thread,
								 &hl);
					cli_json_string(stdout, h, hl);
				}
			} else
				json_str(sort_field(t, order[i], key, buf,
						    sizeof(buf)));
		}
		printf("%s\"self\":%llu,\"total\":%llu}", first ? "" : ",",
		       (unsigned long long)w->self,
		       (unsigned long long)w->total);
	}
	fputs("]}\n", stdout);
	free(order);
	return ferror(stdout) ? -1 : 0;
}

static int parse_graph(struct report_opts *o, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);

	if (len == 6 && !strncmp(arg, "caller", 6))
		o->graph = GRAPH_CALLER;
	else if (len == 6 && !strncmp(arg, "callee", 6))
		o->graph = GRAPH_CALLEE;
	else
		return cli_usage_error("report", "-g must be caller or callee "
				       "(optionally ,MIN%%), not '%s'", arg);
	if (comma) {
		char *end;

		o->graph_min = strtod(comma + 1, &end);
		if (end == comma + 1 || *end || !(o->graph_min >= 0) ||
		    o->graph_min > 100)
			return cli_usage_error("report", "-g %s: MIN is a "
					       "percentage 0..100", arg);
	}
	return 1;
}

/*
 * --clickhouse: the options the server-side report supports (the default
 * sym rows, --top, --by, --percent-limit, --json, --time, --host).
 */
static int report_clickhouse(struct ch_query_opts *ch,
			     const struct report_opts *o,
			     const struct profile *p, int nfiles)
{
	const struct filter *f = &p->filter;

	if (!ch->url)
		return cli_usage_error("report", "--database needs "
				       "--clickhouse URL");
	if (nfiles)
		return cli_usage_error("report", "--clickhouse takes no FILE "
				       "(it reports every pushed spool)");
	if (o->spec.nkeys || o->graph || p->offcpu || p->offcpu_opts ||
	    f->npids || f->ntids || f->ncomms || f->ndsos || f->frames ||
	    p->kallsyms || p->symfs || p->inline_frames || p->no_demangle ||
	    p->debug_dir)
		return cli_usage_error("report", "--clickhouse supports --host, "
				       "--time, --top, --by, --percent-limit "
				       "and --json only (frames were "
				       "symbolized by spulse push)");
	/* --host is the shared filter option (filter.h): the server filters too */
	for (size_t i = 0; i < f->nhosts; i++)
		if (ch_query_add_hosts(ch, f->hosts[i]) != 1)
			return EXIT_INVALID;
	ch->filter = f;
	ch->top = o->top;
	ch->by_total = o->by_total;
	ch->json = o->json;
	ch->percent_limit = o->percent_limit;
	return ch_report(ch);
}

#define REPORT_OPT_SCHED_LEAF 0x1380

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "by", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "sort", required_argument, NULL, 'o' },
		{ "percent-limit", required_argument, NULL, 'P' },
		{ "call-graph", required_argument, NULL, 'g' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		PROFILE_SYM_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "clickhouse", required_argument, NULL, CH_OPT_CLICKHOUSE },
		{ "database", required_argument, NULL, CH_OPT_DATABASE },
		{ "sched-leaf", no_argument, NULL, REPORT_OPT_SCHED_LEAF },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct report_opts o = { .top = 20, .graph_min = 0.5 };
	struct profile p = { 0 };
	struct ch_query_opts ch = { 0 };
	struct sort_table t;
	char *end;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "hg:", longopts, NULL)) != -1) {
		rc = profile_option(&p, c, optarg);
		if (rc == 1)
			continue;
		if (rc) {
			profile_close(&p);
			return rc;
		}
		rc = 1;
		switch (c) {
		case 'n':
			if (!cli_parse_u64("--top", optarg, &o.top))
				rc = EXIT_USAGE;
			break;
		case 'b':
			rc = cli_parse_by("report", optarg, &o.by_total) ?
			     EXIT_USAGE : 1;
			break;
		case 'j': o.json = true; break;
		case REPORT_OPT_SCHED_LEAF: o.sched_leaf = true; break;
		case 'o': rc = sort_parse(&o.spec, optarg); break;
		case 'P':
			o.percent_limit = strtod(optarg, &end);
			if (end == optarg || *end || !(o.percent_limit >= 0) ||
			    o.percent_limit > 100)
				rc = cli_usage_error("report", "--percent-limit "
					"must be a percentage 0..100, not '%s'",
					optarg);
			break;
		case 'g': rc = parse_graph(&o, optarg); break;
		case CH_OPT_CLICKHOUSE: ch.url = optarg; break;
		case CH_OPT_DATABASE: ch.db = optarg; break;
		case CH_OPT_HOST: rc = ch_query_add_hosts(&ch, optarg); break;
		case 'h':
			fputs(report_help, stdout);
			profile_close(&p);
			return EXIT_OK;
		default: rc = cli_usage_error("report", "bad option");
		}
		if (rc != 1) {
			ch_query_free(&ch);
			profile_close(&p);
			return rc;
		}
	}
	if (o.json && o.graph) {
		ch_query_free(&ch);
		profile_close(&p);
		return cli_usage_error("report", "-g (call graph) has no JSON "
				       "form; use -g without --json, or "
				       "spulse export --format json");
	}
	if (ch.url || ch.db) {
		rc = report_clickhouse(&ch, &o, &p, argc - optind);
		ch_query_free(&ch);
		profile_close(&p);
		return rc;
	}
	if (argc - optind != 1) {
		profile_close(&p);
		return cli_usage_error("report", "expected exactly one FILE");
	}
	rc = profile_check_offcpu_opts(&p, "report");
	if (rc == EXIT_OK && o.sched_leaf && !p.offcpu)
		rc = cli_usage_error("report", "--sched-leaf needs --off-cpu");
	if (rc != EXIT_OK) {
		profile_close(&p);
		return rc;
	}
	o.spec.wait_leaf = p.offcpu && !o.sched_leaf;
	p.by_thread = sort_needs_thread(&o.spec);
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK && p.offcpu)
		profile_note_no_offcpu(&p);
	if (rc == EXIT_OK)
		rc = profile_count(&p);
	if (rc == EXIT_OK) {
		int e = sort_aggregate(&t, &p, &o.spec);

		if (e < 0) {
			fprintf(stderr, "%s: cannot aggregate stacks: %s\n",
				argv[optind], strerror(-e));
			rc = EXIT_INVALID;
		} else if ((o.json ? print_json(&t, &p, &o) :
				     print_report(&t, &p, &o)) < 0) {
			fprintf(stderr, "spulse report: write failed\n");
			rc = EXIT_INVALID;
		}
		sort_free(&t);
	}
	profile_close(&p);
	return rc;
}
