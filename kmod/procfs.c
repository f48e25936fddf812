// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/spulse: the procfs twin of the debugfs directory spulse/, with the
 * same file names and semantics (control, stats, unwind, meta, cpuN), for
 * kernels in lockdown, where debugfs refuses every file that is writable
 * or has mmap (docs/KERNEL.md, "Lockdown"). Created at every load, next to
 * the debugfs directory: lockdown can be raised after the load, and a
 * reader may move from one directory to the other within a session. The
 * directory is 0555, the files root-only (0600 control and unwind, 0400
 * the rest). The relay files' twins are made by relay.c, in the directory
 * handed to it here.
 */
#include <linux/kernel.h>
#include <linux/proc_fs.h>

#include "spulse.h"
#include "procfs.h"
#include "relay.h"

static struct proc_dir_entry *spulse_procfs_dir;
/* the files of spulse_procfs_file(): control, stats, unwind */
static struct proc_dir_entry *spulse_procfs_files[4];

/**
 * spulse_procfs_init() - create /proc/spulse
 *
 * Description: before the relay channels are opened: relay.c gives their buffer files
 * twins here from then on.
 *
 * Return: 0 or -ENOMEM (also when /proc/spulse exists already).
 */
int spulse_procfs_init(void)
{
	spulse_procfs_dir = proc_mkdir_mode(SPULSE_NAME, 0555, NULL);
	if (!spulse_procfs_dir)
		return -ENOMEM;
	spulse_relay_set_proc_dir(spulse_procfs_dir, "/proc/" SPULSE_NAME);
	return 0;
}

/**
 * spulse_procfs_file() - create a file in /proc/spulse
 * @name: its name (as in the debugfs directory)
 * @mode: its mode (0600 or 0400: root only)
 * @ops: its operations (no module reference is taken while it is open:
 *	spulse_procfs_exit() waits for calls in flight and releases open
 *	files, whose later calls fail with EIO)
 *
 * Return: 0, -ENOENT (no directory) or -ENOMEM.
 */
int spulse_procfs_file(const char *name, umode_t mode,
		       const struct proc_ops *ops)
{
	struct proc_dir_entry *pde;
	unsigned int i;

	if (!spulse_procfs_dir)
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(spulse_procfs_files); i++)
		if (!spulse_procfs_files[i])
			break;
	if (i == ARRAY_SIZE(spulse_procfs_files))
		return -ENOSPC;
	pde = proc_create(name, mode, spulse_procfs_dir, ops);
	if (!pde)
		return -ENOMEM;
	spulse_procfs_files[i] = pde;
	return 0;
}

/**
 * spulse_procfs_close() - remove the files of spulse_procfs_file()
 *
 * First thing at unload (before sampling is stopped for good): unlike the
 * debugfs files, whose open pins the module, these can be written to
 * until they are gone. proc_remove() waits for the calls in flight and
 * releases the open files. Again later: nothing.
 */
void spulse_procfs_close(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(spulse_procfs_files); i++) {
		proc_remove(spulse_procfs_files[i]);
		spulse_procfs_files[i] = NULL;
	}
}

/**
 * spulse_procfs_exit() - remove /proc/spulse
 *
 * After spulse_procfs_close() and after the relay channels are closed
 * (which removed their twins).
 */
void spulse_procfs_exit(void)
{
	spulse_procfs_close();
	spulse_relay_set_proc_dir(NULL, NULL);
	proc_remove(spulse_procfs_dir);
	spulse_procfs_dir = NULL;
}
