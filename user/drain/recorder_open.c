// SPDX-License-Identifier: MIT
/*
 * Opening the Recorder the released items are written into: the spool on
 * the first stream header (with this host's identity record), or in
 * flight mode a generation, a spool in a memfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

/* Flight mode: open a new generation (memfd) and its Recorder as d->rec. */
int drain_new_generation(struct drain *d)
{
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	struct fgen *g;
	int fd, dfd, ret;

	if (d->ngens == d->capgens) {
		unsigned int cap = d->capgens ? d->capgens * 2 : 8;
		struct fgen *v = realloc(d->gens, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->gens = v;
		d->capgens = cap;
	}
	fd = memfd_create("spulse-gen", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ro.start_us = d->base_us;
	ro.interval_us = d->interval_us;
	ret = spulse_recorder_fdopen(dfd, &ro, &d->rec);
	if (ret < 0) {
		close(dfd);
		close(fd);
		d->rec = NULL;
		return ret;
	}
	g = &d->gens[d->ngens++];
	memset(g, 0, sizeof(*g));
	g->fd = fd;
	return 0;
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * This host's identity (FORMAT.md 3.10 kind 4) for a spool starting at
 * @start_us; a failure is logged and the spool has no identity.
 * SPULSE_RECORDING_ID (32 hex digits) replaces the random recording id, so
 * that two runs on the same input write the same bytes (tests).
 */
static void make_identity(struct drain *d, uint64_t start_us)
{
	const char *env = getenv("SPULSE_RECORDING_ID");
	uint8_t rid[16];
	int ret = spulse_identity_local(&d->ident, start_us, d->ident_buf,
					sizeof(d->ident_buf));
	int i, hi, lo;

	d->have_ident = ret == 0;
	if (ret < 0) {
		fprintf(d->log, "spulse-drain: host identity: %s\n",
			strerror(-ret));
		return;
	}
	if (!env)
		return;
	for (i = 0; i < 16; i++) {
		if (strlen(env) != 32)
			break;
		hi = hex_nibble(env[2 * i]);
		lo = hex_nibble(env[2 * i + 1]);
		if (hi < 0 || lo < 0)
			break;
		rid[i] = (uint8_t)(hi << 4 | lo);
	}
	if (i < 16)
		fprintf(d->log, "spulse-drain: SPULSE_RECORDING_ID is not 32 "
			"hex digits: ignored\n");
	else
		memcpy(d->ident.recording_id, rid, sizeof(rid));
}

/* Open the Recorder on the first stream header (meta preferred). */
int drain_open_recorder(struct drain *d, const struct drain_input *in)
{
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	struct timespec ts;
	int ret;

	ro.start_us = in ? in->start_us : 0;
	ro.interval_us = in ? in->interval_us : 0;
	/* the identity repeats the header's start: fix "now" here */
	if (!ro.start_us) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ro.start_us = (uint64_t)ts.tv_sec * 1000000 +
			      (uint64_t)ts.tv_nsec / 1000;
	}
	make_identity(d, ro.start_us);
	if (d->flight) {
		d->base_us = ro.start_us;
		d->interval_us = ro.interval_us;
		ret = drain_new_generation(d);
		if (ret < 0)
			fprintf(d->log, "spulse-drain: flight generation: %s\n",
				strerror(-ret));
		return ret;
	}
	d->interval_us = ro.interval_us;
	/* large writes: drain_step() flushes every round anyway */
	ro.flush_bytes = SPOOL_FLUSH_BYTES;
	/* the file appears now, with its header (drain_open()) */
	d->out_fd = open(d->o.output, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
			 O_CLOEXEC, 0644);
	if (d->out_fd < 0) {
		ret = -errno;
		fprintf(d->log, "spulse-drain: %s: %s\n", d->o.output,
			strerror(-ret));
		return ret;
	}
	ret = spulse_recorder_fdopen(d->out_fd, &ro, &d->rec);
	if (ret < 0) {
		fprintf(d->log, "spulse-drain: %s: recorder: %s\n",
			d->o.output, strerror(-ret));
		return ret;
	}
	d->out_fd = -1;
	d->base_us = in ? in->start_us : 0;
	if (d->have_ident) {
		ret = spulse_rec_identity(d->rec, &d->ident, NULL);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: %s: identity record: %s\n",
				d->o.output, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int drain_maybe_open_recorder(struct drain *d)
{
	unsigned int i;

	if (d->rec)
		return 0;
	if (d->have_meta && d->meta.have_header)
		return drain_open_recorder(d, &d->meta);
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].have_header)
			return drain_open_recorder(d, &d->cpu[i]);
	return 0;
}
