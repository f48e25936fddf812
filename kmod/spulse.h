/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spulse.ko's per-session state: struct spulse_state and its one instance
 * (main.c owns it). Each concern has its own header (params.h, intern.h,
 * encoder.h, offcpu.h, ustack.h, unwind.h, kstack.h, buildid.h, relay.h,
 * percpu.h, stream.h, sample.h, meta.h, control.h); the pure pieces take
 * all their state as arguments so KUnit can drive them. See
 * docs/KERNEL.md.
 */
#ifndef SPULSE_KMOD_H
#define SPULSE_KMOD_H

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "params.h"
#include "offcpu.h"

#define SPULSE_NAME		"spulse"

struct dentry;
struct pid;
struct rchan;
struct spulse_cpu;
struct spulse_tev;

/**
 * struct spulse_state - the module's global state
 * @p: validated parameters
 * @cpu: per-CPU state
 * @lock: serializes control operations and hotplug callbacks
 * @running: events enabled
 * @started: a session start time has been taken
 * @start_us: realtime µs at session start
 * @start_mono: ktime_get_mono_fast_ns() at session start
 * @interval_us: 1e6 / freq
 * @chan: the cpuN relay channel (stream.c)
 * @dir: debugfs directory
 * @cpuhp_state: dynamic hotplug state (events, sample.c)
 * @cpuhp_prepare: dynamic hotplug prepare state (per-CPU memory, percpu.c)
 * @cpuhp_fixups: online CPUs whose prepare callback the kernel did not run
 *	at load, run by spulse.ko (compat/cpuhp.h)
 * @cpu_loading: the prepare state is being set up (a failure fails the load)
 * @cpus_no_state: CPUs that came online without sampler state (no memory)
 * @percpu_bytes: bytes of per-CPU encoder state allocated
 * @ev_loading: the event state is being set up (a failure fails the load)
 * @cpus_no_event: CPUs that came online but got no perf event
 * @tev: events=task: the events created at start, one per target thread
 *	(sample.c; NULL when none)
 * @ntev: entries of @tev
 * @task_events: task events created at the last start
 * @task_events_failed: threads that got no task event at the last start
 *	(over SPULSE_TASK_EVENTS_MAX, or creation failed)
 * @ev_type: perf type actually used
 * @ev_config: perf config actually used
 * @oc: off-CPU slot table (offcpu=1)
 * @oc_on: off-CPU recording is on (the probes' gate is open)
 * @offcpu_open_at_stop: intervals still open when recording stopped
 * @early_at_stop: early wakeups still pending when recording stopped
 * @target: the target's struct pid (target_pid != 0), a reference held from
 *	load to unload; the sampler compares task_tgid(current) with it, so a
 *	later process reusing the number is never sampled
 * @target_vnr: target_pid as given, in the loader's pid namespace
 * @target_exited: the target exited; sampling was stopped, start refused
 * @target_work: stops sampling once the target exited (process context)
 */
struct spulse_state {
	struct spulse_params p;
	struct spulse_cpu __percpu *cpu;
	struct mutex lock;
	bool running;
	bool started;
	u64 start_us;
	u64 start_mono;
	u64 interval_us;
	struct rchan *chan;
	struct dentry *dir;
	int cpuhp_state;
	int cpuhp_prepare;
	u32 cpuhp_fixups;
	bool cpu_loading;
	u32 cpus_no_state;
	u64 percpu_bytes;
	bool ev_loading;
	u32 cpus_no_event;
	struct spulse_tev *tev;
	u32 ntev;
	u32 task_events;
	u32 task_events_failed;
	u32 ev_type;
	u64 ev_config;
	struct spulse_oc_table oc;
	bool oc_on;
	u64 offcpu_open_at_stop;
	u64 early_at_stop;
	struct pid *target;
	u32 target_vnr;
	bool target_exited;
	struct work_struct target_work;
};

extern struct spulse_state spulse;

#endif /* SPULSE_KMOD_H */
