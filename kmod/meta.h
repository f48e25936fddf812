/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The meta stream (meta.c: module maps, build-ids, process events into the
 * global relay file "meta"; procwatch.c: the exec/exit tracepoints that
 * feed it) and the module spans the sampler checks addresses against
 * (pure lookup over a sorted array).
 */
#ifndef SPULSE_KMOD_META_H
#define SPULSE_KMOD_META_H

#include <linux/types.h>

struct spulse_span {
	u32 pid;
	u64 start;
	u64 end;
};

bool spulse_span_lookup(const struct spulse_span *s, u32 n, u32 pid, u64 addr);
void spulse_span_sort(struct spulse_span *s, u32 n);

int spulse_meta_init(void);
void spulse_meta_exit(void);
void spulse_meta_start(void);
void spulse_meta_stop(void);
void spulse_meta_kick(void);
void spulse_meta_flush(void);
void spulse_meta_process_event(u32 pid);

/* procwatch.c */
void spulse_procwatch_init(void);
void spulse_procwatch_exit(void);
bool spulse_meta_known(u32 pid, u64 addr);
u64 spulse_meta_bytes(void);
u64 spulse_meta_dropped(void);
struct seq_file;
void spulse_meta_stats_show(struct seq_file *m);
void spulse_meta_position_show(struct seq_file *m);

#endif /* SPULSE_KMOD_META_H */
