/* SPDX-License-Identifier: MIT */
/* spulse synth: write a deterministic synthetic profile (synth_model.c). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "synth_model.h"

static const char synth_help[] =
"usage: spulse synth -o FILE [--samples N] [--threads T] [--depth D]\n"
"                    [--seed S] [--kallsyms]\n"
"\n"
"Write a synthetic profile through the libspulse Recorder. The same\n"
"parameters always produce the same bytes. Shape: 1+(T-1)/3 processes (one\n"
"a CPython interpreter with Python runtime records), three modules each,\n"
"a random call tree per process with Zipf-weighted hot paths (shared\n"
"prefixes), kernel syscall/page-fault frames on top of about a fifth of the\n"
"stacks, truncated markers on stacks deeper than D, and a dozen events:\n"
"plugin remaps (module deactivation), exec (process deactivation, new comm),\n"
"Python leave/enter, one process exit.\n"
"\n"
"  -o, --output FILE  spool to write (overwritten)\n"
"  --samples N        samples (default 10000)\n"
"  --threads T        threads, 1..4096 (default 8)\n"
"  --depth D          max stack depth before truncation, 4..1024 (default 32)\n"
"  --seed S           PRNG seed (default 1)\n"
"  --kallsyms         also write FILE.kallsyms naming the synthetic kernel\n"
"                     functions (for spulse report/flame)\n"
"  --quiet            no summary line\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_kallsyms(const char *file)
{
	size_t n = strlen(file) + sizeof(".kallsyms");
	char *path = malloc(n);
	FILE *f;
	int rc;

	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s.kallsyms", file);
	f = fopen(path, "w");
	if (!f) {
		rc = -errno;
		perror(path);
		free(path);
		return rc;
	}
	rc = synth_write_kallsyms(f);
	if (fclose(f) && !rc)
		rc = -EIO;
	free(path);
	return rc;
}

int cmd_synth(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "samples", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "kallsyms", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct synth_params p = { .samples = 10000, .threads = 8, .depth = 32,
				  .seed = 1 };
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	struct spulse_recorder *rec;
	const char *out = NULL;
	bool kallsyms = false, quiet = false;
	uint64_t v, bytes;
	double t0, dt;
	int c, rc, rc2;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n':
			if (!cli_parse_u64("--samples", optarg, &p.samples))
				return EXIT_USAGE;
			break;
		case 't':
			if (!cli_parse_u64("--threads", optarg, &v))
				return EXIT_USAGE;
			if (v < 1 || v > 4096)
				return cli_usage_error("synth",
					"--threads must be 1..4096");
			p.threads = (uint32_t)v;
			break;
		case 'd':
			if (!cli_parse_u64("--depth", optarg, &v))
				return EXIT_USAGE;
			if (v < 4 || v > SPULSE_MAX_DEPTH)
				return cli_usage_error("synth",
					"--depth must be 4..%d", SPULSE_MAX_DEPTH);
			p.depth = (uint32_t)v;
			break;
		case 's':
			if (!cli_parse_u64("--seed", optarg, &p.seed))
				return EXIT_USAGE;
			break;
		case 'k': kallsyms = true; break;
		case 'q': quiet = true; break;
		case 'h': fputs(synth_help, stdout); return EXIT_OK;
		default: return cli_usage_error("synth", "bad option");
		}
	}
	if (!out)
		return cli_usage_error("synth", "-o FILE is required");
	if (optind != argc)
		return cli_usage_error("synth", "unexpected argument '%s'",
				       argv[optind]);

	ro.start_us = synth_start_us();
	ro.interval_us = synth_interval_us();
	ro.flush_bytes = 64 << 10;
	ro.truncate = true;
	rc = spulse_recorder_open(out, &ro, &rec);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", out, strerror(-rc));
		return EXIT_INVALID;
	}
	t0 = now_s();
	rc = synth_generate(rec, &p);
	bytes = spulse_recorder_bytes(rec);
	rc2 = spulse_recorder_close(rec);
	dt = now_s() - t0;
	if (rc >= 0)
		rc = rc2;
	if (rc < 0) {
		fprintf(stderr, "spulse synth: %s: %s\n", out, strerror(-rc));
		return EXIT_INVALID;
	}
	if (kallsyms && write_kallsyms(out) < 0)
		return EXIT_INVALID;
	if (!quiet)
		printf("%s: %llu samples, %llu bytes, %.2f bytes/sample, "
		       "%.3f s, %.0f samples/s\n", out,
		       (unsigned long long)p.samples,
		       (unsigned long long)bytes,
		       p.samples ? (double)bytes / (double)p.samples : 0.0,
		       dt, dt > 0 ? (double)p.samples / dt : 0.0);
	return EXIT_OK;
}
