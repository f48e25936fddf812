// SPDX-License-Identifier: MIT
/*
 * libFuzzer: the Stream push decoder fed the input in pseudo-random chunks
 * (sizes derived from the input). It must produce the same samples,
 * intervals, triggers, cpu and skipped extension records and the same
 * outcome (error offset and rule, or complete_bytes and recovery) as the
 * Snapshot of the whole input, whatever the chunking. Between records it
 * also takes, at pseudo-random points, runs of samples
 * (spulse_stream_samples(), checked as the records would be) and of
 * definitions (spulse_stream_take_defs()): the drainer's batch paths must
 * agree with the record at a time reader, and with its errors.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spulse_sample sb[8];
	struct spulse_stream *st;
	struct spulse_record rec;
	struct spulse_error err;
	struct fz_ref r;
	uint64_t seed = fz_seed(data, size), last_off = 0;
	struct fz_pos p = { 0 };
	size_t pos = 0;
	int ret = 0;

	fz_reference(data, size, &r);
	CHECK(spulse_stream_new(NULL, &st) == 0);
	do {
		size_t n = (size_t)(fz_rnd(&seed) % 64);

		if (n > size - pos)
			n = size - pos;
		CHECK(spulse_stream_feed(st, data + pos, n) == 0);
		pos += n;
		for (;;) {
			uint64_t k = fz_rnd(&seed) % 4;
			size_t i, m;

			if (k == 0) {
				spulse_stream_take_defs(st);
			} else if (k == 1) {
				m = spulse_stream_samples(st, sb, 1 + fz_rnd(&seed) % 8);
				for (i = 0; i < m; i++)
					fz_same_samples(&r, p.ns++, &sb[i]);
			}
			ret = spulse_stream_next(st, &rec, &err);
			if (ret != 1)
				break;
			CHECK(rec.offset >= last_off);
			last_off = rec.offset;
			fz_check_record(&r, &p, &rec);
		}
		if (ret < 0)
			break;
		CHECK(spulse_stream_info(st)->complete_bytes +
		      spulse_stream_pending(st) == pos);
	} while (pos < size);
	if (r.short_header) {	/* a stream waits for the rest of the header */
		CHECK(ret == 0 && !p.ns && !p.noff);
		CHECK(spulse_stream_info(st)->complete_bytes == 0);
		spulse_stream_free(st);
		fz_ref_free(&r);
		return 0;
	}
	CHECK(ret == r.ret);
	fz_pos_complete(&r, &p);	/* everything (before the error) */
	if (ret) {
		CHECK(err.offset == r.err.offset);
		CHECK(!strcmp(err.msg, r.err.msg));
		/* sticky */
		CHECK(spulse_stream_next(st, &rec, &err) == ret);
	} else {
		CHECK(!memcmp(spulse_stream_info(st), &r.info, sizeof(r.info)));
		CHECK(spulse_stream_info(st)->complete_bytes == r.info.complete_bytes);
		CHECK(spulse_stream_info(st)->recovered_from_truncated_tail ==
		      r.info.recovered_from_truncated_tail);
	}
	spulse_stream_free(st);
	fz_ref_free(&r);
	return 0;
}
