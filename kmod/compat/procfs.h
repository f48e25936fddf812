/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: procfs.
 *
 * spulse_pde_data() - the data a proc entry was created with, from its
 *	inode: pde_data() since 5.17, PDE_DATA() before.
 */
#ifndef SPULSE_COMPAT_PROCFS_H
#define SPULSE_COMPAT_PROCFS_H

#include <linux/proc_fs.h>

#include "features.h"

#ifdef SPULSE_HAVE_PDE_DATA
#define spulse_pde_data(inode) pde_data(inode)
#else
#define spulse_pde_data(inode) PDE_DATA(inode)
#endif

#endif /* SPULSE_COMPAT_PROCFS_H */
