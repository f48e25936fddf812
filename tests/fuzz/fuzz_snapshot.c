// SPDX-License-Identifier: MIT
/*
 * libFuzzer: spulse_snapshot_open_mem on arbitrary bytes. Invariants: the
 * recovery flag matches complete_bytes, every definition and sample is
 * reachable through the accessors and refers only to defined ids (off-CPU
 * intervals too, checked in fz_reference()), and a Stream fed the same
 * bytes agrees on the outcome and on every sample, interval and trigger.
 */
#include "fuzz_common.h"

static void walk_defs(const struct spulse_defs *d, const struct fz_ref *r)
{
	uint32_t nm = spulse_defs_count(d, SPULSE_TAG_MODULE);
	uint32_t nf = spulse_defs_count(d, SPULSE_TAG_FRAME);
	uint32_t ns = spulse_defs_count(d, SPULSE_TAG_STACK);
	uint32_t nt = spulse_defs_count(d, SPULSE_TAG_THREAD);
	uint32_t i;
	uint64_t a;

	CHECK(nm == r->info.modules && nf == r->info.frames &&
	      ns == r->info.stacks && nt == r->info.threads);
	for (i = 0; i < nm; i++) {
		struct spulse_module m;

		CHECK(spulse_defs_module(d, i, &m) == 0);
		CHECK(m.start < m.end && strlen(m.path) <= m.path_len);
		CHECK(m.path_len <= SPULSE_MAX_STRING);
		CHECK(m.build_id_len <= SPULSE_MAX_BUILD_ID);
	}
	for (i = 0; i < nf; i++) {
		struct spulse_frame f;

		CHECK(spulse_defs_frame(d, i, &f) == 0);
		CHECK(f.kind <= SPULSE_FRAME_KIND_MAX);
		if (f.kind == SPULSE_FRAME_MODULE) {
			struct spulse_module m;

			CHECK(f.module < nm);
			CHECK(spulse_defs_module(d, f.module, &m) == 0);
			CHECK(spulse_defs_frame_address(d, i, &a) == 0);
			CHECK(a >= m.start && a < m.end);
		}
		CHECK((spulse_defs_frame_address(d, i, &a) == -ENOENT) ==
		      (f.kind == SPULSE_FRAME_TRUNCATED));
	}
	for (i = 0; i < ns; i++) {
		struct spulse_stack s, p;
		struct spulse_frame f;

		CHECK(spulse_defs_stack(d, i, &s) == 0);
		CHECK(s.frame < nf && s.depth >= 1 && s.depth <= SPULSE_MAX_DEPTH);
		CHECK(spulse_defs_frame(d, s.frame, &f) == 0);
		if (s.parent == SPULSE_NONE) {
			CHECK(s.depth == 1);
		} else {
			CHECK(s.parent < i);
			CHECK(f.kind != SPULSE_FRAME_TRUNCATED);
			CHECK(spulse_defs_stack(d, s.parent, &p) == 0);
			CHECK(s.depth == p.depth + 1);
		}
	}
	for (i = 0; i < nt; i++) {
		struct spulse_thread t;

		CHECK(spulse_defs_thread(d, i, &t) == 0);
		CHECK(t.comm_len <= SPULSE_MAX_STRING);
	}
	for (i = 0; i < r->n; i++) {
		CHECK(r->samples[i].thread < nt && r->samples[i].stack < ns);
		CHECK(r->samples[i].time_ns >= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spulse_snapshot *s;
	struct spulse_stream *st;
	struct spulse_record rec;
	struct spulse_error err;
	struct fz_ref r;
	struct fz_pos pos = { 0 };
	int ret;

	fz_reference(data, size, &r);
	if (!r.ret) {
		CHECK(spulse_snapshot_open_mem(data, size, NULL, &s, &err) == 0);
		walk_defs(spulse_snapshot_defs(s), &r);
		spulse_snapshot_close(s);
	}
	CHECK(spulse_stream_new(NULL, &st) == 0);
	CHECK(spulse_stream_feed(st, data, size) == 0);
	while ((ret = spulse_stream_next(st, &rec, &err)) == 1)
		fz_check_record(&r, &pos, &rec);
	if (r.short_header) {	/* a stream waits for the rest of the header */
		CHECK(ret == 0 && spulse_stream_pending(st) == size);
		spulse_stream_free(st);
		fz_ref_free(&r);
		return 0;
	}
	CHECK(ret == r.ret);
	fz_pos_complete(&r, &pos);	/* everything (before the error) */
	if (ret) {
		CHECK(err.offset == r.err.offset);
		CHECK(!strcmp(err.msg, r.err.msg));
	} else {
		CHECK(spulse_stream_info(st)->complete_bytes == r.info.complete_bytes);
		CHECK(spulse_stream_info(st)->recovered_from_truncated_tail ==
		      r.info.recovered_from_truncated_tail);
		CHECK(spulse_stream_pending(st) == size - r.info.complete_bytes);
	}
	spulse_stream_free(st);
	fz_ref_free(&r);
	return 0;
}
