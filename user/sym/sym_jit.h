/* SPDX-License-Identifier: MIT */
/* JIT symbols from perf map files ("START SIZE name" per line, hex). */
#ifndef SPULSE_SYM_JIT_H
#define SPULSE_SYM_JIT_H

#include <stddef.h>
#include <stdint.h>

struct jit_sym {
	uint64_t start, size;
	char *name;
};

/** The symbols of one /tmp/perf-PID.map-format file. */
struct jit_map {
	uint32_t pid;
	char *path;		/* the file read (for messages and the dso) */
	struct jit_sym *syms;	/* sorted by start */
	size_t n;
};

/**
 * jit_map_load() - read a perf map file
 * @path: the file; opened with O_NONBLOCK, regular files only
 * @pid: the process it belongs to
 * @out: filled; free with jit_map_free() even on failure
 *
 * Lines that do not parse ("START SIZE name", START and SIZE hex with or
 * without 0x, SIZE > 0) are skipped; a later line for the same range wins
 * (a JIT reuses code memory), as perf does.
 *
 * Return: number of symbols, or a negative errno.
 */
long jit_map_load(const char *path, uint32_t pid, struct jit_map *out);

/* Symbol whose [start, start + size) holds @addr, or NULL. */
const struct jit_sym *jit_map_lookup(const struct jit_map *m, uint64_t addr);

void jit_map_free(struct jit_map *m);

#endif /* SPULSE_SYM_JIT_H */
