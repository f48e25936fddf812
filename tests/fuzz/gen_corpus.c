// SPDX-License-Identifier: MIT
/*
 * Writes the fuzz seed corpus into DIR: small valid spools written through
 * the Recorder (several processes, modules that come and go, kernel + user
 * frames, truncated stacks, python records; variants 3 and 4 add cpu
 * records, off-CPU intervals with and without wakers, triggers and unknown
 * extension kinds), truncated copies, copies with one corrupted byte, and
 * hand-built spools breaking single rules (extension rules included).
 * usage: gen_corpus DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libspulse.h>
#include <spulse/encode.h>

static const char *dir;

static void put(const char *name, const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(p, 1, len, f) != len) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static uint8_t *record_small(int variant, size_t *len)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1000,
					  .interval_us = 1000, .truncate = true };
	char tmp[] = "/tmp/spulse-corpus-XXXXXX";
	struct spulse_recorder *r;
	uint32_t th[2], m, fr[6], st, tr;
	uint8_t *buf;
	FILE *f;
	int fd = mkstemp(tmp), i;

	if (fd < 0 || spulse_recorder_fdopen(fd, &o, &r))
		exit(1);
	if (variant >= 3) {
		static const struct spulse_identity ida = {
			.recording_id = { 0x12, 0x34 }, .start_us = 1000,
			.host = "web1", .machine_id = "m", .boot_id = "b",
			.kernel = "6.1",
		}, idb = {
			.start_us = 900, .host = "db2", .kernel = "5.15",
		};

		spulse_rec_identity(r, &ida, NULL);
		spulse_rec_identity(r, &idb, NULL);
	}
	spulse_rec_module(r, 10, 0x400000, 0x410000, 0, "/bin/a",
			  (const uint8_t *)"\xab\xcd", 2, &m);
	spulse_rec_thread(r, 10, 10, "a", &th[0]);
	spulse_rec_thread(r, 10, 11, "a-worker", &th[1]);
	if (variant >= 3)
		spulse_rec_thread_source(r, th[1], 1);
	spulse_rec_frame_truncated(r, &tr);
	for (i = 0; i < 6 + variant * 4; i++) {
		int d = 0;

		if (i % 5 == 4)
			fr[d++] = tr;
		spulse_rec_frame_addr(r, 10, 0x401000, false, true, &fr[d++]);
		spulse_rec_frame_addr(r, 10, 0x402000 + (i % 3) * 8, false, true,
				      &fr[d++]);
		spulse_rec_frame_addr(r, 10, 0x7f0000001000ULL + i, false, false,
				      &fr[d++]);
		if (i & 1)
			spulse_rec_frame_addr(r, 10, 0xffffffff81000100ULL, true,
					      false, &fr[d++]);
		spulse_rec_stack_frames(r, fr, (size_t)d, &st);
		if (variant < 3) {
			spulse_rec_sample(r, (int64_t)i * 1000000 - (i % 3) * 1000,
					  th[i & 1], st);
		} else {
			struct spulse_offcpu iv = {
				.time_ns = (int64_t)i * 900000 - (i % 4) * 300000,
				.thread = th[i & 1], .stack = st,
				.state = (uint8_t)(i % 3), .cpu_out = (uint32_t)i % 2,
				.cpu_in = i % 5 ? 1 : 300, .runq_ns = 1000 + i,
				.waker_thread = SPULSE_NONE,
				.waker_stack = SPULSE_NONE,
				.waker_cpu = SPULSE_NONE,
			};

			if (iv.time_ns < 0)
				iv.time_ns = 0;
			if (iv.state != SPULSE_STATE_RUNNABLE) {
				iv.blocked_ns = 50000 * (uint64_t)i;
				if (i % 4) {
					iv.waker_thread = th[!(i & 1)];
					iv.waker_stack = st;
					iv.waker_cpu = 1;
				}
			}
			spulse_rec_sample_cpu(r, (int64_t)i * 1000000, th[i & 1],
					      st, (uint32_t)(i / 3) % 3);
			spulse_rec_offcpu(r, &iv);
			if (i == 2 || i == 9) {
				struct spulse_trigger t = {
					.time_ns = (int64_t)i * 1000000,
					.reason = (uint8_t)(i == 2 ? 1 : 3),
					.seq = i == 2 ? 0 : 1,
					.value_ns = i == 2 ? 0 : 9000000,
					.threshold_ns = i == 2 ? 0 : 5000000,
					.window_end_ns = i == 2 ? 0 : 10000000,
					.text = "offcpu>5ms", .text_len = 10,
				};

				spulse_rec_trigger(r, &t);
			}
			if (i == 5)
				spulse_rec_ext_raw(r, 42, "\x01\x02\x03", 3);
		}
		if (i == 3) {
			spulse_rec_python(r, 10, true);
			spulse_rec_module_deactivate(r, m);
			spulse_rec_module(r, 10, 0x400000, 0x410000, 0, "/bin/a",
					  NULL, 0, &m);
		}
		if (i == 7 && variant) {
			spulse_rec_process_deactivate(r, 10);
			spulse_rec_python(r, 10, false);
		}
	}
	spulse_recorder_close(r);
	f = fopen(tmp, "rb");
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len);
	if (fread(buf, 1, *len, f) != *len)
		exit(1);
	fclose(f);
	unlink(tmp);
	return buf;
}

/* An interval after the @n bytes of @b (state, blocked, thread, waker, dt). */
static void ext_iv(uint8_t *b, size_t n, const char *name, uint32_t state,
		   uint64_t blocked, uint32_t thread, bool waker, int64_t dt)
{
	struct spulse_offcpu_fields f = {
		.dt_ns = dt, .thread = thread, .state = state,
		.cpu_out = 1, .cpu_in = 2, .blocked_ns = blocked, .runq_ns = 7,
		.has_waker = waker, .waker_cpu = 1,
	};
	size_t i = n + spulse_enc_ext_offcpu(b + n, &f);

	put(name, b, i);
}

/*
 * An identity with source @source after the prefix; @ts: 0 none, 1 a
 * thread-source record, 2 two for thread 0, 3 one naming source 1.
 */
static void ext_ident(uint8_t *b, size_t n, const char *name, uint32_t source,
		      int ts)
{
	static const uint8_t rid[16] = { 1, 2, 3 };
	struct spulse_identity_fields f = {
		.source = source, .recording_id = rid, .start_us = 1,
		.host = "h", .host_len = 1, .kernel = "k", .kernel_len = 1,
		.machine_id = "", .boot_id = "",
	};
	size_t i = n + spulse_enc_ext_identity(b + n, &f);

	if (ts)
		i += spulse_enc_ext_thread_source(b + i, 0, ts == 3 ? 1 : 0);
	if (ts == 2)
		i += spulse_enc_ext_thread_source(b + i, 0, 0);
	i += spulse_enc_sample(b + i, 5, 0, 0);
	put(name, b, i);
}

static void ext_trig(uint8_t *b, size_t n, const char *name, uint32_t reason,
		     uint64_t ws, uint64_t we)
{
	struct spulse_trigger_fields f = {
		.dt_ns = 10, .reason = reason, .seq = 1, .value_ns = 9,
		.threshold_ns = 5, .window_start_ns = ws, .window_end_ns = we,
		.text = "why", .text_len = 3,
	};
	size_t i = n + spulse_enc_ext_trigger(b + n, &f);

	put(name, b, i);
}

int main(int argc, char **argv)
{
	uint8_t b[256], *v;
	size_t len, n, i;
	char name[64];
	int variant;

	if (argc != 2)
		return 2;
	dir = argv[1];
	for (variant = 0; variant < 5; variant++) {
		v = record_small(variant, &len);
		snprintf(name, sizeof(name), "valid-%d", variant);
		put(name, v, len);
		for (i = 1; i < 5; i++) {
			snprintf(name, sizeof(name), "cut-%d-%zu", variant, i);
			put(name, v, len * i / 5 + (size_t)variant);
		}
		for (i = 0; i < 4; i++) {
			size_t at = 9 + (len - 9) * (i + 1) / 5;

			v[at] ^= (uint8_t)(0x41 << i);
			snprintf(name, sizeof(name), "flip-%d-%zu", variant, i);
			put(name, v, len);
			v[at] ^= (uint8_t)(0x41 << i);
		}
		free(v);
	}
	put("empty", b, 0);
	n = spulse_enc_header(b, 1, 1);
	put("header-only", b, n);
	put("header-cut", b, 5);
	memcpy(b, "SPULSE2", 8);
	put("bad-magic", b, n);
	/* single-rule violations after a header */
	n = spulse_enc_header(b, 1, 0);
	i = n + spulse_enc_sample(b + n, 1, 0, 0);
	put("forward-ref", b, i);
	i = n + spulse_enc_frame_abs(b + n, 3, SPULSE_FRAME_USER, 1);
	put("gap", b, i);
	i = n + spulse_enc_frame_truncated(b + n, 0);
	i += spulse_enc_stack(b + i, 0, 0, 0);
	i += spulse_enc_stack(b + i, 1, 1, 0);
	put("trunc-not-root", b, i);
	i = n + spulse_enc_module(b + n, 0, 1, 0x1000, 0x2000, 0, "m", 1, NULL, 0);
	i += spulse_enc_module_deactivate(b + i, 0);
	i += spulse_enc_frame_module(b + i, 0, 0, 0x10);
	put("deactivated", b, i);
	b[n] = 0x2a;
	put("bad-tag", b, n + 1);
	b[n] = SPULSE_TAG_PYTHON;
	b[n + 1] = 0x80;
	b[n + 2] = 0x00;
	b[n + 3] = 1;
	put("overlong", b, n + 4);
	/* extension records after header + thread 0 + frame 0 + stack 0 */
	n = spulse_enc_header(b, 1, 0);
	n += spulse_enc_thread(b + n, 0, 1, 1, "t", 1);
	n += spulse_enc_frame_abs(b + n, 0, SPULSE_FRAME_KERNEL, 0xffff0000);
	n += spulse_enc_stack(b + n, 0, 0, 0);
	i = n + spulse_enc_ext_cpu(b + n, 3);
	i += spulse_enc_sample(b + i, 5, 0, 0);
	put("ext-cpu", b, i);
	i = n + spulse_enc_ext_cpu(b + n, SPULSE_MAX_CPU);
	put("ext-cpu-range", b, i);
	ext_iv(b, n, "ext-offcpu", 1, 0, 0, true, 100);
	ext_iv(b, n, "ext-offcpu-state", 9, 10, 0, true, 100);
	ext_iv(b, n, "ext-offcpu-runnable-waker", 0, 0, 0, true, 100);
	ext_iv(b, n, "ext-offcpu-forward", 1, 0, 5, false, 100);
	ext_iv(b, n, "ext-offcpu-clock", 1, 0, 0, false, -100);
	ext_trig(b, n, "ext-trigger", 2, 1, 2);
	ext_trig(b, n, "ext-trigger-reason", 5, 1, 2);
	ext_trig(b, n, "ext-trigger-window", 3, 2, 1);
	b[n] = SPULSE_TAG_EXT;
	b[n + 1] = 0;			/* kind 0 */
	b[n + 2] = 0;
	put("ext-kind0", b, n + 3);
	b[n + 1] = 77;			/* unknown kind, len 4097 */
	b[n + 2] = 0x81;
	b[n + 3] = 0x20;
	put("ext-toolong", b, n + 4);
	b[n + 2] = 3;			/* unknown kind, 3 bytes, skipped */
	memset(b + n + 3, SPULSE_TAG_EXT, 3);
	put("ext-unknown", b, n + 6);
	b[n + 1] = SPULSE_EXT_CPU;	/* cpu with a byte left over */
	b[n + 2] = 2;
	b[n + 3] = 1;
	b[n + 4] = 0;
	put("ext-leftover", b, n + 5);
	ext_ident(b, n, "ext-identity", 0, 0);
	ext_ident(b, n, "ext-identity-order", 1, 0);
	ext_ident(b, n, "ext-thread-source", 0, 1);
	ext_ident(b, n, "ext-thread-source-twice", 0, 2);
	ext_ident(b, n, "ext-thread-source-undefined", 0, 3);
	return 0;
}
