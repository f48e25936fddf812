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

/**
 * struct drain_kstat_cpu - one CPU's line of the stats file
 * @cpu: the CPU asked for (set by the caller)
 * @found: its line "cpuN taken W written X dropped Y bytes B ..." is there
 * @bytes: B, what the module wrote into cpuN's relay buffer
 * @has_pos: the line ends "published P read R" (a module that has them,
 *           with a consistent reading)
 * @read: R, where cpuN's unread bytes begin (0 without @has_pos)
 */
struct drain_kstat_cpu {
	int cpu;
	bool found;
	uint64_t bytes;
	bool has_pos;
	uint64_t read;
};

/*
 * One read of the stats file at @path for the @n CPUs of @v (each @cpu
 * set); *stopped = the "state" line says stopped. Returns 0 or -errno.
 */
int drain_kstat_cpus(const char *path, struct drain_kstat_cpu *v,
		     unsigned int n, bool *stopped);

#endif
