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
 * The message is filled in the structs protoc-c generates from the
 * upstream schema (user/export/proto/profile.proto, compiled at build time
 * by mk/cli.mk), packed by libprotobuf-c (which leaves out proto3 zero
 * values) and compressed with zlib's gzip wrapper.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/util.h"
#include "export_fmt.h"
#include "profile.pb-c.h"
#include "sym/strtab.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

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
	/* the message's parts, owned here (freed by pp_free()) */
	pb_sample *samples, **sample_ptrs;
	pb_label *labels, **label_ptrs;	/* 3 per sample */
	int64_t *values;		/* 2 per sample */
	size_t nsamples;
	pb_location *locs, **loc_ptrs;
	pb_line *lines, **line_ptrs;	/* lines of all locations */
	size_t nlocs, nlines, cap_lines;
	pb_mapping *maps, **map_ptrs;
	size_t nmaps;
	pb_function *funcs, **func_ptrs;
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

/*
 * The string table's entries are C strings (libprotobuf-c): a string
 * holding a NUL byte (a module path, an unresolved frame's label) goes in
 * as its printed text (docs/CLI.md "Printing spool text"), never cut.
 * Returns @s itself or a malloc'ed copy in *@fr (NULL: out of memory).
 */
static const char *no_nul(const char *s, size_t len, char **fr)
{
	*fr = NULL;
	if (!memchr(s, 0, len))
		return s;
	*fr = cli_text_dup(s, len);
	return *fr;
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

static void label(struct pp *pp, pb_label *l, const char *key,
		  const char *str, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = (int64_t)str_id(pp, key);
	if (str)
		l->str = (int64_t)str_id(pp, str);
	else
		l->num = num;
}

/* The samples: aggregate, then one Sample per (thread, stack). */
static int write_samples(struct pp *pp, pb_profile *out, uint64_t *last_ns)
{
	struct profile *p = pp->p;
	uint64_t period = export_period_ns(p);
	struct spulse_sample buf[1024];
	struct agg a = { 0 };
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
	if (a.n) {
		pp->samples = calloc(a.n, sizeof(*pp->samples));
		pp->sample_ptrs = calloc(a.n, sizeof(*pp->sample_ptrs));
		pp->labels = calloc(3 * a.n, sizeof(*pp->labels));
		pp->label_ptrs = calloc(3 * a.n, sizeof(*pp->label_ptrs));
		pp->values = calloc(2 * a.n, sizeof(*pp->values));
		if (!pp->samples || !pp->sample_ptrs || !pp->labels ||
		    !pp->label_ptrs || !pp->values) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < a.cap; i++) {
		uint32_t frames[SPULSE_MAX_DEPTH];
		struct spulse_thread t;
		uint32_t thread, stack;
		pb_sample *sm;
		pb_label *l;
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
			rc = -EBADMSG;
			goto out;
		}
		sm = &pp->samples[pp->nsamples];
		perftools__profiles__sample__init(sm);
		sm->location_id = malloc((size_t)n * sizeof(*sm->location_id));
		if (!sm->location_id) {
			rc = -ENOMEM;
			goto out;
		}
		pp->sample_ptrs[pp->nsamples] = sm;
		sm->n_location_id = (size_t)n;
		for (j = 0; j < n; j++) {
			sm->location_id[j] = (uint64_t)frames[n - 1 - j] + 1;
			if (frames[j] < pp->nframes)
				pp->frame_used[frames[j]] = 1;
		}
		sm->n_value = 2;
		sm->value = &pp->values[2 * pp->nsamples];
		sm->value[0] = (int64_t)a.counts[i];
		sm->value[1] = (int64_t)(a.counts[i] * period);
		l = &pp->labels[3 * pp->nsamples];
		label(pp, &l[0], "pid", NULL, t.pid);
		label(pp, &l[1], "tid", NULL, t.tid);
		label(pp, &l[2], "comm", t.comm, 0);
		sm->n_label = 3;
		sm->label = &pp->label_ptrs[3 * pp->nsamples];
		for (j = 0; j < 3; j++)
			sm->label[j] = &l[j];
		pp->nsamples++;
	}
	out->n_sample = pp->nsamples;
	out->sample = pp->sample_ptrs;
	rc = 0;
out:
	free(a.keys);
	free(a.counts);
	return rc;
}

/* Append a Line for @sf to pp->lines (pointers are set once all are in). */
static void add_line(struct pp *pp, const struct sym_frame *sf)
{
	char *fr = NULL;
	const char *name = sf->func ? sf->func :
			   no_nul(sf->label, sf->label_len, &fr);
	pb_line *ln;

	if (!name) {
		pp->oom = true;
		return;
	}
	if (pp->nlines == pp->cap_lines) {
		size_t nc = pp->cap_lines ? pp->cap_lines * 2 : 1024;
		pb_line *v = realloc(pp->lines, nc * sizeof(*v));

		if (!v) {
			pp->oom = true;
			free(fr);
			return;
		}
		pp->lines = v;
		pp->cap_lines = nc;
	}
	ln = &pp->lines[pp->nlines++];
	perftools__profiles__line__init(ln);
	ln->function_id = func_id(pp, name, sf->file);
	ln->line = sf->line;
	free(fr);
}

static int write_locations(struct pp *pp, pb_profile *out)
{
	struct profile *p = pp->p;
	size_t i, nl = 0;
	uint32_t id;

	pp->locs = calloc(pp->nframes ? pp->nframes : 1, sizeof(*pp->locs));
	pp->loc_ptrs = calloc(pp->nframes ? pp->nframes : 1,
			      sizeof(*pp->loc_ptrs));
	if (!pp->locs || !pp->loc_ptrs)
		return -ENOMEM;
	for (id = 0; id < pp->nframes; id++) {
		const struct sym_frame *sf, *chain;
		struct spulse_frame fr;
		uint64_t addr = 0, mapping = 0;
		uint32_t k, n = 1;
		pb_location *loc;

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
		loc = &pp->locs[pp->nlocs];
		pp->loc_ptrs[pp->nlocs++] = loc;
		perftools__profiles__location__init(loc);
		loc->id = (uint64_t)id + 1;
		loc->mapping_id = mapping;
		loc->address = addr;
		loc->n_line = n;	/* ->line is set below */
		for (k = 0; k < n; k++)
			add_line(pp, &chain[k]);
	}
	if (pp->oom)
		return -ENOMEM;
	/* pp->lines is complete: point every location at its lines */
	pp->line_ptrs = calloc(pp->nlines ? pp->nlines : 1,
			       sizeof(*pp->line_ptrs));
	if (!pp->line_ptrs)
		return -ENOMEM;
	for (i = 0; i < pp->nlines; i++)
		pp->line_ptrs[i] = &pp->lines[i];
	for (i = 0; i < pp->nlocs; i++) {
		pp->locs[i].line = &pp->line_ptrs[nl];
		nl += pp->locs[i].n_line;
	}
	out->n_location = pp->nlocs;
	out->location = pp->loc_ptrs;
	return 0;
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

static int write_mappings(struct pp *pp, pb_profile *out)
{
	struct profile *p = pp->p;
	size_t cap = (size_t)pp->nmodules + 1;
	pb_mapping *m;
	uint32_t id;

	pp->maps = calloc(cap, sizeof(*pp->maps));
	pp->map_ptrs = calloc(cap, sizeof(*pp->map_ptrs));
	if (!pp->maps || !pp->map_ptrs)
		return -ENOMEM;
	for (id = 0; id < pp->nmodules; id++) {
		struct spulse_module mod;
		char bid[2 * 64 + 1];

		if (!pp->module_used[id] ||
		    spulse_defs_module(p->defs, id, &mod) < 0)
			continue;
		hex(bid, mod.build_id,
		    mod.build_id_len > 64 ? 64 : mod.build_id_len);
		m = &pp->maps[pp->nmaps];
		pp->map_ptrs[pp->nmaps++] = m;
		perftools__profiles__mapping__init(m);
		m->id = (uint64_t)id + 1;
		m->memory_start = mod.start;
		m->memory_limit = mod.end;
		m->file_offset = mod.file_offset;
		{
			char *fr;
			const char *fn = no_nul(mod.path, mod.path_len, &fr);

			if (!fn)
				pp->oom = true;
			m->filename = (int64_t)str_id(pp, fn ? fn : "");
			free(fr);
		}
		m->build_id = (int64_t)str_id(pp, bid);
		m->has_functions = 1;	/* we name every location */
		m->has_filenames = 1;
	}
	if (pp->kernel_used) {
		m = &pp->maps[pp->nmaps];
		pp->map_ptrs[pp->nmaps++] = m;
		perftools__profiles__mapping__init(m);
		m->id = (uint64_t)pp->nmodules + 1;
		m->memory_start = pp->kmin;
		m->memory_limit = pp->kmax + 1;
		m->filename = (int64_t)str_id(pp, "[kernel.kallsyms]");
		m->has_functions = 1;
	}
	out->n_mapping = pp->nmaps;
	out->mapping = pp->map_ptrs;
	return 0;
}

static int write_functions(struct pp *pp, pb_profile *out)
{
	size_t i;

	pp->funcs = calloc(pp->nfn ? pp->nfn : 1, sizeof(*pp->funcs));
	pp->func_ptrs = calloc(pp->nfn ? pp->nfn : 1, sizeof(*pp->func_ptrs));
	if (!pp->funcs || !pp->func_ptrs)
		return -ENOMEM;
	for (i = 0; i < pp->nfn; i++) {
		pb_function *fn = &pp->funcs[i];

		perftools__profiles__function__init(fn);
		fn->id = i + 1;
		fn->name = pp->fn_name[i];
		fn->system_name = pp->fn_name[i];
		fn->filename = pp->fn_file[i];
		pp->func_ptrs[i] = fn;
	}
	out->n_function = pp->nfn;
	out->function = pp->func_ptrs;
	return 0;
}

/* gzip @len bytes at @data to @f */
static int write_gzip(FILE *f, const uint8_t *data, size_t len)
{
	uint8_t chunk[65536];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: zlib's gzip wrapper; level 1 keeps export fast */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
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

static void pp_free(struct pp *pp)
{
	size_t i;

	for (i = 0; i < pp->nsamples; i++)
		free(pp->samples[i].location_id);
	free(pp->samples);
	free(pp->sample_ptrs);
	free(pp->labels);
	free(pp->label_ptrs);
	free(pp->values);
	free(pp->locs);
	free(pp->loc_ptrs);
	free(pp->lines);
	free(pp->line_ptrs);
	free(pp->maps);
	free(pp->map_ptrs);
	free(pp->funcs);
	free(pp->func_ptrs);
	free(pp->frame_used);
	free(pp->module_used);
	free(pp->fn_name);
	free(pp->fn_file);
	strtab_free(&pp->strs);
	strtab_free(&pp->fkeys);
}

int export_pprof(struct profile *p, FILE *f, const struct export_opts *o)
{
	struct pp pp = { .p = p, .o = o };
	pb_profile out = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type st[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	pb_value_type pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	pb_value_type *st_ptrs[2] = { &st[0], &st[1] };
	int64_t comment;
	uint8_t *msg = NULL;
	uint64_t last_ns = 0;
	size_t len;
	int rc;

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
	st[0].type = (int64_t)str_id(&pp, "samples");
	st[0].unit = (int64_t)str_id(&pp, "count");
	st[1].type = (int64_t)str_id(&pp, "cpu");
	st[1].unit = (int64_t)str_id(&pp, "nanoseconds");
	out.n_sample_type = 2;
	out.sample_type = st_ptrs;
	rc = write_samples(&pp, &out, &last_ns);
	if (rc < 0)
		goto out;
	rc = write_locations(&pp, &out);
	if (rc < 0)
		goto out;
	rc = write_mappings(&pp, &out);
	if (rc < 0)
		goto out;
	rc = write_functions(&pp, &out);
	if (rc < 0)
		goto out;
	out.time_nanos = (int64_t)(p->info->start_us * 1000);
	out.duration_nanos = (int64_t)last_ns;
	pt.type = (int64_t)str_id(&pp, "cpu");
	pt.unit = (int64_t)str_id(&pp, "nanoseconds");
	out.period_type = &pt;
	out.period = (int64_t)export_period_ns(p);
	comment = (int64_t)str_id(&pp, "spulse export");
	out.n_comment = 1;
	out.comment = &comment;
	out.default_sample_type = (int64_t)str_id(&pp, "samples");
	/* every string is interned by now */
	out.n_string_table = pp.strs.n;
	out.string_table = pp.strs.strs;
	if (pp.oom) {
		rc = -ENOMEM;
		goto out;
	}
	len = perftools__profiles__profile__get_packed_size(&out);
	if (len > UINT32_MAX) {
		rc = -EFBIG;
		goto out;
	}
	msg = malloc(len ? len : 1);
	if (!msg) {
		rc = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&out, msg);
	rc = write_gzip(f, msg, len);
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "spulse: out of memory\n");
	else if (rc == -EFBIG)
		fprintf(stderr, "%s: pprof message over 4 GiB\n", p->file);
	else if (rc < 0 && rc != -EBADMSG)
		fprintf(stderr, "%s: pprof export: %s\n", p->file,
			strerror(-rc));
	free(msg);
	pp_free(&pp);
	return rc < 0 ? EXIT_INVALID : EXIT_OK;
}
