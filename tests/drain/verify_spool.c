// SPDX-License-Identifier: MIT
/*
 * verify_spool: check a drained spool against gen_fake's ground truth.
 *
 *   verify_spool SPOOL TRUTH [--prefix]
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
 * Prints "ok N samples" or the first mismatches; exit 0 / 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libspulse.h>

struct tsample {
	int64_t t;
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
	size_t nts = 0, cap = 0, i;
	uint64_t hs = 0, hi = 0, count, want[4] = { 0 };
	bool have_h = false;
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
			if (sscanf(line, "S %" SCNd64 " %u %u %79s %u%n", &t->t,
				   &t->pid, &t->tid, t->comm, &nf, &pos) != 5) {
				fprintf(stderr, "bad truth line: %s\n", line);
				return 2;
			}
			t->codes = strdup(line + pos);
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
	/* no H line: the streams carried no header to compare with */
	if (have_h && !(prefix && count == 0 && info->complete_bytes == 0)) {
		if (info->start_us != hs || info->interval_us != hi)
			FAIL("header start_us %" PRIu64 " interval_us %" PRIu64
			     ", want %" PRIu64 " %" PRIu64 "\n", info->start_us,
			     info->interval_us, hs, hi);
	}
	if (!prefix) {
		uint64_t got[4] = { info->modules, info->module_deactivations,
				    info->process_deactivations, info->python };
		static const char *const nm[4] = { "modules",
			"module deactivations", "process deactivations",
			"python records" };

		for (i = 0; i < 4; i++)
			if (got[i] != want[i])
				FAIL("%s: %" PRIu64 ", want %" PRIu64 "\n", nm[i],
				     got[i], want[i]);
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
	if (expect_switch && !(gone_rel_n && gone_abs_n))
		FAIL("retired module: %" PRIu64 " module-relative, %" PRIu64
		     " absolute frames; want both\n", gone_rel_n, gone_abs_n);
	if (!failures)
		printf("ok %" PRIu64 " samples (truth %zu; retired module frames "
		       "%" PRIu64 " relative then %" PRIu64 " absolute)\n", count,
		       nts, gone_rel_n, gone_abs_n);
	spulse_snapshot_close(snap);
	for (i = 0; i < nts; i++)
		free(ts[i].codes);
	free(ts);
	return failures ? 1 : 0;
}
