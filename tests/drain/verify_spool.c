// SPDX-License-Identifier: MIT
/*
 * verify_spool: check a drained spool against gen_fake's ground truth.
 *
 *   verify_spool SPOOL TRUTH [--prefix] [--expect-switch] [--window]
 *                [--expect-reason N] [--expect-stall]
 *
 * Opens SPOOL with Snapshot (full validation) and checks: start_us and
 * interval_us from the streams' headers; the counts of modules and of
 * module/process deactivations and Python records forwarded from meta;
 * samples in non-decreasing time order; sample i equals the i-th truth
 * sample by time (time, pid, tid, comm, and every frame root to leaf:
 * kind, absolute address via spulse_defs_frame_address, and for frames
 * that must be module-relative the module's path); the sample count equals
 * the truth's. A truth frame "Gaddr:path" (a module meta retires) must be
 * module-relative to path up to some sample and absolute from then on (the
 * retirement applies once, in spool order); --expect-switch also requires
 * both forms to occur. With --prefix the spool may hold only a prefix of the truth
 * (a drainer killed early) and the counts of meta records are not checked.
 *
 * Extension records: every sample's CPU (the truth's cpu field); the
 * off-CPU intervals equal the truth's "O" lines sorted by close time (switch
 * -out time, state, cpus, blocked/run-queue times, thread, every frame of
 * the stack, waker thread, waker CPU and every frame of the waker stack);
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
 * matches "Raddr:path" while *gone_abs is false, or "Uaddr" (which sets it).
 */
static bool codes_match(const char *got, const char *want, bool *gone_abs,
			uint64_t *rel_n, uint64_t *abs_n)
{
	char g[128], w[128];
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
			if (colon && g[0] == 'U' &&
			    !strncmp(g + 1, w + 1, (size_t)(colon - w - 1)) &&
			    g[colon - w] == 0) {
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
	uint64_t gone_rel_n = 0, gone_abs_n = 0;
	char *line = NULL, buf[1 << 16];
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
		else if (!strcmp(argv[i], "--window"))
			window = true;
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
	for (i = 0; i < count && i < nts; i++) {
		struct spulse_sample s;
		struct spulse_thread th;
		uint32_t nf;

		if (spulse_snapshot_sample(snap, i, &s) ||
		    spulse_defs_thread(defs, s.thread, &th)) {
			FAIL("sample %zu unreadable\n", i);
			break;
		}
		if (i && s.time_ns < prev)
			FAIL("sample %zu time %" PRId64 " < previous %" PRId64 "\n",
			     i, s.time_ns, prev);
		prev = s.time_ns;
		if (s.cpu != ts[i].cpu)
			FAIL("sample %zu: cpu %u, want %u\n", i, s.cpu, ts[i].cpu);
		if (s.time_ns != ts[i].t || th.pid != ts[i].pid ||
		    th.tid != ts[i].tid || strcmp(th.comm, ts[i].comm)) {
			FAIL("sample %zu: time %" PRId64 " pid %u tid %u comm %s, "
			     "want %" PRId64 " %u %u %s\n", i, s.time_ns, th.pid,
			     th.tid, th.comm, ts[i].t, ts[i].pid, ts[i].tid,
			     ts[i].comm);
			continue;
		}
		ret = render(defs, s.stack, buf, sizeof(buf), &nf);
		if (ret < 0) {
			FAIL("sample %zu: bad stack (%d)\n", i, ret);
			continue;
		}
		if (!codes_match(buf, ts[i].codes, &gone_abs, &gone_rel_n,
				 &gone_abs_n))
			FAIL("sample %zu frames:\n  got %s\n want %s\n", i, buf,
			     ts[i].codes);
	}
	/* off-CPU intervals, by close time */
	{
		uint64_t no = spulse_snapshot_offcpu_count(snap);
		struct spulse_offcpu *so = calloc(no ? no : 1, sizeof(*so));
		bool ga = false;
		uint64_t r1 = 0, r2 = 0;

		for (i = 0; i < no; i++)
			if (spulse_snapshot_offcpu(snap, i, &so[i]))
				FAIL("interval %zu unreadable\n", i);
		qsort(so, no, sizeof(*so), cmp_soff);
		if (noff)
			qsort(off, noff, sizeof(*off), cmp_off);
		if (!prefix ? no != noff : no > noff)
			FAIL("off-CPU intervals %" PRIu64 ", want %zu\n", no, noff);
		if (info->offcpu != no)
			FAIL("info offcpu %" PRIu64 " != %" PRIu64 "\n",
			     info->offcpu, no);
		for (i = 0; i < no && i < noff; i++) {
			const struct spulse_offcpu *v = &so[i];
			const struct toff *w = &off[i];
			struct spulse_thread th;
			uint32_t nf;

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
			    !codes_match(buf, w->th.codes, &ga, &r1, &r2))
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
			    !codes_match(buf, w->w.codes, &ga, &r1, &r2))
				FAIL("interval %zu waker stack:\n  got %s\n want %s\n",
				     i, buf, w->w.codes);
		}
		free(so);
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
		     " absolute frames; want both\n", gone_rel_n, gone_abs_n);
	if (!failures && window)
		printf("ok window %.3f..%.3f s: %" PRIu64 " samples, %" PRIu64
		       " intervals, %" PRIu64 " trigger records (reason %u seq %u)\n",
		       (double)ws / 1e9, (double)we / 1e9, count, noff_got,
		       ntrig_got, mark.reason, mark.seq);
	else if (!failures)
		printf("ok %" PRIu64 " samples, %" PRIu64 " intervals, %" PRIu64
		       " trigger marks (truth %zu; retired module frames "
		       "%" PRIu64 " relative then %" PRIu64 " absolute)\n", count,
		       noff_got, ntrig_got, nts, gone_rel_n, gone_abs_n);
	spulse_snapshot_close(snap);
	for (i = 0; i < nts; i++)
		free(ts[i].codes);
	free(ts);
	for (i = 0; i < noff; i++) {
		free(off[i].th.codes);
		free(off[i].w.codes);
	}
	free(off);
	return failures ? 1 : 0;
}
