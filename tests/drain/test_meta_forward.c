// SPDX-License-Identifier: MIT
/*
 * Unit tests of meta forwarding (user/drain/meta_forward.c) against a real
 * Recorder: what applies at once, what is held behind a deactivation, and
 * that the spool keeps meta's order. Prints PASS/FAIL lines; exit 1 on any
 * failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spulse/encode.h>

#include "meta_forward.h"

static int failed;
static char path[] = "/tmp/spulse-meta-fwd-XXXXXX";

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s: ", __func__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed++; \
		goto out; \
	} \
} while (0)

static struct spulse_recorder *rec_open(void)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1000,
					  .truncate = true };
	struct spulse_recorder *r;

	if (spulse_recorder_open(path, &o, &r)) {
		printf("recorder open failed\n");
		exit(1);
	}
	return r;
}

static struct spulse_record module_rec(uint32_t id, uint64_t start)
{
	struct spulse_record r = { .tag = SPULSE_TAG_MODULE };

	r.u.module.id = id;
	r.u.module.pid = 7;
	r.u.module.start = start;
	r.u.module.end = start + 0x1000;
	r.u.module.path = "/bin/x";
	r.u.module.path_len = 6;
	return r;
}

/* Tags of the spool's records, in order, as a string of digits. */
static void spool_tags(char *out, size_t len)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_replay *rp;
	struct spulse_record r;
	struct spulse_error err;
	size_t n = 0;

	out[0] = 0;
	if (spulse_replay_open(path, &ro, &rp, &err))
		return;
	while (n + 1 < len && spulse_replay_next_record(rp, &r) == 1)
		out[n++] = (char)('0' + r.tag);
	out[n] = 0;
	spulse_replay_close(rp);
}

/* Before any sample is read, everything applies at once. */
static void test_no_samples_apply_at_once(void)
{
	struct spulse_recorder *rec = rec_open();
	struct drain_meta_fwd m;
	struct spulse_record r = module_rec(0, 0x400000), d = {
		.tag = SPULSE_TAG_MODULE_DEACTIVATE };
	char tags[64];

	drain_meta_init(&m);
	CHECK(!drain_meta_record(&m, rec, &r, false, 0), "module");
	CHECK(!drain_meta_record(&m, rec, &d, false, 0), "deactivate");
	CHECK(m.npend == 0 && m.gen == 3, "npend %zu gen %u", m.npend, m.gen);
	spulse_recorder_close(rec);
	rec = NULL;
	spool_tags(tags, sizeof(tags));
	CHECK(!strcmp(tags, "18"), "spool records %s", tags);
	printf("PASS %s\n", __func__);
out:
	if (rec)
		spulse_recorder_close(rec);
	drain_meta_free(&m);
}

/* A deactivation waits for samples up to its time; later records queue. */
static void test_deactivation_held_in_order(void)
{
	struct spulse_recorder *rec = rec_open();
	struct drain_meta_fwd m;
	struct spulse_record m0 = module_rec(0, 0x400000),
		m1 = module_rec(1, 0x400000),
		pd = { .tag = SPULSE_TAG_PROCESS_DEACTIVATE },
		py = { .tag = SPULSE_TAG_PYTHON };
	char tags[64];

	pd.u.process_deactivate.pid = 7;
	py.u.python.pid = 7;
	py.u.python.state = SPULSE_PYTHON_ENTER;
	drain_meta_init(&m);
	CHECK(!drain_meta_record(&m, rec, &m0, true, 50), "m0");
	CHECK(m.npend == 0 && m.gen == 2, "definition held (gen %u)", m.gen);
	CHECK(!drain_meta_record(&m, rec, &pd, true, 100), "exit");
	CHECK(!drain_meta_record(&m, rec, &m1, true, 100), "m1");
	CHECK(!drain_meta_record(&m, rec, &py, true, 100), "python");
	CHECK(m.npend == 3 && m.gen == 2, "npend %zu gen %u", m.npend, m.gen);
	CHECK(drain_meta_wait_ns(&m) == 100, "wait %lld, want 100",
	      (long long)drain_meta_wait_ns(&m));
	CHECK(!drain_meta_apply_pending(&m, rec, 99) && m.npend == 3,
	      "applied before a sample at 99");
	CHECK(!drain_meta_apply_pending(&m, rec, 100) && m.npend == 3,
	      "applied before a sample at its own time");
	CHECK(!drain_meta_apply_pending(&m, rec, 101) && m.npend == 0,
	      "not applied before a later sample (npend %zu)", m.npend);
	CHECK(drain_meta_wait_ns(&m) == INT64_MAX, "nothing held: wait %lld",
	      (long long)drain_meta_wait_ns(&m));
	CHECK(m.gen == 4, "gen %u", m.gen);
	CHECK(m.mod_map[1] == 1, "meta module 1 -> %u", m.mod_map[1]);
	spulse_recorder_close(rec);
	rec = NULL;
	spool_tags(tags, sizeof(tags));
	CHECK(!strcmp(tags, "1716"), "spool records %s, want 1716", tags);
	printf("PASS %s\n", __func__);
out:
	if (rec)
		spulse_recorder_close(rec);
	drain_meta_free(&m);
}

/*
 * Two held deactivations release one at a time, each at its own time, and
 * drain_meta_wait_ns() names the time each waits for (the drainer cuts its
 * per-CPU groups there).
 */
static void test_two_barriers(void)
{
	struct spulse_recorder *rec = rec_open();
	struct drain_meta_fwd m;
	struct spulse_record m0 = module_rec(0, 0x400000),
		m1 = module_rec(1, 0x500000),
		d0 = { .tag = SPULSE_TAG_MODULE_DEACTIVATE },
		d1 = { .tag = SPULSE_TAG_MODULE_DEACTIVATE };

	d0.u.module_deactivate.module = 0;
	d1.u.module_deactivate.module = 1;
	drain_meta_init(&m);
	CHECK(!drain_meta_record(&m, rec, &m0, true, 0) &&
	      !drain_meta_record(&m, rec, &m1, true, 0), "modules");
	CHECK(!drain_meta_record(&m, rec, &d0, true, 10) &&
	      !drain_meta_record(&m, rec, &d1, true, 20), "deactivations");
	CHECK(drain_meta_wait_ns(&m) == 10, "wait %lld, want 10",
	      (long long)drain_meta_wait_ns(&m));
	CHECK(!drain_meta_apply_pending(&m, rec, 10) && m.npend == 2,
	      "at 10: npend %zu", m.npend);
	CHECK(!drain_meta_apply_pending(&m, rec, 15) && m.npend == 1,
	      "after 15: npend %zu", m.npend);
	CHECK(drain_meta_wait_ns(&m) == 20, "wait %lld, want 20",
	      (long long)drain_meta_wait_ns(&m));
	CHECK(!drain_meta_apply_pending(&m, rec, INT64_MAX) && m.npend == 0,
	      "after all: npend %zu", m.npend);
	printf("PASS %s\n", __func__);
out:
	spulse_recorder_close(rec);
	drain_meta_free(&m);
}

/*
 * A flight-recorder rotation: only the modules active in the spool are
 * defined again, in a new Recorder, and the meta id map names the new ids.
 */
static void test_redefine_active_only(void)
{
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_recorder *rec = rec_open(), *rec2 = NULL;
	struct spulse_recorder_opts o = { .sz = sizeof(o), .start_us = 1000,
					  .truncate = true };
	struct spulse_stream *st = NULL;
	struct spulse_replay *rp = NULL;
	struct spulse_record r;
	struct spulse_error err;
	struct drain_meta_fwd m;
	uint8_t buf[4096];
	size_t len = 0;
	unsigned int nmod = 0;
	char path2[] = "/tmp/spulse-meta-fwd2-XXXXXX";
	uint32_t gen;
	int fd = mkstemp(path2), ret;

	drain_meta_init(&m);
	CHECK(fd >= 0, "mkstemp");
	close(fd);
	len += spulse_enc_header(buf, 1000, 0);
	len += spulse_enc_module(buf + len, 0, 7, 0x400000, 0x401000, 0,
				 "/bin/x", 6, NULL, 0);
	len += spulse_enc_module(buf + len, 1, 7, 0x500000, 0x502000, 0x1000,
				 "/lib/y", 6, (const uint8_t *)"\x01\x02", 2);
	len += spulse_enc_module(buf + len, 2, 8, 0x600000, 0x601000, 0,
				 "/bin/z", 6, NULL, 0);
	len += spulse_enc_module_deactivate(buf + len, 0);
	len += spulse_enc_process_deactivate(buf + len, 8);
	CHECK(!spulse_stream_new(&ro, &st) && !spulse_stream_feed(st, buf, len),
	      "stream");
	while ((ret = spulse_stream_next(st, &r, &err)) == 1)
		CHECK(!drain_meta_record(&m, rec, &r, false, 0), "forward");
	CHECK(ret == 0, "stream error %s", err.msg);
	gen = m.gen;
	CHECK(!spulse_recorder_open(path2, &o, &rec2), "recorder 2");
	CHECK(!drain_meta_redefine(&m, rec2, spulse_stream_defs(st)), "redefine");
	CHECK(m.gen == gen + 1, "gen %u, want %u", m.gen, gen + 1);
	CHECK(m.mod_map[1] == 0, "meta module 1 -> %u, want 0", m.mod_map[1]);
	spulse_recorder_close(rec2);
	rec2 = NULL;
	CHECK(!spulse_replay_open(path2, &ro, &rp, &err), "replay: %s", err.msg);
	while (spulse_replay_next_record(rp, &r) == 1) {
		CHECK(r.tag == SPULSE_TAG_MODULE, "record tag %u", r.tag);
		CHECK(r.u.module.pid == 7 && r.u.module.start == 0x500000 &&
		      r.u.module.end == 0x502000 && r.u.module.file_offset == 0x1000 &&
		      !strcmp(r.u.module.path, "/lib/y") &&
		      r.u.module.build_id_len == 2, "module content");
		nmod++;
	}
	CHECK(nmod == 1, "%u modules redefined, want 1", nmod);
	printf("PASS %s\n", __func__);
out:
	if (rp)
		spulse_replay_close(rp);
	if (rec2)
		spulse_recorder_close(rec2);
	spulse_recorder_close(rec);
	spulse_stream_free(st);
	drain_meta_free(&m);
	unlink(path2);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	test_no_samples_apply_at_once();
	test_deactivation_held_in_order();
	test_two_barriers();
	test_redefine_active_only();
	unlink(path);
	return failed ? 1 : 0;
}
