// SPDX-License-Identifier: MIT
/*
 * The spool's sidecar files: SPOOL.kallsyms, SPOOL.vdso and the JIT maps
 * SPOOL.perf-PID.map of the processes meta reported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

/*
 * Remember a module record's pid, for the JIT maps copied at the end. A
 * process's module records come in a run, so only a repeat of the last pid
 * is skipped here; unique_pids() sorts out the rest when the maps are
 * copied (no per-record scan of every pid seen).
 */
void drain_note_pid(struct drain *d, uint32_t pid)
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
void drain_save_kallsyms(struct drain *d, const char *spool)
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
void drain_capture_sidecars(struct drain *d, const char *spool, bool jit)
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
