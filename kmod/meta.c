// SPDX-License-Identifier: GPL-2.0
/*
 * The meta stream: module records for the target's executable file-backed
 * mappings (and [vdso]), module and process deactivations and Python
 * runtime enter/leave records, written only from process context (a
 * delayed work that rescans every SPULSE_META_PERIOD while running, sooner
 * when a sample hits a user address no known module covers). Exec and exit
 * are detected by rescan: a changed task->self_exec_id is an exec, a task
 * that is gone or exiting is an exit; both emit a process deactivation.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/irq_work.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "spulse.h"

#define SPULSE_META_PERIOD	msecs_to_jiffies(200)
#define SPULSE_META_KICK_GAP	msecs_to_jiffies(50)
#define SPULSE_META_MAX_MODS	4096
#define SPULSE_META_MAX_PROCS	256
#define SPULSE_META_SUBBUF	(64 * 1024)
#define SPULSE_META_NSUBBUF	32

struct spulse_mmod {
	u32 id;
	u32 pid;
	u64 start;
	u64 end;
	u64 pgoff;
	unsigned long ino;
	dev_t dev;
	bool seen;
	u8 bid_len;
	u8 bid[SPULSE_MAX_BUILD_ID];
};

struct spulse_mproc {
	u32 pid;
	u64 exec_id;
	bool python;
	bool scanned;
};

static struct {
	bool inited;
	struct mutex lock;		/* everything below but the spans */
	struct rchan *chan;
	bool header_done;
	u32 next_id;
	struct spulse_mmod *mods;
	u32 nmods;
	struct spulse_mproc *procs;
	u32 nprocs;
	char *pathbuf;
	char *rootbuf;
	const char *root;	/* scanned process's root, "" for "/" */
	size_t root_len;
	u8 *rec;
	u64 bytes;
	u64 dropped;
	unsigned long last_scan;
	struct delayed_work work;
	struct irq_work kick;
	unsigned long kick_pending;
	/* lock-free view for the sampler */
	seqcount_t seq;
	struct spulse_span *spans;
	u32 nspans;
} meta;

/**
 * spulse_span_lookup() - whether a span covers (pid, addr)
 * @s: spans
 * @n: number of spans
 * @pid: process
 * @addr: user address
 *
 * Return: true when some span of @pid contains @addr.
 */
bool spulse_span_lookup(const struct spulse_span *s, u32 n, u32 pid, u64 addr)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (s[i].pid == pid && addr >= s[i].start && addr < s[i].end)
			return true;
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_span_lookup);

/**
 * spulse_meta_known() - NMI-safe hint: is @addr inside a known module
 * @pid: process
 * @addr: user address
 *
 * Reads the span table without locking; a concurrent update (odd or changed
 * sequence) answers "known", since the periodic rescan catches up anyway.
 *
 * Return: true when known (or being updated).
 */
bool spulse_meta_known(u32 pid, u64 addr)
{
	unsigned int seq = raw_read_seqcount(&meta.seq);
	bool hit;

	if (seq & 1)
		return true;
	hit = spulse_span_lookup(meta.spans, READ_ONCE(meta.nspans), pid,
				 addr);
	return hit || read_seqcount_retry(&meta.seq, seq);
}

static void spulse_meta_kick_fn(struct irq_work *w)
{
	unsigned long next = meta.last_scan + SPULSE_META_KICK_GAP;
	long delay = time_after(next, jiffies) ? next - jiffies : 0;

	mod_delayed_work(system_wq, &meta.work, delay);
}

/**
 * spulse_meta_kick() - ask for a rescan soon (NMI-safe)
 */
void spulse_meta_kick(void)
{
	if (!test_and_set_bit(0, &meta.kick_pending))
		irq_work_queue(&meta.kick);
}

/**
 * spulse_meta_process_event() - a process of interest exec'd or exited
 * @pid: its tgid
 *
 * Called from the exec/exit tracepoints (process context, preemption
 * off). With a target this rescans at once; in whole-system mode, where
 * every exec and exit of the machine lands here, it is a rate-limited kick.
 */
void spulse_meta_process_event(u32 pid)
{
	if (!READ_ONCE(spulse.running))
		return;
	if (spulse.p.target_pid)
		mod_delayed_work(system_wq, &meta.work, 0);
	else
		spulse_meta_kick();
}

static bool spulse_meta_put(const u8 *rec, size_t len)
{
	if (!spulse_relay_put(*per_cpu_ptr(meta.chan->buf, 0), rec, len)) {
		meta.dropped++;
		return false;
	}
	meta.bytes += len;
	return true;
}

static void spulse_meta_publish(void)
{
	u32 i;

	preempt_disable();
	write_seqcount_begin(&meta.seq);
	for (i = 0; i < meta.nmods; i++) {
		meta.spans[i].pid = meta.mods[i].pid;
		meta.spans[i].start = meta.mods[i].start;
		meta.spans[i].end = meta.mods[i].end;
	}
	WRITE_ONCE(meta.nspans, meta.nmods);
	write_seqcount_end(&meta.seq);
	preempt_enable();
}

static struct spulse_mproc *spulse_meta_proc(u32 pid, bool add)
{
	u32 i;

	for (i = 0; i < meta.nprocs; i++)
		if (meta.procs[i].pid == pid)
			return &meta.procs[i];
	if (!add || meta.nprocs >= SPULSE_META_MAX_PROCS)
		return NULL;
	meta.procs[meta.nprocs] = (struct spulse_mproc){ .pid = pid };
	return &meta.procs[meta.nprocs++];
}

static void spulse_meta_drop_mod(u32 i)
{
	meta.mods[i] = meta.mods[--meta.nmods];
}

/* Retire every module of @pid (exec or exit); false if it could not. */
static bool spulse_meta_retire_proc(struct spulse_mproc *pr)
{
	u32 i;
	size_t n;

	if (pr->python) {
		n = spulse_enc_python(meta.rec, pr->pid, SPULSE_PYTHON_LEAVE);
		if (!spulse_meta_put(meta.rec, n))
			return false;
		pr->python = false;
	}
	n = spulse_enc_process_deactivate(meta.rec, pr->pid);
	if (!spulse_meta_put(meta.rec, n))
		return false;
	/* its unwind maps are of the image that is gone (tables stay) */
	spulse_ut_forget(&spulse_ut, pr->pid);
	for (i = meta.nmods; i-- > 0;)
		if (meta.mods[i].pid == pr->pid)
			spulse_meta_drop_mod(i);
	return true;
}

static bool spulse_is_python_name(const char *base, bool is_exe)
{
	if (is_exe && !strncmp(base, "python", 6))
		return true;
	return !strncmp(base, "libpython", 9) && strstr(base, ".so");
}

/* Build-id of a new mapping: reuse one read for the same file, else read. */
static void spulse_meta_build_id(struct spulse_mmod *m, struct file *f)
{
	u32 i;

	for (i = 0; i < meta.nmods; i++) {
		const struct spulse_mmod *o = &meta.mods[i];

		if (o->ino == m->ino && o->dev == m->dev) {
			m->bid_len = o->bid_len;
			memcpy(m->bid, o->bid, o->bid_len);
			return;
		}
	}
	m->bid_len = spulse_file_build_id(f, m->bid);
}

/* One executable mapping seen by the scan. */
static void spulse_meta_mapping(u32 pid, struct vm_area_struct *vma,
				bool *python)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long ino = 0;
	struct spulse_mmod *m;
	const char *path;
	dev_t dev = 0;
	u64 pgoff = 0;
	size_t n;
	u32 i;

	if (vma->vm_file) {
		struct file *f = vma->vm_file;
		const char *base;

		path = d_path(&f->f_path, meta.pathbuf, PATH_MAX);
		if (IS_ERR(path))
			return;
		if (meta.root_len && !strncmp(path, meta.root, meta.root_len) &&
		    path[meta.root_len] == '/')
			path += meta.root_len;
		ino = file_inode(f)->i_ino;
		dev = file_inode(f)->i_sb->s_dev;
		pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (spulse_is_python_name(base,
					  f == rcu_access_pointer(mm->exe_file)))
			*python = true;
	} else if (vma->vm_start == (unsigned long)mm->context.vdso) {
		path = "[vdso]";
	} else {
		return;
	}
	for (i = 0; i < meta.nmods; i++) {
		struct spulse_mmod *m = &meta.mods[i];

		if (m->pid == pid && m->start == vma->vm_start &&
		    m->end == vma->vm_end && m->pgoff == pgoff &&
		    m->ino == ino && m->dev == dev) {
			m->seen = true;
			return;
		}
	}
	if (meta.nmods >= SPULSE_META_MAX_MODS) {
		meta.dropped++;
		return;
	}
	m = &meta.mods[meta.nmods];
	*m = (struct spulse_mmod){
		.id = meta.next_id, .pid = pid, .start = vma->vm_start,
		.end = vma->vm_end, .pgoff = pgoff, .ino = ino, .dev = dev,
		.seen = true,
	};
	if (vma->vm_file)
		spulse_meta_build_id(m, vma->vm_file);
	n = spulse_enc_module(meta.rec, m->id, pid, m->start, m->end, pgoff,
			      path, strlen(path), m->bid, m->bid_len);
	if (!spulse_meta_put(meta.rec, n))
		return;
	meta.next_id++;
	meta.nmods++;
}

/*
 * Paths are reported as the process sees them (as in its /proc/PID/maps):
 * d_path() resolves against the worker's root, so a chrooted process's
 * root prefix is cut off.
 */
static void spulse_meta_set_root(struct task_struct *task)
{
	struct path root;
	bool have = false;
	char *r;

	meta.root = "";
	meta.root_len = 0;
	task_lock(task);
	if (task->fs) {
		get_fs_root(task->fs, &root);
		have = true;
	}
	task_unlock(task);
	if (!have)
		return;
	r = d_path(&root, meta.rootbuf, PATH_MAX);
	path_put(&root);
	if (!IS_ERR(r) && strcmp(r, "/")) {
		meta.root = r;
		meta.root_len = strlen(r);
	}
}

static void spulse_meta_scan_mm(u32 pid, struct mm_struct *mm, bool *python)
{
	struct vm_area_struct *vma;

	mmap_read_lock(mm);
	for (vma = find_vma(mm, 0); vma; vma = find_vma(mm, vma->vm_end))
		if (vma->vm_flags & VM_EXEC)
			spulse_meta_mapping(pid, vma, python);
	mmap_read_unlock(mm);
}

/* Rescan one process; retire what disappeared. */
static void spulse_meta_scan_pid(u32 pid)
{
	struct spulse_mproc *pr = spulse_meta_proc(pid, true);
	struct task_struct *task = NULL;
	struct mm_struct *mm = NULL;
	bool python = false, fresh;
	struct pid *p;
	size_t n;
	u32 i;

	if (!pr)
		return;
	fresh = !pr->exec_id;
	pr->scanned = true;
	p = find_get_pid(pid);
	if (p) {
		task = get_pid_task(p, PIDTYPE_TGID);
		put_pid(p);
	}
	if (task && !(task->flags & PF_EXITING))
		mm = get_task_mm(task);
	if (!mm) {
		if (task)
			put_task_struct(task);
		/* never scanned alive: nothing of it was announced */
		if (fresh || spulse_meta_retire_proc(pr))
			*pr = meta.procs[--meta.nprocs];
		return;
	}
	if (pr->exec_id && pr->exec_id != task->self_exec_id + 1ULL &&
	    !spulse_meta_retire_proc(pr))
		goto out;
	pr->exec_id = task->self_exec_id + 1ULL;
	for (i = 0; i < meta.nmods; i++)
		if (meta.mods[i].pid == pid)
			meta.mods[i].seen = false;
	spulse_meta_set_root(task);
	spulse_meta_scan_mm(pid, mm, &python);
	for (i = meta.nmods; i-- > 0;) {
		if (meta.mods[i].pid != pid || meta.mods[i].seen)
			continue;
		n = spulse_enc_module_deactivate(meta.rec, meta.mods[i].id);
		if (spulse_meta_put(meta.rec, n))
			spulse_meta_drop_mod(i);
	}
	if (python != pr->python) {
		n = spulse_enc_python(meta.rec, pid, python ?
				      SPULSE_PYTHON_ENTER : SPULSE_PYTHON_LEAVE);
		if (spulse_meta_put(meta.rec, n))
			pr->python = python;
	}
out:
	mmput(mm);
	put_task_struct(task);
}

static void spulse_meta_scan(void)
{
	u32 i, j;
	int cpu;

	for (i = 0; i < meta.nprocs; i++)
		meta.procs[i].scanned = false;
	if (spulse.p.target_pid) {
		spulse_meta_scan_pid(spulse.p.target_pid);
	} else {
		for_each_possible_cpu(cpu) {
			struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

			for (j = 0; j < SPULSE_PID_RING; j++) {
				u32 pid = READ_ONCE(c->pids[j]);
				struct spulse_mproc *pr;

				if (!pid)
					continue;
				pr = spulse_meta_proc(pid, false);
				if (!pr || !pr->scanned)
					spulse_meta_scan_pid(pid);
			}
		}
	}
	/* tracked processes not sampled lately: still alive? */
	for (i = meta.nprocs; i-- > 0;)
		if (!meta.procs[i].scanned)
			spulse_meta_scan_pid(meta.procs[i].pid);
	spulse_meta_publish();
	meta.last_scan = jiffies;
}

static void spulse_meta_work(struct work_struct *w)
{
	mutex_lock(&meta.lock);
	clear_bit(0, &meta.kick_pending);
	if (meta.header_done)
		spulse_meta_scan();
	mutex_unlock(&meta.lock);
	if (READ_ONCE(spulse.running))
		mod_delayed_work(system_wq, &meta.work, SPULSE_META_PERIOD);
}

/**
 * spulse_meta_start() - write the header (first start) and scan now
 *
 * Called from control with spulse.lock held, after the session start time
 * is set.
 */
void spulse_meta_start(void)
{
	mutex_lock(&meta.lock);
	if (!meta.header_done) {
		size_t n = spulse_enc_header(meta.rec, spulse.start_us,
					     spulse.interval_us);

		meta.header_done = spulse_meta_put(meta.rec, n);
	}
	mutex_unlock(&meta.lock);
	mod_delayed_work(system_wq, &meta.work, 0);
}

/**
 * spulse_meta_stop() - one last scan, then no more periodic work
 */
void spulse_meta_stop(void)
{
	cancel_delayed_work_sync(&meta.work);
	mutex_lock(&meta.lock);
	if (meta.header_done)
		spulse_meta_scan();
	mutex_unlock(&meta.lock);
}

/**
 * spulse_meta_flush() - publish the meta buffer's partial sub-buffer
 */
void spulse_meta_flush(void)
{
	mutex_lock(&meta.lock);
	spulse_relay_flush_chan(meta.chan);
	mutex_unlock(&meta.lock);
}

/**
 * spulse_meta_bytes() - bytes written to the meta stream
 *
 * Return: the byte count.
 */
u64 spulse_meta_bytes(void)
{
	return READ_ONCE(meta.bytes);
}

/**
 * spulse_meta_dropped() - meta records that did not fit (retried later)
 *
 * Return: the record count.
 */
u64 spulse_meta_dropped(void)
{
	return READ_ONCE(meta.dropped);
}

/**
 * spulse_meta_init() - allocate the meta state and create the meta file
 *
 * Return: 0 or -ENOMEM.
 */
int spulse_meta_init(void)
{
	mutex_init(&meta.lock);
	seqcount_init(&meta.seq);
	INIT_DELAYED_WORK(&meta.work, spulse_meta_work);
	init_irq_work(&meta.kick, spulse_meta_kick_fn);
	meta.inited = true;
	meta.mods = kvcalloc(SPULSE_META_MAX_MODS, sizeof(*meta.mods),
			     GFP_KERNEL);
	meta.spans = kvcalloc(SPULSE_META_MAX_MODS, sizeof(*meta.spans),
			      GFP_KERNEL);
	meta.procs = kvcalloc(SPULSE_META_MAX_PROCS, sizeof(*meta.procs),
			      GFP_KERNEL);
	meta.pathbuf = kmalloc(PATH_MAX, GFP_KERNEL);
	meta.rootbuf = kmalloc(PATH_MAX, GFP_KERNEL);
	meta.rec = kmalloc(SPULSE_MAX_RECORD, GFP_KERNEL);
	if (!meta.mods || !meta.spans || !meta.procs || !meta.pathbuf ||
	    !meta.rootbuf || !meta.rec)
		return -ENOMEM;
	meta.chan = spulse_meta_chan_open(SPULSE_META_SUBBUF,
					  SPULSE_META_NSUBBUF);
	return meta.chan ? 0 : -ENOMEM;
}

/**
 * spulse_meta_exit() - stop the work and free everything
 *
 * Called after the perf events are released, so no new kick can come.
 */
void spulse_meta_exit(void)
{
	if (!meta.inited)
		return;
	irq_work_sync(&meta.kick);
	cancel_delayed_work_sync(&meta.work);
	if (meta.chan)
		relay_close(meta.chan);
	meta.chan = NULL;
	kvfree(meta.mods);
	kvfree(meta.spans);
	kvfree(meta.procs);
	kfree(meta.pathbuf);
	kfree(meta.rootbuf);
	kfree(meta.rec);
	meta.inited = false;
}
