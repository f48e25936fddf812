/* SPDX-License-Identifier: MIT */
/*
 * perfdata_gen: write a perf.data file holding exactly the samples of a
 * SPULSE spool, so `perf report` / `perf script` can be timed on the same
 * samples as spulse (bench/bench_report.py).
 *
 *   perfdata_gen SPOOL OUT.data
 *
 * Layout (perf's tools/perf/Documentation/perf.data-file-format.txt):
 * a perf_file_header ("PERFILE2"), one perf_file_attr (cpu-clock, software
 * event, sample_type IP|TID|TIME|CPU|PERIOD|CALLCHAIN, the spool's period)
 * with one id, then the data section: PERF_RECORD_MMAP for the kernel
 * ("[kernel.kallsyms]_text") and for every module record (its pid, range,
 * file offset, path), PERF_RECORD_COMM for every thread, then one
 * PERF_RECORD_SAMPLE per spool sample in stream order (time = start_us
 * plus the sample's offset, ip = the leaf's absolute address, callchain =
 * PERF_CONTEXT_KERNEL + kernel frames, PERF_CONTEXT_USER + user frames,
 * leaf first; the truncated marker is left out) with a
 * PERF_RECORD_FINISHED_ROUND every 4096 samples. No feature sections.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libspulse.h>

struct file_section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct file_section attrs, data, event_types;
	uint64_t adds_features[4];
};

struct file_attr {
	struct perf_event_attr attr;
	struct file_section ids;
};

#define MAGIC2 0x32454c4946524550ULL	/* "PERFILE2" */
#define FINISHED_ROUND 12		/* PERF_RECORD_FINISHED_ROUND */

static FILE *out;
static uint64_t data_bytes;

static void put(const void *p, size_t n)
{
	fwrite(p, 1, n, out);
	data_bytes += n;
}

static void put_header(uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { type, misc, (uint16_t)size };

	put(&h, sizeof(h));
}

/* @s NUL-padded to a multiple of 8 bytes (at least one NUL) */
static void put_str(const char *s, size_t len)
{
	static const char zero[8];
	size_t padded = (len + 8) & ~(size_t)7;

	put(s, len);
	put(zero, padded - len);
}

static size_t str_size(size_t len)
{
	return (len + 8) & ~(size_t)7;
}

static void mmap_event(uint32_t pid, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *path, uint16_t misc)
{
	size_t pl = strlen(path);
	struct { uint32_t pid, tid; uint64_t addr, len, pgoff; } m = {
		pid, pid, start, len, pgoff };

	put_header(PERF_RECORD_MMAP, misc,
		   sizeof(struct perf_event_header) + sizeof(m) + str_size(pl));
	put(&m, sizeof(m));
	put_str(path, pl);
}

int main(int argc, char **argv)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_error err = { 0 };
	const struct spulse_defs *defs;
	const struct spulse_info *info;
	struct spulse_replay *r;
	struct spulse_sample s;
	struct file_header fh = { 0 };
	struct file_attr fa = { 0 };
	uint64_t id = 1, nsamples = 0;
	uint32_t i, n;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: perfdata_gen SPOOL OUT.data\n");
		return 2;
	}
	rc = spulse_replay_open(argv[1], &ro, &r, &err);
	if (rc < 0) {
		fprintf(stderr, "%s: %s (offset %llu)\n", argv[1], err.msg,
			(unsigned long long)err.offset);
		return 1;
	}
	defs = spulse_replay_defs(r);
	info = spulse_replay_info(r);
	out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	fa.attr.type = PERF_TYPE_SOFTWARE;
	fa.attr.size = sizeof(fa.attr);
	fa.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fa.attr.sample_period = info->interval_us ? info->interval_us * 1000 :
			       1000000;
	fa.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			      PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	fa.attr.exclude_hv = 1;
	fa.attr.mmap = 1;
	fa.attr.comm = 1;
	/* layout: header, attr, its id, data */
	fh.magic = MAGIC2;
	fh.size = sizeof(fh);
	fh.attr_size = sizeof(fa);
	fh.attrs.offset = sizeof(fh);
	fh.attrs.size = sizeof(fa);
	fa.ids.offset = sizeof(fh) + sizeof(fa);
	fa.ids.size = sizeof(id);
	fh.data.offset = fa.ids.offset + sizeof(id);
	fwrite(&fh, sizeof(fh), 1, out);
	fwrite(&fa, sizeof(fa), 1, out);
	fwrite(&id, sizeof(id), 1, out);

	mmap_event((uint32_t)-1, 0xffffffff80000000ULL, 0x7fffffffULL,
		   0xffffffff80000000ULL, "[kernel.kallsyms]_text",
		   PERF_RECORD_MISC_KERNEL);
	n = spulse_defs_count(defs, SPULSE_TAG_MODULE);
	for (i = 0; i < n; i++) {
		struct spulse_module m;

		if (spulse_defs_module(defs, i, &m) == 0)
			mmap_event(m.pid, m.start, m.end - m.start,
				   m.file_offset, m.path,
				   PERF_RECORD_MISC_USER);
	}
	n = spulse_defs_count(defs, SPULSE_TAG_THREAD);
	for (i = 0; i < n; i++) {
		struct spulse_thread t;
		struct { uint32_t pid, tid; } c;

		if (spulse_defs_thread(defs, i, &t) < 0)
			continue;
		c.pid = t.pid;
		c.tid = t.tid;
		put_header(PERF_RECORD_COMM, PERF_RECORD_MISC_USER,
			   sizeof(struct perf_event_header) + sizeof(c) +
			   str_size(t.comm_len));
		put(&c, sizeof(c));
		put_str(t.comm, t.comm_len);
	}
	while ((rc = spulse_replay_next_sample(r, &s)) > 0) {
		uint64_t k[SPULSE_MAX_DEPTH + 1], u[SPULSE_MAX_DEPTH + 1];
		uint64_t chain[2 * SPULSE_MAX_DEPTH + 4];
		size_t nk = 0, nu = 0, nc = 0, j;
		struct spulse_thread t;
		struct {
			uint64_t ip;
			uint32_t pid, tid;
			uint64_t time;
			uint32_t cpu, res;
			uint64_t period;
			uint64_t nr;
		} rec;
		uint32_t id2 = s.stack;

		if (spulse_defs_thread(defs, s.thread, &t) < 0)
			continue;
		/* leaf first, as perf's callchains */
		while (id2 != SPULSE_NONE) {
			struct spulse_stack st;
			struct spulse_frame fr;
			uint64_t a;

			if (spulse_defs_stack(defs, id2, &st) < 0 ||
			    spulse_defs_frame(defs, st.frame, &fr) < 0)
				break;
			id2 = st.parent;
			if (fr.kind == SPULSE_FRAME_TRUNCATED ||
			    spulse_defs_frame_address(defs, st.frame, &a) < 0)
				continue;
			if (fr.kind == SPULSE_FRAME_KERNEL)
				k[nk++] = a;
			else
				u[nu++] = a;
		}
		if (!nk && !nu)
			continue;
		if (nk) {
			chain[nc++] = (uint64_t)PERF_CONTEXT_KERNEL;
			for (j = 0; j < nk; j++)
				chain[nc++] = k[j];
		}
		if (nu) {
			chain[nc++] = (uint64_t)PERF_CONTEXT_USER;
			for (j = 0; j < nu; j++)
				chain[nc++] = u[j];
		}
		rec.ip = nk ? k[0] : u[0];
		rec.pid = t.pid;
		rec.tid = t.tid;
		rec.time = info->start_us * 1000 + (uint64_t)s.time_ns;
		rec.cpu = s.cpu == SPULSE_NONE ? 0 : s.cpu;
		rec.res = 0;
		rec.period = fa.attr.sample_period;
		rec.nr = nc;
		put_header(PERF_RECORD_SAMPLE,
			   nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
			   sizeof(struct perf_event_header) + sizeof(rec) +
			   nc * sizeof(uint64_t));
		put(&rec, sizeof(rec));
		put(chain, nc * sizeof(uint64_t));
		if (++nsamples % 4096 == 0)
			put_header(FINISHED_ROUND, 0,
				   sizeof(struct perf_event_header));
	}
	put_header(FINISHED_ROUND, 0, sizeof(struct perf_event_header));
	if (rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", argv[1],
			strerror(-rc));
		return 1;
	}
	fh.data.size = data_bytes;
	if (fseek(out, 0, SEEK_SET) || fwrite(&fh, sizeof(fh), 1, out) != 1 ||
	    fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	spulse_replay_close(r);
	fprintf(stderr, "perfdata_gen: %llu samples -> %s\n",
		(unsigned long long)nsamples, argv[2]);
	return 0;
}
