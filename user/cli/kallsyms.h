/* SPDX-License-Identifier: MIT */
/* Kernel text symbols from a /proc/kallsyms-format file. */
#ifndef SPULSE_KALLSYMS_H
#define SPULSE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;
	char *module;		/* NULL for the kernel image */
};

struct kallsyms {
	struct ksym *syms;	/* text symbols sorted by address */
	size_t n;
};

/* Load @path; 0 or a negative errno. Free with kallsyms_free() always. */
int kallsyms_load(const char *path, struct kallsyms *k);

/* Symbol with the greatest address <= @addr (binary search), or NULL. */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

void kallsyms_free(struct kallsyms *k);

#endif /* SPULSE_KALLSYMS_H */
