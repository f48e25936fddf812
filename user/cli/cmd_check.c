/* SPDX-License-Identifier: MIT */
/*
 * spulse check: validate a spool with Snapshot (small files) or Replay
 * (large files, bounded memory) and print its counts.
 */
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Files larger than this are validated with Replay instead of Snapshot. */
#define CHECK_SNAPSHOT_MAX	(64ULL << 20)

static const char check_help[] =
"usage: spulse check FILE [--json] [--replay|--snapshot]\n"
"\n"
"Validate every record of FILE's complete prefix and print the counts per\n"
"record kind, extension records included (cpu records, off-CPU intervals,\n"
"triggers, and unknown extension kinds skipped by length). A file cut inside\n"
"its final record is accepted and reported as \"recovered from truncated\n"
"tail at offset N\" (N = end of the complete prefix). Corruption prints\n"
"\"FILE: offset N: reason\" on stderr, exit 1.\n"
"\n"
"  --json      print one JSON object instead of text\n"
"  --snapshot  force the in-memory reader (default below 64 MiB)\n"
"  --replay    force the bounded-memory sequential reader\n"
"\n"
"exit status: 0 valid (possibly recovered), 1 invalid or unreadable, 2 usage\n";

static void print_text(const char *file, const struct spulse_info *in,
		       const char *reader)
{
	printf("%s: valid SPULSE spool (checked with %s)\n", file, reader);
	printf("start_us               %llu\n", (unsigned long long)in->start_us);
	printf("interval_us            %llu\n",
	       (unsigned long long)in->interval_us);
	printf("modules                %llu\n", (unsigned long long)in->modules);
	printf("frames                 %llu\n", (unsigned long long)in->frames);
	printf("stacks                 %llu\n", (unsigned long long)in->stacks);
	printf("threads                %llu\n", (unsigned long long)in->threads);
	printf("samples                %llu\n", (unsigned long long)in->samples);
	printf("python                 %llu\n", (unsigned long long)in->python);
	printf("process-deactivations  %llu\n",
	       (unsigned long long)in->process_deactivations);
	printf("module-deactivations   %llu\n",
	       (unsigned long long)in->module_deactivations);
	printf("cpu-records            %llu\n",
	       (unsigned long long)in->cpu_records);
	printf("offcpu-intervals       %llu\n", (unsigned long long)in->offcpu);
	printf("triggers               %llu\n", (unsigned long long)in->triggers);
	printf("extensions-skipped     %llu\n",
	       (unsigned long long)in->ext_skipped);
	printf("complete_bytes         %llu\n",
	       (unsigned long long)in->complete_bytes);
	if (in->recovered_from_truncated_tail)
		printf("recovered from truncated tail at offset %llu\n",
		       (unsigned long long)in->complete_bytes);
}

static void print_json(const char *file, const struct spulse_info *in,
		       const char *reader, uint64_t file_bytes)
{
	printf("{\"file\":");
	cli_json_string(stdout, file, strlen(file));
	printf(",\"reader\":\"%s\",\"samples\":%llu,\"modules\":%llu,"
	       "\"frames\":%llu,\"stacks\":%llu,\"threads\":%llu,"
	       "\"python\":%llu,\"process_deactivations\":%llu,"
	       "\"module_deactivations\":%llu,\"cpu_records\":%llu,"
	       "\"offcpu\":%llu,\"triggers\":%llu,\"ext_skipped\":%llu,"
	       "\"recovered\":%s,"
	       "\"complete_bytes\":%llu,\"file_bytes\":%llu,"
	       "\"start_us\":%llu,\"interval_us\":%llu}\n",
	       reader, (unsigned long long)in->samples,
	       (unsigned long long)in->modules,
	       (unsigned long long)in->frames,
	       (unsigned long long)in->stacks,
	       (unsigned long long)in->threads,
	       (unsigned long long)in->python,
	       (unsigned long long)in->process_deactivations,
	       (unsigned long long)in->module_deactivations,
	       (unsigned long long)in->cpu_records,
	       (unsigned long long)in->offcpu,
	       (unsigned long long)in->triggers,
	       (unsigned long long)in->ext_skipped,
	       in->recovered_from_truncated_tail ? "true" : "false",
	       (unsigned long long)in->complete_bytes,
	       (unsigned long long)file_bytes,
	       (unsigned long long)in->start_us,
	       (unsigned long long)in->interval_us);
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "replay", no_argument, NULL, 'r' },
		{ "snapshot", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct spulse_read_opts opts = { .sz = sizeof(opts) };
	struct spulse_error err = { 0 };
	const struct spulse_info *info;
	bool json = false;
	int force = 0; /* 'r' or 's' */
	const char *file, *reader;
	struct stat st;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'r': case 's': force = c; break;
		case 'h': fputs(check_help, stdout); return EXIT_OK;
		default: return cli_usage_error("check", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("check", "expected exactly one FILE");
	file = argv[optind];
	if (stat(file, &st)) {
		perror(file);
		return EXIT_INVALID;
	}
	if (!force)
		force = (uint64_t)st.st_size > CHECK_SNAPSHOT_MAX ? 'r' : 's';

	if (force == 's') {
		struct spulse_snapshot *s;

		reader = "snapshot";
		rc = spulse_snapshot_open(file, &opts, &s, &err);
		if (rc < 0) {
			cli_print_read_error(file, rc, &err);
			return EXIT_INVALID;
		}
		info = spulse_snapshot_info(s);
		if (json)
			print_json(file, info, reader, (uint64_t)st.st_size);
		else
			print_text(file, info, reader);
		spulse_snapshot_close(s);
	} else {
		struct spulse_replay *r;

		reader = "replay";
		rc = spulse_replay_open(file, &opts, &r, &err);
		if (rc < 0) {
			cli_print_read_error(file, rc, &err);
			return EXIT_INVALID;
		}
		info = spulse_replay_info(r);
		if (json)
			print_json(file, info, reader, (uint64_t)st.st_size);
		else
			print_text(file, info, reader);
		spulse_replay_close(r);
	}
	return EXIT_OK;
}
