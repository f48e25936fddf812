// SPDX-License-Identifier: GPL-2.0
/* pde_data() (5.17+; PDE_DATA() before). */
#include <linux/proc_fs.h>

static __maybe_unused void *spulse_probe(const struct inode *inode)
{
	return pde_data(inode);
}
