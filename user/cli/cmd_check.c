/* SPDX-License-Identifier: MIT */
/*
 * spulse check: validate a spool with Snapshot (small files) or Replay
 * (large files, bounded memory) and print its counts.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Files larger than this are validated with Replay instead of Snapshot. */
#define CHECK_SNAPSHOT_MAX	(64ULL << 20)

static const char check_help[] =
"NAME\n"
"    spulse check - validate a spool and print its record counts\n"
"\n"
"SYNOPSIS\n"
"    spulse check FILE [--json] [--replay|--snapshot]\n"
"\n"
"DESCRIPTION\n"
"    Validates every record of FILE's complete prefix (docs/FORMAT.md) and\n"
"    prints the header's start_us and interval_us, the count of each record\n"
"    kind (modules, frames, stacks, threads, samples, Python, deactivations,\n"
"    and extension records: cpu records, off-CPU intervals, triggers,\n"
"    unknown extension kinds skipped by length), complete_bytes and the\n"
"    recording identities (host, recording id, start, kernel, machine-id,\n"
"    boot-id; docs/FLEET.md), one line each.\n"
"\n"
"    A file cut inside its final record (a recorder still writing, or killed)\n"
"    is accepted and reported as \"recovered from truncated tail at offset N\",\n"
"    N = the end of the complete prefix. Corruption (a bad tag, a duplicate\n"
"    or forward id, a frame outside its module, an overlong varint, ...)\n"
"    prints \"FILE: offset N: reason\" on stderr, N the byte offset inside the\n"
"    offending record. Files up to 64 MiB are read with Snapshot (in\n"
"    memory), larger ones with Replay (bounded memory).\n"
"\n"
"OPTIONS\n"
"    --json      one JSON object on one line instead of the text: file,\n"
"                reader, every count, recovered, complete_bytes, file_bytes,\n"
"                start_us, interval_us, identities and sources (a list of\n"
"                {source, host, recording_id, start_us, machine_id,\n"
"                boot_id, kernel})\n"
"    --snapshot  force the in-memory reader\n"
"    --replay    force the bounded-memory sequential reader\n"
"    -h, --help  this text\n"
"\n"
"EXAMPLES\n"
"    spulse check app.spulse\n"
"    spulse check --json app.spulse | python3 -m json.tool\n"
"    spulse check --replay huge.spulse\n"
"\n"
"EXIT STATUS\n"
"    0 valid (possibly recovered from a truncated tail), 1 invalid or\n"
"    unreadable, 2 usage error.\n";

/* One line per identity (FORMAT.md 3.10 kind 4, docs/FLEET.md). */
static void print_identities_text(const struct spulse_defs *d)
{
	uint32_t i, n = spulse_defs_identity_count(d);
	struct spulse_identity id;
	char hex[33];

	for (i = 0; i < n; i++) {
		if (spulse_defs_identity(d, i, &id))
			continue;
		spulse_recording_id_hex(id.recording_id, hex);
		/* strings escaped (CLI.md "Printing spool text") */
		printf("identity %u              host=", i);
		cli_put_text(stdout, id.host, id.host_len);
		printf(" recording=%s start_us=%llu kernel=", hex,
		       (unsigned long long)id.start_us);
		cli_put_text(stdout, id.kernel, id.kernel_len);
		fputs(" machine_id=", stdout);
		cli_put_text(stdout, id.machine_id, id.machine_id_len);
		fputs(" boot_id=", stdout);
		cli_put_text(stdout, id.boot_id, id.boot_id_len);
		putchar('\n');
	}
}

static void print_identities_json(const struct spulse_defs *d)
{
	uint32_t i, n = spulse_defs_identity_count(d);
	struct spulse_identity id;
	char hex[33];

	printf(",\"identities\":%u,\"sources\":[", n);
	for (i = 0; i < n; i++) {
		if (spulse_defs_identity(d, i, &id))
			continue;
		spulse_recording_id_hex(id.recording_id, hex);
		printf("%s{\"source\":%u,\"host\":", i ? "," : "", i);
		cli_json_string(stdout, id.host, id.host_len);
		printf(",\"recording_id\":\"%s\",\"start_us\":%llu,"
		       "\"machine_id\":", hex, (unsigned long long)id.start_us);
		cli_json_string(stdout, id.machine_id, id.machine_id_len);
		printf(",\"boot_id\":");
		cli_json_string(stdout, id.boot_id, id.boot_id_len);
		printf(",\"kernel\":");
		cli_json_string(stdout, id.kernel, id.kernel_len);
		putchar('}');
	}
	putchar(']');
}

static void print_text(const char *file, const struct spulse_info *in,
		       const char *reader, const struct spulse_defs *d)
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
	printf("identities             %llu\n",
	       (unsigned long long)in->identities);
	print_identities_text(d);
	printf("complete_bytes         %llu\n",
	       (unsigned long long)in->complete_bytes);
	if (in->recovered_from_truncated_tail)
		printf("recovered from truncated tail at offset %llu\n",
		       (unsigned long long)in->complete_bytes);
}

static void print_json(const char *file, const struct spulse_info *in,
		       const char *reader, uint64_t file_bytes,
		       const struct spulse_defs *d)
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
	       "\"start_us\":%llu,\"interval_us\":%llu",
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
	print_identities_json(d);
	printf("}\n");
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
		struct spulse_error e = { 0 };

		cli_print_read_error(file, -errno, &e);
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
			print_json(file, info, reader, (uint64_t)st.st_size,
				   spulse_snapshot_defs(s));
		else
			print_text(file, info, reader, spulse_snapshot_defs(s));
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
			print_json(file, info, reader, (uint64_t)st.st_size,
				   spulse_replay_defs(r));
		else
			print_text(file, info, reader, spulse_replay_defs(r));
		spulse_replay_close(r);
	}
	return EXIT_OK;
}
