/* SPDX-License-Identifier: MIT */
/* Read counters from the module's debugfs `stats` file. */
#ifndef SPULSE_DRAIN_KERNEL_STATS_H
#define SPULSE_DRAIN_KERNEL_STATS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Value of the total line "@key N" in the stats file at @path.
 * Returns 0 and sets *val, -ENOENT if the key is absent, or -errno.
 */
int drain_kstat(const char *path, const char *key, int64_t *val);

/*
 * From the per-CPU line "cpuN taken W written X dropped Y bytes B" of the
 * stats file at @path: *bytes = B (what the module wrote into cpuN's relay
 * buffer) and *stopped = the "state" line says stopped. Returns 0,
 * -ENOENT if there is no such line or it has no bytes field (an older
 * module), or -errno.
 */
int drain_kstat_cpu_bytes(const char *path, int cpu, uint64_t *bytes,
			  bool *stopped);

/*
 * Where a relay file's unread bytes begin: "read R" of the line for
 * @cpu ("cpuN ... published P read R"), or the line "meta_read R" for
 * @cpu < 0. Returns 0 and sets *read, -ENOENT if absent (an older module,
 * or no consistent reading), or -errno.
 */
int drain_kstat_relay_read(const char *path, int cpu, uint64_t *read);

#endif
