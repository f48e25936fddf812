/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: perf event attributes.
 */
#ifndef SPULSE_COMPAT_PERF_H
#define SPULSE_COMPAT_PERF_H

#include <linux/perf_event.h>

#include "features.h"

/**
 * spulse_attr_inherit_threads() - make @attr inherited by new threads
 * @attr: a task event's attributes
 *
 * With inherit_thread (5.13+) the copies follow threads only; without it
 * forked processes inherit the event as well (the handler filters their
 * samples out by tgid, their interrupts still cost).
 *
 * Return: true when only threads inherit.
 */
static inline bool spulse_attr_inherit_threads(struct perf_event_attr *attr)
{
	attr->inherit = 1;
#ifdef SPULSE_HAVE_PERF_INHERIT_THREAD
	attr->inherit_thread = 1;
	return true;
#else
	return false;
#endif
}

#endif /* SPULSE_COMPAT_PERF_H */
