// SPDX-License-Identifier: MIT
/*
 * The session's CPU inputs: DIR/cpuN found and opened in CPU order, each
 * relay file started where earlier readers stopped (the module's stats),
 * and questions about them all (any relay file? all closed?).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "session.h"

#define PROC_FS_MAGIC 0x9fa0	/* linux/magic.h PROC_SUPER_MAGIC */

/*
 * A regular file in procfs is a relay file too: the module's twin of
 * debugfs cpuN or meta in /proc/spulse (docs/KERNEL.md "Lockdown"), with
 * the same sizes and read positions (relay_input.c tells only debugfs).
 */
static void mark_procfs_relay(struct drain_input *in)
{
	struct statfs sf;

	if (in->fd >= 0 && in->sized && !in->relay && !fstatfs(in->fd, &sf) &&
	    (unsigned long)sf.f_type == PROC_FS_MAGIC)
		in->relay = true;
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

int drain_find_cpus(struct drain *d)
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
		mark_procfs_relay(&d->cpu[d->ncpu]);
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
struct drain_kstat_cpu *drain_kstat_inputs(struct drain *d, bool *stopped)
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
void drain_set_starts(struct drain *d)
{
	struct drain_kstat_cpu *v;
	unsigned int i;
	bool stopped;
	int64_t r;

	if (d->have_meta)
		mark_procfs_relay(&d->meta);
	if (d->have_meta && d->meta.relay &&
	    !drain_kstat(d->stats_path, "meta_read", &r) && r >= 0)
		drain_input_set_start(&d->meta, (uint64_t)r);
	v = drain_kstat_inputs(d, &stopped);
	if (!v)
		return;
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].relay && v[i].has_pos)
			drain_input_set_start(&d->cpu[i], v[i].read);
	free(v);
}

/* Any input a real relay file (not a test's stand-in)? */
bool drain_relay_inputs(const struct drain *d)
{
	unsigned int i;

	if (d->have_meta && d->meta.relay)
		return true;
	for (i = 0; i < d->ncpu; i++)
		if (d->cpu[i].relay)
			return true;
	return false;
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
