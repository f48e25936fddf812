// SPDX-License-Identifier: GPL-2.0
/*
 * perf_event_attr.inherit_thread (5.13+): an inherited event follows new
 * threads (clone with CLONE_THREAD) but not forked processes.
 */
#include <linux/perf_event.h>

static __maybe_unused void spulse_probe(struct perf_event_attr *attr)
{
	attr->inherit_thread = 1;
}
