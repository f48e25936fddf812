// SPDX-License-Identifier: GPL-2.0
/*
 * Relay reader-vs-writer race for the e2e part of `make kunit`
 * (guest-e2e.sh, scenario relay_reader_races_writer), built static:
 *
 *   relay_race CONTROL CPUFILE SECONDS OUT
 *
 * A child pinned to CPU 0 writes "trigger" to CONTROL as fast as it can for
 * SECONDS: every accepted write is one trigger batch in CPU 0's relay
 * stream (the text "debugfs trigger" exactly once), a refused one (-ENOSPC,
 * buffer full) none. Meanwhile this process, pinned to CPU 1, reads CPUFILE
 * as spulse-drain does (docs/DRAIN.md, "Reading"): non-blocking read()s
 * that stop at the published sub-buffers (the file's size less the "read"
 * position the stats file gave at open), and a "flush" written to CONTROL
 * now and then to publish the partial one. It alternates bursts of reads
 * with pauses of 0-4 ms so the tiny buffer is sometimes caught up,
 * sometimes full, while sub-buffers switch. After the writer ends it
 * flushes and reads what is left, writes every byte read to OUT and prints
 *
 *   relay_race: accepted A refused R found F bytes B end E
 *
 * F (trigger texts found in the bytes read) must equal A and the kernel's
 * triggers_written: fewer means relay lost bytes, more means bytes were read
 * twice; E (where reading ended in the file) must equal the bytes the
 * module wrote (the script compares; OUT goes through `spulse check`).
 *
 * With RELAY_RACE_NAIVE=1 in the environment it reads as a plain reader
 * would (everything read() returns, the current sub-buffer included, no
 * flushes), the way relay's read() races a sub-buffer switch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEXT "debugfs trigger"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("relay_race: sched_setaffinity");
}

/* the writer: returns the exit status of the child */
static int writer(const char *control, double secs, int out_fd)
{
	unsigned long ok = 0, refused = 0;
	double end = now() + secs;
	char line[96];
	int fd, n;

	pin(0);
	fd = open(control, O_WRONLY);
	if (fd < 0) {
		perror("relay_race: open control");
		return 1;
	}
	while (now() < end) {
		if (write(fd, "trigger", 7) == 7) {
			ok++;
		} else if (errno == ENOSPC) {
			refused++;
		} else {
			perror("relay_race: write trigger");
			return 1;
		}
	}
	close(fd);
	n = snprintf(line, sizeof(line), "%lu %lu\n", ok, refused);
	if (write(out_fd, line, n) != n)
		return 1;
	return 0;
}

struct bytes {
	unsigned char *p;
	size_t len, cap;
};

static int naive;
static unsigned long long start;	/* the file position at open */

/* "cpuN ... read R" from the stats file beside CPUFILE; 0 if absent */
static unsigned long long stats_read(const char *cpufile)
{
	unsigned long long t, w, d, by, p, r = 0;
	char path[512], line[256], name[24], want[24];
	const char *base = strrchr(cpufile, '/');
	FILE *f;

	if (!base)
		return 0;
	snprintf(path, sizeof(path), "%.*s/stats", (int)(base - cpufile),
		 cpufile);
	snprintf(want, sizeof(want), "%s", base + 1);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%23s taken %llu written %llu dropped %llu "
			   "bytes %llu published %llu read %llu", name, &t, &w,
			   &d, &by, &p, &r) == 7 && !strcmp(name, want))
			break;
	fclose(f);
	return r;
}

static void flush(const char *control)
{
	int fd = open(control, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "flush", 5) != 5)
			perror("relay_race: flush");
		close(fd);
	}
}

/* read what is ready (published); returns bytes read, -1 on error */
static long drain(int fd, struct bytes *b)
{
	long total = 0;
	ssize_t n;

	for (;;) {
		size_t want = 65536;

		if (!naive) {
			struct stat st;
			unsigned long long pos = start + b->len;

			if (fstat(fd, &st))
				return -1;
			if ((unsigned long long)st.st_size <= pos)
				return total;
			if ((unsigned long long)st.st_size - pos < want)
				want = st.st_size - pos;
		}
		if (b->cap - b->len < 65536) {
			b->cap = b->cap ? 2 * b->cap : 1 << 20;
			b->p = realloc(b->p, b->cap);
			if (!b->p)
				return -1;
		}
		n = read(fd, b->p + b->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return total;
		if (n < 0)
			return -1;
		if (n == 0)
			return total;
		b->len += n;
		total += n;
	}
}

int main(int argc, char **argv)
{
	unsigned long ok = 0, refused = 0, found = 0, round = 0;
	struct bytes b = { 0 };
	int fd, out, pfd[2], st;
	unsigned int seed = 1;
	char res[96] = "";
	pid_t pid;
	size_t i;

	if (argc != 5) {
		fprintf(stderr, "usage: relay_race CONTROL CPUFILE SECONDS OUT\n");
		return 2;
	}
	naive = getenv("RELAY_RACE_NAIVE") && *getenv("RELAY_RACE_NAIVE") == '1';
	fd = open(argv[2], O_RDONLY | O_NONBLOCK);
	if (!naive)
		start = stats_read(argv[2]);
	if (fd < 0 || pipe(pfd)) {
		perror("relay_race: open");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(pfd[0]);
		_exit(writer(argv[1], atof(argv[3]), pfd[1]));
	}
	close(pfd[1]);
	pin(1);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (drain(fd, &b) < 0) {
			perror("relay_race: read");
			return 1;
		}
		round++;
		seed = seed * 1103515245 + 12345;
		if (!naive && (seed >> 4) % 7 == 0)
			flush(argv[1]);
		if (round % 3 == 0) {
			struct timespec ts = {
				0, (long)((seed >> 8) % 4000) * 1000
			};

			nanosleep(&ts, NULL);
		} else {
			sched_yield();
		}
	}
	/* the writer is done: what is still buffered */
	for (i = 0; i < 20; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (!naive)
			flush(argv[1]);
		if (drain(fd, &b) < 0)
			return 1;
		nanosleep(&ts, NULL);
	}
	if (read(pfd[0], res, sizeof(res) - 1) <= 0 ||
	    sscanf(res, "%lu %lu", &ok, &refused) != 2 ||
	    !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "relay_race: writer failed\n");
		return 1;
	}
	for (i = 0; i + sizeof(TEXT) - 1 <= b.len; i++)
		if (!memcmp(b.p + i, TEXT, sizeof(TEXT) - 1))
			found++;
	out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0 || (b.len && write(out, b.p, b.len) != (ssize_t)b.len)) {
		perror("relay_race: write out");
		return 1;
	}
	close(out);
	printf("relay_race: accepted %lu refused %lu found %lu bytes %zu end %llu\n",
	       ok, refused, found, b.len, start + b.len);
	return 0;
}
