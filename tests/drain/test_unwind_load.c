// SPDX-License-Identifier: MIT
/*
 * Unit tests of the drainer's unwind-table loader (user/drain/unwind_load.c)
 * through its API, with a regular file standing in for debugfs
 * spulse/unwind: every message written is parsed back here and checked.
 * The ELF files are this test binary (/proc/self/exe) and libc. One line
 * per test: "PASS name" or "FAIL name: why".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spulse/format.h>
#include <spulse/unwind.h>

#include "unwind_build.h"
#include "unwind_load.h"

static int failures;
static char dir[] = "/tmp/spulse-uwl.XXXXXX";
static char upath[4096], exe[4096];
static const char *libc_path = "/lib/x86_64-linux-gnu/libc.so.6";

struct parsed {
	unsigned int adds, maps, dels;
	uint32_t add_ids[16];
	struct { uint32_t pid, n; struct spulse_ut_map m[8]; } map[16];
};

static void fail(const char *name, const char *why)
{
	printf("FAIL %s: %s\n", name, why);
	failures++;
}

static void pass(const char *name)
{
	printf("PASS %s\n", name);
}

static int parse(struct parsed *p)
{
	static uint8_t buf[8 << 20];
	size_t n, off = 0;
	FILE *f = fopen(upath, "rb");

	memset(p, 0, sizeof(*p));
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + sizeof(struct spulse_ut_msg) <= n) {
		struct spulse_ut_msg h;

		memcpy(&h, buf + off, sizeof(h));
		if (h.magic != SPULSE_UT_MAGIC || h.len < sizeof(h) ||
		    h.len > n - off)
			return -1;
		if (h.op == SPULSE_UT_OP_ADD && p->adds < 16) {
			struct spulse_ut_add a;

			memcpy(&a, buf + off + sizeof(h), sizeof(a));
			p->add_ids[p->adds++] = a.table_id;
		} else if (h.op == SPULSE_UT_OP_MAP && p->maps < 16) {
			struct spulse_ut_mapset ms;
			uint32_t i;

			memcpy(&ms, buf + off + sizeof(h), sizeof(ms));
			p->map[p->maps].pid = ms.pid;
			p->map[p->maps].n = ms.n;
			for (i = 0; i < ms.n && i < 8; i++)
				memcpy(&p->map[p->maps].m[i], buf + off + sizeof(h) +
				       sizeof(ms) + i * sizeof(struct spulse_ut_map),
				       sizeof(struct spulse_ut_map));
			p->maps++;
		} else if (h.op == SPULSE_UT_OP_DEL) {
			p->dels++;
		}
		off += h.len;
	}
	return off == n ? 0 : -1;
}

static void reset(void)
{
	int fd = open(upath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0)
		close(fd);
}

static struct drain_unwind *start(unsigned int max_files, uint32_t skip_pid,
				  FILE *log)
{
	struct drain_unwind_opts o = { .sz = sizeof(o) };
	struct drain_unwind *u = NULL;

	reset();
	o.path = upath;
	o.cache_dir = "";
	o.log = log;
	o.max_files = max_files;
	o.skip_pid = skip_pid;
	if (drain_unwind_open(&o, &u))
		return NULL;
	return u;
}

static void module(struct drain_unwind *u, uint32_t id, uint32_t pid,
		   uint64_t start, uint64_t end, uint64_t off, const char *path)
{
	struct spulse_record r;

	memset(&r, 0, sizeof(r));
	r.tag = SPULSE_TAG_MODULE;
	r.u.module.id = id;
	r.u.module.pid = pid;
	r.u.module.start = start;
	r.u.module.end = end;
	r.u.module.file_offset = off;
	r.u.module.path = path;
	r.u.module.path_len = (uint32_t)strlen(path);
	drain_unwind_meta(u, &r);
}

/* the text segment's file offset of @path (from the built table's bias) */
static uint64_t text_off(const char *path)
{
	struct sut_table *t;
	uint64_t lo = 0, bias;
	char err[256];

	if (sut_build_file(path, NULL, &t, err, sizeof(err)))
		return 0;
	sut_table_rows(t, NULL, &lo, NULL);
	/* a page-aligned offset that some PT_LOAD covers */
	if (sut_table_bias(t, 0x100000000ull, lo & ~0xfffull, &bias))
		lo = 0;
	sut_table_free(t);
	return lo & ~0xfffull;
}

static void test_overlapping_mapping_dropped(void)
{
	const char *name = "overlapping-mapping-dropped-first-kept";
	struct drain_unwind *u = start(0, 0, stderr);
	uint64_t off = text_off(exe), loff = text_off(libc_path);
	struct parsed p;

	if (!u)
		return fail(name, "open");
	module(u, 0, 7, 0x500000000000ull, 0x500000100000ull, off, exe);
	/* libc over the same range: meta's view would be stale */
	module(u, 1, 7, 0x500000080000ull, 0x500000200000ull, loff, libc_path);
	drain_unwind_wait(u, 30000);
	drain_unwind_close(u);
	if (parse(&p))
		return fail(name, "unparsable messages");
	if (p.adds != 2 || !p.maps || p.map[p.maps - 1].n != 1 ||
	    p.map[p.maps - 1].m[0].start != 0x500000000000ull)
		return fail(name, "want 2 ADDs and a last MAP with only the first");
	pass(name);
}

static void test_max_files(void)
{
	const char *name = "max-files-counts-the-rest-failed-said-once";
	char *log = NULL;
	size_t loglen = 0;
	FILE *lf = open_memstream(&log, &loglen);
	struct drain_unwind *u = start(1, 0, lf);
	struct drain_unwind_stats st;
	int said = 0;
	char *s;

	if (!u)
		return fail(name, "open");
	module(u, 0, 7, 0x500000000000ull, 0x500000100000ull, text_off(exe), exe);
	module(u, 1, 7, 0x510000000000ull, 0x510000100000ull,
	       text_off(libc_path), libc_path);
	module(u, 2, 8, 0x520000000000ull, 0x520000100000ull,
	       text_off(libc_path), "/lib/x86_64-linux-gnu/libm.so.6");
	drain_unwind_wait(u, 30000);
	drain_unwind_get_stats(u, &st);
	drain_unwind_close(u);
	fclose(lf);
	for (s = log; s && (s = strstr(s, "more than 1 files")); s++)
		said++;
	if (st.loaded != 1 || st.failed != 2 || said != 1)
		fail(name, log ? log : "no log");
	else
		pass(name);
	free(log);
}

/*
 * [vdso]: the running kernel's image (this process's own) becomes one
 * table, ADDed once and mapped for every process with bias = start (the
 * image's p_vaddr equals its file offset); a record whose build-id is not
 * the image's gets nothing.
 */
static void test_vdso_table(void)
{
	const char *name = "vdso-table-once-for-every-process";
	struct drain_unwind *u = start(0, 0, stderr);
	struct drain_unwind_stats st;
	struct parsed p;

	if (!u)
		return fail(name, "open");
	module(u, 0, 7, 0x7fff00000000ull, 0x7fff00002000ull, 0, "[vdso]");
	module(u, 1, 8, 0x7ffe00000000ull, 0x7ffe00002000ull, 0, "[vdso]");
	module(u, 2, 9, 0x7ffd00000000ull, 0x7ffd00002000ull, 0, "[vvar]");
	drain_unwind_wait(u, 30000);
	drain_unwind_get_stats(u, &st);
	drain_unwind_close(u);
	if (parse(&p) || p.adds != 1 || p.maps != 2 || st.skipped != 1 ||
	    st.loaded != 1)
		return fail(name, "want 1 ADD, 2 MAPs, [vvar] skipped");
	if (p.map[0].n != 1 || p.map[1].n != 1 ||
	    p.map[0].m[0].table_id != p.add_ids[0] ||
	    p.map[1].m[0].table_id != p.add_ids[0] ||
	    p.map[0].m[0].bias != p.map[0].m[0].start ||
	    p.map[1].m[0].bias != p.map[1].m[0].start)
		return fail(name, "want both mapped to the one table, bias = start");
	pass(name);
}

/* the first executable file mapping of this process */
static int self_exec_map(uint64_t *s, uint64_t *e, uint64_t *off, char *path,
			 size_t plen)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	int ok = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, o;
		char perm[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perm,
			   &o, &n) < 4 || !n || !strchr(perm, 'x') ||
		    line[n] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, plen, "%s", line + n);
		*s = a;
		*e = b;
		*off = o;
		ok = 0;
		break;
	}
	fclose(f);
	return ok;
}

static void test_skip_pid(void)
{
	const char *name = "skip-pid-ignores-only-the-fork-s-own-mappings";
	struct drain_unwind *u = start(0, 4242, stderr);
	struct drain_unwind_stats st;
	uint64_t s, e, off;
	char path[4096];
	struct parsed p;

	if (!u || self_exec_map(&s, &e, &off, path, sizeof(path)))
		return fail(name, "setup");
	module(u, 0, 4242, s, e, off, path);		/* our own: ignored */
	module(u, 1, 4243, s, e, off, path);		/* another pid: used */
	module(u, 2, 4242, s + 0x100000000ull, e + 0x100000000ull, off, path);
	drain_unwind_wait(u, 30000);
	drain_unwind_get_stats(u, &st);
	drain_unwind_close(u);
	if (parse(&p) || p.adds != 1 || st.loaded != 1)
		return fail(name, "want one table");
	for (unsigned int i = 0; i < p.maps; i++)
		if (p.map[i].pid == 4242 &&
		    (p.map[i].n != 1 ||
		     p.map[i].m[0].start != s + 0x100000000ull))
			return fail(name, "pid 4242 mapped its pre-exec copy");
	pass(name);
}

/*
 * Its exec ends the skipping: after the retirement of the pre-exec image
 * (process deactivation), the same start, end and path are the command's
 * (without ASLR the command's libc lands where ours is).
 */
static void test_skip_pid_until_exec(void)
{
	const char *name = "skip-pid-ends-at-the-fork-s-exec";
	struct drain_unwind *u = start(0, 4242, stderr);
	struct drain_unwind_stats st;
	struct spulse_record r;
	uint64_t s, e, off;
	char path[4096];
	struct parsed p;
	bool mapped = false;

	if (!u || self_exec_map(&s, &e, &off, path, sizeof(path)))
		return fail(name, "setup");
	module(u, 0, 4242, s, e, off, path);		/* pre-exec: ignored */
	memset(&r, 0, sizeof(r));
	r.tag = SPULSE_TAG_PROCESS_DEACTIVATE;
	r.u.process_deactivate.pid = 4242;
	drain_unwind_meta(u, &r);			/* the exec */
	module(u, 1, 4242, s, e, off, path);		/* the command's */
	drain_unwind_wait(u, 30000);
	drain_unwind_get_stats(u, &st);
	drain_unwind_close(u);
	if (parse(&p) || p.adds != 1 || st.loaded != 1)
		return fail(name, "want one table");
	for (unsigned int i = 0; i < p.maps; i++)
		if (p.map[i].pid == 4242 && p.map[i].n == 1 &&
		    p.map[i].m[0].start == s)
			mapped = true;
	if (!mapped)
		return fail(name, "the command's mapping was skipped");
	pass(name);
}

/*
 * Preload + MAP before the start (spulse record's held command): our own
 * executable mappings and the vDSO are MAPped from /proc/self/maps onto
 * preloaded tables; the loader that adopts them ADDs nothing again, and a
 * partial meta view (one module of ours) never shrinks the set.
 */
static void test_preload_map_seeds(void)
{
	const char *name = "preload-map-adopted-partial-meta-keeps-the-set";
	struct drain_unwind_opts o = { .sz = sizeof(o) };
	struct drain_unwind_preload_stats ps;
	struct drain_unwind *u = NULL;
	uint64_t s, e, off;
	char path[4096];
	const char *files[1];
	struct parsed p;
	int sent;

	reset();
	if (self_exec_map(&s, &e, &off, path, sizeof(path)))
		return fail(name, "setup");
	files[0] = path;
	o.path = upath;
	o.cache_dir = "";
	o.log = stderr;
	if (drain_unwind_preload(&o, files, 1, true, 0, &ps) || ps.loaded != 2)
		return fail(name, "preload");
	sent = drain_unwind_preload_map((uint32_t)getpid());
	if (sent < 2)
		return fail(name, "preload_map sent fewer than 2 mappings");
	if (drain_unwind_open(&o, &u))
		return fail(name, "open");
	module(u, 0, (uint32_t)getpid(), s, e, off, path);
	drain_unwind_wait(u, 30000);
	drain_unwind_close(u);
	if (parse(&p) || p.adds != 2 || p.maps < 2 ||
	    p.map[0].n != (uint32_t)sent || p.map[p.maps - 1].n != (uint32_t)sent)
	{
		char d[160];

		snprintf(d, sizeof(d), "want 2 ADDs and every MAP with the whole set (%d): adds %u maps %u first n %u last n %u", sent, p.adds, p.maps, p.maps ? p.map[0].n : 0, p.maps ? p.map[p.maps - 1].n : 0);
		return fail(name, d);
	}
	pass(name);
}

static void test_open_missing(void)
{
	const char *name = "open-without-debugfs-file-is-enoent";
	struct drain_unwind_opts o = { .sz = sizeof(o) };
	struct drain_unwind *u = NULL;
	char p[4200];

	snprintf(p, sizeof(p), "%s/none", dir);
	o.path = p;
	o.skip_pid = 4242;	/* (reads our maps: must not leak; ASan) */
	if (drain_unwind_open(&o, &u) != -ENOENT || u)
		return fail(name, "want -ENOENT");
	pass(name);
}

static void test_close_dels(void)
{
	const char *name = "close-dels-each-added-table-once";
	struct drain_unwind *u = start(0, 0, stderr);
	struct parsed p;

	if (!u)
		return fail(name, "open");
	module(u, 0, 7, 0x500000000000ull, 0x500000100000ull, text_off(exe), exe);
	module(u, 1, 8, 0x510000000000ull, 0x510000100000ull, text_off(exe), exe);
	drain_unwind_wait(u, 30000);
	drain_unwind_close(u);
	if (parse(&p) || p.adds != 1 || p.dels != 1)
		return fail(name, "want 1 ADD (same file twice) and 1 DEL");
	pass(name);
}

int main(void)
{
	ssize_t n;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(upath, sizeof(upath), "%s/unwind", dir);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 1;
	exe[n] = 0;
	test_overlapping_mapping_dropped();
	test_max_files();
	test_vdso_table();
	test_skip_pid();
	test_skip_pid_until_exec();
	test_preload_map_seeds();
	test_open_missing();
	test_close_dels();
	unlink(upath);
	rmdir(dir);
	return failures ? 1 : 0;
}
