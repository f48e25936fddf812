// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/sample.c compiled into spulse_kunit.ko (see kmod_noexport.h), plus
 * entry points to its static sample path for the sampler suite. Its perf
 * event creation goes through spulse_kunit_create_counter(), which fails
 * on demand (spulse_kunit_event_fail) so the hotplug path can be tested.
 */
#include "kmod_noexport.h"
#include <linux/perf_event.h>

#define perf_event_create_kernel_counter spulse_kunit_create_counter
struct perf_event *
spulse_kunit_create_counter(struct perf_event_attr *attr, int cpu,
			    struct task_struct *task,
			    perf_overflow_handler_t callback, void *context);
#include "../../kmod/sample.c"
#undef perf_event_create_kernel_counter

#include "kmod_copy.h"

atomic_t spulse_kunit_event_fail = ATOMIC_INIT(0);

/*
 * perf_event_create_kernel_counter(), or -ENODEV while
 * spulse_kunit_event_fail is set (counted down once per failure).
 */
struct perf_event *
spulse_kunit_create_counter(struct perf_event_attr *attr, int cpu,
			    struct task_struct *task,
			    perf_overflow_handler_t callback, void *context)
{
	if (atomic_add_unless(&spulse_kunit_event_fail, -1, 0))
		return ERR_PTR(-ENODEV);
	return perf_event_create_kernel_counter(attr, cpu, task, callback,
						context);
}

/**
 * spulse_kunit_take() - run the sampler's per-sample path on this CPU
 * @regs: the "interrupted" registers
 *
 * Exactly what the perf overflow handler does once it decided to sample
 * (spulse.running is not consulted). Call with interrupts disabled, as the
 * handler runs.
 */
void spulse_kunit_take(struct pt_regs *regs)
{
	spulse_take(this_cpu_ptr(spulse.cpu), regs);
}

/**
 * spulse_kunit_throttle() - the handler's throttle accounting on this CPU
 * @event: the "overflowing" event (its hw.interrupts is what counts)
 *
 * Call with interrupts disabled.
 */
void spulse_kunit_throttle(struct perf_event *event)
{
	spulse_throttle_account(this_cpu_ptr(spulse.cpu), event);
}
