// SPDX-License-Identifier: GPL-2.0
/*
 * dlwait - how long a dlopen'ed library waits for its unwind table, seen
 * from inside the recorded process (first-sample suite,
 * tests/e2e/firstsample_run.sh). N times: copy LIB to DIR/dlwait-I.so (a
 * new mapping of a file whose build-id is known: the table is ADDed once,
 * then only MAPped), dlopen it, and poll debugfs spulse/unwind's "maps"
 * count every millisecond until it grows: the time from dlopen's return to
 * then is the wait. The process stays the only one recorded, so its map
 * set is the only one that changes. Prints one line per library:
 *   dlwait I WAIT_MS      (or "dlwait I timeout" after 5 s)
 *
 * usage: dlwait LIB DIR N [UNWIND_FILE]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long maps(const char *path)
{
	char line[256];
	long n = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "maps ", 5))
			n = atol(line + 5);
	if (f)
		fclose(f);
	return n;
}

static int copy(const char *src, const char *dst)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	size_t n;
	int ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = 0;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *uw = argc > 4 ? argv[4] : "/sys/kernel/debug/spulse/unwind";
	int i, n = argc > 3 ? atoi(argv[3]) : 0;
	struct timespec ms = { 0, 1000000 };

	if (argc < 4 || n < 1) {
		fprintf(stderr, "usage: dlwait LIB DIR N [UNWIND_FILE]\n");
		return 2;
	}
	/* let the start-up mappings settle (their MAP changes the count) */
	nanosleep(&(struct timespec){ 1, 0 }, NULL);
	for (i = 0; i < n; i++) {
		char path[4096];
		long before;
		int64_t t0;
		void *h;

		snprintf(path, sizeof(path), "%s/dlwait-%d.so", argv[2], i);
		if (copy(argv[1], path)) {
			perror(path);
			return 1;
		}
		before = maps(uw);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		t0 = now();
		while (maps(uw) <= before && now() - t0 < 5000000000LL)
			nanosleep(&ms, NULL);
		if (maps(uw) > before)
			printf("dlwait %d %.1f\n", i, (double)(now() - t0) / 1e6);
		else
			printf("dlwait %d timeout\n", i);
		fflush(stdout);
		/* then sleep so the next copy is a separate meta scan */
		nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
	}
	return 0;
}
