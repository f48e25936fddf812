// SPDX-License-Identifier: MIT
/*
 * The module's interface: debugfs spulse/ or /proc/spulse (iface.h).
 * Both hold the same files with the same semantics, so only the directory
 * differs; the choice is made once, here, by opening DIR/control.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "iface.h"

/* 0 when DIR/control opens for reading, else the errno. */
static int control_opens(const char *dir)
{
	char *path;
	int fd, err;

	if (asprintf(&path, "%s/control", dir) < 0)
		return ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	free(path);
	if (fd >= 0)
		close(fd);
	return err;
}

const char *drain_iface_pick(const char *dir, const char **why)
{
	const char *reason;
	int err;

	if (why)
		*why = NULL;
	err = control_opens(dir);
	if (err == EPERM)
		reason = "kernel lockdown";
	else if ((err == ENOENT || err == ENOTDIR) &&
		 !strcmp(dir, DRAIN_DEFAULT_DEBUGFS))
		reason = "no debugfs directory";
	else
		return dir;
	if (control_opens(DRAIN_PROCFS_DIR))
		return dir;
	if (why)
		*why = reason;
	return DRAIN_PROCFS_DIR;
}

const char *drain_iface_name(const char *dir)
{
	return strcmp(dir, DRAIN_PROCFS_DIR) ? "debugfs" : "procfs";
}
