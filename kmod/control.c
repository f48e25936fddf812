// SPDX-License-Identifier: GPL-2.0
/*
 * The control and stats files (debugfs spulse/ and its procfs twin
 * /proc/spulse/, same semantics), and the start/stop/flush operations
 * behind them. All state changes happen under spulse.lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/stddef.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "spulse.h"
#include "compat.h"
#include "control.h"
#include "stats.h"
#include "meta.h"
#include "offcpu.h"
#include "percpu.h"
#include "procfs.h"
#include "sample.h"
#include "stream.h"
#include "unwind.h"

/**
 * spulse_debugfs_locked_down() - would debugfs refuse our files?
 *
 * Description:
 * Kernel lockdown at "integrity" or above (what Debian enables under UEFI
 * Secure Boot, CONFIG_LOCK_DOWN_IN_EFI_SECURE_BOOT) lets debugfs open only
 * files that are read-only for everybody and have no mmap or ioctl: the
 * control and unwind files (0600) and every relay file (cpuN, meta: relay
 * files have mmap) refuse each open with -EPERM; stats stays readable.
 * Their twins in /proc/spulse are not refused (procfs.c).
 *
 * Return: true when locked down (the lockdown LSM logs a notice then).
 */
bool spulse_debugfs_locked_down(void)
{
	return security_locked_down(LOCKDOWN_DEBUGFS) != 0;
}

/*
 * The target has exited when its thread group leader is gone (reaped) or
 * its last thread has passed do_exit() (signal->live 0, a zombie leader).
 */
static bool spulse_target_alive(void)
{
	struct task_struct *t;
	bool alive;

	rcu_read_lock();
	t = pid_task(spulse.target, PIDTYPE_TGID);
	alive = t && atomic_read(&t->signal->live) > 0;
	rcu_read_unlock();
	return alive;
}

/* Mark the target gone (once) and have the work stop sampling. */
static void spulse_target_gone(void)
{
	if (!xchg(&spulse.target_exited, true))
		schedule_work(&spulse.target_work);
}

/**
 * spulse_control_target_poll() - notice a target that exited unseen
 *
 * Description: for kernels where the exit probe is unavailable, a reader
 * of stats finds out here that the target is gone.
 */
void spulse_control_target_poll(void)
{
	if (spulse.target && !READ_ONCE(spulse.target_exited) &&
	    !spulse_target_alive())
		spulse_target_gone();	/* exit probe unavailable */
}

/**
 * spulse_control_target_exit() - sched_process_exit hook (procwatch.c)
 * @p: a task whose thread group has no live thread left
 *
 * Atomic context (a tracepoint probe): only marks the target exited and
 * queues spulse.target_work, which stops sampling.
 */
void spulse_control_target_exit(struct task_struct *p)
{
	if (spulse.target && task_tgid(p) == spulse.target)
		spulse_target_gone();
}

/**
 * spulse_control_target_work() - stop sampling after the target exited
 * @w: spulse.target_work
 *
 * Says so once in dmesg; stats shows "target_exited 1" and start is
 * refused with -ESRCH from now on.
 */
void spulse_control_target_work(struct work_struct *w)
{
	pr_info("target_pid=%u exited: sampling stopped\n", spulse.target_vnr);
	spulse_control_stop();
}

/**
 * spulse_control_start() - enable sampling (no-op when running)
 *
 * Description:
 * The first start fixes the session: start_us (realtime) and the monotonic
 * origin that sample times are measured from, on every CPU. With offcpu=1
 * the scheduler probes are registered first. With events=task the events
 * are created first, on the target's threads of this moment.
 *
 * Return: 0, -ESRCH (the target exited, or it has no live thread for its
 * task events) or the probe registration error (then still stopped).
 */
int spulse_control_start(void)
{
	int r = 0;

	mutex_lock(&spulse.lock);
	if (spulse.target && !spulse_target_alive())
		spulse_target_gone();	/* an exit the probe did not see */
	if (READ_ONCE(spulse.target_exited)) {
		r = -ESRCH;
	} else if (!spulse.running) {
		if (!spulse.started) {
			/*
			 * One clock reading: start_us is the realtime of the
			 * same instant (two reads can be ms apart under TCG).
			 */
			spulse.start_mono = ktime_get_mono_fast_ns();
			spulse.start_us = ktime_to_ns(ktime_mono_to_real(
					ns_to_ktime(spulse.start_mono))) /
					  NSEC_PER_USEC;
			spulse.started = true;
		}
		r = spulse_sample_prepare();
		if (!r) {
			r = spulse_offcpu_start();
			if (r)
				spulse_sample_enable(false);
		}
		if (!r) {
			spulse_meta_start();
			spulse_sample_enable(true);
		}
	}
	mutex_unlock(&spulse.lock);
	return r;
}

/**
 * spulse_control_stop() - disable sampling and rescan meta once more
 */
void spulse_control_stop(void)
{
	mutex_lock(&spulse.lock);
	if (spulse.running) {
		spulse_sample_enable(false);
		spulse_offcpu_stop();
		spulse_meta_stop();
	}
	mutex_unlock(&spulse.lock);
}

/**
 * spulse_control_trigger() - write a manual trigger mark (extension kind 3)
 *
 * Description:
 * Into the stream of the CPU this runs on, with interrupts off and the
 * CPU's busy flag held like a sample (an NMI sample landing meanwhile is
 * dropped as busy). Reason manual, seq 0, no window, text
 * "debugfs trigger", event-clock time now. Counted in triggers_written or
 * triggers_dropped. Works running or stopped, once a session has started.
 *
 * Return: 0, -EINVAL (no session started yet), -ENOSPC (buffer full or
 * CPU busy: dropped and counted).
 */
int spulse_control_trigger(void)
{
	struct spulse_cpu *c;
	unsigned long flags;
	int r = 0;
	u64 t;

	mutex_lock(&spulse.lock);
	if (!spulse.started) {
		mutex_unlock(&spulse.lock);
		return -EINVAL;
	}
	local_irq_save(flags);
	c = this_cpu_ptr(spulse.cpu);
	if (c->busy) {
		c->stats.triggers_dropped++;
		r = -ENOSPC;
		goto out;
	}
	c->busy = 1;
	barrier();
	t = ktime_get_mono_fast_ns() - spulse.start_mono;
	if (spulse_batch_build_trigger(&c->enc, &c->batch, t,
				       SPULSE_TRIGGER_MANUAL, "debugfs trigger",
				       spulse.start_us, spulse.interval_us)) {
		r = -ENOSPC;
	} else if (!spulse_batch_put(c)) {
		r = -ENOSPC;
	} else {
		spulse_batch_commit_event(&c->enc, &c->batch, t);
	}
	if (r)
		c->stats.triggers_dropped++;
	else
		c->stats.triggers_written++;
	barrier();
	c->busy = 0;
out:
	local_irq_restore(flags);
	mutex_unlock(&spulse.lock);
	return r;
}

/**
 * spulse_control_flush() - publish partial sub-buffers to readers
 *
 * Each CPU switches its own buffer in an IPI with its busy flag held
 * (spulse_stream_flush()), the meta buffer under the meta mutex; sampling
 * goes on. Readers that read only published sub-buffers (spulse-drain,
 * docs/KERNEL.md "Relay files") call this to bound how long data waits.
 */
void spulse_control_flush(void)
{
	mutex_lock(&spulse.lock);
	spulse_stream_flush();
	spulse_meta_flush();
	mutex_unlock(&spulse.lock);
}

static ssize_t spulse_control_write(struct file *f, const char __user *ubuf,
				    size_t len, loff_t *pos)
{
	char cmd[16];
	int r;

	if (len == 0 || len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = 0;
	if (sysfs_streq(cmd, "start")) {
		r = spulse_control_start();
		if (r)
			return r;
	} else if (sysfs_streq(cmd, "trigger")) {
		r = spulse_control_trigger();
		if (r)
			return r;
	} else if (sysfs_streq(cmd, "stop"))
		spulse_control_stop();
	else if (sysfs_streq(cmd, "flush"))
		spulse_control_flush();
	else
		return -EINVAL;
	return len;
}

static int spulse_control_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", READ_ONCE(spulse.running) ? "running" : "stopped");
	return 0;
}

static int spulse_control_open(struct inode *inode, struct file *f)
{
	return single_open(f, spulse_control_show, NULL);
}

static const struct file_operations spulse_control_fops = {
	.owner = THIS_MODULE,
	.open = spulse_control_open,
	.read = seq_read,
	.write = spulse_control_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int spulse_stats_open(struct inode *inode, struct file *f)
{
	return single_open(f, spulse_stats_show, NULL);
}

static const struct file_operations spulse_stats_fops = {
	.owner = THIS_MODULE,
	.open = spulse_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* the twins in /proc/spulse: the same handlers */
static const struct proc_ops spulse_control_pops = {
	.proc_open = spulse_control_open,
	.proc_read = seq_read,
	.proc_write = spulse_control_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static const struct proc_ops spulse_stats_pops = {
	.proc_open = spulse_stats_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/**
 * spulse_control_init() - create the control and stats files
 *
 * Description: in debugfs spulse/ and in /proc/spulse (spulse_procfs_init() first).
 *
 * Return: 0 or the procfs error.
 */
int spulse_control_init(void)
{
	int r;

	debugfs_create_file("control", 0600, spulse.dir, NULL,
			    &spulse_control_fops);
	debugfs_create_file("stats", 0400, spulse.dir, NULL,
			    &spulse_stats_fops);
	r = spulse_procfs_file("control", 0600, &spulse_control_pops);
	if (!r)
		r = spulse_procfs_file("stats", 0400, &spulse_stats_pops);
	return r;
}
