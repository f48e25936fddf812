/* SPDX-License-Identifier: MIT */
/* spulse export: samples as folded stacks, JSON lines or perf-script text. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"
#include "trace_event.h"

int cli_write_tree(struct profile *p, const char *out, bool folded,
		   const char *title, bool wakers);

static const char export_help[] =
"usage: spulse export FILE --format folded|json|perf-script|trace-event\n"
"                     [-o OUT] [--pid P] [--kallsyms PATH] [--symfs DIR]\n"
"                     [--state S,D,...] [--running]\n"
"\n"
"  folded       \"root;...;leaf count\" lines (as spulse flame --folded)\n"
"  json         JSON Lines: first a header object\n"
"                 {\"type\":\"header\",\"file\":..,\"start_us\":..,\n"
"                  \"interval_us\":..,\"samples\":..,\"recovered\":..}\n"
"               then one object per sample, in stream order:\n"
"                 {\"type\":\"sample\",\"time_ns\":T,\"pid\":P,\"tid\":T,\n"
"                  \"comm\":\"..\",\"frames\":[{\"name\":..,\"dso\":..,\n"
"                  \"addr\":\"0x..\",\"kind\":\"module|user|kernel|truncated\"},\n"
"                  ...]}\n"
"               time_ns is absolute (ns since the Unix epoch); frames are\n"
"               leaf first.\n"
"  perf-script  text shaped like `perf script` output, for tools such as\n"
"               FlameGraph's stackcollapse-perf.pl:\n"
"                 COMM PID/TID SEC.USEC: 1 cpu-clock:\n"
"                 \\t ADDR SYMBOL+0xOFF (DSO)     (leaf first)\n"
"  trace-event  Chrome/Perfetto trace-event JSON, one object\n"
"                 {\"traceEvents\":[...],\"displayTimeUnit\":\"ns\",...}\n"
"               for ui.perfetto.dev, chrome://tracing, speedscope: a track\n"
"               per thread (process/thread names as \"M\" events), off-CPU\n"
"               intervals as \"X\" slices \"blocked S|D|..\" (switch-out to\n"
"               wakeup, with the stack and waker in args) then \"runnable\n"
"               (runq)\" (to switch-in), flow arrows waker -> wakee, samples\n"
"               as instant events named by their leaf (stack in args),\n"
"               trigger marks as global instant events.\n"
"               ts/dur are microseconds from start_us (in otherData),\n"
"               with ns fractions; each track is in time order.\n"
"  --state S,D  (trace-event) only intervals that left in these states\n"
"  --running    (trace-event) also \"running\" slices from a switch-in\n"
"               to the thread's next switch-out\n"
"\n"
"  -o, --output OUT  output file (default: standard output)\n"
"  --pid P           only samples of process P\n"
"  --kallsyms PATH   kernel symbols (default FILE.kallsyms when present)\n"
"  --symfs DIR    look module files up under DIR first (DIR/PATH)\n";

enum fmt { FMT_NONE, FMT_FOLDED, FMT_JSON, FMT_PERF, FMT_TRACE };

static const char *kind_name(uint8_t k)
{
	switch (k) {
	case SPULSE_FRAME_MODULE: return "module";
	case SPULSE_FRAME_USER: return "user";
	case SPULSE_FRAME_KERNEL: return "kernel";
	default: return "truncated";
	}
}

/* Per-frame text of the chosen format, rendered once (frames repeat). */
struct frag_cache {
	char **text;
	uint32_t n;
};

static const char *frame_text(struct profile *p, struct frag_cache *fc,
			      enum fmt fmt, uint32_t id)
{
	const struct sym_frame *sf;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (id >= fc->n)
		return NULL;
	if (fc->text[id])
		return fc->text[id];
	sf = symbolizer_frame(p->sym, id);
	if (!sf)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	if (fmt == FMT_JSON) {
		fputs("{\"name\":", m);
		cli_json_string(m, sf->label, strlen(sf->label));
		fputs(",\"dso\":", m);
		cli_json_string(m, sf->dso, strlen(sf->dso));
		fprintf(m, ",\"addr\":\"0x%llx\",\"kind\":\"%s\"}",
			(unsigned long long)sf->addr, kind_name(sf->kind));
	} else if (sf->func) {
		fprintf(m, "\t%16llx %s+0x%llx (%s)\n",
			(unsigned long long)sf->addr, sf->func,
			(unsigned long long)sf->func_off, sf->dso);
	} else {
		fprintf(m, "\t%16llx [unknown] (%s)\n",
			(unsigned long long)sf->addr,
			sf->kind == SPULSE_FRAME_TRUNCATED ? "[truncated]" :
			sf->dso);
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	fc->text[id] = buf;
	return buf;
}

static int write_sample(struct profile *p, struct frag_cache *fc, FILE *f,
			enum fmt fmt, const struct spulse_sample *s)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	struct spulse_thread t;
	uint64_t abs_ns;
	int n, i;

	if (spulse_defs_thread(p->defs, s->thread, &t) < 0)
		return -1;
	n = profile_stack_frames(p, s->stack, frames);
	if (n <= 0)
		return -1;
	abs_ns = p->info->start_us * 1000 + (uint64_t)s->time_ns;
	if (fmt == FMT_JSON) {
		fprintf(f, "{\"type\":\"sample\",\"time_ns\":%llu,\"pid\":%u,"
			"\"tid\":%u,\"comm\":", (unsigned long long)abs_ns,
			t.pid, t.tid);
		cli_json_string(f, t.comm, t.comm_len);
		fputs(",\"frames\":[", f);
	} else {
		fprintf(f, "%s %u/%u %llu.%06llu: 1 cpu-clock:\n", t.comm,
			t.pid, t.tid,
			(unsigned long long)(abs_ns / 1000000000ULL),
			(unsigned long long)(abs_ns % 1000000000ULL / 1000));
	}
	for (i = n - 1; i >= 0; i--) {
		const char *text = frame_text(p, fc, fmt, frames[i]);

		if (!text)
			return -1;
		if (fmt == FMT_JSON && i != n - 1)
			fputc(',', f);
		fputs(text, f);
	}
	fputs(fmt == FMT_JSON ? "]}\n" : "\n", f);
	return 0;
}

static int export_samples(struct profile *p, FILE *f, enum fmt fmt)
{
	struct frag_cache fc = { 0 };
	struct spulse_sample s;
	uint32_t i;
	int rc, ret = EXIT_OK;

	fc.n = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	fc.text = calloc(fc.n ? fc.n : 1, sizeof(*fc.text));
	if (!fc.text)
		return EXIT_INVALID;
	if (fmt == FMT_JSON) {
		fputs("{\"type\":\"header\",\"file\":", f);
		cli_json_string(f, p->file, strlen(p->file));
		fprintf(f, ",\"start_us\":%llu,\"interval_us\":%llu,"
			"\"samples\":%llu,\"recovered\":%s}\n",
			(unsigned long long)p->info->start_us,
			(unsigned long long)p->info->interval_us,
			(unsigned long long)p->info->samples,
			p->info->recovered_from_truncated_tail ? "true" :
			"false");
	}
	while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
		if (!profile_wants(p, &s))
			continue;
		if (write_sample(p, &fc, f, fmt, &s) < 0) {
			fprintf(stderr, "%s: broken stack %u\n", p->file,
				s.stack);
			ret = EXIT_INVALID;
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", p->file,
			strerror(-rc));
		ret = EXIT_INVALID;
	}
	for (i = 0; i < fc.n; i++)
		free(fc.text[i]);
	free(fc.text);
	if (ferror(f))
		ret = EXIT_INVALID;
	return ret;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		PROFILE_LONGOPTS,
		{ "state", required_argument, NULL, 's' },
		{ "running", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL;
	struct profile p = { 0 };
	enum fmt fmt = FMT_NONE;
	bool running = false;
	FILE *f = stdout;
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
			if (!strcmp(optarg, "folded"))
				fmt = FMT_FOLDED;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "perf-script"))
				fmt = FMT_PERF;
			else if (!strcmp(optarg, "trace-event"))
				fmt = FMT_TRACE;
			else
				return cli_usage_error("export",
					"unknown format '%s'", optarg);
			break;
		case 'o': out = optarg; break;
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
	p.offcpu = fmt == FMT_TRACE;
	rc = profile_open(&p, argv[optind]);
	if (rc == EXIT_OK && fmt == FMT_FOLDED) {
		rc = cli_write_tree(&p, out, true, NULL, false);
	} else if (rc == EXIT_OK) {
		if (out && strcmp(out, "-")) {
			f = fopen(out, "w");
			if (!f) {
				perror(out);
				rc = EXIT_INVALID;
			}
		}
		if (rc == EXIT_OK && fmt == FMT_TRACE)
			rc = export_trace_event(&p, f, running);
		else if (rc == EXIT_OK)
			rc = export_samples(&p, f, fmt);
		if (f && f != stdout && fclose(f))
			rc = EXIT_INVALID;
	}
	profile_close(&p);
	return rc;
}
