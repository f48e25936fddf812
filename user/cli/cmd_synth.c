/* SPDX-License-Identifier: MIT */
/* spulse synth: write a deterministic synthetic profile (synth_model.c). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "synth/synth_model.h"

static const char synth_help[] =
"NAME\n"
"    spulse synth - write a deterministic synthetic profile\n"
"\n"
"SYNOPSIS\n"
"    spulse synth -o FILE [--samples N] [--threads T] [--depth D] [--seed S]\n"
"                 [--kallsyms] [--quiet] [--cpus C] [--off-cpu N]\n"
"                 [--triggers N] [--unknown-ext N] [--host NAME]\n"
"\n"
"DESCRIPTION\n"
"    Writes a synthetic profile through the libspulse Recorder. The same\n"
"    parameters always produce the same bytes (start_us 1767225600000000,\n"
"    interval_us 1000). Shape: 1+(T-1)/3 processes (one a CPython\n"
"    interpreter with Python runtime records), three modules each (paths\n"
"    under /synth/, never resolved against real files), a random call tree\n"
"    per process with Zipf-weighted hot paths (shared prefixes), kernel\n"
"    syscall/page-fault frames on top of about a fifth of the stacks,\n"
"    truncated markers on stacks deeper than D, and a dozen events: plugin\n"
"    remaps (module deactivation), exec (process deactivation, new comm),\n"
"    Python leave/enter, one process exit. Times advance 0.5 ms per sample\n"
"    plus 0-120 us of jitter (deltas vary but stay positive; interval and\n"
"    trigger records do go back on their own clock).\n"
"\n"
"    Extension records (docs/FORMAT.md 3.10). They come from a PRNG of their\n"
"    own: the samples are the same with or without them. Without these options\n"
"    the bytes are those of a spool without extension records.\n"
"\n"
"    A summary line (samples, bytes, bytes/sample, Recorder samples/s) goes to\n"
"    stdout unless --quiet.\n"
"\n"
"OPTIONS\n"
"    -o, --output FILE  spool to write (overwritten)\n"
"    --samples N        samples (default 10000)\n"
"    --threads T        threads, 1..4096 (default 8)\n"
"    --depth D          max stack depth before truncation, 4..1024 (default 32)\n"
"    --seed S           PRNG seed (default 1)\n"
"    --kallsyms         also write FILE.kallsyms naming the synthetic kernel\n"
"                       functions (for spulse report/flame/export)\n"
"    -q, --quiet        no summary line\n"
"    --host NAME        write an identity record (FORMAT.md 3.10 kind 4)\n"
"                       first: host NAME, kernel \"synth\", empty machine-id\n"
"                       and boot-id, a recording id made from NAME and the\n"
"                       seed (the same arguments give the same bytes); for\n"
"                       multi-host tests (spulse merge, sql, push)\n"
"    --cpus C           C CPUs, 1..65536: a cpu record before every sample\n"
"                       whose CPU differs from the previous one; each thread\n"
"                       stays on one CPU and migrates in 5% of its samples\n"
"    --off-cpu N        N off-CPU intervals spread evenly over the run, each\n"
"                       written when it closes (its switch-out time is\n"
"                       blocked + runq before the current sample time, so the\n"
"                       event clock goes back now and then). Mix: 30% R\n"
"                       preempted by the tick (runq 5us-4ms, no waker); S futex\n"
"                       wait 20% (blocked 10us-50ms), S pipe read 15% (5us-\n"
"                       10ms), S nanosleep 12% (1-100ms), D page-cache read 18%\n"
"                       (50us-20ms), T job-control stop 5% (10-500ms, no\n"
"                       waker); run-queue delay 1us-1ms, 3% get 2-20ms more;\n"
"                       all log-uniform. Stacks: a user path of the thread's\n"
"                       process plus the kernel switch-out path (leaf in\n"
"                       __schedule). Wakers (90% of S, 95% of D, all timer\n"
"                       wakeups): another thread, of the same process when\n"
"                       there is one, with its user path plus the kernel\n"
"                       wakeup path (futex_wake, pipe_write, timer or I/O\n"
"                       interrupt ... try_to_wake_up); waker_cpu is the\n"
"                       waker's CPU (the sleeper's for interrupts). 20% of\n"
"                       intervals switch in on another CPU. Without --cpus,\n"
"                       4 CPUs and no cpu records.\n"
"    --triggers N       N trigger records spread over the run, reasons in\n"
"                       turn: 1 manual (seq 0, no window), 2 signal, 3 off-CPU\n"
"                       and 4 run-queue over a threshold (value = the longest\n"
"                       off-CPU or run-queue time since the previous such\n"
"                       trigger, threshold 3/4 of it); 2-4 are numbered from\n"
"                       1 with window [T-5s, T+1s]\n"
"    --unknown-ext N    N extension records of kinds 100-104 (unknown to\n"
"                       every reader, skipped), payload 0-16 zero bytes\n"
"    -h, --help         this text\n"
"\n"
"EXAMPLES\n"
"    spulse synth -o s.spulse --samples 100000 --kallsyms\n"
"    spulse synth -o off.spulse --off-cpu 2000 --cpus 4 --triggers 3\n"
"    spulse synth -q -o big.spulse --samples 10000000 --threads 16\n"
"\n"
"EXIT STATUS\n"
"    0 written, 1 the file could not be written, 2 usage error (a bad or\n"
"    out-of-range value; nothing is written).\n";

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

/* --host: a deterministic identity (FNV-1a of NAME and the seed). */
static int synth_identity(struct spulse_recorder *rec, const char *host,
			  uint64_t seed, uint64_t start_us)
{
	struct spulse_identity id = {
		.start_us = start_us, .host = host, .machine_id = "",
		.boot_id = "", .kernel = "synth",
	};
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	const unsigned char *c;
	int i;

	for (i = 0; i < 16; i++) {
		for (c = (const unsigned char *)host; *c; c++)
			h = (h ^ *c) * 0x100000001b3ULL;
		h = (h ^ (uint64_t)i) * 0x100000001b3ULL;
		id.recording_id[i] = (uint8_t)(h >> 56);
	}
	id.recording_id[6] = (uint8_t)((id.recording_id[6] & 0x0f) | 0x40);
	id.recording_id[8] = (uint8_t)((id.recording_id[8] & 0x3f) | 0x80);
	return spulse_rec_identity(rec, &id, NULL);
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
		{ "cpus", required_argument, NULL, 'c' },
		{ "off-cpu", required_argument, NULL, 'O' },
		{ "triggers", required_argument, NULL, 'T' },
		{ "unknown-ext", required_argument, NULL, 'U' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct synth_params p = { .samples = 10000, .threads = 8, .depth = 32,
				  .seed = 1 };
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	struct spulse_recorder *rec;
	struct synth_stats st;
	const char *host = NULL;
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
		case 'c':
			if (!cli_parse_u64("--cpus", optarg, &v))
				return EXIT_USAGE;
			if (v < 1 || v > SPULSE_MAX_CPU)
				return cli_usage_error("synth",
					"--cpus must be 1..%d", SPULSE_MAX_CPU);
			p.cpus = (uint32_t)v;
			break;
		case 'O':
			if (!cli_parse_u64("--off-cpu", optarg, &p.offcpu))
				return EXIT_USAGE;
			break;
		case 'T':
			if (!cli_parse_u64("--triggers", optarg, &p.triggers))
				return EXIT_USAGE;
			break;
		case 'U':
			if (!cli_parse_u64("--unknown-ext", optarg,
					   &p.unknown_ext))
				return EXIT_USAGE;
			break;
		case 'k': kallsyms = true; break;
		case 'H':
			if (!*optarg || strlen(optarg) > SPULSE_MAX_HOST)
				return cli_usage_error("synth", "--host: 1..%d "
						       "bytes", SPULSE_MAX_HOST);
			host = optarg;
			break;
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
	rc = host ? synth_identity(rec, host, p.seed, ro.start_us) : 0;
	if (rc >= 0)
		rc = synth_generate_stats(rec, &p, &st);
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
	if (!quiet && (p.offcpu || p.triggers || p.unknown_ext)) {
		unsigned int i;

		printf("%s: %llu off-CPU intervals (%llu with a waker;", out,
		       (unsigned long long)st.offcpu,
		       (unsigned long long)st.with_waker);
		for (i = 0; i <= SPULSE_STATE_MAX; i++)
			if (st.by_state[i])
				printf(" %s %llu", spulse_state_name((uint8_t)i),
				       (unsigned long long)st.by_state[i]);
		printf("), %llu triggers, %llu unknown extension records\n",
		       (unsigned long long)st.triggers,
		       (unsigned long long)st.unknown_ext);
	}
	return EXIT_OK;
}
