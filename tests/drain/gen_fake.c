// SPDX-License-Identifier: MIT
/*
 * gen_fake: write a fake spulse debugfs directory the way spulse.ko does
 * (docs/CONTRACTS.md), plus the ground truth the drained spool must match.
 *
 *   gen_fake --dir D --truth F [--cpus N] [--idle K] [--samples M] [--seed S]
 *            [--steps K --step-ms T] [--cut-cpu C] [--corrupt-cpu C]
 *            [--kallsyms PATH] [--no-cpu-record] [--offcpu K]
 *            [--stall IDX:MS]... [--manual-at IDX]... [--unknown-ext]
 *            [--stacks N] [--epoch-ids N] [--exec-module]
 *            [--depth N] [--modules N] [--offcpu-stacks N]
 *
 * D/cpuN: one SPULSE stream per CPU with per-CPU dense ids (threads, frames
 * of kinds 1/2/3, prefix-linked stacks), every sample written together with
 * the definitions it needs in one write (one "relay reservation"), the same
 * start_us on every CPU; the last K CPUs stay empty (idle). D/meta: modules
 * of the target (pid 4242), one module defined then retired, a module of
 * pid 6000 retired by a process deactivation, Python records. D/stats and an
 * empty D/control. With --steps the samples are appended in K steps, T ms
 * apart (sample times grow with the steps), so a drainer can run meanwhile.
 *
 * --cut-cpu C: CPU C's last write stops inside its sample record (with
 * --cut-in-interval: that sample is whole and an off-CPU interval written
 * after it, with a 300-frame waker stack, is cut 2 bytes before its end).
 * --corrupt-cpu C: an invalid byte (unknown tag) is written into CPU C's
 * stream before its sample M/2; the truth holds the samples before it.
 *
 * Every CPU stream starts with a cpu record (kind 1) after its header
 * (--no-cpu-record: not, as streams of an older module).
 * --offcpu K: about K off-CPU intervals (kind 2) per CPU, each written
 * between two samples with its definitions (thread, stack, waker thread,
 * waker stack; some waker stacks hundreds of frames deep, some wakers of
 * the other process) in one write, in close-time order.
 * --stall IDX:MS: CPU 0 writes, after its sample IDX, an interval of worker-1
 * that was blocked MS ms (state S, run-queue 1.5 ms).
 * --manual-at IDX: CPU 0 writes a kernel trigger mark (kind 3, reason 1,
 * seq 0) after its sample IDX.
 * --unknown-ext: every CPU writes an extension record of unknown kind 77.
 * --stacks N: samples take their stacks from a pool of N random stacks per
 * process (drawn once, shared by the CPUs; skewed: low pool indexes are
 * drawn more often), as a real profile repeats its stacks, so most samples
 * need no new definition; without it every sample draws a fresh random
 * stack (and the processes share addresses, which no two address spaces
 * of a real system-wide profile do much).
 * --exec-module: meta defines /tmp/new.so over the retired module's range
 * right after the retirement (as an exec maps a new image where the old one
 * was): the drainer holds the definition behind the retirement, and the
 * frames there turn module-relative to /tmp/new.so instead of absolute.
 * --depth N: sample stacks are 2..N frames deep before their kernel part
 * (default 11), as a Python interpreter's deep stacks.
 * --modules N: meta defines N more modules of the target
 * (/usr/lib/libxK.so, 1 MiB each), and sample stacks draw their user frames
 * from them too (module-relative), as a process with many shared objects.
 * --offcpu-stacks N: the off-CPU intervals' stacks and waker stacks come
 * from a pool of N stacks (2..21 frames deep and 3 kernel frames; drawn
 * once, skewed as --stacks), as a context-switch storm repeats its stacks.
 * --epoch-ids N: as spulse.ko at its epoch limit (docs/FORMAT.md section 7),
 * a CPU whose thread, frame or stack ids reached N starts a new epoch
 * before its next write: a new stream header and cpu record, every id
 * space and both clocks from 0 (so content is defined again under new ids).
 *
 * Truth lines (the verifier sorts samples by time; times are unique):
 *   H start_us interval_us
 *   S time_ns cpu pid tid comm n code... (root first; codes: T, Kaddr, Uaddr,
 *     Raddr:path — R = must become module-relative to path; Gaddr:path —
 *     inside a module that meta retires: module-relative for the samples
 *     written before the drainer applied the retirement, absolute after)
 *   O close_ns out_ns state cpu_out cpu_in blocked runq pid tid comm n code...
 *     | wpid wtid wcomm wcpu n code...    (or "| -": no waker); close times
 *     are unique
 *   P close_ns MS                          (a --stall interval)
 *   K time_ns reason seq text              (a kernel trigger mark)
 *   N path         (with --exec-module: "G" frames turn module-relative to
 *                   path, not absolute, when the retirement applies)
 *   C modules|module_deactivations|process_deactivations|python|ext_unknown N
 *   X corrupt CPU OFFSET     (with --corrupt-cpu)
 *   X cut CPU                (with --cut-cpu)
 *   E epochs N               (with --epoch-ids: epochs begun, all CPUs)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spulse/encode.h>

#define PID_T	4242	/* target process */
#define PID_Q	5151	/* other process: its user frames stay absolute */
#define PID_R	6000	/* process whose modules get retired */
#define MAXF	128
#define MAXF_LONG 400	/* off-CPU and waker stacks */

struct region {
	uint64_t start, end, off;
	const char *path;
	bool active;	/* active for PID_T at the end of meta */
};

static const struct region mods[] = {
	{ 0x400000, 0x420000, 0, "/usr/bin/work", true },
	{ 0x7f1000028000, 0x7f100019d000, 0x28000,
	  "/usr/lib/x86_64-linux-gnu/libc.so.6", true },
	{ 0x7ffd0000a000, 0x7ffd0000c000, 0, "[vdso]", true },
	{ 0x7f2000000000, 0x7f2000010000, 0x1000, "/tmp/gone.so", false },
};

/* ---- tiny hash map: (a, b, c) -> id ---------------------------------- */
struct hent { uint64_t a, b, c; uint32_t id; bool used; };
struct hmap { struct hent *v; size_t cap, n; };

static uint64_t hmix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

	h ^= c * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 31;
	return h * 0x94d049bb133111ebULL;
}

static struct hent *hfind(struct hmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct hmap nm = { calloc(m->cap ? m->cap * 2 : 1024,
					  sizeof(struct hent)),
				   m->cap ? m->cap * 2 : 1024, 0 };

		if (!nm.v)
			abort();
		for (i = 0; i < m->cap; i++) {
			struct hent *e;

			if (!m->v[i].used)
				continue;
			e = hfind(&nm, m->v[i].a, m->v[i].b, m->v[i].c);
			*e = m->v[i];
			nm.n++;
		}
		free(m->v);
		*m = nm;
	}
	for (i = hmix(a, b, c) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct hent *e = &m->v[i];

		if (!e->used || (e->a == a && e->b == b && e->c == c))
			return e;
	}
}

/* ---- per-CPU writer state --------------------------------------------- */
struct cpu {
	int fd;
	unsigned int num;
	uint64_t bytes;
	uint32_t nthreads, nframes, nstacks;
	struct hmap threads, frames, stacks;
	int64_t prev_ns;
	int64_t prev_event_ns;	/* event clock (intervals, triggers) */
	bool header;
	uint64_t period;
};

static bool cpu_records = true;
static bool exec_module;
static uint32_t epoch_ids;	/* 0 = no epochs */
static unsigned long epochs;

struct frame { uint8_t kind; uint64_t addr; };

static size_t codes_of(uint32_t pid, const struct frame *f, size_t n,
		       char *codes, size_t clen);

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static void xwrite(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			perror("gen_fake: write");
			exit(1);
		}
		b += w;
		n -= (size_t)w;
	}
}

static uint64_t start_us = 1700000000000000ULL;
static const uint64_t interval_us = 1001;
static unsigned int max_depth = 11;	/* --depth */
static unsigned int nextra;		/* --modules */

/* --modules: extra modules of the target, 1 MiB each, 2 MiB apart */
#define EXTRA_BASE	0x7f3000000000ULL
#define EXTRA_STEP	0x200000ULL
#define EXTRA_SIZE	0x100000ULL

struct thread_def { uint32_t pid, tid; const char *comm; };

static const struct thread_def threads[] = {
	{ PID_T, PID_T, "work" },
	{ PID_T, PID_T + 1, "worker-1" },
	{ PID_T, PID_T + 2, "worker-2" },
	{ PID_Q, PID_Q, "other" },
	{ PID_T, PID_T + 2, "worker-2b" },	/* worker-2 renamed */
};

/* Build one sample's stack (root first) and the truth codes. */
static size_t make_stack(uint32_t pid, struct frame *f, char *codes, size_t clen)
{
	static const uint64_t bases[] = {
		0x401000, 0x7f1000030000, 0x7ffd0000a400, 0x50000000,
		0x7f2000000800,
	};
	size_t n = 0, depth = 2 + rnd() % (max_depth - 1), i, k;

	if (rnd() % 10 == 0)
		f[n++] = (struct frame){ SPULSE_FRAME_TRUNCATED, 0 };
	else
		f[n++] = (struct frame){ SPULSE_FRAME_USER, 0x401000 };
	for (i = 1; i < depth; i++) {
		uint64_t b;

		if (nextra) {
			uint32_t r = rnd() % (5 + nextra);

			b = r < 5 ? bases[r] :
			    EXTRA_BASE + (r - 5) * EXTRA_STEP + 0x1000;
		} else {
			b = bases[rnd() % 5];
		}

		f[n++] = (struct frame){ SPULSE_FRAME_USER,
					 b + (i * 7 + rnd() % 3) * 0x40 + 5 };
	}
	if (rnd() % 20 == 0) {	/* module edges: last byte, one past */
		f[n++] = (struct frame){ SPULSE_FRAME_USER, 0x41ffff };
		f[n++] = (struct frame){ SPULSE_FRAME_USER, 0x420000 };
	}
	if (rnd() % 10 < 3) {
		size_t nk = 1 + rnd() % 4;

		for (k = 0; k < nk; k++)
			f[n++] = (struct frame){ SPULSE_FRAME_KERNEL,
				0xffffffff81000000ULL +
				(k * 3 + rnd() % 2) * 0x100 + 0x1f };
	}
	codes_of(pid, f, n, codes, clen);
	return n;
}

static size_t codes_of(uint32_t pid, const struct frame *f, size_t n,
		       char *codes, size_t clen)
{
	size_t i, k, off = 0;

	codes[0] = 0;
	for (i = 0; i < n; i++) {
		const char *path = NULL;

		if (f[i].kind == SPULSE_FRAME_TRUNCATED) {
			off += snprintf(codes + off, clen - off, " T");
			continue;
		}
		if (f[i].kind == SPULSE_FRAME_KERNEL) {
			off += snprintf(codes + off, clen - off, " K%" PRIx64,
					f[i].addr);
			continue;
		}
		for (k = 0; pid == PID_T && k < sizeof(mods) / sizeof(mods[0]); k++)
			if (mods[k].active && f[i].addr >= mods[k].start &&
			    f[i].addr < mods[k].end)
				path = mods[k].path;
		if (pid == PID_T && nextra && f[i].addr >= EXTRA_BASE &&
		    f[i].addr < EXTRA_BASE + nextra * EXTRA_STEP &&
		    (f[i].addr - EXTRA_BASE) % EXTRA_STEP < EXTRA_SIZE) {
			off += snprintf(codes + off, clen - off,
					" R%" PRIx64 ":/usr/lib/libx%u.so",
					f[i].addr, (unsigned int)
					((f[i].addr - EXTRA_BASE) / EXTRA_STEP));
			continue;
		}
		if (pid == PID_T && f[i].addr >= mods[3].start &&
		    f[i].addr < mods[3].end)	/* retired during the run */
			off += snprintf(codes + off, clen - off, " G%" PRIx64 ":%s",
					f[i].addr, mods[3].path);
		else if (path)
			off += snprintf(codes + off, clen - off, " R%" PRIx64 ":%s",
					f[i].addr, path);
		else
			off += snprintf(codes + off, clen - off, " U%" PRIx64,
					f[i].addr);
	}
	return n;
}

static void hclear(struct hmap *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static size_t enc_header(struct cpu *c, uint8_t *buf)
{
	size_t len = 0;

	if (c->header && epoch_ids && (c->nthreads >= epoch_ids ||
				       c->nframes >= epoch_ids ||
				       c->nstacks >= epoch_ids)) {
		/* new epoch: forget every definition, restart ids and clocks */
		hclear(&c->threads);
		hclear(&c->frames);
		hclear(&c->stacks);
		c->nthreads = c->nframes = c->nstacks = 0;
		c->prev_ns = c->prev_event_ns = 0;
		c->header = false;
		epochs++;
	}
	if (!c->header) {
		len += spulse_enc_header(buf, start_us, interval_us);
		if (cpu_records)
			len += spulse_enc_ext_cpu(buf + len, c->num);
		c->header = true;
	}
	return len;
}

static size_t enc_thread(struct cpu *c, uint8_t *buf, uint32_t ti,
			 uint32_t *id)
{
	const struct thread_def *td = &threads[ti];
	struct hent *e = hfind(&c->threads, td->pid, td->tid, ti);
	size_t len = 0;

	if (!e->used) {
		*e = (struct hent){ td->pid, td->tid, ti, c->nthreads++, true };
		c->threads.n++;
		len += spulse_enc_thread(buf, e->id, td->pid, td->tid,
					 td->comm, strlen(td->comm));
	}
	*id = e->id;
	return len;
}

static size_t enc_stack(struct cpu *c, uint8_t *buf, const struct frame *f,
			size_t n, uint32_t *leaf);

/* Encode one sample plus its missing definitions as one buffer. */
static size_t encode_sample(struct cpu *c, uint8_t *buf, int64_t t,
			    uint32_t ti, const struct frame *f, size_t n)
{
	uint32_t thread, leaf;
	size_t len = enc_header(c, buf);

	len += enc_thread(c, buf + len, ti, &thread);
	len += enc_stack(c, buf + len, f, n, &leaf);
	len += spulse_enc_sample(buf + len, t - c->prev_ns, thread, leaf);
	c->prev_ns = t;
	return len;
}

static size_t enc_stack(struct cpu *c, uint8_t *buf, const struct frame *f,
			size_t n, uint32_t *leaf)
{
	uint64_t parent = SPULSE_STACK_ROOT;
	struct hent *e;
	size_t len = 0, i;

	for (i = 0; i < n; i++) {
		uint32_t fid;

		e = hfind(&c->frames, f[i].kind, f[i].addr, 0);
		if (!e->used) {
			*e = (struct hent){ f[i].kind, f[i].addr, 0,
					    c->nframes++, true };
			c->frames.n++;
			if (f[i].kind == SPULSE_FRAME_TRUNCATED)
				len += spulse_enc_frame_truncated(buf + len, e->id);
			else
				len += spulse_enc_frame_abs(buf + len, e->id,
							    f[i].kind, f[i].addr);
		}
		fid = e->id;
		e = hfind(&c->stacks, parent, fid, 1);
		if (!e->used) {
			*e = (struct hent){ parent, fid, 1, c->nstacks++, true };
			c->stacks.n++;
			len += spulse_enc_stack(buf + len, e->id, parent, fid);
		}
		parent = (uint64_t)e->id + 1;
	}
	*leaf = (uint32_t)(parent - 1);
	return len;
}

/* ---- off-CPU intervals -------------------------------------------------- */

/* A stack at switch-out: user part, then scheduler kernel frames (leaf). */
static size_t make_offcpu_stack(struct frame *f, size_t depth)
{
	size_t n = 0, i;

	f[n++] = (struct frame){ SPULSE_FRAME_USER, 0x401000 };
	for (i = 1; i < depth && n + 3 < MAXF_LONG; i++)
		f[n++] = (struct frame){ SPULSE_FRAME_USER,
			(rnd() % 2 ? 0x7f1000030000ULL : 0x402000ULL) +
			(i * 11 + rnd() % 5) * 0x40 + 3 };
	f[n++] = (struct frame){ SPULSE_FRAME_KERNEL, 0xffffffff81000a1fULL };
	f[n++] = (struct frame){ SPULSE_FRAME_KERNEL, 0xffffffff81000b2fULL };
	f[n++] = (struct frame){ SPULSE_FRAME_KERNEL, 0xffffffff81000c3fULL };
	return n;
}

struct offcpu_spec {
	int64_t close;
	uint32_t ti, state;
	uint64_t blocked, runq;
	int wti;		/* waker thread index, -1 none */
	uint32_t wcpu;
	size_t depth, wdepth;
	bool pooled;		/* --offcpu-stacks: stacks pi and wpi of the pool */
	uint32_t pi, wpi;
};

/* --offcpu-stacks N: the off-CPU and waker stacks, drawn once */
static unsigned long ocpool;
static struct frame (*ocpool_f)[MAXF];
static size_t *ocpool_n;

static size_t offcpu_stack(struct frame *f, bool pooled, uint32_t pi,
			   size_t depth)
{
	if (!pooled)
		return make_offcpu_stack(f, depth);
	memcpy(f, ocpool_f[pi], ocpool_n[pi] * sizeof(*f));
	return ocpool_n[pi];
}

static size_t encode_offcpu(struct cpu *c, uint8_t *buf, const struct offcpu_spec *o,
			    FILE *truth)
{
	static struct frame f[MAXF_LONG], wf[MAXF_LONG];
	static char codes[MAXF_LONG * 64], wcodes[MAXF_LONG * 64];
	struct spulse_offcpu_fields fl = { 0 };
	size_t len = enc_header(c, buf), n, wn = 0;
	int64_t out = o->close - (int64_t)(o->blocked + o->runq);
	uint32_t th, st, wth = 0, wst = 0;

	n = offcpu_stack(f, o->pooled, o->pi, o->depth);
	codes_of(threads[o->ti].pid, f, n, codes, sizeof(codes));
	len += enc_thread(c, buf + len, o->ti, &th);
	len += enc_stack(c, buf + len, f, n, &st);
	if (o->wti >= 0) {
		wn = offcpu_stack(wf, o->pooled, o->wpi, o->wdepth);
		codes_of(threads[o->wti].pid, wf, wn, wcodes, sizeof(wcodes));
		len += enc_thread(c, buf + len, (uint32_t)o->wti, &wth);
		len += enc_stack(c, buf + len, wf, wn, &wst);
	}
	fl.dt_ns = out - c->prev_event_ns;
	fl.thread = th;
	fl.stack = st;
	fl.state = o->state;
	fl.cpu_out = (c->num + 1) % 4;
	fl.cpu_in = c->num;
	fl.blocked_ns = o->blocked;
	fl.runq_ns = o->runq;
	fl.has_waker = o->wti >= 0;
	fl.waker_thread = wth;
	fl.waker_stack = wst;
	fl.waker_cpu = o->wcpu;
	len += spulse_enc_ext_offcpu(buf + len, &fl);
	c->prev_event_ns = out;
	fprintf(truth, "O %" PRId64 " %" PRId64 " %u %u %u %" PRIu64 " %" PRIu64
		" %u %u %s %zu%s |", o->close, out, o->state, fl.cpu_out,
		fl.cpu_in, o->blocked, o->runq, threads[o->ti].pid,
		threads[o->ti].tid, threads[o->ti].comm, n, codes);
	if (o->wti >= 0)
		fprintf(truth, " %u %u %s %u %zu%s\n", threads[o->wti].pid,
			threads[o->wti].tid, threads[o->wti].comm, o->wcpu, wn,
			wcodes);
	else
		fprintf(truth, " -\n");
	return len;
}

static size_t encode_manual(struct cpu *c, uint8_t *buf, int64_t t,
			    FILE *truth)
{
	struct spulse_trigger_fields tf = { 0 };
	size_t len = enc_header(c, buf);

	tf.dt_ns = t - c->prev_event_ns;
	tf.reason = SPULSE_TRIGGER_MANUAL;
	tf.text = "manual";
	tf.text_len = 6;
	len += spulse_enc_ext_trigger(buf + len, &tf);
	c->prev_event_ns = t;
	fprintf(truth, "K %" PRId64 " 1 0 manual\n", t);
	return len;
}

static void write_meta(const char *dir, FILE *truth)
{
	uint8_t buf[SPULSE_MAX_RECORD + SPULSE_HEADER_MAX];
	char path[4096];
	size_t len, k;
	int fd;

	snprintf(path, sizeof(path), "%s/meta", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	len = spulse_enc_header(buf, start_us, interval_us);
	xwrite(fd, buf, len);
	for (k = 0; k < 4; k++) {
		static const uint8_t bid[] = { 0xde, 0xad, 0xbe, 0xef };

		len = spulse_enc_module(buf, (uint32_t)k, PID_T, mods[k].start,
					mods[k].end, mods[k].off, mods[k].path,
					strlen(mods[k].path), bid,
					k == 0 ? sizeof(bid) : 0);
		xwrite(fd, buf, len);
	}
	for (k = 0; k < nextra; k++) {
		char name[64];
		int nl = snprintf(name, sizeof(name), "/usr/lib/libx%zu.so", k);

		len = spulse_enc_module(buf, (uint32_t)(4 + k),
					PID_T, EXTRA_BASE + k * EXTRA_STEP,
					EXTRA_BASE + k * EXTRA_STEP + EXTRA_SIZE,
					k * 0x1000, name, (size_t)nl, NULL, 0);
		xwrite(fd, buf, len);
	}
	len = spulse_enc_module_deactivate(buf, 3);
	xwrite(fd, buf, len);
	if (exec_module) {
		len = spulse_enc_module(buf, 4 + nextra, PID_T, mods[3].start,
					mods[3].end, mods[3].off, "/tmp/new.so",
					11, NULL, 0);
		xwrite(fd, buf, len);
		fprintf(truth, "N /tmp/new.so\n");
	}
	len = spulse_enc_module(buf, (exec_module ? 5 : 4) + nextra, PID_R, 0x400000,
				0x410000, 0, "/usr/bin/dead", 13, NULL, 0);
	xwrite(fd, buf, len);
	len = spulse_enc_process_deactivate(buf, PID_R);
	xwrite(fd, buf, len);
	len = spulse_enc_python(buf, PID_T, SPULSE_PYTHON_ENTER);
	len += spulse_enc_python(buf + len, PID_T, SPULSE_PYTHON_LEAVE);
	len += spulse_enc_python(buf + len, PID_T, SPULSE_PYTHON_ENTER);
	xwrite(fd, buf, len);
	close(fd);
	fprintf(truth, "C modules %d\nC module_deactivations 1\n"
		"C process_deactivations 1\nC python 3\n",
		(exec_module ? 6 : 5) + nextra);
}

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	xwrite(fd, text, strlen(text));
	close(fd);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'D' },
		{ "truth", required_argument, NULL, 'T' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "idle", required_argument, NULL, 'i' },
		{ "samples", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "steps", required_argument, NULL, 'k' },
		{ "step-ms", required_argument, NULL, 't' },
		{ "cut-cpu", required_argument, NULL, 'x' },
		{ "corrupt-cpu", required_argument, NULL, 'y' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "no-cpu-record", no_argument, NULL, 'n' },
		{ "offcpu", required_argument, NULL, 'o' },
		{ "stall", required_argument, NULL, 'p' },
		{ "manual-at", required_argument, NULL, 'q' },
		{ "unknown-ext", no_argument, NULL, 'u' },
		{ "cut-in-interval", no_argument, NULL, 'I' },
		{ "stacks", required_argument, NULL, 'P' },
		{ "epoch-ids", required_argument, NULL, 'e' },
		{ "exec-module", no_argument, NULL, 'X' },
		{ "depth", required_argument, NULL, 'd' },
		{ "modules", required_argument, NULL, 'M' },
		{ "offcpu-stacks", required_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *truth_path = NULL, *kallsyms = NULL;
	unsigned int ncpu = 2, idle = 0, steps = 1, step_ms = 0;
	unsigned long samples = 1000, seed = 1;
	int cut = -1, corrupt = -1, opt;
	unsigned long offcpu = 0, stall_at[8], stall_ms[8], manual_at[8];
	unsigned int nstall = 0, nmanual = 0, j;
	bool unknown_ext = false, cut_interval = false;
	unsigned long npool = 0;
	struct frame (*pool)[MAXF] = NULL;
	size_t *pool_n = NULL;
	static uint8_t buf[1 << 16];
	char path[4096], codes[MAXF * 64];
	struct cpu *cpus;
	FILE *truth;
	unsigned int c, s;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'D': dir = optarg; break;
		case 'T': truth_path = optarg; break;
		case 'c': ncpu = (unsigned int)atoi(optarg); break;
		case 'i': idle = (unsigned int)atoi(optarg); break;
		case 'm': samples = strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoul(optarg, NULL, 10); break;
		case 'k': steps = (unsigned int)atoi(optarg); break;
		case 't': step_ms = (unsigned int)atoi(optarg); break;
		case 'x': cut = atoi(optarg); break;
		case 'y': corrupt = atoi(optarg); break;
		case 'K': kallsyms = optarg; break;
		case 'n': cpu_records = false; break;
		case 'o': offcpu = strtoul(optarg, NULL, 10); break;
		case 'p':
			if (nstall == 8 || sscanf(optarg, "%lu:%lu",
					&stall_at[nstall], &stall_ms[nstall]) != 2)
				return 2;
			nstall++;
			break;
		case 'q':
			if (nmanual == 8)
				return 2;
			manual_at[nmanual++] = strtoul(optarg, NULL, 10);
			break;
		case 'u': unknown_ext = true; break;
		case 'I': cut_interval = true; break;
		case 'P': npool = strtoul(optarg, NULL, 10); break;
		case 'e': epoch_ids = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'X': exec_module = true; break;
		case 'd':
			max_depth = (unsigned int)atoi(optarg);
			if (max_depth < 2 || max_depth > 100)
				return 2;
			break;
		case 'O': ocpool = strtoul(optarg, NULL, 10); break;
		case 'M':
			nextra = (unsigned int)atoi(optarg);
			if (nextra > 1000)
				return 2;
			break;
		default: return 2;
		}
	}
	if (!dir || !truth_path || !ncpu || idle > ncpu || !steps || !samples)
		return 2;
	rng_state = 0x2545f4914f6cdd1dULL ^ (seed * 0x9e3779b97f4a7c15ULL);
	start_us += seed;
	truth = fopen(truth_path, "w");
	if (!truth) {
		perror(truth_path);
		return 1;
	}
	fprintf(truth, "H %" PRIu64 " %" PRIu64 "\n", start_us, interval_us);
	if (npool) {
		/* [0, npool): the target's, [npool, 2 npool): PID_Q's */
		pool = calloc(2 * npool, sizeof(*pool));
		pool_n = calloc(2 * npool, sizeof(*pool_n));
		if (!pool || !pool_n)
			return 1;
		for (j = 0; j < 2 * npool; j++)
			pool_n[j] = make_stack(PID_T, pool[j], codes,
					       sizeof(codes));
	}
	if (ocpool) {
		ocpool_f = calloc(ocpool, sizeof(*ocpool_f));
		ocpool_n = calloc(ocpool, sizeof(*ocpool_n));
		if (!ocpool_f || !ocpool_n)
			return 1;
		for (j = 0; j < ocpool; j++)
			ocpool_n[j] = make_offcpu_stack(ocpool_f[j],
							2 + rnd() % 20);
	}
	cpus = calloc(ncpu, sizeof(*cpus));
	for (c = 0; c < ncpu; c++) {
		snprintf(path, sizeof(path), "%s/cpu%u", dir, c);
		cpus[c].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
				  0644);
		if (cpus[c].fd < 0) {
			perror(path);
			return 1;
		}
		cpus[c].period = 1000000 + 37000 * c;
		cpus[c].num = c;
	}
	snprintf(path, sizeof(path), "%s/control", dir);
	write_text(path, "");
	write_meta(dir, truth);
	if (kallsyms)
		write_text(kallsyms,
			   "ffffffff81000000 T _stext\n"
			   "ffffffff81000100 t helper\n"
			   "ffffffff82000000 D some_data\n"
			   "ffffffff81000200 T vfs_read\n"
			   "ffffffffc0001000 t modfn\t[spulse]\n"
			   "ffffffff83000000 b bss_thing\n");

	for (s = 0; s < steps; s++) {
		for (c = 0; c < ncpu - idle; c++) {
			struct cpu *cp = &cpus[c];
			unsigned long k0 = samples * s / steps;
			unsigned long k1 = samples * (s + 1) / steps, k;

			for (k = k0; k < k1; k++) {
				struct frame f[MAXF];
				uint32_t ti = rnd() % 4;
				int64_t t;
				size_t n, len;

				if (ti == 2 && k >= samples / 2)
					ti = 4;	/* renamed thread */
				t = (int64_t)(k * cp->period +
					      rnd() % (cp->period / 2));
				t = t - t % ncpu + c;
				if (npool) {
					/* skewed: the product of two draws */
					unsigned long pi = (unsigned long)rnd() % npool *
						(rnd() % npool) / npool;

					if (threads[ti].pid == PID_Q)
						pi += npool;

					n = pool_n[pi];
					memcpy(f, pool[pi], n * sizeof(*f));
					codes_of(threads[ti].pid, f, n, codes,
						 sizeof(codes));
				} else {
					n = make_stack(threads[ti].pid, f, codes,
						       sizeof(codes));
				}
				if ((int)c == corrupt && k == samples / 2) {
					uint8_t bad = 0xee;

					fprintf(truth, "X corrupt %u %" PRIu64 "\n",
						c, cp->bytes);
					xwrite(cp->fd, &bad, 1);
					cp->bytes++;
				}
				len = encode_sample(cp, buf, t, ti, f, n);
				if ((int)c == cut && k == samples - 1 &&
				    cut_interval) {
					/* the sample whole, then a cut interval */
					struct offcpu_spec o = { 0 };
					FILE *null = fopen("/dev/null", "w");
					size_t l2;

					fprintf(truth, "S %" PRId64 " %u %u %u %s %zu%s\n",
						t, c, threads[ti].pid,
						threads[ti].tid,
						threads[ti].comm, n, codes);
					xwrite(cp->fd, buf, len);
					cp->bytes += len;
					o.close = t + 1000;
					o.ti = 1;
					o.state = SPULSE_STATE_DISK;
					o.blocked = 1000;
					o.wti = 3;
					o.depth = 4;
					o.wdepth = 300;
					l2 = encode_offcpu(cp, buf, &o, null);
					fclose(null);
					fprintf(truth, "X cut %u\n", c);
					len = l2 - 2;	/* inside the interval record */
				} else if ((int)c == cut && k == samples - 1) {
					fprintf(truth, "X cut %u\n", c);
					len -= 2;	/* inside the sample record */
				} else if (!((int)c == corrupt &&
					     k >= samples / 2)) {
					fprintf(truth, "S %" PRId64 " %u %u %u %s %zu%s\n",
						t, c, threads[ti].pid,
						threads[ti].tid,
						threads[ti].comm, n, codes);
				}
				xwrite(cp->fd, buf, len);
				cp->bytes += len;
				if ((int)c == cut || (int)c == corrupt)
					continue;	/* samples only */
				if (offcpu && k % (samples / offcpu + 1) ==
					      samples / offcpu / 2) {
					struct offcpu_spec o = { 0 };
					int64_t cl = (int64_t)(k * cp->period +
							       cp->period * 3 / 4);

					o.close = cl - cl % ncpu + c;
					o.ti = rnd() % 3;
					if (o.ti == 2 && k >= samples / 2)
						o.ti = 4;
					o.state = rnd() % 3;
					o.depth = 2 + rnd() % 20;
					o.wti = -1;
					if (o.state != SPULSE_STATE_RUNNABLE) {
						static const int w[] = { 0, 1, 3 };

						o.blocked = 10000 + rnd() % 20000000;
						if (rnd() % 4) {
							o.wti = w[rnd() % 3];
							o.wcpu = rnd() % 64;
							o.wdepth = rnd() % 8 ? 2 + rnd() % 10 :
								   200 + rnd() % 150;
						}
					}
					if (ocpool) {
						/* skewed as --stacks */
						o.pooled = true;
						o.pi = (uint32_t)((unsigned long)rnd() % ocpool *
							(rnd() % ocpool) / ocpool);
						o.wpi = (uint32_t)((unsigned long)rnd() % ocpool *
							(rnd() % ocpool) / ocpool);
					}
					o.runq = rnd() % 1000000;
					if ((int64_t)(o.blocked + o.runq) > o.close)
						o.blocked = o.state ? 1 : 0,
						o.runq = 0;
					len = encode_offcpu(cp, buf, &o, truth);
					xwrite(cp->fd, buf, len);
					cp->bytes += len;
				}
				for (j = 0; c == 0 && j < nstall; j++) {
					struct offcpu_spec o = { 0 };
					int64_t cl = (int64_t)(k * cp->period +
							       cp->period * 13 / 16);

					if (k != stall_at[j])
						continue;
					o.close = cl - cl % ncpu;
					o.ti = 1;
					o.state = SPULSE_STATE_SLEEPING;
					o.blocked = stall_ms[j] * 1000000;
					o.runq = 1500000;
					o.wti = 0;
					o.wcpu = 1;
					o.depth = 6;
					o.wdepth = 5;
					if ((int64_t)(o.blocked + o.runq) > o.close) {
						fprintf(stderr, "gen_fake: stall at %lu "
							"starts before the profile\n", k);
						return 2;
					}
					len = encode_offcpu(cp, buf, &o, truth);
					fprintf(truth, "P %" PRId64 " %lu\n", o.close,
						stall_ms[j]);
					xwrite(cp->fd, buf, len);
					cp->bytes += len;
				}
				for (j = 0; c == 0 && j < nmanual; j++) {
					int64_t tm = (int64_t)(k * cp->period +
							       cp->period * 7 / 8);

					if (k != manual_at[j])
						continue;
					len = encode_manual(cp, buf, tm - tm % ncpu,
							    truth);
					xwrite(cp->fd, buf, len);
					cp->bytes += len;
				}
				if (unknown_ext && k == samples / 3) {
					static const uint8_t pl[] = { 1, 2, 3 };

					len = enc_header(cp, buf);
					len += spulse_put_ext_hdr(buf + len, 77,
								  sizeof(pl));
					memcpy(buf + len, pl, sizeof(pl));
					len += sizeof(pl);
					xwrite(cp->fd, buf, len);
					cp->bytes += len;
				}
			}
		}
		if (step_ms && s + 1 < steps) {
			struct timespec ts = { step_ms / 1000,
					       (long)(step_ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	{
		char st[8192];
		size_t off = 0;

		off += snprintf(st + off, sizeof(st) - off,
				"state stopped\ntarget_pid %d\nfreq 999\n"
				"event cpu-clock\nsamples_taken %lu\n"
				"samples_written %lu\nsamples_dropped 7\n",
				PID_T, samples * (ncpu - idle) + 7,
				samples * (ncpu - idle));
		(void)off;
		snprintf(path, sizeof(path), "%s/stats", dir);
		write_text(path, st);
	}
	if (unknown_ext)
		fprintf(truth, "C ext_unknown %u\n", ncpu - idle);
	if (epoch_ids)
		fprintf(truth, "E epochs %lu\n", epochs);
	for (c = 0; c < ncpu; c++) {
		close(cpus[c].fd);
		free(cpus[c].threads.v);
		free(cpus[c].frames.v);
		free(cpus[c].stacks.v);
	}
	free(cpus);
	free(pool);
	free(pool_n);
	free(ocpool_f);
	free(ocpool_n);
	fclose(truth);
	return 0;
}
