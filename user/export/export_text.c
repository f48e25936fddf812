/* SPDX-License-Identifier: MIT */
/*
 * spulse export --format perf-script and --format json.
 *
 * perf-script: `perf script` text, samples in time order across threads
 * and CPUs (a stable merge: equal times keep stream order), the real
 * period, frames leaf first; each distinct frame's line is rendered once.
 * json: one object with a frame table (every frame of the spool once,
 * index = frame id), a thread table and samples that refer to both.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/util.h"
#include "export_fmt.h"

/* ---- perf-script ------------------------------------------------------ */

/* Lines of frame @id, rendered once (frames repeat across samples). */
struct line_cache {
	char **text;
	uint32_t n;
};

/* Names and module paths in the text escape of CLI.md ("Printing spool
 * text"): a control byte would break perf script's line format. */
static void put_perf_line(FILE *m, uint64_t addr, const struct sym_frame *sf)
{
	fprintf(m, "\t%16llx ", (unsigned long long)addr);
	if (sf->func) {
		cli_put_cstr(m, sf->func);
		if (!sf->inlined)	/* no offset inside an inlined body */
			fprintf(m, "+0x%llx", (unsigned long long)sf->func_off);
	} else {
		fputs("[unknown]", m);
	}
	fputs(" (", m);
	if (!sf->func && sf->kind == SPULSE_FRAME_TRUNCATED)
		fputs("[truncated]", m);
	else
		cli_put_text(m, sf->dso, sf->dso_len);
	fputs(")\n", m);
}

static const char *perf_lines(struct profile *p, struct line_cache *lc,
			      const struct export_opts *o, uint32_t id)
{
	const struct sym_frame *sf, *chain;
	char *buf = NULL;
	size_t len = 0;
	uint32_t n = 1, k;
	FILE *m;

	if (id >= lc->n)
		return NULL;
	if (lc->text[id])
		return lc->text[id];
	sf = symbolizer_frame(p->sym, id);
	if (!sf)
		return NULL;
	chain = sf;
	if (o->inline_frames) {
		n = symbolizer_inline_chain(p->sym, id, &chain);
		if (!n) {
			chain = sf;
			n = 1;
		}
	}
	m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	/* perf script prints inlined callees above their caller, at the
	 * same address */
	for (k = 0; k < n; k++)
		put_perf_line(m, sf->has_elf_addr ? sf->elf_addr : sf->addr,
			      &chain[k]);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	lc->text[id] = buf;
	return buf;
}

/* COMM as perf prints it, in the text escape of CLI.md (every byte kept,
 * never a control byte that would break the line format). */
static void put_comm(FILE *f, const struct spulse_thread *t)
{
	cli_put_text(f, t->comm, t->comm_len);
	if (!t->comm_len)
		fputs("[unknown]", f);
}

int export_perf_script(struct profile *p, FILE *f, const struct export_opts *o)
{
	uint64_t period = export_period_ns(p);
	struct line_cache lc = { 0 };
	struct export_sample *v;
	size_t n, i;
	uint32_t k;
	int rc;

	rc = export_load_samples(p, true, &v, &n);
	if (rc)
		return rc;
	lc.n = spulse_defs_count(p->defs, SPULSE_TAG_FRAME);
	lc.text = calloc(lc.n ? lc.n : 1, sizeof(*lc.text));
	if (!lc.text) {
		free(v);
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	for (i = 0; i < n && rc == EXIT_OK; i++) {
		uint32_t frames[SPULSE_MAX_DEPTH];
		struct spulse_thread t;
		uint64_t abs_ns;
		int d, j;

		d = profile_stack_frames(p, v[i].stack, frames);
		if (d == 0)
			continue;	/* every frame dropped (--kernel/--user) */
		if (d < 0 || spulse_defs_thread(p->defs, v[i].thread, &t) < 0) {
			fprintf(stderr, "%s: broken stack %u\n", p->file,
				v[i].stack);
			rc = EXIT_INVALID;
			break;
		}
		abs_ns = p->info->start_us * 1000 + (uint64_t)v[i].time_ns;
		put_comm(f, &t);
		fprintf(f, " %u/%u ", t.pid, t.tid);
		if (v[i].cpu != SPULSE_NONE)
			fprintf(f, "[%03u] ", v[i].cpu);
		fprintf(f, "%llu.%06llu: %llu cpu-clock:\n",
			(unsigned long long)(abs_ns / 1000000000ULL),
			(unsigned long long)(abs_ns % 1000000000ULL / 1000),
			(unsigned long long)(period ? period : 1));
		for (j = d - 1; j >= 0; j--) {
			const char *text = perf_lines(p, &lc, o, frames[j]);

			if (!text) {
				fprintf(stderr, "spulse: out of memory\n");
				rc = EXIT_INVALID;
				break;
			}
			fputs(text, f);
		}
		fputc('\n', f);
	}
	for (k = 0; k < lc.n; k++)
		free(lc.text[k]);
	free(lc.text);
	free(v);
	if (ferror(f))
		rc = EXIT_INVALID;
	return rc;
}

/* ---- json ------------------------------------------------------------- */

static const char *kind_name(uint8_t k)
{
	switch (k) {
	case SPULSE_FRAME_MODULE: return "module";
	case SPULSE_FRAME_USER: return "user";
	case SPULSE_FRAME_KERNEL: return "kernel";
	default: return "truncated";
	}
}

static void jstr(FILE *f, const char *s)
{
	if (s)
		cli_json_string(f, s, strlen(s));
	else
		fputs("null", f);
}

static void put_srcline(FILE *f, const struct sym_frame *sf)
{
	fputs(",\"file\":", f);
	jstr(f, sf->file);
	fprintf(f, ",\"line\":%u", sf->line);
}

static int json_frames(struct profile *p, FILE *f, const struct export_opts *o)
{
	uint32_t nf = spulse_defs_count(p->defs, SPULSE_TAG_FRAME), id, k;

	fputs(",\"frames\":[", f);
	for (id = 0; id < nf; id++) {
		const struct sym_frame *sf = symbolizer_frame(p->sym, id);
		const struct sym_frame *chain;
		uint32_t n;

		if (!sf) {
			fprintf(stderr, "spulse: out of memory\n");
			return EXIT_INVALID;
		}
		fprintf(f, "%s\n{\"id\":%u,\"name\":", id ? "," : "", id);
		cli_json_string(f, sf->label, sf->label_len);
		fputs(",\"function\":", f);
		jstr(f, sf->func);
		if (sf->func)
			fprintf(f, ",\"offset\":%llu",
				(unsigned long long)sf->func_off);
		/* the module's path as recorded (arbitrary bytes: UTF-8
		 * passes through) */
		fputs(",\"dso\":", f);
		cli_json_string(f, sf->dso, sf->dso_len);
		fprintf(f, ",\"addr\":\"0x%llx\",\"kind\":\"%s\"",
			(unsigned long long)sf->addr, kind_name(sf->kind));
		put_srcline(f, sf);
		if (sf->build_id) {
			fputs(",\"build_id\":", f);
			jstr(f, sf->build_id);
		}
		if (o->inline_frames) {
			n = symbolizer_inline_chain(p->sym, id, &chain);
			fputs(",\"inline\":[", f);
			/* the callees inlined at this address, innermost
			 * first (the last chain entry is the frame itself) */
			for (k = 0; k + 1 < n; k++) {
				fputs(k ? ",{\"function\":" : "{\"function\":",
				      f);
				if (chain[k].func)
					jstr(f, chain[k].func);
				else
					cli_json_string(f, chain[k].label,
							chain[k].label_len);
				put_srcline(f, &chain[k]);
				fputc('}', f);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("]", f);
	return EXIT_OK;
}

static void json_threads(struct profile *p, FILE *f)
{
	uint32_t nt = spulse_defs_count(p->defs, SPULSE_TAG_THREAD), id;
	const char *host;

	fputs(",\"threads\":[", f);
	for (id = 0; id < nt; id++) {
		struct spulse_thread t = { 0 };

		spulse_defs_thread(p->defs, id, &t);
		fprintf(f, "%s\n{\"id\":%u,\"pid\":%u,\"tid\":%u,\"comm\":",
			id ? "," : "", id, t.pid, t.tid);
		cli_json_string(f, t.comm ? t.comm : "", t.comm_len);
		/* the thread's host (docs/FLEET.md): "unknown" without identity */
		{
			size_t hl;

			host = filter_thread_host_n(p->defs, id, &hl);
			fputs(",\"host\":", f);
			cli_json_string(f, host, hl);
		}
		fputc('}', f);
	}
	fputs("]", f);
}

int export_json(struct profile *p, FILE *f, const struct export_opts *o)
{
	struct spulse_sample buf[1024];
	uint64_t count = 0;
	int rc, i, ret = EXIT_OK;
	bool first = true;

	fputs("{\"file\":", f);
	cli_json_string(f, p->file, strlen(p->file));
	fprintf(f, ",\"start_us\":%llu,\"interval_us\":%llu,"
		"\"period_ns\":%llu,\"samples_in_file\":%llu,\"recovered\":%s",
		(unsigned long long)p->info->start_us,
		(unsigned long long)p->info->interval_us,
		(unsigned long long)export_period_ns(p),
		(unsigned long long)p->info->samples,
		p->info->recovered_from_truncated_tail ? "true" : "false");
	if (json_frames(p, f, o))
		return EXIT_INVALID;
	json_threads(p, f);
	fputs(",\"samples\":[", f);
	while (ret == EXIT_OK &&
	       (rc = spulse_replay_next_samples(p->replay, buf, 1024)) > 0) {
		for (i = 0; i < rc; i++) {
			uint32_t frames[SPULSE_MAX_DEPTH];
			int d, j;

			if (!profile_wants(p, &buf[i]))
				continue;
			d = profile_stack_frames(p, buf[i].stack, frames);
			if (d == 0)
				continue;
			if (d < 0) {
				fprintf(stderr, "%s: broken stack %u\n",
					p->file, buf[i].stack);
				ret = EXIT_INVALID;
				break;
			}
			fprintf(f, "%s\n{\"time_ns\":%lld,\"thread\":%u,",
				first ? "" : ",", (long long)buf[i].time_ns,
				buf[i].thread);
			if (buf[i].cpu != SPULSE_NONE)
				fprintf(f, "\"cpu\":%u,", buf[i].cpu);
			fputs("\"stack\":[", f);
			for (j = d - 1; j >= 0; j--)
				fprintf(f, j == d - 1 ? "%u" : ",%u", frames[j]);
			fputs("]}", f);
			first = false;
			count++;
		}
	}
	if (ret == EXIT_OK && rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", p->file,
			strerror(-rc));
		ret = EXIT_INVALID;
	}
	fprintf(f, "],\n\"samples_written\":%llu}\n", (unsigned long long)count);
	if (ferror(f))
		ret = EXIT_INVALID;
	return ret;
}
