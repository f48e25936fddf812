/* SPDX-License-Identifier: MIT */
/*
 * Synthetic profile generator. The shape, in words:
 *
 * - 1 + (threads - 1) / 3 processes; the threads are spread over them. The
 *   second process (the first if there is only one) is a CPython
 *   interpreter and emits Python runtime enter/leave records.
 * - Every process maps three modules: its executable, libc and a third
 *   library (a plugin, or libpython for the interpreter).
 * - Each process owns SYNTH_PATHS call paths drawn from one random call tree:
 *   a path is a walk from _start through main, where each level picks a child
 *   with Zipf weights, so hot prefixes are shared by many paths. The frame at
 *   a level is a hash of the choices so far, so equal prefixes give equal
 *   frames and the Recorder shares their stack nodes. Leaves sometimes sit in
 *   libc or the third library.
 * - About one path in five ends in a syscall or page fault: kernel frames
 *   (absolute kernel addresses) on top of the user chain.
 * - Paths longer than the depth limit keep their innermost frames under a
 *   truncated-marker root.
 * - Samples pick a thread and a path with Zipf weights; times advance by
 *   0.5 ms plus 0-120 us of jitter (deltas vary, stay positive).
 * - About a dozen events spread over the run: a plugin is unmapped and mapped
 *   elsewhere (module deactivation), a process execs (process deactivation,
 *   new modules, threads redefined with a new comm), the interpreter leaves
 *   and re-enters Python mode, one process exits.
 * - Optional extension records (FORMAT.md 3.10), drawn from a PRNG of their
 *   own so the samples stay the same: cpu records (every thread has a CPU
 *   it mostly stays on), off-CPU intervals spread evenly over the run (see
 *   off_kinds[] for the mix of states, durations and wakers; a wakeup's
 *   stack is the waker's user path plus the kernel wakeup path), triggers
 *   (reasons 1-4 in turn) and unknown extension kinds (zero payload).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "synth_model.h"

#define SYNTH_PATHS		512
#define SYNTH_BRANCH		6
#define SYNTH_FUNCS_EXE		4096
#define SYNTH_FUNCS_LIB		1024
#define SYNTH_FUNC_SIZE		64
#define SYNTH_START_US		1767225600000000ULL	/* 2026-01-01 */
#define SYNTH_INTERVAL_US	1000
#define SYNTH_STEP_NS		500000
#define SYNTH_JITTER_NS		120000
#define SYNTH_EVENTS		12
#define SYNTH_KERNEL_TAG	0xff	/* pframe.mod of a kernel frame */

static const char *const kernel_funcs[] = {
	"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_read",
	"ksys_read", "vfs_read", "ext4_file_read_iter", "filemap_read",
	"copy_user_enhanced_fast_string", "__x64_sys_write", "ksys_write",
	"vfs_write", "pipe_write", "__x64_sys_futex", "do_futex",
	"futex_wait", "schedule", "__schedule", "asm_exc_page_fault",
	"exc_page_fault", "do_user_addr_fault", "handle_mm_fault",
	"clear_page_erms",
	/* 22..: off-CPU (switch-out) and wakeup paths (--off-cpu) */
	"pipe_read", "folio_wait_bit_common", "io_schedule",
	"asm_sysvec_apic_timer_interrupt", "irqentry_exit",
	"preempt_schedule_irq", "__x64_sys_nanosleep", "hrtimer_nanosleep",
	"do_nanosleep", "futex_wake", "wake_up_q", "try_to_wake_up",
	"__wake_up_common_lock", "hrtimer_interrupt", "hrtimer_wakeup",
	"asm_common_interrupt", "blk_mq_end_request", "folio_wake_bit",
	"do_signal_stop", "get_signal", "arch_do_signal_or_restart",
	"exit_to_user_mode_prepare",
};

#define N_KFUNCS (sizeof(kernel_funcs) / sizeof(kernel_funcs[0]))

/* Kernel chains (indexes into kernel_funcs), outermost first. */
static const uint8_t kchains[][8] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7 },
	{ 0, 1, 8, 9, 10, 11, 0xff },
	{ 0, 1, 12, 13, 14, 15, 16, 0xff },
	{ 17, 18, 19, 20, 21, 0xff },
};

#define N_KCHAINS (sizeof(kchains) / sizeof(kchains[0]))

unsigned int synth_kernel_nfuncs(void)
{
	return N_KFUNCS;
}

const char *synth_kernel_func(unsigned int i)
{
	return i < N_KFUNCS ? kernel_funcs[i] : NULL;
}

int synth_write_kallsyms(FILE *f)
{
	unsigned int i;

	for (i = 0; i < N_KFUNCS; i++)
		fprintf(f, "%016llx T %s\n",
			(unsigned long long)(SYNTH_KBASE + i * SYNTH_KFUNC_SIZE),
			kernel_funcs[i]);
	fprintf(f, "ffffffffc0000000 t spulse_handler\t[spulse]\n");
	return ferror(f) ? -EIO : 0;
}

int synth_zipf_init(struct synth_zipf *z, uint32_t n)
{
	uint64_t acc = 0;
	uint32_t k;

	z->n = n;
	z->cdf = malloc(sizeof(*z->cdf) * (n ? n : 1));
	if (!z->cdf)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		acc += 1000000000000ULL / (k + 1);
		z->cdf[k] = acc;
	}
	return 0;
}

uint32_t synth_zipf_pick(const struct synth_zipf *z, struct synth_rng *r)
{
	uint64_t u;
	uint32_t lo = 0, hi = z->n - 1;

	if (z->n <= 1)
		return 0;
	u = synth_rng_below(r, z->cdf[z->n - 1]);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (z->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void synth_zipf_free(struct synth_zipf *z)
{
	free(z->cdf);
	z->cdf = NULL;
}

/* One frame of a path: a function of a module slot, or a kernel function. */
struct pframe {
	uint8_t mod;		/* 0 exe, 1 libc, 2 third lib, SYNTH_KERNEL_TAG */
	uint32_t func;
};

struct path {
	uint32_t n;		/* frames, root first */
	bool truncated;		/* root is the truncated marker */
	struct pframe *f;
};

struct smod {
	uint32_t id;
	uint64_t start, end, file_offset;
};

struct proc {
	uint32_t pid;
	bool python, alive, in_python;
	uint32_t gen;		/* exec / remap generation */
	uint32_t plugin_gen;
	struct smod mods[3];
	struct path paths[SYNTH_PATHS];
	uint32_t *leaf;		/* cached leaf stack id per path, or NONE */
};

struct sthread {
	struct proc *proc;
	uint32_t tid;
	uint32_t rec_id;	/* recorder thread id for the current comm */
	uint32_t index;		/* within the process */
};

struct model {
	struct spulse_recorder *rec;
	const struct synth_params *p;
	struct synth_rng rng;
	uint32_t nproc;
	struct proc *procs;
	struct sthread *threads;
	struct synth_zipf path_zipf, thread_zipf, branch_zipf;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	struct synth_rng r = { a ^ (b * 0x2545f4914f6cdd1dULL) };

	return synth_rng_next(&r);
}

static void proc_exe_name(const struct proc *pr, char *buf, size_t len)
{
	if (pr->python)
		snprintf(buf, len, "python3.11");
	else if (pr->gen == 0)
		snprintf(buf, len, "synth-app%u", pr->pid);
	else
		snprintf(buf, len, "synth-app%u-exec%u", pr->pid, pr->gen);
}

static int define_module(struct model *m, struct proc *pr, int slot)
{
	static const uint64_t sizes[3] = {
		SYNTH_FUNCS_EXE * SYNTH_FUNC_SIZE,
		SYNTH_FUNCS_LIB * SYNTH_FUNC_SIZE,
		SYNTH_FUNCS_LIB * SYNTH_FUNC_SIZE,
	};
	static const uint64_t offsets[3] = { 0x1000, 0x28000, 0x4000 };
	struct smod *sm = &pr->mods[slot];
	char name[64], path[160];
	uint8_t build_id[20];
	uint64_t base, h;
	unsigned int i;

	proc_exe_name(pr, name, sizeof(name));
	switch (slot) {
	case 0:
		snprintf(path, sizeof(path), "/synth/usr/bin/%s", name);
		base = 0x555555554000ULL + ((uint64_t)pr->pid << 24) +
		       ((uint64_t)pr->gen << 32);
		break;
	case 1:
		snprintf(path, sizeof(path),
			 "/synth/usr/lib/x86_64-linux-gnu/libc.so.6");
		base = 0x7f0000000000ULL + ((uint64_t)pr->pid << 28) +
		       ((uint64_t)pr->gen << 24);
		break;
	default:
		if (pr->python)
			snprintf(path, sizeof(path),
				 "/synth/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
		else
			snprintf(path, sizeof(path),
				 "/synth/usr/lib/libplugin%u.so", pr->pid);
		base = 0x7e0000000000ULL + ((uint64_t)pr->pid << 28) +
		       ((uint64_t)pr->plugin_gen << 22) +
		       ((uint64_t)pr->gen << 20);
		break;
	}
	sm->start = base + offsets[slot];
	sm->end = sm->start + sizes[slot];
	sm->file_offset = offsets[slot];
	h = mix(m->p->seed, (uint64_t)strlen(path) * 131 + pr->pid);
	for (i = 0; i < sizeof(build_id); i++) {
		h = mix(h, path[i % strlen(path)]);
		build_id[i] = (uint8_t)h;
	}
	return spulse_rec_module(m->rec, pr->pid, sm->start, sm->end,
				 sm->file_offset, path, build_id,
				 sizeof(build_id), &sm->id);
}

static void invalidate_paths(struct proc *pr)
{
	uint32_t i;

	for (i = 0; i < SYNTH_PATHS; i++)
		pr->leaf[i] = SPULSE_NONE;
}

static int define_threads(struct model *m, struct proc *pr)
{
	char comm[64];
	uint32_t i;
	int rc;

	for (i = 0; i < m->p->threads; i++) {
		struct sthread *t = &m->threads[i];

		if (t->proc != pr)
			continue;
		if (t->index == 0)
			proc_exe_name(pr, comm, sizeof(comm));
		else
			snprintf(comm, sizeof(comm), "%s-%u",
				 pr->python ? "py-worker" : "worker", t->index);
		comm[15] = 0;	/* TASK_COMM_LEN */
		rc = spulse_rec_thread(m->rec, pr->pid, t->tid, comm,
				       &t->rec_id);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int map_process(struct model *m, struct proc *pr)
{
	int slot, rc;

	for (slot = 0; slot < 3; slot++) {
		rc = define_module(m, pr, slot);
		if (rc < 0)
			return rc;
	}
	invalidate_paths(pr);
	return define_threads(m, pr);
}

/* Build the paths of a process from its random call tree. */
static int build_paths(struct model *m, struct proc *pr)
{
	uint32_t maxd = m->p->depth + 6, i, l;

	for (i = 0; i < SYNTH_PATHS; i++) {
		struct path *pa = &pr->paths[i];
		uint32_t d = 3 + (uint32_t)synth_rng_below(&m->rng, maxd - 2);
		uint64_t key = mix(m->p->seed, pr->pid);
		struct pframe *f;
		uint32_t n = 0, kchain = SPULSE_NONE, kn = 0;

		if (synth_rng_below(&m->rng, 5) == 0) {
			kchain = (uint32_t)synth_rng_below(&m->rng, N_KCHAINS);
			while (kn < 8 && kchains[kchain][kn] != 0xff)
				kn++;
		}
		f = calloc(d + kn + 1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		f[n++] = (struct pframe){ 0, 0 };	/* _start */
		f[n++] = (struct pframe){ 0, 1 };	/* main */
		for (l = 2; l < d; l++) {
			uint32_t c = synth_zipf_pick(&m->branch_zipf, &m->rng);
			struct pframe pf;

			key = mix(key, c + 1);
			pf.mod = 0;
			pf.func = 2 + (uint32_t)(key % (SYNTH_FUNCS_EXE - 2));
			if (l + 2 >= d && key % 3 == 0) {
				pf.mod = (uint8_t)(1 + (key >> 8) % 2);
				pf.func = (uint32_t)((key >> 16) %
						     SYNTH_FUNCS_LIB);
			}
			f[n++] = pf;
		}
		if (kchain != SPULSE_NONE) {
			/* the user leaf is a libc syscall wrapper */
			if (kchain != N_KCHAINS - 1)
				f[n++] = (struct pframe){ 1, kchain };
			for (l = 0; l < kn; l++)
				f[n++] = (struct pframe){ SYNTH_KERNEL_TAG,
							  kchains[kchain][l] };
		}
		pa->f = f;
		pa->n = n;
		pa->truncated = n > m->p->depth;
	}
	return 0;
}

static uint64_t pframe_addr(const struct proc *pr, const struct pframe *f)
{
	uint64_t within = 8 + (f->func * 7) % (SYNTH_FUNC_SIZE - 16);

	if (f->mod == SYNTH_KERNEL_TAG)
		return SYNTH_KBASE + f->func * SYNTH_KFUNC_SIZE + 0x20 +
		       within;
	return pr->mods[f->mod].start + (uint64_t)f->func * SYNTH_FUNC_SIZE +
	       within;
}

/* Intern the stack of path @i of @pr; returns its leaf node in *leaf. */
static int intern_path(struct model *m, struct proc *pr, uint32_t i,
		       uint32_t *leaf)
{
	const struct path *pa = &pr->paths[i];
	uint32_t ids[SPULSE_MAX_DEPTH], n = 0, first = 0, k;
	int rc;

	if (pa->truncated) {
		rc = spulse_rec_frame_truncated(m->rec, &ids[n++]);
		if (rc < 0)
			return rc;
		first = pa->n - (m->p->depth - 1);
	}
	for (k = first; k < pa->n; k++) {
		const struct pframe *f = &pa->f[k];
		bool kernel = f->mod == SYNTH_KERNEL_TAG;
		/* exact: the leaf, and the user IP at kernel entry */
		bool exact = k == pa->n - 1 ||
			     (!kernel && pa->f[k + 1].mod == SYNTH_KERNEL_TAG);

		rc = spulse_rec_frame_addr(m->rec, pr->pid, pframe_addr(pr, f),
					   kernel, !exact, &ids[n++]);
		if (rc < 0)
			return rc;
	}
	return spulse_rec_stack_frames(m->rec, ids, n, leaf);
}

static int alive_count(const struct model *m)
{
	uint32_t i;
	int n = 0;

	for (i = 0; i < m->nproc; i++)
		n += m->procs[i].alive;
	return n;
}

/* Event @ev of the run: remap, python toggle, exec, exit. */
static int run_event(struct model *m, uint32_t ev)
{
	struct proc *pr = &m->procs[ev % m->nproc];
	struct proc *py = &m->procs[m->nproc > 1 ? 1 : 0];
	int rc;

	if (!pr->alive)
		return 0;
	switch (ev % 4) {
	case 0:	/* plugin munmap + mmap elsewhere */
		rc = spulse_rec_module_deactivate(m->rec, pr->mods[2].id);
		if (rc < 0)
			return rc;
		pr->plugin_gen++;
		rc = define_module(m, pr, 2);
		invalidate_paths(pr);
		return rc;
	case 1:	/* the interpreter leaves or re-enters Python mode */
		if (!py->alive)
			return 0;
		py->in_python = !py->in_python;
		return spulse_rec_python(m->rec, py->pid, py->in_python);
	case 2:	/* exec: every mapping retired, threads renamed */
		if (pr->python)
			return 0;
		rc = spulse_rec_process_deactivate(m->rec, pr->pid);
		if (rc < 0)
			return rc;
		pr->gen++;
		return map_process(m, pr);
	default: /* exit, once, while another process lives */
		if (ev != 7 || alive_count(m) < 2)
			return 0;
		pr->alive = false;
		if (pr->python)
			rc = spulse_rec_python(m->rec, pr->pid, false);
		else
			rc = 0;
		return rc < 0 ? rc : spulse_rec_process_deactivate(m->rec,
								   pr->pid);
	}
}

/* ---- extension records (--cpus, --off-cpu, --triggers, --unknown-ext) -- */

#define KF_END	0xff

/*
 * Why threads go off CPU in the model. Kernel chains are indexes into
 * kernel_funcs, outermost first, on top of the thread's user path; the
 * switch-out chain ends in the scheduler. Durations are log-uniform in
 * [lo, hi) nanoseconds. @irq_waker: the wakeup runs in interrupt context on
 * top of whatever thread was running there.
 */
struct off_kind {
	uint8_t state;
	unsigned int weight;		/* of 100 */
	uint8_t out[12], wake[10];	/* KF_END-terminated; wake[0] = KF_END: none */
	uint64_t blocked_lo, blocked_hi, runq_lo, runq_hi;
	unsigned int waker_pct;
	bool irq_waker;
};

static const struct off_kind off_kinds[] = {
	/* preempted by the tick: runnable, no blocked time, no waker */
	{ SPULSE_STATE_RUNNABLE, 30, { 25, 26, 27, 16, KF_END }, { KF_END },
	  0, 0, 5000, 4000000, 0, false },
	/* futex wait, woken by futex_wake of another thread */
	{ SPULSE_STATE_SLEEPING, 20, { 0, 1, 12, 13, 14, 15, 16, KF_END },
	  { 0, 1, 12, 13, 31, 32, 33, KF_END },
	  10000, 50000000, 1000, 500000, 90, false },
	/* pipe read, woken by the writer */
	{ SPULSE_STATE_SLEEPING, 15, { 0, 1, 2, 3, 4, 22, 15, 16, KF_END },
	  { 0, 1, 8, 9, 10, 11, 34, 33, KF_END },
	  5000, 10000000, 1000, 300000, 90, false },
	/* nanosleep, woken by the timer interrupt */
	{ SPULSE_STATE_SLEEPING, 12, { 0, 1, 28, 29, 30, 15, 16, KF_END },
	  { 25, 35, 36, 33, KF_END },
	  1000000, 100000000, 2000, 800000, 100, true },
	/* page-cache read waiting for the disk, woken by the I/O interrupt */
	{ SPULSE_STATE_DISK, 18,
	  { 0, 1, 2, 3, 4, 5, 6, 23, 24, 15, 16, KF_END },
	  { 37, 38, 39, 34, 33, KF_END },
	  50000, 20000000, 2000, 1000000, 95, true },
	/* job-control stop (SIGSTOP ... SIGCONT), no waker recorded */
	{ SPULSE_STATE_STOPPED, 5, { 0, 1, 43, 42, 41, 40, 15, 16, KF_END },
	  { KF_END }, 10000000, 500000000, 5000, 200000, 0, false },
};

#define N_OFF_KINDS (sizeof(off_kinds) / sizeof(off_kinds[0]))

struct ext_state {
	struct synth_rng rng;		/* independent of the sample PRNG */
	uint32_t ncpu;			/* 0 = no cpu fields at all */
	uint32_t *tcpu;			/* current CPU of each model thread */
	uint64_t offcpu_done, triggers_done, unknown_done;
	uint32_t seq;
	/* longest intervals since the last trigger, for reasons 3 and 4 */
	uint64_t max_total, max_runq;
	uint32_t max_total_tid, max_runq_tid;
	uint8_t max_total_state;
	struct synth_stats *st;
};

/* Log-uniform in [lo, hi): an octave, then a point inside it. */
static uint64_t log_uniform(struct synth_rng *r, uint64_t lo, uint64_t hi)
{
	unsigned int octaves = 0;
	uint64_t base, v;

	if (hi <= lo)
		return lo;
	while (octaves < 40 && (lo << (octaves + 1)) < hi)
		octaves++;
	base = lo << synth_rng_below(r, octaves + 1);
	v = base + synth_rng_below(r, base);
	return v < hi ? v : hi - 1;
}

/*
 * Intern the mixed stack "user frames of path @pi of @pr, then kernel
 * chain @chain" (innermost frames kept under a truncated marker when deeper
 * than the depth limit).
 */
static int intern_mixed(struct model *m, struct proc *pr, uint32_t pi,
			const uint8_t *chain, uint32_t *leaf)
{
	const struct path *pa = &pr->paths[pi];
	uint32_t ids[SPULSE_MAX_DEPTH], nuser = 0, nk = 0, total, first, k, n = 0;
	int rc;

	while (nuser < pa->n && pa->f[nuser].mod != SYNTH_KERNEL_TAG)
		nuser++;
	while (nk < 12 && chain[nk] != KF_END)
		nk++;
	total = nuser + nk;
	first = 0;
	if (total > m->p->depth) {
		rc = spulse_rec_frame_truncated(m->rec, &ids[n++]);
		if (rc < 0)
			return rc;
		first = total - (m->p->depth - 1);
	}
	for (k = first; k < total; k++) {
		bool kernel = k >= nuser;
		/* exact: the user IP at kernel entry; the rest return addresses */
		bool exact = k + 1 == nuser;
		uint64_t addr;

		if (kernel) {
			struct pframe f = { SYNTH_KERNEL_TAG, chain[k - nuser] };

			addr = pframe_addr(pr, &f);
		} else {
			addr = pframe_addr(pr, &pa->f[k]);
		}
		rc = spulse_rec_frame_addr(m->rec, pr->pid, addr, kernel,
					   !exact, &ids[n++]);
		if (rc < 0)
			return rc;
	}
	return spulse_rec_stack_frames(m->rec, ids, n, leaf);
}

static uint32_t pick_alive_thread(struct model *m, struct synth_rng *r)
{
	uint32_t ti = (uint32_t)synth_rng_below(r, m->p->threads);

	while (!m->threads[ti].proc->alive)
		ti = (ti + 1) % m->p->threads;
	return ti;
}

/* A waker for thread @ti: another live thread, of the same process if it can. */
static uint32_t pick_waker(struct model *m, struct synth_rng *r, uint32_t ti)
{
	uint32_t i, w, n = m->p->threads;

	if (n < 2)
		return SPULSE_NONE;
	for (i = 0; i < 8; i++) {
		w = (uint32_t)synth_rng_below(r, n);
		if (w != ti && m->threads[w].proc->alive &&
		    m->threads[w].proc == m->threads[ti].proc)
			return w;
	}
	for (i = 1; i < n; i++) {
		w = (ti + i) % n;
		if (m->threads[w].proc->alive)
			return w;
	}
	return SPULSE_NONE;
}

static int emit_offcpu(struct model *m, struct ext_state *x, int64_t now)
{
	struct synth_rng *r = &x->rng;
	const struct off_kind *k = &off_kinds[N_OFF_KINDS - 1];
	unsigned int w = (unsigned int)synth_rng_below(r, 100), acc = 0, i;
	uint32_t ti = pick_alive_thread(m, r), wi = SPULSE_NONE;
	struct sthread *t = &m->threads[ti];
	struct spulse_offcpu iv = { .waker_thread = SPULSE_NONE,
				    .waker_stack = SPULSE_NONE,
				    .waker_cpu = SPULSE_NONE };
	uint64_t total;
	int rc;

	for (i = 0; i < N_OFF_KINDS; i++) {
		acc += off_kinds[i].weight;
		if (w < acc) {
			k = &off_kinds[i];
			break;
		}
	}
	iv.state = k->state;
	iv.thread = t->rec_id;
	/* threads block at hot call sites too */
	rc = intern_mixed(m, t->proc, synth_zipf_pick(&m->path_zipf, r),
			  k->out, &iv.stack);
	if (rc < 0)
		return rc;
	iv.blocked_ns = k->blocked_hi ?
			log_uniform(r, k->blocked_lo, k->blocked_hi) : 0;
	iv.runq_ns = log_uniform(r, k->runq_lo, k->runq_hi);
	if (synth_rng_below(r, 100) < 3)	/* now and then a long run-queue wait */
		iv.runq_ns += log_uniform(r, 2000000, 20000000);
	iv.cpu_out = x->tcpu[ti];
	iv.cpu_in = synth_rng_below(r, 100) < 80 ? iv.cpu_out :
		    (uint32_t)synth_rng_below(r, x->ncpu);
	x->tcpu[ti] = iv.cpu_in;
	if (k->wake[0] != KF_END && synth_rng_below(r, 100) < k->waker_pct)
		wi = pick_waker(m, r, ti);
	if (wi != SPULSE_NONE) {
		struct sthread *wt = &m->threads[wi];

		iv.waker_thread = wt->rec_id;
		iv.waker_cpu = k->irq_waker ? iv.cpu_out : x->tcpu[wi];
		rc = intern_mixed(m, wt->proc,
				  synth_zipf_pick(&m->path_zipf, r), k->wake,
				  &iv.waker_stack);
		if (rc < 0)
			return rc;
	}
	/* written when it closes: it started total ns before now */
	total = iv.blocked_ns + iv.runq_ns;
	iv.time_ns = (uint64_t)now > total ? now - (int64_t)total : 0;
	rc = spulse_rec_offcpu(m->rec, &iv);
	if (rc < 0)
		return rc;
	if (total > x->max_total) {
		x->max_total = total;
		x->max_total_tid = t->tid;
		x->max_total_state = iv.state;
	}
	if (iv.runq_ns > x->max_runq) {
		x->max_runq = iv.runq_ns;
		x->max_runq_tid = t->tid;
	}
	x->offcpu_done++;
	if (x->st) {
		x->st->offcpu++;
		x->st->with_waker += wi != SPULSE_NONE;
		x->st->by_state[iv.state]++;
	}
	return 0;
}

static int emit_trigger(struct model *m, struct ext_state *x, int64_t now)
{
	char text[SPULSE_MAX_TRIGGER_TEXT];
	struct spulse_trigger t = { .time_ns = now };
	uint64_t n = x->triggers_done;
	int len, rc;

	t.reason = (uint8_t)(SPULSE_TRIGGER_MANUAL + n % SPULSE_TRIGGER_REASON_MAX);
	switch (t.reason) {
	case SPULSE_TRIGGER_MANUAL:	/* a kernel mark: no number, no window */
		len = snprintf(text, sizeof(text), "manual trigger (debugfs)");
		break;
	case SPULSE_TRIGGER_SIGNAL:
		len = snprintf(text, sizeof(text), "SIGUSR1 to spulse record");
		break;
	case SPULSE_TRIGGER_OFFCPU:	/* the longest interval since the last */
		t.value_ns = x->max_total ? x->max_total : 81200000;
		t.threshold_ns = t.value_ns - t.value_ns / 4;
		len = snprintf(text, sizeof(text),
			       "offcpu>%.1fms tid %u state %s %.1fms",
			       (double)t.threshold_ns / 1e6, x->max_total_tid,
			       spulse_state_name(x->max_total_state),
			       (double)t.value_ns / 1e6);
		x->max_total = 0;
		break;
	default:
		t.value_ns = x->max_runq ? x->max_runq : 12000000;
		t.threshold_ns = t.value_ns - t.value_ns / 4;
		len = snprintf(text, sizeof(text),
			       "runq>%.1fms tid %u %.1fms",
			       (double)t.threshold_ns / 1e6, x->max_runq_tid,
			       (double)t.value_ns / 1e6);
		x->max_runq = 0;
		break;
	}
	if (t.reason != SPULSE_TRIGGER_MANUAL) {
		t.seq = ++x->seq;
		/* the flight window: 5 s before, 1 s after */
		t.window_start_ns = now > 5000000000LL ?
				    (uint64_t)now - 5000000000ULL : 0;
		t.window_end_ns = (uint64_t)now + 1000000000ULL;
	}
	t.text = text;
	t.text_len = len < 0 ? 0 : (uint32_t)len;
	rc = spulse_rec_trigger(m->rec, &t);
	if (rc < 0)
		return rc;
	x->triggers_done++;
	if (x->st)
		x->st->triggers++;
	return 0;
}

static int emit_unknown(struct model *m, struct ext_state *x)
{
	static const uint8_t zeros[32];
	uint64_t n = x->unknown_done;
	int rc;

	rc = spulse_rec_ext_raw(m->rec, 100 + (uint32_t)(n % 5), zeros,
				(size_t)(n % 17));
	if (rc < 0)
		return rc;
	x->unknown_done++;
	if (x->st)
		x->st->unknown_ext++;
	return 0;
}

/* How many of @total are due once @done + 1 of @steps steps are done. */
static uint64_t due(uint64_t total, uint64_t done, uint64_t steps)
{
	return (uint64_t)((unsigned __int128)total * (done + 1) / steps);
}

/* The extension records due after sample @i (of @steps) at time @now. */
static int emit_ext(struct model *m, struct ext_state *x, uint64_t i,
		    uint64_t steps, int64_t now)
{
	const struct synth_params *p = m->p;
	int rc;

	while (x->offcpu_done < due(p->offcpu, i, steps)) {
		rc = emit_offcpu(m, x, now);
		if (rc < 0)
			return rc;
	}
	while (x->triggers_done < due(p->triggers, i, steps)) {
		rc = emit_trigger(m, x, now);
		if (rc < 0)
			return rc;
	}
	while (x->unknown_done < due(p->unknown_ext, i, steps)) {
		rc = emit_unknown(m, x);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int setup(struct model *m)
{
	uint32_t i;
	int rc;

	m->nproc = 1 + (m->p->threads - 1) / 3;
	m->procs = calloc(m->nproc, sizeof(*m->procs));
	m->threads = calloc(m->p->threads, sizeof(*m->threads));
	if (!m->procs || !m->threads)
		return -ENOMEM;
	if (synth_zipf_init(&m->path_zipf, SYNTH_PATHS) ||
	    synth_zipf_init(&m->thread_zipf, m->p->threads) ||
	    synth_zipf_init(&m->branch_zipf, SYNTH_BRANCH))
		return -ENOMEM;
	for (i = 0; i < m->nproc; i++) {
		struct proc *pr = &m->procs[i];

		pr->pid = 1000 + 37 * i;
		pr->alive = true;
		pr->python = i == (m->nproc > 1 ? 1u : 0u);
		pr->leaf = malloc(sizeof(*pr->leaf) * SYNTH_PATHS);
		if (!pr->leaf)
			return -ENOMEM;
	}
	for (i = 0; i < m->p->threads; i++) {
		struct sthread *t = &m->threads[i];

		t->proc = &m->procs[i % m->nproc];
		t->index = i / m->nproc;
		t->tid = t->proc->pid + t->index;
	}
	for (i = 0; i < m->nproc; i++) {
		struct proc *pr = &m->procs[i];

		rc = build_paths(m, pr);
		if (rc < 0)
			return rc;
		rc = map_process(m, pr);
		if (rc < 0)
			return rc;
		if (pr->python) {
			pr->in_python = true;
			rc = spulse_rec_python(m->rec, pr->pid, true);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static void teardown(struct model *m)
{
	uint32_t i, k;

	for (i = 0; m->procs && i < m->nproc; i++) {
		for (k = 0; k < SYNTH_PATHS; k++)
			free(m->procs[i].paths[k].f);
		free(m->procs[i].leaf);
	}
	free(m->procs);
	free(m->threads);
	synth_zipf_free(&m->path_zipf);
	synth_zipf_free(&m->thread_zipf);
	synth_zipf_free(&m->branch_zipf);
}

int synth_generate(struct spulse_recorder *rec, const struct synth_params *p)
{
	return synth_generate_stats(rec, p, NULL);
}

int synth_generate_stats(struct spulse_recorder *rec,
			 const struct synth_params *p, struct synth_stats *st)
{
	struct model m = { .rec = rec, .p = p, .rng = { p->seed } };
	struct ext_state x = { .rng = { p->seed ^ 0x0ffc0ffc0ffc0ffcULL },
			       .st = st };
	bool ext = p->cpus || p->offcpu || p->triggers || p->unknown_ext;
	uint64_t i, period, base = 1000000, next_event;
	uint32_t ev = 0;
	int rc;

	if (!p->threads || p->depth < 4 || p->depth > SPULSE_MAX_DEPTH ||
	    p->cpus > SPULSE_MAX_CPU)
		return -EINVAL;
	if (st)
		memset(st, 0, sizeof(*st));
	x.ncpu = p->cpus ? p->cpus : 4;	/* interval cpu fields need some */
	if (ext) {
		x.tcpu = calloc(p->threads, sizeof(*x.tcpu));
		if (!x.tcpu)
			return -ENOMEM;
		for (i = 0; i < p->threads; i++)
			x.tcpu[i] = (uint32_t)(i % x.ncpu);
	}
	rc = setup(&m);
	period = p->samples / (SYNTH_EVENTS + 1);
	if (!period)
		period = 1;
	next_event = period;
	for (i = 0; rc >= 0 && i < p->samples; i++) {
		struct sthread *t;
		struct proc *pr;
		uint32_t ti, pi, leaf;
		int64_t time;

		if (i == next_event && ev < SYNTH_EVENTS) {
			rc = run_event(&m, ev++);
			if (rc < 0)
				break;
			next_event += period;
		}
		ti = synth_zipf_pick(&m.thread_zipf, &m.rng);
		while (!m.threads[ti].proc->alive)
			ti = (ti + 1) % p->threads;
		t = &m.threads[ti];
		pr = t->proc;
		/* threads of one process favour different paths */
		pi = (synth_zipf_pick(&m.path_zipf, &m.rng) + t->index * 17) %
		     SYNTH_PATHS;
		if (pr->leaf[pi] == SPULSE_NONE) {
			rc = intern_path(&m, pr, pi, &leaf);
			if (rc < 0)
				break;
			pr->leaf[pi] = leaf;
		}
		base += SYNTH_STEP_NS;
		time = (int64_t)(base + synth_rng_below(&m.rng, SYNTH_JITTER_NS));
		if (!p->cpus) {
			rc = spulse_rec_sample(rec, time, t->rec_id, pr->leaf[pi]);
		} else {
			if (synth_rng_below(&x.rng, 100) < 5)	/* migration */
				x.tcpu[ti] = (uint32_t)synth_rng_below(&x.rng,
								      x.ncpu);
			rc = spulse_rec_sample_cpu(rec, time, t->rec_id,
						   pr->leaf[pi], x.tcpu[ti]);
		}
		if (rc >= 0 && ext)
			rc = emit_ext(&m, &x, i, p->samples, time);
	}
	/* no samples: the extension records still get written */
	if (rc >= 0 && ext && !p->samples)
		rc = emit_ext(&m, &x, 0, 1, (int64_t)base);
	teardown(&m);
	free(x.tcpu);
	return rc < 0 ? rc : 0;
}

uint64_t synth_start_us(void)
{
	return SYNTH_START_US;
}

uint64_t synth_interval_us(void)
{
	return SYNTH_INTERVAL_US;
}
