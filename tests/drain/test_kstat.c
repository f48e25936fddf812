// SPDX-License-Identifier: MIT
/*
 * Unit tests of the stats-file reader (user/drain/kernel_stats.c): the
 * per-CPU lines are matched to the asked CPUs whatever their order, lines
 * of CPUs not asked for and malformed ones are skipped, the position
 * fields are optional, and 4096 sparse CPUs are all matched (the search
 * resumes after the last match, so in-order lines cost O(n)).
 * Prints "PASS name" / "FAIL name: why"; exit 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_stats.h"

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s: ", __func__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed++; \
		return; \
	} \
} while (0)

static char path[] = "/tmp/spulse-kstat.XXXXXX";

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) == EOF || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void ask(struct drain_kstat_cpu *v, unsigned int n, const int *cpus)
{
	unsigned int i;

	memset(v, 0, n * sizeof(*v));
	for (i = 0; i < n; i++)
		v[i].cpu = cpus[i];
}

static void kstat_cpus_in_order_with_positions(void)
{
	static const int cpus[] = { 0, 1, 3 };
	struct drain_kstat_cpu v[3];
	bool stopped = true;

	put("state running\nsamples_taken 9\n"
	    "cpu0 taken 5 written 5 dropped 0 bytes 100 published 64 read 32\n"
	    "cpu1 taken 4 written 4 dropped 0 bytes 200\n"
	    "cpu3 taken 0 written 0 dropped 0 bytes 300 published 0 read 7\n");
	ask(v, 3, cpus);
	CHECK(!drain_kstat_cpus(path, v, 3, &stopped), "read failed");
	CHECK(!stopped, "state running read as stopped");
	CHECK(v[0].found && v[0].bytes == 100 && v[0].has_pos && v[0].read == 32,
	      "cpu0: found %d bytes %llu pos %d read %llu", v[0].found,
	      (unsigned long long)v[0].bytes, v[0].has_pos,
	      (unsigned long long)v[0].read);
	CHECK(v[1].found && v[1].bytes == 200 && !v[1].has_pos && !v[1].read,
	      "cpu1 without positions");
	CHECK(v[2].found && v[2].bytes == 300 && v[2].has_pos && v[2].read == 7,
	      "cpu3");
	printf("PASS %s\n", __func__);
}

static void kstat_cpus_any_order_unknown_and_missing(void)
{
	static const int cpus[] = { 2, 0, 5 };
	struct drain_kstat_cpu v[3];
	bool stopped = false;

	put("cpu5 taken 1 written 1 dropped 0 bytes 55\n"
	    "cpu7 taken 1 written 1 dropped 0 bytes 77\n"
	    "cpu0x taken 1 written 1 dropped 0 bytes 99\n"
	    "cpu0 taken 1 written\n"
	    "cpu2 taken 1 written 1 dropped 0 bytes 22\n"
	    "state stopped\n");
	ask(v, 3, cpus);
	CHECK(!drain_kstat_cpus(path, v, 3, &stopped), "read failed");
	CHECK(stopped, "state stopped not seen");
	CHECK(v[0].found && v[0].bytes == 22, "cpu2: %d %llu", v[0].found,
	      (unsigned long long)v[0].bytes);
	CHECK(!v[1].found, "cpu0 found from a malformed or foreign line");
	CHECK(v[2].found && v[2].bytes == 55, "cpu5");
	printf("PASS %s\n", __func__);
}

static void kstat_cpus_4096_sparse_all_found(void)
{
	enum { N = 4096 };
	struct drain_kstat_cpu *v = calloc(N, sizeof(*v));
	unsigned int i, bad = 0;
	bool stopped;
	FILE *f = fopen(path, "w");

	if (!v || !f) {
		perror("kstat_cpus_4096_sparse_all_found");
		exit(1);
	}
	for (i = 0; i < N; i++) {
		fprintf(f, "cpu%u taken 1 written 1 dropped 0 bytes %u "
			"published 0 read %u\n", 2 * i, 10 * i, i);
		v[i].cpu = 2 * i;	/* only even CPUs online */
	}
	fclose(f);
	if (drain_kstat_cpus(path, v, N, &stopped)) {
		free(v);
		CHECK(0, "read failed");
	}
	for (i = 0; i < N; i++)
		bad += !v[i].found || v[i].bytes != 10 * i || v[i].read != i;
	free(v);
	CHECK(!bad, "%u of %d CPUs wrong", bad, N);
	printf("PASS %s\n", __func__);
}

static void kstat_missing_file_is_an_error(void)
{
	struct drain_kstat_cpu v[1] = { { .cpu = 0 } };
	bool stopped;

	CHECK(drain_kstat_cpus("/nonexistent/spulse/stats", v, 1, &stopped) < 0,
	      "no error for a missing file");
	printf("PASS %s\n", __func__);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	kstat_cpus_in_order_with_positions();
	kstat_cpus_any_order_unknown_and_missing();
	kstat_cpus_4096_sparse_all_found();
	kstat_missing_file_is_an_error();
	unlink(path);
	return failed ? 1 : 0;
}
