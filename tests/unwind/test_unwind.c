/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libspulse-unwind (cmocka, built with ASan+UBSan): the
 * lookup, the ADD message, the bias, the kinds built for known code in the
 * test ELFs (tests/unwind/src, built -O2 -fomit-frame-pointer) and in
 * glibc, the build-id cache, and hostile input (truncated ELF, garbage CFI,
 * FIFO, directory). UT_DIR names the directory of the built test ELFs.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sys/syscall.h>

#include "internal.h"

/*
 * pread() as a network or 9p file system may answer: at most 1000 bytes a
 * call while short_preads is set. This definition in the executable is
 * the one the library's objects, linked in, call.
 */
static bool short_preads;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (short_preads && n > 1000)
		n = 1000;
	return syscall(SYS_pread64, fd, buf, n, off);
}

static char ut_dir[1024];
static char tmp_dir[1024];

static const char *ut_path(const char *name)
{
	static char buf[4][2048];
	static int k;

	k = (k + 1) & 3;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", ut_dir, name);
	return buf[k];
}

static const char *tmp_path(const char *name)
{
	static char buf[4][2048];
	static int k;

	k = (k + 1) & 3;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmp_dir, name);
	return buf[k];
}

/* Symbol or section address/size in an ELF file (libelf, not libdw). */
static int elf_lookup(const char *path, const char *name, bool section,
		      uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = -1;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx) < 0)
		goto out;
	while (found < 0 && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (section) {
			const char *sn = elf_strptr(e, shstrndx, sh.sh_name);

			if (sn && !strcmp(sn, name)) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = 0;
			}
			continue;
		}
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *sn;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			sn = elf_strptr(e, sh.sh_link, s.st_name);
			if (sn && !strcmp(sn, name) && s.st_value) {
				*addr = s.st_value;
				*size = s.st_size;
				found = 0;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static uint64_t sym(const char *path, const char *name)
{
	uint64_t a = 0, s = 0;

	if (elf_lookup(path, name, false, &a, &s))
		fail_msg("%s: no symbol %s", path, name);
	return a;
}

static uint64_t sym_size(const char *path, const char *name)
{
	uint64_t a = 0, s = 0;

	if (elf_lookup(path, name, false, &a, &s))
		fail_msg("%s: no symbol %s", path, name);
	return s;
}

static uint64_t section(const char *path, const char *name, uint64_t *size)
{
	uint64_t a = 0, s = 0;

	if (elf_lookup(path, name, true, &a, &s))
		fail_msg("%s: no section %s", path, name);
	if (size)
		*size = s;
	return a;
}

static struct sut_table *build(const char *path, const struct sut_build_opts *o)
{
	struct sut_table *t = NULL;
	char err[512];
	int rc = sut_build_file(path, o, &t, err, sizeof(err));

	if (rc)
		fail_msg("build %s: %d %s", path, rc, err);
	return t;
}

static void expect_row(const struct sut_table *t, uint64_t addr, int kind,
		       int cfa_off, int bp_off)
{
	const struct spulse_ut_row *r = sut_table_lookup(t, addr);

	if (!r)
		fail_msg("0x%llx: no row", (unsigned long long)addr);
	if (r->kind != kind || r->cfa_off != cfa_off || r->bp_off != bp_off)
		fail_msg("0x%llx: row kind %d cfa %d bp %d, want %d %d %d",
			 (unsigned long long)addr, r->kind, r->cfa_off, r->bp_off,
			 kind, cfa_off, bp_off);
}

static void same_table(const struct sut_table *a, const struct sut_table *b);
static void write_file(const char *path, const void *p, size_t n);

static struct sut_table *handmade(void)
{
	struct sut_table *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->lo = 0x1000;
	t->hi = 0x1040;
	t->n_rows = 3;
	t->rows = calloc(3, sizeof(*t->rows));
	assert_non_null(t->rows);
	t->rows[0] = (struct spulse_ut_row){ 0, 8, 0, SPULSE_UT_CFA_SP, 0 };
	t->rows[1] = (struct spulse_ut_row){ 0x10, 16, -16, SPULSE_UT_CFA_SP, 0 };
	t->rows[2] = (struct spulse_ut_row){ 0x20, 16, -16, SPULSE_UT_CFA_BP, 0 };
	t->build_id_len = 3;
	memcpy(t->build_id, "\x01\x02\x03", 3);
	return t;
}

/* ---- lookup, message, bias ---------------------------------------------- */

static void lookup_returns_the_row_covering_each_address(void **state)
{
	struct sut_table *t = handmade();

	(void)state;
	assert_ptr_equal(sut_table_lookup(t, 0x1000), &t->rows[0]);
	assert_ptr_equal(sut_table_lookup(t, 0x100f), &t->rows[0]);
	assert_ptr_equal(sut_table_lookup(t, 0x1010), &t->rows[1]);
	assert_ptr_equal(sut_table_lookup(t, 0x101f), &t->rows[1]);
	assert_ptr_equal(sut_table_lookup(t, 0x1020), &t->rows[2]);
	assert_ptr_equal(sut_table_lookup(t, 0x103f), &t->rows[2]);
	sut_table_free(t);
}

static void lookup_outside_lo_hi_is_null(void **state)
{
	struct sut_table *t = handmade();

	(void)state;
	assert_null(sut_table_lookup(t, 0xfff));
	assert_null(sut_table_lookup(t, 0x1040));
	assert_null(sut_table_lookup(t, 0));
	assert_null(sut_table_lookup(t, UINT64_MAX));
	sut_table_free(t);
}

static void add_msg_is_header_add_and_rows(void **state)
{
	struct sut_table *t = handmade();
	const struct spulse_ut_msg *h;
	const struct spulse_ut_add *a;
	void *msg;
	size_t len;

	(void)state;
	assert_int_equal(sut_table_add_msg(t, 7, &msg, &len), 0);
	assert_int_equal(len, sizeof(*h) + sizeof(*a) + 3 * sizeof(struct spulse_ut_row));
	h = msg;
	a = (const void *)(h + 1);
	assert_int_equal(h->magic, SPULSE_UT_MAGIC);
	assert_int_equal(h->version, SPULSE_UT_VERSION);
	assert_int_equal(h->op, SPULSE_UT_OP_ADD);
	assert_int_equal(h->len, len);
	assert_int_equal(h->rsvd, 0);
	assert_int_equal(a->table_id, 7);
	assert_int_equal(a->n_rows, 3);
	assert_int_equal(a->lo, 0x1000);
	assert_int_equal(a->hi, 0x1040);
	assert_int_equal(a->build_id_len, 3);
	assert_memory_equal(a->build_id, "\x01\x02\x03", 3);
	assert_memory_equal(a + 1, t->rows, 3 * sizeof(struct spulse_ut_row));
	free(msg);
	sut_table_free(t);
}

static void add_msg_refuses_table_id_zero(void **state)
{
	struct sut_table *t = handmade();
	void *msg = (void *)1;
	size_t len = 1;

	(void)state;
	assert_int_equal(sut_table_add_msg(t, 0, &msg, &len), -EINVAL);
	assert_null(msg);
	assert_int_equal(len, 0);
	sut_table_free(t);
}

static void bias_maps_a_pie_text_mapping_to_elf_addresses(void **state)
{
	struct sut_table *t = handmade();
	uint64_t bias = 0;

	(void)state;
	t->n_loads = 3;
	t->loads[0] = (struct sut_load){ 0, 0, 0x1000, 4, 0 };		/* R */
	t->loads[1] = (struct sut_load){ 0x1000, 0x1000, 0x5000, 5, 0 };	/* R X */
	t->loads[2] = (struct sut_load){ 0x6df0, 0x7df0, 0x300, 6, 0 };	/* RW */
	assert_int_equal(sut_table_bias(t, 0x555555555000, 0x1000, &bias), 0);
	assert_int_equal(bias, 0x555555554000);
	/* The RW mapping: page 0x6000 of the file holds vaddr 0x7000. */
	assert_int_equal(sut_table_bias(t, 0x555555558000, 0x6000, &bias), 0);
	assert_int_equal(bias, 0x555555558000 - 0x7000);
	assert_int_equal(sut_table_bias(t, 0x7f0000000000, 0x9000, &bias), -ENOENT);
	sut_table_free(t);
}

static void bias_prefers_the_executable_segment_on_a_shared_page(void **state)
{
	struct sut_table *t = handmade();
	uint64_t bias = 0;

	(void)state;
	/* Old layout: text and data share file page 0x1000, data one page up. */
	t->n_loads = 2;
	t->loads[0] = (struct sut_load){ 0x1f00, 0x2f00, 0x100, 6, 0 };	/* RW */
	t->loads[1] = (struct sut_load){ 0, 0, 0x1e00, 5, 0 };		/* R X */
	assert_int_equal(sut_table_bias(t, 0x400000 + 0x1000, 0x1000, &bias), 0);
	assert_int_equal(bias, 0x400000);
	sut_table_free(t);
}

/* The mapping of /proc/self/maps holding @addr: start, file offset, path. */
static bool self_mapping(uintptr_t addr, uint64_t *start, uint64_t *pgoff,
			 char *path, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perm[8], file[2048] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %2047s", &s, &e, perm,
			   &off, file) >= 4 && addr >= s && addr < e) {
			*start = s;
			*pgoff = off;
			snprintf(path, n, "%s", file);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* This test program and libcmocka, as mapped right now: pc - bias is the
 * symbol's ELF address, and the table has a row for it. */
static void bias_of_live_mappings_gives_elf_addresses(void **state)
{
	struct { uintptr_t pc; const char *name; } fn[] = {
		{ (uintptr_t)&self_mapping, "self_mapping" },
		{ (uintptr_t)&_cmocka_run_group_tests, "_cmocka_run_group_tests" },
	};
	size_t k;

	(void)state;
	for (k = 0; k < 2; k++) {
		uint64_t start, pgoff, bias;
		char path[2048];
		struct sut_table *t;

		assert_true(self_mapping(fn[k].pc, &start, &pgoff, path, sizeof(path)));
		t = build(path, NULL);
		assert_int_equal(sut_table_bias(t, start, pgoff, &bias), 0);
		assert_int_equal(fn[k].pc - bias, sym(path, fn[k].name));
		assert_non_null(sut_table_lookup(t, fn[k].pc - bias));
		sut_table_free(t);
	}
}

/* ---- kinds built for known code ------------------------------------------ */

static void realigned_function_body_is_cfa_deref_bp(void **state)
{
	const char *lib = ut_path("libut.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t f = sym(lib, "ut_realign"), n = sym_size(lib, "ut_realign");
	const struct spulse_ut_row *r;

	(void)state;
	/* First instruction: CFA = SP + 8; the middle: CFA = *(BP + off). */
	expect_row(t, f, SPULSE_UT_CFA_SP, 8, 0);
	r = sut_table_lookup(t, f + n / 2);
	assert_non_null(r);
	assert_int_equal(r->kind, SPULSE_UT_CFA_DEREF_BP);
	assert_true(r->cfa_off < 0 && r->cfa_off % 8 == 0);
	assert_int_equal(r->bp_off, 0);
	sut_table_free(t);
}

static void frame_pointer_realignment_is_cfa_bp_with_saved_bp(void **state)
{
	const char *lib = ut_path("libut.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t f = sym(lib, "ut_fp_align"), n = sym_size(lib, "ut_fp_align");

	(void)state;
	expect_row(t, f, SPULSE_UT_CFA_SP, 8, 0);
	expect_row(t, f + 1, SPULSE_UT_CFA_SP, 16, -16);	/* after push %rbp */
	expect_row(t, f + n / 2, SPULSE_UT_CFA_BP, 16, -16);
	sut_table_free(t);
}

static void pie_start_is_the_outermost_frame(void **state)
{
	const char *prog = ut_path("ut_prog");
	struct sut_table *t = build(prog, NULL);

	(void)state;
	expect_row(t, sym(prog, "_start"), SPULSE_UT_END, 0, 0);
	expect_row(t, sym(prog, "_start") + 4, SPULSE_UT_END, 0, 0);
	expect_row(t, sym(prog, "main"), SPULSE_UT_CFA_SP, 8, 0);
	sut_table_free(t);
}

static void lazy_plt_entries_are_plt_rows(void **state)
{
	const char *lib = ut_path("libut.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t plt = section(lib, ".plt", NULL);

	(void)state;
	expect_row(t, plt, SPULSE_UT_CFA_SP, 16, 0);		/* PLT0 */
	expect_row(t, plt + 6, SPULSE_UT_CFA_SP, 24, 0);	/* after its push */
	expect_row(t, plt + 16, SPULSE_UT_PLT, 8, 0);
	expect_row(t, plt + 16 + 11, SPULSE_UT_PLT, 8, 0);
	sut_table_free(t);
}

static void ibt_plt_expression_becomes_exact_rows_per_entry(void **state)
{
	const char *lib = ut_path("libut-ibt.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t size, plt = section(lib, ".plt", &size), e;

	(void)state;
	/* endbr64; push $n (ends at +9); bnd jmp: the CFI says lit9. */
	for (e = plt + 16; e < plt + size; e += 16) {
		expect_row(t, e, SPULSE_UT_CFA_SP, 8, 0);
		expect_row(t, e + 8, SPULSE_UT_CFA_SP, 8, 0);
		expect_row(t, e + 9, SPULSE_UT_CFA_SP, 16, 0);
		expect_row(t, e + 15, SPULSE_UT_CFA_SP, 16, 0);
	}
	sut_table_free(t);
}

static void plt_sec_without_fde_is_cfa_sp_8(void **state)
{
	const char *lib = ut_path("libut-nofde.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t size, s = section(lib, ".plt.sec", &size);

	(void)state;
	expect_row(t, s, SPULSE_UT_CFA_SP, 8, 0);
	expect_row(t, s + size - 1, SPULSE_UT_CFA_SP, 8, 0);
	sut_table_free(t);
}

/* A lazy .plt without an FDE gets the rows binutils' FDE would give. */
static void lazy_plt_without_fde_gets_the_binutils_rows(void **state)
{
	const char *ibt = ut_path("libut-nofde.so"), *plain = ut_path("libut-nofde-lazy.so");
	struct sut_table *t = build(ibt, NULL);
	uint64_t size, p = section(ibt, ".plt", &size), e;

	(void)state;
	expect_row(t, p, SPULSE_UT_CFA_SP, 16, 0);
	expect_row(t, p + 6, SPULSE_UT_CFA_SP, 24, 0);
	for (e = p + 16; e < p + size; e += 16) {	/* endbr64; push; bnd jmp */
		expect_row(t, e + 8, SPULSE_UT_CFA_SP, 8, 0);
		expect_row(t, e + 9, SPULSE_UT_CFA_SP, 16, 0);
	}
	sut_table_free(t);
	t = build(plain, NULL);
	p = section(plain, ".plt", &size);
	expect_row(t, p + 5, SPULSE_UT_CFA_SP, 16, 0);
	expect_row(t, p + 15, SPULSE_UT_CFA_SP, 24, 0);
	expect_row(t, p + 16, SPULSE_UT_PLT, 8, 0);	/* jmp *x(%rip); push; jmp */
	expect_row(t, p + size - 1, SPULSE_UT_PLT, 8, 0);
	sut_table_free(t);
}

static const char *libc_debug_file(void)
{
	static char path[512];
	struct sut_table *t = build("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	const uint8_t *id;
	size_t n = sut_table_build_id(t, &id), i;
	int o;

	o = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < n; i++)
		o += snprintf(path + o, sizeof(path) - (size_t)o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - (size_t)o, ".debug");
	sut_table_free(t);
	return access(path, R_OK) == 0 ? path : NULL;
}

static void glibc_restore_rt_is_signal_and_clone3_child_is_end(void **state)
{
	const char *dbg = libc_debug_file();
	struct sut_table *t;
	uint64_t a, c3, c3n;
	const struct spulse_ut_row *r;
	uint64_t x;
	bool end_seen = false;

	(void)state;
	if (!dbg) {
		print_message("no libc6-dbg debug file: skipped\n");
		skip();
	}
	t = build("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	a = sym(dbg, "__restore_rt");
	expect_row(t, a, SPULSE_UT_SIGNAL, 0, 0);
	expect_row(t, a + 1, SPULSE_UT_SIGNAL, 0, 0);
	/* clone3's child path marks the return address undefined. */
	c3 = sym(dbg, "__clone3");
	c3n = sym_size(dbg, "__clone3");
	for (x = c3; x < c3 + c3n; x++) {
		r = sut_table_lookup(t, x);
		assert_non_null(r);
		end_seen |= r->kind == SPULSE_UT_END;
	}
	assert_true(end_seen);
	expect_row(t, c3, SPULSE_UT_CFA_SP, 8, 0);	/* the parent's entry */
	sut_table_free(t);
}

static void rows_never_repeat_the_previous_rule(void **state)
{
	static const char *const files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11",
	};
	size_t k;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct sut_table *t = build(files[k], NULL);
		const struct spulse_ut_row *rows;
		uint64_t lo, hi;
		uint32_t n = sut_table_rows(t, &rows, &lo, &hi), i;

		assert_true(n > 1000);
		assert_null(sut_rows_invalid(rows, n, lo, hi));
		for (i = 1; i < n; i++)
			assert_false(rows[i].kind == rows[i - 1].kind &&
				     rows[i].cfa_off == rows[i - 1].cfa_off &&
				     rows[i].bp_off == rows[i - 1].bp_off);
		sut_table_free(t);
	}
}

static void range_is_the_executable_load_span(void **state)
{
	const char *lib = ut_path("libut.so");
	struct sut_table *t = build(lib, NULL);
	uint64_t lo, hi, text, init, fini, fsize;

	(void)state;
	sut_table_rows(t, NULL, &lo, &hi);
	text = section(lib, ".text", NULL);
	init = section(lib, ".init", NULL);
	fini = section(lib, ".fini", &fsize);
	assert_true(lo <= init && init < text);
	assert_true(hi >= fini + fsize);
	assert_int_equal(lo % 4096, 0);
	sut_table_free(t);
}

static void build_id_is_the_gnu_build_id_note(void **state)
{
	struct sut_table *t = build(ut_path("libut.so"), NULL);
	const uint8_t *id;

	(void)state;
	assert_int_equal(sut_table_build_id(t, &id), 20);
	sut_table_free(t);
	t = build(ut_path("libut-noid.so"), NULL);
	assert_int_equal(sut_table_build_id(t, &id), 0);
	sut_table_free(t);
}

static void debug_frame_is_read_from_the_debug_file_by_build_id(void **state)
{
	const char *lib = tmp_path("dframe/libut-dframe.so");
	struct sut_build_opts o = { .sz = sizeof(o), .debug_dir = tmp_path("dframe/debug") };
	struct sut_build_opts none = { .sz = sizeof(o), .debug_dir = tmp_path("nodir") };
	uint64_t f = sym(ut_path("libut-dframe.so"), "ut_recurse");
	struct sut_table *t;

	(void)state;
	/* Stripped, no .eh_frame for our code: nothing without the debug file. */
	t = build(lib, &none);
	expect_row(t, f, SPULSE_UT_NONE, 0, 0);
	sut_table_free(t);
	t = build(lib, &o);
	expect_row(t, f, SPULSE_UT_CFA_SP, 8, 0);
	expect_row(t, f + 2, SPULSE_UT_CFA_SP, 16, 0);
	sut_table_free(t);
}

static void opts_with_sz_zero_take_the_defaults(void **state)
{
	struct sut_build_opts o = { .sz = 0, .debug_dir = "/nonexistent" };
	struct sut_table *a = build(ut_path("libut.so"), &o);
	struct sut_table *b = build(ut_path("libut.so"), NULL);
	const struct spulse_ut_row *ra, *rb;

	(void)state;
	assert_int_equal(sut_table_rows(a, &ra, NULL, NULL),
			 sut_table_rows(b, &rb, NULL, NULL));
	assert_memory_equal(ra, rb, a->n_rows * sizeof(*ra));
	sut_table_free(a);
	sut_table_free(b);
}

static void vdso_image_builds_like_its_file_copy(void **state)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long long start = 0, end = 0;
	struct sut_table *mem = NULL, *file;
	char line[512], err[256];
	uint64_t f;

	(void)state;
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	fclose(maps);
	if (!start) {
		print_message("no [vdso] mapping: skipped\n");
		skip();
	}
	assert_int_equal(sut_build_image((const void *)(uintptr_t)start, end - start,
					 "[vdso]", NULL, &mem, err, sizeof(err)), 0);
	/* run.sh compares this copy with readelf afterwards. */
	write_file(tmp_path("vdso.so"), (const void *)(uintptr_t)start, end - start);
	file = build(tmp_path("vdso.so"), NULL);
	same_table(mem, file);
	f = sym(tmp_path("vdso.so"), "__vdso_clock_gettime");
	expect_row(mem, f, SPULSE_UT_CFA_SP, 8, 0);
	sut_table_free(mem);
	sut_table_free(file);
}

static void image_that_is_not_elf_is_refused(void **state)
{
	struct sut_table *t = (void *)1;
	char err[256];

	(void)state;
	assert_int_equal(sut_build_image("hello", 5, "blob", NULL, &t, err,
					 sizeof(err)), -ENOEXEC);
	assert_null(t);
	assert_non_null(strstr(err, "blob: not an ELF file"));
	assert_int_equal(sut_build_image(NULL, 0, NULL, NULL, &t, err,
					 sizeof(err)), -ENOEXEC);
}

/* ---- hostile input -------------------------------------------------------- */

static int build_err(const char *path, char *err, size_t n)
{
	struct sut_table *t = (void *)1;
	int rc = sut_build_file(path, NULL, &t, err, n);

	if (rc)
		assert_null(t);
	else
		sut_table_free(t);
	return rc;
}

static void directory_is_refused_clearly(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(build_err(tmp_dir, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
}

static void fifo_is_refused_without_blocking(void **state)
{
	const char *f = tmp_path("fifo");
	char err[256];
	time_t t0 = time(NULL);

	(void)state;
	unlink(f);
	assert_int_equal(mkfifo(f, 0600), 0);
	assert_int_equal(build_err(f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_true(time(NULL) - t0 < 5);
	unlink(f);
}

static void missing_file_names_the_errno(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(build_err(tmp_path("nope"), err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	long len;
	void *p;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)len);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

static void empty_and_text_files_are_not_elf(void **state)
{
	char err[256];

	(void)state;
	write_file(tmp_path("empty"), "", 0);
	assert_int_equal(build_err(tmp_path("empty"), err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not an ELF file"));
	write_file(tmp_path("text"), "#!/bin/sh\necho hi\n", 18);
	assert_int_equal(build_err(tmp_path("text"), err, sizeof(err)), -ENOEXEC);
}

static void relocatable_object_is_refused(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(build_err(ut_path("ut_lib.o"), err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not an executable or shared object"));
}

static void truncated_elf_fails_cleanly_at_every_length(void **state)
{
	size_t n, len;
	unsigned char *p = read_file(ut_path("libut.so"), &n);
	const char *f = tmp_path("trunc.so");
	int errors = 0;

	(void)state;
	for (len = 0; len < n; len += len < 256 ? 1 : 97) {
		char err[256] = "";
		int rc;

		write_file(f, p, len);
		rc = build_err(f, err, sizeof(err));
		if (rc) {
			errors++;
			assert_true(rc < 0);
			assert_true(err[0] != '\0');
		}
	}
	assert_true(errors > 0);
	free(p);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* File offset and size of a section (for corrupting it in place). */
static void section_file_range(const char *path, const char *name,
			       uint64_t *off, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	*size = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name), name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(*size > 0);
}

/* Build a mutated copy; a table that comes back must be one the kernel
 * would accept. */
static int build_mutant(const char *f)
{
	struct sut_table *t = NULL;
	char err[256];
	int rc = sut_build_file(f, NULL, &t, err, sizeof(err));

	if (!rc) {
		const struct spulse_ut_row *rows;
		uint64_t lo, hi;
		uint32_t n = sut_table_rows(t, &rows, &lo, &hi);

		assert_null(sut_rows_invalid(rows, n, lo, hi));
		sut_table_free(t);
	} else {
		assert_true(err[0] != '\0');
	}
	return rc;
}

struct churn {
	const char *path;
	const unsigned char *data;
	size_t len;
	volatile bool stop;
};

/* Rewrite the file in place, as cp(1) over it does: truncate, write. */
static void *churn_file(void *arg)
{
	struct churn *c = arg;

	while (!c->stop) {
		int fd = open(c->path, O_WRONLY | O_TRUNC);
		size_t off = 0;

		if (fd < 0)
			break;
		while (off < c->len && !c->stop) {
			ssize_t w = write(fd, c->data + off,
					  c->len - off < 65536 ? c->len - off : 65536);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(fd);
	}
	return NULL;
}

static void file_rewritten_in_place_while_read_is_no_crash(void **state)
{
	const char *f = tmp_path("churn.so");
	struct churn c = { .path = f };
	size_t n;
	unsigned char *p = read_file("/lib/x86_64-linux-gnu/libc.so.6", &n);
	pthread_t th;
	time_t end = time(NULL) + 2;
	int builds = 0;

	(void)state;
	write_file(f, p, n);
	c.data = p;
	c.len = n;
	assert_int_equal(pthread_create(&th, NULL, churn_file, &c), 0);
	while (time(NULL) < end) {
		build_mutant(f);	/* an error or a valid table; no SIGBUS */
		builds++;
	}
	c.stop = true;
	pthread_join(th, NULL);
	assert_true(builds > 0);
	free(p);
}

static void garbage_eh_frame_gives_an_error_or_a_valid_table(void **state)
{
	const char *src = ut_path("libut.so"), *f = tmp_path("garbage.so");
	uint64_t off, size, hoff, hsize;
	size_t n, i;
	unsigned char *orig = read_file(src, &n);
	unsigned char *p = malloc(n);
	int round;

	(void)state;
	assert_non_null(p);
	section_file_range(src, ".eh_frame", &off, &size);
	section_file_range(src, ".eh_frame_hdr", &hoff, &hsize);
	for (round = 0; round < 300; round++) {
		memcpy(p, orig, n);
		if (round < 40) {
			/* Whole section random. */
			for (i = 0; i < size; i++)
				p[off + i] = (unsigned char)rnd();
		} else {
			/* A few bytes flipped in .eh_frame and its index. */
			int k, flips = 1 + (int)(rnd() % 8);

			for (k = 0; k < flips; k++) {
				if (rnd() & 1)
					p[off + rnd() % size] ^= (unsigned char)(1u << (rnd() % 8));
				else
					p[hoff + rnd() % hsize] = (unsigned char)rnd();
			}
		}
		write_file(f, p, n);
		build_mutant(f);
	}
	free(p);
	free(orig);
}

static void huge_cie_augmentation_or_lengths_do_not_hang(void **state)
{
	const char *src = ut_path("libut.so"), *f = tmp_path("lengths.so");
	uint64_t off, size, i;
	size_t n;
	unsigned char *p = read_file(src, &n);
	time_t t0 = time(NULL);

	(void)state;
	section_file_range(src, ".eh_frame", &off, &size);
	/* Every 4-byte length field candidate set to 0xffffffff, one at a time. */
	for (i = 0; i + 4 <= size; i += 4) {
		unsigned char keep[4];

		memcpy(keep, p + off + i, 4);
		memset(p + off + i, 0xff, 4);
		write_file(f, p, n);
		build_mutant(f);
		memcpy(p + off + i, keep, 4);
	}
	assert_true(time(NULL) - t0 < 60);
	free(p);
}

/* ---- cache ---------------------------------------------------------------- */

static int cache_load(const char *dir, const char *path, struct sut_table **t,
		      bool *hit)
{
	char err[256];

	return sut_cache_load(dir, path, NULL, t, hit, err, sizeof(err));
}

static const char *cache_file_of(const char *dir, const struct sut_table *t)
{
	static char path[2048];
	const uint8_t *id;
	size_t n = sut_table_build_id(t, &id), i;
	int o = snprintf(path, sizeof(path), "%s/%02x/", dir, id[0]);

	for (i = 1; i < n; i++)
		o += snprintf(path + o, sizeof(path) - (size_t)o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - (size_t)o, ".sut");
	return path;
}

static void same_table(const struct sut_table *a, const struct sut_table *b)
{
	assert_int_equal(a->lo, b->lo);
	assert_int_equal(a->hi, b->hi);
	assert_int_equal(a->n_rows, b->n_rows);
	assert_memory_equal(a->rows, b->rows, a->n_rows * sizeof(*a->rows));
	assert_int_equal(a->n_loads, b->n_loads);
	assert_memory_equal(a->loads, b->loads, a->n_loads * sizeof(*a->loads));
}

static void cache_misses_then_hits_with_the_same_table(void **state)
{
	const char *dir = tmp_path("cache1");
	struct sut_table *a, *b, *fresh = build(ut_path("libut.so"), NULL);
	bool hit = true;
	struct stat st;

	(void)state;
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &a, &hit), 0);
	assert_false(hit);
	assert_int_equal(stat(cache_file_of(dir, a), &st), 0);
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &b, &hit), 0);
	assert_true(hit);
	same_table(a, fresh);
	same_table(b, fresh);
	sut_table_free(a);
	sut_table_free(b);
	sut_table_free(fresh);
}

static void corrupt_cache_file_is_rebuilt_not_trusted(void **state)
{
	const char *dir = tmp_path("cache2");
	struct sut_table *a, *b, *c;
	bool hit;
	size_t n, pos;
	unsigned char *p;
	const char *file;

	(void)state;
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &a, &hit), 0);
	file = cache_file_of(dir, a);
	p = read_file(file, &n);
	/* Every byte position once (header, loads, rows), with a bit flipped. */
	for (pos = 0; pos < n; pos++) {
		p[pos] ^= 0x10;
		write_file(file, p, n);
		assert_int_equal(cache_load(dir, ut_path("libut.so"), &b, &hit), 0);
		assert_false(hit);
		same_table(a, b);
		sut_table_free(b);
		p[pos] ^= 0x10;
	}
	/* The rebuilt file was stored again: now a hit. */
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &c, &hit), 0);
	assert_true(hit);
	same_table(a, c);
	free(p);
	sut_table_free(a);
	sut_table_free(c);
}

static void short_reads_still_hit_the_cache(void **state)
{
	const char *dir = tmp_path("cache-short");
	struct sut_table *a, *b;
	bool hit = true;

	(void)state;
	assert_int_equal(cache_load(dir, "/lib/x86_64-linux-gnu/libc.so.6", &a, &hit), 0);
	assert_false(hit);
	assert_true(a->n_rows * sizeof(*a->rows) > 100000);
	short_preads = true;
	assert_int_equal(cache_load(dir, "/lib/x86_64-linux-gnu/libc.so.6", &b, &hit), 0);
	short_preads = false;
	assert_true(hit);
	same_table(a, b);
	sut_table_free(a);
	sut_table_free(b);
}

static void truncated_or_foreign_cache_file_is_rebuilt(void **state)
{
	const char *dir = tmp_path("cache3");
	struct sut_table *a, *b, *prog;
	bool hit;
	size_t n;
	unsigned char *p;
	char file[2048];

	(void)state;
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &a, &hit), 0);
	assert_int_equal(cache_load(dir, ut_path("ut_prog"), &prog, &hit), 0);
	snprintf(file, sizeof(file), "%s", cache_file_of(dir, a));
	p = read_file(file, &n);
	write_file(file, p, n - 1);
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &b, &hit), 0);
	assert_false(hit);
	same_table(a, b);
	sut_table_free(b);
	free(p);
	/* ut_prog's (valid, checksummed) table stored under libut.so's id. */
	p = read_file(cache_file_of(dir, prog), &n);
	write_file(file, p, n);
	assert_int_equal(cache_load(dir, ut_path("libut.so"), &b, &hit), 0);
	assert_false(hit);
	same_table(a, b);
	sut_table_free(b);
	free(p);
	sut_table_free(a);
	sut_table_free(prog);
}

static void unwritable_cache_still_returns_the_table(void **state)
{
	struct sut_table *a;
	bool hit = true;

	(void)state;
	/* A regular file where the cache directory should be. */
	write_file(tmp_path("notadir"), "x", 1);
	assert_int_equal(cache_load(tmp_path("notadir"), ut_path("libut.so"), &a, &hit), 0);
	assert_false(hit);
	assert_true(a->n_rows > 0);
	sut_table_free(a);
}

static void file_without_build_id_is_built_and_not_cached(void **state)
{
	const char *dir = tmp_path("cache4");
	struct sut_table *a;
	bool hit = true;
	struct stat st;

	(void)state;
	assert_int_equal(cache_load(dir, ut_path("libut-noid.so"), &a, &hit), 0);
	assert_false(hit);
	assert_true(a->n_rows > 0);
	assert_true(stat(dir, &st) != 0);
	sut_table_free(a);
}

static void cache_file_names_the_build_id_path(void **state)
{
	struct sut_table *t = handmade(), *noid = build(ut_path("libut-noid.so"), NULL);
	char buf[64];

	(void)state;
	assert_int_equal(sut_cache_file("/c", t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/c/01/0203.sut");
	assert_int_equal(sut_cache_file("/a-long-directory-name", t, buf, 12),
			 -ENAMETOOLONG);
	assert_int_equal(sut_cache_file("/c", noid, buf, sizeof(buf)), -ENOENT);
	sut_table_free(t);
	sut_table_free(noid);
}

static void cache_load_refuses_a_fifo(void **state)
{
	const char *f = tmp_path("fifo2");
	struct sut_table *t;
	char err[256];

	(void)state;
	unlink(f);
	assert_int_equal(mkfifo(f, 0600), 0);
	assert_int_equal(sut_cache_load(tmp_path("cache5"), f, NULL, &t, NULL,
					err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookup_returns_the_row_covering_each_address),
		cmocka_unit_test(lookup_outside_lo_hi_is_null),
		cmocka_unit_test(add_msg_is_header_add_and_rows),
		cmocka_unit_test(add_msg_refuses_table_id_zero),
		cmocka_unit_test(bias_maps_a_pie_text_mapping_to_elf_addresses),
		cmocka_unit_test(bias_prefers_the_executable_segment_on_a_shared_page),
		cmocka_unit_test(bias_of_live_mappings_gives_elf_addresses),
		cmocka_unit_test(realigned_function_body_is_cfa_deref_bp),
		cmocka_unit_test(frame_pointer_realignment_is_cfa_bp_with_saved_bp),
		cmocka_unit_test(pie_start_is_the_outermost_frame),
		cmocka_unit_test(lazy_plt_entries_are_plt_rows),
		cmocka_unit_test(ibt_plt_expression_becomes_exact_rows_per_entry),
		cmocka_unit_test(plt_sec_without_fde_is_cfa_sp_8),
		cmocka_unit_test(lazy_plt_without_fde_gets_the_binutils_rows),
		cmocka_unit_test(glibc_restore_rt_is_signal_and_clone3_child_is_end),
		cmocka_unit_test(rows_never_repeat_the_previous_rule),
		cmocka_unit_test(range_is_the_executable_load_span),
		cmocka_unit_test(build_id_is_the_gnu_build_id_note),
		cmocka_unit_test(debug_frame_is_read_from_the_debug_file_by_build_id),
		cmocka_unit_test(opts_with_sz_zero_take_the_defaults),
		cmocka_unit_test(vdso_image_builds_like_its_file_copy),
		cmocka_unit_test(image_that_is_not_elf_is_refused),
		cmocka_unit_test(directory_is_refused_clearly),
		cmocka_unit_test(fifo_is_refused_without_blocking),
		cmocka_unit_test(missing_file_names_the_errno),
		cmocka_unit_test(empty_and_text_files_are_not_elf),
		cmocka_unit_test(relocatable_object_is_refused),
		cmocka_unit_test(truncated_elf_fails_cleanly_at_every_length),
		cmocka_unit_test(garbage_eh_frame_gives_an_error_or_a_valid_table),
		cmocka_unit_test(huge_cie_augmentation_or_lengths_do_not_hang),
		cmocka_unit_test(file_rewritten_in_place_while_read_is_no_crash),
		cmocka_unit_test(cache_misses_then_hits_with_the_same_table),
		cmocka_unit_test(corrupt_cache_file_is_rebuilt_not_trusted),
		cmocka_unit_test(short_reads_still_hit_the_cache),
		cmocka_unit_test(truncated_or_foreign_cache_file_is_rebuilt),
		cmocka_unit_test(unwritable_cache_still_returns_the_table),
		cmocka_unit_test(file_without_build_id_is_built_and_not_cached),
		cmocka_unit_test(cache_file_names_the_build_id_path),
		cmocka_unit_test(cache_load_refuses_a_fifo),
	};
	const char *d = getenv("UT_DIR"), *t = getenv("UT_TMP");

	if (!d || !t) {
		fprintf(stderr, "test_unwind: set UT_DIR (built test ELFs) and UT_TMP\n");
		return 2;
	}
	snprintf(ut_dir, sizeof(ut_dir), "%s", d);
	snprintf(tmp_dir, sizeof(tmp_dir), "%s", t);
	return cmocka_run_group_tests_name("unwind", tests, NULL, NULL);
}
