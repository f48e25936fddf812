/* SPDX-License-Identifier: MIT */
/*
 * bench-cli: reader and Recorder throughput on synthetic spools made by
 * `spulse synth`.
 *
 *   bench_cli SPULSE DIR SAMPLES
 *
 * Generates DIR/synth-SAMPLES.spulse and DIR/synth-1000000.spulse (cached
 * until the spulse binary is rebuilt), then runs each reader in a forked child (open + validate + read
 * every sample), best of three, and reports samples/s, MB/s and the child's
 * peak RSS (wait4() rusage ru_maxrss, i.e. RUSAGE_CHILDREN for that child
 * alone); "open s" is the part spent in open (Snapshot and Replay validate
 * the whole file there; Tail reads as it polls). The Recorder is timed by running `spulse synth` on a fresh file.
 * Targets are printed beside the numbers; nothing here fails on speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libspulse.h>

#define RUNS 3
#define SMALL_SAMPLES 1000000ULL
#define RECORDER_SAMPLES 2000000ULL

struct result {
	uint64_t samples;
	double secs;
	double open_secs;	/* part of secs spent in open (validation) */
	long maxrss_kb;
	int ok;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_synth(const char *spulse, const char *out, uint64_t samples,
		     double *secs)
{
	char n[32];
	double t0 = now_s();
	pid_t pid;
	int st;

	snprintf(n, sizeof(n), "%llu", (unsigned long long)samples);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execl(spulse, spulse, "synth", "-q", "-o", out, "--samples", n,
		      "--threads", "16", "--seed", "1", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	if (secs)
		*secs = now_s() - t0;
	return 0;
}

static int ensure_spool(const char *spulse, const char *dir, uint64_t samples,
			char *path, size_t len)
{
	struct stat st, bin;
	char tmp[4096];
	double secs;

	snprintf(path, len, "%s/synth-%llu.spulse", dir,
		 (unsigned long long)samples);
	/* cached unless the spulse binary (its synth model) is newer */
	if (!stat(path, &st) && st.st_size > 0 &&
	    (stat(spulse, &bin) || bin.st_mtime <= st.st_mtime))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fprintf(stderr, "generating %s ...\n", path);
	if (run_synth(spulse, tmp, samples, &secs) < 0 || rename(tmp, path))
		return -EIO;
	return 0;
}

/* ---- readers, each run in a child ------------------------------------ */

static uint64_t sink;
static double open_secs;

static int read_snapshot(const char *path, uint64_t *n)
{
	struct spulse_read_opts o = { .sz = sizeof(o) };
	struct spulse_error err;
	struct spulse_snapshot *s;
	struct spulse_sample smp;
	double t0 = now_s();
	uint64_t i, cnt;

	if (spulse_snapshot_open(path, &o, &s, &err) < 0)
		return -1;
	open_secs = now_s() - t0;
	cnt = spulse_snapshot_sample_count(s);
	for (i = 0; i < cnt; i++) {
		if (spulse_snapshot_sample(s, i, &smp) < 0)
			return -1;
		sink += smp.stack;
	}
	*n = cnt;
	spulse_snapshot_close(s);
	return 0;
}

static int read_replay(const char *path, uint64_t *n)
{
	struct spulse_read_opts o = { .sz = sizeof(o) };
	struct spulse_error err;
	struct spulse_replay *r;
	struct spulse_sample smp;
	uint64_t cnt = 0;
	double t0 = now_s();
	int rc;

	if (spulse_replay_open(path, &o, &r, &err) < 0)
		return -1;
	open_secs = now_s() - t0;
	while ((rc = spulse_replay_next_sample(r, &smp)) > 0) {
		sink += smp.stack;
		cnt++;
	}
	*n = cnt;
	spulse_replay_close(r);
	return rc;
}

static int read_tail(const char *path, uint64_t *n)
{
	struct spulse_read_opts o = { .sz = sizeof(o) };
	struct spulse_error err;
	const struct spulse_sample *smp;
	struct spulse_tail *t;
	struct stat st;
	uint64_t cnt = 0;
	int rc, i;

	if (stat(path, &st) || spulse_tail_open(path, &o, &t, &err) < 0)
		return -1;
	for (;;) {
		rc = spulse_tail_poll(t, &smp, &err);
		if (rc < 0)
			return -1;
		for (i = 0; i < rc; i++)
			sink += smp[i].stack;
		cnt += (uint64_t)rc;
		if (!rc && spulse_tail_offset(t) >= (uint64_t)st.st_size)
			break;
		if (!rc)	/* no progress and not at the end: give up */
			return -1;
	}
	*n = cnt;
	spulse_tail_close(t);
	return 0;
}

typedef int (*reader_fn)(const char *path, uint64_t *n);

static struct result run_child(reader_fn fn, const char *path)
{
	struct result res = { 0 };
	struct rusage ru;
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		return res;
	pid = fork();
	if (pid < 0)
		return res;
	if (!pid) {
		struct result r = { 0 };
		double t0 = now_s();

		close(fds[0]);
		r.ok = fn(path, &r.samples) == 0;
		r.secs = now_s() - t0;
		r.open_secs = open_secs;
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(sink == 42 ? 3 : 0);
	}
	close(fds[1]);
	if (read(fds[0], &res, sizeof(res)) != sizeof(res))
		res.ok = 0;
	close(fds[0]);
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st))
		res.ok = 0;
	res.maxrss_kb = ru.ru_maxrss;
	return res;
}

static struct result best_of(reader_fn fn, const char *path)
{
	struct result best = { 0 };
	int i;

	for (i = 0; i < RUNS; i++) {
		struct result r = run_child(fn, path);

		if (!r.ok)
			return r;
		if (!best.ok || r.secs < best.secs)
			best = r;
		if (r.maxrss_kb > best.maxrss_kb)
			best.maxrss_kb = r.maxrss_kb;
	}
	return best;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		reader_fn fn;
	} readers[] = {
		{ "Snapshot", read_snapshot },
		{ "Replay", read_replay },
		{ "Tail", read_tail },
	};
	char big[4096], small[4096], rec[4096];
	struct result replay_big = { 0 }, replay_small;
	uint64_t samples;
	double mb, rsecs;
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_cli SPULSE DIR SAMPLES\n");
		return 2;
	}
	samples = strtoull(argv[3], NULL, 0);
	mkdir(argv[2], 0755);
	if (ensure_spool(argv[1], argv[2], samples, big, sizeof(big)) ||
	    ensure_spool(argv[1], argv[2], SMALL_SAMPLES, small, sizeof(small))) {
		fprintf(stderr, "bench-cli: cannot generate spools\n");
		return 1;
	}
	mb = (double)file_size(big) / 1e6;
	printf("bench-cli: %s\n", big);
	printf("  %llu samples, %.1f MB, %.2f bytes/sample "
	       "(spulse synth --threads 16)\n\n",
	       (unsigned long long)samples, mb, mb * 1e6 / (double)samples);
	printf("  %-10s %14s %10s %9s %9s %12s\n", "reader", "samples/s",
	       "MB/s", "time s", "open s", "peak RSS MB");
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		struct result r = best_of(readers[i].fn, big);

		if (!r.ok || r.samples != samples) {
			printf("  %-10s FAILED (read %llu samples)\n",
			       readers[i].name, (unsigned long long)r.samples);
			continue;
		}
		if (readers[i].fn == read_replay)
			replay_big = r;
		printf("  %-10s %14.0f %10.1f %9.3f %9.3f %12.1f\n",
		       readers[i].name, (double)r.samples / r.secs, mb / r.secs,
		       r.secs, r.open_secs, (double)r.maxrss_kb / 1024.0);
	}
	/* Recorder: a fresh synth run (includes the model's own work) */
	snprintf(rec, sizeof(rec), "%s/recorder-run.spulse", argv[2]);
	if (run_synth(argv[1], rec, RECORDER_SAMPLES, &rsecs) == 0) {
		double rmb = (double)file_size(rec) / 1e6;

		printf("  %-10s %14.0f %10.1f %9.3f %9s %12s  (spulse synth, "
		       "%llu samples)\n", "Recorder",
		       (double)RECORDER_SAMPLES / rsecs, rmb / rsecs, rsecs, "-", "-",
		       (unsigned long long)RECORDER_SAMPLES);
		unlink(rec);
	} else {
		printf("  Recorder   FAILED\n");
	}
	replay_small = best_of(read_replay, small);
	printf("\n  Replay peak RSS: %.1f MB at %llu samples (%.1f MB file), "
	       "%.1f MB at %llu samples (%.1f MB file)\n",
	       (double)replay_small.maxrss_kb / 1024.0,
	       (unsigned long long)SMALL_SAMPLES,
	       (double)file_size(small) / 1e6,
	       (double)replay_big.maxrss_kb / 1024.0,
	       (unsigned long long)samples, mb);
	if (replay_big.ok)
		printf("  target Replay >= 100M samples/s: %.0fM samples/s "
		       "(%s)\n", (double)replay_big.samples / replay_big.secs / 1e6,
		       (double)replay_big.samples / replay_big.secs >= 1e8 ?
		       "met" : "NOT met");
	return 0;
}
