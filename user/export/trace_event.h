/* SPDX-License-Identifier: MIT */
/* spulse export --format trace-event (Chrome / Perfetto JSON). */
#ifndef SPULSE_TRACE_EVENT_H
#define SPULSE_TRACE_EVENT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/profile.h"

/**
 * export_trace_event() - write the trace-event JSON object of @p to @f
 * @p: opened profile (pid/state filters apply)
 * @f: output
 * @running: also "running" slices between a thread's intervals
 *
 * Return: exit code.
 */
int export_trace_event(struct profile *p, FILE *f, bool running);

#endif /* SPULSE_TRACE_EVENT_H */
