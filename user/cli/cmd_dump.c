/* SPDX-License-Identifier: MIT */
/*
 * spulse dump: one stable "kind key=value ..." line per record, in stream
 * order, read with Replay so memory stays bounded on large files.
 */
#include <getopt.h>

#include "cli.h"

static const char dump_help[] =
"NAME\n"
"    spulse dump - print every record of a spool as one line of text\n"
"\n"
"SYNOPSIS\n"
"    spulse dump FILE [--offsets]\n"
"\n"
"DESCRIPTION\n"
"    Prints the header and then one line per record in stream order. Each\n"
"    line starts with the record kind and continues with key=value fields:\n"
"\n"
"      # header start_us=U interval_us=U\n"
"      module id=N pid=N start=0xX end=0xX file_offset=0xX path=S build_id=HEX\n"
"      frame id=N kind=module module=N rel=0xX\n"
"      frame id=N kind=user|kernel addr=0xX\n"
"      frame id=N kind=truncated\n"
"      stack id=N parent=root|N frame=N depth=N\n"
"      thread id=N pid=N tid=N comm=S\n"
"      sample dt_ns=I time_ns=I thread=N stack=N [cpu=N]\n"
"      python pid=N state=enter|leave\n"
"      process-deactivate pid=N\n"
"      module-deactivate module=N\n"
"      cpu cpu=N\n"
"      offcpu dt_ns=I time_ns=I thread=N stack=N state=R|S|D|T|t|X|Z|P|I\n"
"             cpu_out=N cpu_in=N blocked_ns=U runq_ns=U\n"
"             waker=none|N [waker_stack=N waker_cpu=N]      (one line)\n"
"      trigger dt_ns=I time_ns=I reason=manual|signal|offcpu|runq seq=N\n"
"              value_ns=U threshold_ns=U window_start_ns=U window_end_ns=U\n"
"              text=S                                        (one line)\n"
"      identity source=N recording_id=HEX start_us=U host=S machine_id=S\n"
"               boot_id=S kernel=S                       (one line)\n"
"      thread-source thread=N source=N\n"
"      ext kind=N len=N          (an extension kind this reader skips)\n"
"\n"
"    Strings (S) escape bytes outside 0x21..0x7e, '\\' and '=' as \\xNN, so a\n"
"    line always splits on spaces. time_ns is the offset from the profile\n"
"    start; dt_ns the signed delta stored in the record: samples have their\n"
"    own clock, offcpu and trigger records share the event clock. A sample\n"
"    shows cpu= once a cpu record has named its CPU. The text is lossless:\n"
"    tests/cli/spoolgen turns it back into the identical bytes.\n"
"\n"
"    A file cut inside its final record dumps the complete prefix and ends\n"
"    with \"# recovered from truncated tail at offset N\".\n"
"\n"
"OPTIONS\n"
"    --offsets   prefix every line with the byte offset of its record (the\n"
"                header line with 0) and end with \"N # end\", N = the end of\n"
"                the last complete record\n"
"    -h, --help  this text\n"
"\n"
"EXAMPLES\n"
"    spulse dump app.spulse | less\n"
"    spulse dump --offsets app.spulse | grep '^[0-9]* sample'\n"
"\n"
"EXIT STATUS\n"
"    0 dumped (possibly recovered), 1 invalid or unreadable (the error names\n"
"    the byte offset; the lines before it are printed), 2 usage error.\n";

static void put_escaped(const char *s, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '=')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static const char *frame_kind_name(uint8_t kind)
{
	switch (kind) {
	case SPULSE_FRAME_MODULE: return "module";
	case SPULSE_FRAME_USER: return "user";
	case SPULSE_FRAME_KERNEL: return "kernel";
	case SPULSE_FRAME_TRUNCATED: return "truncated";
	}
	return "unknown";
}

static void print_ext(const struct spulse_record *rec, int64_t *last_event)
{
	switch (rec->ext_kind) {
	case SPULSE_EXT_CPU:
		printf("cpu cpu=%u", rec->u.cpu.cpu);
		break;
	case SPULSE_EXT_OFFCPU: {
		const struct spulse_offcpu *iv = &rec->u.offcpu;

		printf("offcpu dt_ns=%lld time_ns=%lld thread=%u stack=%u "
		       "state=%s cpu_out=%u cpu_in=%u blocked_ns=%llu "
		       "runq_ns=%llu waker=",
		       (long long)(iv->time_ns - *last_event),
		       (long long)iv->time_ns, iv->thread, iv->stack,
		       spulse_state_name(iv->state), iv->cpu_out, iv->cpu_in,
		       (unsigned long long)iv->blocked_ns,
		       (unsigned long long)iv->runq_ns);
		if (iv->waker_thread == SPULSE_NONE)
			printf("none");
		else
			printf("%u waker_stack=%u waker_cpu=%u", iv->waker_thread,
			       iv->waker_stack, iv->waker_cpu);
		*last_event = iv->time_ns;
		break;
	}
	case SPULSE_EXT_TRIGGER: {
		const struct spulse_trigger *t = &rec->u.trigger;

		printf("trigger dt_ns=%lld time_ns=%lld reason=%s seq=%u "
		       "value_ns=%llu threshold_ns=%llu window_start_ns=%llu "
		       "window_end_ns=%llu text=",
		       (long long)(t->time_ns - *last_event),
		       (long long)t->time_ns,
		       spulse_trigger_reason_name(t->reason), t->seq,
		       (unsigned long long)t->value_ns,
		       (unsigned long long)t->threshold_ns,
		       (unsigned long long)t->window_start_ns,
		       (unsigned long long)t->window_end_ns);
		put_escaped(t->text, t->text_len);
		*last_event = t->time_ns;
		break;
	}
	case SPULSE_EXT_IDENTITY: {
		const struct spulse_identity *id = &rec->u.identity;
		char hex[33];

		spulse_recording_id_hex(id->recording_id, hex);
		printf("identity source=%u recording_id=%s start_us=%llu host=",
		       id->source, hex, (unsigned long long)id->start_us);
		put_escaped(id->host, id->host_len);
		printf(" machine_id=");
		put_escaped(id->machine_id, id->machine_id_len);
		printf(" boot_id=");
		put_escaped(id->boot_id, id->boot_id_len);
		printf(" kernel=");
		put_escaped(id->kernel, id->kernel_len);
		break;
	}
	case SPULSE_EXT_THREAD_SOURCE:
		printf("thread-source thread=%u source=%u",
		       rec->u.thread_source.thread, rec->u.thread_source.source);
		break;
	default:
		printf("ext kind=%u len=%u", rec->u.ext_unknown.kind,
		       rec->u.ext_unknown.len);
		break;
	}
}

static void print_record(const struct spulse_record *rec, int64_t *last_time,
			 int64_t *last_event)
{
	uint32_t i;

	switch (rec->tag) {
	case SPULSE_TAG_MODULE: {
		const struct spulse_module *m = &rec->u.module;

		printf("module id=%u pid=%u start=0x%llx end=0x%llx "
		       "file_offset=0x%llx path=", m->id, m->pid,
		       (unsigned long long)m->start,
		       (unsigned long long)m->end,
		       (unsigned long long)m->file_offset);
		put_escaped(m->path, m->path_len);
		printf(" build_id=");
		for (i = 0; i < m->build_id_len; i++)
			printf("%02x", m->build_id[i]);
		break;
	}
	case SPULSE_TAG_FRAME: {
		const struct spulse_frame *f = &rec->u.frame;

		printf("frame id=%u kind=%s", f->id, frame_kind_name(f->kind));
		if (f->kind == SPULSE_FRAME_MODULE)
			printf(" module=%u rel=0x%llx", f->module,
			       (unsigned long long)f->addr);
		else if (f->kind != SPULSE_FRAME_TRUNCATED)
			printf(" addr=0x%llx", (unsigned long long)f->addr);
		break;
	}
	case SPULSE_TAG_STACK: {
		const struct spulse_stack *s = &rec->u.stack;

		printf("stack id=%u parent=", s->id);
		if (s->parent == SPULSE_NONE)
			printf("root");
		else
			printf("%u", s->parent);
		printf(" frame=%u depth=%u", s->frame, s->depth);
		break;
	}
	case SPULSE_TAG_THREAD: {
		const struct spulse_thread *t = &rec->u.thread;

		printf("thread id=%u pid=%u tid=%u comm=", t->id, t->pid,
		       t->tid);
		put_escaped(t->comm, t->comm_len);
		break;
	}
	case SPULSE_TAG_SAMPLE: {
		const struct spulse_sample *s = &rec->u.sample;

		printf("sample dt_ns=%lld time_ns=%lld thread=%u stack=%u",
		       (long long)(s->time_ns - *last_time),
		       (long long)s->time_ns, s->thread, s->stack);
		if (s->cpu != SPULSE_NONE)
			printf(" cpu=%u", s->cpu);
		*last_time = s->time_ns;
		break;
	}
	case SPULSE_TAG_PYTHON:
		printf("python pid=%u state=%s", rec->u.python.pid,
		       rec->u.python.state == SPULSE_PYTHON_ENTER ?
		       "enter" : "leave");
		break;
	case SPULSE_TAG_PROCESS_DEACTIVATE:
		printf("process-deactivate pid=%u", rec->u.process_deactivate.pid);
		break;
	case SPULSE_TAG_MODULE_DEACTIVATE:
		printf("module-deactivate module=%u",
		       rec->u.module_deactivate.module);
		break;
	case SPULSE_TAG_EXT:
		print_ext(rec, last_event);
		break;
	default:
		printf("unknown tag=%u", rec->tag);
		break;
	}
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "offsets", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct spulse_read_opts opts = { .sz = sizeof(opts) };
	struct spulse_error err = { 0 };
	const struct spulse_info *info;
	struct spulse_record rec;
	struct spulse_replay *r;
	bool offsets = false;
	int64_t last_time = 0, last_event = 0;
	const char *file;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': offsets = true; break;
		case 'h': fputs(dump_help, stdout); return EXIT_OK;
		default: return cli_usage_error("dump", "bad option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("dump", "expected exactly one FILE");
	file = argv[optind];

	rc = spulse_replay_open(file, &opts, &r, &err);
	if (rc < 0) {
		cli_print_read_error(file, rc, &err);
		return EXIT_INVALID;
	}
	info = spulse_replay_info(r);
	if (offsets)
		printf("0 ");
	printf("# header start_us=%llu interval_us=%llu\n",
	       (unsigned long long)info->start_us,
	       (unsigned long long)info->interval_us);
	while ((rc = spulse_replay_next_record(r, &rec)) > 0) {
		if (offsets)
			printf("%llu ", (unsigned long long)rec.offset);
		print_record(&rec, &last_time, &last_event);
	}
	if (rc < 0) {
		fflush(stdout);
		err.code = rc;
		err.msg[0] = 0;
		cli_print_read_error(file, rc, &err);
		spulse_replay_close(r);
		return EXIT_INVALID;
	}
	if (offsets)
		printf("%llu ", (unsigned long long)info->complete_bytes);
	if (info->recovered_from_truncated_tail)
		printf("# recovered from truncated tail at offset %llu\n",
		       (unsigned long long)info->complete_bytes);
	else if (offsets)
		printf("# end\n");
	spulse_replay_close(r);
	return EXIT_OK;
}
