// SPDX-License-Identifier: GPL-2.0
/*
 * Exec and exit notification for the meta stream: probes on the
 * sched_process_exec and sched_process_exit tracepoints (found with
 * for_each_kernel_tracepoint(), they are not exported) ask the meta worker
 * for an immediate rescan, which then emits the process deactivation (see
 * meta.c). Without the tracepoints the periodic rescan still finds them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "spulse.h"
#include "control.h"
#include "meta.h"
#include "unwind.h"
#include "compat/sched.h"

struct spulse_tps {
	struct tracepoint *exec;
	struct tracepoint *exit;
};

static struct spulse_tps spulse_tp;
static bool spulse_exec_on, spulse_exit_on;

static void spulse_find_tp(struct tracepoint *tp, void *priv)
{
	struct spulse_tps *t = priv;

	if (!strcmp(tp->name, "sched_process_exec"))
		t->exec = tp;
	else if (!strcmp(tp->name, "sched_process_exit"))
		t->exit = tp;
}

static void spulse_proc_event(struct task_struct *p)
{
	u32 tgid = task_tgid_nr(p);

	/* the image its unwind maps describe is gone (any process) */
	spulse_ut_mark_dead(&spulse_ut, tgid);
	if (spulse.p.target_pid && tgid != spulse.p.target_pid)
		return;
	spulse_meta_process_event(tgid);
}

static void spulse_probe_exec(void *data, struct task_struct *p,
			      pid_t old_pid, struct linux_binprm *bprm)
{
	spulse_proc_event(p);
}
SPULSE_TP_TYPECHECK(sched_process_exec, spulse_probe_exec)

static __always_inline void spulse_proc_exit(struct task_struct *p)
{
	/* every thread passes here; the process is gone with the last one */
	if (atomic_read(&p->signal->live))
		return;
	spulse_control_target_exit(p);
	spulse_proc_event(p);
}
SPULSE_SCHED_PROCESS_EXIT_PROBE(spulse_probe_exit, spulse_proc_exit)

/**
 * spulse_procwatch_init() - register the exec/exit probes (best effort)
 */
void spulse_procwatch_init(void)
{
	for_each_kernel_tracepoint(spulse_find_tp, &spulse_tp);
	if (spulse_tp.exec)
		spulse_exec_on = !tracepoint_probe_register(spulse_tp.exec,
							    spulse_probe_exec,
							    NULL);
	if (spulse_tp.exit)
		spulse_exit_on = !tracepoint_probe_register(spulse_tp.exit,
							    spulse_probe_exit,
							    NULL);
	if (!spulse_exec_on || !spulse_exit_on)
		pr_info("exec/exit tracepoints unavailable, rescan only\n");
}

/**
 * spulse_procwatch_exit() - unregister the probes and wait for running ones
 */
void spulse_procwatch_exit(void)
{
	if (spulse_exec_on)
		tracepoint_probe_unregister(spulse_tp.exec, spulse_probe_exec,
					    NULL);
	if (spulse_exit_on)
		tracepoint_probe_unregister(spulse_tp.exit, spulse_probe_exit,
					    NULL);
	if (spulse_exec_on || spulse_exit_on)
		tracepoint_synchronize_unregister();
	spulse_exec_on = false;
	spulse_exit_on = false;
}
