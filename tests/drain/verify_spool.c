// SPDX-License-Identifier: MIT
/*
 * verify_spool: check a drained spool against gen_fake's ground truth.
 *
 *   verify_spool SPOOL TRUTH [--prefix] [--expect-switch] [--window]
 *                [--expect-reason N] [--expect-stall] [--time-order]
 *                [--switch-in-time-order]
 *
 * Opens SPOOL with Snapshot (full validation) and checks: start_us and
 * interval_us from the streams' headers; the counts of modules and of
 * module/process deactivations and Python records forwarded from meta;
 * each CPU's samples in non-decreasing time order (the drainer writes
 * each CPU's samples in its stream's order, but groups them by CPU, so
 * the spool as a whole is in time order only with --time-order, which
 * --window implies: a flight dump keeps the merge's order); every sample
 * equals the truth sample of its time, each truth sample at most once
 * (time, CPU, pid, tid, comm, and every frame root to leaf: kind, absolute
 * address via spulse_defs_frame_address, and for frames that must be
 * module-relative the module's path); the sample count equals the
 * truth's. A truth frame "Gaddr:path" (a module meta retires) must be
 * module-relative to path up to some sample and absolute from then on (the
 * retirement applies once, in spool order; with an "N path2" truth line,
 * a module meta defines after the retirement over the same range,
 * module-relative to path2 instead of absolute); --expect-switch also
 * requires both forms to occur, --switch-in-time-order that the switch
 * is monotonic in time order as well (the retirement applies between
 * samples by time, whatever order the CPUs' groups are written in).
 * With --prefix the spool may hold only a prefix of the truth (a drainer
 * killed early): of each CPU's truth samples (with --time-order: of all)
 * the earliest ones, and the counts of meta records are not checked.
 *
 * Extension records: every sample's CPU (the truth's cpu field); each
 * CPU's (cpu_in: the stream it was written in) off-CPU intervals in close
 * time order, and every interval equal to the truth's "O" line of its close
 * time, each at most once (switch-out time, state, cpus, blocked/run-queue
 * times, thread, every frame of the stack, waker thread, waker CPU and
 * every frame of the waker stack; with --prefix, of each CPU's the earliest);
 * the trigger marks equal the "K" lines; no unknown extension record is
 * left (the drainer drops them).
 * --window (a flight dump): the dump's first trigger record names the
 * window; only the truth's samples, intervals and marks inside it (samples
 * by time, intervals by close time) must be there, all of them, nothing
 * else; meta counts are not checked (modules are copied on demand).
 * --expect-reason N: that trigger's reason is N. --expect-stall: its time is
 * the close of a --stall interval ("P" line) and its value that interval's
 * off-CPU time, and the interval is inside the window.
 * Prints "ok N samples ..." or the first mismatches; exit 0 / 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libspulse.h>

struct tsample {
	int64_t t;
	uint32_t cpu;
	uint32_t pid, tid;
	char comm[80];
	char *codes;	/* " T Kaddr Raddr:path ..." root first */
};

static int cmp_t(const void *a, const void *b)
{
	const struct tsample *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

static int failures;

struct tthread {
	uint32_t pid, tid;
	char comm[80];
	uint32_t cpu;
	char *codes;
	bool none;
};

struct toff {
	int64_t close, out;
	uint32_t state, cpu_out, cpu_in;
	uint64_t blocked, runq;
	struct tthread th, w;
};

struct ttrig {
	int64_t t;
	uint32_t reason, seq;
};

static int cmp_off(const void *a, const void *b)
{
	const struct toff *x = a, *y = b;

	return (x->close > y->close) - (x->close < y->close);
}

static int cmp_soff(const void *a, const void *b)
{
	const struct spulse_offcpu *x = a, *y = b;
	int64_t cx = x->time_ns + (int64_t)(x->blocked_ns + x->runq_ns);
	int64_t cy = y->time_ns + (int64_t)(y->blocked_ns + y->runq_ns);

	return (cx > cy) - (cx < cy);
}

/* "pid tid comm [cpu] n codes..." -> *t; returns 0 or -1 */
static int parse_thread(char *p, bool with_cpu, struct tthread *t)
{
	unsigned int nf;
	int pos = 0;

	while (*p == ' ')
		p++;
	if (*p == '-') {
		t->none = true;
		return 0;
	}
	if (with_cpu) {
		if (sscanf(p, "%u %u %79s %u %u%n", &t->pid, &t->tid, t->comm,
			   &t->cpu, &nf, &pos) != 5)
			return -1;
	} else if (sscanf(p, "%u %u %79s %u%n", &t->pid, &t->tid, t->comm, &nf,
			  &pos) != 4) {
		return -1;
	}
	t->codes = strdup(p + pos);
	return 0;
}

#define FAIL(...) do { \
	if (failures++ < 10) \
		fprintf(stderr, "verify_spool: " __VA_ARGS__); \
} while (0)

/* Render the spool's stack of @leaf as truth codes (root first). */
static int render(const struct spulse_defs *d, uint32_t leaf, char *out,
		  size_t len, uint32_t *n)
{
	uint32_t chain[SPULSE_MAX_DEPTH], depth = 0, id = leaf;
	size_t off = 0;
	int i;

	for (;;) {
		struct spulse_stack st;

		if (spulse_defs_stack(d, id, &st) || depth >= SPULSE_MAX_DEPTH)
			return -1;
		chain[depth++] = st.frame;
		if (st.parent == SPULSE_NONE)
			break;
		id = st.parent;
	}
	*n = depth;
	out[0] = 0;
	for (i = (int)depth - 1; i >= 0; i--) {
		struct spulse_frame f;
		struct spulse_module m;
		uint64_t addr;

		if (spulse_defs_frame(d, chain[i], &f))
			return -1;
		if (f.kind == SPULSE_FRAME_TRUNCATED) {
			if (i != (int)depth - 1)
				return -2;	/* marker must be the root */
			off += snprintf(out + off, len - off, " T");
			continue;
		}
		if (spulse_defs_frame_address(d, chain[i], &addr))
			return -1;
		if (f.kind == SPULSE_FRAME_MODULE) {
			if (spulse_defs_module(d, f.module, &m))
				return -1;
			off += snprintf(out + off, len - off, " R%" PRIx64 ":%s",
					addr, m.path);
		} else {
			off += snprintf(out + off, len - off, " %c%" PRIx64,
					f.kind == SPULSE_FRAME_KERNEL ? 'K' : 'U',
					addr);
		}
		if (off >= len)
			return -1;
	}
	return 0;
}

/*
 * Compare rendered codes with truth codes word by word. A truth "Gaddr:path"
 * matches "Raddr:path" while *gone_abs is false, or "Uaddr" (which sets it;
 * with @next, the module defined over the range afterwards: "Raddr:next").
 */
static bool codes_match(const char *got, const char *want, const char *next,
			bool *gone_abs, uint64_t *rel_n, uint64_t *abs_n)
{
	char g[128], w[128], after[400];
	int gn, wn;

	for (;;) {
		if (sscanf(got, "%127s%n", g, &gn) != 1)
			return sscanf(want, "%127s", w) != 1;
		if (sscanf(want, "%127s%n", w, &wn) != 1)
			return false;
		got += gn;
		want += wn;
		if (w[0] == 'G') {
			char *colon = strchr(w, ':');

			if (g[0] == 'R' && !*gone_abs && !strcmp(g + 1, w + 1)) {
				(*rel_n)++;
				continue;
			}
			if (!colon)
				return false;
			snprintf(after, sizeof(after), "%c%.*s%s%s",
				 next ? 'R' : 'U', (int)(colon - w - 1), w + 1,
				 next ? ":" : "", next ? next : "");
			if (!strcmp(g, after)) {
				*gone_abs = true;
				(*abs_n)++;
				continue;
			}
			return false;
		}
		if (strcmp(g, w))
			return false;
	}
}

static int cmp_time(const void *key, const void *elt)
{
	int64_t t = *(const int64_t *)key;
	const struct tsample *x = elt;

	return (t > x->t) - (t < x->t);
}

static int cmp_close(const void *key, const void *elt)
{
	int64_t t = *(const int64_t *)key;
	const struct toff *x = elt;

	return (t > x->close) - (t < x->close);
}

int main(int argc, char **argv)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_snapshot *snap;
	struct spulse_error err = { 0 };
	const struct spulse_info *info;
	const struct spulse_defs *defs;
	struct tsample *ts = NULL;
	struct toff *off = NULL;
	size_t noff = 0, capoff = 0;
	struct ttrig trig[64];
	size_t ntrig = 0, nstall = 0;
	int64_t stall_close[8];
	uint64_t stall_ms[8];
	bool window = false, expect_stall = false;
	long expect_reason = -1;
	int64_t ws = INT64_MIN, we = INT64_MAX;
	struct spulse_trigger mark = { 0 };
	size_t nts = 0, cap = 0, i;
	uint64_t hs = 0, hi = 0, count, want[4] = { 0 };
	bool have_h = false;
	uint64_t noff_got = 0, ntrig_got = 0;
	bool prefix = false, expect_switch = false, gone_abs = false;
	bool time_order = false, switch_time = false;
	uint64_t gone_rel_n = 0, gone_abs_n = 0;
	char *line = NULL, buf[1 << 16], next_mod[256] = "";
	/* per truth sample: 0 not in the spool, 1 in it; +2 retired module
	 * frames relative, +4 after the retirement */
	uint8_t *got_ts = NULL;
	/* per CPU: the newest sample time so far in spool order */
	int64_t *cpu_prev = NULL;
	bool *cpu_any = NULL, *missing = NULL;
	size_t lcap = 0;
	int64_t prev = 0;
	FILE *f;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: verify_spool SPOOL TRUTH [--prefix] "
			"[--expect-switch]\n");
		return 2;
	}
	for (i = 3; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--prefix"))
			prefix = true;
		else if (!strcmp(argv[i], "--expect-switch"))
			expect_switch = true;
		else if (!strcmp(argv[i], "--time-order"))
			time_order = true;
		else if (!strcmp(argv[i], "--switch-in-time-order"))
			switch_time = true;
		else if (!strcmp(argv[i], "--window"))
			window = time_order = true;
		else if (!strcmp(argv[i], "--expect-stall"))
			expect_stall = true;
		else if (!strcmp(argv[i], "--expect-reason") && i + 1 < (size_t)argc)
			expect_reason = atol(argv[++i]);
		else
			return 2;
	}
	f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	while (getline(&line, &lcap, f) > 0) {
		char kind[40];
		uint64_t v;
		int pos = 0;

		line[strcspn(line, "\n")] = 0;
		if (line[0] == 'H') {
			have_h = sscanf(line, "H %" SCNu64 " %" SCNu64, &hs,
					&hi) == 2;
		} else if (line[0] == 'C' &&
			   sscanf(line, "C %39s %" SCNu64, kind, &v) == 2) {
			if (!strcmp(kind, "modules"))
				want[0] = v;
			else if (!strcmp(kind, "module_deactivations"))
				want[1] = v;
			else if (!strcmp(kind, "process_deactivations"))
				want[2] = v;
			else if (!strcmp(kind, "python"))
				want[3] = v;
		} else if (line[0] == 'S') {
			struct tsample *t;
			unsigned int nf;

			if (nts == cap) {
				cap = cap ? cap * 2 : 1024;
				ts = realloc(ts, cap * sizeof(*ts));
			}
			t = &ts[nts++];
			if (sscanf(line, "S %" SCNd64 " %u %u %u %79s %u%n", &t->t,
				   &t->cpu, &t->pid, &t->tid, t->comm, &nf,
				   &pos) != 6) {
				fprintf(stderr, "bad truth line: %s\n", line);
				return 2;
			}
			t->codes = strdup(line + pos);
		} else if (line[0] == 'O') {
			struct toff *o;
			char *bar = strstr(line, " |");

			if (noff == capoff) {
				capoff = capoff ? capoff * 2 : 256;
				off = realloc(off, capoff * sizeof(*off));
			}
			o = &off[noff++];
			memset(o, 0, sizeof(*o));
			if (!bar || sscanf(line, "O %" SCNd64 " %" SCNd64
				   " %u %u %u %" SCNu64 " %" SCNu64 "%n",
				   &o->close, &o->out, &o->state, &o->cpu_out,
				   &o->cpu_in, &o->blocked, &o->runq, &pos) != 7) {
				fprintf(stderr, "bad truth line: %s\n", line);
				return 2;
			}
			*bar = 0;
			if (parse_thread(line + pos, false, &o->th) ||
			    parse_thread(bar + 2, true, &o->w)) {
				fprintf(stderr, "bad truth interval\n");
				return 2;
			}
		} else if (line[0] == 'N') {
			if (sscanf(line, "N %255s", next_mod) != 1) {
				fprintf(stderr, "bad truth line: %s\n", line);
				return 2;
			}
		} else if (line[0] == 'P') {
			if (nstall < 8 && sscanf(line, "P %" SCNd64 " %" SCNu64,
					&stall_close[nstall], &stall_ms[nstall]) == 2)
				nstall++;
		} else if (line[0] == 'K') {
			if (ntrig < 64 && sscanf(line, "K %" SCNd64 " %u %u",
					&trig[ntrig].t, &trig[ntrig].reason,
					&trig[ntrig].seq) == 3)
				ntrig++;
		}
	}
	fclose(f);
	free(line);
	if (nts)
		qsort(ts, nts, sizeof(*ts), cmp_t);
	for (i = 1; i < nts; i++)
		if (ts[i].t == ts[i - 1].t) {
			fprintf(stderr, "truth times not unique\n");
			return 2;
		}

	ret = spulse_snapshot_open(argv[1], &ro, &snap, &err);
	if (ret < 0) {
		fprintf(stderr, "verify_spool: %s: offset %" PRIu64 ": %s (%d)\n",
			argv[1], err.offset, err.msg, ret);
		return 1;
	}
	info = spulse_snapshot_info(snap);
	defs = spulse_snapshot_defs(snap);
	count = spulse_snapshot_sample_count(snap);
	if (window) {
		size_t k, n;

		for (k = 0; k < spulse_snapshot_trigger_count(snap); k++)
			if (!spulse_snapshot_trigger(snap, k, &mark) &&
			    mark.window_end_ns)
				break;
		if (k == spulse_snapshot_trigger_count(snap)) {
			fprintf(stderr, "verify_spool: --window: no trigger "
				"record with a window\n");
			return 1;
		}
		ws = (int64_t)mark.window_start_ns;
		we = (int64_t)mark.window_end_ns;
		for (k = n = 0; k < nts; k++)
			if (ts[k].t >= ws && ts[k].t <= we)
				ts[n++] = ts[k];
			else
				free(ts[k].codes);
		nts = n;
		for (k = n = 0; k < noff; k++)
			if (off[k].close >= ws && off[k].close <= we)
				off[n++] = off[k];
			else {
				free(off[k].th.codes);
				free(off[k].w.codes);
			}
		noff = n;
		for (k = n = 0; k < ntrig; k++)
			if (trig[k].t >= ws && trig[k].t <= we)
				trig[n++] = trig[k];
		ntrig = n;
		if (expect_reason >= 0 && mark.reason != expect_reason)
			FAIL("trigger reason %u, want %ld\n", mark.reason,
			     expect_reason);
		if (expect_stall) {
			for (k = 0; k < nstall; k++)
				if (mark.time_ns == stall_close[k] &&
				    mark.value_ns == stall_ms[k] * 1000000 + 1500000 &&
				    stall_close[k] >= ws && stall_close[k] <= we)
					break;
			if (k == nstall)
				FAIL("trigger at %" PRId64 " value %" PRIu64
				     " is no stall inside the window\n",
				     mark.time_ns, mark.value_ns);
		}
	}
	/* no H line: the streams carried no header to compare with */
	if (have_h && !(prefix && count == 0 && info->complete_bytes == 0)) {
		if (info->start_us != hs || info->interval_us != hi)
			FAIL("header start_us %" PRIu64 " interval_us %" PRIu64
			     ", want %" PRIu64 " %" PRIu64 "\n", info->start_us,
			     info->interval_us, hs, hi);
	}
	if (!prefix && !window) {
		uint64_t got[4] = { info->modules, info->module_deactivations,
				    info->process_deactivations, info->python };
		static const char *const nm[4] = { "modules",
			"module deactivations", "process deactivations",
			"python records" };

		for (i = 0; i < 4; i++)
			if (got[i] != want[i])
				FAIL("%s: %" PRIu64 ", want %" PRIu64 "\n", nm[i],
				     got[i], want[i]);
	}
	if (!prefix) {
		if (count != nts)
			FAIL("sample count %" PRIu64 ", want %zu\n", count, nts);
		if (info->recovered_from_truncated_tail)
			FAIL("spool ends inside a record\n");
	} else if (count > nts) {
		FAIL("sample count %" PRIu64 " > truth %zu\n", count, nts);
	}
	got_ts = calloc(nts ? nts : 1, 1);
	cpu_prev = calloc(SPULSE_MAX_CPU, sizeof(*cpu_prev));
	cpu_any = calloc(SPULSE_MAX_CPU, sizeof(*cpu_any));
	missing = calloc(SPULSE_MAX_CPU, sizeof(*missing));
	if (!got_ts || !cpu_prev || !cpu_any || !missing) {
		fprintf(stderr, "verify_spool: out of memory\n");
		return 2;
	}
	for (i = 0; i < count; i++) {
		struct spulse_sample s;
		struct spulse_thread th;
		const struct tsample *want;
		uint64_t r0 = gone_rel_n, a0 = gone_abs_n;
		size_t j;
		uint32_t nf;

		if (spulse_snapshot_sample(snap, i, &s) ||
		    spulse_defs_thread(defs, s.thread, &th) ||
		    s.cpu >= SPULSE_MAX_CPU) {
			FAIL("sample %zu unreadable\n", i);
			break;
		}
		if (time_order && i && s.time_ns < prev)
			FAIL("sample %zu time %" PRId64 " < previous %" PRId64 "\n",
			     i, s.time_ns, prev);
		prev = s.time_ns;
		if (cpu_any[s.cpu] && s.time_ns < cpu_prev[s.cpu])
			FAIL("sample %zu time %" PRId64 " < previous %" PRId64
			     " of cpu %u\n", i, s.time_ns, cpu_prev[s.cpu], s.cpu);
		cpu_any[s.cpu] = true;
		cpu_prev[s.cpu] = s.time_ns;
		want = nts ? bsearch(&s.time_ns, ts, nts, sizeof(*ts), cmp_time) :
		       NULL;
		if (!want) {
			FAIL("sample %zu: time %" PRId64 " tid %u is no truth "
			     "sample's\n", i, s.time_ns, th.tid);
			continue;
		}
		j = (size_t)(want - ts);
		if (got_ts[j]) {
			FAIL("sample %zu: time %" PRId64 " written twice\n", i,
			     s.time_ns);
			continue;
		}
		got_ts[j] = 1;
		if (s.cpu != want->cpu)
			FAIL("sample %zu: cpu %u, want %u\n", i, s.cpu, want->cpu);
		if (th.pid != want->pid || th.tid != want->tid ||
		    strcmp(th.comm, want->comm)) {
			FAIL("sample %zu: time %" PRId64 " pid %u tid %u comm %s, "
			     "want %u %u %s\n", i, s.time_ns, th.pid, th.tid,
			     th.comm, want->pid, want->tid, want->comm);
			continue;
		}
		ret = render(defs, s.stack, buf, sizeof(buf), &nf);
		if (ret < 0) {
			FAIL("sample %zu: bad stack (%d)\n", i, ret);
			continue;
		}
		if (!codes_match(buf, want->codes, next_mod[0] ? next_mod : NULL,
				 &gone_abs, &gone_rel_n, &gone_abs_n))
			FAIL("sample %zu frames:\n  got %s\n want %s\n", i, buf,
			     want->codes);
		got_ts[j] |= (gone_rel_n > r0 ? 2 : 0) | (gone_abs_n > a0 ? 4 : 0);
	}
	/*
	 * In time order: what the spool lacks of the truth comes after what it
	 * holds (per CPU; with --time-order overall), and the retired module's
	 * frames switch once.
	 */
	{
		bool missing_any = false, after_any = false;

		for (i = 0; i < nts; i++) {
			uint32_t c = ts[i].cpu < SPULSE_MAX_CPU ? ts[i].cpu : 0;

			if (!got_ts[i]) {
				missing[c] = missing_any = true;
				continue;
			}
			if (missing[c] || (time_order && missing_any)) {
				FAIL("truth sample at %" PRId64 " (cpu %u) is in "
				     "the spool, an earlier one is not\n",
				     ts[i].t, ts[i].cpu);
				break;
			}
		}
		for (i = 0; switch_time && i < nts; i++) {
			if (got_ts[i] & 4)
				after_any = true;
			else if ((got_ts[i] & 2) && after_any) {
				FAIL("sample at %" PRId64 ": retired module "
				     "frames relative after a sample with them "
				     "retired, in time order\n", ts[i].t);
				break;
			}
		}
	}
	/* off-CPU intervals, by close time */
	{
		uint64_t no = spulse_snapshot_offcpu_count(snap);
		struct spulse_offcpu *so = calloc(no ? no : 1, sizeof(*so));
		uint8_t *got_off = calloc(noff ? noff : 1, 1);
		bool ga = false, missing_any = false;
		uint64_t r1 = 0, r2 = 0;

		if (!so || !got_off) {
			fprintf(stderr, "verify_spool: out of memory\n");
			return 2;
		}
		/* each CPU's intervals (its stream: cpu_in) by close time */
		memset(cpu_any, 0, SPULSE_MAX_CPU * sizeof(*cpu_any));
		for (i = 0; i < no; i++) {
			int64_t cl;

			if (spulse_snapshot_offcpu(snap, i, &so[i]) ||
			    so[i].cpu_in >= SPULSE_MAX_CPU) {
				FAIL("interval %zu unreadable\n", i);
				continue;
			}
			cl = so[i].time_ns + (int64_t)(so[i].blocked_ns +
						       so[i].runq_ns);
			if (cpu_any[so[i].cpu_in] && cl < cpu_prev[so[i].cpu_in])
				FAIL("interval %zu closes at %" PRId64 " before the "
				     "previous one of cpu %u\n", i, cl,
				     so[i].cpu_in);
			cpu_any[so[i].cpu_in] = true;
			cpu_prev[so[i].cpu_in] = cl;
		}
		qsort(so, no, sizeof(*so), cmp_soff);
		if (noff)
			qsort(off, noff, sizeof(*off), cmp_off);
		if (!prefix ? no != noff : no > noff)
			FAIL("off-CPU intervals %" PRIu64 ", want %zu\n", no, noff);
		if (info->offcpu != no)
			FAIL("info offcpu %" PRIu64 " != %" PRIu64 "\n",
			     info->offcpu, no);
		for (i = 0; i < no; i++) {
			const struct spulse_offcpu *v = &so[i];
			int64_t cl = v->time_ns + (int64_t)(v->blocked_ns +
							    v->runq_ns);
			const struct toff *w = noff ? bsearch(&cl, off, noff,
					sizeof(*off), cmp_close) : NULL;
			struct spulse_thread th;
			uint32_t nf;

			if (!w) {
				FAIL("interval %zu: close %" PRId64 " is no truth "
				     "interval's\n", i, cl);
				continue;
			}
			if (got_off[w - off]) {
				FAIL("interval %zu: close %" PRId64 " written "
				     "twice\n", i, cl);
				continue;
			}
			got_off[w - off] = 1;

			if (v->time_ns != w->out || v->state != w->state ||
			    v->cpu_out != w->cpu_out || v->cpu_in != w->cpu_in ||
			    v->blocked_ns != w->blocked || v->runq_ns != w->runq ||
			    spulse_defs_thread(defs, v->thread, &th) ||
			    th.pid != w->th.pid || th.tid != w->th.tid ||
			    strcmp(th.comm, w->th.comm)) {
				FAIL("interval %zu: out %" PRId64 " state %u cpus %u/%u "
				     "blocked %" PRIu64 " runq %" PRIu64 ", want close "
				     "%" PRId64 " out %" PRId64 " %u %u/%u %" PRIu64
				     " %" PRIu64 " tid %u\n", i, v->time_ns, v->state,
				     v->cpu_out, v->cpu_in, v->blocked_ns, v->runq_ns,
				     w->close, w->out, w->state, w->cpu_out,
				     w->cpu_in, w->blocked, w->runq, w->th.tid);
				continue;
			}
			if (render(defs, v->stack, buf, sizeof(buf), &nf) < 0 ||
			    !codes_match(buf, w->th.codes, next_mod[0] ?
					 next_mod : NULL, &ga, &r1, &r2))
				FAIL("interval %zu stack:\n  got %s\n want %s\n", i,
				     buf, w->th.codes);
			if (w->w.none) {
				if (v->waker_thread != SPULSE_NONE ||
				    v->waker_stack != SPULSE_NONE ||
				    v->waker_cpu != SPULSE_NONE)
					FAIL("interval %zu: waker, want none\n", i);
				continue;
			}
			if (v->waker_thread == SPULSE_NONE ||
			    spulse_defs_thread(defs, v->waker_thread, &th) ||
			    th.pid != w->w.pid || th.tid != w->w.tid ||
			    strcmp(th.comm, w->w.comm) || v->waker_cpu != w->w.cpu) {
				FAIL("interval %zu: waker wrong (want tid %u cpu %u)\n",
				     i, w->w.tid, w->w.cpu);
				continue;
			}
			if (render(defs, v->waker_stack, buf, sizeof(buf), &nf) < 0 ||
			    !codes_match(buf, w->w.codes, next_mod[0] ?
					 next_mod : NULL, &ga, &r1, &r2))
				FAIL("interval %zu waker stack:\n  got %s\n want %s\n",
				     i, buf, w->w.codes);
		}
		/* what the spool lacks comes after what it holds (per CPU) */
		memset(missing, 0, SPULSE_MAX_CPU * sizeof(*missing));
		for (i = 0; i < noff; i++) {
			uint32_t c = off[i].cpu_in < SPULSE_MAX_CPU ?
				     off[i].cpu_in : 0;

			if (!got_off[i]) {
				missing[c] = missing_any = true;
			} else if (missing[c] || (time_order && missing_any)) {
				FAIL("truth interval closing at %" PRId64 " (cpu %u) "
				     "is in the spool, an earlier one is not\n",
				     off[i].close, off[i].cpu_in);
				break;
			}
		}
		free(so);
		free(got_off);
		noff_got = no;
	}
	/* trigger marks (the dump's own first one excluded) */
	{
		uint64_t nt = spulse_snapshot_trigger_count(snap), k0 = window;
		size_t k;

		if (!prefix && nt - k0 != ntrig)
			FAIL("trigger marks %" PRIu64 ", want %zu\n", nt - k0, ntrig);
		for (k = 0; k + k0 < nt && k < ntrig; k++) {
			struct spulse_trigger tg;

			if (spulse_snapshot_trigger(snap, k + k0, &tg) ||
			    tg.time_ns != trig[k].t || tg.reason != trig[k].reason ||
			    tg.seq != trig[k].seq)
				FAIL("trigger mark %zu differs (want time %" PRId64
				     ")\n", k, trig[k].t);
		}
		ntrig_got = nt;
	}
	if (info->ext_skipped)
		FAIL("%" PRIu64 " unknown extension records left\n",
		     info->ext_skipped);
	if (expect_switch && !(gone_rel_n && gone_abs_n))
		FAIL("retired module: %" PRIu64 " module-relative, %" PRIu64
		     " %s frames; want both\n", gone_rel_n, gone_abs_n,
		     next_mod[0] ? next_mod : "absolute");
	if (!failures && window)
		printf("ok window %.3f..%.3f s: %" PRIu64 " samples, %" PRIu64
		       " intervals, %" PRIu64 " trigger records (reason %u seq %u)\n",
		       (double)ws / 1e9, (double)we / 1e9, count, noff_got,
		       ntrig_got, mark.reason, mark.seq);
	else if (!failures)
		printf("ok %" PRIu64 " samples, %" PRIu64 " intervals, %" PRIu64
		       " trigger marks (truth %zu; retired module frames "
		       "%" PRIu64 " relative then %" PRIu64 " %s)\n", count,
		       noff_got, ntrig_got, nts, gone_rel_n, gone_abs_n,
		       next_mod[0] ? next_mod : "absolute");
	spulse_snapshot_close(snap);
	for (i = 0; i < nts; i++)
		free(ts[i].codes);
	free(ts);
	free(got_ts);
	free(cpu_prev);
	free(cpu_any);
	free(missing);
	for (i = 0; i < noff; i++) {
		free(off[i].th.codes);
		free(off[i].w.codes);
	}
	free(off);
	return failures ? 1 : 0;
}
