/* SPDX-License-Identifier: MIT */
/* spulse flame: SVG flame graph or folded stacks. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "cli.h"

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

/**
 * cli_write_tree() - count, build the call tree and write it
 * @p: opened profile
 * @out: output path or NULL for stdout
 * @folded: folded stacks instead of SVG
 * @title: SVG title
 *
 * Return: exit code.
 */
int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers);

static int build_wakers(struct calltree *t, struct profile *p)
{
	struct spulse_offcpu *iv;
	size_t n;
	int rc;

	if (profile_load_offcpu(p, &iv, &n) != EXIT_OK) {
		memset(t, 0, sizeof(*t));
		return -EBADMSG;
	}
	rc = calltree_build_wakers(t, p, iv, n);
	free(iv);
	return rc;
}

int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers)
{
	struct calltree t;
	FILE *f = stdout;
	int rc;

	if (p->offcpu)
		profile_note_no_offcpu(p);
	if (wakers) {
		rc = build_wakers(&t, p);
	} else {
		rc = profile_count(p);
		if (rc != EXIT_OK)
			return rc;
		rc = calltree_build(&t, p);
	}
	if (rc < 0) {
		fprintf(stderr, "%s: cannot build call tree: %s\n", p->file,
			strerror(-rc));
		calltree_free(&t);
		return EXIT_INVALID;
	}
	calltree_sort(&t);
	if (out && strcmp(out, "-")) {
		f = fopen(out, "w");
		if (!f) {
			perror(out);
			calltree_free(&t);
			return EXIT_INVALID;
		}
	}
	rc = folded ? calltree_write_folded(&t, f) :
		      calltree_write_svg(&t, f, title);
	if (f != stdout && fclose(f) && !rc)
		rc = -EIO;
	calltree_free(&t);
	if (rc < 0) {
		fprintf(stderr, "%s: write failed\n", out ? out : "stdout");
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "folded", no_argument, NULL, 'f' },
		PROFILE_LONGOPTS,
		PROFILE_OFFCPU_LONGOPTS,
		{ "wakers", no_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL, *title = NULL;
	struct profile p = { 0 };
	bool folded = false, wakers = false;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		rc = profile_option(&p, c, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': folded = true; break;
		case 't': title = optarg; break;
		case 'w': wakers = p.offcpu = true; break;
		case 'h': fputs(flame_help, stdout); return EXIT_OK;
		default: return cli_usage_error("flame", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("flame", "expected exactly one FILE");
	rc = profile_check_offcpu_opts(&p, "flame");
	if (rc != EXIT_OK)
		return rc;
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK)
		rc = cli_write_tree(&p, out, folded,
				    title ? title : argv[optind], wakers);
	profile_close(&p);
	return rc;
}
