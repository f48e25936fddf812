// SPDX-License-Identifier: MIT
/*
 * Extension records (FORMAT.md 3.10) through the Recorder and back: every
 * reader (Snapshot, Replay, Tail, Stream) returns the same intervals,
 * triggers and per-sample cpus, the values are the ones recorded, and the
 * Recorder refuses, with nothing written, every interval or trigger a
 * reader would reject.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_same_samples(const struct read_result *a,
				const struct read_result *b)
{
	size_t i;

	assert_int_equal(a->nsamples, b->nsamples);
	for (i = 0; i < a->nsamples; i++) {
		assert_true(a->samples[i].time_ns == b->samples[i].time_ns);
		assert_int_equal(a->samples[i].thread, b->samples[i].thread);
		assert_int_equal(a->samples[i].stack, b->samples[i].stack);
		assert_int_equal(a->samples[i].cpu, b->samples[i].cpu);
		assert_int_equal(a->samples[i].reserved, 0);
	}
}

static void assert_same_ext(const struct read_result *a,
			    const struct read_result *b, bool triggers)
{
	size_t i;

	assert_int_equal(a->noffcpu, b->noffcpu);
	for (i = 0; i < a->noffcpu; i++)
		assert_offcpu_equal(&a->offcpu[i], &b->offcpu[i]);
	if (!triggers)
		return;
	assert_int_equal(a->ntriggers, b->ntriggers);
	for (i = 0; i < a->ntriggers; i++)
		assert_trigger_equal(&a->triggers[i], &b->triggers[i]);
}

static void assert_same_info(const struct spulse_info *a,
			     const struct spulse_info *b)
{
	assert_true(a->samples == b->samples);
	assert_true(a->cpu_records == b->cpu_records);
	assert_true(a->offcpu == b->offcpu);
	assert_true(a->triggers == b->triggers);
	assert_true(a->ext_skipped == b->ext_skipped);
	assert_true(a->complete_bytes == b->complete_bytes);
}

static void every_reader_agrees_on_intervals_triggers_and_cpus(void **state)
{
	char *path = tmp_path();
	struct read_result snap, rep, st, st1, tail;
	uint8_t *bytes;
	size_t len, i, nrec_ext = 0, with_waker = 0, runnable = 0;
	bool cpu_seen[4] = { 0 };

	(void)state;
	make_realistic_ext(path, 6000, 3);
	bytes = read_file(path, &len);
	read_snapshot_mem(bytes, len, &snap);
	assert_int_equal(snap.ret, 0);
	read_replay(path, &rep);
	assert_int_equal(rep.ret, 0);
	read_stream(bytes, len, 0, &st);
	assert_int_equal(st.ret, 0);
	read_stream(bytes, len, 7, &st1);
	assert_int_equal(st1.ret, 0);
	read_tail(path, &tail);
	assert_int_equal(tail.ret, 0);

	/* the generator made a real mix */
	assert_true(snap.info.offcpu > 1500);
	assert_true(snap.info.triggers >= 10);
	assert_true(snap.info.ext_skipped >= 5);
	assert_true(snap.info.cpu_records > 1000);
	for (i = 0; i < snap.noffcpu; i++) {
		with_waker += snap.offcpu[i].waker_thread != SPULSE_NONE;
		runnable += snap.offcpu[i].state == SPULSE_STATE_RUNNABLE;
	}
	assert_true(with_waker > 100 && runnable > 100);
	for (i = 0; i < snap.nsamples; i++) {
		assert_true(snap.samples[i].cpu < 4);
		cpu_seen[snap.samples[i].cpu] = true;
	}
	assert_true(cpu_seen[0] && cpu_seen[1] && cpu_seen[2] && cpu_seen[3]);

	assert_same_info(&snap.info, &rep.info);
	assert_same_info(&snap.info, &st.info);
	assert_same_info(&snap.info, &st1.info);
	assert_same_info(&snap.info, &tail.info);
	assert_same_samples(&snap, &rep);
	assert_same_samples(&snap, &st);
	assert_same_samples(&snap, &st1);
	assert_same_samples(&snap, &tail);
	assert_same_ext(&snap, &rep, true);
	assert_same_ext(&snap, &st, true);
	assert_same_ext(&snap, &st1, true);
	assert_same_ext(&snap, &tail, false);

	/* Replay records and Stream records are the same, ext kinds included */
	assert_int_equal(rep.nrecords, st.nrecords);
	for (i = 0; i < rep.nrecords; i++) {
		assert_int_equal(rep.records[i].tag, st.records[i].tag);
		assert_int_equal(rep.records[i].ext_kind, st.records[i].ext_kind);
		assert_true(rep.records[i].offset == st.records[i].offset);
		if (rep.records[i].tag == SPULSE_TAG_EXT) {
			nrec_ext++;
			if (rep.records[i].ext_kind == SPULSE_EXT_CPU)
				assert_int_equal(rep.records[i].u.cpu.cpu,
						 st.records[i].u.cpu.cpu);
			else if (rep.records[i].ext_kind > SPULSE_EXT_KIND_MAX_KNOWN) {
				assert_int_equal(rep.records[i].u.ext_unknown.kind,
						 rep.records[i].ext_kind);
				assert_int_equal(rep.records[i].u.ext_unknown.len,
						 st.records[i].u.ext_unknown.len);
			}
		}
	}
	assert_int_equal(nrec_ext, snap.info.cpu_records + snap.info.offcpu +
			 snap.info.triggers + snap.info.ext_skipped);
	rr_free(&snap);
	rr_free(&rep);
	rr_free(&st);
	rr_free(&st1);
	rr_free(&tail);
	free(bytes);
	tmp_remove(path);
}

/* A small spool with hand-picked values; read back field by field. */
static void recorded_values_read_back_exactly(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000,
					  .truncate = true };
	char *path = tmp_path();
	struct spulse_recorder *r;
	uint32_t th0, th1, f0, f1, s0, s1;
	struct spulse_offcpu iv[3] = {
		{ .time_ns = 5000, .state = SPULSE_STATE_SLEEPING, .cpu_out = 1,
		  .cpu_in = 65535, .blocked_ns = 123456789, .runq_ns = 4321,
		  .waker_cpu = 2 },
		/* switch-out before the previous one: the clock goes back */
		{ .time_ns = 1000, .state = SPULSE_STATE_RUNNABLE, .cpu_out = 0,
		  .cpu_in = 0, .runq_ns = 77, .waker_thread = SPULSE_NONE,
		  .waker_stack = SPULSE_NONE, .waker_cpu = SPULSE_NONE },
		{ .time_ns = INT64_MAX - 5000 * 1000 - 10, .state = SPULSE_STATE_IDLE,
		  .cpu_out = 3, .cpu_in = 3, .blocked_ns = 4, .runq_ns = 6,
		  .waker_thread = SPULSE_NONE, .waker_stack = SPULSE_NONE,
		  .waker_cpu = SPULSE_NONE },
	};
	static const char text[] = "offcpu>50ms tid 812 state S 81.2ms";
	struct spulse_trigger tr = {
		.time_ns = 2000, .reason = SPULSE_TRIGGER_OFFCPU, .seq = 4000000000u,
		.value_ns = 81200000, .threshold_ns = 50000000,
		.window_start_ns = 0, .window_end_ns = INT64_MAX - 5000 * 1000,
		.text = text, .text_len = sizeof(text) - 1,
	}, got_tr;
	struct spulse_snapshot *s;
	struct spulse_sample sm;
	struct spulse_offcpu got;
	struct spulse_error err;
	const struct spulse_info *info;
	uint8_t *bytes;
	size_t len;
	int i;

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	assert_int_equal(spulse_rec_thread(r, 10, 11, "a", &th0), 0);
	assert_int_equal(spulse_rec_thread(r, 10, 12, "b", &th1), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL,
					      0xffffffff81000000ULL, &f0), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 0x1000, &f1), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f1, &s0), 0);
	assert_int_equal(spulse_rec_stack(r, s0, f0, &s1), 0);
	assert_int_equal(spulse_rec_sample(r, 10, th0, s0), 0);	/* cpu unknown */
	assert_int_equal(spulse_rec_sample_cpu(r, 20, th0, s1, 3), 0);
	assert_int_equal(spulse_rec_sample_cpu(r, 30, th1, s1, 3), 0); /* same cpu: no record */
	assert_int_equal(spulse_rec_cpu(r, 3), 0);			/* neither */
	assert_int_equal(spulse_rec_sample_cpu(r, 40, th1, s0, 60000), 0);
	iv[0].thread = th0;
	iv[0].stack = s1;
	iv[0].waker_thread = th1;
	iv[0].waker_stack = s0;
	iv[1].thread = th1;
	iv[1].stack = s0;
	iv[2].thread = th1;
	iv[2].stack = s1;
	assert_int_equal(spulse_rec_offcpu(r, &iv[0]), 0);
	assert_int_equal(spulse_rec_offcpu(r, &iv[1]), 0);
	assert_int_equal(spulse_rec_trigger(r, &tr), 0);
	assert_int_equal(spulse_rec_ext_raw(r, 1000, "\x01\x02\x03", 3), 0);
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_MAX_KIND, NULL, 0), 0);
	assert_int_equal(spulse_rec_offcpu(r, &iv[2]), 0);
	assert_int_equal(spulse_rec_sample(r, 50, th0, s0), 0);	/* still 60000 */
	assert_int_equal(spulse_recorder_close(r), 0);

	bytes = read_file(path, &len);
	assert_int_equal(expect_valid(bytes, len), 5);
	assert_int_equal(spulse_snapshot_open(path, NULL, &s, &err), 0);
	info = spulse_snapshot_info(s);
	assert_int_equal(info->cpu_records, 2);
	assert_int_equal(info->offcpu, 3);
	assert_int_equal(info->triggers, 1);
	assert_int_equal(info->ext_skipped, 2);
	{
		static const uint32_t cpus[] = { SPULSE_NONE, 3, 3, 60000, 60000 };

		for (i = 0; i < 5; i++) {
			assert_int_equal(spulse_snapshot_sample(s, (uint64_t)i, &sm), 0);
			assert_int_equal(sm.cpu, cpus[i]);
			assert_int_equal(sm.reserved, 0);
		}
	}
	assert_int_equal(spulse_snapshot_offcpu_count(s), 3);
	iv[0].waker_cpu = 2;
	for (i = 0; i < 3; i++) {
		assert_int_equal(spulse_snapshot_offcpu(s, (uint64_t)i, &got), 0);
		assert_offcpu_equal(&got, &iv[i]);
	}
	assert_int_equal(spulse_snapshot_trigger_count(s), 1);
	assert_int_equal(spulse_snapshot_trigger(s, 0, &got_tr), 0);
	assert_trigger_equal(&got_tr, &tr);
	assert_string_equal(got_tr.text, text);
	assert_int_equal(spulse_snapshot_trigger(s, 1, &got_tr), -ERANGE);
	spulse_snapshot_close(s);
	free(bytes);
	tmp_remove(path);
}

/* Each call the readers would reject is refused and writes nothing. */
static void recorder_refuses_what_a_reader_rejects(void **state)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 5000,
					  .truncate = true };
	char *path = tmp_path();
	struct spulse_recorder *r;
	uint32_t th, f, st;
	struct spulse_offcpu ok = { .time_ns = 100, .state = SPULSE_STATE_DISK,
		.cpu_out = 1, .cpu_in = 2, .blocked_ns = 10, .runq_ns = 20,
		.waker_thread = 0, .waker_stack = 0, .waker_cpu = 0 }, iv;
	struct spulse_trigger tr = { .time_ns = 5, .reason = 1 }, tb;
	uint64_t before;
	uint8_t big[SPULSE_EXT_MAX_LEN + 1] = { 0 };

	(void)state;
	assert_int_equal(spulse_recorder_open(path, &o, &r), 0);
	/* nothing defined yet */
	assert_int_equal(spulse_rec_offcpu(r, &ok), -ENOENT);
	assert_int_equal(spulse_rec_thread(r, 1, 1, "x", &th), 0);
	assert_int_equal(spulse_rec_frame_abs(r, SPULSE_FRAME_KERNEL, 0xffff0000, &f), 0);
	assert_int_equal(spulse_rec_stack(r, SPULSE_NONE, f, &st), 0);
	assert_int_equal(spulse_recorder_flush(r), 0);
	before = spulse_recorder_bytes(r);

#define REFUSE(field, value, want) do {				\
		iv = ok;					\
		iv.field = (value);				\
		assert_int_equal(spulse_rec_offcpu(r, &iv), (want)); \
	} while (0)
	REFUSE(thread, 1, -ENOENT);
	REFUSE(stack, 1, -ENOENT);
	REFUSE(waker_thread, 1, -ENOENT);
	REFUSE(waker_stack, 1, -ENOENT);
	REFUSE(state, SPULSE_STATE_MAX + 1, -EINVAL);
	REFUSE(cpu_out, SPULSE_MAX_CPU, -EINVAL);
	REFUSE(cpu_in, SPULSE_MAX_CPU, -EINVAL);
	REFUSE(waker_cpu, SPULSE_MAX_CPU, -EINVAL);
	REFUSE(time_ns, -1, -EINVAL);
	REFUSE(blocked_ns, UINT64_MAX, -EOVERFLOW);
	REFUSE(time_ns, INT64_MAX - 29, -EOVERFLOW);	/* T + 30 > max */
	REFUSE(state, SPULSE_STATE_RUNNABLE, -EINVAL);	/* blocked + waker */
	iv = ok;
	iv.state = SPULSE_STATE_RUNNABLE;
	iv.blocked_ns = 0;
	assert_int_equal(spulse_rec_offcpu(r, &iv), -EINVAL);	/* waker */
#undef REFUSE
	tb = tr;
	tb.reason = 0;
	assert_int_equal(spulse_rec_trigger(r, &tb), -EINVAL);
	tb.reason = SPULSE_TRIGGER_REASON_MAX + 1;
	assert_int_equal(spulse_rec_trigger(r, &tb), -EINVAL);
	tb = tr;
	tb.window_start_ns = 2;
	tb.window_end_ns = 1;
	assert_int_equal(spulse_rec_trigger(r, &tb), -EINVAL);
	tb = tr;
	tb.text = (const char *)big;
	tb.text_len = SPULSE_MAX_TRIGGER_TEXT + 1;
	assert_int_equal(spulse_rec_trigger(r, &tb), -EINVAL);
	tb = tr;
	tb.time_ns = -1;
	assert_int_equal(spulse_rec_trigger(r, &tb), -EINVAL);
	assert_int_equal(spulse_rec_cpu(r, SPULSE_MAX_CPU), -EINVAL);
	assert_int_equal(spulse_rec_sample_cpu(r, 1, th, st, SPULSE_MAX_CPU), -EINVAL);
	assert_int_equal(spulse_rec_sample_cpu(r, 1, th + 1, st, 0), -ENOENT);
	/* raw: kind 0, too long, and known kinds that do not validate */
	assert_int_equal(spulse_rec_ext_raw(r, 0, "", 0), -EINVAL);
	assert_int_equal(spulse_rec_ext_raw(r, 77, big, sizeof(big)), -EINVAL);
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_CPU, "\x80\x80\x04", 3),
			 -EINVAL);				/* cpu 65536 */
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_CPU, "\x01\x00", 2),
			 -EINVAL);				/* a byte left over */
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_CPU, "", 0), -EINVAL);
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_TRIGGER, "\x00\x00", 2),
			 -EINVAL);				/* reason 0 */
	assert_int_equal(spulse_recorder_flush(r), 0);
	assert_true(spulse_recorder_bytes(r) == before);

	/* the accepted ones still go through, raw known kinds included */
	assert_int_equal(spulse_rec_offcpu(r, &ok), 0);
	assert_int_equal(spulse_rec_ext_raw(r, SPULSE_EXT_CPU, "\x05", 1), 0);
	assert_int_equal(spulse_rec_cpu(r, 5), 0);	/* already 5: nothing */
	assert_int_equal(spulse_rec_sample(r, 1, th, st), 0);
	assert_int_equal(spulse_recorder_close(r), 0);
	{
		struct read_result rr;
		size_t len;
		uint8_t *bytes = read_file(path, &len);

		assert_int_equal(expect_valid(bytes, len), 1);
		read_snapshot_mem(bytes, len, &rr);
		assert_int_equal(rr.info.offcpu, 1);
		assert_int_equal(rr.info.cpu_records, 1);
		assert_int_equal(rr.samples[0].cpu, 5);
		rr_free(&rr);
		free(bytes);
	}
	tmp_remove(path);
}

static void names_of_states_and_reasons(void **state)
{
	static const char letters[] = "RSDTtXZPI";
	unsigned i;

	(void)state;
	for (i = 0; i <= SPULSE_STATE_MAX; i++) {
		assert_int_equal(strlen(spulse_state_name((uint8_t)i)), 1);
		assert_int_equal(spulse_state_name((uint8_t)i)[0], letters[i]);
		assert_non_null(spulse_state_long_name((uint8_t)i));
	}
	assert_string_equal(spulse_state_long_name(SPULSE_STATE_RUNNABLE), "runnable");
	assert_string_equal(spulse_state_long_name(SPULSE_STATE_SLEEPING), "sleeping");
	assert_null(spulse_state_name(SPULSE_STATE_MAX + 1));
	assert_null(spulse_state_long_name(255));
	assert_string_equal(spulse_trigger_reason_name(1), "manual");
	assert_string_equal(spulse_trigger_reason_name(2), "signal");
	assert_string_equal(spulse_trigger_reason_name(3), "offcpu");
	assert_string_equal(spulse_trigger_reason_name(4), "runq");
	assert_null(spulse_trigger_reason_name(0));
	assert_null(spulse_trigger_reason_name(5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_reader_agrees_on_intervals_triggers_and_cpus),
		cmocka_unit_test(recorded_values_read_back_exactly),
		cmocka_unit_test(recorder_refuses_what_a_reader_rejects),
		cmocka_unit_test(names_of_states_and_reasons),
	};

	return cmocka_run_group_tests_name("offcpu", tests, NULL, NULL);
}
