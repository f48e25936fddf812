// SPDX-License-Identifier: MIT
/*
 * The drain session: inputs (relay_input.c) -> validation (libspulse
 * stream) -> meta forwarding and windowed merge (merge.c) -> renumbering
 * (renumber.c) -> Recorder. docs/DRAIN.md describes the design.
 *
 * This file: opening the session, the round loop (drain_step(): wait,
 * read, release, sync) and closing; session.h lists the session's other
 * files and what each does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iface.h"
#include "session.h"

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
	/*
	 * Lockdown raised while recording: debugfs now refuses the control
	 * file the session started with; its procfs twin is the same file.
	 */
	if (fd < 0 && errno == EPERM && strcmp(d->o.debugfs, DRAIN_PROCFS_DIR))
		fd = open(DRAIN_PROCFS_DIR "/control",
			  O_WRONLY | O_APPEND | O_CLOEXEC);
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

/*
 * 0 if @path can be created or truncated for writing (a regular file, or
 * none yet in a directory we may write), else a negative errno.
 */
static int output_creatable(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	char *dir;
	int ret = 0;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(path, W_OK) ? -errno : 0;
	}
	if (errno != ENOENT)
		return -errno;
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
		    : strdup(".");
	if (!dir)
		return -ENOMEM;
	if (access(dir, W_OK | X_OK))
		ret = -errno;
	free(dir);
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
	ret = drain_find_cpus(d);
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
	drain_set_starts(d);
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
	d->grp.len = calloc(nsrc, sizeof(*d->grp.len));
	d->grp.pos = calloc(nsrc, sizeof(*d->grp.pos));
	d->grp.xpos = calloc(nsrc, sizeof(*d->grp.xpos));
	d->grp.order = malloc(nsrc * sizeof(*d->grp.order));
	d->grp.emitted = &d->emitted;
	d->grp.last_ns = &d->last_time_ns;
	d->grp.late = &d->late;
	if (!d->cpu_bytes || !d->pfd || !d->grp.len || !d->grp.pos ||
	    !d->grp.xpos || !d->grp.order) {
		ret = -ENOMEM;
		goto fail;
	}
	/* the merge's order, one item at a time (tests compare the two) */
	env = getenv("SPULSE_DRAIN_MERGE_ORDER");
	d->merge_order = env && *env && strcmp(env, "0");
	ret = drain_merge_init(&d->merge, d->ncpu,
			       (int64_t)opts->window_ms * 1000000);
	if (ret < 0)
		goto fail;
	/*
	 * The spool is created with its header, on the first stream header
	 * (drain_open_recorder()): a drainer killed before leaves no file
	 * rather than an empty one, which is not a spool. Whether it can be
	 * created is known now, before anything starts (flight mode: only
	 * the dumps are files).
	 */
	if (!d->flight) {
		ret = output_creatable(opts->output);
		if (ret < 0) {
			fprintf(d->log, "spulse-drain: %s: %s\n", opts->output,
				strerror(-ret));
			goto fail;
		}
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
	if (opts->kallsyms && !opts->kallsyms_cache) {
		const char *home = getenv("HOME");

		if (home && *home &&
		    asprintf(&d->ks_cache, "%s/.cache/spulse/kallsyms", home) < 0)
			d->ks_cache = NULL;
	} else if (opts->kallsyms && opts->kallsyms_cache[0]) {
		d->ks_cache = strdup(opts->kallsyms_cache);
	}
	d->ks.cache_dir = d->ks_cache;
	if (opts->kallsyms && d->flight) {
		long n = drain_ksyms_load(&d->ks, opts->kallsyms);

		if (n < 0)
			fprintf(d->log, "spulse-drain: warning: %s: %s\n",
				opts->kallsyms, strerror((int)-n));
	} else if (opts->kallsyms && opts->control) {
		drain_save_kallsyms(d, opts->output);
	} else if (opts->kallsyms) {
		drain_save_kallsyms(d, opts->output);
		d->ks_pending = true;
	}
	if (opts->kallsyms && !d->flight)
		drain_capture_sidecars(d, opts->output, false);
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

int drain_maybe_sync(struct drain *d, bool force)
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

	if (timeout_ms <= 0 || !drain_relay_inputs(d))
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
		n = drain_round_read(d);
		if (ready && n == 0 && ++d->poll_spurious >= POLL_SPURIOUS_MAX)
			d->poll_useful = false;
		else if (ready && n > 0)
			d->poll_spurious = 0;
	} else {
		n = drain_round_read(d);
	}
	if (n < 0)
		goto fatal;
	if (d->rec) {
		ret = drain_release(d, false);
		if (!ret && d->flight)
			ret = drain_flight_poll(d, false);
		if (!ret)
			ret = drain_maybe_sync(d, false);
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
	drain_group_clear(d);		/* empty: release() writes or clears it */
	drain_merge_free(&d->merge);
	free(d->cpu);
	free(d->cpu_bytes);
	free(d->pfd);
	free(d->grp.len);
	free(d->grp.pos);
	free(d->grp.xpos);
	free(d->grp.order);
	drain_meta_free(&d->fwd);
	drain_ksyms_free(&d->ks);
	free(d->ks_cache);
	free(d->stats_path);
	free(d);
	return ret;
}
