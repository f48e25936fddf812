// SPDX-License-Identifier: GPL-2.0
/*
 * spulse.ko: module parameters, load-time validation, init and exit.
 * See docs/KERNEL.md for the design and docs/CONTRACTS.md for the debugfs
 * interface (and its procfs twin /proc/spulse, procfs.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched/task.h>

#include "spulse.h"
#include "compat.h"
#include "control.h"
#include "meta.h"
#include "offcpu.h"
#include "percpu.h"
#include "procfs.h"
#include "sample.h"
#include "stream.h"
#include "unwind.h"

struct spulse_state spulse;

static uint target_pid;
module_param(target_pid, uint, 0444);
MODULE_PARM_DESC(target_pid, "tgid to sample with all its threads (0 = whole system)");

static uint freq = 999;
module_param(freq, uint, 0444);
MODULE_PARM_DESC(freq, "sampling frequency in Hz (1..100000)");

static uint max_user_depth = 256;
module_param(max_user_depth, uint, 0444);
MODULE_PARM_DESC(max_user_depth, "user frames per sample (walk is cut and marked truncated beyond)");

static uint max_kernel_depth = 128;
module_param(max_kernel_depth, uint, 0444);
MODULE_PARM_DESC(max_kernel_depth, "kernel frames per sample (deeper samples are dropped)");

static uint max_depth;
module_param(max_depth, uint, 0444);
MODULE_PARM_DESC(max_depth, "if set, both max_user_depth and max_kernel_depth (each <= 511)");

static char *event = "cpu-clock";
module_param(event, charp, 0444);
MODULE_PARM_DESC(event, "cpu-clock (default), cycles (falls back to cpu-clock without a PMU) or bp (a hardware breakpoint: bp_symbol=)");

static char *events = "auto";
module_param(events, charp, 0444);
MODULE_PARM_DESC(events, "auto (task with target_pid, else cpu), cpu (one event per CPU) or task (inherited events on the target's threads)");

static ulong subbuf_size = 256 * 1024;
module_param(subbuf_size, ulong, 0444);
MODULE_PARM_DESC(subbuf_size, "relay sub-buffer size in bytes");

static ulong n_subbufs = 8;
module_param(n_subbufs, ulong, 0444);
MODULE_PARM_DESC(n_subbufs, "relay sub-buffers per CPU (2..1024)");

static bool autostart;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "start sampling at load");

static bool offcpu;
module_param(offcpu, bool, 0444);
MODULE_PARM_DESC(offcpu, "record off-CPU intervals with stacks and wakers (sched_switch/sched_waking)");

static uint offcpu_min_us = 5;
module_param(offcpu_min_us, uint, 0444);
MODULE_PARM_DESC(offcpu_min_us, "off-CPU intervals shorter than this are counted, not written (0 = all; <= 60000000)");

static uint offcpu_threads = 4096;
module_param(offcpu_threads, uint, 0444);
MODULE_PARM_DESC(offcpu_threads, "threads off CPU at the same time that can be tracked (64..65536; memory: see docs/KERNEL.md)");

static bool offcpu_phase_stats;
module_param(offcpu_phase_stats, bool, 0444);
MODULE_PARM_DESC(offcpu_phase_stats, "debug: time the phases of the off-CPU probes (phase_* keys in stats)");

static bool sample_phase_stats;
module_param(sample_phase_stats, bool, 0444);
MODULE_PARM_DESC(sample_phase_stats, "debug: time the phases of the sample handler (sample_phase_* keys in stats)");

static bool sample_null;
module_param(sample_null, bool, 0444);
MODULE_PARM_DESC(sample_null, "debug: the sample handler counts the interrupt (seen) and takes nothing: what the event alone costs");

static char *unwind = "auto";
module_param(unwind, charp, 0444);
MODULE_PARM_DESC(unwind, "user stacks: auto (tables where loaded, else frame pointers), fp or tables");

static uint unwind_mem_kb = 65536;
module_param(unwind_mem_kb, uint, 0444);
MODULE_PARM_DESC(unwind_mem_kb, "bound on unwind table and map memory in KiB (1..4194304)");

static int spulse_load_params(void)
{
	struct spulse_params *p = &spulse.p;
	const char *why = NULL;
	struct task_struct *task;
	u64 relay, ram;
	struct pid *pid;

	p->target_pid = target_pid;
	p->freq = freq;
	p->max_user_depth = max_user_depth;
	p->max_kernel_depth = max_kernel_depth;
	p->max_depth = max_depth;
	if (max_depth) {
		p->max_user_depth = max_depth;
		p->max_kernel_depth = max_depth;
	}
	p->subbuf_size = subbuf_size;
	p->n_subbufs = n_subbufs;
	p->autostart = autostart;
	p->offcpu = offcpu;
	p->offcpu_min_us = offcpu_min_us;
	p->offcpu_threads = offcpu_threads;
	p->offcpu_phase_stats = offcpu_phase_stats;
	p->sample_phase_stats = sample_phase_stats;
	p->sample_null = sample_null;
	p->unwind_mem_kb = unwind_mem_kb;
	if (spulse_parse_unwind(unwind ? unwind : "", &p->unwind)) {
		pr_err("invalid unwind=%s: must be auto, fp or tables\n", unwind);
		return -EINVAL;
	}
	if (spulse_parse_event(event ? event : "", &p->event)) {
		pr_err("invalid event=%s: must be cpu-clock, cycles or bp\n", event);
		return -EINVAL;
	}
	if (spulse_parse_events(events ? events : "", &p->events)) {
		pr_err("invalid events=%s: must be auto, cpu or task\n", events);
		return -EINVAL;
	}
	if (p->events == SPULSE_EVENTS_AUTO)
		p->events = p->target_pid ? SPULSE_EVENTS_TASK :
					    SPULSE_EVENTS_CPU;
	if (spulse_params_check(p, &why)) {
		pr_err("invalid parameters: %s\n", why);
		return -EINVAL;
	}
	/*
	 * relay allocates a buffer for every CPU that comes online (its
	 * CPUHP_RELAY_PREPARE step, GFP_KERNEL): a failure there vetoes the
	 * CPU, and a large total wakes the OOM killer. Bounded here for every
	 * possible CPU, at half the RAM.
	 */
	relay = spulse_relay_bytes(p, num_possible_cpus());
	ram = (u64)totalram_pages() << PAGE_SHIFT;
	if (relay > ram / 2) {
		pr_err("invalid subbuf_size * n_subbufs: relay buffers for %u possible CPUs would take %llu MiB, more than half the RAM (%llu MiB)\n",
		       num_possible_cpus(), relay >> 20, ram >> 20);
		return -EINVAL;
	}
	if (p->target_pid) {
		/*
		 * The number is the loader's view: find_get_pid() resolves it in
		 * the pid namespace of the task calling init_module (insmod in
		 * a container names a container pid). From here on the module
		 * holds the struct pid and compares pointers; target_pid keeps
		 * the global tgid for the streams and the numeric filters.
		 */
		pid = find_get_pid(p->target_pid);
		task = pid ? get_pid_task(pid, PIDTYPE_TGID) : NULL;
		if (!task) {
			pr_err("invalid target_pid=%u: %s\n", p->target_pid,
			       pid && pid_has_task(pid, PIDTYPE_PID) ?
			       "a thread, not a process (give its tgid)" :
			       "no such process");
			put_pid(pid);
			return -EINVAL;
		}
		put_task_struct(task);
		spulse.target = pid;
		spulse.target_vnr = p->target_pid;
		p->target_pid = pid_nr(pid);
	}
	spulse.interval_us = USEC_PER_SEC / p->freq;
	return 0;
}

static void spulse_teardown(void)
{
	spulse_procfs_close();	/* no more commands from there */
	spulse_sample_exit();
	spulse_offcpu_exit();
	spulse_procwatch_exit();
	spulse_meta_exit();
	spulse_stream_close();
	/* the relay files and their twins went with the channels */
	spulse_procfs_exit();
	debugfs_remove_recursive(spulse.dir);
	spulse.dir = NULL;
	/* queued only by the exit probe and stats, both gone now */
	cancel_work_sync(&spulse.target_work);
	spulse_unwind_exit();
	spulse_cpu_free();
	put_pid(spulse.target);
	spulse.target = NULL;
}

static int __init spulse_init(void)
{
	int r;

	mutex_init(&spulse.lock);
	INIT_WORK(&spulse.target_work, spulse_control_target_work);
	r = spulse_load_params();
	if (r)
		return r;
	r = spulse_cpu_alloc();
	if (r)
		goto fail;
	spulse.dir = debugfs_create_dir(SPULSE_NAME, NULL);
	if (IS_ERR(spulse.dir)) {
		r = PTR_ERR(spulse.dir);
		spulse.dir = NULL;
		goto fail;
	}
	r = spulse_procfs_init();
	if (r)
		goto fail;
	r = spulse_unwind_init();
	if (r)
		goto fail;
	r = spulse_stream_open();
	if (r)
		goto fail;
	r = spulse_meta_init();
	if (r)
		goto fail;
	spulse_procwatch_init();
	r = spulse_control_init();
	if (r)
		goto fail;
	r = spulse_offcpu_init();
	if (r)
		goto fail;
	r = spulse_sample_init();
	if (r)
		goto fail;
	if (spulse.p.autostart) {
		r = spulse_control_start();
		if (r == -ESRCH)
			pr_err("target_pid=%u exited before autostart\n",
			       spulse.target_vnr);
		if (r)
			goto fail;
	}
	spulse_compat_report();
	if (spulse_debugfs_locked_down())
		pr_info("kernel lockdown: debugfs refuses control, unwind, meta and cpuN; use /proc/%s (docs/KERNEL.md \"Lockdown\")\n",
			SPULSE_NAME);
	if (spulse.target && spulse.target_vnr != spulse.p.target_pid)
		pr_info("target_pid=%u in the loader's pid namespace is tgid %u\n",
			spulse.target_vnr, spulse.p.target_pid);
	pr_info("loaded: target_pid=%u freq=%u event=%s events=%s offcpu=%d unwind=%s\n",
		spulse.p.target_pid, spulse.p.freq,
		spulse_event_name(spulse.p.event),
		spulse_events_name(spulse.p.events), spulse.p.offcpu,
		spulse_unwind_name(spulse.p.unwind));
	return 0;
fail:
	pr_err("load failed: %d\n", r);
	spulse_teardown();
	return r;
}

static void __exit spulse_exit(void)
{
	spulse_procfs_close();	/* no start after this stop */
	spulse_control_stop();
	spulse_teardown();
	pr_info("unloaded\n");
}

module_init(spulse_init);
module_exit(spulse_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("spulse: sampling profiler recorder writing SPULSE streams");
MODULE_AUTHOR("spulse authors");
