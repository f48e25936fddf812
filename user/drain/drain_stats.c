// SPDX-License-Identifier: MIT
/*
 * The session's totals: drain_get_stats() (what is on disk after a fatal
 * error, the module's dropped count), the module's cut user stacks by
 * cause (drain_ucut.h) and the final summary lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drain_ucut.h"
#include "session.h"

static const struct {
	const char *key;
	const char *words;
} ucut_names[DRAIN_UCUT_NR] = {
	[DRAIN_UCUT_NO_TABLE_YET] = { "ustack_cut_no_table_yet", "no table yet" },
	[DRAIN_UCUT_NO_TABLE] = { "ustack_cut_no_table", "no table" },
	[DRAIN_UCUT_NO_ROW] = { "ustack_cut_no_row", "no rule in the table" },
	[DRAIN_UCUT_TABLE_UNKNOWN] = { "ustack_cut_table_unknown",
				       "table says unknown" },
	[DRAIN_UCUT_DEPTH] = { "ustack_cut_depth", "depth limit" },
	[DRAIN_UCUT_UNREADABLE] = { "ustack_cut_unreadable",
				    "stack unreadable" },
	[DRAIN_UCUT_BAD_FRAME] = { "ustack_cut_bad_frame", "bad frame" },
	[DRAIN_UCUT_COMPAT32] = { "ustack_cut_compat32", "32-bit task" },
};

const char *drain_ucut_key(enum drain_ucut_cause c)
{
	return (unsigned int)c < DRAIN_UCUT_NR ? ucut_names[c].key : NULL;
}

const char *drain_ucut_words(enum drain_ucut_cause c)
{
	return (unsigned int)c < DRAIN_UCUT_NR ? ucut_names[c].words : NULL;
}

void drain_ucut_read_file(const char *stats_path, struct drain_ucut *u)
{
	int64_t v;
	unsigned int i;

	u->known = stats_path != NULL;
	for (i = 0; i < DRAIN_UCUT_NR; i++) {
		u->n[i] = 0;
		if (!u->known)
			continue;
		if (drain_kstat(stats_path, ucut_names[i].key, &v) || v < 0)
			u->known = false;	/* an older module, or gone */
		else
			u->n[i] = (uint64_t)v;
	}
}

void drain_ucut_read(struct drain *d, struct drain_ucut *u)
{
	drain_ucut_read_file(d->stats_path, u);
}

const char *drain_ucut_text(const struct drain_ucut *u, char *buf,
			    size_t len)
{
	char t[DRAIN_UCUT_TEXT_MAX];
	uint64_t total = 0;
	unsigned int i;
	size_t at;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; u->known && i < DRAIN_UCUT_NR; i++)
		total += u->n[i];
	if (!total)
		return buf;
	at = (size_t)snprintf(t, sizeof(t), ", user stacks cut %" PRIu64 " (",
			      total);
	for (i = 0; i < DRAIN_UCUT_NR; i++)
		if (u->n[i])	/* 8 causes of < 45 bytes each: never cut */
			at += (size_t)snprintf(t + at, sizeof(t) - at,
					       "%s%s %" PRIu64,
					       t[at - 1] == '(' ? "" : ", ",
					       ucut_names[i].words, u->n[i]);
	snprintf(t + at, sizeof(t) - at, ")");
	if (strlen(t) < len)
		memcpy(buf, t, strlen(t) + 1);
	else if ((size_t)snprintf(buf, len, ", user stacks cut %" PRIu64,
				  total) >= len)
		buf[0] = '\0';	/* no room for a true number: nothing */
	return buf;
}

/*
 * After a fatal error (a full disk, say) the Recorder has taken samples
 * the file may not hold: count what the spool's complete prefix holds by
 * reading it back, once, so the summary says what is on disk.
 */
static void count_on_disk(struct drain *d)
{
	struct spulse_replay *rp;
	struct spulse_error err;
	const struct spulse_info *in;

	if (d->disk_counted)
		return;
	d->disk_counted = true;
	d->disk_samples = 0;
	d->disk_bytes = 0;
	if (spulse_replay_open(d->o.output, NULL, &rp, &err))
		return;
	in = spulse_replay_info(rp);
	d->disk_samples = in->samples;
	d->disk_bytes = in->complete_bytes;
	spulse_replay_close(rp);
}

void drain_get_stats(struct drain *d, struct drain_stats *st)
{
	int64_t v;
	unsigned int i;

	for (i = 0; i < d->ncpu; i++)
		d->cpu_bytes[i] = d->cpu[i].bytes_read;
	d->st.samples = d->samples;
	d->st.spool_bytes = d->rec ? spulse_recorder_bytes(d->rec) : 0;
	if (d->fatal && !d->flight && d->rec && d->o.output) {
		count_on_disk(d);
		d->st.samples = d->disk_samples;
		d->st.spool_bytes = d->disk_bytes;
	}
	d->st.meta_bytes = d->have_meta ? d->meta.bytes_read : 0;
	d->st.ncpus = d->ncpu;
	d->st.cpu_bytes = d->cpu_bytes;
	d->st.stream_errors = d->errors;
	d->st.truncated_tails = d->tails;
	d->st.relay_gaps = d->relay_gaps;
	d->st.late_samples = d->late;
	d->st.offcpu = d->offcpu;
	d->st.triggers = d->triggers;
	d->st.ext_dropped = d->ext_dropped;
	d->st.epochs = d->epochs;
	d->st.dumps = d->dumps;
	d->st.triggers_fired = d->fired;
	d->st.triggers_suppressed = d->suppressed;
	d->st.generations = d->ngens;
	d->st.gen_bytes = 0;
	for (i = 0; i < d->ngens; i++)
		d->st.gen_bytes += drain_gen_size(d, &d->gens[i]);
	if (d->flight)
		drain_ring_account(d);
	d->st.gen_bytes_max = d->gen_bytes_max;
	d->st.ring_bound = d->flight ?
		drain_flight_bound(&d->fo, d->have_meta ?
			spulse_stream_info(d->meta.stream)->modules : 0) : 0;
	if (d->uw) {
		struct drain_unwind_stats us;

		drain_unwind_get_stats(d->uw, &us);
		d->st.unwind = true;
		d->st.unwind_loaded = us.loaded;
		d->st.unwind_cache_hits = us.cache_hits;
		d->st.unwind_refused = us.refused;
		d->st.unwind_failed = us.failed;
		d->st.unwind_skipped = us.skipped;
		d->st.unwind_maps = us.maps;
		d->st.unwind_map_errors = us.map_errors;
		d->st.unwind_rows = us.rows;
		d->st.unwind_bytes = us.bytes;
		d->st.unwind_build_ns = us.build_ns;
	}
	d->st.kernel_dropped = -1;
	if (d->stats_path && !drain_kstat(d->stats_path, "samples_dropped", &v))
		d->st.kernel_dropped = v;
	*st = d->st;
}

/* "spulse-drain: user stacks cut N (...)" when the module cut any. */
static void print_ucut(struct drain *d, FILE *f)
{
	struct drain_ucut uc;
	char t[DRAIN_UCUT_TEXT_MAX];

	drain_ucut_read(d, &uc);
	if (*drain_ucut_text(&uc, t, sizeof(t)))
		fprintf(f, "spulse-drain: %s\n", t + 2);
}

void drain_print_stats(struct drain *d, FILE *f)
{
	struct drain_stats st;
	unsigned int i;

	drain_get_stats(d, &st);
	if (d->flight)
		fprintf(f, "spulse-drain: %" PRIu64 " samples written to the "
			"flight generations (%" PRIu64 " bytes in the open one); "
			"read meta %" PRIu64, st.samples, st.spool_bytes,
			st.meta_bytes);
	else
		fprintf(f, "spulse-drain: %" PRIu64 " samples written to %s (%"
			PRIu64 " bytes); read meta %" PRIu64, st.samples,
			d->o.output, st.spool_bytes, st.meta_bytes);
	for (i = 0; i < st.ncpus; i++)
		fprintf(f, " cpu%d %" PRIu64, d->cpu[i].cpu, st.cpu_bytes[i]);
	fprintf(f, " bytes; stream errors %u; truncated tails %u; late %" PRIu64
		"; kernel dropped ", st.stream_errors, st.truncated_tails,
		st.late_samples);
	if (st.kernel_dropped >= 0)
		fprintf(f, "%" PRId64 "\n", st.kernel_dropped);
	else
		fprintf(f, "unknown\n");
	if (st.relay_gaps)
		fprintf(f, "spulse-drain: relay: %u CPU stream(s) differ from "
			"what the module wrote (lost or repeated bytes)\n",
			st.relay_gaps);
	if (st.offcpu || st.triggers || st.ext_dropped)
		fprintf(f, "spulse-drain: off-CPU intervals %" PRIu64
			", trigger marks %" PRIu64 ", unknown extension "
			"records dropped %" PRIu64 "\n", st.offcpu,
			st.triggers, st.ext_dropped);
	if (st.epochs)
		fprintf(f, "spulse-drain: kernel stream epochs %" PRIu64
			" (per-CPU ids restarted; the spool's are not)\n",
			st.epochs);
	if (st.unwind)
		fprintf(f, "spulse-drain: unwind tables loaded %" PRIu64
			" (cache hits %" PRIu64 ", %" PRIu64 " rows, %" PRIu64
			" bytes, %.3f s), refused %" PRIu64 " (build-id differs),"
			" failed %" PRIu64 ", skipped %" PRIu64 "; process maps "
			"%" PRIu64 " (refused %" PRIu64 ")\n", st.unwind_loaded,
			st.unwind_cache_hits, st.unwind_rows, st.unwind_bytes,
			(double)st.unwind_build_ns / 1e9, st.unwind_refused,
			st.unwind_failed, st.unwind_skipped, st.unwind_maps,
			st.unwind_map_errors);
	print_ucut(d, f);
	if (d->flight)
		fprintf(f, "spulse-drain: flight: triggers %" PRIu64 ", dumps "
			"%u, suppressed %" PRIu64 "; generations %u holding %"
			PRIu64 " bytes (most %" PRIu64 ", bound %" PRIu64 ")\n",
			st.triggers_fired, st.dumps, st.triggers_suppressed,
			st.generations, st.gen_bytes, st.gen_bytes_max,
			st.ring_bound);
}
