/* SPDX-License-Identifier: MIT */
/* spulse flame: SVG flame graph or folded stacks. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/calltree.h"
#include "store/ch_query.h"
#include "cli.h"
#include "export/svg.h"

static const char flame_help[] =
"NAME\n"
"    spulse flame - flame graph (interactive SVG) or folded stacks\n"
"\n"
"SYNOPSIS\n"
"    spulse flame FILE [-o OUT.svg] [--folded] [--title TEXT] [--inverted]\n"
"                 [--root comm|pid|tid|host] [FILTERS] [--kallsyms PATH]\n"
"                 [--symfs DIR] [--inline] [--no-demangle] [--debug-dir DIR]\n"
"                 [--off-cpu | --wakers] [--state S,D,...]\n"
"                 [--metric offcpu|blocked|runq]\n"
"    spulse flame --diff BEFORE AFTER [-o OUT.svg] [--folded] [options]\n"
"    spulse flame --clickhouse URL [--folded] [--database DB] [--host H,..]\n"
"                 [--time START,END] [-o OUT] [--title T] [--inverted]\n"
"\n"
"DESCRIPTION\n"
"    Writes a self-contained SVG flame graph: the root \"all\" at the\n"
"    bottom, callers below callees, widths proportional to samples, each\n"
"    box titled \"name (N samples, P%)\". An embedded script (as\n"
"    FlameGraph's flamegraph.pl) makes it interactive in a browser: hover\n"
"    a box for its details line at the bottom, click it to zoom (its\n"
"    callers stay full width, faded), \"Reset Zoom\" (or Escape) to go\n"
"    back, \"Search\" (or Ctrl-F, /) for a regular expression: matching\n"
"    boxes turn magenta and \"Matched: P%\" shows their share of all\n"
"    samples (nested matches counted once). URL parameters do the same\n"
"    on load: OUT.svg?z=NAME zooms to the widest box named NAME, u=1\n"
"    resets the zoom, s=REGEX searches, h=NAME shows NAME's details\n"
"    line (e.g. app.svg?z=main&s=malloc).\n"
"\n"
"    Palettes: user frames red/yellow, kernel frames green,\n"
"    [truncated] grey, --root frames khaki, off-CPU frames blue (user)\n"
"    and cyan (kernel), wakers violet, with a legend of the ones drawn.\n"
"    Boxes narrower than 0.3 px are left out.\n"
"\n"
"    With --folded, Brendan Gregg's folded stacks instead: one\n"
"    \"root;...;leaf count\" line per distinct stack (';' inside a name\n"
"    becomes ':'), for flamegraph.pl, speedscope or inferno.\n"
"    Symbolization as in spulse report.\n"
"\n"
"    With --clickhouse URL (no FILE), the flame graph (or --folded\n"
"    stacks) of every spool pushed with spulse push, the stacks summed by\n"
"    ClickHouse (GROUP BY on the server), as the local flame draws them;\n"
"    --database DB (default spulse), --host H,.. and --time (from the\n"
"    earliest pushed sample) select samples (docs/FLEET.md).\n"
"\n"
"OPTIONS\n"
"    -o, --output OUT    output file (default: standard output)\n"
"    --folded            folded stacks instead of SVG\n"
"    --title TEXT        SVG title (default: FILE, or \"BEFORE -> AFTER\")\n"
"    --inverted          icicle graph: root at the top, callees below\n"
"    --root comm|pid|tid|host\n"
"                        a first frame per thread name, per process\n"
"                        (\"COMM PID\"), per thread (\"COMM PID/TID\") or per\n"
"                        host (a merged spool's hosts, docs/FLEET.md)\n"
"                        above \"all\", so each gets its own tower\n"
"    --diff              two FILEs: a differential flame graph as\n"
"                        FlameGraph's difffolded.pl + flamegraph.pl: the\n"
"                        widths are AFTER's, the colour is the change of\n"
"                        each box's value from BEFORE scaled to AFTER's\n"
"                        total (red grew, blue shrank, white unchanged,\n"
"                        stronger = larger change); titles add \"before N\n"
"                        samples, P%; +D%\". With --folded: \"stack\n"
"                        COUNT_BEFORE COUNT_AFTER\" lines (difffolded)\n"
"\n"
"  Filters (as in spulse report): --pid P,.., --tid T,.., --comm C,..,\n"
"    --host H,.. (hosts of a merged spool, docs/FLEET.md),\n"
"    --dso D,.., --time START,END (seconds from the earliest sample),\n"
"    --kernel (kernel frames only), --user (user frames only)\n"
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
"  Off-CPU (spools recorded with offcpu=1):\n"
"    --off-cpu           blocked-time flame graph: the stacks at\n"
"                        switch-out, widths in ns of off-CPU time, boxes\n"
"                        \"name (X.XXX ms, P%)\"; folded counts are ns\n"
"    --wakers            as --off-cpu, and above each blocked stack a \"--\"\n"
"                        frame and the waker's stack top-down (leaf\n"
"                        first, as bcc offwaketime); waker frames violet\n"
"    --state S,D,...     only intervals that left in these states\n"
"    --metric M          offcpu = blocked + run-queue time (default),\n"
"                        blocked = switch-out to wakeup, runq = wakeup to\n"
"                        switch-in\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse flame app.spulse -o app.svg          (open in a browser)\n"
"    spulse flame app.spulse --root tid --user -o threads.svg\n"
"    spulse flame app.spulse --inverted --dso libc.so.6 -o icicle.svg\n"
"    spulse flame --diff before.spulse after.spulse -o diff.svg\n"
"    spulse flame app.spulse --folded | flamegraph.pl > app.svg\n"
"    spulse flame off.spulse --wakers -o wakers.svg\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 invalid or unreadable spool or unwritable output,\n"
"    2 usage error.\n";

struct flame_opts {
	const char *out, *title;
	bool folded, wakers, inverted, diff;
	int root;		/* 0, 'c', 'p', 't', 'H' (--root comm|pid|tid|host) */
};

/**
 * cli_write_tree() - count, build the call tree and write it
 * @p: opened profile
 * @out: output path or NULL for stdout
 * @folded: folded stacks instead of SVG
 * @title: SVG title
 * @wakers: off-CPU stacks with their wakers (flame --wakers)
 *
 * Used by spulse export --format folded. Return: exit code.
 */
int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers);

/* Count @p and build its tree per @o (root frames, wakers). */
static int build_tree(struct calltree *t, struct profile *p,
		      const struct flame_opts *o)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if (p->offcpu)
		profile_note_no_offcpu(p);
	if (o->wakers) {
		struct spulse_offcpu *iv;
		size_t n;

		if (profile_load_offcpu(p, &iv, &n) != EXIT_OK)
			return EXIT_INVALID;
		rc = calltree_build_wakers(t, p, iv, n, o->root);
		free(iv);
	} else {
		rc = profile_count(p);
		if (rc != EXIT_OK)
			return rc;
		rc = calltree_build(t, p, o->root);
	}
	if (rc == -EOVERFLOW) {
		fprintf(stderr, "%s: the selected off-CPU intervals total more "
			"than 2^64 ns (584 years), which a flame graph cannot "
			"weigh without wrapping; select fewer (--time, --tid, "
			"--state)\n", p->file);
		return EXIT_INVALID;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: cannot build call tree: %s\n", p->file,
			strerror(-rc));
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

static int write_tree(struct calltree *t, const struct flame_opts *o)
{
	struct svg_opts so = { .title = o->title, .inverted = o->inverted,
			       .diff = o->diff };
	FILE *f = stdout;
	int rc;

	calltree_sort(t);
	if (o->out && strcmp(o->out, "-")) {
		f = fopen(o->out, "w");
		if (!f) {
			perror(o->out);
			return EXIT_INVALID;
		}
	}
	rc = o->folded ? calltree_write_folded(t, f) : svg_write(t, f, &so);
	if (f != stdout && fclose(f) && !rc)
		rc = -EIO;
	if (rc < 0) {
		fprintf(stderr, "%s: write failed\n", o->out ? o->out : "stdout");
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers)
{
	struct flame_opts o = { .out = out, .title = title, .folded = folded,
				.wakers = wakers };
	struct calltree t;
	int rc = build_tree(&t, p, &o);

	if (rc == EXIT_OK)
		rc = write_tree(&t, &o);
	calltree_free(&t);
	return rc;
}

/* flame --diff A B: widths of B, colours by the change from A. */
static int flame_diff(struct profile *pb, const char *fa, const char *fb,
		      struct flame_opts *o)
{
	struct calltree ta, tb;
	struct profile pa;
	char title[512];
	int rc;

	memset(&ta, 0, sizeof(ta));
	memset(&tb, 0, sizeof(tb));
	if (profile_copy_options(&pa, pb) < 0) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	rc = profile_open(&pa, fa);
	if (rc == EXIT_OK)
		rc = build_tree(&ta, &pa, o);
	if (rc == EXIT_OK)
		rc = profile_open(pb, fb);
	if (rc == EXIT_OK)
		rc = build_tree(&tb, pb, o);
	if (rc == EXIT_OK && calltree_merge_base(&tb, &ta) < 0) {
		fprintf(stderr, "spulse: out of memory\n");
		rc = EXIT_INVALID;
	}
	if (rc == EXIT_OK) {
		if (!o->title) {
			snprintf(title, sizeof(title), "%s -> %s", fa, fb);
			o->title = title;
		}
		rc = write_tree(&tb, o);
	}
	calltree_free(&ta);
	calltree_free(&tb);
	profile_close(&pa);
	return rc;
}

/* --clickhouse: folded stacks summed on the server. */
static int flame_clickhouse(struct ch_query_opts *ch,
			    const struct flame_opts *o,
			    const struct profile *p, int nfiles)
{
	const struct filter *f = &p->filter;

	if (!ch->url)
		return cli_usage_error("flame", "--database needs "
				       "--clickhouse URL");
	if (nfiles)
		return cli_usage_error("flame", "--clickhouse takes no FILE");
	if (o->diff || o->wakers || o->root ||
	    p->offcpu || p->offcpu_opts || f->npids || f->ntids ||
	    f->ncomms || f->ndsos || f->frames || p->kallsyms || p->symfs ||
	    p->inline_frames || p->no_demangle || p->debug_dir)
		return cli_usage_error("flame", "--clickhouse supports "
				       "--folded, -o, --title, --host and "
				       "--time only");
	/* --host is the shared filter option (filter.h): the server filters too */
	for (size_t i = 0; i < f->nhosts; i++)
		if (ch_query_add_hosts(ch, f->hosts[i]) != 1)
			return EXIT_INVALID;
	ch->filter = f;
	ch->inverted = o->inverted;
	return ch_flame(ch, o->out, o->folded, o->title);
}

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "folded", no_argument, NULL, 'f' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		PROFILE_SYM_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "wakers", no_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		{ "inverted", no_argument, NULL, 'i' },
		{ "root", required_argument, NULL, 'r' },
		{ "diff", no_argument, NULL, 'd' },
		{ "clickhouse", required_argument, NULL, CH_OPT_CLICKHOUSE },
		{ "database", required_argument, NULL, CH_OPT_DATABASE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct flame_opts o = { 0 };
	struct profile p = { 0 };
	struct ch_query_opts ch = { 0 };
	int c, rc, nfiles;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		rc = profile_option(&p, c, optarg);
		if (rc == 1)
			continue;
		if (rc)
			goto out;
		rc = EXIT_OK;
		switch (c) {
		case 'o': o.out = optarg; break;
		case 'f': o.folded = true; break;
		case 't': o.title = optarg; break;
		case 'w': o.wakers = p.offcpu = true; break;
		case 'i': o.inverted = true; break;
		case 'd': o.diff = true; break;
		case CH_OPT_CLICKHOUSE: ch.url = optarg; break;
		case CH_OPT_DATABASE: ch.db = optarg; break;
		case CH_OPT_HOST:
			rc = ch_query_add_hosts(&ch, optarg);
			rc = rc == 1 ? EXIT_OK : rc;
			break;
		case 'r':
			if (!strcmp(optarg, "comm"))
				o.root = 'c';
			else if (!strcmp(optarg, "pid"))
				o.root = 'p';
			else if (!strcmp(optarg, "tid"))
				o.root = 't';
			else if (!strcmp(optarg, "host"))
				o.root = 'H';
			else
				rc = cli_usage_error("flame", "--root must be "
						     "comm, pid, tid or host");
			break;
		case 'h': fputs(flame_help, stdout); goto out;
		default: rc = cli_usage_error("flame", "bad option");
		}
		if (rc != EXIT_OK)
			goto out;
	}
	nfiles = argc - optind;
	/* an SVG is a file, not terminal text (as export --format pprof) */
	if (!o.folded && (!o.out || !strcmp(o.out, "-")) &&
	    isatty(STDOUT_FILENO)) {
		rc = cli_usage_error("flame", "the SVG is not for a terminal: "
				     "give -o FILE.svg, redirect stdout, or "
				     "use --folded");
		goto out;
	}
	if (ch.url || ch.db) {
		rc = flame_clickhouse(&ch, &o, &p, nfiles);
		goto out;
	}
	if (nfiles != (o.diff ? 2 : 1)) {
		rc = cli_usage_error("flame", o.diff ?
				     "--diff expects two FILEs (before, after)" :
				     "expected exactly one FILE");
		goto out;
	}
	rc = profile_check_offcpu_opts(&p, "flame");
	if (rc != EXIT_OK)
		goto out;
	p.by_thread = o.root != 0;
	if (o.diff) {
		rc = flame_diff(&p, argv[optind], argv[optind + 1], &o);
		goto out;
	}
	if (!o.title)
		o.title = argv[optind];
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK) {
		struct calltree t;

		rc = build_tree(&t, &p, &o);
		if (rc == EXIT_OK)
			rc = write_tree(&t, &o);
		calltree_free(&t);
	}
out:
	ch_query_free(&ch);
	profile_close(&p);
	return rc;
}
