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
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	return failed ? 1 : 0;
}
