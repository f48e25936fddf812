/* SPDX-License-Identifier: MIT */
/* spulse sql: spools into an SQLite database with query views. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "cli.h"
#include "store/sql_db.h"

int cmd_sql(int argc, char **argv);

static const char usage[] =
"NAME\n"
"    spulse sql - load spools into an SQLite database with query views\n"
"\n"
"SYNOPSIS\n"
"    spulse sql OUT.db IN... [-q] [--host NAME] [--kallsyms PATH]\n"
"               [--symfs DIR] [--debug-dir DIR] [--no-demangle]\n"
"\n"
"DESCRIPTION\n"
"    Adds each spool IN to the database OUT.db (created when missing) in\n"
"    one transaction per spool: recordings, threads, modules, symbolized\n"
"    frames (function, module, file, line, as spulse report names them),\n"
"    stack nodes, samples (absolute time in ns, cpu, thread, stack) and\n"
"    off-CPU intervals, plus views: top_functions, host_functions,\n"
"    recording_functions, thread_functions, folded_stacks, host_folded,\n"
"    stack_paths, host_summary, thread_summary, offcpu_functions,\n"
"    offcpu_folded, frame_symbols (docs/FLEET.md).\n"
"\n"
"    Incremental: a recording already in OUT.db (same recording id, or,\n"
"    for a spool without identity, the same SHA-256 of its bytes) is not\n"
"    added again; the other recordings of a spool are. A corrupt spool is\n"
"    reported (byte offset and reason) and leaves the database unchanged;\n"
"    the other inputs are still loaded, and the exit status is 1.\n"
"\n"
"OPTIONS\n"
"    -q, --quiet         no per-spool lines, only errors and the summary\n"
"    --host NAME         host of the inputs that carry no identity record\n"
"                        (default \"unknown\"; a spool's own identities win)\n"
"    --kallsyms PATH     kernel symbols for every IN (default:\n"
"                        IN.kallsyms beside each spool)\n"
"    --symfs DIR         look module files up under DIR first\n"
"    --debug-dir DIR     extra directory of separate debug files\n"
"    --no-demangle       keep C++/Rust names mangled\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse sql prof.db a.spulse b.spulse\n"
"    sqlite3 prof.db 'SELECT * FROM top_functions LIMIT 10'\n"
"    sqlite3 prof.db 'SELECT * FROM host_functions WHERE host = \"web1\"'\n"
"\n"
"EXIT STATUS\n"
"    0 every IN loaded (or already present), 1 an IN was unreadable or\n"
"    corrupt or the database could not be written, 2 usage error\n";

enum {
	OPT_KALLSYMS = 0x1200, OPT_SYMFS, OPT_DEBUG_DIR, OPT_NO_DEMANGLE,
	OPT_HOST,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_sql(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sql_load_opts o = { .sz = sizeof(o) };
	struct sql_load_result tot = { 0 };
	unsigned int bad = 0, skipped = 0, added = 0;
	bool quiet = false;
	double t0, dt;
	sqlite3 *db;
	int c, i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = true; break;
		case OPT_KALLSYMS: o.kallsyms = optarg; break;
		case OPT_SYMFS: o.symfs = optarg; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case OPT_NO_DEMANGLE: o.no_demangle = true; break;
		case OPT_HOST:
			if (!*optarg || strlen(optarg) > 255)
				return cli_usage_error("sql", "--host needs a "
						       "name of 1..255 bytes");
			o.host = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("sql", "unknown option");
		}
	}
	if (argc - optind < 2)
		return cli_usage_error("sql", "needs OUT.db and at least one "
				       "spool");
	if (sql_db_open(argv[optind], &db) < 0)
		return EXIT_INVALID;
	t0 = now_s();
	for (i = optind + 1; i < argc; i++) {
		struct sql_load_result r;
		double t1 = now_s();

		if (sql_load_spool(db, argv[i], &o, &r) != EXIT_OK) {
			fprintf(stderr, "%s: not loaded (database unchanged "
				"by it)\n", argv[i]);
			bad++;
			continue;
		}
		if (!r.recordings_added) {
			skipped++;
			if (!quiet)
				printf("%s: already in %s (%llu recording%s), "
				       "nothing added\n", argv[i],
				       argv[optind],
				       (unsigned long long)r.recordings_present,
				       r.recordings_present == 1 ? "" : "s");
			continue;
		}
		added++;
		if (!quiet) {
			printf("%s: %llu recording%s added", argv[i],
			       (unsigned long long)r.recordings_added,
			       r.recordings_added == 1 ? "" : "s");
			if (r.recordings_present)
				printf(" (%llu already present)",
				       (unsigned long long)r.recordings_present);
			printf(": %llu samples, %llu off-CPU intervals, %llu "
			       "threads, %llu frames, %llu stack nodes, %llu "
			       "new functions, %llu new modules in %.3f s\n",
			       (unsigned long long)r.samples,
			       (unsigned long long)r.offcpu,
			       (unsigned long long)r.threads,
			       (unsigned long long)r.frames,
			       (unsigned long long)r.stacks,
			       (unsigned long long)r.functions,
			       (unsigned long long)r.modules, now_s() - t1);
		}
		tot.samples += r.samples;
		tot.offcpu += r.offcpu;
		tot.rows += r.rows;
	}
	dt = now_s() - t0;
	/* fold the write-ahead log back into the database file */
	sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	if (sqlite3_close(db) != SQLITE_OK)
		fprintf(stderr, "spulse sql: closing %s failed\n",
			argv[optind]);
	printf("spulse sql: %u spool%s added, %u already present, %u failed; "
	       "%llu samples, %llu intervals, %llu rows in %.3f s "
	       "(%.0f rows/s, %.0f samples/s)\n",
	       added, added == 1 ? "" : "s", skipped, bad,
	       (unsigned long long)tot.samples, (unsigned long long)tot.offcpu,
	       (unsigned long long)tot.rows, dt,
	       dt > 0 ? (double)tot.rows / dt : 0.0,
	       dt > 0 ? (double)tot.samples / dt : 0.0);
	return bad ? EXIT_INVALID : EXIT_OK;
}
