/* SPDX-License-Identifier: MIT */
/* spulse export: samples as pprof, speedscope, perf-script, JSON, folded
 * stacks or trace-event JSON (the writers: export_*.c, trace_event.c). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export/export_fmt.h"
#include "analysis/profile.h"
#include "export/trace_event.h"

int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers);

static const char export_help[] =
"NAME\n"
"    spulse export - write a spool's samples in formats other tools read\n"
"\n"
"SYNOPSIS\n"
"    spulse export FILE --format FMT [-o OUT] [--inline] [--kallsyms PATH]\n"
"                  [--symfs DIR] [--pid P,..] [--tid T,..] [--comm C,..]\n"
"                  [--host H,..] [--dso D,..] [--time START,END]\n"
"                  [--kernel|--user]\n"
"                  [--state S,D,...] [--running]\n"
"    FMT: pprof | speedscope | perf-script | json | folded | trace-event\n"
"\n"
"DESCRIPTION\n"
"    Reads FILE with the bounded-memory Replay reader, symbolizes every\n"
"    distinct frame once (as spulse report does) and writes:\n"
"\n"
"    pprof        gzipped profile.proto for `go tool pprof`: sample types\n"
"                 samples/count then cpu/nanoseconds (period = the spool's\n"
"                 interval); one sample per (thread, stack) with labels\n"
"                 pid, tid, comm; mappings with memory range, file offset,\n"
"                 path and build-id; functions (name, system_name, source\n"
"                 file); locations with address and lines (--inline: the\n"
"                 inline chain). Binary: use -o.\n"
"    speedscope   speedscope's JSON file format: one sampled profile per\n"
"                 thread in time order, stacks as indices into one shared\n"
"                 frame table, weights in nanoseconds.\n"
"    perf-script  text shaped like `perf script` (speedscope, FlameGraph's\n"
"                 stackcollapse-perf.pl, Firefox Profiler read it):\n"
"                   COMM PID/TID [CPU] SEC.USEC: PERIOD cpu-clock:\n"
"                   \\t ADDR SYMBOL+0xOFF (DSO)      (leaf first)\n"
"                 samples sorted by time across threads and CPUs (stable),\n"
"                 SEC.USEC absolute (Unix epoch), PERIOD in ns.\n"
"    json         one JSON object: header fields, \"frames\" (every frame\n"
"                 of the spool once, index = frame id: name, function,\n"
"                 offset, dso, addr, kind, file, line), \"threads\" (id, pid,\n"
"                 tid, comm) and \"samples\" ({time_ns, thread, cpu, stack:\n"
"                 [frame ids, leaf first]}, stream order, time_ns from\n"
"                 start_us). Valid UTF-8 passes through; any other byte is\n"
"                 written as \\u00XX of that byte.\n"
"    folded       \"root;...;leaf count\" lines (as spulse flame --folded).\n"
"    trace-event  Chrome/Perfetto trace-event JSON: a track per thread,\n"
"                 off-CPU intervals as \"blocked S|D|..\" and \"runnable\n"
"                 (runq)\" slices, waker -> wakee flow arrows, samples as\n"
"                 instant events, trigger marks (docs/CLI.md).\n"
"\n"
"OPTIONS\n"
"    --format FMT       output format (required), one of the above\n"
"    -o, --output OUT   output file (default: standard output; \"-\" too)\n"
"    --pid P,..         only samples (and intervals) of these processes\n"
"    --tid T,..         only these threads\n"
"    --comm C,..        only threads with these names\n"
"    --host H,..        only threads of these hosts (a merged spool's\n"
"                       sources; \"unknown\" without identity; FLEET.md)\n"
"    --dso D,..         only stacks with a frame in one of these modules\n"
"                       (a path, its basename, or [kernel.kallsyms])\n"
"    --time START,END   only samples in this window, seconds from the\n"
"                       first sample (either may be empty: ,2 or 1.5,)\n"
"    --kernel, --user   keep only kernel (or only user) frames of each stack\n"
"    --kallsyms PATH    kernel symbols (default: FILE.kallsyms when present)\n"
"    --symfs DIR        look module files up under DIR first (DIR/PATH)\n"
"    --inline           expand inlined functions from DWARF (pprof lines,\n"
"                       speedscope frames, perf-script lines, json \"inline\")\n"
"    --state S,D,...    (trace-event) only intervals that left in these states\n"
"    --running          (trace-event) also \"running\" slices from a switch-in\n"
"                       to the thread's next switch-out\n"
"    -h, --help         this text\n"
"\n"
"EXAMPLES\n"
"    spulse export app.spulse --format pprof -o app.pb.gz\n"
"    go tool pprof -top app.pb.gz\n"
"    spulse export app.spulse --format speedscope -o app.speedscope.json\n"
"    spulse export app.spulse --format perf-script | stackcollapse-perf.pl\n"
"    spulse export app.spulse --format json | python3 -m json.tool\n"
"\n"
"EXIT STATUS\n"
"    0 written, 1 unreadable or invalid spool or unwritable output,\n"
"    2 usage error (no or unknown --format, options of another format).\n";

enum fmt { FMT_NONE, FMT_FOLDED, FMT_JSON, FMT_PERF, FMT_TRACE, FMT_PPROF,
	   FMT_SPEEDSCOPE };

static const struct { const char *name; enum fmt fmt; } formats[] = {
	{ "folded", FMT_FOLDED }, { "json", FMT_JSON },
	{ "perf-script", FMT_PERF }, { "trace-event", FMT_TRACE },
	{ "pprof", FMT_PPROF }, { "speedscope", FMT_SPEEDSCOPE },
};

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		PROFILE_LONGOPTS,
		PROFILE_FILTER_LONGOPTS,
		{ "inline", no_argument, NULL, 'i' },
		{ "state", required_argument, NULL, 's' },
		{ "running", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct export_opts eo = { 0 };
	const char *out = NULL;
	struct profile p = { 0 };
	enum fmt fmt = FMT_NONE;
	bool running = false;
	FILE *f = stdout;
	size_t i;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		rc = profile_option(&p, c, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (c) {
		case 'F':
			fmt = FMT_NONE;
			for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
				if (!strcmp(optarg, formats[i].name))
					fmt = formats[i].fmt;
			if (fmt == FMT_NONE)
				return cli_usage_error("export",
					"unknown format '%s' (pprof, speedscope, "
					"perf-script, json, folded, trace-event)",
					optarg);
			break;
		case 'o': out = optarg; break;
		case 'i': eo.inline_frames = true; break;
		case 'r': running = true; break;
		case 'h': fputs(export_help, stdout); return EXIT_OK;
		default: return cli_usage_error("export", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("export", "expected exactly one FILE");
	if (fmt == FMT_NONE)
		return cli_usage_error("export", "--format is required");
	if ((p.offcpu_opts || running) && fmt != FMT_TRACE)
		return cli_usage_error("export", "--state and --running are "
				       "for --format trace-event");
	if (fmt == FMT_PPROF && (!out || !strcmp(out, "-")) &&
	    isatty(STDOUT_FILENO))
		return cli_usage_error("export", "pprof is binary (gzip): "
				       "give -o FILE or redirect stdout");
	p.offcpu = fmt == FMT_TRACE;
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK && eo.inline_frames)
		symbolizer_set_inline(p.sym, true);
	if (rc == EXIT_OK && fmt == FMT_FOLDED) {
		rc = cli_write_tree(&p, out, true, NULL, false);
	} else if (rc == EXIT_OK) {
		if (out && strcmp(out, "-")) {
			f = fopen(out, fmt == FMT_PPROF ? "wb" : "w");
			if (!f) {
				perror(out);
				rc = EXIT_INVALID;
			}
		}
		if (rc == EXIT_OK) {
			switch (fmt) {
			case FMT_TRACE:
				rc = export_trace_event(&p, f, running);
				break;
			case FMT_PPROF:
				rc = export_pprof(&p, f, &eo);
				break;
			case FMT_SPEEDSCOPE:
				rc = export_speedscope(&p, f, &eo);
				break;
			case FMT_PERF:
				rc = export_perf_script(&p, f, &eo);
				break;
			default:
				rc = export_json(&p, f, &eo);
				break;
			}
		}
		if (f && f != stdout && fclose(f))
			rc = EXIT_INVALID;
		else if (f == stdout && fflush(f))
			rc = EXIT_INVALID;
	}
	profile_close(&p);
	return rc;
}
