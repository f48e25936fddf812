/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The procfs twin of the debugfs directory (procfs.c): /proc/spulse with
 * the same files and semantics, which kernel lockdown does not refuse
 * (docs/KERNEL.md, "Lockdown").
 */
#ifndef SPULSE_KMOD_PROCFS_H
#define SPULSE_KMOD_PROCFS_H

#include <linux/proc_fs.h>
#include <linux/types.h>

int spulse_procfs_init(void);
int spulse_procfs_file(const char *name, umode_t mode,
		       const struct proc_ops *ops);
void spulse_procfs_close(void);
void spulse_procfs_exit(void);

#endif /* SPULSE_KMOD_PROCFS_H */
