/* SPDX-License-Identifier: GPL-2.0 */
/* The stats file's text (stats.c). */
#ifndef SPULSE_KMOD_STATS_H
#define SPULSE_KMOD_STATS_H

struct seq_file;

int spulse_stats_show(struct seq_file *m, void *v);

#endif /* SPULSE_KMOD_STATS_H */
