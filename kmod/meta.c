// SPDX-License-Identifier: GPL-2.0
/*
 * The meta stream: module records for the target's executable file-backed
 * mappings (and [vdso]), module and process deactivations and Python
 * runtime enter/leave records, written only from process context (a
 * delayed work that rescans every SPULSE_META_PERIOD while running, sooner
 * when a sample hits a user address no known module covers). Exec and exit
 * are detected by rescan: a changed self_exec_id is an exec, a thread group
 * without a live thread is an exit; both emit a process deactivation.
 *
 * A sample that misses every known module leaves its process's mm (one
 * mmget_not_zero(), an atomic op, NMI-safe) in a small lock-free pending
 * table; the worker scans that mm and only that process, even if the
 * process has exited or exec'd meanwhile (then mmput()). So a process that
 * lives a few milliseconds still gets its module records. A walk of the
 * VMAs is skipped while the mm's exec_vm and map_count are those of the last
 * walk (at most SPULSE_META_REWALK apart): misses inside anonymous JIT code
 * cost no mmap_lock.
 */
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/irq_work.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/relay.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "spulse.h"
#include "buildid.h"
#include "meta.h"
#include "compat/workqueue.h"
#include "percpu.h"
#include "relay.h"
#include "unwind.h"
#include "kunit_export.h"

#define SPULSE_META_PERIOD	msecs_to_jiffies(200)
#define SPULSE_META_KICK_GAP	msecs_to_jiffies(50)
#define SPULSE_META_MAX_MODS	4096
#define SPULSE_META_MAX_PROCS	256
#define SPULSE_META_SUBBUF	(64 * 1024)
#define SPULSE_META_NSUBBUF	32
#define SPULSE_META_REWALK	msecs_to_jiffies(2000)	/* walk at least */
#define SPULSE_META_IDLE	msecs_to_jiffies(1000)	/* evictable after */
#define SPULSE_META_MODS_SLACK	256	/* evict below this many free */
#define SPULSE_META_PENDING	16	/* missed mms waiting for the worker */
#define SPULSE_META_NEW_MAX	128	/* new mappings announced per walk */

/* kick_pending bits */
#define SPULSE_META_KICKED	0	/* an irq_work kick is queued */
#define SPULSE_META_FULL	1	/* next run scans every process */

struct spulse_mmod {
	u32 id;
	u32 pid;
	u64 start;
	u64 end;
	u64 pgoff;
	unsigned long ino;
	dev_t dev;
	bool seen;
	bool python;
	u8 bid_len;
	u8 bid[SPULSE_MAX_BUILD_ID];
};

/* A new mapping found under the mmap_lock, announced after it. */
struct spulse_mnew {
	u64 start;
	u64 end;
	u64 pgoff;
	unsigned long ino;
	dev_t dev;
	struct file *file;	/* a reference, NULL for [vdso] */
	bool is_exe;
};

/**
 * struct spulse_mproc - one tracked process
 * @pid: tgid
 * @exec_id: self_exec_id + 1 of the image whose modules were announced (0 =
 *	nothing announced)
 * @python: a python enter was written
 * @scanned: seen in this pass
 * @complete: the last walk recorded every mapping (else walk again)
 * @map_count: the mm's map_count at the last walk
 * @exec_vm: the mm's exec_vm at the last walk
 * @walked: jiffies of the last walk
 * @sampled: jiffies the process was last sampled (LRU eviction)
 */
struct spulse_mproc {
	u32 pid;
	u64 exec_id;
	bool python;
	bool scanned;
	bool complete;
	int map_count;
	unsigned long exec_vm;
	unsigned long walked;
	unsigned long sampled;
};

/* spulse_mpend.state */
enum {
	SPULSE_MPEND_FREE,
	SPULSE_MPEND_CLAIMED,	/* being filled by a handler */
	SPULSE_MPEND_READY,
};

/**
 * struct spulse_mpend - a sampled process whose address was not known
 * @state: SPULSE_MPEND_*; a handler claims a free slot with cmpxchg, fills
 *	it and releases READY; the worker reads a READY one and frees it
 * @pid: tgid
 * @exec_id: the sampled thread's self_exec_id
 * @mm: a reference (mm_users) on its mm, dropped by the worker
 */
struct spulse_mpend {
	atomic_t state;
	u32 pid;
	u64 exec_id;
	struct mm_struct *mm;
};

static struct {
	bool inited;
	bool on;		/* between start and stop: the work may run */
	struct mutex lock;		/* everything below but the spans */
	struct rchan *chan;
	struct spulse_relay_posref rpos;	/* chan's switches (relay.c) */
	bool header_done;
	u32 next_id;
	struct spulse_mmod *mods;
	u32 nmods;
	struct spulse_mproc *procs;
	u32 nprocs;
	struct spulse_mnew *newv;
	u32 nnew;
	char *pathbuf;
	char *rootbuf;
	const char *root;	/* scanned process's root, "" for "/" */
	size_t root_len;
	u8 *rec;
	u64 bytes;
	u64 dropped;
	u64 walks;
	u64 walks_skipped;
	u64 ghost_scans;
	u64 procs_full;
	u64 procs_evicted;
	u64 mods_full;
	unsigned long last_scan;
	unsigned long next_full;
	struct delayed_work work;
	struct work_struct last;	/* the last scan of a stop */
	struct irq_work kick;
	unsigned long kick_pending;
	/* handler -> worker: missed processes, and counters */
	struct spulse_mpend pend[SPULSE_META_PENDING];
	atomic64_t pend_taken;
	atomic64_t pend_full;
	/* lock-free view for the sampler */
	seqcount_t seq;
	struct spulse_span *spans;
	struct spulse_span *sorted;	/* build buffer of spulse_meta_publish */
	u32 nspans;
} meta;

/**
 * struct spulse_meta_hint - the span a CPU's spulse_meta_known() found last
 * @seq: meta.seq when it was read (even; the table has not changed while
 *	meta.seq still holds it: every publication adds 2)
 * @pid: the span's process
 * @start: its first address
 * @end: its end (exclusive); 0 with @start: no hint
 *
 * Written only by its CPU's sampler or off-CPU probe, under the CPU's busy
 * flag (no nesting).
 */
struct spulse_meta_hint {
	unsigned int seq;
	u32 pid;
	u64 start;
	u64 end;
};

static DEFINE_PER_CPU(struct spulse_meta_hint, spulse_meta_hint);

static int spulse_span_cmp(const void *a, const void *b)
{
	const struct spulse_span *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/**
 * spulse_span_sort() - sort spans by (pid, start) for spulse_span_lookup()
 * @s: spans
 * @n: number of spans
 */
void spulse_span_sort(struct spulse_span *s, u32 n)
{
	sort(s, n, sizeof(*s), spulse_span_cmp, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_span_sort);

/* spulse_span_lookup()'s search: the span, or NULL */
static const struct spulse_span *spulse_span_find(const struct spulse_span *s,
						  u32 n, u32 pid, u64 addr)
{
	u32 lo = 0, hi = n;

	/* first span > (pid, addr); the candidate is the one before it */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u32 mp = READ_ONCE(s[mid].pid);

		if (mp < pid || (mp == pid && READ_ONCE(s[mid].start) <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s += lo - 1;
	return READ_ONCE(s->pid) == pid && addr >= READ_ONCE(s->start) &&
	       addr < READ_ONCE(s->end) ? s : NULL;
}

/**
 * spulse_span_lookup() - whether a span covers (pid, addr)
 * @s: spans sorted by (pid, start) (spulse_span_sort()); the spans of one
 *	pid do not overlap
 * @n: number of spans
 * @pid: process
 * @addr: user address
 *
 * Binary search: O(log n), and bounded and in bounds whatever @s holds (the
 * NMI-side reader may see a table being rewritten; its answer is then
 * discarded by the seqcount).
 *
 * Return: true when some span of @pid contains @addr.
 */
bool spulse_span_lookup(const struct spulse_span *s, u32 n, u32 pid, u64 addr)
{
	return spulse_span_find(s, n, pid, addr);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_span_lookup);

/*
 * A sample of @pid (current's tgid) missed: leave current's mm for the
 * worker. NMI-safe: a reference taken with one atomic op on a slot claimed
 * with cmpxchg; nothing if this image (pid, self_exec_id) is already
 * pending or no slot is free (a process that exec'd has both images
 * pending: the old one may be all a short-lived process left).
 * current->mm cannot be freed under us: the interrupted task holds its own
 * reference until after it clears current->mm (exit_mm(), exec_mmap()).
 */
static void spulse_meta_note_miss(u32 pid)
{
	struct task_struct *tsk = current;
	struct spulse_mpend *free = NULL;
	struct mm_struct *mm;
	int i;

	if (task_tgid_nr(tsk) != pid || (tsk->flags & PF_KTHREAD))
		return;
	for (i = 0; i < SPULSE_META_PENDING; i++) {
		struct spulse_mpend *p = &meta.pend[i];
		int st = atomic_read(&p->state);

		if (st == SPULSE_MPEND_FREE) {
			if (!free)
				free = p;
		} else if (READ_ONCE(p->pid) == pid &&
			   READ_ONCE(p->exec_id) == tsk->self_exec_id) {
			return;
		}
	}
	if (!free || atomic_cmpxchg(&free->state, SPULSE_MPEND_FREE,
				    SPULSE_MPEND_CLAIMED) != SPULSE_MPEND_FREE) {
		atomic64_inc(&meta.pend_full);
		return;
	}
	mm = READ_ONCE(tsk->mm);
	if (!mm || !mmget_not_zero(mm)) {
		atomic_set_release(&free->state, SPULSE_MPEND_FREE);
		return;
	}
	WRITE_ONCE(free->pid, pid);
	WRITE_ONCE(free->exec_id, tsk->self_exec_id);
	free->mm = mm;
	atomic64_inc(&meta.pend_taken);
	atomic_set_release(&free->state, SPULSE_MPEND_READY);
}

/**
 * spulse_meta_known() - NMI-safe hint: is @addr inside a known module
 * @pid: process (current's tgid)
 * @addr: user address
 *
 * Reads the span table without locking; a concurrent update (odd or changed
 * sequence) answers "known", since the periodic rescan catches up anyway.
 * The span found last on this CPU (struct spulse_meta_hint) answers first,
 * while the table is unchanged: one sample after another mostly lands in
 * the same module of the same process.
 * On a miss, current's mm is left for the worker (spulse_meta_kick() then
 * has it scan that process only).
 *
 * Return: true when known (or being updated).
 */
bool spulse_meta_known(u32 pid, u64 addr)
{
	struct spulse_meta_hint *h = this_cpu_ptr(&spulse_meta_hint);
	unsigned int seq = raw_read_seqcount(&meta.seq);
	const struct spulse_span *sp;
	u64 start, end;
	u32 n;

	if (seq & 1)
		return true;
	/* the span this CPU found last, while the table is the same */
	if (h->seq == seq && h->pid == pid && addr >= h->start &&
	    addr < h->end)
		return true;
	n = min_t(u32, READ_ONCE(meta.nspans), SPULSE_META_MAX_MODS);
	sp = spulse_span_find(meta.spans, n, pid, addr);
	if (sp) {
		start = READ_ONCE(sp->start);
		end = READ_ONCE(sp->end);
	}
	if (read_seqcount_retry(&meta.seq, seq))
		return true;
	if (sp) {
		/* read while the table was the one of @seq */
		h->seq = seq;
		h->pid = pid;
		h->start = start;
		h->end = end;
		return true;
	}
	spulse_meta_note_miss(pid);
	return false;
}

static void spulse_meta_kick_fn(struct irq_work *w)
{
	unsigned long next = READ_ONCE(meta.last_scan) + SPULSE_META_KICK_GAP;
	long delay = time_after(next, jiffies) ? next - jiffies : 0;

	if (!READ_ONCE(meta.on))
		return;
	mod_delayed_work(spulse_system_percpu_wq, &meta.work, delay);
}

/**
 * spulse_meta_kick() - ask for a scan of the pending processes soon
 *
 * NMI-safe; at most one scan every SPULSE_META_KICK_GAP.
 */
void spulse_meta_kick(void)
{
	if (!READ_ONCE(meta.on))
		return;
	if (!test_and_set_bit(SPULSE_META_KICKED, &meta.kick_pending))
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
	if (!READ_ONCE(spulse.running) || !READ_ONCE(meta.on))
		return;
	set_bit(SPULSE_META_FULL, &meta.kick_pending);
	if (spulse.p.target_pid)
		mod_delayed_work(spulse_system_percpu_wq, &meta.work, 0);
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

/* Sort outside the write section; only the copy is under the seqcount. */
static void spulse_meta_publish(void)
{
	u32 i;

	for (i = 0; i < meta.nmods; i++) {
		meta.sorted[i].pid = meta.mods[i].pid;
		meta.sorted[i].start = meta.mods[i].start;
		meta.sorted[i].end = meta.mods[i].end;
	}
	spulse_span_sort(meta.sorted, meta.nmods);
	preempt_disable();
	write_seqcount_begin(&meta.seq);
	memcpy(meta.spans, meta.sorted, meta.nmods * sizeof(*meta.spans));
	WRITE_ONCE(meta.nspans, meta.nmods);
	write_seqcount_end(&meta.seq);
	preempt_enable();
}

static bool spulse_meta_retire_proc(struct spulse_mproc *pr);

/*
 * Make room for a new process: retire the tracked process sampled least
 * recently, if that was SPULSE_META_IDLE ago or more (it is announced again
 * if sampled later).
 */
static bool spulse_meta_evict(void)
{
	struct spulse_mproc *lru = NULL;
	u32 i;

	for (i = 0; i < meta.nprocs; i++) {
		struct spulse_mproc *pr = &meta.procs[i];

		if (time_before(jiffies, pr->sampled + SPULSE_META_IDLE))
			continue;
		if (!lru || time_before(pr->sampled, lru->sampled))
			lru = pr;
	}
	if (!lru || (lru->exec_id && !spulse_meta_retire_proc(lru)))
		return false;
	*lru = meta.procs[--meta.nprocs];
	meta.procs_evicted++;
	return true;
}

static struct spulse_mproc *spulse_meta_proc(u32 pid, bool add)
{
	struct spulse_mproc *pr;
	u32 i;

	for (i = 0; i < meta.nprocs; i++)
		if (meta.procs[i].pid == pid)
			return &meta.procs[i];
	if (!add)
		return NULL;
	if ((meta.nprocs >= SPULSE_META_MAX_PROCS ||
	     meta.nmods + SPULSE_META_MODS_SLACK > SPULSE_META_MAX_MODS) &&
	    !spulse_meta_evict() && meta.nprocs >= SPULSE_META_MAX_PROCS) {
		meta.procs_full++;
		return NULL;
	}
	pr = &meta.procs[meta.nprocs++];
	*pr = (struct spulse_mproc){ .pid = pid, .sampled = jiffies };
	return pr;
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

/*
 * One executable mapping seen under the mmap_read_lock: a known one is
 * marked seen; a new one is queued in meta.newv with a reference on its
 * file, announced after the lock is dropped (spulse_meta_announce()).
 * False if it could not be queued.
 */
static bool spulse_meta_mapping(u32 pid, struct vm_area_struct *vma,
				bool *python)
{
	struct mm_struct *mm = vma->vm_mm;
	struct file *f = vma->vm_file;
	struct spulse_mnew *nw;
	unsigned long ino = 0;
	dev_t dev = 0;
	u64 pgoff = 0;
	u32 i;

	if (f) {
		ino = file_inode(f)->i_ino;
		dev = file_inode(f)->i_sb->s_dev;
		pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	} else if (vma->vm_start != (unsigned long)mm->context.vdso) {
		return true;
	}
	for (i = 0; i < meta.nmods; i++) {
		struct spulse_mmod *m = &meta.mods[i];

		if (m->pid == pid && m->start == vma->vm_start &&
		    m->end == vma->vm_end && m->pgoff == pgoff &&
		    m->ino == ino && m->dev == dev) {
			m->seen = true;
			*python |= m->python;
			return true;
		}
	}
	if (meta.nmods + meta.nnew >= SPULSE_META_MAX_MODS) {
		meta.mods_full++;
		return false;
	}
	if (meta.nnew >= SPULSE_META_NEW_MAX)
		return false;	/* the next walk queues it */
	nw = &meta.newv[meta.nnew++];
	*nw = (struct spulse_mnew){
		.start = vma->vm_start, .end = vma->vm_end, .pgoff = pgoff,
		.ino = ino, .dev = dev, .file = f ? get_file(f) : NULL,
		.is_exe = f && f == rcu_access_pointer(mm->exe_file),
	};
	return true;
}

/*
 * The new mappings the walk queued, with the mmap_lock dropped: path,
 * build-id (may read the file), module record; the file references are
 * put. False if some could not be recorded.
 */
static bool spulse_meta_announce(u32 pid, bool *python)
{
	bool all = true;
	u32 i;

	for (i = 0; i < meta.nnew; i++) {
		struct spulse_mnew *nw = &meta.newv[i];
		struct spulse_mmod *m = &meta.mods[meta.nmods];
		const char *path = "[vdso]";
		size_t n;

		*m = (struct spulse_mmod){
			.id = meta.next_id, .pid = pid, .start = nw->start,
			.end = nw->end, .pgoff = nw->pgoff, .ino = nw->ino,
			.dev = nw->dev, .seen = true,
		};
		if (nw->file) {
			const char *base;

			path = d_path(&nw->file->f_path, meta.pathbuf, PATH_MAX);
			if (IS_ERR(path))
				goto next;
			if (meta.root_len &&
			    !strncmp(path, meta.root, meta.root_len) &&
			    path[meta.root_len] == '/')
				path += meta.root_len;
			base = strrchr(path, '/');
			base = base ? base + 1 : path;
			m->python = spulse_is_python_name(base, nw->is_exe);
			spulse_meta_build_id(m, nw->file);
		}
		n = spulse_enc_module(meta.rec, m->id, pid, m->start, m->end,
				      m->pgoff, path, strlen(path), m->bid,
				      m->bid_len);
		if (!spulse_meta_put(meta.rec, n)) {
			all = false;
			goto next;
		}
		*python |= m->python;
		meta.next_id++;
		meta.nmods++;
next:
		if (nw->file)
			fput(nw->file);
	}
	meta.nnew = 0;
	return all;
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

/*
 * Walk @mm's VMAs, then announce the new mappings outside the lock; false
 * if some mapping could not be recorded.
 */
static bool spulse_meta_scan_mm(u32 pid, struct mm_struct *mm, bool *python)
{
	struct vm_area_struct *vma;
	bool all = true;

	mmap_read_lock(mm);
	for (vma = find_vma(mm, 0); vma; vma = find_vma(mm, vma->vm_end))
		if (vma->vm_flags & VM_EXEC)
			all &= spulse_meta_mapping(pid, vma, python);
	mmap_read_unlock(mm);
	return spulse_meta_announce(pid, python) && all;
}

/*
 * Bring @pr up to date with the image @mm (self_exec_id @exec_id): a new
 * image retires the announced one first; a known image is walked again only
 * when its exec_vm or map_count changed, the last walk was incomplete, or
 * SPULSE_META_REWALK passed. @task (may be NULL) gives the root for paths.
 */
static void spulse_meta_scan_image(struct spulse_mproc *pr,
				   struct mm_struct *mm, u64 exec_id,
				   struct task_struct *task)
{
	/* unlocked reads (mmap_lock writers change them): a hint to skip */
	int map_count = data_race(READ_ONCE(mm->map_count));
	/* same: a torn or stale value only causes or skips one walk */
	unsigned long exec_vm = data_race(READ_ONCE(mm->exec_vm));
	bool fresh = pr->exec_id != exec_id + 1ULL;
	bool python = false, all;
	u32 pid = pr->pid, i;
	size_t n;

	if (!fresh && pr->complete && pr->map_count == map_count &&
	    pr->exec_vm == exec_vm &&
	    time_before(jiffies, pr->walked + SPULSE_META_REWALK)) {
		meta.walks_skipped++;
		return;
	}
	if (pr->exec_id && fresh && !spulse_meta_retire_proc(pr))
		return;
	pr->exec_id = exec_id + 1ULL;
	pr->map_count = map_count;
	pr->exec_vm = exec_vm;
	pr->walked = jiffies;
	meta.walks++;
	for (i = 0; i < meta.nmods; i++)
		if (meta.mods[i].pid == pid)
			meta.mods[i].seen = false;
	if (task) {
		spulse_meta_set_root(task);
	} else {
		meta.root = "";
		meta.root_len = 0;
	}
	all = spulse_meta_scan_mm(pid, mm, &python);
	for (i = meta.nmods; i-- > 0;) {
		if (meta.mods[i].pid != pid || meta.mods[i].seen)
			continue;
		n = spulse_enc_module_deactivate(meta.rec, meta.mods[i].id);
		if (spulse_meta_put(meta.rec, n))
			spulse_meta_drop_mod(i);
		else
			all = false;
	}
	if (python != pr->python) {
		n = spulse_enc_python(meta.rec, pid, python ?
				      SPULSE_PYTHON_ENTER : SPULSE_PYTHON_LEAVE);
		if (spulse_meta_put(meta.rec, n))
			pr->python = python;
		else
			all = false;
	}
	pr->complete = all;
}

/*
 * A thread of @leader's group that has not begun to exit, with a reference.
 * The group is alive while any thread is: after the main thread's
 * pthread_exit() the leader is a zombie (PF_EXITING, no mm, no fs) while
 * its other threads run.
 */
static struct task_struct *spulse_meta_live_thread(struct task_struct *leader)
{
	struct task_struct *t, *found = NULL;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (t->flags & PF_EXITING)
			continue;
		get_task_struct(t);
		found = t;
		break;
	}
	rcu_read_unlock();
	return found;
}

/*
 * Rescan one process; retire it when it is gone. @pmm (may be NULL) is an
 * mm a sample of it saw (self_exec_id @pexec); when that is no longer the
 * process's mm (it exited or exec'd since), that image is announced from
 * @pmm itself first.
 */
static void spulse_meta_scan_pid(u32 pid, struct mm_struct *pmm, u64 pexec)
{
	struct spulse_mproc *pr = spulse_meta_proc(pid, false);
	struct task_struct *task = NULL, *live = NULL;
	struct mm_struct *mm = NULL;
	struct pid *p;

	p = find_get_pid(pid);
	if (p) {
		task = get_pid_task(p, PIDTYPE_TGID);
		put_pid(p);
	}
	if (task)
		live = spulse_meta_live_thread(task);
	if (live)
		mm = get_task_mm(live);
	/* a new entry (maybe evicting another) only for an image to scan */
	if (!pr && (mm || pmm))
		pr = spulse_meta_proc(pid, true);
	if (!pr)
		goto out;
	pr->scanned = true;
	/*
	 * self_exec_id grows with every exec of the group: a pending image
	 * older than the announced one is stale (sampled just before an exec
	 * whose new image was announced first); skip it.
	 */
	if (pmm && pmm != mm && pexec + 1ULL >= pr->exec_id) {
		meta.ghost_scans++;
		spulse_meta_scan_image(pr, pmm, pexec, NULL);
		if (!mm)	/* gone: retired by the next pass */
			goto out;
	}
	if (!mm) {
		/* never announced: nothing to retire */
		if (!pr->exec_id || spulse_meta_retire_proc(pr))
			*pr = meta.procs[--meta.nprocs];
		goto out;
	}
	spulse_meta_scan_image(pr, mm, live->self_exec_id, live);
out:
	if (mm)
		mmput(mm);
	if (live)
		put_task_struct(live);
	if (task)
		put_task_struct(task);
}

static void spulse_meta_sampled(u32 pid)
{
	struct spulse_mproc *pr = spulse_meta_proc(pid, false);

	if (pr)
		pr->sampled = jiffies;
}

/* The processes the handlers left: scan each (only those), drop the refs. */
static void spulse_meta_scan_pending(void)
{
	int i;

	for (i = 0; i < SPULSE_META_PENDING; i++) {
		struct spulse_mpend *p = &meta.pend[i];
		struct mm_struct *mm;
		u64 exec_id;
		u32 pid;

		if (atomic_read_acquire(&p->state) != SPULSE_MPEND_READY)
			continue;
		pid = p->pid;
		exec_id = p->exec_id;
		mm = p->mm;
		p->mm = NULL;
		atomic_set_release(&p->state, SPULSE_MPEND_FREE);
		if (meta.header_done) {
			spulse_meta_sampled(pid);
			spulse_meta_scan_pid(pid, mm, exec_id);
		}
		mmput(mm);
	}
}

static void spulse_meta_scan(bool full)
{
	u32 i, j;
	int cpu;

	for (i = 0; i < meta.nprocs; i++)
		meta.procs[i].scanned = false;
	spulse_meta_scan_pending();
	if (!full)
		goto publish;
	if (spulse.p.target_pid) {
		spulse_meta_sampled(spulse.p.target_pid);
		spulse_meta_scan_pid(spulse.p.target_pid, NULL, 0);
	} else {
		for_each_possible_cpu(cpu) {
			struct spulse_cpu *c = per_cpu_ptr(spulse.cpu, cpu);

			for (j = 0; j < SPULSE_PID_RING; j++) {
				u32 pid = READ_ONCE(c->pids[j]);
				struct spulse_mproc *pr;

				if (!pid)
					continue;
				pr = spulse_meta_proc(pid, false);
				if (pr)
					pr->sampled = jiffies;
				if (!pr || !pr->scanned)
					spulse_meta_scan_pid(pid, NULL, 0);
			}
		}
	}
	/* tracked processes not sampled lately: still alive? */
	for (i = meta.nprocs; i-- > 0;)
		if (!meta.procs[i].scanned)
			spulse_meta_scan_pid(meta.procs[i].pid, NULL, 0);
publish:
	spulse_meta_publish();
	WRITE_ONCE(meta.last_scan, jiffies);
}

static void spulse_meta_work(struct work_struct *w)
{
	unsigned long delay;
	bool full;

	mutex_lock(&meta.lock);
	clear_bit(SPULSE_META_KICKED, &meta.kick_pending);
	full = test_and_clear_bit(SPULSE_META_FULL, &meta.kick_pending) ||
	       !time_before(jiffies, meta.next_full);
	if (full)
		meta.next_full = jiffies + SPULSE_META_PERIOD;
	if (meta.header_done)
		spulse_meta_scan(full);
	else
		spulse_meta_scan_pending();
	delay = time_before(jiffies, meta.next_full) ?
		meta.next_full - jiffies : 0;
	mutex_unlock(&meta.lock);
	if (!READ_ONCE(meta.on))
		return;
	/* a kick that came while scanning must not be pushed back */
	if (test_bit(SPULSE_META_KICKED, &meta.kick_pending))
		delay = min_t(unsigned long, delay, SPULSE_META_KICK_GAP);
	mod_delayed_work(spulse_system_percpu_wq, &meta.work, delay);
}

/* The last scan of a stop (spulse_meta_stop()), in worker context. */
static void spulse_meta_last(struct work_struct *w)
{
	mutex_lock(&meta.lock);
	if (meta.header_done)
		spulse_meta_scan(true);
	else
		spulse_meta_scan_pending();
	mutex_unlock(&meta.lock);
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
	set_bit(SPULSE_META_FULL, &meta.kick_pending);
	WRITE_ONCE(meta.on, true);
	mutex_unlock(&meta.lock);
	mod_delayed_work(spulse_system_percpu_wq, &meta.work, 0);
}

/**
 * spulse_meta_stop() - one last scan, then no more work until start
 *
 * Every path that queues the work (the worker itself, the kick's
 * irq_work, the exec/exit probes) checks meta.on first, and those that
 * run in the handlers or probes do so with preemption off: once
 * synchronize_rcu() returns, none that saw it on is still going, then the
 * kick and the work are flushed, so the work never runs again after stop
 * returns (it used to when a kick or an exec/exit probe was in flight).
 */
void spulse_meta_stop(void)
{
	WRITE_ONCE(meta.on, false);
	synchronize_rcu();
	irq_work_sync(&meta.kick);
	cancel_delayed_work_sync(&meta.work);
	/*
	 * The last scan runs in the worker too: find_get_pid() and d_path()
	 * resolve in the caller's pid namespace and against its root, and a
	 * stop written from a child pid namespace or a chroot must neither
	 * retire the live target nor see its paths from there.
	 */
	queue_work(spulse_system_percpu_wq, &meta.last);
	flush_work(&meta.last);
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
 * spulse_meta_position_show() - the meta file's published and read bytes
 * @m: the stats file
 *
 * Lines meta_published and meta_read (spulse_relay_position()), none when
 * there is no meta file or no consistent reading.
 */
void spulse_meta_position_show(struct seq_file *m)
{
	u64 pub, rd;

	if (!meta.chan)
		return;
	mutex_lock(&meta.lock);
	if (spulse_relay_position(*per_cpu_ptr(meta.chan->buf, 0), &pub, &rd)) {
		seq_printf(m, "meta_published %llu\n", pub);
		seq_printf(m, "meta_read %llu\n", rd);
	}
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
 * spulse_meta_stats_show() - the meta worker's stats keys
 * @m: the stats file
 *
 * Keys documented in docs/KERNEL.md ("The meta stream").
 */
void spulse_meta_stats_show(struct seq_file *m)
{
	/* lockless (a pass may be reading a file): each value is a snapshot */
	seq_printf(m, "meta_processes %u\n", READ_ONCE(meta.nprocs));
	seq_printf(m, "meta_modules %u\n", READ_ONCE(meta.nmods));
	seq_printf(m, "meta_walks %llu\n", READ_ONCE(meta.walks));
	seq_printf(m, "meta_walks_skipped %llu\n",
		   READ_ONCE(meta.walks_skipped));
	seq_printf(m, "meta_missed_taken %lld\n",
		   (long long)atomic64_read(&meta.pend_taken));
	seq_printf(m, "meta_missed_full %lld\n",
		   (long long)atomic64_read(&meta.pend_full));
	seq_printf(m, "meta_gone_scans %llu\n", READ_ONCE(meta.ghost_scans));
	seq_printf(m, "meta_processes_full %llu\n",
		   READ_ONCE(meta.procs_full));
	seq_printf(m, "meta_processes_evicted %llu\n",
		   READ_ONCE(meta.procs_evicted));
	seq_printf(m, "meta_modules_full %llu\n", READ_ONCE(meta.mods_full));
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
	INIT_WORK(&meta.last, spulse_meta_last);
	init_irq_work(&meta.kick, spulse_meta_kick_fn);
	meta.inited = true;
	meta.mods = kvcalloc(SPULSE_META_MAX_MODS, sizeof(*meta.mods),
			     GFP_KERNEL);
	meta.spans = kvcalloc(SPULSE_META_MAX_MODS, sizeof(*meta.spans),
			      GFP_KERNEL);
	meta.sorted = kvcalloc(SPULSE_META_MAX_MODS, sizeof(*meta.sorted),
			       GFP_KERNEL);
	meta.procs = kvcalloc(SPULSE_META_MAX_PROCS, sizeof(*meta.procs),
			      GFP_KERNEL);
	meta.newv = kvcalloc(SPULSE_META_NEW_MAX, sizeof(*meta.newv),
			     GFP_KERNEL);
	meta.pathbuf = kmalloc(PATH_MAX, GFP_KERNEL);
	meta.rootbuf = kmalloc(PATH_MAX, GFP_KERNEL);
	meta.rec = kmalloc(SPULSE_MAX_RECORD, GFP_KERNEL);
	if (!meta.mods || !meta.spans || !meta.sorted || !meta.procs ||
	    !meta.newv || !meta.pathbuf ||
	    !meta.rootbuf || !meta.rec)
		return -ENOMEM;
	meta.chan = spulse_relay_open_global("meta", spulse.dir,
					     SPULSE_META_SUBBUF,
					     SPULSE_META_NSUBBUF, &meta.rpos);
	return meta.chan ? 0 : -ENOMEM;
}

/**
 * spulse_meta_exit() - stop the work and free everything
 *
 * Called after the perf events are released, so no new kick can come.
 */
void spulse_meta_exit(void)
{
	int i;

	if (!meta.inited)
		return;
	irq_work_sync(&meta.kick);
	cancel_delayed_work_sync(&meta.work);
	cancel_work_sync(&meta.last);
	for (i = 0; i < SPULSE_META_PENDING; i++) {
		/* no handler runs any more: every slot is FREE or READY */
		if (meta.pend[i].mm)
			mmput(meta.pend[i].mm);
		meta.pend[i].mm = NULL;
		atomic_set(&meta.pend[i].state, SPULSE_MPEND_FREE);
	}
	if (meta.chan)
		relay_close(meta.chan);
	meta.chan = NULL;
	kvfree(meta.mods);
	kvfree(meta.spans);
	kvfree(meta.sorted);
	kvfree(meta.procs);
	kvfree(meta.newv);
	kfree(meta.pathbuf);
	kfree(meta.rootbuf);
	kfree(meta.rec);
	meta.inited = false;
}
