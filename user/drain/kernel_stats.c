// SPDX-License-Identifier: MIT
/*
 * Parse the debugfs stats file: one "key value" per line, then per-CPU
 * lines "cpuN taken W written X dropped Y" which are skipped here.
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
