// SPDX-License-Identifier: MIT
/*
 * The recorder's own memory out of transparent huge pages (thp.h).
 *
 * On a kernel whose THP mode is "always" (Debian's), a fault in a 2 MiB
 * stretch of a large anonymous mapping takes a whole huge page, and
 * khugepaged collapses any stretch that holds one touched page, each
 * clearing or copying 512 pages on the profiled machine while it records.
 * Seen in the bench VM: the recorder's brk heap and a large malloc'd
 * mapping (docs/DRAIN.md "The recorder's memory and THP"): growing
 * allocations of their own, so the recorder opts out as a whole, before
 * it allocates anything large, rather than madvise() one buffer; its
 * children that exec the user's command put the flag back.
 */
#include <sys/prctl.h>

#include "thp.h"

bool drain_thp_disable(void)
{
	/* 0: not set (THP as the system says); 1 or more: set already;
	 * -1: no such prctl (before 3.15) */
	if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 0)
		return false;
	return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
}

void drain_thp_child_restore(bool changed)
{
	if (changed)
		(void)prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
}
