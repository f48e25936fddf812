/* SPDX-License-Identifier: MIT */
/* spulse flame: SVG flame graph or folded stacks. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "cli.h"
#include "svg.h"

static const char flame_help[] =
"usage: spulse flame FILE [-o OUT.svg] [--folded] [--pid P]\n"
"                    [--kallsyms PATH] [--symfs DIR] [--title TEXT]\n"
"                    [--off-cpu | --wakers] [--state S,D,...]\n"
"                    [--metric offcpu|blocked|runq]\n"
"\n"
"Without --folded, write a self-contained SVG flame graph (no scripts;\n"
"hover a box for its name, samples and share): callers below callees,\n"
"widths proportional to samples, user frames red/yellow, kernel frames\n"
"orange, [truncated] grey. With --folded, write Brendan Gregg's folded\n"
"stacks instead: one \"root;...;leaf count\" line per distinct stack.\n"
"Symbolization as in spulse report.\n"
"\n"
"  -o, --output OUT  output file (default: standard output)\n"
"  --folded          folded stacks instead of SVG\n"
"  --pid P           only samples of process P\n"
"  --kallsyms PATH   kernel symbols (default FILE.kallsyms when present)\n"
"  --symfs DIR    look module files up under DIR first (DIR/PATH)\n"
"  --title TEXT      SVG title (default: FILE)\n"
"\n"
"Off-CPU (spools recorded with offcpu=1):\n"
"  --off-cpu         blocked-time flame graph: the stacks at switch-out,\n"
"                    widths in ns of off-CPU time, blue/cyan palette;\n"
"                    folded counts are nanoseconds\n"
"  --wakers          as --off-cpu, and above each blocked stack a \"--\"\n"
"                    frame and the waker's stack top-down (leaf first,\n"
"                    as bcc offwaketime); waker frames violet\n"
"  --state S,D,...   only intervals that left in these states (R S D T t\n"
"                    X Z P I; default all)\n"
"  --metric M        offcpu = blocked + run-queue time (default),\n"
"                    blocked = switch-out to wakeup, runq = wakeup to run\n";

struct flame_opts {
	const char *out, *title;
	bool folded, wakers, inverted, diff;
	int root;		/* 0, 'c', 'p', 't' (--root comm|pid|tid) */
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

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "folded", no_argument, NULL, 'f' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "wakers", no_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		{ "inverted", no_argument, NULL, 'i' },
		{ "root", required_argument, NULL, 'r' },
		{ "diff", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct flame_opts o = { 0 };
	struct profile p = { 0 };
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
		case 'r':
			if (!strcmp(optarg, "comm"))
				o.root = 'c';
			else if (!strcmp(optarg, "pid"))
				o.root = 'p';
			else if (!strcmp(optarg, "tid"))
				o.root = 't';
			else
				rc = cli_usage_error("flame", "--root must be "
						     "comm, pid or tid");
			break;
		case 'h': fputs(flame_help, stdout); goto out;
		default: rc = cli_usage_error("flame", "bad option");
		}
		if (rc != EXIT_OK)
			goto out;
	}
	nfiles = argc - optind;
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
	profile_close(&p);
	return rc;
}
