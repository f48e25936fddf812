/* SPDX-License-Identifier: MIT */
/* Kernel text symbols from a /proc/kallsyms-format file. */
#ifndef SPULSE_KALLSYMS_H
#define SPULSE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;		/* inside kallsyms.buf */
	char *module;		/* NULL for the kernel image; inside .buf */
};

struct kallsyms {
	struct ksym *syms;	/* text symbols sorted by address */
	size_t n;
	char *buf;		/* the file; names point into it */
	uint64_t stext, etext;	/* _stext/_etext of the image, 0 unknown */
};

/* How far past the last symbol of a kernel module (or of the kernel image,
 * when the file has no _etext) an address may lie and still belong to it. */
#define KSYM_TAIL_MAX	0x100000ULL

/* Load @path (opened O_NONBLOCK; -EINVAL when not a regular file): read
 * whole, parsed in place, sorted only when the file is not (merge of its
 * ascending runs). 0 or a negative errno. Free with kallsyms_free() always. */
int kallsyms_load(const char *path, struct kallsyms *k);

/*
 * Symbol with the greatest address <= @addr (binary search), or NULL when
 * the address is outside every text range: before the first symbol, in the
 * kernel image at or past _etext (when the symbol is before it), or more
 * than KSYM_TAIL_MAX past the last symbol of a module or of the image.
 */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

void kallsyms_free(struct kallsyms *k);

#endif /* SPULSE_KALLSYMS_H */
