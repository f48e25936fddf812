/* SPDX-License-Identifier: MIT */
/* Kernel text symbols from a /proc/kallsyms-format file. */
#ifndef SPULSE_KALLSYMS_H
#define SPULSE_KALLSYMS_H

#include <stdbool.h>
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
/* Parse @len bytes of /proc/kallsyms text (copied) into @k. */
int kallsyms_parse(const char *text, size_t len, struct kallsyms *k);

/*
 * The kernel symbol sidecar of a merged spool of several boots (spulse
 * merge, docs/FLEET.md): a first line starting with KALLSYMS_MERGED_MAGIC,
 * then sections, each a line "#frames LO-HI[ LO-HI...]" (decimal frame ids
 * of the spool, inclusive) followed by the /proc/kallsyms lines that name
 * those frames. Any other file is one section for every frame.
 */
#define KALLSYMS_MERGED_MAGIC	"#spulse-kallsyms"
#define KALLSYMS_FRAMES_LINE	"#frames "

struct kallsyms_range {
	uint32_t lo, hi;	/* frame ids, inclusive */
};

struct kallsyms_section {
	const char *text;	/* /proc/kallsyms lines, inside the file */
	size_t len;
	struct kallsyms_range *ranges;	/* none: every frame (plain file) */
	size_t nranges;
};

struct kallsyms_file {
	char *buf;
	size_t len;
	struct kallsyms_section *secs;
	size_t nsecs;
	bool merged;		/* the sectioned form */
};

/* Read @path (regular files only: -EINVAL) into sections; 0 or a negative
 * errno (-EINVAL also for a malformed "#frames" line). Free always. */
int kallsyms_file_read(const char *path, struct kallsyms_file *f);
void kallsyms_file_free(struct kallsyms_file *f);

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

void kallsyms_free(struct kallsyms *k);

#endif /* SPULSE_KALLSYMS_H */
