// SPDX-License-Identifier: MIT
/*
 * The drain session: inputs (relay_input.c) -> validation (libspulse
 * stream) -> meta forwarding and windowed merge (merge.c) -> renumbering
 * (renumber.c) -> Recorder. docs/DRAIN.md describes the design.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libspulse.h>

#include "drain.h"
#include "kallsyms_copy.h"
#include "kernel_stats.h"
#include "merge.h"
#include "meta_forward.h"
#include "relay_input.h"
#include "renumber.h"
#include "unwind_load.h"

#define READ_ROUND_MAX	(64u << 10)	/* bytes per input per round */
#define SPOOL_FLUSH_BYTES (256u << 10)	/* Recorder write size (spool) */
#define GROUP_MAX	4096u		/* items release() groups at most */

/* One flight-recorder generation: a complete spool in a memfd. */
struct fgen {
	int fd;
	int64_t min_ns, max_ns;	/* times of the items written into it */
	bool any;
	uint64_t bytes;		/* size once closed */
};

/* An item release() popped, waiting to be written with its CPU's group. */
struct gitem {
	struct drain_msample s;
	unsigned int src;
	uint32_t next;		/* next item of the same source, UINT32_MAX */
};

/* An accepted trigger waiting for its post time. */
struct ftrig {
	struct spulse_trigger t;
	char text[SPULSE_MAX_TRIGGER_TEXT + 1];
	int64_t ws, we;		/* requested window */
	int64_t fired_wall_ns;
};

struct drain {
	struct drain_opts o;
	FILE *log;
	int out_fd;			/* spool fd until the Recorder owns it */
	struct spulse_recorder *rec;
	uint64_t base_us;		/* spool start_us */
	/* who records: written after the header of the spool and each dump */
	struct spulse_identity ident;
	char ident_buf[1024];
	bool have_ident;

	struct drain_input meta;
	bool have_meta;
	struct drain_meta_fwd fwd;	/* meta -> spool, module generation */
	struct drain_unwind *uw;	/* unwind-table loader, NULL = none */
	uint32_t *pids;			/* pids of module records (JIT maps) */
	size_t npids, cappids;

	struct drain_input *cpu;	/* sorted by CPU number */
	uint64_t *cpu_bytes;
	unsigned int ncpu;
	struct drain_merge merge;
	struct pollfd *pfd;
	bool poll_useful;
	unsigned int poll_spurious;	/* "ready" polls in a row with no data */
	bool more;			/* the last round hit READ_ROUND_MAX */
	int64_t round_ns;		/* clock after the last round's reads */
	int64_t flush_ns;		/* clock of the last control flush */

	int64_t last_sync_ns;
	int64_t last_time_ns;		/* newest sample time popped */
	bool emitted;

	/*
	 * release() outside flight mode: the items popped since the last
	 * group was written (at most GROUP_MAX), and per source the first
	 * and last of them (UINT32_MAX: none); grp_order lists the sources
	 * in the order they first appear. merge_order (SPULSE_DRAIN_MERGE_ORDER
	 * set) writes every item as it is popped instead, as flight mode does.
	 */
	struct gitem *grp;
	uint32_t ngrp, capgrp;
	uint32_t *grp_head, *grp_tail;
	unsigned int *grp_order;
	unsigned int last_src;		/* source of the last sample written */
	bool merge_order;
	uint64_t samples, late;
	uint64_t offcpu, triggers, ext_dropped;
	uint64_t epochs;		/* per-CPU stream epochs begun */
	unsigned int errors, tails;
	unsigned int relay_gaps;	/* cpuN byte counts != the module's */
	uint64_t interval_us;

	/* flight recorder */
	bool flight;
	struct drain_flight_opts fo;
	struct fgen *gens;		/* oldest first; the last one is open */
	unsigned int ngens, capgens;
	int64_t written_max;		/* newest item time written */
	bool written_any;
	struct ftrig *pend;
	unsigned int npend, cappend;
	unsigned int dumps;
	uint32_t seq;
	bool have_last_T;
	int64_t last_T;
	uint64_t fired, suppressed, gen_bytes_max;
	bool dropped_any;
	int64_t dropped_upto;		/* newest time in a dropped generation */
	int fatal;
	bool disk_counted;		/* after fatal: the file was read back */
	uint64_t disk_samples, disk_bytes;	/* its complete prefix */
	/* kernel symbols, read outside the recording window (drain_open with
	 * control before start, else drain_finish after the last read); flight
	 * dumps reuse them while /proc/modules is unchanged */
	struct drain_ksyms ks;
	bool ks_pending;		/* the spool's .kallsyms not written yet */
	char *stats_path;
	struct drain_stats st;
};

static void note_pid(struct drain *d, uint32_t pid);
static void capture_sidecars(struct drain *d, const char *spool, bool jit);
static void save_kallsyms(struct drain *d, const char *spool);

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct drain_input *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* "cpu" followed by decimal digits only. */
static int cpu_number(const char *name)
{
	const char *p = name + 3;
	long v = 0;

	if (strncmp(name, "cpu", 3) || !*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > 1000000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

static int open_cpus(struct drain *d)
{
	DIR *dir = opendir(d->o.debugfs);
	struct dirent *de;
	unsigned int cap = 0;
	int ret = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		int n = cpu_number(de->d_name);
		char *path;

		if (n < 0)
			continue;
		if (d->ncpu == cap) {
			void *v;

			cap = cap ? cap * 2 : 16;
			v = realloc(d->cpu, cap * sizeof(*d->cpu));
			if (!v) {
				ret = -ENOMEM;
				break;
			}
			d->cpu = v;
		}
		if (asprintf(&path, "%s/%s", d->o.debugfs, de->d_name) < 0) {
			ret = -ENOMEM;
			break;
		}
		ret = drain_input_open(&d->cpu[d->ncpu], path, n);
		if (ret < 0)
			fprintf(d->log, "spulse-drain: %s: %s\n", path,
				strerror(-ret));
		free(path);
		if (ret < 0)
			break;
		d->ncpu++;
	}
	closedir(dir);
	if (ret < 0)
		return ret;
	if (d->ncpu)
		qsort(d->cpu, d->ncpu, sizeof(*d->cpu), cmp_cpu);
	return 0;
}

/*
 * The stats file's line of every cpuN input, read once (NULL when there is
 * no stats file or no memory): *stopped = the module says stopped.
 */
static struct drain_kstat_cpu *kstat_cpus(struct drain *d, bool *stopped)
{
	struct drain_kstat_cpu *v;
	unsigned int i;

	if (!d->stats_path || !d->ncpu)
		return NULL;
	v = calloc(d->ncpu, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < d->ncpu; i++)
		v[i].cpu = d->cpu[i].cpu;
	if (drain_kstat_cpus(d->stats_path, v, d->ncpu, stopped)) {
		free(v);
		return NULL;
	}
	return v;
}

/*
 * A relay file may have been read before this drainer opened it: start
 * where the earlier readers stopped (the module's stats "read", "meta_read"
 * for meta), so that reads stop at the published sub-buffers
 * (drain_input_read()). A module without the field leaves the start at 0:
 * reads are then bounded by the file's size only.
 */
static void set_starts(struct drain *d)
{
	struct drain_kstat_cpu *v;
	unsigned int i;
	bool stopped;
	int64_t r;

	if (d->have_meta && d->meta.relay &&
	    !drain_kstat(d->stats_path, "meta_read", &r) && r >= 0)
		drain_input_set_start(&d->meta, (uint64_t)r);
	v = kstat_cpus(d, &stopped);
	if (!v)
		return;
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].relay && v[i].has_pos)
			drain_input_set_start(&d->cpu[i], v[i].read);
	free(v);
}

/* Any input a real relay file (not a test's stand-in)? */
static bool relay_inputs(const struct drain *d)
{
	unsigned int i;

	if (d->have_meta && d->meta.relay)
		return true;
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].relay)
			return true;
	return false;
}

int drain_control(struct drain *d, const char *cmd)
{
	char *path;
	size_t len = strlen(cmd);
	ssize_t n;
	int fd, ret = 0;

	if (asprintf(&path, "%s/control", d->o.debugfs) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

int drain_open(const struct drain_opts *opts, struct drain **out)
{
	struct drain *d = calloc(1, sizeof(*d));
	unsigned int nsrc;
	const char *env;
	char *path = NULL;
	int ret;

	if (!d)
		return -ENOMEM;
	d->o = *opts;
	d->log = opts->log ? opts->log : stderr;
	if (opts->flight && opts->flight->seconds_ns) {
		d->flight = true;
		d->fo = *opts->flight;
	}
	d->o.flight = NULL;
	d->out_fd = -1;
	drain_meta_init(&d->fwd);
	d->poll_useful = true;
	if (!d->o.debugfs)
		d->o.debugfs = DRAIN_DEFAULT_DEBUGFS;
	if (asprintf(&d->stats_path, "%s/stats", d->o.debugfs) < 0) {
		d->stats_path = NULL;
		ret = -ENOMEM;
		goto fail;
	}
	ret = open_cpus(d);
	if (ret < 0)
		goto fail;
	if (asprintf(&path, "%s/meta", d->o.debugfs) < 0) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = drain_input_open(&d->meta, path, -1);
	free(path);
	if (ret == 0)
		d->have_meta = true;
	else if (ret != -ENOENT)
		goto fail;
	else
		fprintf(d->log, "spulse-drain: no %s/meta: no modules\n",
			d->o.debugfs);
	set_starts(d);
	if (!d->o.no_unwind && d->have_meta) {
		struct drain_unwind_opts uo = { .sz = sizeof(uo) };

		if (asprintf(&path, "%s/unwind", d->o.debugfs) < 0) {
			ret = -ENOMEM;
			goto fail;
		}
		uo.path = path;
		uo.cache_dir = d->o.unwind_cache;
		uo.log = d->log;
		uo.skip_pid = d->o.unwind_skip_pid;
		ret = drain_unwind_open(&uo, &d->uw);
		if (ret == -ENOENT)
			fprintf(d->log, "spulse-drain: no %s: the module takes "
				"no unwind tables (frame-pointer user stacks)\n",
				path);
		else if (ret < 0)
			fprintf(d->log, "spulse-drain: %s: %s; no unwind "
				"tables\n", path, strerror(-ret));
		free(path);
		path = NULL;
		d->uw = ret < 0 ? NULL : d->uw;
	}
	if (!d->ncpu && !d->have_meta) {
		fprintf(d->log, "spulse-drain: %s: no cpuN or meta files\n",
			d->o.debugfs);
		ret = -ENOENT;
		goto fail;
	}
	nsrc = d->ncpu ? d->ncpu : 1;
	d->cpu_bytes = calloc(nsrc, sizeof(*d->cpu_bytes));
	d->pfd = calloc(d->ncpu + 1, sizeof(*d->pfd));
	d->grp_head = malloc(nsrc * sizeof(*d->grp_head));
	d->grp_tail = malloc(nsrc * sizeof(*d->grp_tail));
	d->grp_order = malloc(nsrc * sizeof(*d->grp_order));
	if (!d->cpu_bytes || !d->pfd || !d->grp_head || !d->grp_tail ||
	    !d->grp_order) {
		ret = -ENOMEM;
		goto fail;
	}
	memset(d->grp_head, 0xff, nsrc * sizeof(*d->grp_head));
	/* the merge's order, one item at a time (tests compare the two) */
	env = getenv("SPULSE_DRAIN_MERGE_ORDER");
	d->merge_order = env && *env && strcmp(env, "0");
	ret = drain_merge_init(&d->merge, d->ncpu,
			       (int64_t)opts->window_ms * 1000000);
	if (ret < 0)
		goto fail;
	/*
	 * Create the spool now so a drainer killed early leaves a file
	 * (flight mode: only the dumps are files).
	 */
	if (!d->flight)
		d->out_fd = open(opts->output, O_WRONLY | O_CREAT | O_TRUNC |
				 O_APPEND | O_CLOEXEC, 0644);
	if (!d->flight && d->out_fd < 0) {
		ret = -errno;
		fprintf(d->log, "spulse-drain: %s: %s\n", opts->output,
			strerror(errno));
		goto fail;
	}
	/*
	 * Kernel symbols outside the recording window: with control, now,
	 * before "start". Without, the module may be sampling already; they
	 * are still written now (a drainer killed later must leave them
	 * beside the spool) and written again after the last read, where
	 * they are read again only if /proc/modules changed. Flight mode
	 * reads them now either way (a dump is wanted while recording) and
	 * keeps them for every dump.
	 */
	if (opts->kallsyms && d->flight) {
		long n = drain_ksyms_load(&d->ks, opts->kallsyms);

		if (n < 0)
			fprintf(d->log, "spulse-drain: warning: %s: %s\n",
				opts->kallsyms, strerror((int)-n));
	} else if (opts->kallsyms && opts->control) {
		save_kallsyms(d, opts->output);
	} else if (opts->kallsyms) {
		save_kallsyms(d, opts->output);
		d->ks_pending = true;
	}
	if (opts->kallsyms && !d->flight)
		capture_sidecars(d, opts->output, false);
	if (opts->control) {
		ret = drain_control(d, "start\n");
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: %s/control start: %s\n",
				d->o.debugfs, strerror(-ret));
			goto fail;
		}
	}
	d->last_sync_ns = mono_ns();
	*out = d;
	return 0;
fail:
	drain_close(d);
	return ret;
}


/* Flight mode: open a new generation (memfd) and its Recorder as d->rec. */
static int new_generation(struct drain *d)
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
static int open_recorder(struct drain *d, const struct drain_input *in)
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
		ret = new_generation(d);
		if (ret < 0)
			fprintf(d->log, "spulse-drain: flight generation: %s\n",
				strerror(-ret));
		return ret;
	}
	d->interval_us = ro.interval_us;
	/* large writes: drain_step() flushes every round anyway */
	ro.flush_bytes = SPOOL_FLUSH_BYTES;
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

static int maybe_open_recorder(struct drain *d)
{
	unsigned int i;

	if (d->rec)
		return 0;
	if (d->have_meta && d->meta.have_header)
		return open_recorder(d, &d->meta);
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].have_header)
			return open_recorder(d, &d->cpu[i]);
	return 0;
}

static const char *input_name(const struct drain_input *in, char *buf,
			      size_t len)
{
	if (in->cpu < 0)
		return "meta";
	snprintf(buf, len, "cpu%d", in->cpu);
	return buf;
}

static void stream_error(struct drain *d, struct drain_input *in,
			 const struct spulse_error *err)
{
	char nb[32];

	fprintf(d->log,
		"spulse-drain: %s: offset %" PRIu64 ": %s; stream abandoned\n",
		input_name(in, nb, sizeof(nb)), in->epoch_base + err->offset,
		err->msg);
	drain_input_abandon(in, err);
	d->errors++;
}

/*
 * Queue one record of CPU input @i; @queued_ns is the wall time of the
 * read that brought it (one clock read per read, not per record).
 */
static int cpu_record(struct drain *d, unsigned int i,
		      const struct spulse_record *r, int64_t queued_ns)
{
	struct drain_input *in = &d->cpu[i];
	/* this epoch's header (the kernel repeats the session's start) */
	uint64_t start_us = spulse_stream_info(in->stream)->start_us;
	int64_t shift = (int64_t)(start_us - d->base_us) * 1000, t;
	struct drain_msample s;
	int ret;

	if (r->tag == SPULSE_TAG_SAMPLE) {
		/* the hot path: only the fields a sample uses */
		s.epoch = in->epoch;
		t = shift + r->u.sample.time_ns;
		s.time_ns = t < 0 ? 0 : t;
		s.thread = r->u.sample.thread;
		s.stack = r->u.sample.stack;
		s.queued_ns = queued_ns;
		s.kind = DRAIN_ITEM_SAMPLE;
		/* streams from before cpu records: the file's CPU number */
		s.cpu = r->u.sample.cpu != SPULSE_NONE ? r->u.sample.cpu :
			(uint32_t)in->cpu;
		return drain_merge_push(&d->merge, i, &s);
	}
	memset(&s, 0, sizeof(s));
	s.epoch = in->epoch;
	if (r->tag == SPULSE_TAG_EXT && r->ext_kind == SPULSE_EXT_OFFCPU) {
		s.kind = DRAIN_ITEM_OFFCPU;
		s.x.iv = r->u.offcpu;
		t = shift + s.x.iv.time_ns;
		s.x.iv.time_ns = t < 0 ? 0 : t;
		/* ordered by the close (switch-in) time: when it was written */
		s.time_ns = s.x.iv.time_ns +
			    (int64_t)(s.x.iv.blocked_ns + s.x.iv.runq_ns);
	} else if (r->tag == SPULSE_TAG_EXT &&
		   r->ext_kind == SPULSE_EXT_TRIGGER) {
		s.kind = DRAIN_ITEM_TRIGGER;
		s.x.trig.t = r->u.trigger;
		t = shift + s.x.trig.t.time_ns;
		s.time_ns = s.x.trig.t.time_ns = t < 0 ? 0 : t;
		s.x.trig.text = strndup(r->u.trigger.text ? r->u.trigger.text :
					"", r->u.trigger.text_len);
		if (!s.x.trig.text)
			return -ENOMEM;
		s.x.trig.t.text = s.x.trig.text;
	} else {
		if (r->tag == SPULSE_TAG_EXT && r->ext_kind != SPULSE_EXT_CPU)
			d->ext_dropped++;	/* unknown kind: count, drop */
		/* definitions stay in the stream's defs; cpu records are in
		 * the samples (spulse_sample.cpu) */
		return 0;
	}
	s.queued_ns = queued_ns;
	ret = drain_merge_push(&d->merge, i, &s);
	if (ret < 0 && s.kind == DRAIN_ITEM_TRIGGER)
		free(s.x.trig.text);
	return ret;
}

/* Decode every complete record of @in. */
static int decode(struct drain *d, struct drain_input *in, unsigned int i,
		  int64_t queued_ns)
{
	struct spulse_record r;
	struct spulse_error err;
	int ret;

	if (in->state == DRAIN_INPUT_ABANDONED || !in->have_header)
		return 0;
	for (;;) {
		err.offset = 0;
		err.code = 0;
		err.msg[0] = 0;
		ret = spulse_stream_next(in->stream, &r, &err);
		if (ret == 0)
			return 0;
		if (ret < 0) {
			int ep = drain_input_next_epoch(in, &err);

			if (ep < 0)
				return ep;
			if (ep > 0) {
				d->epochs++;	/* the kernel restarted its ids */
				continue;
			}
			if (ret != -EBADMSG && !err.msg[0])
				snprintf(err.msg, sizeof(err.msg), "%s",
					 strerror(-ret));
			stream_error(d, in, &err);
			if (in->cpu >= 0)
				drain_merge_finish(&d->merge, i);
			return 0;
		}
		if (in->cpu < 0) {
			if (r.tag == SPULSE_TAG_MODULE)
				note_pid(d, r.u.module.pid);
			ret = drain_meta_record(&d->fwd, d->rec, &r, d->merge.any,
						d->merge.newest_ns);
			if (!ret && d->uw)
				ret = drain_unwind_meta(d->uw, &r);
		} else
			ret = cpu_record(d, i, &r, queued_ns);
		if (ret < 0)
			return ret;
	}
}

/*
 * Remember a module record's pid, for the JIT maps copied at the end. A
 * process's module records come in a run, so only a repeat of the last pid
 * is skipped here; unique_pids() sorts out the rest when the maps are
 * copied (no per-record scan of every pid seen).
 */
static void note_pid(struct drain *d, uint32_t pid)
{
	uint32_t *p;

	if (d->npids && d->pids[d->npids - 1] == pid)
		return;
	if (d->npids == d->cappids) {
		size_t cap = d->cappids ? 2 * d->cappids : 64;

		p = realloc(d->pids, cap * sizeof(*p));
		if (!p)
			return;		/* best effort: a map may be missed */
		d->pids = p;
		d->cappids = cap;
	}
	d->pids[d->npids++] = pid;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sort d->pids and drop duplicates. */
static void unique_pids(struct drain *d)
{
	size_t i, n = 0;

	if (d->npids > 1)	/* qsort() wants a valid array even for 0 */
		qsort(d->pids, d->npids, sizeof(*d->pids), cmp_u32);
	for (i = 0; i < d->npids; i++)
		if (!n || d->pids[n - 1] != d->pids[i])
			d->pids[n++] = d->pids[i];
	d->npids = n;
}

/* SPOOL.kallsyms from the kept symbols (read again only if changed). */
static void save_kallsyms(struct drain *d, const char *spool)
{
	char *ks;
	long r;

	if (asprintf(&ks, "%s.kallsyms", spool) < 0)
		return;
	r = drain_ksyms_save(&d->ks, d->o.kallsyms, ks);
	if (r < 0)
		fprintf(d->log, "spulse-drain: warning: %s -> %s: %s\n",
			d->o.kallsyms, ks, strerror((int)-r));
	free(ks);
}

/* The record-time sidecars of @spool besides .kallsyms: SPOOL.vdso and
 * SPOOL.perf-PID.map (with @jit); failures are warnings. */
static void capture_sidecars(struct drain *d, const char *spool, bool jit)
{
	long r = drain_capture_vdso(spool);

	if (r < 0 && r != -ENOENT)
		fprintf(d->log, "spulse-drain: warning: %s.vdso: %s\n", spool,
			strerror((int)-r));
	if (jit && d->npids) {
		int n;

		unique_pids(d);
		n = drain_capture_jit_maps(spool, d->pids, d->npids);
		if (n < 0)
			fprintf(d->log, "spulse-drain: warning: %s: JIT maps: "
				"%s\n", spool, strerror(-n));
	}
}

/*
 * Read what one input has (fed to its stream, not decoded yet). A read
 * error closes the input (after rmmod: EIO). Bytes read or a fatal -errno.
 */
static long pump_read(struct drain *d, struct drain_input *in, unsigned int i)
{
	long n;

	if (in->state != DRAIN_INPUT_OPEN)
		return 0;
	n = drain_input_read(in, READ_ROUND_MAX);
	if (n > 0 && !in->dry)
		d->more = true;		/* stopped by the round limit */
	if (n < 0 && in->state == DRAIN_INPUT_GONE) {
		char nb[32];

		fprintf(d->log, "spulse-drain: %s: read: %s; input closed\n",
			input_name(in, nb, sizeof(nb)), strerror((int)-n));
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		n = 0;
	}
	return n;
}

/*
 * Decode what one input's stream holds (records queued at @now); a
 * non-SPULSE header is a stream error too.
 */
static int pump_decode(struct drain *d, struct drain_input *in,
		       unsigned int i, int64_t now)
{
	int ret;

	if (in->state == DRAIN_INPUT_ABANDONED || !in->stream)
		return 0;
	if (!in->have_header && in->hdr_len >= SPULSE_MAGIC_LEN &&
	    memcmp(in->hdr, SPULSE_MAGIC, SPULSE_MAGIC_LEN)) {
		struct spulse_error err = { .offset = 0, .code = -EBADMSG };

		snprintf(err.msg, sizeof(err.msg), "bad magic");
		stream_error(d, in, &err);
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		return 0;
	}
	ret = maybe_open_recorder(d);
	if (ret < 0)
		return ret;
	if (d->rec) {
		ret = decode(d, in, i, now);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int flight_before(struct drain *d, int64_t t);
static int flight_after(struct drain *d, const struct drain_msample *s,
			uint32_t tid);

/* Write one released item into the spool (or the current generation). */
static int write_item(struct drain *d, unsigned int src, struct drain_msample *s)
{
	const struct spulse_defs *defs;
	struct drain_idmap *map;
	uint32_t th, st;
	int ret;

	ret = drain_input_epoch(&d->cpu[src], s->epoch, &defs, &map);
	if (ret < 0 && s->kind != DRAIN_ITEM_TRIGGER)
		return ret;
	switch (s->kind) {
	case DRAIN_ITEM_SAMPLE:
		ret = drain_map_sample(d->rec, defs, map, d->fwd.gen,
				       s->thread, s->stack, &th, &st);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping sample: %s\n",
				d->cpu[src].cpu, strerror(-ret));
			return ret;
		}
		ret = spulse_rec_sample_cpu(d->rec, s->time_ns, th, st, s->cpu);
		if (ret < 0)
			return ret;
		d->samples++;
		return 0;
	case DRAIN_ITEM_OFFCPU:
		ret = drain_map_offcpu(d->rec, defs, map, d->fwd.gen,
				       &s->x.iv);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping off-CPU "
				"interval: %s\n", d->cpu[src].cpu,
				strerror(-ret));
			return ret;
		}
		ret = spulse_rec_offcpu(d->rec, &s->x.iv);
		if (ret < 0)
			return ret;
		d->offcpu++;
		return 0;
	default:
		ret = spulse_rec_trigger(d->rec, &s->x.trig.t);
		if (ret < 0)
			return ret;
		d->triggers++;
		return 0;
	}
}

/*
 * A sample the merge releases before one it already released is late (its
 * CPU's data reached the drainer more than a window late): counted in the
 * merge's order, whatever order release() then writes in.
 */
static void count_late(struct drain *d, const struct drain_msample *s)
{
	if (s->kind != DRAIN_ITEM_SAMPLE)
		return;
	if (d->emitted && s->time_ns < d->last_time_ns)
		d->late++;
	else
		d->last_time_ns = s->time_ns;
	d->emitted = true;
}

/* Free what the collected items own (trigger texts) and forget them. */
static void group_clear(struct drain *d)
{
	uint32_t i;

	for (i = 0; i < d->ngrp; i++)
		if (d->grp[i].s.kind == DRAIN_ITEM_TRIGGER)
			free(d->grp[i].s.x.trig.text);
	d->ngrp = 0;
}

/*
 * Write the collected items grouped by source CPU, each source's items in
 * the order they were popped (which is the order its stream holds them,
 * so drain_input_epoch() still sees each source's epochs in order and
 * frees an older one only once its items are written). The sources go in
 * the order they first appear, except that the source of the last sample
 * written goes first: its run continues without a cpu record. Empties the
 * collection. 0 or -errno.
 */
static int write_group(struct drain *d)
{
	struct gitem *v = d->grp;
	unsigned int n = 0, k, src;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < d->ngrp; i++) {
		src = v[i].src;
		v[i].next = UINT32_MAX;
		if (d->grp_head[src] == UINT32_MAX) {
			d->grp_order[n++] = src;
			d->grp_head[src] = i;
		} else {
			v[d->grp_tail[src]].next = i;
		}
		d->grp_tail[src] = i;
	}
	for (k = 1; k < n; k++) {
		if (d->grp_order[k] != d->last_src)
			continue;
		memmove(d->grp_order + 1, d->grp_order,
			k * sizeof(*d->grp_order));
		d->grp_order[0] = d->last_src;
		break;
	}
	for (k = 0; k < n; k++) {
		src = d->grp_order[k];
		for (i = d->grp_head[src]; !ret && i != UINT32_MAX;
		     i = v[i].next) {
			ret = write_item(d, src, &v[i].s);
			if (!ret && v[i].s.kind == DRAIN_ITEM_SAMPLE)
				d->last_src = src;
		}
		d->grp_head[src] = UINT32_MAX;
	}
	group_clear(d);
	return ret;
}

/*
 * Outside flight mode: collect what the merge releases and write it
 * grouped by CPU (write_group()), so that the spool gets about one cpu
 * record per CPU per group instead of one per CPU switch of the merged
 * order (nearly every sample when several CPUs sample at once). Held meta
 * records cut the groups: drain_meta_apply_pending() would apply them
 * before the first popped item later than drain_meta_wait_ns(), so the
 * items popped before that one are written first, then the records, then
 * the rest, exactly as in the merge's order. A group holds at most
 * GROUP_MAX items, which bounds the memory and how far a sample can be
 * written after a later one of another CPU.
 */
static int release_grouped(struct drain *d, bool all)
{
	int64_t wait = drain_meta_wait_ns(&d->fwd);
	struct drain_msample s;
	unsigned int src;
	int ret = 0;

	while (drain_merge_pop(&d->merge, d->round_ns, all, &src, &s) == 1) {
		count_late(d, &s);
		if (s.time_ns > wait) {
			ret = write_group(d);
			if (!ret)
				ret = drain_meta_apply_pending(&d->fwd, d->rec,
							       s.time_ns);
			wait = drain_meta_wait_ns(&d->fwd);
		} else if (d->ngrp == GROUP_MAX) {
			ret = write_group(d);
		}
		if (!ret && d->ngrp == d->capgrp) {
			uint32_t cap = d->capgrp ? 2 * d->capgrp : 256;
			struct gitem *v;

			if (cap > GROUP_MAX)
				cap = GROUP_MAX;
			v = realloc(d->grp, cap * sizeof(*v));
			if (v) {
				d->grp = v;
				d->capgrp = cap;
			} else {
				ret = -ENOMEM;
			}
		}
		if (ret < 0) {
			if (s.kind == DRAIN_ITEM_TRIGGER)
				free(s.x.trig.text);
			group_clear(d);
			return ret;
		}
		d->grp[d->ngrp].s = s;
		d->grp[d->ngrp].src = src;
		d->ngrp++;
	}
	return write_group(d);
}

/*
 * Flight mode (its generations are cut by time) and SPULSE_DRAIN_MERGE_ORDER:
 * write each item the merge releases at once, in the merge's order.
 */
static int release_ordered(struct drain *d, bool all)
{
	struct drain_msample s;
	unsigned int src;
	int ret;

	while (drain_merge_pop(&d->merge, d->round_ns, all, &src, &s) == 1) {
		uint32_t tid = 0;

		count_late(d, &s);
		if (d->flight && s.kind == DRAIN_ITEM_OFFCPU) {
			const struct spulse_defs *defs;
			struct drain_idmap *map;
			struct spulse_thread th;

			if (!drain_input_epoch(&d->cpu[src], s.epoch, &defs,
					       &map) &&
			    !spulse_defs_thread(defs, s.x.iv.thread, &th))
				tid = th.tid;
		}
		ret = d->flight ? flight_before(d, s.time_ns) : 0;
		if (!ret)
			ret = drain_meta_apply_pending(&d->fwd, d->rec, s.time_ns);
		if (!ret)
			ret = write_item(d, src, &s);
		if (!ret && d->flight)
			ret = flight_after(d, &s, tid);
		if (s.kind == DRAIN_ITEM_TRIGGER)
			free(s.x.trig.text);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Write the samples the merge releases. */
static int release(struct drain *d, bool all)
{
	int ret;

	if (d->flight || d->merge_order)
		ret = release_ordered(d, all);
	else
		ret = release_grouped(d, all);
	if (ret < 0)
		return ret;
	/* nothing read is waiting any more: held records can apply */
	if (!d->merge.queued)
		return drain_meta_apply_pending(&d->fwd, d->rec, INT64_MAX);
	return 0;
}


/* ---- flight recorder ring (docs/DRAIN.md, "Flight recorder") ---------- */

static uint64_t gen_size(const struct drain *d, const struct fgen *g)
{
	if (d->rec && g == &d->gens[d->ngens - 1])
		return spulse_recorder_bytes(d->rec);
	return g->bytes;
}

static void ring_account(struct drain *d)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < d->ngens; i++)
		sum += gen_size(d, &d->gens[i]);
	if (sum > d->gen_bytes_max)
		d->gen_bytes_max = sum;
}

static void drop_oldest(struct drain *d)
{
	struct fgen *g = &d->gens[0];

	if (g->any && (!d->dropped_any || g->max_ns > d->dropped_upto)) {
		d->dropped_upto = g->max_ns;
		d->dropped_any = true;
	}
	close(g->fd);
	memmove(d->gens, d->gens + 1, (d->ngens - 1) * sizeof(*d->gens));
	d->ngens--;
}

/* Keep just the generations a current or future dump can need. */
static void retain(struct drain *d)
{
	int64_t keep = d->written_max - (int64_t)d->fo.seconds_ns -
		       (int64_t)d->fo.post_ns;
	unsigned int i, max = drain_flight_max_gens(&d->fo);

	for (i = 0; i < d->npend; i++)
		if (d->pend[i].ws < keep)
			keep = d->pend[i].ws;
	while (d->ngens > 1 && d->gens[0].any && d->gens[0].max_ns < keep)
		drop_oldest(d);
	while (d->ngens > max)
		drop_oldest(d);	/* the byte cap cut generations short */
}

static int rotate(struct drain *d)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	struct stat sb;
	unsigned int i;
	int ret;

	ring_account(d);
	ret = spulse_recorder_close(d->rec);
	d->rec = NULL;
	if (ret < 0)
		return ret;
	cur->bytes = fstat(cur->fd, &sb) ? 0 : (uint64_t)sb.st_size;
	ret = new_generation(d);
	if (ret < 0)
		return ret;
	/* the new generation is a spool of its own: ids start again */
	for (i = 0; i < d->ncpu; i++)
		drain_input_forget_maps(&d->cpu[i]);
	if (d->have_meta) {
		ret = drain_meta_redefine(&d->fwd, d->rec,
					  spulse_stream_defs(d->meta.stream));
		if (ret < 0)
			return ret;
	}
	ring_account(d);	/* the most: just before the oldest is dropped */
	retain(d);
	return 0;
}

static int flight_before(struct drain *d, int64_t t)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	uint64_t cap = d->fo.gen_bytes ? d->fo.gen_bytes : DRAIN_FLIGHT_GEN_BYTES;

	if (cur->any && (t - cur->min_ns >= (int64_t)drain_flight_gen_ns(&d->fo) ||
			 spulse_recorder_bytes(d->rec) >= cap))
		return rotate(d);
	return 0;
}

static void fmt_ms(char *b, size_t n, uint64_t ns)
{
	snprintf(b, n, "%.3fms", (double)ns / 1e6);
}

/* A trigger fired at @t: accept it (pending until its post time) or not. */
static int fire(struct drain *d, uint8_t reason, int64_t t, uint64_t value,
		uint64_t threshold, const char *text)
{
	struct ftrig *p;
	int64_t gap = (int64_t)d->fo.min_gap_ns;

	d->seq++;
	d->fired++;
	if (d->dumps + d->npend >= d->fo.max_dumps) {
		d->suppressed++;
		fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s "
			"suppressed: --max-dumps %u reached\n", d->seq, text,
			(double)t / 1e9, d->fo.max_dumps);
		return 0;
	}
	if (d->have_last_T && t < d->last_T + gap && t > d->last_T - gap) {
		d->suppressed++;
		fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s "
			"suppressed: within --min-gap of the trigger at "
			"%.3f s\n", d->seq, text, (double)t / 1e9,
			(double)d->last_T / 1e9);
		return 0;
	}
	if (d->npend == d->cappend) {
		unsigned int cap = d->cappend ? d->cappend * 2 : 4;
		struct ftrig *v = realloc(d->pend, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->pend = v;
		d->cappend = cap;
	}
	p = &d->pend[d->npend++];
	memset(p, 0, sizeof(*p));
	snprintf(p->text, sizeof(p->text), "%s", text);
	p->t.time_ns = t;
	p->t.reason = reason;
	p->t.seq = d->seq;
	p->t.value_ns = value;
	p->t.threshold_ns = threshold;
	p->ws = t > (int64_t)d->fo.seconds_ns ? t - (int64_t)d->fo.seconds_ns : 0;
	p->we = t + (int64_t)d->fo.post_ns;
	p->fired_wall_ns = mono_ns();
	d->have_last_T = true;
	d->last_T = t;
	fprintf(d->log, "spulse-drain: trigger %u (%s) at %.3f s: dump after "
		"%.3f s more\n", d->seq, text, (double)t / 1e9,
		(double)d->fo.post_ns / 1e9);
	return 1;
}

/* Write the dump of pending trigger @k, window end at most @we_max. */
static int cut_pending(struct drain *d, unsigned int k, int64_t we_max)
{
	struct ftrig *p = &d->pend[k];
	struct drain_cut_stats cs;
	struct spulse_error err;
	int64_t ws = p->ws, we = p->we < we_max ? p->we : we_max;
	int *fds = NULL;
	size_t n = 0;
	unsigned int i;
	char *path = NULL, note[64] = "";
	int ret;

	if (we < ws)
		we = ws;
	if (d->dropped_any && ws <= d->dropped_upto) {
		ws = d->dropped_upto + 1;
		if (we < ws)
			we = ws;
		snprintf(note, sizeof(note), " (start cut by the memory cap)");
	}
	if (d->rec) {
		ret = spulse_recorder_flush(d->rec);
		if (ret < 0)
			return ret;
	}
	fds = calloc(d->ngens ? d->ngens : 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < d->ngens; i++)
		if (d->gens[i].any && d->gens[i].max_ns >= ws &&
		    d->gens[i].min_ns <= we)
			fds[n++] = d->gens[i].fd;
	p->t.window_start_ns = (uint64_t)ws;
	p->t.window_end_ns = (uint64_t)we;
	p->t.text = p->text;
	p->t.text_len = (uint32_t)strlen(p->text);
	path = drain_dump_name(d->o.output, d->dumps + 1);
	if (!path) {
		free(fds);
		return -ENOMEM;
	}
	ret = drain_cut(fds, n, path, d->base_us, d->interval_us, ws, we, &p->t,
			d->have_ident ? &d->ident : NULL, &cs, &err);
	free(fds);
	if (ret < 0) {
		fprintf(d->log, "spulse-drain: dump %s: %s\n", path, err.msg);
		free(path);
		return ret;
	}
	d->dumps++;
	fprintf(d->log, "spulse-drain: dump %u: %s: trigger %u (%s); window "
		"%.3f..%.3f s%s; %" PRIu64 " samples, %" PRIu64 " off-CPU "
		"intervals from %zu generations\n", d->dumps, path, p->t.seq,
		p->text, (double)ws / 1e9, (double)we / 1e9, note, cs.samples,
		cs.offcpu, n);
	if (d->o.kallsyms) {
		save_kallsyms(d, path);
		capture_sidecars(d, path, true);
	}
	free(path);
	memmove(d->pend + k, d->pend + k + 1,
		(d->npend - k - 1) * sizeof(*d->pend));
	d->npend--;
	return 0;
}

/*
 * Is everything up to @we written? Every CPU that produced anything has
 * pushed a later item and holds nothing up to @we; CPUs that never
 * produced are idle; finished ones count no more. (written_max > @we alone
 * is not enough: an item released by the wall-clock rule can pass a CPU
 * whose data reaches the drainer late.)
 */
static bool written_through(const struct drain *d, int64_t we)
{
	unsigned int i;

	if (!d->written_any || d->written_max <= we)
		return false;
	for (i = 0; i < d->merge.nsrc; i++) {
		const struct drain_mqueue *q = &d->merge.q[i];

		if (q->finished || !q->seen)
			continue;
		if (q->last_ns <= we || (q->len && q->v[q->head].time_ns <= we))
			return false;
	}
	return true;
}

/* Cut every pending dump whose window is complete (or @force / timed out). */
static int flight_poll(struct drain *d, bool force)
{
	int64_t now = mono_ns();
	unsigned int k = 0;
	int ret;

	while (k < d->npend) {
		struct ftrig *p = &d->pend[k];
		int64_t wait = (int64_t)d->fo.post_ns +
			       2 * (int64_t)d->o.window_ms * 1000000 +
			       1000000000;

		if (force || written_through(d, p->we) ||
		    now - p->fired_wall_ns >= wait) {
			ret = cut_pending(d, k, d->written_any ? d->written_max :
					  p->we);
			if (ret < 0)
				return ret;
			continue;
		}
		k++;
	}
	return 0;
}

static int flight_after(struct drain *d, const struct drain_msample *s,
			uint32_t tid)
{
	struct fgen *cur = &d->gens[d->ngens - 1];
	unsigned int i;
	int ret;

	if (!cur->any || s->time_ns < cur->min_ns)
		cur->min_ns = s->time_ns;
	if (!cur->any || s->time_ns > cur->max_ns)
		cur->max_ns = s->time_ns;
	cur->any = true;
	if (!d->written_any || s->time_ns > d->written_max)
		d->written_max = s->time_ns;
	d->written_any = true;
	if (s->kind == DRAIN_ITEM_TRIGGER &&
	    s->x.trig.t.reason == SPULSE_TRIGGER_MANUAL) {
		ret = fire(d, SPULSE_TRIGGER_MANUAL, s->time_ns, 0, 0,
			   "manual (debugfs control)");
		if (ret < 0)
			return ret;
	}
	if (s->kind == DRAIN_ITEM_OFFCPU) {
		const struct spulse_offcpu *iv = &s->x.iv;
		uint64_t off = iv->blocked_ns + iv->runq_ns;

		for (i = 0; i < d->fo.nspecs; i++) {
			const struct drain_trigger_spec *sp = &d->fo.specs[i];
			uint64_t v = sp->reason == SPULSE_TRIGGER_OFFCPU ? off :
				     iv->runq_ns;
			const char *st = spulse_state_name(iv->state);
			char text[SPULSE_MAX_TRIGGER_TEXT], ms[32];

			if ((sp->reason != SPULSE_TRIGGER_OFFCPU &&
			     sp->reason != SPULSE_TRIGGER_RUNQ) ||
			    v <= sp->threshold_ns)
				continue;
			fmt_ms(ms, sizeof(ms), v);
			snprintf(text, sizeof(text), "%s tid %u state %s %s",
				 sp->text, tid, st ? st : "?", ms);
			ret = fire(d, sp->reason, s->time_ns, v,
				   sp->threshold_ns, text);
			if (ret < 0)
				return ret;
			break;	/* one trigger per interval */
		}
	}
	ring_account(d);
	return flight_poll(d, false);
}

/*
 * The trigger time of a signal: now on the profile clock. The kernel's
 * times are CLOCK_MONOTONIC since the session start and start_us is the
 * CLOCK_REALTIME of that start, so now ~ realtime - start_us; the newest
 * record read lags behind that by the relay latency (seen: 1.2 s in the
 * TCG VM). The estimate is used when it is plausible (not before the
 * newest record read and at most 60 s after it), else - streams not
 * stamped by this machine's clock, such as the suite's fake files - the
 * newest record time read.
 */
int drain_flight_signal(struct drain *d)
{
	int64_t t = d->merge.any ? d->merge.newest_ns : 0, now;
	struct timespec ts;

	if (!d->flight)
		return -EINVAL;
	if (d->written_any && d->written_max > t)
		t = d->written_max;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
	       (int64_t)d->base_us) * 1000;
	if (d->rec && now >= t && now - t <= 60 * (int64_t)1000000000)
		t = now;
	return fire(d, SPULSE_TRIGGER_SIGNAL, t, 0, 0, "signal SIGUSR1");
}

/*
 * One round: read every input (CPUs, then meta: every module the kernel
 * wrote before the samples read is then known before they are released and
 * resolved), then decode. Two clock reads per round, not one per input or
 * record: an input read dry counts as dry from before the round (t0), the
 * records read count as queued after it (t1) -- both err on the safe side
 * of the merge's "read dry after it was queued" rules.
 */
static long round_read(struct drain *d)
{
	long total = 0, n;
	int64_t t0 = mono_ns();
	unsigned int i;
	int ret;

	d->more = false;
	for (i = 0; i < d->ncpu; i++) {
		n = pump_read(d, &d->cpu[i], i);
		if (n < 0)
			return n;
		total += n;
	}
	if (d->have_meta) {
		n = pump_read(d, &d->meta, 0);
		if (n < 0)
			return n;
		total += n;
	}
	d->round_ns = mono_ns();
	for (i = 0; i < d->ncpu; i++) {
		if (d->cpu[i].state == DRAIN_INPUT_OPEN && d->cpu[i].dry)
			drain_merge_dry(&d->merge, i, t0);
		ret = pump_decode(d, &d->cpu[i], i, d->round_ns);
		if (ret < 0)
			return ret;
	}
	if (d->have_meta) {
		ret = pump_decode(d, &d->meta, 0, d->round_ns);
		if (ret < 0)
			return ret;
	}
	return total;
}

/*
 * Wait up to @timeout_ms for input. Relay files (cpuN and meta) are polled:
 * relay's poll() reports "readable" only once a sub-buffer was switched
 * (filled up or flushed), so the drainer sleeps through partial
 * sub-buffers and reads them when the timeout (the bound on how long data
 * waits) expires. Regular files (the suite's fakes) are always "ready":
 * after POLL_SPURIOUS_MAX ready polls in a row that found nothing (a flushed
 * relay sub-buffer that held no new record can do that once), the drainer
 * just sleeps @timeout_ms between rounds. Returns true when poll() said
 * ready (the caller then counts whether the round found data).
 */
#define POLL_SPURIOUS_MAX 8
static bool wait_input(struct drain *d, int timeout_ms)
{
	struct timespec ts;
	unsigned int i, n = 0;

	if (timeout_ms <= 0)
		return false;
	if (d->poll_useful) {
		for (i = 0; i < d->ncpu; i++) {
			if (d->cpu[i].state != DRAIN_INPUT_OPEN)
				continue;
			d->pfd[n].fd = d->cpu[i].fd;
			d->pfd[n].events = POLLIN;
			n++;
		}
		if (d->have_meta && d->meta.state == DRAIN_INPUT_OPEN) {
			d->pfd[n].fd = d->meta.fd;
			d->pfd[n].events = POLLIN;
			n++;
		}
	}
	if (n) {
		int r = poll(d->pfd, n, timeout_ms);

		return r > 0;
	}
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	return false;
}

static int maybe_sync(struct drain *d, bool force)
{
	int64_t now = d->round_ns;
	int ret = 0;

	if (!d->rec)
		return 0;
	if (force || (d->o.sync_ms &&
		      now - d->last_sync_ns >= (int64_t)d->o.sync_ms * 1000000)) {
		ret = spulse_recorder_sync(d->rec);
		d->last_sync_ns = now;
	} else {
		ret = spulse_recorder_flush(d->rec);
	}
	return ret;
}

/*
 * Reads of a relay file stop at its published sub-buffers, so a partial
 * one is published by a control flush (each CPU switches its own buffer,
 * sampling goes on) once every @timeout_ms: the bound on how long data
 * waits. Test stand-ins (regular files) are read to their end instead.
 */
static void publish_partial(struct drain *d, int timeout_ms)
{
	int64_t now;

	if (timeout_ms <= 0 || !relay_inputs(d))
		return;
	now = mono_ns();
	if (now - d->flush_ns < (int64_t)timeout_ms * 1000000)
		return;
	d->flush_ns = now;
	(void)drain_control(d, "flush\n");
}

long drain_step(struct drain *d, int timeout_ms)
{
	long n;
	int ret;

	if (d->fatal)
		return d->fatal;
	/*
	 * One wait, then one round: a round that had to stop at the per-input
	 * limit reads again at once; otherwise everything readable was read,
	 * and the next data is worth a wake-up only when a sub-buffer switches
	 * or the timeout (the bound for partial sub-buffers) expires.
	 */
	if (!d->more) {
		bool ready = wait_input(d, timeout_ms);

		publish_partial(d, timeout_ms);
		n = round_read(d);
		if (ready && n == 0 && ++d->poll_spurious >= POLL_SPURIOUS_MAX)
			d->poll_useful = false;
		else if (ready && n > 0)
			d->poll_spurious = 0;
	} else {
		n = round_read(d);
	}
	if (n < 0)
		goto fatal;
	if (d->rec) {
		ret = release(d, false);
		if (!ret && d->flight)
			ret = flight_poll(d, false);
		if (!ret)
			ret = maybe_sync(d, false);
		if (ret < 0) {
			n = ret;
			goto fatal;
		}
	}
	return n;
fatal:
	d->fatal = (int)n;
	return n;
}

/* Report a stream that ends inside a record (its complete prefix is used). */
static void check_tail(struct drain *d, struct drain_input *in)
{
	size_t pend;
	char nb[32];

	if (!in->stream || in->state == DRAIN_INPUT_ABANDONED)
		return;
	pend = spulse_stream_pending(in->stream);
	if (!pend)
		return;
	fprintf(d->log,
		"spulse-drain: %s: stream ends inside a record at offset %" PRIu64
		" (%zu bytes not used)\n", input_name(in, nb, sizeof(nb)),
		in->bytes_read - pend, pend);
	d->tails++;
}

/*
 * Relay lost or repeated bytes of a cpuN stream (kmod/relay.c): what was
 * read differs from what the stopped module says it wrote there.
 */
static void check_relay_bytes(struct drain *d)
{
	struct drain_kstat_cpu *v;
	unsigned int i;
	bool stopped;

	v = kstat_cpus(d, &stopped);
	for (i = 0; v && stopped && i < d->ncpu; i++) {
		struct drain_input *in = &d->cpu[i];
		bool comparable;
		int64_t gap;
		char nb[32];

		if (!v[i].found)
			continue;
		gap = drain_input_relay_gap(in, v[i].bytes, &comparable);
		if (!comparable || !gap)
			continue;
		fprintf(d->log, "spulse-drain: %s: relay delivered %" PRIu64
			" bytes, the module wrote %" PRIu64 " (%" PRIu64
			" bytes %s)\n", input_name(in, nb, sizeof(nb)),
			in->start + in->bytes_read, v[i].bytes,
			(uint64_t)(gap < 0 ? -gap : gap),
			gap < 0 ? "lost" : "delivered twice");
		d->relay_gaps++;
	}
	free(v);
}

/*
 * Without control of the module, whether an input still has bytes that
 * were readable when the finish began (drain_input_mark_owed()): the
 * passive deadline bounds only the chase of what a module writes later,
 * never that backlog (a slow or loaded host may need longer than the
 * deadline to read hundreds of MiB of buffers).
 */
static bool finish_owed(const struct drain *d)
{
	unsigned int i;

	for (i = 0; i < d->ncpu; i++)
		if (drain_input_owes(&d->cpu[i]))
			return true;
	return d->have_meta && drain_input_owes(&d->meta);
}

#define FINISH_PASSIVE_MS 1000

/* FINISH_PASSIVE_MS, or the test hook SPULSE_DRAIN_PASSIVE_MS (>= 0). */
static int64_t finish_passive_ms(void)
{
	const char *e = getenv("SPULSE_DRAIN_PASSIVE_MS");
	char *end;
	long v;

	if (!e || !*e)
		return FINISH_PASSIVE_MS;
	v = strtol(e, &end, 10);
	return *end || v < 0 ? FINISH_PASSIVE_MS : v;
}

int drain_finish(struct drain *d)
{
	unsigned int i, dry = 0;
	int64_t t_end;
	int ret;

	if (d->fatal)
		return d->fatal;
	t_end = mono_ns() + finish_passive_ms() * 1000000;
	if (!d->o.control) {
		for (i = 0; i < d->ncpu; i++)
			drain_input_mark_owed(&d->cpu[i]);
		if (d->have_meta)
			drain_input_mark_owed(&d->meta);
	} else {
		ret = drain_control(d, "stop\n");
		if (ret < 0)
			fprintf(d->log, "spulse-drain: control stop: %s\n",
				strerror(-ret));
		(void)drain_control(d, "flush\n");
	}
	/*
	 * Read until every input has been dry twice in a row. A flush that
	 * found no free sub-buffer left the partial one unpublished: once
	 * reading has made room, flush again (relay files only). A module
	 * this drainer did not stop may go on writing for good: then reading
	 * ends FINISH_PASSIVE_MS after it began, or once what was readable
	 * when it began is read, whichever is later.
	 */
	while (dry < 2) {
		long n;

		if (!d->o.control && mono_ns() - t_end > 0 && !finish_owed(d))
			break;

		if (dry && relay_inputs(d))
			(void)drain_control(d, "flush\n");
		n = round_read(d);

		if (n < 0) {
			d->fatal = (int)n;
			return (int)n;
		}
		if (n) {
			dry = 0;
			if (d->rec) {
				ret = release(d, false);
				if (ret < 0)
					return d->fatal = ret;
			}
		} else {
			dry++;
			if (dry < 2)
				usleep(10000);
		}
	}
	if (d->have_meta)
		check_tail(d, &d->meta);
	for (i = 0; i < d->ncpu; i++) {
		check_tail(d, &d->cpu[i]);
		drain_merge_finish(&d->merge, i);
	}
	check_relay_bytes(d);
	if (d->uw && d->o.unwind_wait_ms &&
	    drain_unwind_wait(d->uw, d->o.unwind_wait_ms) < 0)
		fprintf(d->log, "spulse-drain: unwind: tables still being "
			"built after %u ms; not waiting for them\n",
			d->o.unwind_wait_ms);
	if (!d->rec) {
		ret = open_recorder(d, NULL);	/* empty spool, start = now */
		if (ret < 0)
			return d->fatal = ret;
	}
	ret = release(d, true);
	if (!ret && d->flight)
		ret = flight_poll(d, true);	/* the data ends here */
	if (!ret)
		ret = maybe_sync(d, true);
	if (!ret && d->ks_pending) {
		save_kallsyms(d, d->o.output);
		d->ks_pending = false;
	}
	if (!ret && !d->flight && d->o.kallsyms)
		capture_sidecars(d, d->o.output, true);
	if (ret < 0)
		d->fatal = ret;
	return ret;
}

bool drain_inputs_closed(const struct drain *d)
{
	unsigned int i;

	if (d->have_meta && d->meta.state == DRAIN_INPUT_OPEN)
		return false;
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].state == DRAIN_INPUT_OPEN)
			return false;
	return true;
}

/*
 * After a fatal error (a full disk, say) the Recorder has taken samples
 * the file may not hold: count what the spool's complete prefix holds by
 * reading it back, once, so the summary says what is on disk.
 */
static void count_on_disk(struct drain *d)
{
	struct spulse_replay *rp;
	struct spulse_error err;
	const struct spulse_info *in;

	if (d->disk_counted)
		return;
	d->disk_counted = true;
	d->disk_samples = 0;
	d->disk_bytes = 0;
	if (spulse_replay_open(d->o.output, NULL, &rp, &err))
		return;
	in = spulse_replay_info(rp);
	d->disk_samples = in->samples;
	d->disk_bytes = in->complete_bytes;
	spulse_replay_close(rp);
}

void drain_get_stats(struct drain *d, struct drain_stats *st)
{
	int64_t v;
	unsigned int i;

	for (i = 0; i < d->ncpu; i++)
		d->cpu_bytes[i] = d->cpu[i].bytes_read;
	d->st.samples = d->samples;
	d->st.spool_bytes = d->rec ? spulse_recorder_bytes(d->rec) : 0;
	if (d->fatal && !d->flight && d->rec && d->o.output) {
		count_on_disk(d);
		d->st.samples = d->disk_samples;
		d->st.spool_bytes = d->disk_bytes;
	}
	d->st.meta_bytes = d->have_meta ? d->meta.bytes_read : 0;
	d->st.ncpus = d->ncpu;
	d->st.cpu_bytes = d->cpu_bytes;
	d->st.stream_errors = d->errors;
	d->st.truncated_tails = d->tails;
	d->st.relay_gaps = d->relay_gaps;
	d->st.late_samples = d->late;
	d->st.offcpu = d->offcpu;
	d->st.triggers = d->triggers;
	d->st.ext_dropped = d->ext_dropped;
	d->st.epochs = d->epochs;
	d->st.dumps = d->dumps;
	d->st.triggers_fired = d->fired;
	d->st.triggers_suppressed = d->suppressed;
	d->st.generations = d->ngens;
	d->st.gen_bytes = 0;
	for (i = 0; i < d->ngens; i++)
		d->st.gen_bytes += gen_size(d, &d->gens[i]);
	if (d->flight)
		ring_account(d);
	d->st.gen_bytes_max = d->gen_bytes_max;
	d->st.ring_bound = d->flight ?
		drain_flight_bound(&d->fo, d->have_meta ?
			spulse_stream_info(d->meta.stream)->modules : 0) : 0;
	if (d->uw) {
		struct drain_unwind_stats us;

		drain_unwind_get_stats(d->uw, &us);
		d->st.unwind = true;
		d->st.unwind_loaded = us.loaded;
		d->st.unwind_cache_hits = us.cache_hits;
		d->st.unwind_refused = us.refused;
		d->st.unwind_failed = us.failed;
		d->st.unwind_skipped = us.skipped;
		d->st.unwind_maps = us.maps;
		d->st.unwind_map_errors = us.map_errors;
		d->st.unwind_rows = us.rows;
		d->st.unwind_bytes = us.bytes;
		d->st.unwind_build_ns = us.build_ns;
	}
	d->st.kernel_dropped = -1;
	if (d->stats_path && !drain_kstat(d->stats_path, "samples_dropped", &v))
		d->st.kernel_dropped = v;
	*st = d->st;
}

void drain_print_stats(struct drain *d, FILE *f)
{
	struct drain_stats st;
	unsigned int i;

	drain_get_stats(d, &st);
	if (d->flight)
		fprintf(f, "spulse-drain: %" PRIu64 " samples written to the "
			"flight generations (%" PRIu64 " bytes in the open one); "
			"read meta %" PRIu64, st.samples, st.spool_bytes,
			st.meta_bytes);
	else
		fprintf(f, "spulse-drain: %" PRIu64 " samples written to %s (%"
			PRIu64 " bytes); read meta %" PRIu64, st.samples,
			d->o.output, st.spool_bytes, st.meta_bytes);
	for (i = 0; i < st.ncpus; i++)
		fprintf(f, " cpu%d %" PRIu64, d->cpu[i].cpu, st.cpu_bytes[i]);
	fprintf(f, " bytes; stream errors %u; truncated tails %u; late %" PRIu64
		"; kernel dropped ", st.stream_errors, st.truncated_tails,
		st.late_samples);
	if (st.kernel_dropped >= 0)
		fprintf(f, "%" PRId64 "\n", st.kernel_dropped);
	else
		fprintf(f, "unknown\n");
	if (st.relay_gaps)
		fprintf(f, "spulse-drain: relay: %u CPU stream(s) differ from "
			"what the module wrote (lost or repeated bytes)\n",
			st.relay_gaps);
	if (st.offcpu || st.triggers || st.ext_dropped)
		fprintf(f, "spulse-drain: off-CPU intervals %" PRIu64
			", trigger marks %" PRIu64 ", unknown extension "
			"records dropped %" PRIu64 "\n", st.offcpu,
			st.triggers, st.ext_dropped);
	if (st.epochs)
		fprintf(f, "spulse-drain: kernel stream epochs %" PRIu64
			" (per-CPU ids restarted; the spool's are not)\n",
			st.epochs);
	if (st.unwind)
		fprintf(f, "spulse-drain: unwind tables loaded %" PRIu64
			" (cache hits %" PRIu64 ", %" PRIu64 " rows, %" PRIu64
			" bytes, %.3f s), refused %" PRIu64 " (build-id differs),"
			" failed %" PRIu64 ", skipped %" PRIu64 "; process maps "
			"%" PRIu64 " (refused %" PRIu64 ")\n", st.unwind_loaded,
			st.unwind_cache_hits, st.unwind_rows, st.unwind_bytes,
			(double)st.unwind_build_ns / 1e9, st.unwind_refused,
			st.unwind_failed, st.unwind_skipped, st.unwind_maps,
			st.unwind_map_errors);
	if (d->flight)
		fprintf(f, "spulse-drain: flight: triggers %" PRIu64 ", dumps "
			"%u, suppressed %" PRIu64 "; generations %u holding %"
			PRIu64 " bytes (most %" PRIu64 ", bound %" PRIu64 ")\n",
			st.triggers_fired, st.dumps, st.triggers_suppressed,
			st.generations, st.gen_bytes, st.gen_bytes_max,
			st.ring_bound);
}

int drain_close(struct drain *d)
{
	unsigned int i;
	int ret = 0;

	if (!d)
		return 0;
	drain_unwind_close(d->uw);	/* DELs its tables */
	d->uw = NULL;
	free(d->pids);
	if (d->rec)
		ret = spulse_recorder_close(d->rec);
	for (i = 0; i < d->ngens; i++)
		close(d->gens[i].fd);
	free(d->gens);
	free(d->pend);
	if (d->fatal)
		ret = d->fatal;
	if (d->out_fd >= 0)
		close(d->out_fd);
	if (d->have_meta)
		drain_input_close(&d->meta);
	for (i = 0; i < d->ncpu; i++)
		drain_input_close(&d->cpu[i]);
	drain_merge_free(&d->merge);
	free(d->cpu);
	free(d->cpu_bytes);
	free(d->pfd);
	group_clear(d);		/* empty unless a write failed */
	free(d->grp);
	free(d->grp_head);
	free(d->grp_tail);
	free(d->grp_order);
	drain_meta_free(&d->fwd);
	drain_ksyms_free(&d->ks);
	free(d->stats_path);
	free(d);
	return ret;
}
