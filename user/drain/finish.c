// SPDX-License-Identifier: MIT
/*
 * The finish protocol (drain_finish()): stop the module (with control),
 * read every input dry, report truncated tails and relay byte gaps, write
 * everything queued, sync, and leave the sidecars beside the spool.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

/* Report a stream that ends inside a record (its complete prefix is used). */
static void check_tail(struct drain *d, struct drain_input *in)
{
	size_t pend;
	char nb[32];

	if (!in->stream || in->state == DRAIN_INPUT_ABANDONED)
		return;
	pend = spulse_stream_pending(in->stream);
	if (!pend)
		return;
	fprintf(d->log,
		"spulse-drain: %s: stream ends inside a record at offset %" PRIu64
		" (%zu bytes not used)\n", drain_input_name(in, nb, sizeof(nb)),
		in->bytes_read - pend, pend);
	d->tails++;
}

/*
 * Relay lost or repeated bytes of a cpuN stream (kmod/relay.c): what was
 * read differs from what the stopped module says it wrote there.
 */
static void check_relay_bytes(struct drain *d)
{
	struct drain_kstat_cpu *v;
	unsigned int i;
	bool stopped;

	v = drain_kstat_inputs(d, &stopped);
	for (i = 0; v && stopped && i < d->ncpu; i++) {
		struct drain_input *in = &d->cpu[i];
		bool comparable;
		int64_t gap;
		char nb[32];

		if (!v[i].found)
			continue;
		gap = drain_input_relay_gap(in, v[i].bytes, &comparable);
		if (!comparable || !gap)
			continue;
		fprintf(d->log, "spulse-drain: %s: relay delivered %" PRIu64
			" bytes, the module wrote %" PRIu64 " (%" PRIu64
			" bytes %s)\n", drain_input_name(in, nb, sizeof(nb)),
			in->start + in->bytes_read, v[i].bytes,
			(uint64_t)(gap < 0 ? -gap : gap),
			gap < 0 ? "lost" : "delivered twice");
		d->relay_gaps++;
	}
	free(v);
}

/*
 * Without control of the module, whether an input still has bytes that
 * were readable when the finish began (drain_input_mark_owed()): the
 * passive deadline bounds only the chase of what a module writes later,
 * never that backlog (a slow or loaded host may need longer than the
 * deadline to read hundreds of MiB of buffers).
 */
static bool finish_owed(const struct drain *d)
{
	unsigned int i;

	for (i = 0; i < d->ncpu; i++)
		if (drain_input_owes(&d->cpu[i]))
			return true;
	return d->have_meta && drain_input_owes(&d->meta);
}

#define FINISH_PASSIVE_MS 1000

/* FINISH_PASSIVE_MS, or the test hook SPULSE_DRAIN_PASSIVE_MS (>= 0). */
static int64_t finish_passive_ms(void)
{
	const char *e = getenv("SPULSE_DRAIN_PASSIVE_MS");
	char *end;
	long v;

	if (!e || !*e)
		return FINISH_PASSIVE_MS;
	v = strtol(e, &end, 10);
	return *end || v < 0 ? FINISH_PASSIVE_MS : v;
}

int drain_finish(struct drain *d)
{
	unsigned int i, dry = 0;
	int64_t t_end;
	int ret;

	if (d->fatal)
		return d->fatal;
	t_end = mono_ns() + finish_passive_ms() * 1000000;
	if (!d->o.control) {
		for (i = 0; i < d->ncpu; i++)
			drain_input_mark_owed(&d->cpu[i]);
		if (d->have_meta)
			drain_input_mark_owed(&d->meta);
	} else {
		ret = drain_control(d, "stop\n");
		if (ret < 0)
			fprintf(d->log, "spulse-drain: control stop: %s\n",
				strerror(-ret));
		(void)drain_control(d, "flush\n");
	}
	/*
	 * Read until every input has been dry twice in a row. A flush that
	 * found no free sub-buffer left the partial one unpublished: once
	 * reading has made room, flush again (relay files only). A module
	 * this drainer did not stop may go on writing for good: then reading
	 * ends FINISH_PASSIVE_MS after it began, or once what was readable
	 * when it began is read, whichever is later.
	 */
	while (dry < 2) {
		long n;

		if (!d->o.control && mono_ns() - t_end > 0 && !finish_owed(d))
			break;

		if (dry && drain_relay_inputs(d))
			(void)drain_control(d, "flush\n");
		n = drain_round_read(d);

		if (n < 0) {
			d->fatal = (int)n;
			return (int)n;
		}
		if (n) {
			dry = 0;
			if (d->rec) {
				ret = drain_release(d, false);
				if (ret < 0)
					return d->fatal = ret;
			}
		} else {
			dry++;
			if (dry < 2)
				usleep(10000);
		}
	}
	if (d->have_meta)
		check_tail(d, &d->meta);
	for (i = 0; i < d->ncpu; i++) {
		check_tail(d, &d->cpu[i]);
		drain_merge_finish(&d->merge, i);
	}
	check_relay_bytes(d);
	if (d->uw && d->o.unwind_wait_ms &&
	    drain_unwind_wait(d->uw, d->o.unwind_wait_ms) < 0)
		fprintf(d->log, "spulse-drain: unwind: tables still being "
			"built after %u ms; not waiting for them\n",
			d->o.unwind_wait_ms);
	if (!d->rec) {
		ret = drain_open_recorder(d, NULL);	/* empty spool, start = now */
		if (ret < 0)
			return d->fatal = ret;
	}
	ret = drain_release(d, true);
	if (!ret && d->flight)
		ret = drain_flight_poll(d, true);	/* the data ends here */
	if (!ret)
		ret = drain_maybe_sync(d, true);
	if (!ret && d->ks_pending) {
		drain_save_kallsyms(d, d->o.output);
		d->ks_pending = false;
	}
	if (!ret && !d->flight && d->o.kallsyms)
		drain_capture_sidecars(d, d->o.output, true);
	if (ret < 0)
		d->fatal = ret;
	return ret;
}
