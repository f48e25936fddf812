/* SPDX-License-Identifier: MIT */
/*
 * spulse export --format pprof: a gzipped profile.proto message (the
 * schema of github.com/google/pprof, proto/profile.proto), read by
 * `go tool pprof`.
 *
 *   sample_type   [samples/count, cpu/nanoseconds]; default "samples"
 *   sample        one per distinct (thread, leaf stack): location ids leaf
 *                 first, values [n, n * period], labels pid, tid, comm
 *   mapping       one per module used (memory range, file offset, path,
 *                 build-id) and one "[kernel.kallsyms]" for kernel frames
 *   location      one per spool frame used: absolute address, mapping,
 *                 lines (with --inline the inline chain, innermost first)
 *   function      per distinct (name, file): name = the symbol (or the
 *                 frame's display label when unresolved, as spulse report
 *                 prints it), system_name the same, filename the source file
 *   period_type   cpu/nanoseconds, period = interval_us * 1000
 *   time_nanos    start_us * 1000, duration_nanos up to the last sample
 *
 * Encoded by the small encoder of pprof_pb.c (no generated code: the
 * message has six kinds of fields) and compressed with zlib's gzip
 * wrapper.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/util.h"
#include "export_fmt.h"
#include "pprof_pb.h"
#include "sym/strtab.h"

/* profile.proto field numbers */
enum {
	PROF_SAMPLE_TYPE = 1, PROF_SAMPLE, PROF_MAPPING, PROF_LOCATION,
	PROF_FUNCTION, PROF_STRING_TABLE, PROF_DROP, PROF_KEEP, PROF_TIME,
	PROF_DURATION, PROF_PERIOD_TYPE, PROF_PERIOD, PROF_COMMENT,
	PROF_DEFAULT_SAMPLE_TYPE,
};

/* (thread << 32 | stack) -> count, open addressing */
struct agg {
	uint64_t *keys;		/* key + 1; 0 = empty */
	uint64_t *counts;
	size_t n, cap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int agg_grow(struct agg *a)
{
	size_t nc = a->cap ? a->cap * 2 : 4096, i;
	uint64_t *nk = calloc(nc, sizeof(*nk)), *nv = calloc(nc, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < a->cap; i++) {
		size_t j;

		if (!a->keys[i])
			continue;
		j = mix(a->keys[i]) & (nc - 1);
		while (nk[j])
			j = (j + 1) & (nc - 1);
		nk[j] = a->keys[i];
		nv[j] = a->counts[i];
	}
	free(a->keys);
	free(a->counts);
	a->keys = nk;
	a->counts = nv;
	a->cap = nc;
	return 0;
}

static int agg_add(struct agg *a, uint64_t key)
{
	size_t j;

	key++;
	if (2 * (a->n + 1) > a->cap && agg_grow(a) < 0)
		return -ENOMEM;
	j = mix(key) & (a->cap - 1);
	while (a->keys[j] && a->keys[j] != key)
		j = (j + 1) & (a->cap - 1);
	if (!a->keys[j]) {
		a->keys[j] = key;
		a->n++;
	}
	a->counts[j]++;
	return 0;
}

struct pp {
	struct profile *p;
	const struct export_opts *o;
	struct strtab strs;	/* string_table; id 0 = "" */
	struct strtab fkeys;	/* function identity "name\x1f" "file" */
	uint32_t *fn_name, *fn_file;
	size_t nfn, fn_cap;
	uint8_t *frame_used;	/* per frame id */
	uint8_t *module_used;	/* per module id */
	uint32_t nframes, nmodules;
	uint64_t kmin, kmax;	/* kernel frame address range */
	bool kernel_used;
	bool oom;
};

static uint64_t str_id(struct pp *pp, const char *s)
{
	int64_t id = strtab_intern(&pp->strs, s ? s : "");

	if (id < 0) {
		pp->oom = true;
		return 0;
	}
	return (uint64_t)id;
}

/* Function id (1-based) of (@name, @file). */
static uint64_t func_id(struct pp *pp, const char *name, const char *file)
{
	size_t ln = strlen(name), lf = file ? strlen(file) : 0;
	char *key = malloc(ln + lf + 2);
	int64_t id;

	if (!key) {
		pp->oom = true;
		return 0;
	}
	memcpy(key, name, ln);
	key[ln] = 0x1f;
	memcpy(key + ln + 1, file ? file : "", lf);
	key[ln + 1 + lf] = 0;
	id = strtab_intern(&pp->fkeys, key);
	free(key);
	if (id < 0) {
		pp->oom = true;
		return 0;
	}
	if ((size_t)id == pp->nfn) {
		if (pp->nfn == pp->fn_cap) {
			size_t nc = pp->fn_cap ? pp->fn_cap * 2 : 256;
			uint32_t *a = realloc(pp->fn_name, nc * sizeof(*a));
			uint32_t *b;

			if (!a) {
				pp->oom = true;
				return 0;
			}
			pp->fn_name = a;
			b = realloc(pp->fn_file, nc * sizeof(*b));
			if (!b) {
				pp->oom = true;
				return 0;
			}
			pp->fn_file = b;
			pp->fn_cap = nc;
		}
		pp->fn_name[pp->nfn] = (uint32_t)str_id(pp, name);
		pp->fn_file[pp->nfn] = (uint32_t)str_id(pp, file);
		pp->nfn++;
	}
	return (uint64_t)id + 1;
}

static void value_type(struct pp *pp, struct pb_buf *out, uint32_t field,
		       const char *type, const char *unit)
{
	struct pb_buf m;

	pb_init(&m);
	pb_uint(&m, 1, str_id(pp, type));
	pb_uint(&m, 2, str_id(pp, unit));
	pb_message(out, field, &m);
	pb_free(&m);
}

static void label(struct pp *pp, struct pb_buf *out, const char *key,
		  const char *str, int64_t num)
{
	struct pb_buf m;

	pb_init(&m);
	pb_uint(&m, 1, str_id(pp, key));
	if (str)
		pb_uint(&m, 2, str_id(pp, str));
	else
		pb_uint(&m, 3, (uint64_t)num);
	pb_message(out, 3, &m);
	pb_free(&m);
}

/* The samples: aggregate, then one Sample per (thread, stack). */
static int write_samples(struct pp *pp, struct pb_buf *out,
			 uint64_t *last_ns)
{
	struct profile *p = pp->p;
	uint64_t period = export_period_ns(p);
	struct spulse_sample buf[1024];
	struct agg a = { 0 };
	struct pb_buf m;
	size_t i;
	int rc, k;

	*last_ns = 0;
	while ((rc = spulse_replay_next_samples(p->replay, buf, 1024)) > 0) {
		for (k = 0; k < rc; k++) {
			const struct spulse_sample *s = &buf[k];

			if (!profile_wants(p, s))
				continue;
			if (agg_add(&a, (uint64_t)s->thread << 32 | s->stack)) {
				rc = -ENOMEM;
				goto out;
			}
			if ((uint64_t)s->time_ns > *last_ns)
				*last_ns = (uint64_t)s->time_ns;
		}
	}
	if (rc < 0)
		goto out;
	pb_init(&m);
	for (i = 0; i < a.cap; i++) {
		uint32_t frames[SPULSE_MAX_DEPTH];
		uint64_t locs[SPULSE_MAX_DEPTH], vals[2];
		struct spulse_thread t;
		uint32_t thread, stack;
		int n, j;

		if (!a.keys[i])
			continue;
		thread = (uint32_t)((a.keys[i] - 1) >> 32);
		stack = (uint32_t)(a.keys[i] - 1);
		n = profile_stack_frames(p, stack, frames);
		if (n == 0)
			continue;	/* every frame dropped (--kernel/--user) */
		if (n < 0 || spulse_defs_thread(p->defs, thread, &t) < 0) {
			fprintf(stderr, "%s: broken stack %u\n", p->file,
				stack);
			pb_free(&m);
			rc = -EBADMSG;
			goto out;
		}
		for (j = 0; j < n; j++) {
			locs[j] = (uint64_t)frames[n - 1 - j] + 1;
			if (frames[j] < pp->nframes)
				pp->frame_used[frames[j]] = 1;
		}
		vals[0] = a.counts[i];
		vals[1] = a.counts[i] * period;
		pb_reset(&m);
		pb_packed(&m, 1, locs, (size_t)n);
		pb_packed(&m, 2, vals, 2);
		label(pp, &m, "pid", NULL, t.pid);
		label(pp, &m, "tid", NULL, t.tid);
		label(pp, &m, "comm", t.comm, 0);
		pb_message(out, PROF_SAMPLE, &m);
	}
	pb_free(&m);
	rc = 0;
out:
	free(a.keys);
	free(a.counts);
	return rc;
}

static void write_line(struct pp *pp, struct pb_buf *loc,
		       const struct sym_frame *sf)
{
	const char *name = sf->func ? sf->func : sf->label;
	struct pb_buf m;

	pb_init(&m);
	pb_uint(&m, 1, func_id(pp, name, sf->file));
	pb_uint_nz(&m, 2, sf->line);
	pb_message(loc, 4, &m);
	pb_free(&m);
}

static int write_locations(struct pp *pp, struct pb_buf *out)
{
	struct profile *p = pp->p;
	struct pb_buf m;
	uint32_t id;

	pb_init(&m);
	for (id = 0; id < pp->nframes; id++) {
		const struct sym_frame *sf, *chain;
		struct spulse_frame fr;
		uint64_t addr = 0, mapping = 0;
		uint32_t k, n = 1;

		if (!pp->frame_used[id])
			continue;
		if (spulse_defs_frame(p->defs, id, &fr) < 0)
			continue;
		sf = symbolizer_frame(p->sym, id);
		if (!sf) {
			pp->oom = true;
			break;
		}
		chain = sf;
		if (pp->o->inline_frames) {
			n = symbolizer_inline_chain(p->sym, id, &chain);
			if (!n) {
				chain = sf;
				n = 1;
			}
		}
		if (fr.kind != SPULSE_FRAME_TRUNCATED)
			spulse_defs_frame_address(p->defs, id, &addr);
		if (fr.kind == SPULSE_FRAME_MODULE &&
		    fr.module < pp->nmodules) {
			pp->module_used[fr.module] = 1;
			mapping = (uint64_t)fr.module + 1;
		} else if (fr.kind == SPULSE_FRAME_KERNEL) {
			if (!pp->kernel_used || addr < pp->kmin)
				pp->kmin = addr;
			if (!pp->kernel_used || addr > pp->kmax)
				pp->kmax = addr;
			pp->kernel_used = true;
			mapping = (uint64_t)pp->nmodules + 1;
		}
		pb_reset(&m);
		pb_uint(&m, 1, (uint64_t)id + 1);
		pb_uint_nz(&m, 2, mapping);
		pb_uint_nz(&m, 3, addr);
		for (k = 0; k < n; k++)
			write_line(pp, &m, &chain[k]);
		pb_message(out, PROF_LOCATION, &m);
	}
	pb_free(&m);
	return pp->oom ? -ENOMEM : 0;
}

static void hex(char *dst, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		dst[2 * i] = digits[b[i] >> 4];
		dst[2 * i + 1] = digits[b[i] & 15];
	}
	dst[2 * n] = 0;
}

static void write_mappings(struct pp *pp, struct pb_buf *out)
{
	struct profile *p = pp->p;
	struct pb_buf m;
	uint32_t id;

	pb_init(&m);
	for (id = 0; id < pp->nmodules; id++) {
		struct spulse_module mod;
		char bid[2 * 64 + 1];

		if (!pp->module_used[id] ||
		    spulse_defs_module(p->defs, id, &mod) < 0)
			continue;
		hex(bid, mod.build_id,
		    mod.build_id_len > 64 ? 64 : mod.build_id_len);
		pb_reset(&m);
		pb_uint(&m, 1, (uint64_t)id + 1);
		pb_uint(&m, 2, mod.start);
		pb_uint(&m, 3, mod.end);
		pb_uint_nz(&m, 4, mod.file_offset);
		pb_uint(&m, 5, str_id(pp, mod.path));
		pb_uint_nz(&m, 6, str_id(pp, bid));
		pb_uint(&m, 7, 1);	/* has_functions: we name every location */
		pb_uint(&m, 8, 1);	/* has_filenames */
		pb_message(out, PROF_MAPPING, &m);
	}
	if (pp->kernel_used) {
		pb_reset(&m);
		pb_uint(&m, 1, (uint64_t)pp->nmodules + 1);
		pb_uint(&m, 2, pp->kmin);
		pb_uint(&m, 3, pp->kmax + 1);
		pb_uint(&m, 5, str_id(pp, "[kernel.kallsyms]"));
		pb_uint(&m, 7, 1);
		pb_message(out, PROF_MAPPING, &m);
	}
	pb_free(&m);
}

static void write_functions(struct pp *pp, struct pb_buf *out)
{
	struct pb_buf m;
	size_t i;

	pb_init(&m);
	for (i = 0; i < pp->nfn; i++) {
		pb_reset(&m);
		pb_uint(&m, 1, i + 1);
		pb_uint(&m, 2, pp->fn_name[i]);
		pb_uint(&m, 3, pp->fn_name[i]);
		pb_uint_nz(&m, 4, pp->fn_file[i]);
		pb_message(out, PROF_FUNCTION, &m);
	}
	pb_free(&m);
}

/* gzip @b to @f */
static int write_gzip(FILE *f, const struct pb_buf *b)
{
	uint8_t chunk[65536];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: zlib's gzip wrapper; level 1 keeps export fast */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->p;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, f) !=
		    sizeof(chunk) - z.avail_out) {
			zr = Z_ERRNO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int export_pprof(struct profile *p, FILE *f, const struct export_opts *o)
{
	struct pp pp = { .p = p, .o = o };
	struct pb_buf out;
	uint64_t last_ns = 0;
	size_t i;
	int rc;

	pb_init(&out);
	strtab_init(&pp.strs);
	strtab_init(&pp.fkeys);
	str_id(&pp, "");	/* string_table[0] must be "" */
	pp.nframes = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	pp.nmodules = spulse_defs_count(p->defs, SPULSE_TAG_MODULE);
	pp.frame_used = calloc(pp.nframes ? pp.nframes : 1, 1);
	pp.module_used = calloc(pp.nmodules ? pp.nmodules : 1, 1);
	if (!pp.frame_used || !pp.module_used) {
		rc = -ENOMEM;
		goto out;
	}
	value_type(&pp, &out, PROF_SAMPLE_TYPE, "samples", "count");
	value_type(&pp, &out, PROF_SAMPLE_TYPE, "cpu", "nanoseconds");
	rc = write_samples(&pp, &out, &last_ns);
	if (rc < 0)
		goto out;
	rc = write_locations(&pp, &out);
	if (rc < 0)
		goto out;
	write_mappings(&pp, &out);
	write_functions(&pp, &out);
	pb_uint(&out, PROF_TIME, p->info->start_us * 1000);
	pb_uint_nz(&out, PROF_DURATION, last_ns);
	value_type(&pp, &out, PROF_PERIOD_TYPE, "cpu", "nanoseconds");
	pb_uint_nz(&out, PROF_PERIOD, export_period_ns(p));
	pb_uint(&out, PROF_COMMENT, str_id(&pp, "spulse export"));
	pb_uint(&out, PROF_DEFAULT_SAMPLE_TYPE, str_id(&pp, "samples"));
	/* string_table last: every string is interned by now */
	for (i = 0; i < pp.strs.n; i++)
		pb_bytes(&out, PROF_STRING_TABLE, pp.strs.strs[i],
			 strlen(pp.strs.strs[i]));
	if (out.oom || pp.oom) {
		rc = -ENOMEM;
		goto out;
	}
	if (out.len > UINT32_MAX) {
		rc = -EFBIG;
		goto out;
	}
	rc = write_gzip(f, &out);
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "spulse: out of memory\n");
	else if (rc == -EFBIG)
		fprintf(stderr, "%s: pprof message over 4 GiB\n", p->file);
	else if (rc < 0 && rc != -EBADMSG)
		fprintf(stderr, "%s: pprof export: %s\n", p->file,
			strerror(-rc));
	free(pp.frame_used);
	free(pp.module_used);
	free(pp.fn_name);
	free(pp.fn_file);
	strtab_free(&pp.strs);
	strtab_free(&pp.fkeys);
	pb_free(&out);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}
