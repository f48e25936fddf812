// SPDX-License-Identifier: MIT
/*
 * Tag 9 extension records (FORMAT.md 3.10) from hand-built bytes: one test
 * per rule. Every reader (Snapshot, Replay, Stream whole and byte by byte,
 * Tail) must report -EBADMSG at the offset of the offending field with the
 * rule in the message; the boundary values just inside each limit are
 * accepted; unknown kinds are skipped by length and counted; a file that
 * ends inside the payload is a truncated tail.
 */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One extension payload under construction, with each field's offset. */
struct xrec {
	uint8_t pay[8192];
	size_t n;
	size_t at[16];		/* payload offset of field i */
	int nf;
};

static void xu(struct xrec *x, uint64_t v)
{
	x->at[x->nf++] = x->n;
	x->n += spulse_put_uvar(x->pay + x->n, v);
}

static void xs(struct xrec *x, int64_t v)
{
	x->at[x->nf++] = x->n;
	x->n += spulse_put_svar(x->pay + x->n, v);
}

static void xbytes(struct xrec *x, const void *p, size_t len)
{
	x->at[x->nf++] = x->n;
	x->n += spulse_put_bytes(x->pay + x->n, p, len);
}

/*
 * Append tag 9, @kind, @len (the payload's own length when @len is
 * SIZE_MAX) and the payload. Returns the file offset of the payload.
 */
static size_t xcommit_len(struct tbuf *b, uint32_t kind, const struct xrec *x,
			  size_t len)
{
	uint8_t hdr[SPULSE_EXT_HDR_MAX + 8];
	size_t n = spulse_put_ext_hdr(hdr, kind, len == SIZE_MAX ? x->n : len);

	tb_raw(b, hdr, n);
	tb_raw(b, x->pay, x->n);
	return b->len - x->n;
}

static size_t xcommit(struct tbuf *b, uint32_t kind, const struct xrec *x)
{
	return xcommit_len(b, kind, x, SIZE_MAX);
}

/* Field indexes of an off-CPU interval. */
enum { F_DT, F_THREAD, F_STACK, F_STATE, F_CPU_OUT, F_CPU_IN, F_BLOCKED,
       F_RUNQ, F_WAKER, F_WSTACK, F_WCPU };

struct iv {
	int64_t dt;
	uint64_t v[11];		/* indexed as above; v[F_DT] unused */
	bool waker;		/* v[F_WAKER] is the raw field (thread + 1) */
};

/* A valid S interval of thread 0 / stack 0 woken by thread 0. */
static struct iv iv_ok(void)
{
	struct iv iv = { .dt = 1000, .waker = true };

	iv.v[F_STATE] = SPULSE_STATE_SLEEPING;
	iv.v[F_CPU_OUT] = 1;
	iv.v[F_CPU_IN] = 2;
	iv.v[F_BLOCKED] = 500;
	iv.v[F_RUNQ] = 20;
	iv.v[F_WAKER] = 1;
	iv.v[F_WCPU] = 3;
	return iv;
}

static void xiv(struct xrec *x, const struct iv *iv)
{
	int i;

	memset(x, 0, sizeof(*x));
	xs(x, iv->dt);
	for (i = F_THREAD; i <= F_WAKER; i++)
		xu(x, iv->v[i]);
	if (iv->waker) {
		xu(x, iv->v[F_WSTACK]);
		xu(x, iv->v[F_WCPU]);
	}
}

/* tb_basic() + thread 1, stack 1 (child of 0). */
static void base(struct tbuf *b)
{
	memset(b, 0, sizeof(*b));
	tb_basic(b);
	TB(b, spulse_enc_thread, 1, 100, 102, "w", 1);
	TB(b, spulse_enc_stack, 1, 1, 0);
}

/* Spool = base + one interval; expect corruption at field @field. */
static void iv_corrupt(const struct iv *iv, int field, const char *msg)
{
	static struct xrec x;
	struct tbuf b;
	size_t pay;

	base(&b);
	xiv(&x, iv);
	pay = xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_corrupt(b.p, b.len, pay + x.at[field], msg);
	tb_free(&b);
}

static void iv_valid(const struct iv *iv)
{
	static struct xrec x;
	struct tbuf b;

	base(&b);
	xiv(&x, iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void offcpu_references_must_be_defined(void **state)
{
	struct iv iv;

	(void)state;
	/* 2 threads and 2 stacks defined: id 1 is fine, 2 is a forward ref */
	iv = iv_ok();
	iv.v[F_THREAD] = 1;
	iv.v[F_STACK] = 1;
	iv.v[F_WAKER] = 2;
	iv.v[F_WSTACK] = 1;
	iv_valid(&iv);
	iv = iv_ok();
	iv.v[F_THREAD] = 2;
	iv_corrupt(&iv, F_THREAD, "forward reference to thread 2");
	iv = iv_ok();
	iv.v[F_STACK] = 2;
	iv_corrupt(&iv, F_STACK, "forward reference to stack 2");
	iv = iv_ok();
	iv.v[F_WAKER] = 3;		/* thread 2 */
	iv_corrupt(&iv, F_WAKER, "forward reference to waker thread 2");
	iv = iv_ok();
	iv.v[F_WSTACK] = 2;
	iv_corrupt(&iv, F_WSTACK, "forward reference to waker stack 2");
	iv = iv_ok();
	iv.v[F_THREAD] = 1ULL << 40;	/* beyond u32 as well */
	iv_corrupt(&iv, F_THREAD, "forward reference to thread 1099511627776");
}

static void offcpu_state_above_8_is_corruption(void **state)
{
	struct iv iv = iv_ok();

	(void)state;
	iv.v[F_STATE] = SPULSE_STATE_IDLE;
	iv_valid(&iv);
	iv.v[F_STATE] = 9;
	iv_corrupt(&iv, F_STATE, "unknown off-CPU state 9");
	iv.v[F_STATE] = 300;
	iv_corrupt(&iv, F_STATE, "unknown off-CPU state 300");
}

static void cpu_numbers_below_65536(void **state)
{
	static const int fields[] = { F_CPU_OUT, F_CPU_IN, F_WCPU };
	static const char *const names[] = { "cpu_out", "cpu_in", "waker_cpu" };
	static struct xrec x;
	struct tbuf b;
	struct iv iv;
	size_t pay;
	char msg[64];
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		iv = iv_ok();
		iv.v[fields[i]] = SPULSE_MAX_CPU - 1;
		iv_valid(&iv);
		iv.v[fields[i]] = SPULSE_MAX_CPU;
		snprintf(msg, sizeof(msg), "%s 65536 out of range", names[i]);
		iv_corrupt(&iv, fields[i], msg);
	}
	/* kind 1 */
	base(&b);
	memset(&x, 0, sizeof(x));
	xu(&x, SPULSE_MAX_CPU - 1);
	xcommit(&b, SPULSE_EXT_CPU, &x);
	expect_valid(b.p, b.len);
	memset(&x, 0, sizeof(x));
	xu(&x, SPULSE_MAX_CPU);
	pay = xcommit(&b, SPULSE_EXT_CPU, &x);
	expect_corrupt(b.p, b.len, pay, "cpu 65536 out of range");
	tb_free(&b);
}

static void runnable_has_no_blocked_time_and_no_waker(void **state)
{
	struct iv iv = iv_ok();

	(void)state;
	iv.v[F_STATE] = SPULSE_STATE_RUNNABLE;
	iv_corrupt(&iv, F_BLOCKED, "runnable (preempted) interval with blocked time");
	iv.v[F_BLOCKED] = 0;
	iv_corrupt(&iv, F_WAKER, "runnable (preempted) interval with a waker");
	iv.v[F_WAKER] = 0;
	iv.waker = false;
	iv_valid(&iv);
}

static void interval_durations_must_not_overflow(void **state)
{
	struct iv iv = iv_ok();

	(void)state;
	/* blocked + runq wraps u64 */
	iv.v[F_BLOCKED] = UINT64_MAX - 5;
	iv.v[F_RUNQ] = 6;
	iv_corrupt(&iv, F_RUNQ, "off-CPU interval overflows");
	/* T + total just fits, then one more */
	iv.dt = 1000;
	iv.v[F_BLOCKED] = (uint64_t)TB_TIME_MAX - 1000 - 20;
	iv.v[F_RUNQ] = 20;
	iv_valid(&iv);
	iv.v[F_RUNQ] = 21;
	iv_corrupt(&iv, F_RUNQ, "off-CPU interval overflows");
}

static void event_clock_below_0_or_overflowing_is_corruption(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct iv iv = iv_ok();
	size_t pay;

	(void)state;
	iv.dt = -1;
	iv_corrupt(&iv, F_DT, "event before profile start");
	/* 5, then -5 (back to 0: fine), then -1 on a trigger */
	base(&b);
	iv.dt = 5;
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	iv.dt = -5;
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_valid(b.p, b.len);
	memset(&x, 0, sizeof(x));
	xs(&x, -1);
	xu(&x, 1);
	xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0);
	xbytes(&x, "", 0);
	pay = xcommit(&b, SPULSE_EXT_TRIGGER, &x);
	expect_corrupt(b.p, b.len, pay, "event before profile start");
	tb_free(&b);
	/* the clock limit (start_us * 1000 + offset = INT64_MAX), then +1 */
	base(&b);
	iv = iv_ok();
	iv.v[F_BLOCKED] = iv.v[F_RUNQ] = 0;
	iv.dt = TB_TIME_MAX;
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_valid(b.p, b.len);
	iv.dt = 1;
	xiv(&x, &iv);
	pay = xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_corrupt(b.p, b.len, pay, "event clock overflows");
	tb_free(&b);
}

/* The event clock is its own: a sample clock near its end does not move it. */
static void sample_and_event_clocks_are_separate(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct iv iv = iv_ok();
	struct read_result r;

	(void)state;
	base(&b);
	TB(&b, spulse_enc_sample, 1000000, 0, 0);
	iv.dt = 10;
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	TB(&b, spulse_enc_sample, -999990, 0, 0);	/* sample clock 10 */
	iv.dt = -10;					/* event clock 0 */
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	assert_int_equal(expect_valid(b.p, b.len), 2);
	read_snapshot_mem(b.p, b.len, &r);
	assert_int_equal(r.noffcpu, 2);
	assert_true(r.offcpu[0].time_ns == 10 && r.offcpu[1].time_ns == 0);
	assert_true(r.samples[0].time_ns == 1000000 && r.samples[1].time_ns == 10);
	rr_free(&r);
	tb_free(&b);
}

/* Trigger with fields dt, reason, seq, value, threshold, wstart, wend, text. */
static size_t trig(struct tbuf *b, struct xrec *x, uint64_t reason,
		   uint64_t seq, uint64_t ws, uint64_t we, size_t text_len)
{
	static const char text[SPULSE_MAX_TRIGGER_TEXT + 8] = "t";

	memset(x, 0, sizeof(*x));
	xs(x, 7);
	xu(x, reason);
	xu(x, seq);
	xu(x, 100);
	xu(x, 50);
	xu(x, ws);
	xu(x, we);
	xbytes(x, text, text_len);
	return xcommit(b, SPULSE_EXT_TRIGGER, x);
}

static void trigger_rules(void **state)
{
	static struct xrec x;
	struct tbuf b;
	size_t pay;
	uint64_t reasons[] = { 0, 5, 1000 };
	char msg[64];
	unsigned i;

	(void)state;
	/* boundary values accepted: reasons 1..4, start == end, 256-byte text */
	base(&b);
	for (i = 1; i <= 4; i++)
		trig(&b, &x, i, UINT32_MAX, 9, 9, SPULSE_MAX_TRIGGER_TEXT);
	expect_valid(b.p, b.len);
	tb_free(&b);
	for (i = 0; i < 3; i++) {
		base(&b);
		pay = trig(&b, &x, reasons[i], 1, 0, 0, 1);
		snprintf(msg, sizeof(msg), "unknown trigger reason %llu",
			 (unsigned long long)reasons[i]);
		expect_corrupt(b.p, b.len, pay + x.at[1], msg);
		tb_free(&b);
	}
	base(&b);
	pay = trig(&b, &x, 1, 1ULL << 32, 0, 0, 1);
	expect_corrupt(b.p, b.len, pay + x.at[2], "trigger seq 4294967296 exceeds u32");
	tb_free(&b);
	base(&b);
	pay = trig(&b, &x, 2, 1, 10, 9, 1);
	expect_corrupt(b.p, b.len, pay + x.at[6], "trigger window ends (9) before it starts (10)");
	tb_free(&b);
	base(&b);
	pay = trig(&b, &x, 2, 1, 0, 0, SPULSE_MAX_TRIGGER_TEXT + 1);
	expect_corrupt(b.p, b.len, pay + x.at[7],
		       "trigger text length 257 exceeds limit 256");
	tb_free(&b);
}

static void trigger_text_is_nul_terminated_and_exact(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct read_result r;
	static const char text[] = "a\0b=c d";

	(void)state;
	base(&b);
	memset(&x, 0, sizeof(x));
	xs(&x, 3);
	xu(&x, 3);
	xu(&x, 9);
	xu(&x, 81200000);
	xu(&x, 50000000);
	xu(&x, 1);
	xu(&x, 2);
	xbytes(&x, "offcpu>50ms", 11);
	xcommit(&b, SPULSE_EXT_TRIGGER, &x);
	memset(&x, 0, sizeof(x));
	xs(&x, 1);
	xu(&x, 1);
	xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0);
	xbytes(&x, text, 1);		/* "a" only */
	xcommit(&b, SPULSE_EXT_TRIGGER, &x);
	expect_valid(b.p, b.len);
	read_snapshot_mem(b.p, b.len, &r);
	assert_int_equal(r.ntriggers, 2);
	assert_string_equal(r.triggers[0].text, "offcpu>50ms");
	assert_true(r.triggers[0].time_ns == 3 && r.triggers[0].reason == 3 &&
		    r.triggers[0].seq == 9 && r.triggers[0].value_ns == 81200000 &&
		    r.triggers[0].threshold_ns == 50000000 &&
		    r.triggers[0].window_start_ns == 1 &&
		    r.triggers[0].window_end_ns == 2);
	assert_string_equal(r.triggers[1].text, "a");
	assert_true(r.triggers[1].time_ns == 4);
	rr_free(&r);
	tb_free(&b);
}

static void kind_0_and_kind_beyond_u32_are_corruption(void **state)
{
	struct tbuf b;
	size_t off;
	static const uint8_t k0[] = { SPULSE_TAG_EXT, 0x00, 0x00 };
	/* kind 2^32: 80 80 80 80 10 */
	static const uint8_t kbig[] = { SPULSE_TAG_EXT, 0x80, 0x80, 0x80, 0x80,
					0x10, 0x00 };

	(void)state;
	base(&b);
	off = b.len;
	tb_raw(&b, k0, sizeof(k0));
	expect_corrupt(b.p, b.len, off + 1, "reserved extension kind 0");
	/* kind 0 is corruption even when the file ends right after it */
	b.len = off + 2;
	expect_corrupt(b.p, b.len, off + 1, "reserved extension kind 0");
	b.len = off;
	tb_raw(&b, kbig, sizeof(kbig));
	expect_corrupt(b.p, b.len, off + 1, "extension kind 4294967296 exceeds u32");
	tb_free(&b);
}

static void length_above_4096_is_corruption_even_when_cut(void **state)
{
	static struct xrec x;
	struct tbuf b;
	size_t off;
	/* kind 77, len 4097 = 81 20 */
	static const uint8_t big[] = { SPULSE_TAG_EXT, 77, 0x81, 0x20 };

	(void)state;
	base(&b);
	off = b.len;
	tb_raw(&b, big, sizeof(big));
	expect_corrupt(b.p, b.len, off + 2, "extension length 4097 exceeds limit 4096");
	tb_free(&b);
	/* 4096 is fine for an unknown kind */
	base(&b);
	memset(&x, 0, sizeof(x));
	x.n = SPULSE_EXT_MAX_LEN;
	memset(x.pay, 0xff, x.n);
	xcommit(&b, 77, &x);
	expect_valid(b.p, b.len);
	tb_free(&b);
}

static void payload_length_must_match_the_fields(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct iv iv = iv_ok();
	size_t pay;

	(void)state;
	/* cpu: one byte left over */
	base(&b);
	memset(&x, 0, sizeof(x));
	xu(&x, 3);
	x.pay[x.n++] = 0;
	pay = xcommit(&b, SPULSE_EXT_CPU, &x);
	expect_corrupt(b.p, b.len, pay + 1,
		       "extension payload length mismatch: 1 bytes left over");
	tb_free(&b);
	/* cpu: len 0, the field runs past the payload: reported at len
	 * (the field has no byte of its own), also when the file ends there */
	base(&b);
	memset(&x, 0, sizeof(x));
	pay = xcommit(&b, SPULSE_EXT_CPU, &x);
	expect_corrupt(b.p, b.len, pay - 1,
		       "cpu runs past the payload end (len too small)");
	TB(&b, spulse_enc_sample, 0, 0, 0);	/* would read as the cpu */
	expect_corrupt(b.p, b.len, pay - 1,
		       "cpu runs past the payload end (len too small)");
	tb_free(&b);
	/* interval: len says 1 byte fewer than its fields: the 2-byte waker
	 * cpu is cut (at its first byte); with a 1-byte waker cpu nothing of
	 * it is inside (at len) */
	base(&b);
	iv.v[F_WCPU] = 300;
	xiv(&x, &iv);
	pay = xcommit_len(&b, SPULSE_EXT_OFFCPU, &x, x.n - 1);
	expect_corrupt(b.p, b.len, pay + x.at[F_WCPU],
		       "waker_cpu runs past the payload end");
	tb_free(&b);
	base(&b);
	iv.v[F_WCPU] = 3;
	xiv(&x, &iv);
	pay = xcommit_len(&b, SPULSE_EXT_OFFCPU, &x, x.n - 1);
	expect_corrupt(b.p, b.len, pay - 1,
		       "waker_cpu runs past the payload end (len too small)");
	tb_free(&b);
	/* interval with waker = 0 but waker fields present: left over */
	base(&b);
	iv.v[F_WAKER] = 0;
	xiv(&x, &iv);
	pay = xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	expect_corrupt(b.p, b.len, pay + x.at[F_WSTACK],
		       "extension payload length mismatch: 2 bytes left over");
	tb_free(&b);
	/* trigger text longer than the payload */
	base(&b);
	memset(&x, 0, sizeof(x));
	xs(&x, 0);
	xu(&x, 1);
	xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0); xu(&x, 0);
	xbytes(&x, "abcdef", 6);
	pay = xcommit_len(&b, SPULSE_EXT_TRIGGER, &x, x.n - 2);
	TB(&b, spulse_enc_sample, 0, 0, 0);
	TB(&b, spulse_enc_sample, 0, 0, 0);
	expect_corrupt(b.p, b.len, pay + x.at[7], "text runs past the payload end");
	tb_free(&b);
	/* an overlong varint inside a payload is reported as such */
	base(&b);
	memset(&x, 0, sizeof(x));
	x.pay[0] = 0x80;
	x.pay[1] = 0x00;
	x.n = 2;
	pay = xcommit(&b, SPULSE_EXT_CPU, &x);
	expect_corrupt(b.p, b.len, pay, "overlong varint");
	tb_free(&b);
}

/* Unknown kinds, with payloads that would be corrupt if they were decoded. */
static void unknown_kinds_are_skipped_and_counted_by_every_reader(void **state)
{
	static const uint32_t kinds[] = { SPULSE_EXT_KIND_MAX_KNOWN + 1, 1000, SPULSE_EXT_MAX_KIND, 9 };
	static struct xrec x;
	struct read_result r;
	struct tbuf b;
	char *path;
	unsigned i;

	(void)state;
	base(&b);
	for (i = 0; i < 4; i++) {
		memset(&x, 0, sizeof(x));
		x.n = i * 5;
		memset(x.pay, i == 3 ? SPULSE_TAG_EXT : 0xff, x.n);
		xcommit(&b, kinds[i], &x);
		TB(&b, spulse_enc_sample, 10, 0, 0);
	}
	path = tmp_write(b.p, b.len);
	assert_int_equal(expect_valid(b.p, b.len), 4);
	read_snapshot_mem(b.p, b.len, &r);
	assert_int_equal(r.info.ext_skipped, 4);
	assert_int_equal(r.info.samples, 4);
	assert_true(r.samples[3].time_ns == 40);
	rr_free(&r);
	read_replay(path, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.info.ext_skipped, 4);
	for (i = 0; i < r.nrecords; i++)
		if (r.records[i].tag == SPULSE_TAG_EXT) {
			assert_int_equal(r.records[i].ext_kind,
					 r.records[i].u.ext_unknown.kind);
			assert_true(r.records[i].u.ext_unknown.kind == kinds[0] ||
				    r.records[i].u.ext_unknown.kind == kinds[1] ||
				    r.records[i].u.ext_unknown.kind == kinds[2] ||
				    r.records[i].u.ext_unknown.kind == kinds[3]);
		}
	rr_free(&r);
	read_stream(b.p, b.len, 1, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.info.ext_skipped, 4);
	assert_int_equal(r.nsamples, 4);
	rr_free(&r);
	read_tail(path, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.info.ext_skipped, 4);
	assert_int_equal(r.nsamples, 4);
	rr_free(&r);
	tmp_remove(path);
	tb_free(&b);
}

/* A file that ends inside a payload: the record is a truncated tail. */
static void cut_payload_is_a_truncated_tail(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct iv iv = iv_ok();
	struct read_result r;
	size_t rec_off, cut;
	char *path;

	(void)state;
	base(&b);
	TB(&b, spulse_enc_sample, 10, 0, 0);
	rec_off = b.len;
	xiv(&x, &iv);
	xcommit(&b, SPULSE_EXT_OFFCPU, &x);
	for (cut = rec_off + 1; cut < b.len; cut++) {
		read_snapshot_mem(b.p, cut, &r);
		assert_int_equal(r.ret, 0);
		assert_true(r.info.recovered_from_truncated_tail);
		assert_int_equal(r.info.complete_bytes, rec_off);
		assert_int_equal(r.nsamples, 1);
		assert_int_equal(r.noffcpu, 0);
		rr_free(&r);
		path = tmp_write(b.p, cut);
		read_replay(path, &r);
		assert_int_equal(r.ret, 0);
		assert_true(r.info.recovered_from_truncated_tail);
		assert_int_equal(r.info.complete_bytes, rec_off);
		rr_free(&r);
		read_tail(path, &r);
		assert_int_equal(r.ret, 0);
		assert_int_equal(r.info.complete_bytes, rec_off);
		assert_int_equal(r.nsamples, 1);
		rr_free(&r);
		tmp_remove(path);
		read_stream(b.p, cut, 3, &r);
		assert_int_equal(r.ret, 0);
		assert_int_equal(r.info.complete_bytes, rec_off);
		rr_free(&r);
	}
	assert_int_equal(expect_valid(b.p, b.len), 1);
	tb_free(&b);
}

/* Samples get the cpu of the last cpu record; a cpu record ends a fast run. */
static void samples_carry_the_cpu_of_the_last_cpu_record(void **state)
{
	static struct xrec x;
	struct tbuf b;
	struct read_result r, rp, st;
	char *path;
	unsigned i;
	static const uint32_t want[] = { SPULSE_NONE, SPULSE_NONE, 7, 7, 7,
					 300, 300, 0 };

	(void)state;
	base(&b);
	for (i = 0; i < 8; i++) {
		if (i == 2 || i == 5 || i == 7) {
			memset(&x, 0, sizeof(x));
			xu(&x, want[i]);
			xcommit(&b, SPULSE_EXT_CPU, &x);
		}
		TB(&b, spulse_enc_sample, 1, 0, 0);
	}
	/* 64 bytes after the last sample, so the fast paths run over all */
	memset(&x, 0, sizeof(x));
	x.n = 64;
	xcommit(&b, 500, &x);
	path = tmp_write(b.p, b.len);
	read_snapshot_mem(b.p, b.len, &r);
	read_replay(path, &rp);
	read_stream(b.p, b.len, 0, &st);
	assert_int_equal(r.nsamples, 8);
	assert_int_equal(r.info.cpu_records, 3);
	for (i = 0; i < 8; i++) {
		assert_int_equal(r.samples[i].cpu, want[i]);
		assert_int_equal(rp.samples[i].cpu, want[i]);
		assert_int_equal(st.samples[i].cpu, want[i]);
	}
	rr_free(&r);
	rr_free(&rp);
	rr_free(&st);
	tmp_remove(path);
	tb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offcpu_references_must_be_defined),
		cmocka_unit_test(offcpu_state_above_8_is_corruption),
		cmocka_unit_test(cpu_numbers_below_65536),
		cmocka_unit_test(runnable_has_no_blocked_time_and_no_waker),
		cmocka_unit_test(interval_durations_must_not_overflow),
		cmocka_unit_test(event_clock_below_0_or_overflowing_is_corruption),
		cmocka_unit_test(sample_and_event_clocks_are_separate),
		cmocka_unit_test(trigger_rules),
		cmocka_unit_test(trigger_text_is_nul_terminated_and_exact),
		cmocka_unit_test(kind_0_and_kind_beyond_u32_are_corruption),
		cmocka_unit_test(length_above_4096_is_corruption_even_when_cut),
		cmocka_unit_test(payload_length_must_match_the_fields),
		cmocka_unit_test(unknown_kinds_are_skipped_and_counted_by_every_reader),
		cmocka_unit_test(cut_payload_is_a_truncated_tail),
		cmocka_unit_test(samples_carry_the_cpu_of_the_last_cpu_record),
	};

	return cmocka_run_group_tests_name("ext_validation", tests, NULL, NULL);
}
