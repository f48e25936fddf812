// SPDX-License-Identifier: MIT
/*
 * libFuzzer: Replay over a memfd holding the input. It must agree with the
 * Snapshot on the outcome and on every sample, through iteration, record
 * iteration (intervals, triggers, cpu and skipped records included) and
 * seeks (small index limit/stride so that seeks cross the indexed and
 * unindexed parts); the interval iterator yields the Snapshot's intervals
 * and is not moved by seeks or record iteration.
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
	struct fz_pos pos = { 0 };
	struct spulse_offcpu iv;
	char path[64];
	uint64_t i, k, seed = fz_seed(data, size);
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
	/* records, with a step of the interval iterator now and then */
	for (k = 0; (ret = spulse_replay_next_record(rp, &rec)) == 1;) {
		fz_check_record(&r, &pos, &rec);
		if (k < r.noff && (fz_rnd(&seed) & 3) == 0) {
			CHECK(spulse_replay_next_offcpu(rp, &iv) == 1);
			fz_same_offcpu(&r.offcpu[k++], &iv);
		}
	}
	CHECK(ret == 0);
	fz_pos_complete(&r, &pos);
	for (i = 0; i < 4 && r.n; i++) {
		uint64_t at = fz_rnd(&seed) % r.n;

		CHECK(spulse_replay_seek_sample(rp, at) == 0);
		CHECK(spulse_replay_next_sample(rp, &s) == 1);
		fz_same_samples(&r, at, &s);
		if (k < r.noff) {
			CHECK(spulse_replay_next_offcpu(rp, &iv) == 1);
			fz_same_offcpu(&r.offcpu[k++], &iv);
		}
		/* after a seek, records carry on with the right clocks */
		if (spulse_replay_next_record(rp, &rec) == 1 &&
		    rec.ext_kind == SPULSE_EXT_OFFCPU)
			fz_valid_offcpu(&rec.u.offcpu, r.info.threads,
					r.info.stacks);
	}
	CHECK(spulse_replay_seek_sample(rp, r.n + 1) == -ERANGE);
	for (; k < r.noff; k++) {
		CHECK(spulse_replay_next_offcpu(rp, &iv) == 1);
		fz_same_offcpu(&r.offcpu[k], &iv);
	}
	CHECK(spulse_replay_next_offcpu(rp, &iv) == 0);
	CHECK(spulse_replay_rewind_offcpu(rp) == 0);
	if (r.noff) {
		CHECK(spulse_replay_next_offcpu(rp, &iv) == 1);
		fz_same_offcpu(&r.offcpu[0], &iv);
	}
	spulse_replay_close(rp);
out:
	close(fd);
	fz_ref_free(&r);
	return 0;
}
