/* SPDX-License-Identifier: MIT */
/* Sample aggregation shared by report, flame and export. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"

int profile_option(struct profile *p, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (!cli_parse_u64("--pid", arg, &v))
			return EXIT_USAGE;
		if (v > UINT32_MAX) {
			fprintf(stderr, "spulse: --pid %s is not a process id\n",
				arg);
			return EXIT_USAGE;
		}
		p->has_pid = true;
		p->pid = (uint32_t)v;
		return 1;
	case 'k':
		p->kallsyms = arg;
		return 1;
	case 'S':
		p->symfs = arg;
		return 1;
	}
	return 0;
}

int profile_open(struct profile *p, const char *file)
{
	const char *kallsyms = p->kallsyms, *symfs = p->symfs;
	struct spulse_read_opts opts = { .sz = sizeof(opts) };
	struct spulse_error err = { 0 };
	char *def = NULL;
	int rc;

	p->file = file;
	rc = spulse_replay_open(file, &opts, &p->replay, &err);
	if (rc < 0) {
		cli_print_read_error(file, rc, &err);
		return EXIT_INVALID;
	}
	p->defs = spulse_replay_defs(p->replay);
	p->info = spulse_replay_info(p->replay);
	if (p->info->recovered_from_truncated_tail)
		fprintf(stderr, "%s: recovered from truncated tail at offset "
			"%llu\n", file,
			(unsigned long long)p->info->complete_bytes);
	if (!kallsyms)
		kallsyms = def = symbolizer_default_kallsyms(file);
	p->sym = symbolizer_new(p->defs, kallsyms);
	free(def);
	if (!p->sym) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	symbolizer_set_symfs(p->sym, symfs);
	return EXIT_OK;
}

bool profile_wants(const struct profile *p, const struct spulse_sample *s)
{
	struct spulse_thread t;

	if (!p->has_pid)
		return true;
	if (spulse_defs_thread(p->defs, s->thread, &t) < 0)
		return false;
	return t.pid == p->pid;
}

int profile_count(struct profile *p)
{
	struct spulse_sample s;
	int rc;

	p->nstacks = spulse_defs_count(p->defs, SPULSE_TAG_STACK);
	p->stack_count = calloc(p->nstacks ? p->nstacks : 1,
				sizeof(*p->stack_count));
	if (!p->stack_count) {
		fprintf(stderr, "spulse: out of memory\n");
		return EXIT_INVALID;
	}
	if (p->has_pid) {
		/* cache the pid test per thread id */
		uint32_t nt = spulse_defs_count(p->defs, SPULSE_TAG_THREAD), i;
		uint8_t *want = calloc(nt ? nt : 1, 1);

		if (!want)
			return EXIT_INVALID;
		for (i = 0; i < nt; i++) {
			struct spulse_thread t;

			want[i] = spulse_defs_thread(p->defs, i, &t) == 0 &&
				  t.pid == p->pid;
		}
		while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
			if (s.thread < nt && want[s.thread] &&
			    s.stack < p->nstacks) {
				p->stack_count[s.stack]++;
				p->total++;
			}
		}
		free(want);
	} else {
		while ((rc = spulse_replay_next_sample(p->replay, &s)) > 0) {
			if (s.stack < p->nstacks) {
				p->stack_count[s.stack]++;
				p->total++;
			}
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", p->file,
			strerror(-rc));
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

int profile_stack_frames(const struct profile *p, uint32_t leaf,
			 uint32_t *frames)
{
	uint32_t tmp[SPULSE_MAX_DEPTH], id = leaf;
	int n = 0, i;

	while (id != SPULSE_NONE) {
		struct spulse_stack st;

		if (n == SPULSE_MAX_DEPTH ||
		    spulse_defs_stack(p->defs, id, &st) < 0)
			return -1;
		tmp[n++] = st.frame;
		id = st.parent;
	}
	for (i = 0; i < n; i++)
		frames[i] = tmp[n - 1 - i];
	return n;
}

void profile_close(struct profile *p)
{
	symbolizer_free(p->sym);
	free(p->stack_count);
	if (p->replay)
		spulse_replay_close(p->replay);
	memset(p, 0, sizeof(*p));
}
