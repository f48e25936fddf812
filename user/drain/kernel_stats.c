// SPDX-License-Identifier: MIT
/*
 * Parse the debugfs stats file: one "key value" per line, then per-CPU
 * lines "cpuN taken W written X dropped Y bytes B [published P read R]"
 * (drain_kstat() skips them, drain_kstat_cpu_bytes() and
 * drain_kstat_relay_read() read them).
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

int drain_kstat_cpu_bytes(const char *path, int cpu, uint64_t *bytes,
			  bool *stopped)
{
	char line[256], want[24], state[32];
	unsigned long long t, w, d, b;
	int ret = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	*stopped = false;
	snprintf(want, sizeof(want), "cpu%d", cpu);
	while (fgets(line, sizeof(line), f)) {
		char name[24];

		if (sscanf(line, "state %31s", state) == 1) {
			*stopped = !strcmp(state, "stopped");
			continue;
		}
		if (sscanf(line, "%23s taken %llu written %llu dropped %llu "
			   "bytes %llu", name, &t, &w, &d, &b) == 5 &&
		    !strcmp(name, want)) {
			*bytes = b;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

int drain_kstat_relay_read(const char *path, int cpu, uint64_t *read)
{
	char line[256], want[24];
	unsigned long long t, w, d, b, p, r;
	int ret = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "cpu%d", cpu);
	while (ret && fgets(line, sizeof(line), f)) {
		char name[24];

		if (cpu < 0) {
			if (sscanf(line, "meta_read %llu", &r) == 1) {
				*read = r;
				ret = 0;
			}
			continue;
		}
		if (sscanf(line, "%23s taken %llu written %llu dropped %llu "
			   "bytes %llu published %llu read %llu", name, &t, &w,
			   &d, &b, &p, &r) == 7 && !strcmp(name, want)) {
			*read = r;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}
