// SPDX-License-Identifier: MIT
/*
 * Unit tests of the flight recorder helpers (user/drain/flight.c): duration
 * and trigger parsing, option checks, dump names, the ring bound. Prints
 * PASS/FAIL lines; exit 1 on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"

static int failed;

static void result(const char *name, bool ok, const char *detail)
{
	if (ok) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s %s\n", name, detail);
		failed++;
	}
}

static void test_durations(void)
{
	static const struct { const char *s; int ok; uint64_t ns; } v[] = {
		{ "50ms", 1, 50000000 }, { "5ms", 1, 5000000 },
		{ "200us", 1, 200000 }, { "1s", 1, 1000000000 },
		{ "1.5s", 1, 1500000000 }, { "100ns", 1, 100 },
		{ "0.25ms", 1, 250000 }, { "50", 0, 0 }, { "ms", 0, 0 },
		{ "-5ms", 0, 0 }, { "5 ms", 0, 0 }, { "5mss", 0, 0 },
		{ "1e3ms", 0, 0 }, { "", 0, 0 }, { "5m", 0, 0 },
	};
	char d[128] = "";
	size_t i;
	bool ok = true;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t ns = 0;
		int r = drain_parse_duration(v[i].s, &ns);

		if ((r == 0) != v[i].ok || (v[i].ok && ns != v[i].ns)) {
			snprintf(d, sizeof(d), "'%s': ret %d ns %llu", v[i].s, r,
				 (unsigned long long)ns);
			ok = false;
			break;
		}
	}
	result("durations", ok, d);
}

static void test_triggers(void)
{
	struct drain_trigger_spec t;
	char msg[256];
	bool ok;

	ok = !drain_trigger_parse("offcpu>50ms", &t, msg, sizeof(msg)) &&
	     t.reason == SPULSE_TRIGGER_OFFCPU && t.threshold_ns == 50000000 &&
	     !strcmp(t.text, "offcpu>50ms");
	result("trigger-offcpu", ok, t.text);
	ok = !drain_trigger_parse("runq>1500us", &t, msg, sizeof(msg)) &&
	     t.reason == SPULSE_TRIGGER_RUNQ && t.threshold_ns == 1500000 &&
	     !strcmp(t.text, "runq>1500us");
	result("trigger-runq", ok, t.text);
	ok = !drain_trigger_parse("manual", &t, msg, sizeof(msg)) &&
	     t.reason == SPULSE_TRIGGER_MANUAL &&
	     !drain_trigger_parse("signal", &t, msg, sizeof(msg)) &&
	     t.reason == SPULSE_TRIGGER_SIGNAL;
	result("trigger-manual-signal", ok, "");
	msg[0] = 0;
	ok = drain_trigger_parse("offcpu>50", &t, msg, sizeof(msg)) == -EINVAL &&
	     strstr(msg, "unit");
	result("trigger-refuses-no-unit", ok, msg);
	msg[0] = 0;
	ok = drain_trigger_parse("offcpu<50ms", &t, msg, sizeof(msg)) == -EINVAL &&
	     strstr(msg, "want manual, signal");
	result("trigger-refuses-unknown", ok, msg);
	ok = drain_trigger_parse("runq>0us", &t, msg, sizeof(msg)) == -EINVAL;
	result("trigger-refuses-zero", ok, msg);
}

static void test_options(void)
{
	struct drain_flight_opts f;
	char msg[256];
	bool ok;

	drain_flight_defaults(&f);
	ok = !drain_flight_option(&f, DRAIN_OPT_FLIGHT, "10", msg, sizeof(msg)) &&
	     f.seconds_ns == 10000000000ULL &&
	     !drain_flight_option(&f, DRAIN_OPT_POST, "250ms", msg, sizeof(msg)) &&
	     f.post_ns == 250000000 &&
	     !drain_flight_option(&f, DRAIN_OPT_MAX_DUMPS, "3", msg, sizeof(msg)) &&
	     f.max_dumps == 3 &&
	     drain_flight_option(&f, DRAIN_OPT_MAX_DUMPS, "0", msg, sizeof(msg)) &&
	     drain_flight_option(&f, DRAIN_OPT_FLIGHT, "0", msg, sizeof(msg)) &&
	     drain_flight_option(&f, DRAIN_OPT_GEN_BYTES, "100", msg, sizeof(msg));
	result("options", ok, msg);
	drain_flight_defaults(&f);
	ok = drain_flight_check(&f, true, msg, sizeof(msg)) == -EINVAL &&
	     !drain_flight_check(&f, false, msg, sizeof(msg));
	result("options-need-flight", ok, msg);
}

static void test_names_and_bound(void)
{
	static const char *const v[][2] = {
		{ "out.spulse", "out-002.spulse" }, { "dir.d/out", "dir.d/out-002" },
		{ "/a/b.c/x.y.spulse", "/a/b.c/x.y-002.spulse" },
		{ ".hidden", ".hidden-002" }, { "a/.h", "a/.h-002" },
	};
	struct drain_flight_opts f;
	char d[256] = "";
	size_t i;
	bool ok = true;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *n = drain_dump_name(v[i][0], 2);

		if (!n || strcmp(n, v[i][1])) {
			snprintf(d, sizeof(d), "%s -> %s", v[i][0], n ? n : "NULL");
			ok = false;
		}
		free(n);
	}
	result("dump-names", ok, d);
	drain_flight_defaults(&f);
	f.seconds_ns = 10000000000ULL;	/* G = 5 s, post 1 s: 3 + 2 gens */
	f.gen_bytes = 1000000;
	ok = drain_flight_max_gens(&f) == 5 &&
	     drain_flight_bound(&f, 3) ==
	     5ULL * (1000000 + DRAIN_FLIGHT_ITEM_MAX + 3 * SPULSE_MODULE_REC_MAX);
	snprintf(d, sizeof(d), "max_gens %u", drain_flight_max_gens(&f));
	result("ring-bound-formula", ok, d);
}

/*
 * Which spec an off-CPU interval fires; the recorder's pre-exec child
 * (hold pid + hold comm) fires none, the same pid after its exec (another
 * comm) and other threads under that comm do.
 */
static void test_offcpu_spec(void)
{
	struct drain_flight_opts f;
	struct spulse_offcpu iv;
	struct spulse_thread pre = { .pid = 124, .tid = 124,
				     .comm = DRAIN_FLIGHT_HOLD_COMM },
			     post = { .pid = 124, .tid = 124, .comm = "inject" },
			     other = { .pid = 125, .tid = 125,
				       .comm = DRAIN_FLIGHT_HOLD_COMM },
			     thr = { .pid = 124, .tid = 130, .comm = "inject" };
	char msg[128], d[160] = "";
	bool ok = true;

	drain_flight_defaults(&f);
	memset(&iv, 0, sizeof(iv));
	ok &= !drain_trigger_parse("runq>20ms", &f.specs[0], msg, sizeof(msg));
	ok &= !drain_trigger_parse("offcpu>50ms", &f.specs[1], msg, sizeof(msg));
	f.nspecs = 2;

	/* the demo's interval: 50.038 ms runnable */
	iv.runq_ns = 50038000;
	ok &= drain_flight_offcpu_spec(&f, &iv, &post) == 0;	/* no hold */
	f.hold_pid = 124;
	snprintf(f.hold_comm, sizeof(f.hold_comm), "%s", DRAIN_FLIGHT_HOLD_COMM);
	if (drain_flight_offcpu_spec(&f, &iv, &pre) != -1) {
		snprintf(d, sizeof(d), "pre-exec child fired");
		ok = false;
	}
	if (drain_flight_offcpu_spec(&f, &iv, &post) != 0) {
		snprintf(d, sizeof(d), "child after exec did not fire runq>");
		ok = false;
	}
	ok &= drain_flight_offcpu_spec(&f, &iv, &other) == 0;
	ok &= drain_flight_offcpu_spec(&f, &iv, &thr) == 0;
	ok &= drain_flight_offcpu_spec(&f, &iv, NULL) == 0;
	/* blocked only: runq> stays quiet, offcpu> (blocked + runq) fires */
	iv.runq_ns = 1000;
	iv.blocked_ns = 60000000;
	ok &= drain_flight_offcpu_spec(&f, &iv, &post) == 1;
	ok &= drain_flight_offcpu_spec(&f, &iv, &pre) == -1;
	/* strictly above the threshold */
	iv.blocked_ns = 50000000 - 999;
	ok &= drain_flight_offcpu_spec(&f, &iv, &post) == 1;
	iv.blocked_ns = 50000000 - 1000;
	ok &= drain_flight_offcpu_spec(&f, &iv, &post) == -1;
	/* manual / signal specs never fire from an interval */
	f.nspecs = 0;
	ok &= !drain_trigger_parse("manual", &f.specs[0], msg, sizeof(msg));
	f.nspecs = 1;
	iv.blocked_ns = 5000000000ULL;
	ok &= drain_flight_offcpu_spec(&f, &iv, &post) == -1;
	result("offcpu-spec-preexec-hold", ok, d[0] ? d : "a case differed");
}

int main(void)
{
	test_durations();
	test_triggers();
	test_options();
	test_names_and_bound();
	test_offcpu_spec();
	return failed ? 1 : 0;
}
