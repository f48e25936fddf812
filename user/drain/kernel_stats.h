/* SPDX-License-Identifier: MIT */
/* Read counters from the module's debugfs `stats` file. */
#ifndef SPULSE_DRAIN_KERNEL_STATS_H
#define SPULSE_DRAIN_KERNEL_STATS_H

#include <stdint.h>

/*
 * Value of the total line "@key N" in the stats file at @path.
 * Returns 0 and sets *val, -ENOENT if the key is absent, or -errno.
 */
int drain_kstat(const char *path, const char *key, int64_t *val);

#endif
