/* SPDX-License-Identifier: MIT */
/*
 * top_writer: a live spool for the spulse top tests. Writes OUT through the
 * libspulse Recorder while running, 1000 samples per second of wall time
 * (flushed every 20 ms), in phases: each "NAME:SECONDS" argument makes
 * kernel function top_NAME the hot leaf (90% of the samples, the rest in
 * top_background) under top_main, for SECONDS of wall time; the last phase
 * runs until SIGTERM. OUT.kallsyms names the functions.
 *
 *   top_writer OUT NAME:SECONDS [NAME:SECONDS ...]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libspulse.h>

#define KBASE 0xffffffff81000000ULL

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .interval_us = 1000,
					  .truncate = true, .flush_bytes = 1 << 20 };
	uint32_t thread, main_f, bg_f, root, bg_leaf, leaf[32], f;
	struct spulse_recorder *r;
	int64_t t0, written = 0;
	char path[4096];
	FILE *k;
	int i, phase = 0, nph = argc - 2;
	double secs[32];

	if (argc < 3 || nph > 32) {
		fprintf(stderr, "usage: top_writer OUT NAME:SECONDS ...\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s.kallsyms", argv[1]);
	k = fopen(path, "w");
	if (!k) {
		perror(path);
		return 1;
	}
	fprintf(k, "%llx T _stext\n%llx T top_main\n%llx T top_background\n",
		KBASE, KBASE + 0x100, KBASE + 0x200);
	for (i = 0; i < nph; i++) {
		char *colon = strchr(argv[2 + i], ':');

		if (!colon) {
			fprintf(stderr, "top_writer: NAME:SECONDS, not %s\n",
				argv[2 + i]);
			return 2;
		}
		*colon = 0;
		secs[i] = atof(colon + 1);
		fprintf(k, "%llx T top_%s\n", KBASE + 0x1000 * (i + 1),
			argv[2 + i]);
	}
	fclose(k);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (spulse_recorder_open(argv[1], &o, &r) < 0) {
		perror(argv[1]);
		return 1;
	}
	if (spulse_rec_thread(r, 4242, 4242, "topwriter", &thread) < 0 ||
	    spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL, KBASE + 0x110, &main_f) < 0 ||
	    spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL, KBASE + 0x210, &bg_f) < 0 ||
	    spulse_rec_stack(r, SPULSE_NONE, main_f, &root) < 0 ||
	    spulse_rec_stack(r, root, bg_f, &bg_leaf) < 0)
		return 1;
	for (i = 0; i < nph; i++)
		if (spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL,
					 KBASE + 0x1000 * (i + 1) + 0x10, &f) < 0 ||
		    spulse_rec_stack(r, root, f, &leaf[i]) < 0)
			return 1;
	spulse_recorder_flush(r);
	t0 = now_ns();
	while (!stop) {
		int64_t now = now_ns() - t0, due = now / 1000000;
		double end = 0;

		for (i = 0, end = 0; i <= phase; i++)
			end += secs[i];
		if (phase < nph - 1 && (double)now / 1e9 >= end) {
			phase++;
			fprintf(stderr, "top_writer: phase %s at %.2f s\n",
				argv[2 + phase], (double)now / 1e9);
		}
		for (; written < due; written++)
			if (spulse_rec_sample(r, written * 1000000,
					      thread, written % 10 == 9 ?
					      bg_leaf : leaf[phase]) < 0)
				return 1;
		spulse_recorder_flush(r);
		usleep(20000);
	}
	return spulse_recorder_close(r) < 0;
}
