/* SPDX-License-Identifier: MIT */
/* spulse: dispatch to a subcommand. */
#include <string.h>

#include <spulse/version.h>

#include "cli.h"

int cmd_latency(int argc, char **argv);	/* cmd_latency.c */
int cmd_diff(int argc, char **argv);	/* cmd_diff.c */
int cmd_top(int argc, char **argv);	/* cmd_top.c */
int cmd_unwind(int argc, char **argv);	/* cmd_unwind.c */
int cmd_merge(int argc, char **argv);	/* cmd_merge.c */
int cmd_sql(int argc, char **argv);	/* cmd_sql.c */
int cmd_push(int argc, char **argv);	/* cmd_push.c */

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record, "record a process or command into a spool" },
	{ "check", cmd_check, "validate a spool and print its counts" },
	{ "dump", cmd_dump, "print every record as one line of text" },
	{ "report", cmd_report, "top functions by samples or off-CPU time" },
	{ "flame", cmd_flame, "flame graph (SVG) or folded stacks, on/off-CPU" },
	{ "latency", cmd_latency, "run-queue and off-CPU histograms, longest waits" },
	{ "export", cmd_export, "export as folded, JSON, perf-script, trace-event, pprof, speedscope" },
	{ "synth", cmd_synth, "write a deterministic synthetic profile" },
	{ "diff", cmd_diff, "compare two profiles function by function" },
	{ "top", cmd_top, "live top functions of a spool being written" },
	{ "unwind", cmd_unwind, "build or show unwind tables of ELF files" },
	{ "merge", cmd_merge, "merge spools of several hosts or recordings into one" },
	{ "sql", cmd_sql, "load spools into an SQLite database with query views" },
	{ "push", cmd_push, "push spools into ClickHouse (idempotent)" },
};

#define N_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: spulse COMMAND [ARGS]   (spulse COMMAND --help)\n"
		"       spulse --version\n\n"
		"spulse records and reads SPULSE sampling profiles.\n\n"
		"commands:\n");
	for (i = 0; i < N_SUBCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name,
			subcommands[i].summary);
	fprintf(f, "\nexit status: 0 ok, 1 invalid data or unreadable file, "
		"2 usage error\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("spulse %s\n", SPULSE_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < N_SUBCOMMANDS; i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "spulse: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
