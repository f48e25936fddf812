// SPDX-License-Identifier: MIT
/*
 * Unit tests of the kept kernel symbols (user/drain/kallsyms_copy.c): the
 * text lines only, read once while the source is unchanged, read again
 * when it changed. Prints "PASS name" / "FAIL name: why"; exit 1 if any
 * failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms_copy.h"

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s: ", __func__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed++; \
		return; \
	} \
} while (0)

static char dir[] = "/tmp/spulse-ksyms.XXXXXX";

static void put(const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f || fputs(text, f) == EOF || fclose(f)) {
		perror(p);
		exit(1);
	}
}

static char *get(const char *name)
{
	static char buf[4096];
	char p[256];
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static const char *path(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Only t/T lines, unchanged; a last line without newline is kept. */
static void test_text_lines_only(void)
{
	struct drain_ksyms k = { 0 };
	long n;

	put("ks", "ffffffff81000000 T _stext\nffffffff82000000 D data\n"
	    "ffffffffc0001000 t modfn\t[spulse]\nffffffff83000000 b bss\n"
	    "ffffffff81000200 T vfs_read");
	n = drain_ksyms_save(&k, path("ks"), path("out"));
	CHECK(n == 3, "lines %ld, want 3", n);
	CHECK(!strcmp(get("out"), "ffffffff81000000 T _stext\n"
		      "ffffffffc0001000 t modfn\t[spulse]\n"
		      "ffffffff81000200 T vfs_read"), "got '%s'", get("out"));
	CHECK(access(path("out.tmp"), F_OK), "temporary file left");
	drain_ksyms_free(&k);
	printf("PASS %s\n", __func__);
}

/* Several copies (flight dumps) read the source once while unchanged. */
static void test_unchanged_read_once(void)
{
	struct drain_ksyms k = { 0 };

	put("ks2", "ffffffff81000000 T _stext\nffffffff81000100 t helper\n");
	CHECK(drain_ksyms_save(&k, path("ks2"), path("d1")) == 2, "first save");
	CHECK(drain_ksyms_save(&k, path("ks2"), path("d2")) == 2, "second save");
	CHECK(drain_ksyms_save(&k, path("ks2"), path("d3")) == 2, "third save");
	CHECK(k.reads == 1, "source read %u times, want 1", k.reads);
	CHECK(!strcmp(get("d3"), "ffffffff81000000 T _stext\n"
		      "ffffffff81000100 t helper\n"), "d3 '%s'", get("d3"));
	CHECK(!drain_ksyms_changed(&k, path("ks2")), "changed without a change");
	drain_ksyms_free(&k);
	printf("PASS %s\n", __func__);
}

/* A changed source (a module loaded: more lines) is read again. */
static void test_changed_read_again(void)
{
	struct drain_ksyms k = { 0 };

	put("ks3", "ffffffff81000000 T _stext\n");
	CHECK(drain_ksyms_save(&k, path("ks3"), path("e1")) == 1, "first save");
	put("ks3", "ffffffff81000000 T _stext\nffffffffc0002000 t newmod\t[new]\n");
	CHECK(drain_ksyms_changed(&k, path("ks3")), "change not seen");
	CHECK(drain_ksyms_save(&k, path("ks3"), path("e2")) == 2, "second save");
	CHECK(k.reads == 2, "source read %u times, want 2", k.reads);
	CHECK(strstr(get("e2"), "newmod") != NULL, "e2 '%s'", get("e2"));
	CHECK(strstr(get("e1"), "newmod") == NULL, "e1 rewritten");
	drain_ksyms_free(&k);
	printf("PASS %s\n", __func__);
}

/* A missing source is an error, and nothing is written. */
static void test_missing_source(void)
{
	struct drain_ksyms k = { 0 };
	long n = drain_ksyms_save(&k, path("nope"), path("f1"));

	CHECK(n < 0, "returned %ld", n);
	CHECK(access(path("f1"), F_OK), "f1 written");
	drain_ksyms_free(&k);
	printf("PASS %s\n", __func__);
}

/* A fake kernel tree for the cache: proc/kallsyms, proc/modules, the boot
 * id and the modules' build-id notes under DIR/root. */
static void fake_tree(const char *syms, const char *mods, const char *boot,
		      const char *note)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/root/proc/sys/kernel/random' "
		 "'%s/root/sys/module/spulse/notes'", dir, dir);
	if (system(cmd))
		exit(1);
	put("root/proc/kallsyms", syms);
	put("root/proc/modules", mods);
	put("root/proc/sys/kernel/random/boot_id", boot);
	if (note) {
		put("root/sys/module/spulse/notes/.note.gnu.build-id", note);
	} else {
		snprintf(cmd, sizeof(cmd), "rm -f '%s/root/sys/module/spulse/"
			 "notes/.note.gnu.build-id'", dir);
		if (system(cmd))
			exit(1);
	}
}

#define SYMS1 "ffffffff81000000 T _stext\nffffffff82000000 D data\n" \
	"ffffffffc0001000 t modfn\t[spulse]\n"
#define MODS1 "spulse 200704 0 - Live 0xffffffffc0001000 (OE)\n"
#define BOOT1 "0b0d0f00-1111-2222-3333-444455556666\n"

/* One save through the cache into @out: (reads, hits) of a fresh copy. */
static long cached_save(const char *out, unsigned int *reads,
			unsigned int *hits, unsigned int *stores)
{
	struct drain_ksyms k = { 0 };
	char root[300];
	long n;

	snprintf(root, sizeof(root), "%s/root", dir);
	k.sysroot = root;
	k.cache_dir = path("cache/sub");
	n = drain_ksyms_save(&k, path("root/proc/kallsyms"), out);
	*reads = k.reads;
	*hits = k.cache_hits;
	*stores = k.cache_stores;
	drain_ksyms_free(&k);
	return n;
}

/* The second recorder of the same kernel state takes the cached copy: the
 * source is not read, the output is a link of the same text. */
static void test_cache_hit(void)
{
	unsigned int r, h, st;
	struct stat a, b;
	char want[256];

	fake_tree(SYMS1, MODS1, BOOT1, "NOTE-BID1");
	CHECK(cached_save(path("c1"), &r, &h, &st) == 2, "first save");
	CHECK(r == 1 && h == 0 && st == 1, "first: reads %u hits %u stores %u", r, h, st);
	snprintf(want, sizeof(want), "%s", get("c1"));
	CHECK(cached_save(path("c2"), &r, &h, &st) == 2, "second save");
	CHECK(r == 0 && h == 1 && st == 0, "second: reads %u hits %u stores %u", r, h, st);
	CHECK(!strcmp(get("c2"), want), "c2 '%s'", get("c2"));
	CHECK(!strcmp(want, "ffffffff81000000 T _stext\n"
		      "ffffffffc0001000 t modfn\t[spulse]\n"), "c1 '%s'", want);
	CHECK(!stat(path("c1"), &a) && !stat(path("c2"), &b) &&
	      a.st_ino == b.st_ino, "c2 is not a link of the cached copy");
	CHECK(access(path("c2.tmp"), F_OK), "temporary file left");
	/* refcounts and users are not in the key */
	put("root/proc/modules", "spulse 200704 3 other, Live 0xffffffffc0001000 (OE)\n");
	CHECK(cached_save(path("c3"), &r, &h, &st) == 2 && h == 1 && r == 0,
	      "refcount change: reads %u hits %u", r, h);
	printf("PASS %s\n", __func__);
}

/* A module rebuilt and loaded at the same address with the same size: its
 * build-id differs, so the kernel's symbols are read again; so are they
 * after a reboot (another boot id). */
static void test_cache_rebuilt_module_and_reboot(void)
{
	unsigned int r, h, st;

	fake_tree(SYMS1, MODS1, BOOT1, "NOTE-BID1");
	CHECK(cached_save(path("g1"), &r, &h, &st) == 2, "first save");
	fake_tree("ffffffff81000000 T _stext\nffffffffc0001000 t modfn2\t[spulse]\n",
		  MODS1, BOOT1, "NOTE-BID2");
	CHECK(cached_save(path("g2"), &r, &h, &st) == 2, "rebuilt save");
	CHECK(r == 1 && h == 0, "rebuilt: reads %u hits %u", r, h);
	CHECK(strstr(get("g2"), "modfn2") != NULL, "g2 '%s'", get("g2"));
	CHECK(strstr(get("g1"), "modfn2") == NULL, "g1 changed with the cache");
	fake_tree("ffffffff91000000 T _stext\nffffffffc0001000 t modfn2\t[spulse]\n",
		  MODS1, "99999999-1111-2222-3333-444455556666\n",
		  "NOTE-BID2");
	CHECK(cached_save(path("g3"), &r, &h, &st) == 2, "reboot save");
	CHECK(r == 1 && h == 0, "reboot: reads %u hits %u", r, h);
	CHECK(strstr(get("g3"), "ffffffff91000000") != NULL, "g3 '%s'", get("g3"));
	printf("PASS %s\n", __func__);
}

/* Unknown module identity or hidden addresses: read, never cached. */
static void test_cache_refused(void)
{
	unsigned int r, h, st;

	fake_tree(SYMS1, MODS1, BOOT1, NULL);
	CHECK(cached_save(path("h1"), &r, &h, &st) == 2 && r == 1 && st == 0,
	      "no build-id: reads %u stores %u", r, st);
	CHECK(cached_save(path("h2"), &r, &h, &st) == 2 && r == 1 && h == 0,
	      "no build-id again: reads %u hits %u", r, h);
	fake_tree(SYMS1, "spulse 200704 0 - Live 0x0000000000000000 (OE)\n",
		  BOOT1, "NOTE-BID1");
	CHECK(cached_save(path("h3"), &r, &h, &st) == 2 && r == 1 && st == 0 && h == 0,
	      "hidden address: reads %u hits %u stores %u", r, h, st);
	fake_tree("0000000000000000 T _stext\n", "", BOOT1, NULL);
	CHECK(cached_save(path("h4"), &r, &h, &st) == 1 && r == 1 && st == 0,
	      "zero addresses: reads %u stores %u", r, st);
	printf("PASS %s\n", __func__);
}

/* The cached copy removed between lookup and save: the source is read. */
static void test_cache_vanished(void)
{
	struct drain_ksyms k = { 0 };
	unsigned int r, h, st;
	char root[300], cmd[400];

	fake_tree(SYMS1, MODS1, BOOT1, "NOTE-BID3");
	CHECK(cached_save(path("v1"), &r, &h, &st) == 2 && st == 1, "store");
	snprintf(root, sizeof(root), "%s/root", dir);
	k.sysroot = root;
	k.cache_dir = path("cache/sub");
	CHECK(drain_ksyms_load(&k, path("root/proc/kallsyms")) == 2 &&
	      k.cache_hits == 1, "lookup");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/cache'", dir);
	CHECK(!system(cmd), "rm");
	CHECK(drain_ksyms_save(&k, path("root/proc/kallsyms"), path("v2")) == 2,
	      "save after removal");
	CHECK(k.reads == 1, "reads %u", k.reads);
	CHECK(!strcmp(get("v2"), "ffffffff81000000 T _stext\n"
		      "ffffffffc0001000 t modfn\t[spulse]\n"), "v2 '%s'", get("v2"));
	drain_ksyms_free(&k);
	printf("PASS %s\n", __func__);
}

int main(void)
{
	char cmd[300];

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_text_lines_only();
	test_unchanged_read_once();
	test_changed_read_again();
	test_missing_source();
	test_cache_hit();
	test_cache_rebuilt_module_and_reboot();
	test_cache_refused();
	test_cache_vanished();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	return failed ? 1 : 0;
}
