// SPDX-License-Identifier: MIT
/*
 * unwind_poke: a tiny tool for the unwind-vm suite's hostile cases and the
 * bench: talks to debugfs spulse/unwind directly (include/spulse/unwind.h),
 * bypassing every check the drainer makes (build-id, one table per file).
 *
 *   unwind_poke cache DIR FILE...         build FILE's table into the cache
 *                                         DIR (sut_cache_load); one line each
 *   unwind_poke add UNWIND ID FILE        ADD FILE's table as ID
 *   unwind_poke lie UNWIND ID FILE        ADD a table that lies: FILE's row
 *                                         starts and range, every rule
 *                                         replaced by a hostile one (CFA below
 *                                         SP, huge offsets, BP-relative CFA
 *                                         with a garbage BP, deref, signal
 *                                         frames, PLT) in rotation
 *   unwind_poke map UNWIND PID [ID FILE START END PGOFF]...
 *                                         MAP: PID's whole set; the bias of
 *                                         each entry from FILE's program
 *                                         headers (sut_table_bias); no
 *                                         entries = forget PID
 *   unwind_poke del UNWIND ID             DEL
 *   unwind_poke churn UNWIND PID SECONDS BASE [FILE START END PGOFF]...
 *                                         for SECONDS: ADD every FILE's
 *                                         table (ids BASE, BASE+1, ...), MAP
 *                                         them for PID, wait 5 ms, MAP n=0,
 *                                         DEL them, wait 5 ms; prints rounds
 *   unwind_poke stats UNWIND FILE...      rows and ADD bytes of each FILE's
 *                                         table (for the bench)
 *
 * Numbers: START END PGOFF hex (0x optional), others decimal. Each message
 * prints "op: ok" or "op: <errno text>" (exit 1 on the first refusal,
 * except in churn, which counts refusals).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spulse/unwind.h>

#include "unwind_build.h"

static struct sut_table *load(const char *path)
{
	struct sut_table *t;
	char err[256];

	if (sut_build_file(path, NULL, &t, err, sizeof(err))) {
		fprintf(stderr, "unwind_poke: %s\n", err);
		exit(1);
	}
	return t;
}

static int send(int fd, const void *m, size_t len, const char *what)
{
	ssize_t n = write(fd, m, len);
	int e = n < 0 ? errno : 0;

	if (what)
		printf("%s: %s\n", what, n == (ssize_t)len ? "ok" :
		       strerror(e ? e : EIO));
	return n == (ssize_t)len ? 0 : -(e ? e : EIO);
}

static void hdr(struct spulse_ut_msg *h, uint16_t op, size_t len)
{
	memset(h, 0, sizeof(*h));
	h->magic = SPULSE_UT_MAGIC;
	h->version = SPULSE_UT_VERSION;
	h->op = op;
	h->len = (uint32_t)len;
}

static int add(int fd, uint32_t id, const struct sut_table *t, bool lie,
	       const char *what)
{
	void *msg;
	size_t len;
	int ret;

	if (sut_table_add_msg(t, id, &msg, &len))
		return -ENOMEM;
	if (lie) {
		struct spulse_ut_add *a = (void *)((char *)msg +
						   sizeof(struct spulse_ut_msg));
		struct spulse_ut_row *r = (void *)(a + 1);
		uint32_t i;

		/* each a legal row (the validator's rules) with a false rule */
		for (i = 0; i < a->n_rows; i++) {
			r[i].flags = 0;
			switch (i % 7) {
			case 0:	/* CFA below SP: a loop if followed */
				r[i].kind = SPULSE_UT_CFA_SP;
				r[i].cfa_off = -64;
				r[i].bp_off = -8;
				break;
			case 1:	/* far beyond the stack */
				r[i].kind = SPULSE_UT_CFA_SP;
				r[i].cfa_off = 0x7ffffff0;
				r[i].bp_off = -2048;
				break;
			case 2:	/* from a BP that holds anything */
				r[i].kind = SPULSE_UT_CFA_BP;
				r[i].cfa_off = 16;
				r[i].bp_off = -16;
				break;
			case 3:
				r[i].kind = SPULSE_UT_CFA_DEREF_BP;
				r[i].cfa_off = -8;
				r[i].bp_off = 0;
				break;
			case 4:	/* a signal frame where there is none */
				r[i].kind = SPULSE_UT_SIGNAL;
				r[i].cfa_off = 0;
				r[i].bp_off = 0;
				break;
			case 5:
				r[i].kind = SPULSE_UT_PLT;
				r[i].cfa_off = 8;
				r[i].bp_off = 0;
				break;
			default:	/* zero offset: CFA == SP */
				r[i].kind = SPULSE_UT_CFA_SP;
				r[i].cfa_off = 0;
				r[i].bp_off = 0;
				break;
			}
		}
	}
	ret = send(fd, msg, len, what);
	free(msg);
	return ret;
}

struct ent {
	uint32_t id;
	struct sut_table *t;
	uint64_t start, end, pgoff;
};

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int map(int fd, uint32_t pid, struct ent *e, uint32_t n,
	       const char *what)
{
	size_t len = sizeof(struct spulse_ut_msg) + sizeof(struct spulse_ut_mapset) +
		     n * sizeof(struct spulse_ut_map);
	struct spulse_ut_msg *h = calloc(1, len);
	struct spulse_ut_mapset *ms = (void *)(h + 1);
	struct spulse_ut_map *m = (void *)(ms + 1);
	uint32_t i;
	int ret;

	if (!h)
		return -ENOMEM;
	qsort(e, n, sizeof(*e), cmp_ent);
	hdr(h, SPULSE_UT_OP_MAP, len);
	ms->pid = pid;
	ms->n = n;
	for (i = 0; i < n; i++) {
		m[i].start = e[i].start;
		m[i].end = e[i].end;
		m[i].table_id = e[i].id;
		if (sut_table_bias(e[i].t, e[i].start, e[i].pgoff, &m[i].bias)) {
			fprintf(stderr, "unwind_poke: no segment at 0x%" PRIx64 "\n",
				e[i].pgoff);
			free(h);
			return -EINVAL;
		}
	}
	ret = send(fd, h, len, what);
	free(h);
	return ret;
}

static int del(int fd, uint32_t id, const char *what)
{
	struct {
		struct spulse_ut_msg h;
		struct spulse_ut_del d;
	} m;

	hdr(&m.h, SPULSE_UT_OP_DEL, sizeof(m));
	memset(&m.d, 0, sizeof(m.d));
	m.d.table_id = id;
	return send(fd, &m, sizeof(m), what);
}

static int open_unwind(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t hexnum(const char *s)
{
	return strtoull(s, NULL, 16);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int fd, i, ret = 0;

	if (!strcmp(cmd, "cache") && argc >= 4) {
		for (i = 3; i < argc; i++) {
			struct sut_table *t;
			char err[256];
			bool hit;

			if (sut_cache_load(argv[2], argv[i], NULL, &t, &hit, err,
					   sizeof(err))) {
				printf("%s: %s\n", argv[i], err);
				ret = 1;
				continue;
			}
			printf("%s: %u rows%s\n", argv[i],
			       sut_table_rows(t, NULL, NULL, NULL),
			       hit ? " (cached already)" : "");
			sut_table_free(t);
		}
		return ret;
	}
	if (!strcmp(cmd, "stats") && argc >= 3) {
		for (i = 2; i < argc; i++) {
			struct sut_table *t = load(argv[i]);
			void *msg;
			size_t len;

			if (sut_table_add_msg(t, 1, &msg, &len))
				return 1;
			printf("%s rows %u bytes %zu\n", argv[i],
			       sut_table_rows(t, NULL, NULL, NULL), len);
			free(msg);
			sut_table_free(t);
		}
		return 0;
	}
	if ((!strcmp(cmd, "add") || !strcmp(cmd, "lie")) && argc == 5) {
		struct sut_table *t = load(argv[4]);

		fd = open_unwind(argv[2]);
		ret = add(fd, (uint32_t)strtoul(argv[3], NULL, 10), t,
			  cmd[0] == 'l', cmd);
		sut_table_free(t);
		close(fd);
		return ret ? 1 : 0;
	}
	if (!strcmp(cmd, "del") && argc == 4) {
		fd = open_unwind(argv[2]);
		ret = del(fd, (uint32_t)strtoul(argv[3], NULL, 10), "del");
		close(fd);
		return ret ? 1 : 0;
	}
	if (!strcmp(cmd, "map") && argc >= 4 && (argc - 4) % 5 == 0) {
		uint32_t n = (uint32_t)(argc - 4) / 5, k;
		struct ent *e = calloc(n ? n : 1, sizeof(*e));

		for (k = 0; k < n; k++) {
			char **a = argv + 4 + 5 * k;

			e[k].id = (uint32_t)strtoul(a[0], NULL, 10);
			e[k].t = load(a[1]);
			e[k].start = hexnum(a[2]);
			e[k].end = hexnum(a[3]);
			e[k].pgoff = hexnum(a[4]);
		}
		fd = open_unwind(argv[2]);
		ret = map(fd, (uint32_t)strtoul(argv[3], NULL, 10), e, n, "map");
		for (k = 0; k < n; k++)
			sut_table_free(e[k].t);
		free(e);
		close(fd);
		return ret ? 1 : 0;
	}
	if (!strcmp(cmd, "churn") && argc >= 6 && (argc - 6) % 4 == 0) {
		uint32_t pid = (uint32_t)strtoul(argv[3], NULL, 10);
		double end = now() + atof(argv[4]);
		uint32_t base = (uint32_t)strtoul(argv[5], NULL, 10);
		uint32_t n = (uint32_t)(argc - 6) / 4, k;
		struct ent *e = calloc(n ? n : 1, sizeof(*e));
		unsigned long rounds = 0, refused = 0;
		struct timespec ms5 = { 0, 5000000 };

		for (k = 0; k < n; k++) {
			char **a = argv + 6 + 4 * k;

			e[k].id = base + k;
			e[k].t = load(a[0]);
			e[k].start = hexnum(a[1]);
			e[k].end = hexnum(a[2]);
			e[k].pgoff = hexnum(a[3]);
		}
		fd = open_unwind(argv[2]);
		while (now() < end) {
			for (k = 0; k < n; k++)
				refused += add(fd, e[k].id, e[k].t, false, NULL) != 0;
			refused += map(fd, pid, e, n, NULL) != 0;
			nanosleep(&ms5, NULL);
			if (rounds & 1)	/* odd rounds: DEL while still mapped */
				refused += map(fd, pid, e, 0, NULL) != 0;
			for (k = 0; k < n; k++)
				refused += del(fd, e[k].id, NULL) != 0;
			nanosleep(&ms5, NULL);
			rounds++;
		}
		printf("churn: %lu rounds, %lu refusals\n", rounds, refused);
		for (k = 0; k < n; k++)
			sut_table_free(e[k].t);
		free(e);
		close(fd);
		return 0;
	}
	fprintf(stderr, "usage: unwind_poke cache DIR FILE... | add|lie UNWIND ID FILE |\n"
		"  map UNWIND PID [ID FILE START END PGOFF]... | del UNWIND ID |\n"
		"  churn UNWIND PID SECONDS BASE [FILE START END PGOFF]... |\n"
		"  stats FILE...\n");
	return 2;
}
