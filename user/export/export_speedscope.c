/* SPDX-License-Identifier: MIT */
/*
 * spulse export --format speedscope: speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json). One "sampled"
 * profile per thread (pid/tid; comm the newest), samples in time order,
 * stacks root first as indices into shared.frames, weights in nanoseconds
 * (the sampling period; unit "none" and weight 1 when the spool has no
 * interval). Consecutive samples of a thread with the same stack are one
 * entry with the summed weight (the same picture, a smaller file).
 * shared.frames holds each distinct (name, file, line) once: name = the
 * function (or the display label when unresolved), file = the source file
 * or else the module path, line when known; with --inline the inlined
 * callees of an address become frames of their own above their caller.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/util.h"
#include "export_fmt.h"
#include "sym/strtab.h"

struct ss {
	struct profile *p;
	const struct export_opts *o;
	struct strtab keys;		/* frame identity -> speedscope index */
	/* per spool frame: its speedscope frames, root-most (the real
	 * function) first; first_idx[id] == UINT32_MAX = not yet done */
	uint32_t *first_idx, *nidx;
	uint32_t *idx_pool;
	size_t npool, pool_cap;
	FILE *frames;			/* the shared.frames text, built up */
	char *frames_buf;
	size_t frames_len;
	bool oom;
};

static uint32_t frame_index(struct ss *ss, const struct sym_frame *sf)
{
	const char *name = sf->func ? sf->func : sf->label;
	const char *file = sf->file ? sf->file : sf->dso;
	size_t nl = sf->func ? strlen(name) : sf->label_len;
	size_t fl = sf->file ? strlen(file) : sf->dso_len;
	char *key;
	int64_t id;
	size_t before = ss->keys.n, kl;
	int tl;
	char tail[16];

	if (!fl)
		file = NULL;	/* the truncated marker has no module */
	/* the key: NAME 0x1f FILE 0x1f LINE with every byte (a name or
	 * path may hold 0x1f or NUL: the lengths in front keep it
	 * injective) */
	tl = snprintf(tail, sizeof(tail), "\x1f%u", sf->file ? sf->line : 0);
	kl = 2 * sizeof(size_t) + nl + 1 + fl + (size_t)tl;
	key = malloc(kl);
	if (!key) {
		ss->oom = true;
		return 0;
	}
	memcpy(key, &nl, sizeof(nl));
	memcpy(key + sizeof(nl), &fl, sizeof(fl));
	memcpy(key + 2 * sizeof(size_t), name, nl);
	key[2 * sizeof(size_t) + nl] = 0x1f;
	if (fl)
		memcpy(key + 2 * sizeof(size_t) + nl + 1, file, fl);
	memcpy(key + 2 * sizeof(size_t) + nl + 1 + fl, tail, (size_t)tl);
	id = strtab_intern_n(&ss->keys, key, kl);
	free(key);
	if (id < 0) {
		ss->oom = true;
		return 0;
	}
	if (ss->keys.n != before) {	/* new: append its JSON */
		fputs(id ? ",\n{\"name\":" : "\n{\"name\":", ss->frames);
		cli_json_string(ss->frames, name, nl);
		if (file) {
			fputs(",\"file\":", ss->frames);
			cli_json_string(ss->frames, file, fl);
		}
		if (sf->file && sf->line)
			fprintf(ss->frames, ",\"line\":%u", sf->line);
		fputc('}', ss->frames);
	}
	return (uint32_t)id;
}

static int pool_push(struct ss *ss, uint32_t v)
{
	if (ss->npool == ss->pool_cap) {
		size_t nc = ss->pool_cap ? ss->pool_cap * 2 : 1024;
		uint32_t *np = realloc(ss->idx_pool, nc * sizeof(*np));

		if (!np) {
			ss->oom = true;
			return -1;
		}
		ss->idx_pool = np;
		ss->pool_cap = nc;
	}
	ss->idx_pool[ss->npool++] = v;
	return 0;
}

/* The speedscope frames of spool frame @id, root-most first. */
static int resolve_frame(struct ss *ss, uint32_t id)
{
	const struct sym_frame *sf, *chain;
	uint32_t n = 1, k;

	if (ss->first_idx[id] != UINT32_MAX)
		return 0;
	sf = symbolizer_frame(ss->p->sym, id);
	if (!sf) {
		ss->oom = true;
		return -1;
	}
	chain = sf;
	if (ss->o->inline_frames) {
		n = symbolizer_inline_chain(ss->p->sym, id, &chain);
		if (!n) {
			chain = sf;
			n = 1;
		}
	}
	ss->first_idx[id] = (uint32_t)ss->npool;
	ss->nidx[id] = n;
	for (k = n; k-- > 0;)	/* chain is innermost first */
		if (pool_push(ss, frame_index(ss, &chain[k])) < 0)
			return -1;
	return ss->oom ? -1 : 0;
}

struct run {
	uint32_t stack;
	uint64_t weight;
};

static int cmp_group(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	/* x[0] group, x[1] position: stable by group */
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int export_speedscope(struct profile *p, FILE *f, const struct export_opts *o)
{
	uint32_t nframes = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	uint64_t period = export_period_ns(p), *keys = NULL;
	uint32_t *map = NULL, *latest = NULL, (*order)[2] = NULL;
	struct ss ss = { .p = p, .o = o };
	struct export_sample *v = NULL;
	size_t n = 0, ngroups = 0, i, j;
	char *profiles = NULL;
	size_t profiles_len = 0;
	FILE *pf = NULL;
	int rc, nprof = 0;

	rc = export_load_samples(p, true, &v, &n);
	if (rc)
		return rc;
	strtab_init(&ss.keys);
	ss.first_idx = malloc((nframes ? nframes : 1) * sizeof(uint32_t));
	ss.nidx = calloc(nframes ? nframes : 1, sizeof(uint32_t));
	ss.frames = open_memstream(&ss.frames_buf, &ss.frames_len);
	pf = open_memstream(&profiles, &profiles_len);
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!ss.first_idx || !ss.nidx || !ss.frames || !pf || !order ||
	    profile_thread_groups(p, &keys, &ngroups, &map, &latest) < 0)
		goto oom;
	memset(ss.first_idx, 0xff, (nframes ? nframes : 1) * sizeof(uint32_t));
	/* samples grouped by thread, each group in time order */
	for (i = 0; i < n; i++) {
		order[i][0] = map[v[i].thread];
		order[i][1] = (uint32_t)i;
	}
	if (n > 1)	/* qsort() wants a valid array even for 0 */
		qsort(order, n, sizeof(*order), cmp_group);
	for (i = 0; i < n; i = j) {
		uint32_t g = order[i][0], frames[SPULSE_MAX_DEPTH];
		struct spulse_thread t = { 0 };
		uint64_t total = 0;
		bool first = true;

		spulse_defs_thread(p->defs, latest[g], &t);
		fputs(nprof++ ? ",\n{" : "\n{", pf);
		fputs("\"type\":\"sampled\",\"name\":", pf);
		{
			char *name;

			if (asprintf(&name, "%s %u/%u", t.comm ? t.comm : "",
				     t.pid, t.tid) < 0)
				goto oom;
			cli_json_string(pf, name, strlen(name));
			free(name);
		}
		fprintf(pf, ",\"unit\":\"%s\",\"startValue\":0,\"samples\":[",
			period ? "nanoseconds" : "none");
		/* first pass: stacks; the weights follow in a second */
		for (j = i; j < n && order[j][0] == g;) {
			uint32_t stack = v[order[j][1]].stack;
			size_t e = j;
			int d, k;

			while (e < n && order[e][0] == g &&
			       v[order[e][1]].stack == stack)
				e++;
			d = profile_stack_frames(p, stack, frames);
			if (d < 0) {
				fprintf(stderr, "%s: broken stack %u\n",
					p->file, stack);
				rc = EXIT_INVALID;
				goto out;
			}
			fputs(first ? "[" : ",[", pf);
			first = false;
			for (k = 0; k < d; k++) {
				uint32_t fid = frames[k], m;

				if (fid >= nframes || resolve_frame(&ss, fid))
					goto oom;
				for (m = 0; m < ss.nidx[fid]; m++)
					fprintf(pf, k || m ? ",%u" : "%u",
						ss.idx_pool[ss.first_idx[fid] + m]);
			}
			fputc(']', pf);
			j = e;
		}
		fputs("],\"weights\":[", pf);
		first = true;
		for (j = i; j < n && order[j][0] == g;) {
			uint32_t stack = v[order[j][1]].stack;
			size_t e = j;
			uint64_t w;

			while (e < n && order[e][0] == g &&
			       v[order[e][1]].stack == stack)
				e++;
			w = (uint64_t)(e - j) * (period ? period : 1);
			total += w;
			fprintf(pf, first ? "%llu" : ",%llu",
				(unsigned long long)w);
			first = false;
			j = e;
		}
		fprintf(pf, "],\"endValue\":%llu}", (unsigned long long)total);
	}
	if (ss.oom || fflush(pf) || fflush(ss.frames))
		goto oom;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"spulse\",\"name\":", f);
	cli_json_string(f, p->file, strlen(p->file));
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	fwrite(ss.frames_buf, 1, ss.frames_len, f);
	fputs("]},\"profiles\":[", f);
	fwrite(profiles, 1, profiles_len, f);
	fputs("]}\n", f);
	rc = ferror(f) ? EXIT_INVALID : EXIT_OK;
	goto out;
oom:
	fprintf(stderr, "spulse: out of memory\n");
	rc = EXIT_INVALID;
out:
	if (ss.frames)
		fclose(ss.frames);
	if (pf)
		fclose(pf);
	free(ss.frames_buf);
	free(profiles);
	free(ss.first_idx);
	free(ss.nidx);
	free(ss.idx_pool);
	strtab_free(&ss.keys);
	free(order);
	free(keys);
	free(map);
	free(latest);
	free(v);
	return rc;
}
