// SPDX-License-Identifier: MIT
/*
 * spulse-drain: per-CPU relay files of spulse.ko -> one SPULSE spool.
 *
 * Exit status: 0 the spool is complete; 1 a fatal error (no usable spool);
 * 2 bad usage; 3 the spool is complete but some input stream was abandoned
 * after a validation error (reported on stderr with CPU and offset).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spulse/version.h>

#include "drain.h"
#include "iface.h"
#include "thp.h"

static volatile sig_atomic_t stop_requested, usr1_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_requested++;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: spulse-drain -o FILE [--debugfs DIR] [--sync-ms N] [--window-ms N]\n"
"                    [--wake-ms N] [--duration S] [--control] [--once]\n"
"                    [--verbose]\n"
"                    [--kallsyms PATH | --no-kallsyms]\n"
"                    [--kallsyms-cache DIR]\n"
"                    [--unwind-cache DIR | --no-unwind-tables]\n"
"                    [--flight SECONDS [--trigger SPEC]... [--post SECONDS]\n"
"                     [--max-dumps N] [--min-gap SECONDS] [--gen-bytes N]]\n"
"       spulse-drain --version | --help\n"
"  -o, --output FILE   spool to write (replaced if it exists)\n"
"  --debugfs DIR       spulse debugfs directory (default %s); when\n"
"                      its control file is refused (EPERM: kernel lockdown),\n"
"                      or the default one is absent, " DRAIN_PROCFS_DIR " is read\n"
"  --sync-ms N         fsync the spool every N ms (default 1000; 0 = at end)\n"
"  --window-ms N       merge window: hold samples at most N ms (default 100)\n"
"  --wake-ms N         read partial relay sub-buffers every N ms (default %d;\n"
"                      a full sub-buffer wakes the drainer at once)\n"
"  --duration S        stop after S seconds (default: until SIGINT/SIGTERM)\n"
"  --control           write start to DIR/control first, stop at the end\n"
"  --once              drain what is readable now, then stop\n"
"  --kallsyms PATH     kernel symbols saved as FILE.kallsyms (default %s)\n"
"  --no-kallsyms       do not save kernel symbols\n"
"  --kallsyms-cache DIR  cache of /proc/kallsyms's text symbols, keyed by\n"
"                      boot, modules (build-ids, addresses) and BPF ids\n"
"                      (default $HOME/.cache/spulse/kallsyms; \"\" = none)\n"
"  --unwind-cache DIR  unwind-table cache (default $HOME/.cache/spulse/unwind;\n"
"                      \"\" = none): tables of the modules meta reports are\n"
"                      built or read from it and loaded into DIR/unwind\n"
"  --no-unwind-tables  load no unwind tables (frame-pointer user stacks,\n"
"                      or whatever tables another tool loaded)\n"
"  -v, --verbose       say which interface (debugfs or procfs) is read\n"
"  --version           print the version (" SPULSE_VERSION ") and exit\n"
DRAIN_FLIGHT_USAGE,
		DRAIN_DEFAULT_DEBUGFS, DRAIN_WAKE_MS_DEFAULT,
		DRAIN_DEFAULT_KALLSYMS);
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || *s == '-')
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(struct drain *d, double elapsed, uint64_t *last_samples,
		     double *last_t)
{
	struct drain_stats st;
	double dt = elapsed - *last_t;

	drain_get_stats(d, &st);
	fprintf(stderr, "\rspulse-drain: %" PRIu64 " samples, %.0f samples/s, "
		"dropped %s%" PRId64 "   ", st.samples,
		dt > 0 ? (double)(st.samples - *last_samples) / dt : 0.0,
		st.kernel_dropped < 0 ? "?" : "",
		st.kernel_dropped < 0 ? (int64_t)0 : st.kernel_dropped);
	*last_samples = st.samples;
	*last_t = elapsed;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "debugfs", required_argument, NULL, 'D' },
		{ "sync-ms", required_argument, NULL, 'S' },
		{ "window-ms", required_argument, NULL, 'W' },
		{ "wake-ms", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ "control", no_argument, NULL, 'C' },
		{ "once", no_argument, NULL, '1' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "no-kallsyms", no_argument, NULL, 'N' },
		{ "kallsyms-cache", required_argument, NULL, 'k' },
		{ "unwind-cache", required_argument, NULL, 'U' },
		{ "no-unwind-tables", no_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		DRAIN_FLIGHT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct drain_opts o = {
		.debugfs = DRAIN_DEFAULT_DEBUGFS,
		.kallsyms = DRAIN_DEFAULT_KALLSYMS,
		.sync_ms = 1000,
		.window_ms = 100,
		.unwind_wait_ms = 2000,
	};
	struct sigaction sa;
	struct drain_stats st;
	struct drain_flight_opts fo;
	bool any_flight = false;
	char msg[256];
	sig_atomic_t usr1_seen = 0;
	struct drain *d;
	double duration = -1, t0, last_t = 0, next_progress = 1;
	uint64_t last_samples = 0;
	bool once = false, tty, verbose = false;
	const char *why;
	unsigned int wake_ms = DRAIN_WAKE_MS_DEFAULT;
	int c, ret;

	drain_flight_defaults(&fo);
	while ((c = getopt_long(argc, argv, "o:hv", lo, NULL)) != -1) {
		char *end;

		if (c >= DRAIN_FLIGHT_OPT_BASE && c <= DRAIN_OPT_GEN_BYTES) {
			if (drain_flight_option(&fo, c, optarg, msg, sizeof(msg))) {
				fprintf(stderr, "spulse-drain: %s\n", msg);
				return 2;
			}
			any_flight = any_flight || c != DRAIN_OPT_FLIGHT;
			continue;
		}
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'D':
			o.debugfs = optarg;
			break;
		case 'S':
			if (parse_uint(optarg, 86400000, &o.sync_ms))
				goto bad;
			break;
		case 'W':
			if (parse_uint(optarg, 3600000, &o.window_ms))
				goto bad;
			break;
		case 'w':
			if (parse_uint(optarg, 60000, &wake_ms) || !wake_ms)
				goto bad;
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(duration >= 0))
				goto bad;
			break;
		case 'C':
			o.control = true;
			break;
		case '1':
			once = true;
			/* post-mortem/tests: let every queued table load */
			o.unwind_wait_ms = 30000;
			break;
		case 'K':
			o.kallsyms = optarg;
			break;
		case 'N':
			o.kallsyms = NULL;
			break;
		case 'k':
			o.kallsyms_cache = optarg;
			break;
		case 'U':
			o.unwind_cache = optarg;
			break;
		case 'T':
			o.no_unwind = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("spulse-drain %s\n", SPULSE_VERSION);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || !o.output)
		goto bad;
	if (drain_flight_check(&fo, any_flight, msg, sizeof(msg))) {
		fprintf(stderr, "spulse-drain: %s\n", msg);
		return 2;
	}
	if (fo.seconds_ns)
		o.flight = &fo;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.flight) {
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);

	/* its memory stays out of THP (docs/DRAIN.md "The recorder's
	 * memory and THP"); it execs nothing, so nothing to give back */
	(void)drain_thp_disable();

	o.debugfs = drain_iface_pick(o.debugfs, &why);
	if (why || verbose)
		fprintf(stderr, "spulse-drain: interface %s %s%s%s%s\n",
			drain_iface_name(o.debugfs), o.debugfs,
			why ? " (debugfs: " : "", why ? why : "", why ? ")" : "");
	ret = drain_open(&o, &d);
	if (ret < 0) {
		fprintf(stderr, "spulse-drain: cannot start: %s\n",
			strerror(-ret));
		return 1;
	}
	tty = isatty(STDERR_FILENO);
	t0 = now_s();
	while (!stop_requested && !once) {
		double el = now_s() - t0;
		long n;

		if (duration >= 0 && el >= duration)
			break;
		n = drain_step(d, (int)wake_ms);
		if (n < 0)
			break;
		while (usr1_seen != usr1_requested) {
			usr1_seen++;
			drain_flight_signal(d);
		}
		if (drain_inputs_closed(d)) {
			fprintf(stderr, "spulse-drain: every input is closed; "
				"stopping\n");
			break;
		}
		if (tty && el >= next_progress) {
			progress(d, el, &last_samples, &last_t);
			next_progress = el + 1;
		}
	}
	if (tty && next_progress > 1)
		fputc('\n', stderr);
	ret = drain_finish(d);
	if (ret < 0)
		fprintf(stderr, "spulse-drain: stopped on an error: %s (%s keeps "
			"what was written before it: its complete prefix)\n",
			strerror(-ret), o.output);
	drain_print_stats(d, stderr);
	drain_get_stats(d, &st);
	c = drain_close(d);
	if (ret < 0 || c < 0)
		return 1;
	return st.stream_errors ? 3 : 0;
bad:
	usage(stderr);
	return 2;
}
