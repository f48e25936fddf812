/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: scheduler tracepoint probes and task states.
 *
 * Tracepoint probes are registered with tracepoint_probe_register(), which
 * does not check the probe's parameters: a prototype that differs from the
 * kernel's TP_PROTO would read garbage, or trap under kCFI. So the probe
 * functions are defined here, with the parameter list the probes found in
 * the target's <trace/events/sched.h>, and each is checked against it with
 * check_trace_callback_type_<event>() (a mismatch is a compiler
 * diagnostic). They call the module's handler with one parameter list on
 * every kernel.
 */
#ifndef SPULSE_COMPAT_SCHED_H
#define SPULSE_COMPAT_SCHED_H

#include <linux/compiler.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <trace/events/sched.h>

#include "features.h"

/**
 * spulse_task_state_now() - @p's state word as it is now
 * @p: the task
 *
 * Return: the state (->__state, or ->state before 5.14).
 */
static __always_inline unsigned int spulse_task_state_now(struct task_struct *p)
{
#ifdef SPULSE_HAVE_TASK___STATE
	return READ_ONCE(p->__state);
#else
	return READ_ONCE(p->state);
#endif
}

/**
 * spulse_task_state_index() - index of a switched-out task's state
 * @p: the task
 * @state: its state word at the switch (sched_switch's prev_state, or
 *	spulse_task_state_now() on kernels without it)
 *
 * Return: the TASK_REPORT index (0 running, 1 S, 2 D, ...) as the kernel's
 * own sched_switch event reports it. Without __task_state_index()
 * (before 5.18) task_state_index() reads @p's state again, which inside the
 * sched_switch probe is the @state read just before.
 */
static __always_inline unsigned int
spulse_task_state_index(struct task_struct *p, unsigned int state)
{
#ifdef SPULSE_HAVE_TASK_STATE_INDEX_OF
	return __task_state_index(state, p->exit_state);
#else
	return task_state_index(p);
#endif
}

/**
 * spulse_task_runnable() - a switched-out task stays runnable
 * @p: the task (prev of a sched_switch)
 *
 * On the runqueue and not a delayed dequeue: EEVDF (6.12+) can keep a task
 * that went to sleep on the runqueue with se.sched_delayed set, so on_rq
 * alone would call that sleep runnable.
 *
 * Return: true when @p is still runnable.
 */
static __always_inline bool spulse_task_runnable(struct task_struct *p)
{
#if defined(SPULSE_HAVE_TASK_IS_RUNNABLE)
	return task_is_runnable(p);
#elif defined(SPULSE_HAVE_SCHED_DELAYED)
	return READ_ONCE(p->on_rq) && !READ_ONCE(p->se.sched_delayed);
#else
	return READ_ONCE(p->on_rq);
#endif
}

/*
 * SPULSE_TP_TYPECHECK(event, fn) - a compiler diagnostic unless @fn's
 * prototype is what the target's tracepoint @event calls.
 */
#define SPULSE_TP_TYPECHECK(event, fn)					\
static inline void __maybe_unused fn##_typecheck_##event(void)		\
{									\
	check_trace_callback_type_##event(fn);				\
}

/*
 * SPULSE_SCHED_SWITCH_PROBE(name, fn) - define the sched_switch probe
 * @name calling
 *	void fn(bool preempt, struct task_struct *prev,
 *		struct task_struct *next, unsigned int prev_state)
 * Before 5.18 sched_switch has no prev_state: @fn gets prev's state read
 * in the probe (spulse_task_state_now()), which is what those kernels' own
 * sched_switch event reports (docs/KERNEL.md, "Kernel compatibility").
 */
#ifdef SPULSE_HAVE_SCHED_SWITCH_PREV_STATE
#define SPULSE_SCHED_SWITCH_PROBE(name, fn)				\
static void name(void *data, bool preempt, struct task_struct *prev,	\
		 struct task_struct *next, unsigned int prev_state)	\
{									\
	fn(preempt, prev, next, prev_state);				\
}									\
SPULSE_TP_TYPECHECK(sched_switch, name)
#else
#define SPULSE_SCHED_SWITCH_PROBE(name, fn)				\
static void name(void *data, bool preempt, struct task_struct *prev,	\
		 struct task_struct *next)					\
{									\
	fn(preempt, prev, next, spulse_task_state_now(prev));		\
}									\
SPULSE_TP_TYPECHECK(sched_switch, name)
#endif

/*
 * SPULSE_SCHED_PROCESS_EXIT_PROBE(name, fn) - define the
 * sched_process_exit probe @name calling void fn(struct task_struct *p)
 * (7.x adds a group_dead parameter, unused here).
 */
#ifdef SPULSE_HAVE_SCHED_PROCESS_EXIT_GROUP_DEAD
#define SPULSE_SCHED_PROCESS_EXIT_PROBE(name, fn)			\
static void name(void *data, struct task_struct *p, bool group_dead)	\
{									\
	fn(p);								\
}									\
SPULSE_TP_TYPECHECK(sched_process_exit, name)
#else
#define SPULSE_SCHED_PROCESS_EXIT_PROBE(name, fn)			\
static void name(void *data, struct task_struct *p)			\
{									\
	fn(p);								\
}									\
SPULSE_TP_TYPECHECK(sched_process_exit, name)
#endif

#endif /* SPULSE_COMPAT_SCHED_H */
