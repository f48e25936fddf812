// SPDX-License-Identifier: MIT
/*
 * libFuzzer: Replay over a memfd holding the input. It must agree with the
 * Snapshot on the outcome and on every sample, through iteration, record
 * iteration and seeks (small index limit/stride so that seeks cross the
 * indexed and unindexed parts).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spulse_read_opts o = { .sz = sizeof(o), .replay_index_limit = 3,
				      .replay_index_stride = 2 };
	struct spulse_replay *rp;
	struct spulse_sample s;
	struct spulse_record rec;
	struct spulse_error err;
	struct fz_ref r;
	char path[64];
	uint64_t i, seed = fz_seed(data, size);
	int fd, ret;

	fz_reference(data, size, &r);
	fd = fz_memfd(data, size, path, sizeof(path));
	ret = spulse_replay_open(path, &o, &rp, &err);
	CHECK(ret == r.ret);
	if (ret) {
		CHECK(err.offset == r.err.offset);
		CHECK(!strcmp(err.msg, r.err.msg));
		goto out;
	}
	CHECK(!memcmp(spulse_replay_info(rp), &r.info, sizeof(r.info)));
	CHECK(spulse_replay_index_entries(rp) <= 3);
	for (i = 0; (ret = spulse_replay_next_sample(rp, &s)) == 1; i++)
		fz_same_samples(&r, i, &s);
	CHECK(ret == 0 && i == r.n);
	CHECK(spulse_replay_rewind(rp) == 0);
	for (i = 0; (ret = spulse_replay_next_record(rp, &rec)) == 1;)
		if (rec.tag == SPULSE_TAG_SAMPLE)
			fz_same_samples(&r, i++, &rec.u.sample);
	CHECK(ret == 0 && i == r.n);
	for (i = 0; i < 4 && r.n; i++) {
		uint64_t at = fz_rnd(&seed) % r.n;

		CHECK(spulse_replay_seek_sample(rp, at) == 0);
		CHECK(spulse_replay_next_sample(rp, &s) == 1);
		fz_same_samples(&r, at, &s);
	}
	CHECK(spulse_replay_seek_sample(rp, r.n + 1) == -ERANGE);
	spulse_replay_close(rp);
out:
	close(fd);
	fz_ref_free(&r);
	return 0;
}
