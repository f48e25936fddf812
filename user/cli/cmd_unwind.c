/* SPDX-License-Identifier: MIT */
/*
 * spulse unwind: build unwind tables of ELF files into the build-id cache,
 * or show one file's table (rows, the row for one address, counts per
 * kind, size). The tables are those spulse.ko unwinds user stacks with;
 * docs/UNWIND.md describes them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "unwind/unwind_build.h"

int cmd_unwind(int argc, char **argv);

static const char unwind_help[] =
"NAME\n"
"    spulse unwind - build or show the unwind tables of ELF files\n"
"\n"
"SYNOPSIS\n"
"    spulse unwind build FILE... [-o CACHE_DIR] [--debug-dir DIR] [--debuginfod]\n"
"    spulse unwind show FILE [--at ADDR] [--summary] [--debug-dir DIR]\n"
"                       [--debuginfod]\n"
"    spulse unwind --help\n"
"\n"
"DESCRIPTION\n"
"    spulse.ko unwinds user stacks of code built without frame pointers\n"
"    with compact tables compiled from the program's call-frame\n"
"    information (.eh_frame, and .debug_frame when present, also from a\n"
"    separate debug file found by build-id). Each table row covers an\n"
"    address range of the ELF file and says how to find the caller's frame\n"
"    there: CFA = SP + n or BP + n, the lazy PLT stub, a realigned stack\n"
"    (CFA read from BP), a signal trampoline, the outermost frame (the\n"
"    stack is complete), no CFI (frame-pointer step) or CFI the table\n"
"    cannot express (the stack is truncated there). docs/UNWIND.md\n"
"    describes the format.\n"
"\n"
"    build compiles each FILE's table and stores it in the cache by\n"
"    build-id (CACHE_DIR/xx/rest.sut); a valid cached table is reused, a\n"
"    damaged one is rebuilt. It prints one line per file: the build-id,\n"
"    rows, bytes, and whether the table came from the cache (\"cached\"),\n"
"    was built and stored, or could not be stored (\"NOT cached\").\n"
"\n"
"    show builds FILE's table (not cached) and prints its build-id, covered\n"
"    range, rows, size in bytes (12 per row, and the whole ADD message for\n"
"    debugfs spulse/unwind), build time and rows per kind, then every row\n"
"    as \"START END KIND CFA_OFF BP_OFF\" (hex ELF addresses, END exclusive;\n"
"    the caller's BP is at CFA + BP_OFF, 0 = unchanged), or only the row\n"
"    covering ADDR.\n"
"\n"
"OPTIONS\n"
"    -o, --cache DIR   cache directory (default $XDG_CACHE_HOME/spulse/unwind,\n"
"                      else ~/.cache/spulse/unwind)\n"
"    --at ADDR         show only the row covering ELF address ADDR (decimal\n"
"                      or 0x hex; exit 1 when outside the table)\n"
"    --summary         show the header and counts, not the rows\n"
"    --debug-dir DIR   separate debug files (default /usr/lib/debug)\n"
"    --debuginfod      ask debuginfod (DEBUGINFOD_URLS) for a debug file\n"
"                      when none is found locally\n"
"    -h, --help        this text\n"
"\n"
"EXAMPLES\n"
"    spulse unwind show /usr/bin/python3.11 --summary\n"
"    spulse unwind show /lib/x86_64-linux-gnu/libc.so.6 --at 0x3c050\n"
"    spulse unwind build /usr/bin/xz /usr/bin/gzip -o /var/cache/spulse\n"
"\n"
"EXIT STATUS\n"
"    0  success\n"
"    1  a FILE could not be read or has no usable CFI, a table could not\n"
"       be written to the cache (build), or ADDR is outside the table (show)\n"
"    2  usage error\n";

static const char *const kind_names[SPULSE_UT_KIND_MAX + 1] = {
	"none", "cfa_sp", "cfa_bp", "plt", "cfa_deref_bp", "signal", "end",
	"unknown",
};

static const char *kind_name(unsigned k)
{
	return k <= SPULSE_UT_KIND_MAX ? kind_names[k] : "?";
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void hex_id(const struct sut_table *t, char *buf, size_t n)
{
	const uint8_t *id;
	size_t len = sut_table_build_id(t, &id), i;

	if (!len) {
		snprintf(buf, n, "none");
		return;
	}
	for (i = 0; i < len && 2 * i + 2 < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
}

static void print_row(const struct spulse_ut_row *rows, uint32_t i,
		      uint32_t n, uint64_t lo, uint64_t hi)
{
	uint64_t end = i + 1 < n ? lo + rows[i + 1].start : hi;

	printf("%016" PRIx64 " %016" PRIx64 " %-12s %d %d\n",
	       lo + rows[i].start, end, kind_name(rows[i].kind),
	       rows[i].cfa_off, rows[i].bp_off);
}

struct unwind_args {
	const char *cache;
	const char *at;
	bool summary;
	struct sut_build_opts opts;
};

static int do_show(const char *file, const struct unwind_args *a)
{
	char err[512], id[2 * SPULSE_UT_BUILD_ID_MAX + 1];
	const struct spulse_ut_row *rows;
	uint64_t counts[SPULSE_UT_KIND_MAX + 1] = { 0 };
	uint64_t lo, hi, addr = 0;
	struct sut_table *t;
	uint32_t n, i;
	double t0, ms;
	void *msg;
	size_t msg_len;
	int rc;

	if (a->at && !cli_parse_u64("--at", a->at, &addr))
		return EXIT_USAGE;
	t0 = now_ms();
	rc = sut_build_file(file, &a->opts, &t, err, sizeof(err));
	ms = now_ms() - t0;
	if (rc) {
		fprintf(stderr, "spulse unwind: %s\n", err);
		return EXIT_INVALID;
	}
	n = sut_table_rows(t, &rows, &lo, &hi);
	for (i = 0; i < n; i++)
		counts[rows[i].kind <= SPULSE_UT_KIND_MAX ? rows[i].kind : 0]++;
	rc = sut_table_add_msg(t, 1, &msg, &msg_len);
	if (rc)
		msg_len = 0;
	else
		free(msg);
	hex_id(t, id, sizeof(id));
	printf("file       %s\n", file);
	printf("build-id   %s\n", id);
	printf("range      %016" PRIx64 "..%016" PRIx64 " (%" PRIu64 " bytes)\n",
	       lo, hi, hi - lo);
	printf("rows       %u\n", n);
	printf("bytes      %zu (ADD message %zu)\n",
	       (size_t)n * sizeof(*rows), msg_len);
	printf("build_ms   %.1f\n", ms);
	printf("kinds     ");
	for (i = 0; i <= SPULSE_UT_KIND_MAX; i++)
		printf(" %s=%" PRIu64, kind_names[i], counts[i]);
	printf("\n");
	rc = EXIT_OK;
	if (a->at) {
		const struct spulse_ut_row *r = sut_table_lookup(t, addr);

		if (!r) {
			fprintf(stderr, "spulse unwind: %s: address 0x%" PRIx64
				" is outside the table [0x%" PRIx64 ", 0x%" PRIx64 ")\n",
				file, addr, lo, hi);
			rc = EXIT_INVALID;
		} else {
			print_row(rows, (uint32_t)(r - rows), n, lo, hi);
		}
	} else if (!a->summary) {
		printf("rows:\n");
		for (i = 0; i < n; i++)
			print_row(rows, i, n, lo, hi);
	}
	sut_table_free(t);
	return rc;
}

static int do_build(int nfiles, char **files, const struct unwind_args *a)
{
	char dflt[4096], err[512], id[2 * SPULSE_UT_BUILD_ID_MAX + 1];
	char path[4200];
	const char *dir = a->cache, *how;
	struct stat st;
	int i, rc = EXIT_OK;

	if (!dir) {
		const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
		char *p;

		if (x && *x)
			snprintf(dflt, sizeof(dflt), "%s/spulse/unwind", x);
		else if (home && *home)
			snprintf(dflt, sizeof(dflt), "%s/.cache/spulse/unwind", home);
		else
			return cli_usage_error("unwind", "no HOME: give -o CACHE_DIR");
		dir = dflt;
		/* Create the default's parents (mkdir -p); -o DIR's must exist. */
		for (p = strchr(dflt + 1, '/'); p; p = strchr(p + 1, '/')) {
			*p = '\0';
			mkdir(dflt, 0755);
			*p = '/';
		}
	}
	for (i = 0; i < nfiles; i++) {
		struct sut_table *t;
		bool hit;
		uint32_t n;
		double t0 = now_ms();
		int r = sut_cache_load(dir, files[i], &a->opts, &t, &hit, err,
				       sizeof(err));

		if (r) {
			fprintf(stderr, "spulse unwind: %s\n", err);
			rc = EXIT_INVALID;
			continue;
		}
		n = sut_table_rows(t, NULL, NULL, NULL);
		hex_id(t, id, sizeof(id));
		if (hit)
			how = "cached";
		else if (sut_cache_file(dir, t, path, sizeof(path)) == -ENOENT)
			how = "built (no build-id: not cached)";
		else if (stat(path, &st) == 0)
			how = "built and cached";
		else {
			fprintf(stderr, "spulse unwind: %s: cannot write %s\n",
				files[i], path);
			how = "built, NOT cached";
			rc = EXIT_INVALID;
		}
		printf("%s: build-id %s, %u rows, %zu bytes, %s in %.1f ms\n",
		       files[i], id, n, (size_t)n * sizeof(struct spulse_ut_row),
		       how, now_ms() - t0);
		sut_table_free(t);
	}
	return rc;
}

int cmd_unwind(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cache", required_argument, NULL, 'o' },
		{ "at", required_argument, NULL, 'a' },
		{ "summary", no_argument, NULL, 's' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "debuginfod", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct unwind_args a = { .opts = { .sz = sizeof(struct sut_build_opts) } };
	const char *sub;
	char **files;
	int c, nfiles;

	if (argc < 2) {
		fputs(unwind_help, stderr);
		return EXIT_USAGE;
	}
	if (cli_is_help(argv[1])) {
		fputs(unwind_help, stdout);
		return EXIT_OK;
	}
	sub = argv[1];
	if (strcmp(sub, "build") && strcmp(sub, "show"))
		return cli_usage_error("unwind", "unknown subcommand '%s'", sub);
	argc--;
	argv++;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a.cache = optarg;
			break;
		case 'a':
			a.at = optarg;
			break;
		case 's':
			a.summary = true;
			break;
		case 'd':
			a.opts.debug_dir = optarg;
			break;
		case 'D':
			a.opts.use_debuginfod = true;
			break;
		case 'h':
			fputs(unwind_help, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("unwind", "bad option");
		}
	}
	/* GNU getopt permutes: options may also follow the files. */
	files = argv + optind;
	nfiles = argc - optind;
	if (!strcmp(sub, "show")) {
		if (nfiles != 1)
			return cli_usage_error("unwind", "show takes one FILE");
		if (a.cache)
			return cli_usage_error("unwind", "-o is for build");
		return do_show(files[0], &a);
	}
	if (nfiles < 1)
		return cli_usage_error("unwind", "build takes FILE...");
	if (a.at || a.summary)
		return cli_usage_error("unwind", "--at/--summary are for show");
	return do_build(nfiles, files, &a);
}
