// SPDX-License-Identifier: MIT
/*
 * libspulse microbenchmark: writes a synthetic spool of N samples through
 * the Recorder, then reads it with Snapshot, Replay and Tail, each in its
 * own child process so that peak RSS is per reader. Prints a table. A
 * second table does the same for N/4 off-CPU intervals (extension kind 2,
 * wakers on most) interleaved with N/4 samples on 4 CPUs (cpu records).
 * With a third argument (a spool, e.g. the 10M-sample `spulse synth` one
 * that `make bench-lib` writes) the sample readers run on it as well. A last
 * table reads crafted spools whose pids collide under the old unseeded
 * pid-map hash (issue 10 item 15) beside the same spools with sequential
 * pids: cost must follow the size, whatever the ids. Each figure is the
 * median of BENCH_LIB_RUNS (default 5) runs, each in a fresh child.
 * usage: bench_lib DIR [SAMPLES [SPOOL]]   (default 10,000,000)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libspulse.h>

/*
 * CPU time of this process: the machine may be shared, and the targets are
 * per core, so rates are samples per CPU-second (wall time is also shown).
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* A realistic shape: 4 processes x 4 threads, ~2000 distinct stacks of
 * depth 4-24 sharing prefixes, kernel frames on a third of them, samples
 * about 1 ms apart with jitter. Returns seconds spent in rec_sample calls. */
static double write_spool(const char *path, uint64_t n)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .interval_us = 1000,
					  .flush_bytes = 1 << 16 };
	enum { NSTACKS = 2048 };
	static uint32_t stacks[NSTACKS];
	struct spulse_recorder *r;
	uint32_t th[16], m, fr[32];
	uint64_t s = 42, i;
	int64_t t = 0;
	double t0;
	int k, p;

	if (spulse_recorder_open(path, &o, &r)) {
		perror(path);
		exit(1);
	}
	for (p = 0; p < 4; p++) {
		spulse_rec_module(r, 100 + p, 0x400000, 0x800000, 0, "/usr/bin/app",
				  NULL, 0, &m);
		spulse_rec_module(r, 100 + p, 0x7f0000000000ULL, 0x7f0000400000ULL,
				  0, "/lib/libc.so.6", NULL, 0, &m);
		for (k = 0; k < 4; k++)
			spulse_rec_thread(r, 100 + p, 1000 + p * 4 + k, "app",
					  &th[p * 4 + k]);
	}
	for (k = 0; k < NSTACKS; k++) {
		int d = 4 + (int)(rnd(&s) % 20), j;
		uint32_t pid = 100 + (uint32_t)(k % 4);

		for (j = 0; j < d; j++) {
			uint64_t a = j < 3 ? 0x401000 + (uint64_t)j * 64
				   : (rnd(&s) & 1) ? 0x402000 + rnd(&s) % 4096
						   : 0x7f0000001000ULL + rnd(&s) % 8192;
			spulse_rec_frame_addr(r, pid, a, false, j + 1 < d, &fr[j]);
		}
		if (k % 3 == 0)
			spulse_rec_frame_addr(r, pid, 0xffffffff81000000ULL +
					      rnd(&s) % 65536, true, false, &fr[d++]);
		spulse_rec_stack_frames(r, fr, (size_t)d, &stacks[k]);
	}
	t0 = now();
	for (i = 0; i < n; i++) {
		uint64_t x = rnd(&s);

		t += 1000000 + (int64_t)(x % 20000) - 10000;
		/* skewed: hot stacks dominate, as in real profiles */
		spulse_rec_sample(r, t, th[x >> 60],
				  stacks[(x >> 20) % ((x >> 40) & 1 ? 64 : NSTACKS)]);
	}
	t0 = now() - t0;
	if (spulse_recorder_close(r)) {
		fprintf(stderr, "recorder close failed\n");
		exit(1);
	}
	return t0;
}

/*
 * @n intervals and @n samples on 4 CPUs, threads and stacks as above but
 * fewer: each interval is a switch-out stack + (60%) a waker. Returns the
 * seconds spent in rec_offcpu + rec_sample_cpu calls.
 */
static double write_offcpu_spool(const char *path, uint64_t n)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .flush_bytes = 1 << 16 };
	enum { NSTACKS = 512 };
	static uint32_t stacks[NSTACKS];
	struct spulse_recorder *r;
	uint32_t th[16], fr[32];
	uint64_t s = 7, i;
	int64_t t = 0;
	double t0;
	int k;

	if (spulse_recorder_open(path, &o, &r)) {
		perror(path);
		exit(1);
	}
	for (k = 0; k < 16; k++)
		spulse_rec_thread(r, 100 + (uint32_t)k / 4, 1000 + (uint32_t)k,
				  "app", &th[k]);
	for (k = 0; k < NSTACKS; k++) {
		int d = 4 + (int)(rnd(&s) % 16), j;

		for (j = 0; j < d; j++)
			spulse_rec_frame_addr(r, 100, j < d - 3 ?
					      0x401000 + rnd(&s) % 4096 :
					      0xffffffff81000000ULL + rnd(&s) % 256,
					      j >= d - 3, j + 1 < d, &fr[j]);
		spulse_rec_stack_frames(r, fr, (size_t)d, &stacks[k]);
	}
	t0 = now();
	for (i = 0; i < n; i++) {
		uint64_t x = rnd(&s);
		struct spulse_offcpu iv = {
			.thread = th[x >> 60], .stack = stacks[(x >> 20) % NSTACKS],
			.state = (uint8_t)(x % 3), .cpu_out = (uint32_t)(x >> 8) & 3,
			.cpu_in = (uint32_t)(x >> 10) & 3, .runq_ns = x % 100000,
			.waker_thread = SPULSE_NONE, .waker_stack = SPULSE_NONE,
			.waker_cpu = SPULSE_NONE,
		};

		t += 500000 + (int64_t)(x % 20000);
		spulse_rec_sample_cpu(r, t, th[x >> 60], stacks[(x >> 30) % NSTACKS],
				      (uint32_t)(x >> 56) & 3);
		if (iv.state) {
			iv.blocked_ns = (x >> 12) % 10000000;
			if ((x >> 40) % 10 < 6) {
				iv.waker_thread = th[(x >> 44) & 15];
				iv.waker_stack = stacks[(x >> 48) % NSTACKS];
				iv.waker_cpu = (uint32_t)(x >> 52) & 3;
			}
		}
		iv.time_ns = t > (int64_t)(iv.blocked_ns + iv.runq_ns) ?
			     t - (int64_t)(iv.blocked_ns + iv.runq_ns) : 0;
		if (spulse_rec_offcpu(r, &iv)) {
			fprintf(stderr, "rec_offcpu failed\n");
			exit(1);
		}
	}
	t0 = now() - t0;
	if (spulse_recorder_close(r)) {
		fprintf(stderr, "recorder close failed\n");
		exit(1);
	}
	return t0;
}

struct result {
	double secs, wall;
	uint64_t samples;
	long maxrss_kb;
};

static void sink_iv(const struct spulse_offcpu *iv, uint64_t *acc)
{
	*acc += (uint64_t)iv->time_ns ^ iv->runq_ns ^ iv->waker_stack;
}

/* Readers 5-7: intervals through Snapshot, Replay next_offcpu, Tail. */
static int read_intervals(int which, const char *path, uint64_t *n,
			  uint64_t *acc)
{
	struct spulse_error err;
	struct spulse_offcpu iv;

	if (which == 5) {
		struct spulse_snapshot *sn;
		uint64_t i;

		if (spulse_snapshot_open(path, NULL, &sn, &err))
			return 1;
		for (i = 0; i < spulse_snapshot_offcpu_count(sn); i++) {
			spulse_snapshot_offcpu(sn, i, &iv);
			sink_iv(&iv, acc);
		}
		*n = i;
		spulse_snapshot_close(sn);
	} else if (which == 6) {
		struct spulse_replay *rp;

		if (spulse_replay_open(path, NULL, &rp, &err))
			return 1;
		while (spulse_replay_next_offcpu(rp, &iv) == 1) {
			sink_iv(&iv, acc);
			(*n)++;
		}
		spulse_replay_close(rp);
	} else {
		struct spulse_tail *tl;
		const struct spulse_sample *ss;
		const struct spulse_offcpu *ivs;
		int k, m, j;

		if (spulse_tail_open(path, NULL, &tl, &err))
			return 1;
		for (;;) {
			k = spulse_tail_poll(tl, &ss, &err);
			m = spulse_tail_offcpu(tl, &ivs);
			if (k <= 0 && m == 0)
				break;
			for (j = 0; j < m; j++, (*n)++)
				sink_iv(&ivs[j], acc);
		}
		spulse_tail_close(tl);
	}
	return 0;
}

static void sink(const struct spulse_sample *s, uint64_t *acc)
{
	*acc += (uint64_t)s->time_ns ^ s->stack ^ s->thread;
}

static int run_reader(int which, const char *path, int pfd)
{
	struct spulse_error err;
	struct spulse_sample s;
	uint64_t n = 0, acc = 0;
	double t0 = now(), w0 = wall();

	if (which >= 5) {
		if (read_intervals(which, path, &n, &acc))
			return 1;
	} else if (which == 0) {
		struct spulse_snapshot *sn;
		uint64_t i;

		if (spulse_snapshot_open(path, NULL, &sn, &err))
			return 1;
		for (i = 0; i < spulse_snapshot_sample_count(sn); i++) {
			spulse_snapshot_sample(sn, i, &s);
			sink(&s, &acc);
		}
		n = i;
		spulse_snapshot_close(sn);
	} else if (which == 1 || which == 3 || which == 4) {
		struct spulse_replay *rp;

		if (spulse_replay_open(path, NULL, &rp, &err))
			return 1;
		if (which >= 3) {
			t0 = now();	/* iteration only */
			w0 = wall();
		}
		if (which == 4) {
			static struct spulse_sample buf[4096];
			int k, j;

			while ((k = spulse_replay_next_samples(rp, buf, 4096)) > 0)
				for (j = 0; j < k; j++, n++)
					sink(&buf[j], &acc);
		} else {
			while (spulse_replay_next_sample(rp, &s) == 1) {
				sink(&s, &acc);
				n++;
			}
		}
		spulse_replay_close(rp);
	} else {
		struct spulse_tail *tl;
		const struct spulse_sample *ss;
		int k, j;

		if (spulse_tail_open(path, NULL, &tl, &err))
			return 1;
		while ((k = spulse_tail_poll(tl, &ss, &err)) > 0)
			for (j = 0; j < k; j++, n++)
				sink(&ss[j], &acc);
		spulse_tail_close(tl);
	}
	{
		struct result r = { now() - t0, wall() - w0, n, (long)(acc & 1) };

		if (write(pfd, &r, sizeof(r)) != sizeof(r))
			return 1;
	}
	return 0;
}

static struct result measure_once(int which, const char *path)
{
	struct result r = { 0 };
	struct rusage ru;
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd))
		exit(1);
	pid = fork();
	if (pid == 0)
		_exit(run_reader(which, path, pfd[1]));
	close(pfd[1]);
	if (read(pfd[0], &r, sizeof(r)) != sizeof(r)) {
		fprintf(stderr, "reader %d failed\n", which);
		exit(1);
	}
	close(pfd[0]);
	wait4(pid, &status, 0, &ru);
	r.maxrss_kb = ru.ru_maxrss;
	return r;
}

static int cmp_result(const void *a, const void *b)
{
	const struct result *x = a, *y = b;

	return (x->secs > y->secs) - (x->secs < y->secs);
}

/* BENCH_LIB_RUNS runs (default 5, at most 31) of reader @which on @path,
 * each in a fresh child, sorted by CPU time into @rs; returns the count. */
static int measure_all(int which, const char *path, struct result rs[31])
{
	const char *e = getenv("BENCH_LIB_RUNS");
	int runs = e ? atoi(e) : 5, k;

	if (runs < 1)
		runs = 1;
	if (runs > 31)
		runs = 31;
	for (k = 0; k < runs; k++)
		rs[k] = measure_once(which, path);
	qsort(rs, (size_t)runs, sizeof(rs[0]), cmp_result);
	return runs;
}

/* The median (by CPU time) of BENCH_LIB_RUNS runs. */
static struct result measure(int which, const char *path)
{
	struct result rs[31];
	int runs = measure_all(which, path, rs);

	return rs[runs / 2];
}

/* MET when every run is at or above @target, NOT MET when every run is
 * below, INCONCLUSIVE when the runs straddle it. */
static const char *verdict(double lo, double hi, double target)
{
	if (lo >= target)
		return "MET";
	if (hi < target)
		return "NOT MET";
	return "INCONCLUSIVE";
}

/* Issue 11's library targets: Replay open+iterate >= 100M samples/s on
 * the 10M-sample synthetic spool @synth (every run), and Replay's peak RSS
 * independent of file size (a 1M- and a 10M-sample spool in @dir). */
static int target_table(const char *dir, const char *synth)
{
	struct result rs[31], small[31], big[31];
	char p1[4096], p10[4096];
	struct spulse_replay *rp;
	struct spulse_error err;
	double lo, hi, med, rss1, rss10;
	uint64_t n;
	int runs, k;

	if (spulse_replay_open(synth, NULL, &rp, &err))
		return 1;
	n = spulse_replay_info(rp)->samples;
	spulse_replay_close(rp);
	runs = measure_all(1, synth, rs);
	for (k = 0; k < runs; k++)
		if (rs[k].samples != n)
			return 1;
	hi = (double)n / rs[0].secs;	/* sorted by CPU time */
	lo = (double)n / rs[runs - 1].secs;
	med = (double)n / rs[runs / 2].secs;
	printf("\ntargets (issue 11)\n");
	printf("Replay open+iterate, %llu-sample synthetic spool: median %.1fM samples/s "
	       "[%.1fM..%.1fM over %d runs] >= 100M: %s\n",
	       (unsigned long long)n, med / 1e6, lo / 1e6, hi / 1e6, runs,
	       verdict(lo, hi, 100e6));

	snprintf(p1, sizeof(p1), "%s/bench_lib_1m.spulse", dir);
	snprintf(p10, sizeof(p10), "%s/bench_lib_10m.spulse", dir);
	write_spool(p1, 1000000);
	write_spool(p10, 10000000);
	runs = measure_all(1, p1, small);
	measure_all(1, p10, big);
	rss1 = rss10 = 0;
	for (k = 0; k < runs; k++) {
		if ((double)small[k].maxrss_kb > rss1)
			rss1 = (double)small[k].maxrss_kb;
		if ((double)big[k].maxrss_kb > rss10)
			rss10 = (double)big[k].maxrss_kb;
	}
	unlink(p1);
	unlink(p10);
	/* independent: 10x the file adds less than 1 MiB of peak RSS */
	printf("Replay peak RSS (max of %d runs): 1M samples %.1f MB, 10M samples %.1f MB; "
	       "independent of file size (10x file adds < 1 MB): %s\n", runs,
	       rss1 / 1024.0, rss10 / 1024.0,
	       rss10 - rss1 < 1024.0 ? "MET" : "NOT MET");
	return 0;
}

static const char *const reader_names[] = { "Snapshot (open+iterate)",
	"Replay (open+iterate)", "Tail (poll all)",
	"Replay (iterate only)", "Replay (next_samples)" };

/* The five sample readers on @path; 0 if each read @n samples. */
static int sample_table(const char *path, uint64_t n, double file_bytes)
{
	int i;

	printf("%-26s %14s %10s %12s %10s\n", "reader", "samples/s", "MB/s",
	       "peak RSS MB", "wall s");
	for (i = 0; i < 5; i++) {
		struct result r = measure(i, path);

		if (r.samples != n) {
			fprintf(stderr, "%s read %llu samples, want %llu\n",
				reader_names[i], (unsigned long long)r.samples,
				(unsigned long long)n);
			return 1;
		}
		printf("%-26s %14.0f %10.1f %12.1f %10.2f\n", reader_names[i],
		       (double)n / r.secs, file_bytes / 1e6 / r.secs,
		       (double)r.maxrss_kb / 1024.0, r.wall);
	}
	return 0;
}

/* The pid-map hash before it was seeded (issue 10 item 15). */
static uint32_t old_pid_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/*
 * A spool of @nmods module records, pids colliding in the low 12 bits of
 * the old hash (@collide) or sequential, then @ndeact process
 * deactivations cycling over those pids. Written through the Recorder.
 */
static void write_ids_spool(const char *path, bool collide, uint32_t nmods,
			    uint32_t ndeact)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true,
					  .flush_bytes = 1 << 16 };
	struct spulse_recorder *r;
	uint32_t *pids = malloc(nmods * sizeof(*pids)), k = 0, m;
	uint64_t pid;

	if (!pids || spulse_recorder_open(path, &o, &r)) {
		perror(path);
		exit(1);
	}
	for (pid = 1; k < nmods; pid++)
		if (!collide || (old_pid_hash(pid) & 0xfff) == 0)
			pids[k++] = (uint32_t)pid;
	for (k = 0; k < nmods; k++)
		if (spulse_rec_module(r, pids[k], 0x400000, 0x401000, 0, "/m",
				      NULL, 0, &m))
			exit(1);
	for (k = 0; k < ndeact; k++)
		if (spulse_rec_process_deactivate(r, pids[k % nmods]))
			exit(1);
	if (spulse_recorder_close(r))
		exit(1);
	free(pids);
}

/* Seconds of CPU to open (and for Tail, poll to the end) @path. */
static double ids_read(int which, const char *path)
{
	struct spulse_error err;
	double t0 = now();

	if (which == 0) {
		struct spulse_snapshot *s;

		if (spulse_snapshot_open(path, NULL, &s, &err))
			exit(1);
		spulse_snapshot_close(s);
	} else if (which == 1) {
		struct spulse_replay *r;

		if (spulse_replay_open(path, NULL, &r, &err))
			exit(1);
		spulse_replay_close(r);
	} else {
		struct spulse_tail *t;
		const struct spulse_sample *ss;

		if (spulse_tail_open(path, NULL, &t, &err))
			exit(1);
		while (spulse_tail_poll(t, &ss, &err) > 0)
			;
		spulse_tail_close(t);
	}
	return now() - t0;
}

static void ids_table(const char *dir)
{
	static const struct { const char *name; uint32_t mods, deact; } shapes[] = {
		{ "130,557 modules", 130557, 0 },
		{ "20,000 modules + 1M deact", 20000, 1000000 },
	};
	char pc[4096], ps[4096];
	size_t i;
	int w;

	snprintf(pc, sizeof(pc), "%s/bench_lib_ids_c.spulse", dir);
	snprintf(ps, sizeof(ps), "%s/bench_lib_ids_s.spulse", dir);
	printf("\ncrafted ids: pids colliding under the old pid-map hash vs "
	       "sequential pids (CPU s, median of 5)\n");
	printf("%-28s %-9s %11s %11s %7s\n", "spool", "reader", "colliding",
	       "sequential", "ratio");
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		write_ids_spool(pc, true, shapes[i].mods, shapes[i].deact);
		write_ids_spool(ps, false, shapes[i].mods, shapes[i].deact);
		for (w = 0; w < 3; w++) {
			static const char *const rn[] = { "Snapshot", "Replay",
							  "Tail" };
			double c[5], q[5], t;
			int k, a, b;

			for (k = 0; k < 5; k++) {
				c[k] = ids_read(w, pc);
				q[k] = ids_read(w, ps);
			}
			for (a = 0; a < 5; a++)	/* sort both */
				for (b = a + 1; b < 5; b++) {
					if (c[b] < c[a])
						t = c[a], c[a] = c[b], c[b] = t;
					if (q[b] < q[a])
						t = q[a], q[a] = q[b], q[b] = t;
				}
			printf("%-28s %-9s %11.4f %11.4f %7.2f\n", shapes[i].name,
			       rn[w], c[2], q[2], c[2] / q[2]);
		}
	}
	if (!getenv("BENCH_LIB_KEEP")) {
		unlink(pc);
		unlink(ps);
	}
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	char path[4096];
	struct stat st;
	double wsecs;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_lib DIR [SAMPLES]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench_lib.spulse", argv[1]);
	wsecs = write_spool(path, n);
	if (stat(path, &st))
		return 1;
	printf("libspulse bench: %llu samples, %.1f MB spool, %.2f bytes/sample\n",
	       (unsigned long long)n, (double)st.st_size / 1e6,
	       (double)st.st_size / (double)n);
	printf("rates per CPU-second of the reading process (machine may be shared)\n");
	printf("%-26s %14.0f %10.1f %12s %10s\n", "Recorder (rec_sample)",
	       (double)n / wsecs, (double)st.st_size / 1e6 / wsecs, "-", "-");
	if (sample_table(path, n, (double)st.st_size))
		return 1;
	if (!getenv("BENCH_LIB_KEEP"))
		unlink(path);

	n /= 4;
	wsecs = write_offcpu_spool(path, n);
	if (stat(path, &st))
		return 1;
	printf("\noff-CPU: %llu intervals + %llu samples on 4 CPUs, %.1f MB spool, "
	       "%.2f bytes/(interval+sample)\n", (unsigned long long)n,
	       (unsigned long long)n, (double)st.st_size / 1e6,
	       (double)st.st_size / (double)n);
	printf("%-26s %14s %10s %12s %10s\n", "reader", "intervals/s", "MB/s",
	       "peak RSS MB", "wall s");
	printf("%-26s %14.0f %10.1f %12s %10s\n", "Recorder (offcpu+sample)",
	       (double)n / wsecs, (double)st.st_size / 1e6 / wsecs, "-", "-");
	for (i = 5; i < 8; i++) {
		static const char *const ivnames[] = { "Snapshot (open+offcpu)",
			"Replay (open+next_offcpu)", "Tail (poll all, offcpu)" };
		struct result best = measure(i, path);

		if (best.samples != n) {
			fprintf(stderr, "%s read %llu intervals, want %llu\n",
				ivnames[i - 5], (unsigned long long)best.samples,
				(unsigned long long)n);
			return 1;
		}
		printf("%-26s %14.0f %10.1f %12.1f %10.2f\n", ivnames[i - 5],
		       (double)n / best.secs, (double)st.st_size / 1e6 / best.secs,
		       (double)best.maxrss_kb / 1024.0, best.wall);
	}
	if (!getenv("BENCH_LIB_KEEP"))
		unlink(path);

	if (argc > 3) {
		struct spulse_replay *rp;
		struct spulse_error err;

		if (stat(argv[3], &st) ||
		    spulse_replay_open(argv[3], NULL, &rp, &err)) {
			fprintf(stderr, "%s: cannot read\n", argv[3]);
			return 1;
		}
		n = spulse_replay_info(rp)->samples;
		spulse_replay_close(rp);
		printf("\n%s: %llu samples, %.1f MB, %.2f bytes/sample\n",
		       argv[3], (unsigned long long)n, (double)st.st_size / 1e6,
		       (double)st.st_size / (double)n);
		if (sample_table(argv[3], n, (double)st.st_size))
			return 1;
		if (target_table(argv[1], argv[3]))
			return 1;
	}
	ids_table(argv[1]);
	return 0;
}
