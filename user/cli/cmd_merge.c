/* SPDX-License-Identifier: MIT */
/*
 * spulse merge: one valid spool from several (docs/FLEET.md "Merge").
 *
 * Every input is opened with Replay (validated on open; its definition
 * tables stay in memory, its records are read through a bounded window).
 * The output gets, in order: the header (the smallest start_us), one
 * identity per source of every input (an input without one gets one
 * made from its file name), every input's definitions renumbered by a
 * per-input base (merged id = base + input id, so no map is needed), a
 * thread-source record for every thread whose source is not 0, then the
 * samples, off-CPU intervals and triggers of all inputs in time order: a
 * k-way merge (binary heap) over the inputs' Replay iterators, each
 * time shifted onto the merged axis. It is written to a temporary file
 * beside OUT, fsync'ed and renamed: an error leaves no OUT behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spulse/encode.h>

#include "cli.h"
#include "sym/kallsyms.h"

int cmd_merge(int argc, char **argv);

static const char merge_help[] =
"NAME\n"
"    spulse merge - merge spools of several hosts or recordings into one\n"
"\n"
"SYNOPSIS\n"
"    spulse merge -o OUT [--quiet] IN...\n"
"\n"
"DESCRIPTION\n"
"    Writes one valid spool OUT holding every sample, off-CPU interval and\n"
"    trigger of the inputs, in time order, with each input's identity\n"
"    (host, machine-id, boot-id, kernel, recording id) kept, so that every\n"
"    sample's host and recording stay known (`spulse report --host H`).\n"
"    Definitions are renumbered; an input that has no identity (a spool of\n"
"    an older spulse, spulse synth) gets one whose host is its file name\n"
"    without \".spulse\", whose machine-id, boot-id and kernel are empty\n"
"    and whose recording id is a hash of its name, start and bytes.\n"
"\n"
"    Kernel symbols: OUT.kallsyms is a copy of the inputs' FILE.kallsyms\n"
"    when they are all the same; when they differ (several boots), it holds\n"
"    each distinct table once with the frames it names, so every source's\n"
"    kernel frames keep their own boot's names. An input with kernel frames\n"
"    and no FILE.kallsyms is named on stderr.\n"
"\n"
"    The inputs must share one sample interval (a spool holds one, and it\n"
"    is every sample's weight in pprof, speedscope and perf-script).\n"
"    OUT may not be one of the inputs (the same file by any path).\n"
"\n"
"    Times: OUT's start is the earliest input start; each input's times are\n"
"    shifted by its start minus that one. Clocks of different hosts are\n"
"    taken as they are (no skew correction).\n"
"\n"
"    A recovered input (cut inside its last record) is accepted and\n"
"    reported; a corrupt one is an error naming the file and the byte\n"
"    offset, and no OUT is written. Memory: each input's definition\n"
"    tables plus a bounded read window per input; samples are streamed.\n"
"    Not carried: Python-mode and module-deactivation records (merged\n"
"    definitions all precede the first sample) and unknown extension\n"
"    kinds (counted).\n"
"\n"
"OPTIONS\n"
"    -o, --output OUT\n"
"                the merged spool (replaced atomically if it exists)\n"
"    -q, --quiet no summary line\n"
"    -h, --help  this text\n"
"\n"
"EXAMPLES\n"
"    spulse merge -o fleet.spulse web1.spulse web2.spulse db1.spulse\n"
"    spulse report --host web2 fleet.spulse\n"
"\n"
"EXIT STATUS\n"
"    0 merged, 1 an input is invalid, unreadable or shorter than a header,\n"
"    the inputs' sample intervals differ, or OUT cannot be written, 2\n"
"    usage error (also: OUT is one of the inputs).\n";

#define OUT_BUF		(1u << 20)

struct out {
	int fd;
	uint8_t *buf;
	size_t len;
	int err;		/* first write error (negative errno) */
	uint64_t bytes;
};

static void out_flush(struct out *o)
{
	size_t off = 0;

	while (!o->err && off < o->len) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = -errno;
			break;
		}
		off += (size_t)n;
	}
	o->bytes += o->len;
	o->len = 0;
}

/* Room for the largest record. */
static uint8_t *out_reserve(struct out *o)
{
	if (OUT_BUF - o->len < SPULSE_MAX_RECORD)
		out_flush(o);
	return o->buf + o->len;
}

enum head_kind { HEAD_NONE, HEAD_SAMPLE, HEAD_OFFCPU, HEAD_TRIGGER };

struct input {
	const char *path;
	struct spulse_replay *r;
	const struct spulse_defs *d;
	int64_t shift_ns;	/* (start_us - merged start_us) * 1000 */
	uint32_t base[5];	/* merged id of id 0: module, frame, stack, thread, source */
	uint32_t nsources;	/* identities in the input, or 1 synthesized */
	char *synth_host;	/* synthesized identity's host, else NULL */
	/* the next record to merge */
	enum head_kind kind;
	int64_t time;		/* on the merged axis */
	struct spulse_record rec;
	char text[SPULSE_MAX_TRIGGER_TEXT + 1];
	uint64_t ext_dropped, python_dropped, deact_dropped;
};

enum { B_MOD, B_FRAME, B_STACK, B_THREAD, B_SRC };

/* Advance @in to its next sample, interval or trigger: 1, 0 at the end, <0. */
static int input_next(struct input *in)
{
	int r;

	for (;;) {
		r = spulse_replay_next_record(in->r, &in->rec);
		if (r <= 0) {
			in->kind = HEAD_NONE;
			return r;
		}
		switch (in->rec.tag) {
		case SPULSE_TAG_SAMPLE:
			in->kind = HEAD_SAMPLE;
			in->time = in->rec.u.sample.time_ns + in->shift_ns;
			return 1;
		case SPULSE_TAG_PYTHON:
			in->python_dropped++;
			continue;
		case SPULSE_TAG_PROCESS_DEACTIVATE:
		case SPULSE_TAG_MODULE_DEACTIVATE:
			in->deact_dropped++;
			continue;
		case SPULSE_TAG_EXT:
			break;
		default:
			continue;	/* definitions: written up front */
		}
		switch (in->rec.ext_kind) {
		case SPULSE_EXT_OFFCPU:
			in->kind = HEAD_OFFCPU;
			in->time = in->rec.u.offcpu.time_ns + in->shift_ns;
			return 1;
		case SPULSE_EXT_TRIGGER:
			in->kind = HEAD_TRIGGER;
			in->time = in->rec.u.trigger.time_ns + in->shift_ns;
			/* the text lives in the reader until its next record */
			memcpy(in->text, in->rec.u.trigger.text,
			       in->rec.u.trigger.text_len);
			in->text[in->rec.u.trigger.text_len] = '\0';
			in->rec.u.trigger.text = in->text;
			return 1;
		case SPULSE_EXT_CPU:		/* carried by each sample */
		case SPULSE_EXT_IDENTITY:	/* written up front */
		case SPULSE_EXT_THREAD_SOURCE:
			continue;
		default:
			in->ext_dropped++;
			continue;
		}
	}
}

/* ---- a binary min-heap of (time, input) entries ---- */

struct hent {
	int64_t time;
	uint32_t idx;
};

struct heap {
	struct hent *v;
	uint32_t n;
};

static inline bool hent_less(const struct hent *a, const struct hent *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

static void heap_down(struct heap *h, uint32_t i)
{
	struct hent e = h->v[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m;

		if (l >= h->n)
			break;
		m = l + 1 < h->n && hent_less(&h->v[l + 1], &h->v[l]) ? l + 1 : l;
		if (!hent_less(&h->v[m], &e))
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	h->v[i] = e;
}

/* ---- writing ---- */

struct merge {
	struct out o;
	struct input *in;
	size_t n;
	uint64_t start_us, interval_us;
	uint32_t nsources;
	int64_t last_sample, last_event;
	uint32_t cpu;
	uint64_t samples, offcpu, triggers;
};

/*
 * A recording id for an input without one: FNV-1a (two seeds) of its file
 * name, start and every byte of the file, so two different spools of the
 * same name and start get different ids (and the same file the same id).
 */
static int synth_recording_id(const char *path, const char *name,
			      uint64_t start_us, uint8_t out[16])
{
	static const uint64_t prime = 0x100000001b3ULL;
	uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
	unsigned char *buf = malloc(1 << 16);
	uint64_t size = 0;
	ssize_t n;
	int fd, k;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while ((n = read(fd, buf, 1 << 16)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			free(buf);
			return (int)n;
		}
		for (k = 0; k < 2; k++)
			for (ssize_t i = 0; i < n; i++)
				h[k] = (h[k] ^ buf[i]) * prime;
		size += (uint64_t)n;
	}
	close(fd);
	free(buf);
	for (k = 0; k < 2; k++) {
		const unsigned char *p = (const unsigned char *)name;

		for (; *p; p++)
			h[k] = (h[k] ^ *p) * prime;
		for (int i = 0; i < 8; i++) {
			h[k] = (h[k] ^ ((start_us >> (8 * i)) & 0xff)) * prime;
			h[k] = (h[k] ^ ((size >> (8 * i)) & 0xff)) * prime;
		}
		h[k] ^= (uint64_t)k << 56;
		h[k] *= prime;
		memcpy(out + 8 * k, &h[k], 8);
	}
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
	return 0;
}

static char *host_from_path(const char *path)
{
	char *copy = strdup(path), *base, *h;
	size_t n;

	if (!copy)
		return NULL;
	base = basename(copy);
	n = strlen(base);
	if (n > 7 && !strcmp(base + n - 7, ".spulse"))
		base[n - 7] = '\0';
	if (strlen(base) > SPULSE_MAX_HOST)
		base[SPULSE_MAX_HOST] = '\0';
	h = strdup(base);
	free(copy);
	return h;
}

static void write_identity(struct merge *m, const struct spulse_identity *id)
{
	struct spulse_identity_fields f = {
		.source = m->nsources++, .recording_id = id->recording_id,
		.start_us = id->start_us,
		/* whole strings: they may hold NUL bytes */
		.host = id->host, .host_len = id->host_len,
		.machine_id = id->machine_id,
		.machine_id_len = id->machine_id_len,
		.boot_id = id->boot_id, .boot_id_len = id->boot_id_len,
		.kernel = id->kernel, .kernel_len = id->kernel_len,
	};
	uint8_t *p = out_reserve(&m->o);

	m->o.len += spulse_enc_ext_identity(p, &f);
}

static int write_identities(struct merge *m, struct input *in)
{
	uint32_t n = spulse_defs_identity_count(in->d), s;
	struct spulse_identity id;
	int r;

	in->base[B_SRC] = m->nsources;
	if (!n) {
		in->synth_host = host_from_path(in->path);
		if (!in->synth_host)
			return -ENOMEM;
		memset(&id, 0, sizeof(id));
		r = synth_recording_id(in->path, in->synth_host,
				       spulse_replay_info(in->r)->start_us,
				       id.recording_id);
		if (r) {
			fprintf(stderr, "spulse merge: %s: %s\n", in->path,
				strerror(-r));
			return -EIO;
		}
		id.start_us = spulse_replay_info(in->r)->start_us;
		id.host = in->synth_host;
		id.host_len = (uint32_t)strlen(id.host);
		id.machine_id = id.boot_id = id.kernel = "";
		in->nsources = 1;
		if (m->nsources >= SPULSE_MAX_SOURCES)
			return -ENOSPC;
		write_identity(m, &id);
		return 0;
	}
	in->nsources = n;
	if ((uint64_t)m->nsources + n > SPULSE_MAX_SOURCES)
		return -ENOSPC;
	for (s = 0; s < n; s++) {
		if (spulse_defs_identity(in->d, s, &id))
			return -EIO;
		write_identity(m, &id);
	}
	return 0;
}

static int write_defs(struct merge *m, struct input *in)
{
	const struct spulse_defs *d = in->d;
	uint32_t i, n, *b = in->base;
	uint8_t *p;

	n = spulse_defs_count(d, SPULSE_TAG_MODULE);
	for (i = 0; i < n; i++) {
		struct spulse_module mod;

		if (spulse_defs_module(d, i, &mod))
			return -EIO;
		p = out_reserve(&m->o);
		m->o.len += spulse_enc_module(p, b[B_MOD] + i, mod.pid,
					      mod.start, mod.end,
					      mod.file_offset, mod.path,
					      mod.path_len, mod.build_id,
					      mod.build_id_len);
	}
	n = spulse_defs_count(d, SPULSE_TAG_FRAME);
	for (i = 0; i < n; i++) {
		struct spulse_frame f;
		uint32_t id = b[B_FRAME] + i;

		if (spulse_defs_frame(d, i, &f))
			return -EIO;
		p = out_reserve(&m->o);
		if (f.kind == SPULSE_FRAME_MODULE)
			m->o.len += spulse_enc_frame_module(p, id,
							    b[B_MOD] + f.module,
							    f.addr);
		else if (f.kind == SPULSE_FRAME_TRUNCATED)
			m->o.len += spulse_enc_frame_truncated(p, id);
		else
			m->o.len += spulse_enc_frame_abs(p, id, f.kind, f.addr);
	}
	n = spulse_defs_count(d, SPULSE_TAG_STACK);
	for (i = 0; i < n; i++) {
		struct spulse_stack s;

		if (spulse_defs_stack(d, i, &s))
			return -EIO;
		p = out_reserve(&m->o);
		m->o.len += spulse_enc_stack(p, b[B_STACK] + i,
					     s.parent == SPULSE_NONE ?
					     SPULSE_STACK_ROOT :
					     (uint64_t)b[B_STACK] + s.parent + 1,
					     b[B_FRAME] + s.frame);
	}
	n = spulse_defs_count(d, SPULSE_TAG_THREAD);
	for (i = 0; i < n; i++) {
		struct spulse_thread t;
		uint32_t src = spulse_defs_thread_source(d, i);

		if (spulse_defs_thread(d, i, &t))
			return -EIO;
		src = b[B_SRC] + (src == SPULSE_NONE ? 0 : src);
		p = out_reserve(&m->o);
		m->o.len += spulse_enc_thread(p, b[B_THREAD] + i, t.pid, t.tid,
					      t.comm, t.comm_len);
		if (src) {
			p = out_reserve(&m->o);
			m->o.len += spulse_enc_ext_thread_source(p,
						b[B_THREAD] + i, src);
		}
	}
	return 0;
}

/* Merged id bases: every kind's total must stay a u32 id space. */
static int assign_bases(struct merge *m)
{
	static const enum spulse_tag kinds[4] = {
		SPULSE_TAG_MODULE, SPULSE_TAG_FRAME, SPULSE_TAG_STACK,
		SPULSE_TAG_THREAD,
	};
	uint64_t total[4] = { 0 };
	size_t i;
	int k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < 4; k++) {
			m->in[i].base[k] = (uint32_t)total[k];
			total[k] += spulse_defs_count(m->in[i].d, kinds[k]);
			if (total[k] > SPULSE_MAX_ID)
				return -EOVERFLOW;
		}
	return 0;
}

static void emit(struct merge *m, struct input *in)
{
	const uint32_t *b = in->base;
	uint8_t *p = out_reserve(&m->o);

	switch (in->kind) {
	case HEAD_SAMPLE: {
		const struct spulse_sample *s = &in->rec.u.sample;

		if (s->cpu != SPULSE_NONE && s->cpu != m->cpu) {
			m->o.len += spulse_enc_ext_cpu(p, s->cpu);
			m->cpu = s->cpu;
			p = out_reserve(&m->o);
		}
		m->o.len += spulse_enc_sample(p, in->time - m->last_sample,
					      b[B_THREAD] + s->thread,
					      b[B_STACK] + s->stack);
		m->last_sample = in->time;
		m->samples++;
		break;
	}
	case HEAD_OFFCPU: {
		const struct spulse_offcpu *iv = &in->rec.u.offcpu;
		struct spulse_offcpu_fields f = {
			.dt_ns = in->time - m->last_event,
			.thread = b[B_THREAD] + iv->thread,
			.stack = b[B_STACK] + iv->stack, .state = iv->state,
			.cpu_out = iv->cpu_out, .cpu_in = iv->cpu_in,
			.blocked_ns = iv->blocked_ns, .runq_ns = iv->runq_ns,
			.has_waker = iv->waker_thread != SPULSE_NONE,
		};

		if (f.has_waker) {
			f.waker_thread = b[B_THREAD] + iv->waker_thread;
			f.waker_stack = b[B_STACK] + iv->waker_stack;
			f.waker_cpu = iv->waker_cpu;
		}
		m->o.len += spulse_enc_ext_offcpu(p, &f);
		m->last_event = in->time;
		m->offcpu++;
		break;
	}
	case HEAD_TRIGGER: {
		const struct spulse_trigger *t = &in->rec.u.trigger;
		bool window = t->window_start_ns || t->window_end_ns;
		struct spulse_trigger_fields f = {
			.dt_ns = in->time - m->last_event,
			.reason = t->reason, .seq = t->seq,
			.value_ns = t->value_ns,
			.threshold_ns = t->threshold_ns,
			.window_start_ns = t->window_start_ns +
				(window ? (uint64_t)in->shift_ns : 0),
			.window_end_ns = t->window_end_ns +
				(window ? (uint64_t)in->shift_ns : 0),
			.text = t->text, .text_len = t->text_len,
		};

		m->o.len += spulse_enc_ext_trigger(p, &f);
		m->last_event = in->time;
		m->triggers++;
		break;
	}
	case HEAD_NONE:
		break;
	}
}

static int merge_records(struct merge *m)
{
	struct heap h = { 0 };
	struct input *in = m->in;
	size_t i;
	int r;

	h.v = calloc(m->n, sizeof(*h.v));
	if (!h.v)
		return -ENOMEM;
	for (i = 0; i < m->n; i++) {
		in = &m->in[i];
		r = input_next(in);
		if (r < 0)
			goto fail;
		if (r)
			h.v[h.n++] = (struct hent){ m->in[i].time, (uint32_t)i };
	}
	for (i = h.n; i-- > 0;)
		heap_down(&h, (uint32_t)i);
	while (h.n) {
		in = &m->in[h.v[0].idx];
		emit(m, in);
		r = input_next(in);
		if (r < 0)
			goto fail;
		if (r)
			h.v[0].time = in->time;
		else
			h.v[0] = h.v[--h.n];
		heap_down(&h, 0);
		if (m->o.err)
			break;	/* reported by do_merge() */
	}
	free(h.v);
	return 0;
fail:
	fprintf(stderr, "spulse merge: %s: reading records: %s\n",
		in->path, strerror(-r));
	free(h.v);
	return r;
}

static char *kallsyms_of(const char *spool)
{
	char *p = malloc(strlen(spool) + sizeof(".kallsyms"));

	if (p)
		sprintf(p, "%s.kallsyms", spool);
	return p;
}

/* Does @in define a kernel frame? */
static bool has_kernel_frames(const struct input *in)
{
	uint32_t i, n = spulse_defs_count(in->d, SPULSE_TAG_FRAME);
	struct spulse_frame f;

	for (i = 0; i < n; i++)
		if (!spulse_defs_frame(in->d, i, &f) &&
		    f.kind == SPULSE_FRAME_KERNEL)
			return true;
	return false;
}

/* One distinct kernel symbol table of the inputs and the merged frame ids
 * it names. */
struct kgroup {
	char *text;
	size_t len;
	struct kallsyms_range *r;
	size_t nr;
};

static int kgroup_add(struct kgroup **g, size_t *ng, const char *text,
		      size_t len, uint32_t lo, uint32_t hi)
{
	struct kallsyms_range *r;
	struct kgroup *v;
	size_t i;

	for (i = 0; i < *ng; i++)
		if ((*g)[i].len == len && !memcmp((*g)[i].text, text, len))
			break;
	if (i == *ng) {
		v = realloc(*g, (*ng + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*g = v;
		memset(&v[i], 0, sizeof(*v));
		v[i].text = malloc(len ? len : 1);
		if (!v[i].text)
			return -ENOMEM;
		memcpy(v[i].text, text, len);
		v[i].len = len;
		(*ng)++;
	}
	r = realloc((*g)[i].r, ((*g)[i].nr + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	(*g)[i].r = r;
	r[(*g)[i].nr].lo = lo;
	r[(*g)[i].nr++].hi = hi;
	return 0;
}

/* Add input @in's sidecar (plain or itself merged) to the groups. */
static int kgroups_of_input(const struct input *in, const char *kpath,
			    struct kgroup **g, size_t *ng)
{
	uint32_t n = spulse_defs_count(in->d, SPULSE_TAG_FRAME);
	uint32_t base = in->base[B_FRAME];
	struct kallsyms_file f;
	size_t i, j;
	int r;

	r = kallsyms_file_read(kpath, &f);
	for (i = 0; !r && i < f.nsecs; i++) {
		const struct kallsyms_section *sec = &f.secs[i];

		if (!f.merged && n)
			r = kgroup_add(g, ng, sec->text, sec->len, base,
				       base + n - 1);
		for (j = 0; !r && j < sec->nranges; j++) {
			uint32_t lo = sec->ranges[j].lo, hi = sec->ranges[j].hi;

			if (lo >= n)
				continue;
			if (hi >= n)
				hi = n - 1;
			r = kgroup_add(g, ng, sec->text, sec->len, base + lo,
				       base + hi);
		}
	}
	kallsyms_file_free(&f);
	return r;
}

static int write_kgroups(FILE *o, const struct kgroup *g, size_t ng)
{
	size_t i, j;

	fprintf(o, "%s: kernel symbols of several boots (spulse merge); "
		"each #frames line lists the frame ids its lines name\n",
		KALLSYMS_MERGED_MAGIC);
	for (i = 0; i < ng; i++) {
		fputs(KALLSYMS_FRAMES_LINE, o);
		for (j = 0; j < g[i].nr; j++)
			fprintf(o, "%s%" PRIu32 "-%" PRIu32, j ? " " : "",
				g[i].r[j].lo, g[i].r[j].hi);
		fputc('\n', o);
		if (fwrite(g[i].text, 1, g[i].len, o) != g[i].len)
			return -EIO;
		if (g[i].len && g[i].text[g[i].len - 1] != '\n')
			fputc('\n', o);
	}
	return ferror(o) ? -EIO : 0;
}

/*
 * OUT.kallsyms: kernel frames keep their names per source. When every
 * input has the same kernel symbol file (one kernel, one boot), a copy of
 * it; when they differ (several boots or kernels), the sectioned form of
 * kallsyms.h: each distinct table once, with the merged frame ids of the
 * inputs it belongs to, so each frame is symbolized with its own boot's
 * symbols. An input with kernel frames and no sidecar is named once on
 * stderr (its kernel frames stay addresses). With no sidecar at all,
 * none (an old OUT.kallsyms is removed: it would name wrong symbols).
 */
static void merge_kallsyms(const struct merge *m, const char *out_path,
			   bool quiet)
{
	char *dst = kallsyms_of(out_path), *tmp = NULL;
	struct kgroup *g = NULL;
	size_t i, ng = 0, missing = 0;
	FILE *o = NULL;
	int fd = -1, r = 0;

	if (!dst)
		goto done;
	for (i = 0; i < m->n && !r; i++) {
		char *k = kallsyms_of(m->in[i].path);

		if (!k) {
			r = -ENOMEM;
		} else if (access(k, R_OK) == 0) {
			r = kgroups_of_input(&m->in[i], k, &g, &ng);
			if (r)
				fprintf(stderr, "spulse merge: %s: %s\n", k,
					strerror(-r));
		} else if (has_kernel_frames(&m->in[i])) {
			missing++;
			if (!quiet)
				fprintf(stderr, "spulse merge: %s has no %s: "
					"its kernel frames stay addresses\n",
					m->in[i].path, k);
		}
		free(k);
	}
	if (r || !ng) {
		unlink(dst);
		goto done;
	}
	tmp = malloc(strlen(dst) + sizeof(".XXXXXX"));
	if (!tmp)
		goto done;
	sprintf(tmp, "%s.XXXXXX", dst);
	fd = mkstemp(tmp);
	if (fd < 0 || !(o = fdopen(fd, "wb"))) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	fchmod(fd, 0644);
	if (ng == 1 && !missing) {
		/* one table for every frame: the plain file */
		if (fwrite(g[0].text, 1, g[0].len, o) != g[0].len)
			goto fail;
	} else if (write_kgroups(o, g, ng)) {
		goto fail;
	}
	if (fflush(o) || fsync(fd) || fclose(o)) {
		o = NULL;
		goto fail;
	}
	o = NULL;
	if (rename(tmp, dst))
		goto fail;
	goto done;
fail:
	fprintf(stderr, "spulse merge: %s: cannot write the kernel symbols\n",
		dst);
	if (o)
		fclose(o);
	unlink(tmp);
	unlink(dst);
done:
	for (i = 0; i < ng; i++) {
		free(g[i].text);
		free(g[i].r);
	}
	free(g);
	free(tmp);
	free(dst);
}

/* Temporary file in OUT's directory: "DIR/.NAME.XXXXXX". */
static char *temp_name(const char *out)
{
	const char *slash = strrchr(out, '/');
	size_t dl = slash ? (size_t)(slash - out + 1) : 0;
	char *t = malloc(strlen(out) + 10);

	if (!t)
		return NULL;
	memcpy(t, out, dl);
	sprintf(t + dl, ".%s.XXXXXX", out + dl);
	return t;
}

static int open_inputs(struct merge *m, char **paths)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		struct spulse_read_opts ro = { .sz = sizeof(ro) };
		struct spulse_error err = { 0 };
		const struct spulse_info *info;
		struct stat st;
		int r;

		in->path = paths[i];
		/* a file shorter than the smallest header (magic, two
		 * one-byte varints) is no spool: say where it ends */
		if (!stat(in->path, &st) && S_ISREG(st.st_mode) &&
		    st.st_size < SPULSE_MAGIC_LEN + 2) {
			fprintf(stderr, "spulse merge: %s: offset %lld: file "
				"ends inside the stream header (%lld bytes, a "
				"header has at least %d)\n", in->path,
				(long long)st.st_size, (long long)st.st_size,
				SPULSE_MAGIC_LEN + 2);
			return -EINVAL;
		}
		r = spulse_replay_open(in->path, &ro, &in->r, &err);
		if (r) {
			fprintf(stderr, "spulse merge: ");
			cli_print_read_error(in->path, r, &err);
			return r;
		}
		in->d = spulse_replay_defs(in->r);
		info = spulse_replay_info(in->r);
		if (spulse_replay_recovered_from_truncated_tail(in->r) &&
		    !stat(in->path, &st))
			fprintf(stderr, "%s: recovered, %llu bytes of a cut record"
				" ignored\n", in->path,
				(unsigned long long)((uint64_t)st.st_size -
						     info->complete_bytes));
		if (!i || info->start_us < m->start_us)
			m->start_us = info->start_us;
		if (!i) {
			m->interval_us = info->interval_us;
		} else if (m->interval_us != info->interval_us) {
			/* one interval per spool (FORMAT.md header): a
			 * merged 0 would leave every sample without a
			 * weight (pprof cpu, perf-script period) */
			fprintf(stderr, "spulse merge: %s: sampled every %"
				PRIu64 " us, %s every %" PRIu64 " us: a spool "
				"holds one sample interval, so the samples of "
				"one would get the other's weight; merge "
				"spools of one rate\n", paths[0],
				m->interval_us, in->path, info->interval_us);
			return -EINVAL;
		}
	}
	for (i = 0; i < m->n; i++)
		m->in[i].shift_ns = (int64_t)(spulse_replay_info(m->in[i].r)
					      ->start_us - m->start_us) * 1000;
	return 0;
}

static int do_merge(struct merge *m, const char *out_path, bool quiet)
{
	char *tmp = temp_name(out_path);
	uint64_t dropped_ext = 0, dropped_py = 0, dropped_deact = 0;
	size_t i;
	int r;

	if (!tmp)
		return -ENOMEM;
	m->o.fd = mkstemp(tmp);
	if (m->o.fd < 0) {
		r = -errno;
		fprintf(stderr, "spulse merge: %s: %s\n", tmp, strerror(-r));
		free(tmp);
		return r;
	}
	fchmod(m->o.fd, 0644);
	m->cpu = SPULSE_NONE;
	m->o.len = spulse_enc_header(m->o.buf, m->start_us, m->interval_us);
	r = assign_bases(m);
	if (r) {
		fprintf(stderr, "spulse merge: more than %u definitions of a"
			" kind\n", SPULSE_MAX_ID);
		goto fail;
	}
	for (i = 0; i < m->n && !r; i++)
		r = write_identities(m, &m->in[i]);
	if (r == -EIO)
		goto fail;
	if (r) {
		fprintf(stderr, "spulse merge: more than %u sources\n",
			SPULSE_MAX_SOURCES);
		goto fail;
	}
	for (i = 0; i < m->n && !r; i++)
		r = write_defs(m, &m->in[i]);
	if (r)
		goto fail;
	r = merge_records(m);
	if (r)
		goto fail;
	out_flush(&m->o);
	if (!m->o.err && fsync(m->o.fd))
		m->o.err = -errno;
	if (close(m->o.fd) && !m->o.err)
		m->o.err = -errno;
	m->o.fd = -1;
	if (m->o.err) {
		r = m->o.err;
		fprintf(stderr, "spulse merge: writing %s: %s\n", tmp,
			strerror(-r));
		goto fail;
	}
	if (rename(tmp, out_path)) {
		r = -errno;
		fprintf(stderr, "spulse merge: %s: %s\n", out_path,
			strerror(-r));
		goto fail;
	}
	free(tmp);
	merge_kallsyms(m, out_path, quiet);
	for (i = 0; i < m->n; i++) {
		dropped_ext += m->in[i].ext_dropped;
		dropped_py += m->in[i].python_dropped;
		dropped_deact += m->in[i].deact_dropped;
	}
	if (!quiet)
		printf("%s: %zu inputs, %u sources, %" PRIu64 " samples, %"
		       PRIu64 " off-CPU intervals, %" PRIu64 " triggers, %"
		       PRIu64 " bytes (not carried: %" PRIu64 " python, %"
		       PRIu64 " deactivation, %" PRIu64 " unknown extension"
		       " records)\n", out_path, m->n, m->nsources, m->samples,
		       m->offcpu, m->triggers, m->o.bytes, dropped_py,
		       dropped_deact, dropped_ext);
	return 0;
fail:
	if (m->o.fd >= 0)
		close(m->o.fd);
	unlink(tmp);
	free(tmp);
	return r;
}

/*
 * Is OUT one of the inputs (the same file, by device and inode, whatever
 * the path or hard link)? Replacing it would lose that input's bytes.
 */
static bool output_is_input(const char *out, char **paths, size_t n)
{
	struct stat so, si;
	size_t i;

	if (stat(out, &so))
		return false;
	for (i = 0; i < n; i++)
		if (!stat(paths[i], &si) && si.st_dev == so.st_dev &&
		    si.st_ino == so.st_ino) {
			fprintf(stderr, "spulse merge: output %s is the input "
				"%s (the same file): choose another -o\n",
				out, paths[i]);
			return true;
		}
	return false;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct merge m = { .o = { .fd = -1 } };
	const char *out = NULL;
	bool quiet = false;
	size_t i;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(merge_help, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("merge", "unknown option");
		}
	}
	if (!out)
		return cli_usage_error("merge", "-o OUT is required");
	if (optind >= argc)
		return cli_usage_error("merge", "no input spools");
	m.n = (size_t)(argc - optind);
	m.in = calloc(m.n, sizeof(*m.in));
	m.o.buf = malloc(OUT_BUF);
	if (!m.in || !m.o.buf) {
		fprintf(stderr, "spulse merge: out of memory\n");
		free(m.in);
		free(m.o.buf);
		return EXIT_INVALID;
	}
	if (output_is_input(out, argv + optind, m.n)) {
		free(m.in);
		free(m.o.buf);
		return EXIT_USAGE;
	}
	r = open_inputs(&m, argv + optind);
	if (!r)
		r = do_merge(&m, out, quiet);
	for (i = 0; i < m.n; i++) {
		if (m.in[i].r)
			spulse_replay_close(m.in[i].r);
		free(m.in[i].synth_host);
	}
	free(m.in);
	free(m.o.buf);
	return r ? EXIT_INVALID : EXIT_OK;
}
