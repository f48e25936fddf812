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

#define READ_ROUND_MAX	(256u << 10)	/* bytes per input per round */

struct drain {
	struct drain_opts o;
	FILE *log;
	int out_fd;			/* spool fd until the Recorder owns it */
	struct spulse_recorder *rec;
	uint64_t base_us;		/* spool start_us */

	struct drain_input meta;
	bool have_meta;
	struct drain_meta_fwd fwd;	/* meta -> spool, module generation */

	struct drain_input *cpu;	/* sorted by CPU number */
	struct drain_idmap *maps;
	uint64_t *cpu_bytes;
	unsigned int ncpu;
	struct drain_merge merge;
	struct pollfd *pfd;
	bool poll_useful;

	int64_t last_sync_ns;
	int64_t last_time_ns;
	bool emitted;
	uint64_t samples, late;
	unsigned int errors, tails;
	int fatal;
	char *stats_path;
	struct drain_stats st;
};

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
	char *path = NULL;
	int ret;

	if (!d)
		return -ENOMEM;
	d->o = *opts;
	d->log = opts->log ? opts->log : stderr;
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
	if (!d->ncpu && !d->have_meta) {
		fprintf(d->log, "spulse-drain: %s: no cpuN or meta files\n",
			d->o.debugfs);
		ret = -ENOENT;
		goto fail;
	}
	d->maps = calloc(d->ncpu ? d->ncpu : 1, sizeof(*d->maps));
	d->cpu_bytes = calloc(d->ncpu ? d->ncpu : 1, sizeof(*d->cpu_bytes));
	d->pfd = calloc(d->ncpu ? d->ncpu : 1, sizeof(*d->pfd));
	if (!d->maps || !d->cpu_bytes || !d->pfd) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = drain_merge_init(&d->merge, d->ncpu,
			       (int64_t)opts->window_ms * 1000000);
	if (ret < 0)
		goto fail;
	/* Create the spool now so a drainer killed early leaves a file. */
	d->out_fd = open(opts->output, O_WRONLY | O_CREAT | O_TRUNC |
			 O_APPEND | O_CLOEXEC, 0644);
	if (d->out_fd < 0) {
		ret = -errno;
		fprintf(d->log, "spulse-drain: %s: %s\n", opts->output,
			strerror(errno));
		goto fail;
	}
	if (opts->kallsyms) {
		long n;

		if (asprintf(&path, "%s.kallsyms", opts->output) < 0) {
			ret = -ENOMEM;
			goto fail;
		}
		n = drain_copy_kallsyms(opts->kallsyms, path);
		if (n < 0)
			fprintf(d->log, "spulse-drain: warning: %s -> %s: %s\n",
				opts->kallsyms, path, strerror((int)-n));
		free(path);
	}
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

/* Open the Recorder on the first stream header (meta preferred). */
static int open_recorder(struct drain *d, const struct drain_input *in)
{
	struct spulse_recorder_opts ro = { .sz = sizeof(ro) };
	int ret;

	ro.start_us = in ? in->start_us : 0;
	ro.interval_us = in ? in->interval_us : 0;
	ret = spulse_recorder_fdopen(d->out_fd, &ro, &d->rec);
	if (ret < 0) {
		fprintf(d->log, "spulse-drain: %s: recorder: %s\n",
			d->o.output, strerror(-ret));
		return ret;
	}
	d->out_fd = -1;
	d->base_us = in ? in->start_us : 0;
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
		input_name(in, nb, sizeof(nb)), err->offset, err->msg);
	drain_input_abandon(in, err);
	d->errors++;
}

static int cpu_record(struct drain *d, unsigned int i,
		      const struct spulse_record *r)
{
	struct drain_input *in = &d->cpu[i];
	struct drain_msample s;
	int64_t t;

	if (r->tag != SPULSE_TAG_SAMPLE)
		return 0;	/* definitions stay in the stream's defs */
	t = (int64_t)(in->start_us - d->base_us) * 1000 + r->u.sample.time_ns;
	s.time_ns = t < 0 ? 0 : t;
	s.thread = r->u.sample.thread;
	s.stack = r->u.sample.stack;
	s.queued_ns = mono_ns();
	return drain_merge_push(&d->merge, i, &s);
}

/* Decode every complete record of @in. */
static int decode(struct drain *d, struct drain_input *in, unsigned int i)
{
	struct spulse_record r;
	struct spulse_error err;
	int ret;

	if (in->state == DRAIN_INPUT_ABANDONED || !in->have_header)
		return 0;
	for (;;) {
		memset(&err, 0, sizeof(err));
		ret = spulse_stream_next(in->stream, &r, &err);
		if (ret == 0)
			return 0;
		if (ret < 0) {
			if (ret != -EBADMSG && !err.msg[0])
				snprintf(err.msg, sizeof(err.msg), "%s",
					 strerror(-ret));
			stream_error(d, in, &err);
			if (in->cpu >= 0)
				drain_merge_finish(&d->merge, i);
			return 0;
		}
		if (in->cpu < 0)
			ret = drain_meta_record(&d->fwd, d->rec, &r, d->merge.any,
						d->merge.newest_ns);
		else
			ret = cpu_record(d, i, &r);
		if (ret < 0)
			return ret;
	}
}

/* Read and decode one input; a non-SPULSE header is a stream error too. */
static long pump(struct drain *d, struct drain_input *in, unsigned int i)
{
	long n;
	int ret;

	if (in->state != DRAIN_INPUT_OPEN)
		return 0;
	n = drain_input_read(in, READ_ROUND_MAX);
	if (n < 0 && in->state == DRAIN_INPUT_GONE) {
		char nb[32];

		fprintf(d->log, "spulse-drain: %s: read: %s; input closed\n",
			input_name(in, nb, sizeof(nb)), strerror((int)-n));
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		n = 0;
	} else if (n < 0) {
		return n;
	}
	if (in->dry && in->cpu >= 0)
		drain_merge_dry(&d->merge, i, mono_ns());
	if (!in->have_header && in->hdr_len >= SPULSE_MAGIC_LEN &&
	    memcmp(in->hdr, SPULSE_MAGIC, SPULSE_MAGIC_LEN)) {
		struct spulse_error err = { .offset = 0, .code = -EBADMSG };

		snprintf(err.msg, sizeof(err.msg), "bad magic");
		stream_error(d, in, &err);
		if (in->cpu >= 0)
			drain_merge_finish(&d->merge, i);
		return n;
	}
	ret = maybe_open_recorder(d);
	if (ret < 0)
		return ret;
	if (d->rec) {
		ret = decode(d, in, i);
		if (ret < 0)
			return ret;
	}
	return n;
}

/* Write the samples the merge releases. */
static int release(struct drain *d, bool all)
{
	int64_t now = mono_ns();
	struct drain_msample s;
	unsigned int src;
	int ret;

	while (drain_merge_pop(&d->merge, now, all, &src, &s) == 1) {
		uint32_t th, st;

		ret = drain_meta_apply_pending(&d->fwd, d->rec, s.time_ns);
		if (ret < 0)
			return ret;

		ret = drain_map_sample(d->rec, spulse_stream_defs(d->cpu[src].stream),
				       &d->maps[src], d->fwd.gen, s.thread, s.stack,
				       &th, &st);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: cpu%d: mapping sample: %s\n",
				d->cpu[src].cpu, strerror(-ret));
			return ret;
		}
		ret = spulse_rec_sample(d->rec, s.time_ns, th, st);
		if (ret < 0)
			return ret;
		if (d->emitted && s.time_ns < d->last_time_ns)
			d->late++;
		else
			d->last_time_ns = s.time_ns;
		d->emitted = true;
		d->samples++;
	}
	/* nothing read is waiting any more: held records can apply */
	if (!d->merge.queued)
		return drain_meta_apply_pending(&d->fwd, d->rec, INT64_MAX);
	return 0;
}

static long round_read(struct drain *d)
{
	long total = 0, n;
	unsigned int i;

	for (i = 0; i < d->ncpu; i++) {
		n = pump(d, &d->cpu[i], i);
		if (n < 0)
			return n;
		total += n;
	}
	/*
	 * meta last: every module the kernel wrote before the samples read
	 * above is then known before they are released and resolved.
	 */
	if (d->have_meta) {
		n = pump(d, &d->meta, 0);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* Wait for input: poll the relay files (meta's poll is always ready). */
static void wait_input(struct drain *d, int timeout_ms)
{
	struct timespec ts;
	unsigned int i, n = 0;

	if (timeout_ms <= 0)
		return;
	if (d->poll_useful) {
		for (i = 0; i < d->ncpu; i++) {
			if (d->cpu[i].state != DRAIN_INPUT_OPEN)
				continue;
			d->pfd[n].fd = d->cpu[i].fd;
			d->pfd[n].events = POLLIN;
			n++;
		}
	}
	if (n) {
		int r = poll(d->pfd, n, timeout_ms);

		if (r > 0) {
			/* regular files are always "ready": poll is useless */
			for (i = 0; i < d->ncpu; i++) {
				long got;

				got = pump(d, &d->cpu[i], i);
				if (got > 0)
					return;
			}
			d->poll_useful = false;
		} else {
			return;
		}
	}
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
}

static int maybe_sync(struct drain *d, bool force)
{
	int64_t now = mono_ns();
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

long drain_step(struct drain *d, int timeout_ms)
{
	long n;
	int ret;

	if (d->fatal)
		return d->fatal;
	n = round_read(d);
	if (n == 0) {
		wait_input(d, timeout_ms);
		n = round_read(d);
	}
	if (n < 0)
		goto fatal;
	if (d->rec) {
		ret = release(d, false);
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

int drain_finish(struct drain *d)
{
	unsigned int i, dry = 0;
	int ret;

	if (d->fatal)
		return d->fatal;
	if (d->o.control) {
		ret = drain_control(d, "stop\n");
		if (ret < 0)
			fprintf(d->log, "spulse-drain: control stop: %s\n",
				strerror(-ret));
		(void)drain_control(d, "flush\n");
	}
	/* read until every input has been dry twice in a row */
	while (dry < 2) {
		long n = round_read(d);

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
	if (!d->rec) {
		ret = open_recorder(d, NULL);	/* empty spool, start = now */
		if (ret < 0)
			return d->fatal = ret;
	}
	ret = release(d, true);
	if (!ret)
		ret = maybe_sync(d, true);
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

void drain_get_stats(struct drain *d, struct drain_stats *st)
{
	int64_t v;
	unsigned int i;

	for (i = 0; i < d->ncpu; i++)
		d->cpu_bytes[i] = d->cpu[i].bytes_read;
	d->st.samples = d->samples;
	d->st.spool_bytes = d->rec ? spulse_recorder_bytes(d->rec) : 0;
	d->st.meta_bytes = d->have_meta ? d->meta.bytes_read : 0;
	d->st.ncpus = d->ncpu;
	d->st.cpu_bytes = d->cpu_bytes;
	d->st.stream_errors = d->errors;
	d->st.truncated_tails = d->tails;
	d->st.late_samples = d->late;
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
	fprintf(f, "spulse-drain: %" PRIu64 " samples written to %s (%" PRIu64
		" bytes); read meta %" PRIu64, st.samples, d->o.output,
		st.spool_bytes, st.meta_bytes);
	for (i = 0; i < st.ncpus; i++)
		fprintf(f, " cpu%d %" PRIu64, d->cpu[i].cpu, st.cpu_bytes[i]);
	fprintf(f, " bytes; stream errors %u; truncated tails %u; late %" PRIu64
		"; kernel dropped ", st.stream_errors, st.truncated_tails,
		st.late_samples);
	if (st.kernel_dropped >= 0)
		fprintf(f, "%" PRId64 "\n", st.kernel_dropped);
	else
		fprintf(f, "unknown\n");
}

int drain_close(struct drain *d)
{
	unsigned int i;
	int ret = 0;

	if (!d)
		return 0;
	if (d->rec)
		ret = spulse_recorder_close(d->rec);
	if (d->fatal)
		ret = d->fatal;
	if (d->out_fd >= 0)
		close(d->out_fd);
	if (d->have_meta)
		drain_input_close(&d->meta);
	for (i = 0; i < d->ncpu; i++) {
		drain_input_close(&d->cpu[i]);
		if (d->maps)
			drain_idmap_free(&d->maps[i]);
	}
	drain_merge_free(&d->merge);
	free(d->cpu);
	free(d->maps);
	free(d->cpu_bytes);
	free(d->pfd);
	drain_meta_free(&d->fwd);
	free(d->stats_path);
	free(d);
	return ret;
}
