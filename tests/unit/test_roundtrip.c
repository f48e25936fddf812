// SPDX-License-Identifier: MIT
/*
 * Recorder -> Snapshot / Replay / Tail / Stream round trips: every reader
 * sees the same records, samples and definitions, and the values are the
 * ones the Recorder was given (with return-address normalization and
 * module-relative frames worked out by hand).
 */
#include "helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void assert_records_equal(const struct spulse_record *a,
				 const struct spulse_record *b)
{
	assert_int_equal(a->tag, b->tag);
	assert_int_equal(a->offset, b->offset);
	switch (a->tag) {
	case SPULSE_TAG_MODULE:
		assert_int_equal(a->u.module.id, b->u.module.id);
		assert_int_equal(a->u.module.pid, b->u.module.pid);
		assert_true(a->u.module.start == b->u.module.start);
		assert_true(a->u.module.end == b->u.module.end);
		assert_true(a->u.module.file_offset == b->u.module.file_offset);
		assert_string_equal(a->u.module.path, b->u.module.path);
		assert_int_equal(a->u.module.build_id_len, b->u.module.build_id_len);
		if (a->u.module.build_id_len)
			assert_memory_equal(a->u.module.build_id, b->u.module.build_id,
					    a->u.module.build_id_len);
		break;
	case SPULSE_TAG_FRAME:
		assert_int_equal(a->u.frame.id, b->u.frame.id);
		assert_int_equal(a->u.frame.kind, b->u.frame.kind);
		assert_int_equal(a->u.frame.module, b->u.frame.module);
		assert_true(a->u.frame.addr == b->u.frame.addr);
		break;
	case SPULSE_TAG_STACK:
		assert_int_equal(a->u.stack.id, b->u.stack.id);
		assert_int_equal(a->u.stack.parent, b->u.stack.parent);
		assert_int_equal(a->u.stack.frame, b->u.stack.frame);
		assert_int_equal(a->u.stack.depth, b->u.stack.depth);
		break;
	case SPULSE_TAG_THREAD:
		assert_int_equal(a->u.thread.id, b->u.thread.id);
		assert_int_equal(a->u.thread.pid, b->u.thread.pid);
		assert_int_equal(a->u.thread.tid, b->u.thread.tid);
		assert_string_equal(a->u.thread.comm, b->u.thread.comm);
		break;
	case SPULSE_TAG_SAMPLE:
		assert_true(a->u.sample.time_ns == b->u.sample.time_ns);
		assert_int_equal(a->u.sample.thread, b->u.sample.thread);
		assert_int_equal(a->u.sample.stack, b->u.sample.stack);
		break;
	case SPULSE_TAG_PYTHON:
		assert_int_equal(a->u.python.pid, b->u.python.pid);
		assert_int_equal(a->u.python.state, b->u.python.state);
		break;
	case SPULSE_TAG_PROCESS_DEACTIVATE:
		assert_int_equal(a->u.process_deactivate.pid,
				 b->u.process_deactivate.pid);
		break;
	case SPULSE_TAG_MODULE_DEACTIVATE:
		assert_int_equal(a->u.module_deactivate.module,
				 b->u.module_deactivate.module);
		break;
	default:
		fail_msg("unexpected tag %u", a->tag);
	}
}

static void assert_samples_equal(const struct read_result *a,
				 const struct read_result *b)
{
	size_t i;

	assert_int_equal(a->nsamples, b->nsamples);
	for (i = 0; i < a->nsamples; i++) {
		assert_true(a->samples[i].time_ns == b->samples[i].time_ns);
		assert_int_equal(a->samples[i].thread, b->samples[i].thread);
		assert_int_equal(a->samples[i].stack, b->samples[i].stack);
	}
}

static void assert_defs_equal(const struct spulse_defs *a,
			      const struct spulse_defs *b)
{
	uint32_t k, i;

	for (k = SPULSE_TAG_MODULE; k <= SPULSE_TAG_THREAD; k++)
		assert_int_equal(spulse_defs_count(a, k), spulse_defs_count(b, k));
	for (i = 0; i < spulse_defs_count(a, SPULSE_TAG_MODULE); i++) {
		struct spulse_module x, y;

		assert_int_equal(spulse_defs_module(a, i, &x), 0);
		assert_int_equal(spulse_defs_module(b, i, &y), 0);
		assert_string_equal(x.path, y.path);
		assert_true(x.start == y.start && x.end == y.end &&
			    x.file_offset == y.file_offset && x.pid == y.pid &&
			    x.active == y.active);
	}
	for (i = 0; i < spulse_defs_count(a, SPULSE_TAG_STACK); i++) {
		struct spulse_stack x, y;

		assert_int_equal(spulse_defs_stack(a, i, &x), 0);
		assert_int_equal(spulse_defs_stack(b, i, &y), 0);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	for (i = 0; i < spulse_defs_count(a, SPULSE_TAG_FRAME); i++) {
		struct spulse_frame x, y;
		uint64_t ax = 0, ay = 0;

		assert_int_equal(spulse_defs_frame(a, i, &x), 0);
		assert_int_equal(spulse_defs_frame(b, i, &y), 0);
		assert_true(x.kind == y.kind && x.module == y.module &&
			    x.addr == y.addr);
		assert_int_equal(spulse_defs_frame_address(a, i, &ax),
				 spulse_defs_frame_address(b, i, &ay));
		assert_true(ax == ay);
	}
	for (i = 0; i < spulse_defs_count(a, SPULSE_TAG_THREAD); i++) {
		struct spulse_thread x, y;

		assert_int_equal(spulse_defs_thread(a, i, &x), 0);
		assert_int_equal(spulse_defs_thread(b, i, &y), 0);
		assert_string_equal(x.comm, y.comm);
		assert_true(x.pid == y.pid && x.tid == y.tid);
	}
	assert_int_equal(spulse_defs_module(a, spulse_defs_count(a, SPULSE_TAG_MODULE),
					    &(struct spulse_module){ 0 }), -ENOENT);
}

static void every_reader_agrees_record_for_record(void **state)
{
	char *path = tmp_path();
	struct read_result snap, rep, str, str1, tail;
	struct spulse_snapshot *s;
	struct spulse_replay *r;
	struct spulse_tail *t;
	struct spulse_stream *st;
	const struct spulse_sample *ss;
	struct spulse_record rec;
	struct spulse_error err;
	uint8_t *bytes;
	size_t len, i;

	(void)state;
	make_realistic(path, 4000, 1);
	bytes = read_file(path, &len);
	read_snapshot_mem(bytes, len, &snap);
	read_replay(path, &rep);
	read_stream(bytes, len, 0, &str);
	read_stream(bytes, len, 7, &str1);
	read_tail(path, &tail);
	assert_int_equal(snap.ret, 0);
	assert_int_equal(rep.ret, 0);
	assert_int_equal(str.ret, 0);
	assert_int_equal(str1.ret, 0);
	assert_int_equal(tail.ret, 0);
	assert_int_equal(snap.nsamples, 4000);
	assert_samples_equal(&snap, &rep);
	assert_samples_equal(&snap, &str);
	assert_samples_equal(&snap, &str1);
	assert_samples_equal(&snap, &tail);
	assert_int_equal(rep.nrecords, str.nrecords);
	assert_int_equal(rep.nrecords, str1.nrecords);
	for (i = 0; i < rep.nrecords; i++) {
		assert_records_equal(&rep.records[i], &str.records[i]);
		assert_records_equal(&rep.records[i], &str1.records[i]);
	}
	/* counts: records of each kind match the info of every reader */
	{
		uint64_t per[9] = { 0 };

		for (i = 0; i < rep.nrecords; i++)
			per[rep.records[i].tag]++;
		assert_int_equal(per[SPULSE_TAG_MODULE], snap.info.modules);
		assert_int_equal(per[SPULSE_TAG_FRAME], snap.info.frames);
		assert_int_equal(per[SPULSE_TAG_STACK], snap.info.stacks);
		assert_int_equal(per[SPULSE_TAG_THREAD], snap.info.threads);
		assert_int_equal(per[SPULSE_TAG_PYTHON], snap.info.python);
		assert_int_equal(per[SPULSE_TAG_PROCESS_DEACTIVATE],
				 snap.info.process_deactivations);
		assert_int_equal(per[SPULSE_TAG_MODULE_DEACTIVATE],
				 snap.info.module_deactivations);
		assert_true(per[SPULSE_TAG_PROCESS_DEACTIVATE] > 0);
		assert_true(per[SPULSE_TAG_MODULE_DEACTIVATE] > 0);
		assert_true(per[SPULSE_TAG_PYTHON] > 0);
	}
	assert_memory_equal(&snap.info, &rep.info, sizeof(snap.info));
	assert_memory_equal(&snap.info, &str.info, sizeof(snap.info));
	assert_memory_equal(&snap.info, &tail.info, sizeof(snap.info));

	/* definitions agree too */
	assert_int_equal(spulse_snapshot_open_mem(bytes, len, NULL, &s, &err), 0);
	assert_int_equal(spulse_replay_open(path, NULL, &r, &err), 0);
	assert_int_equal(spulse_tail_open(path, NULL, &t, &err), 0);
	while (spulse_tail_poll(t, &ss, &err) > 0)
		;
	assert_int_equal(spulse_stream_new(NULL, &st), 0);
	assert_int_equal(spulse_stream_feed(st, bytes, len), 0);
	while (spulse_stream_next(st, &rec, &err) == 1)
		;
	assert_defs_equal(spulse_snapshot_defs(s), spulse_replay_defs(r));
	assert_defs_equal(spulse_snapshot_defs(s), spulse_tail_defs(t));
	assert_defs_equal(spulse_snapshot_defs(s), spulse_stream_defs(st));
	spulse_stream_free(st);
	spulse_tail_close(t);
	spulse_replay_close(r);
	spulse_snapshot_close(s);

	rr_free(&snap);
	rr_free(&rep);
	rr_free(&str);
	rr_free(&str1);
	rr_free(&tail);
	free(bytes);
	tmp_remove(path);
}

static void recorded_values_read_back_exactly(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000000,
					  .interval_us = 250, .truncate = true };
	char *path = tmp_path();
	struct spulse_recorder *w;
	struct spulse_snapshot *s;
	struct spulse_error err;
	const struct spulse_defs *d;
	struct spulse_module m;
	struct spulse_frame f;
	struct spulse_stack sk;
	struct spulse_thread th;
	struct spulse_sample sm;
	uint32_t mod, thr, fr[4], leaf;
	uint64_t addr;
	static const uint8_t bid[3] = { 0xde, 0xad, 0x01 };

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &w), 0);
	assert_int_equal(spulse_rec_module(w, 42, 0x400000, 0x401000, 0x2000,
					   "/bin/prog", bid, 3, &mod), 0);
	assert_int_equal(spulse_rec_thread(w, 42, 43, "prog-worker", &thr), 0);
	assert_int_equal(spulse_rec_frame_truncated(w, &fr[0]), 0);
	/* return address at the module start: normalizes to start - 1, outside */
	assert_int_equal(spulse_rec_frame_addr(w, 42, 0x400000, false, true, &fr[1]), 0);
	/* return address inside: rel = addr - 1 - start + file_offset */
	assert_int_equal(spulse_rec_frame_addr(w, 42, 0x400105, false, true, &fr[2]), 0);
	/* kernel leaf IP: exact */
	assert_int_equal(spulse_rec_frame_addr(w, 42, 0xffffffff81001234ULL, true,
					       false, &fr[3]), 0);
	assert_int_equal(spulse_rec_stack_frames(w, fr, 4, &leaf), 0);
	assert_int_equal(spulse_rec_sample(w, 7, thr, leaf), 0);
	assert_int_equal(spulse_rec_sample(w, 3, thr, 0), 0);	/* earlier: dt < 0 */
	assert_int_equal(spulse_recorder_samples(w), 2);
	assert_int_equal(spulse_recorder_close(w), 0);

	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	assert_int_equal(spulse_snapshot_info(s)->start_us, 5000000);
	assert_int_equal(spulse_snapshot_info(s)->interval_us, 250);
	d = spulse_snapshot_defs(s);
	assert_int_equal(spulse_defs_module(d, mod, &m), 0);
	assert_string_equal(m.path, "/bin/prog");
	assert_int_equal(m.pid, 42);
	assert_int_equal(m.build_id_len, 3);
	assert_memory_equal(m.build_id, bid, 3);
	assert_true(m.active);
	assert_int_equal(spulse_defs_frame(d, fr[0], &f), 0);
	assert_int_equal(f.kind, SPULSE_FRAME_TRUNCATED);
	assert_int_equal(spulse_defs_frame_address(d, fr[0], &addr), -ENOENT);
	assert_int_equal(spulse_defs_frame(d, fr[1], &f), 0);
	assert_int_equal(f.kind, SPULSE_FRAME_USER);
	assert_true(f.addr == 0x3fffff);
	assert_int_equal(spulse_defs_frame(d, fr[2], &f), 0);
	assert_int_equal(f.kind, SPULSE_FRAME_MODULE);
	assert_int_equal(f.module, mod);
	assert_true(f.addr == 0x2104);
	assert_int_equal(spulse_defs_frame_address(d, fr[2], &addr), 0);
	assert_true(addr == 0x400104);
	assert_int_equal(spulse_defs_frame(d, fr[3], &f), 0);
	assert_int_equal(f.kind, SPULSE_FRAME_KERNEL);
	assert_true(f.addr == 0xffffffff81001234ULL);
	assert_int_equal(spulse_defs_stack(d, leaf, &sk), 0);
	assert_int_equal(sk.depth, 4);
	assert_int_equal(sk.frame, fr[3]);
	assert_int_equal(spulse_defs_stack(d, 0, &sk), 0);
	assert_int_equal(sk.parent, SPULSE_NONE);
	assert_int_equal(sk.frame, fr[0]);
	assert_int_equal(spulse_defs_thread(d, thr, &th), 0);
	assert_string_equal(th.comm, "prog-worker");
	assert_int_equal(th.tid, 43);
	assert_int_equal(spulse_snapshot_sample_count(s), 2);
	assert_int_equal(spulse_snapshot_sample(s, 0, &sm), 0);
	assert_true(sm.time_ns == 7 && sm.stack == leaf && sm.thread == thr);
	assert_int_equal(spulse_snapshot_sample(s, 1, &sm), 0);
	assert_true(sm.time_ns == 3 && sm.stack == 0);
	spulse_snapshot_close(s);
	tmp_remove(path);
}

static void tag_names_are_the_dump_names(void **state)
{
	(void)state;
	assert_string_equal(spulse_tag_name(SPULSE_TAG_MODULE), "module");
	assert_string_equal(spulse_tag_name(SPULSE_TAG_SAMPLE), "sample");
	assert_string_equal(spulse_tag_name(SPULSE_TAG_PROCESS_DEACTIVATE),
			    "process-deactivate");
	assert_string_equal(spulse_tag_name(SPULSE_TAG_MODULE_DEACTIVATE),
			    "module-deactivate");
	assert_string_equal(spulse_tag_name(0), "unknown");
	assert_string_equal(spulse_tag_name(SPULSE_TAG_EXT), "ext");
	assert_string_equal(spulse_tag_name(10), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_reader_agrees_record_for_record),
		cmocka_unit_test(recorded_values_read_back_exactly),
		cmocka_unit_test(tag_names_are_the_dump_names),
	};

	return cmocka_run_group_tests_name("roundtrip", tests, NULL, NULL);
}
