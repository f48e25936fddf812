/* SPDX-License-Identifier: MIT */
/*
 * The module's count of cut user stacks by cause (stats keys ustack_cut_*,
 * docs/KERNEL.md "User unwinding"): every sample or off-CPU capture whose
 * user stack ends in the truncated marker, under one cause each. Read from
 * DIR/stats while the module is loaded (drain_stats.c); the text is a
 * fragment of `spulse record`'s summary and of spulse-drain's last lines.
 */
#ifndef SPULSE_DRAIN_UCUT_H
#define SPULSE_DRAIN_UCUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The causes, in the order the text names them. */
enum drain_ucut_cause {
	DRAIN_UCUT_NO_TABLE_YET,	/* ustack_cut_no_table_yet */
	DRAIN_UCUT_NO_TABLE,		/* ustack_cut_no_table */
	DRAIN_UCUT_NO_ROW,		/* ustack_cut_no_row */
	DRAIN_UCUT_TABLE_UNKNOWN,	/* ustack_cut_table_unknown */
	DRAIN_UCUT_DEPTH,		/* ustack_cut_depth */
	DRAIN_UCUT_UNREADABLE,		/* ustack_cut_unreadable */
	DRAIN_UCUT_BAD_FRAME,		/* ustack_cut_bad_frame */
	DRAIN_UCUT_COMPAT32,		/* ustack_cut_compat32 */
	DRAIN_UCUT_NR
};

/** Cut user stacks by cause, as the module counted them. */
struct drain_ucut {
	bool known;			/* the module has every key */
	uint64_t n[DRAIN_UCUT_NR];
};

struct drain;

/* The stats key of @c ("ustack_cut_no_table_yet", ...). */
const char *drain_ucut_key(enum drain_ucut_cause c);
/* Its words in the summary ("no table yet", ...). */
const char *drain_ucut_words(enum drain_ucut_cause c);
/* Read the counts from the session's DIR/stats (known = false without). */
void drain_ucut_read(struct drain *d, struct drain_ucut *u);
/* The same from a stats file (tests, tools). */
void drain_ucut_read_file(const char *stats_path, struct drain_ucut *u);
/*
 * The summary fragment: "" when unknown or none was cut, else
 * ", user stacks cut N (no table yet A, table says unknown B)" naming the
 * causes with a non-zero count; DRAIN_UCUT_TEXT_MAX bytes always hold it.
 * A shorter @buf gets ", user stacks cut N", or "" when even that does not
 * fit. Returns @buf (NUL-terminated when @len > 0).
 */
#define DRAIN_UCUT_TEXT_MAX	512
const char *drain_ucut_text(const struct drain_ucut *u, char *buf,
			    size_t len);

#endif /* SPULSE_DRAIN_UCUT_H */
