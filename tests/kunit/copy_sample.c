// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/sample.c compiled into spulse_kunit.ko (see kmod_noexport.h), plus
 * entry points to its static sample path for the sampler suite.
 */
#include "kmod_noexport.h"
#include "../../kmod/sample.c"

#include "kmod_copy.h"

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
