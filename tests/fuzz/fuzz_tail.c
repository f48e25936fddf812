// SPDX-License-Identifier: MIT
/*
 * libFuzzer: Tail over a memfd that grows in pseudo-random steps (derived
 * from the input). After each poll it must never have consumed past a
 * record boundary of the bytes visible; at the end it must hold exactly the
 * Snapshot's samples and off-CPU intervals (and counts) and the same
 * recovered_from_truncated_tail, or the Snapshot's error at the same offset
 * after everything before it, with the flag clear.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spulse_tail *t;
	const struct spulse_sample *ss;
	const struct spulse_offcpu *iv;
	struct spulse_error err;
	struct fz_ref r;
	char path[64];
	uint64_t seed = fz_seed(data, size), ns = 0, noff = 0;
	size_t pos = 0;
	int fd, n = 0, k, i;

	fz_reference(data, size, &r);
	fd = fz_memfd(data, 0, path, sizeof(path));
	CHECK(spulse_tail_open(path, NULL, &t, &err) == 0);
	for (;;) {
		for (;;) {
			n = spulse_tail_poll(t, &ss, &err);
			if (n < 0)
				break;
			k = spulse_tail_offcpu(t, &iv);
			CHECK(n <= SPULSE_TAIL_BATCH);
			CHECK(k >= 0 && k <= SPULSE_TAIL_BATCH);
			for (i = 0; i < n; i++)
				fz_same_samples(&r, ns++, &ss[i]);
			for (i = 0; i < k; i++) {
				CHECK(noff < r.noff);
				fz_same_offcpu(&r.offcpu[noff++], &iv[i]);
			}
			if (!n && !k)
				break;
		}
		if (n < 0)
			break;
		CHECK(spulse_tail_offset(t) <= pos);
		if (!r.ret)
			CHECK(spulse_tail_offset(t) <= r.info.complete_bytes);
		if (pos == size)
			break;
		{
			size_t step = (size_t)(fz_rnd(&seed) % 48);

			if (step > size - pos)
				step = size - pos;
			CHECK(write(fd, data + pos, step) == (ssize_t)step);
			pos += step;
		}
	}
	if (r.short_header) {	/* Tail waits for the rest of the header */
		CHECK(n == 0 && ns == 0 && noff == 0);
		CHECK(spulse_tail_offset(t) == 0);
	} else if (r.ret) {
		CHECK(n == r.ret);
		CHECK(err.offset == r.err.offset);
		CHECK(!strcmp(err.msg, r.err.msg));
		CHECK(ns == r.n);	/* every sample before the error */
		CHECK(noff == r.noff);	/* and every interval */
		/* corrupt pending bytes are an error, never a truncated tail */
		CHECK(!spulse_tail_info(t)->recovered_from_truncated_tail);
	} else {
		const struct spulse_info *in = spulse_tail_info(t);

		CHECK(n == 0);
		CHECK(ns == r.n && noff == r.noff);
		CHECK(spulse_tail_offset(t) == r.info.complete_bytes);
		/* the last poll reached the end: the flag means what Snapshot's does */
		CHECK(in->recovered_from_truncated_tail ==
		      r.info.recovered_from_truncated_tail);
		CHECK(in->complete_bytes == r.info.complete_bytes);
		CHECK(in->samples == r.n && in->offcpu == r.noff &&
		      in->triggers == r.ntrig &&
		      in->cpu_records == r.info.cpu_records &&
		      in->ext_skipped == r.info.ext_skipped &&
		      in->identities == r.info.identities);
	}
	spulse_tail_close(t);
	close(fd);
	fz_ref_free(&r);
	return 0;
}
