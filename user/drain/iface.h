/* SPDX-License-Identifier: MIT */
/*
 * Which directory holds the module's files (iface.c): debugfs spulse/ or
 * its procfs twin /proc/spulse, which kernel lockdown does not refuse
 * (docs/KERNEL.md "Lockdown", docs/DRAIN.md).
 */
#ifndef SPULSE_DRAIN_IFACE_H
#define SPULSE_DRAIN_IFACE_H

#define DRAIN_PROCFS_DIR	"/proc/spulse"

/**
 * drain_iface_pick() - the directory to read the module's files from
 * @dir: the debugfs directory asked for (--debugfs, or the default)
 * @why: set to why @dir was not taken (a static string: "kernel lockdown"
 *	or "no debugfs directory"), or NULL when it was; may be NULL
 *
 * @dir, unless opening DIR/control is refused with EPERM (kernel lockdown:
 * debugfs refuses every writable or mmap file) or, for the default
 * directory only, DIR/control does not exist (debugfs not mounted), and
 * /proc/spulse/control opens: then /proc/spulse. Anything else (a
 * directory of test stand-ins, no module at all) keeps @dir, whose errors
 * are then reported as before.
 *
 * Return: @dir or DRAIN_PROCFS_DIR.
 */
const char *drain_iface_pick(const char *dir, const char **why);

/* "procfs" for DRAIN_PROCFS_DIR, else "debugfs": for --verbose lines. */
const char *drain_iface_name(const char *dir);

#endif
