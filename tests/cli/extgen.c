/* SPDX-License-Identifier: MIT */
/*
 * extgen: a filter in front of tests/cli/spoolgen for the off-CPU tests.
 * It turns the extension lines below into "raw hex=..." lines made with the
 * shared encoders (include/spulse/encode.h) and passes every other line
 * through, so a test writes a spool with known off-CPU content as
 *
 *   extgen <spool.txt | spoolgen >spool.spulse
 *
 * Times are absolute offsets from the profile start (ns); extgen computes
 * the stored deltas (the sample clock and the event clock, FORMAT.md 3.10):
 *
 *   cpu cpu=N
 *   sample t=NS thread= stack=          (sample dt_ns= ... passes through)
 *   offcpu t=NS thread= stack= state=R|S|D|T|t|X|Z|P|I|N cpu_out= cpu_in=
 *          blocked=NS runq=NS [waker=THREAD waker_stack= waker_cpu=]
 *   trigger t=NS reason= seq= value= threshold= wstart= wend= text=S
 *
 * Strings take \xNN escapes. Nothing is validated: the reader under test
 * does that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spulse/encode.h>

#define MAXF 16

struct fields {
	int n;
	char *key[MAXF], *val[MAXF];
};

static const char *get(const struct fields *f, const char *k)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->key[i], k))
			return f->val[i];
	return NULL;
}

static uint64_t num(const struct fields *f, const char *k)
{
	const char *v = get(f, k);

	return v ? strtoull(v, NULL, 0) : 0;
}

static uint32_t state_of(const char *s)
{
	static const char letters[] = "RSDTtXZPI";
	const char *p;

	if (!s)
		return 0;
	if (s[0] && !s[1] && (p = strchr(letters, s[0])))
		return (uint32_t)(p - letters);
	return (uint32_t)strtoul(s, NULL, 0);
}

static size_t unescape(const char *s, char *out)
{
	size_t n = 0;

	while (s && *s) {
		if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) {
			char hex[3] = { s[2], s[3], 0 };

			out[n++] = (char)strtoul(hex, NULL, 16);
			s += 4;
		} else {
			out[n++] = *s++;
		}
	}
	return n;
}

static void put_raw(const uint8_t *b, size_t n)
{
	size_t i;

	fputs("raw hex=", stdout);
	for (i = 0; i < n; i++)
		printf("%02x", b[i]);
	putchar('\n');
}

int main(void)
{
	static uint8_t buf[SPULSE_EXT_REC_MAX + 64];
	static char str[8192];
	int64_t sample_clock = 0, event_clock = 0;
	char line[65536], copy[65536];

	while (fgets(line, sizeof(line), stdin)) {
		struct fields f = { 0 };
		char *save, *tok, *kind;

		memcpy(copy, line, sizeof(copy));
		kind = strtok_r(copy, " \n", &save);
		if (!kind || (strcmp(kind, "cpu") && strcmp(kind, "offcpu") &&
			      strcmp(kind, "trigger") &&
			      strcmp(kind, "sample"))) {
			fputs(line, stdout);
			continue;
		}
		while ((tok = strtok_r(NULL, " \n", &save)) && f.n < MAXF) {
			char *eq = strchr(tok, '=');

			if (!eq)
				continue;
			*eq = 0;
			f.key[f.n] = tok;
			f.val[f.n++] = eq + 1;
		}
		if (!strcmp(kind, "sample")) {
			int64_t t;

			if (!get(&f, "t")) {
				fputs(line, stdout);
				continue;
			}
			t = (int64_t)num(&f, "t");
			printf("sample dt_ns=%lld thread=%llu stack=%llu\n",
			       (long long)(t - sample_clock),
			       (unsigned long long)num(&f, "thread"),
			       (unsigned long long)num(&f, "stack"));
			sample_clock = t;
		} else if (!strcmp(kind, "cpu")) {
			put_raw(buf, spulse_enc_ext_cpu(buf,
					(uint32_t)num(&f, "cpu")));
		} else if (!strcmp(kind, "offcpu")) {
			struct spulse_offcpu_fields o = { 0 };
			int64_t t = (int64_t)num(&f, "t");

			o.dt_ns = t - event_clock;
			event_clock = t;
			o.thread = (uint32_t)num(&f, "thread");
			o.stack = (uint32_t)num(&f, "stack");
			o.state = state_of(get(&f, "state"));
			o.cpu_out = (uint32_t)num(&f, "cpu_out");
			o.cpu_in = (uint32_t)num(&f, "cpu_in");
			o.blocked_ns = num(&f, "blocked");
			o.runq_ns = num(&f, "runq");
			o.has_waker = get(&f, "waker") != NULL;
			o.waker_thread = (uint32_t)num(&f, "waker");
			o.waker_stack = (uint32_t)num(&f, "waker_stack");
			o.waker_cpu = (uint32_t)num(&f, "waker_cpu");
			put_raw(buf, spulse_enc_ext_offcpu(buf, &o));
		} else {
			struct spulse_trigger_fields tr = { 0 };
			int64_t t = (int64_t)num(&f, "t");

			tr.dt_ns = t - event_clock;
			event_clock = t;
			tr.reason = (uint32_t)num(&f, "reason");
			tr.seq = (uint32_t)num(&f, "seq");
			tr.value_ns = num(&f, "value");
			tr.threshold_ns = num(&f, "threshold");
			tr.window_start_ns = num(&f, "wstart");
			tr.window_end_ns = num(&f, "wend");
			tr.text = str;
			tr.text_len = unescape(get(&f, "text"), str);
			put_raw(buf, spulse_enc_ext_trigger(buf, &tr));
		}
	}
	return fflush(stdout) ? 1 : 0;
}
