// SPDX-License-Identifier: MIT
/*
 * libspulse microbenchmark: writes a synthetic spool of N samples through
 * the Recorder, then reads it with Snapshot, Replay and Tail, each in its
 * own child process so that peak RSS is per reader. Prints a table. A
 * second table does the same for N/4 off-CPU intervals (extension kind 2,
 * wakers on most) interleaved with N/4 samples on 4 CPUs (cpu records).
 * usage: bench_lib DIR [SAMPLES]   (default 10,000,000)
 */
#include <errno.h>
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

static struct result measure(int which, const char *path)
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

int main(int argc, char **argv)
{
	static const char *names[] = { "Snapshot (open+iterate)",
		"Replay (open+iterate)", "Tail (poll all)",
		"Replay (iterate only)", "Replay (next_samples)" };
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
	printf("%-26s %14s %10s %12s %10s\n", "reader", "samples/s", "MB/s",
	       "peak RSS MB", "wall s");
	printf("%-26s %14.0f %10.1f %12s %10s\n", "Recorder (rec_sample)",
	       (double)n / wsecs, (double)st.st_size / 1e6 / wsecs, "-", "-");
	for (i = 0; i < 5; i++) {
		struct result r;

		/* warm the page cache once, then keep the best of 3 */
		struct result best = { 1e30, 0, 0, 0 };
		int k;

		for (k = 0; k < 3; k++) {
			r = measure(i, path);
			if (r.secs < best.secs)
				best = r;
		}
		if (best.samples != n) {
			fprintf(stderr, "%s read %llu samples, want %llu\n", names[i],
				(unsigned long long)best.samples,
				(unsigned long long)n);
			return 1;
		}
		printf("%-26s %14.0f %10.1f %12.1f %10.2f\n", names[i],
		       (double)n / best.secs, (double)st.st_size / 1e6 / best.secs,
		       (double)best.maxrss_kb / 1024.0, best.wall);
	}
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
		struct result best = { 1e30, 0, 0, 0 }, r;
		int k;

		for (k = 0; k < 3; k++) {
			r = measure(i, path);
			if (r.secs < best.secs)
				best = r;
		}
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
	return 0;
}
