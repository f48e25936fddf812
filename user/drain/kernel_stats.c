// SPDX-License-Identifier: MIT
/*
 * Parse the debugfs stats file: one "key value" per line, then per-CPU
 * lines "cpuN taken W written X dropped Y bytes B [published P read R]"
 * (drain_kstat() skips them, drain_kstat_cpus() reads them).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_stats.h"

int drain_kstat(const char *path, const char *key, int64_t *val)
{
	char line[256], name[64];
	int ret = -ENOENT;
	int64_t v;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %" SCNd64, name, &v) != 2)
			continue;
		if (!strcmp(name, key)) {
			*val = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * @v's entry for the stats line named @name ("cpuN"), or NULL. The search
 * starts at *@hint, the entry after the last one found, and wraps: the
 * module prints its CPUs in increasing order and the drainer keeps them
 * in that order, so a whole stats file costs O(n), not n^2 compares.
 */
static struct drain_kstat_cpu *find_cpu(struct drain_kstat_cpu *v,
					unsigned int n, const char *name,
					unsigned int *hint)
{
	unsigned int i, j;
	int cpu;
	char c;

	if (!n || sscanf(name, "cpu%d%c", &cpu, &c) != 1)
		return NULL;
	for (j = 0; j < n; j++) {
		i = (*hint + j) % n;
		if (v[i].cpu == cpu) {
			*hint = i + 1;
			return &v[i];
		}
	}
	return NULL;
}

int drain_kstat_cpus(const char *path, struct drain_kstat_cpu *v,
		     unsigned int n, bool *stopped)
{
	char line[256], state[32];
	unsigned long long t, w, d, b, p, r;
	unsigned int i, hint = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	*stopped = false;
	for (i = 0; i < n; i++) {
		v[i].found = false;
		v[i].has_pos = false;
	}
	while (fgets(line, sizeof(line), f)) {
		struct drain_kstat_cpu *e;
		char name[24];
		int k;

		if (sscanf(line, "state %31s", state) == 1) {
			*stopped = !strcmp(state, "stopped");
			continue;
		}
		k = sscanf(line, "%23s taken %llu written %llu dropped %llu "
			   "bytes %llu published %llu read %llu", name, &t, &w,
			   &d, &b, &p, &r);
		if (k < 5 || !(e = find_cpu(v, n, name, &hint)))
			continue;
		e->found = true;
		e->bytes = b;
		e->has_pos = k == 7;
		e->read = k == 7 ? r : 0;
	}
	fclose(f);
	return 0;
}
