/* SPDX-License-Identifier: MIT */
/*
 * spoolgen: write spool bytes from `spulse dump`-style text on stdin, using
 * the shared encoders and checking nothing, so tests can craft invalid
 * streams (duplicate ids, gaps, forward references, bad kinds) at known
 * offsets. Lines (fields in any order, missing numbers are 0):
 *
 *   # header start_us=U interval_us=U   (also: header ...)
 *   module id= pid= start= end= file_offset= path= build_id=HEX
 *   frame id= kind=module|user|kernel|truncated|N module= rel= addr=
 *   stack id= parent=root|N frame=
 *   thread id= pid= tid= comm=
 *   sample dt_ns= thread= stack=
 *   python pid= state=enter|leave|N
 *   process-deactivate pid=
 *   module-deactivate module=
 *   cpu cpu=
 *   offcpu dt_ns= thread= stack= state=R|S|..|N cpu_out= cpu_in=
 *          blocked_ns= runq_ns= waker=none|N waker_stack= waker_cpu=
 *   trigger dt_ns= reason=manual|signal|offcpu|runq|N seq= value_ns=
 *          threshold_ns= window_start_ns= window_end_ns= text=
 *   identity source= recording_id=HEX start_us= host= machine_id= boot_id=
 *          kernel=               (kind 4; strings take \xNN)
 *   thread-source thread= source=  (kind 5)
 *   ext kind= len= [hex=HEX]  (payload: the hex, else len zero bytes)
 *   raw hex=HEX            (bytes as given)
 *
 * (the extension lines are spulse dump's, one line each; offcpu/trigger
 * take the stored dt_ns, time_ns= is ignored)
 *
 * sample, offcpu and trigger lines may give t=NS instead of dt_ns=: an
 * absolute offset from the profile start, turned into the delta from the
 * running clock (the sample clock for samples, the event clock for offcpu
 * and trigger, FORMAT.md 3.10), so a test can state its times directly.
 *
 * Other lines starting with '#' are ignored; a leading decimal offset (as
 * printed by dump --offsets) is skipped. Strings take \xNN escapes.
 * Each record's offset is printed to stderr as "OFFSET KIND" with -v.
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

static uint32_t state_num(const char *s)
{
	static const char letters[] = "RSDTtXZPI";
	const char *p;

	if (!s)
		return 0;
	if (s[0] && !s[1] && (p = strchr(letters, s[0])))
		return (uint32_t)(p - letters);
	return (uint32_t)strtoul(s, NULL, 0);
}

static uint32_t reason_num(const char *s)
{
	static const char *const names[] = { "", "manual", "signal", "offcpu",
					     "runq" };
	uint32_t i;

	for (i = 1; s && i < 5; i++)
		if (!strcmp(s, names[i]))
			return i;
	return s ? (uint32_t)strtoul(s, NULL, 0) : 0;
}

static int64_t snum(const struct fields *f, const char *k)
{
	const char *v = get(f, k);

	return v ? strtoll(v, NULL, 0) : 0;
}

/* dt_ns= as given, or t= minus *@clock; *@clock advances either way. */
static int64_t delta(const struct fields *f, int64_t *clock)
{
	int64_t dt = get(f, "t") ? snum(f, "t") - *clock : snum(f, "dt_ns");

	*clock += dt;
	return dt;
}

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	while (s && s[0] && s[1]) {
		char hex[3] = { s[0], s[1], 0 };

		out[n++] = (uint8_t)strtoul(hex, NULL, 16);
		s += 2;
	}
	return n;
}

int main(int argc, char **argv)
{
	static uint8_t buf[SPULSE_MAX_RECORD + 8192];
	static char str[SPULSE_MAX_STRING * 2];
	static uint8_t bid[8192];
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	char line[65536];
	uint64_t off = 0;
	int64_t sample_clock = 0, event_clock = 0;

	while (fgets(line, sizeof(line), stdin)) {
		struct fields f = { 0 };
		char *save, *tok, *kind, *p = line;
		size_t n = 0;

		while (*p >= '0' && *p <= '9')
			p++;
		if (p == line || *p != ' ')
			p = line;
		if (!strncmp(p, " ", 1))
			p++;
		if (!strncmp(p, "# header", 8))
			p += 2;
		else if (p[0] == '#' || p[0] == '\n' || !p[0])
			continue;
		kind = strtok_r(p, " \n", &save);
		while ((tok = strtok_r(NULL, " \n", &save)) && f.n < MAXF) {
			char *eq = strchr(tok, '=');

			if (!eq)
				continue;
			*eq = 0;
			f.key[f.n] = tok;
			f.val[f.n++] = eq + 1;
		}
		if (!strcmp(kind, "header")) {
			n = spulse_enc_header(buf, num(&f, "start_us"),
					      num(&f, "interval_us"));
		} else if (!strcmp(kind, "module")) {
			size_t sl = unescape(get(&f, "path"), str);
			size_t bl = unhex(get(&f, "build_id"), bid);

			n = spulse_enc_module(buf, (uint32_t)num(&f, "id"),
					      (uint32_t)num(&f, "pid"),
					      num(&f, "start"), num(&f, "end"),
					      num(&f, "file_offset"), str, sl,
					      bid, bl);
		} else if (!strcmp(kind, "frame")) {
			const char *k = get(&f, "kind");
			uint32_t id = (uint32_t)num(&f, "id");

			if (!k || !strcmp(k, "module"))
				n = spulse_enc_frame_module(buf, id,
					(uint32_t)num(&f, "module"),
					num(&f, "rel"));
			else if (!strcmp(k, "user"))
				n = spulse_enc_frame_abs(buf, id,
					SPULSE_FRAME_USER, num(&f, "addr"));
			else if (!strcmp(k, "kernel"))
				n = spulse_enc_frame_abs(buf, id,
					SPULSE_FRAME_KERNEL, num(&f, "addr"));
			else if (!strcmp(k, "truncated"))
				n = spulse_enc_frame_truncated(buf, id);
			else
				n = spulse_enc_frame_abs(buf, id,
					(uint8_t)strtoul(k, NULL, 0),
					num(&f, "addr"));
		} else if (!strcmp(kind, "stack")) {
			const char *par = get(&f, "parent");
			uint64_t parent = !par || !strcmp(par, "root") ?
				SPULSE_STACK_ROOT : strtoull(par, NULL, 0) + 1;

			n = spulse_enc_stack(buf, (uint32_t)num(&f, "id"),
					     parent,
					     (uint32_t)num(&f, "frame"));
		} else if (!strcmp(kind, "thread")) {
			size_t sl = unescape(get(&f, "comm"), str);

			n = spulse_enc_thread(buf, (uint32_t)num(&f, "id"),
					      (uint32_t)num(&f, "pid"),
					      (uint32_t)num(&f, "tid"), str, sl);
		} else if (!strcmp(kind, "sample")) {
			n = spulse_enc_sample(buf, delta(&f, &sample_clock),
					      (uint32_t)num(&f, "thread"),
					      (uint32_t)num(&f, "stack"));
		} else if (!strcmp(kind, "python")) {
			const char *st = get(&f, "state");
			uint8_t s = !st ? 0 : !strcmp(st, "enter") ? 1 :
				    !strcmp(st, "leave") ? 0 :
				    (uint8_t)strtoul(st, NULL, 0);

			n = spulse_enc_python(buf, (uint32_t)num(&f, "pid"), s);
		} else if (!strcmp(kind, "process-deactivate")) {
			n = spulse_enc_process_deactivate(buf,
				(uint32_t)num(&f, "pid"));
		} else if (!strcmp(kind, "module-deactivate")) {
			n = spulse_enc_module_deactivate(buf,
				(uint32_t)num(&f, "module"));
		} else if (!strcmp(kind, "cpu")) {
			n = spulse_enc_ext_cpu(buf, (uint32_t)num(&f, "cpu"));
		} else if (!strcmp(kind, "offcpu")) {
			const char *w = get(&f, "waker");
			struct spulse_offcpu_fields o = {
				.dt_ns = delta(&f, &event_clock),
				.thread = (uint32_t)num(&f, "thread"),
				.stack = (uint32_t)num(&f, "stack"),
				.state = state_num(get(&f, "state")),
				.cpu_out = (uint32_t)num(&f, "cpu_out"),
				.cpu_in = (uint32_t)num(&f, "cpu_in"),
				.blocked_ns = num(&f, "blocked_ns"),
				.runq_ns = num(&f, "runq_ns"),
				.has_waker = w && strcmp(w, "none"),
				.waker_thread = (uint32_t)num(&f, "waker"),
				.waker_stack = (uint32_t)num(&f, "waker_stack"),
				.waker_cpu = (uint32_t)num(&f, "waker_cpu"),
			};

			n = spulse_enc_ext_offcpu(buf, &o);
		} else if (!strcmp(kind, "trigger")) {
			struct spulse_trigger_fields t = {
				.dt_ns = delta(&f, &event_clock),
				.reason = reason_num(get(&f, "reason")),
				.seq = (uint32_t)num(&f, "seq"),
				.value_ns = num(&f, "value_ns"),
				.threshold_ns = num(&f, "threshold_ns"),
				.window_start_ns = num(&f, "window_start_ns"),
				.window_end_ns = num(&f, "window_end_ns"),
				.text = str,
			};

			t.text_len = unescape(get(&f, "text"), str);
			n = spulse_enc_ext_trigger(buf, &t);
		} else if (!strcmp(kind, "identity")) {
			static char hs[4][1024];
			uint8_t rid[SPULSE_RECORDING_ID_LEN] = { 0 };
			struct spulse_identity_fields id = {
				.source = (uint32_t)num(&f, "source"),
				.recording_id = rid,
				.start_us = num(&f, "start_us"),
				.host = hs[0], .machine_id = hs[1],
				.boot_id = hs[2], .kernel = hs[3],
			};

			if (get(&f, "recording_id"))
				unhex(get(&f, "recording_id"), rid);
			id.host_len = unescape(get(&f, "host"), hs[0]);
			id.machine_id_len = unescape(get(&f, "machine_id"),
						     hs[1]);
			id.boot_id_len = unescape(get(&f, "boot_id"), hs[2]);
			id.kernel_len = unescape(get(&f, "kernel"), hs[3]);
			n = spulse_enc_ext_identity(buf, &id);
		} else if (!strcmp(kind, "thread-source")) {
			n = spulse_enc_ext_thread_source(buf,
				(uint32_t)num(&f, "thread"),
				(uint32_t)num(&f, "source"));
		} else if (!strcmp(kind, "ext")) {
			size_t len = (size_t)num(&f, "len"), hl;

			if (len > sizeof(bid))
				len = sizeof(bid);
			memset(bid, 0, len);
			hl = unhex(get(&f, "hex"), bid);
			if (get(&f, "hex"))
				len = hl;
			n = spulse_put_ext_hdr(buf, (uint32_t)num(&f, "kind"), len);
			memcpy(buf + n, bid, len);
			n += len;
		} else if (!strcmp(kind, "raw")) {
			n = unhex(get(&f, "hex"), buf);
		} else {
			fprintf(stderr, "spoolgen: unknown line kind '%s'\n",
				kind);
			return 2;
		}
		if (verbose)
			fprintf(stderr, "%llu %s\n", (unsigned long long)off,
				kind);
		fwrite(buf, 1, n, stdout);
		off += n;
	}
	return fflush(stdout) ? 1 : 0;
}
