/* SPDX-License-Identifier: MIT */
/*
 * Symbolization tests (suite "sym"): each test writes a small spool with
 * the Recorder API whose frames point into the test ELFs built by
 * mk/sym.mk, symbolizes it through user/sym/symbolize.h and checks the
 * result against an independent oracle: the ELF's own symbol table read
 * here with libelf (as nm), source markers (grep), perf map text written
 * here. usage: test_sym NAME (SYMT = directory of the built ELFs, SYMSRC =
 * tests/sym, WORK = scratch directory). Exit 0 pass, 1 fail, 77 skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include <libspulse.h>

#include "../../user/sym/kallsyms.h"
#include "../../user/sym/symbolize.h"
#include "../../user/drain/kallsyms_copy.h"

static const char *symt, *symsrc, *work;
static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
			__LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *p;

	va_start(ap, f);
	if (vasprintf(&p, f, ap) < 0)
		abort();
	va_end(ap);
	return p;
}

/* ---- oracles -------------------------------------------------------- */

/*
 * File offset and size of symbol @name in @path's .symtab (or .dynsym),
 * converted from its virtual address through the PT_LOAD holding it, as
 * `nm` + `readelf -l` give it. Returns 0 or -1.
 */
static int elf_sym_in(const char *path, const char *phdrs,
		      const char *name, uint64_t *rel, uint64_t *size);

static int elf_sym(const char *path, const char *name, uint64_t *rel,
		   uint64_t *size)
{
	return elf_sym_in(path, path, name, rel, size);
}

/* As elf_sym(), the symbol from @path, the segments from @phdrs (a debug
 * file's own program headers have no file offsets). */
static int elf_sym_in(const char *path, const char *phdrs,
		      const char *name, uint64_t *rel, uint64_t *size)
{
	int fd = open(path, O_RDONLY), rc = -1;
	uint64_t vaddr = 0;
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t np;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name) && s.st_value) {
				vaddr = s.st_value;
				*size = s.st_size;
				found = true;
				break;
			}
		}
	}
	if (found && phdrs != path) {
		elf_end(e);
		close(fd);
		fd = open(phdrs, O_RDONLY);
		e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
		if (!e)
			found = false;
	}
	if (found && !elf_getphdrnum(e, &np)) {
		for (size_t i = 0; i < np; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) &&
			    ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
			    vaddr < ph.p_vaddr + ph.p_filesz) {
				*rel = vaddr - ph.p_vaddr + ph.p_offset;
				rc = 0;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

static bool elf_has_symtab(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool has = false;
	Elf *e;

	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			has = true;
	}
	if (e)
		elf_end(e);
	close(fd);
	return has;
}

/* GNU build-id of @path; length or -1. */
static int elf_bid(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY);
	const void *p;
	ssize_t n = -1;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e)
		n = dwelf_elf_gnu_build_id(e, &p);
	if (n > 0 && n <= 64)
		memcpy(out, p, (size_t)n);
	if (e)
		elf_end(e);
	close(fd);
	return n > 0 && n <= 64 ? (int)n : -1;
}

static void hexs(char *dst, const uint8_t *b, int n)
{
	for (int i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	dst[2 * n] = 0;
}

/* Line number of the first line of tests/sym/@file holding @marker. */
static uint32_t marker_line(const char *file, const char *marker)
{
	char *p = fmt("%s/%s", symsrc, file), line[512];
	FILE *f = fopen(p, "r");
	uint32_t n = 0, found = 0;

	free(p);
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

/* ---- spools --------------------------------------------------------- */

#define PID 4242

struct spool {
	char *path;
	struct spulse_recorder *r;
	struct spulse_snapshot *snap;
	struct symbolizer *s;
};

static void spool_begin(struct spool *sp, const char *name)
{
	struct spulse_recorder_opts o = { .sz = sizeof(o), .interval_us = 1000,
					  .truncate = true };
	uint32_t tid;

	memset(sp, 0, sizeof(*sp));
	sp->path = fmt("%s/%s.spulse", work, name);
	if (spulse_recorder_open(sp->path, &o, &sp->r) < 0) {
		fprintf(stderr, "cannot create %s\n", sp->path);
		exit(1);
	}
	spulse_rec_thread(sp->r, PID, PID, "symtest", &tid);
}

/* A module record for @path with @bid_from's build-id (NULL: none). */
static uint32_t spool_module(struct spool *sp, const char *path,
			     const char *bid_from)
{
	uint8_t bid[64];
	int n = bid_from ? elf_bid(bid_from, bid) : 0;
	uint32_t id;

	if (n < 0) {
		fprintf(stderr, "no build-id in %s\n", bid_from);
		exit(1);
	}
	if (spulse_rec_module(sp->r, PID, 0x7f0000000000, 0x7f0010000000, 0,
			      path, n ? bid : NULL, (size_t)n, &id) < 0) {
		fprintf(stderr, "spulse_rec_module failed\n");
		exit(1);
	}
	return id;
}

static uint32_t spool_frame(struct spool *sp, uint32_t mod, uint64_t rel)
{
	uint32_t id;

	if (spulse_rec_frame_module(sp->r, mod, rel, &id) < 0) {
		fprintf(stderr, "spulse_rec_frame_module failed\n");
		exit(1);
	}
	return id;
}

static uint32_t spool_abs(struct spool *sp, uint8_t kind, uint64_t addr)
{
	uint32_t id;

	if (spulse_rec_frame_abs(sp->r, kind, addr, &id) < 0) {
		fprintf(stderr, "spulse_rec_frame_abs failed\n");
		exit(1);
	}
	return id;
}

/* Close the recorder and open a symbolizer over the spool. */
static struct symbolizer *spool_open(struct spool *sp, const char *kallsyms)
{
	struct spulse_read_opts o = { .sz = sizeof(o) };
	struct spulse_error err;

	if (spulse_recorder_close(sp->r) < 0 ||
	    spulse_snapshot_open(sp->path, &o, &sp->snap, &err) < 0) {
		fprintf(stderr, "%s: %s\n", sp->path, err.msg);
		exit(1);
	}
	sp->r = NULL;
	sp->s = symbolizer_new(spulse_snapshot_defs(sp->snap), kallsyms);
	if (!sp->s)
		exit(1);
	symbolizer_set_debuginfod(sp->s, false);
	symbolizer_set_spool(sp->s, sp->path,
			     spulse_snapshot_info(sp->snap)->start_us);
	return sp->s;
}

static void spool_end(struct spool *sp)
{
	symbolizer_free(sp->s);
	spulse_snapshot_close(sp->snap);
	free(sp->path);
}

/* Frame @fid's label, or "(null)" when symbolizer_frame() failed. */
static const char *label(struct spool *sp, uint32_t fid)
{
	const struct sym_frame *f = symbolizer_frame(sp->s, fid);

	return f ? f->label : "(null)";
}

/* rel of @name in @elf, or exit: the test's own ELF is broken. */
static uint64_t rel_of(const char *elf, const char *name)
{
	uint64_t rel, size;

	if (elf_sym(elf, name, &rel, &size)) {
		fprintf(stderr, "%s: no symbol %s\n", elf, name);
		exit(1);
	}
	return rel;
}

/* Redirect stderr to a file for the messages a test checks. */
static char *stderr_path;
static int saved_stderr = -1;

static void capture_stderr(void)
{
	int fd;

	free(stderr_path);
	stderr_path = fmt("%s/stderr.%d", work, getpid());
	fflush(stderr);
	saved_stderr = dup(2);
	fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
}

static char *captured(void)
{
	static char buf[8192];
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(stderr_path, "r");
	n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
	fputs(buf, stderr);	/* keep it in the test log */
	return buf;
}

/* ---- tests ---------------------------------------------------------- */

static void test_pie_function_names(void)
{
	char *prog = fmt("%s/symprog", symt);
	const char *names[] = { "sym_line_probe", "sym_caller", "main" };
	struct spool sp;
	uint32_t mod, f[3], mid;

	spool_begin(&sp, "pie");
	mod = spool_module(&sp, prog, prog);
	for (int i = 0; i < 3; i++)
		f[i] = spool_frame(&sp, mod, rel_of(prog, names[i]));
	/* inside a function, not at its start */
	mid = spool_frame(&sp, mod, rel_of(prog, "sym_caller") + 2);
	spool_open(&sp, NULL);
	for (int i = 0; i < 3; i++) {
		const struct sym_frame *x = symbolizer_frame(sp.s, f[i]);

		CHECK(x && x->func && !strcmp(x->label, names[i]), "%s: got %s",
		      names[i], label(&sp, f[i]));
		CHECK(x && !strcmp(x->dso, prog), "dso %s", x ? x->dso : "");
		CHECK(x && x->func_off == 0, "off %llu",
		      x ? (unsigned long long)x->func_off : 0ULL);
		CHECK(x && x->build_id && strlen(x->build_id) == 40,
		      "build-id %s", x && x->build_id ? x->build_id : "NULL");
	}
	CHECK(!strcmp(label(&sp, mid), "sym_caller") &&
	      symbolizer_frame(sp.s, mid)->func_off == 2, "mid: %s",
	      label(&sp, mid));
	spool_end(&sp);
	free(prog);
}

static void test_shared_library_names(void)
{
	char *lib = fmt("%s/libsymlib.so", symt);
	struct spool sp;
	uint32_t mod, a, b;

	spool_begin(&sp, "lib");
	mod = spool_module(&sp, lib, lib);
	a = spool_frame(&sp, mod, rel_of(lib, "symlib_entry") + 1);
	b = spool_frame(&sp, mod, rel_of(lib, "symlib_helper"));
	spool_open(&sp, NULL);
	CHECK(!strcmp(label(&sp, a), "symlib_entry"), "%s", label(&sp, a));
	CHECK(!strcmp(label(&sp, b), "symlib_helper"), "%s", label(&sp, b));
	spool_end(&sp);
	free(lib);
}

static void test_srcline_file_and_line(void)
{
	char *prog = fmt("%s/symprog", symt);
	uint32_t want = marker_line("symprog.c", "SYM:probe"), mod, f;
	const struct sym_frame *x;
	struct spool sp;

	spool_begin(&sp, "srcline");
	mod = spool_module(&sp, prog, prog);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_line_probe"));
	spool_open(&sp, NULL);
	x = symbolizer_frame(sp.s, f);
	CHECK(x && ends_with(x->file, "/symprog.c"), "file %s",
	      x && x->file ? x->file : "NULL");
	CHECK(x && want && x->line == want, "line %u, want %u",
	      x ? x->line : 0, want);
	spool_end(&sp);
	sp.s = NULL;
	/* srcline off: no file */
	spool_begin(&sp, "srcline-off");
	mod = spool_module(&sp, prog, prog);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_line_probe"));
	spool_open(&sp, NULL);
	symbolizer_set_srcline(sp.s, false);
	x = symbolizer_frame(sp.s, f);
	CHECK(x && !x->file && !x->line && x->func, "srcline off: %s:%u",
	      x && x->file ? x->file : "NULL", x ? x->line : 0);
	spool_end(&sp);
	free(prog);
}

static void test_inline_chain(void)
{
	char *prog = fmt("%s/symprog", symt);
	uint32_t inner = marker_line("symprog.c", "SYM:inner-body");
	uint32_t outer = marker_line("symprog.c", "SYM:outer-call");
	uint32_t caller = marker_line("symprog.c", "SYM:caller-call");
	uint64_t start, size;
	struct spool sp;
	uint32_t mod, first = 0, n = 0, matched = 0;

	if (elf_sym(prog, "sym_caller", &start, &size) || !size) {
		CHECK(0, "no sym_caller");
		return;
	}
	spool_begin(&sp, "inline");
	mod = spool_module(&sp, prog, prog);
	for (uint64_t a = 0; a < size; a++) {
		uint32_t id = spool_frame(&sp, mod, start + a);

		if (!a)
			first = id;
		n++;
	}
	spool_open(&sp, NULL);
	/* off: one entry, the real function */
	{
		const struct sym_frame *c;

		CHECK(symbolizer_inline_chain(sp.s, first, &c) == 1 &&
		      !strcmp(c[0].label, "sym_caller"), "inline off");
	}
	symbolizer_set_inline(sp.s, true);
	for (uint32_t i = 0; i < n; i++) {
		const struct sym_frame *c;
		uint32_t k = symbolizer_inline_chain(sp.s, first + i, &c);

		CHECK(k >= 1 && c, "chain at +%u", i);
		if (k != 3)
			continue;
		if (!strcmp(c[0].func, "inl_inner") && c[0].inlined &&
		    c[0].line == inner && ends_with(c[0].file, "symprog.c") &&
		    !strcmp(c[1].func, "inl_outer") && c[1].inlined &&
		    c[1].line == outer &&
		    !strcmp(c[2].func, "sym_caller") && !c[2].inlined &&
		    c[2].line == caller && !strcmp(c[2].label, "sym_caller"))
			matched++;
		else
			fprintf(stderr, "+%u: %s:%u <- %s:%u <- %s:%u\n", i,
				c[0].label, c[0].line, c[1].label, c[1].line,
				c[2].label, c[2].line);
	}
	CHECK(matched > 0, "no address of sym_caller has the chain "
	      "inl_inner:%u <- inl_outer:%u <- sym_caller:%u", inner, outer,
	      caller);
	spool_end(&sp);
	free(prog);
}

static void test_cxx_demangled(void)
{
	char *prog = fmt("%s/symcxx", symt);
	const char *mangled[] = { "_ZNK9spulse_ns3BoxIiE3getEi",
				  "_ZN9spulse_ns4overEi",
				  "_ZN9spulse_ns4overEd" };
	const char *want[] = { "spulse_ns::Box<int>::get(int) const",
			       "spulse_ns::over(int)",
			       "spulse_ns::over(double)" };
	struct spool sp;
	uint32_t mod, f[3];

	for (int pass = 0; pass < 2; pass++) {
		spool_begin(&sp, pass ? "cxx-raw" : "cxx");
		mod = spool_module(&sp, prog, prog);
		for (int i = 0; i < 3; i++)
			f[i] = spool_frame(&sp, mod, rel_of(prog, mangled[i]));
		spool_open(&sp, NULL);
		if (pass)
			symbolizer_set_demangle(sp.s, false);
		for (int i = 0; i < 3; i++)
			CHECK(!strcmp(label(&sp, f[i]),
				      pass ? mangled[i] : want[i]),
			      "%s: got %s", pass ? mangled[i] : want[i],
			      label(&sp, f[i]));
		spool_end(&sp);
	}
	free(prog);
}

static void test_rust_demangled(void)
{
	char *prog = fmt("%s/symprog", symt);
	struct spool sp;
	uint32_t mod, a, b;

	spool_begin(&sp, "rust");
	mod = spool_module(&sp, prog, prog);
	a = spool_frame(&sp, mod,
		rel_of(prog, "_ZN7mycrate6module4func17h0123456789abcdefE"));
	b = spool_frame(&sp, mod,
			rel_of(prog, "_RNvNtCs1234_7mycrate6module4func"));
	spool_open(&sp, NULL);
	CHECK(!strcmp(label(&sp, a), "mycrate::module::func"), "legacy: %s",
	      label(&sp, a));
	CHECK(!strcmp(label(&sp, b), "mycrate::module::func"), "v0: %s",
	      label(&sp, b));
	spool_end(&sp);
	free(prog);
}

/* A local function named only by the separate debug file. */
static void local_fn_named(const char *file, const char *debug_dir,
			   bool want_named)
{
	char *prog = fmt("%s/symprog", symt);
	uint32_t want = marker_line("symprog.c", "SYM:probe"), mod, f, g;
	const struct sym_frame *x;
	struct spool sp;

	CHECK(!elf_has_symtab(file), "%s still has .symtab", file);
	spool_begin(&sp, "local");
	mod = spool_module(&sp, file, file);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_local_fn"));
	g = spool_frame(&sp, mod, rel_of(prog, "sym_line_probe"));
	spool_open(&sp, NULL);
	symbolizer_set_debug_dir(sp.s, debug_dir);
	x = symbolizer_frame(sp.s, f);
	if (want_named) {
		CHECK(x && !strcmp(x->label, "sym_local_fn"), "%s: %s", file,
		      label(&sp, f));
		x = symbolizer_frame(sp.s, g);
		CHECK(x && x->line == want && ends_with(x->file, "symprog.c"),
		      "srcline through the debug file: %s:%u",
		      x && x->file ? x->file : "NULL", x ? x->line : 0);
	} else {
		CHECK(x && strcmp(x->label, "sym_local_fn"),
		      "%s: named without its debug file", file);
	}
	spool_end(&sp);
	free(prog);
}

static void test_stripped_debuglink(void)
{
	char *f = fmt("%s/dl/symprog", symt);

	local_fn_named(f, NULL, true);
	free(f);
}

static void test_build_id_dir(void)
{
	char *f = fmt("%s/bid/symprog", symt), *root = fmt("%s/dbgroot", symt);

	local_fn_named(f, NULL, false);		/* control: no debug dir */
	local_fn_named(f, root, true);
	free(f);
	free(root);
}

static void test_build_id_mismatch_not_used(void)
{
	char *prog = fmt("%s/symprog", symt), *v1 = fmt("%s/v1/symprog", symt);
	char rec[129], file[129], *msg, *want;
	uint8_t b1[64], b0[64];
	int n1 = elf_bid(v1, b1), n0 = elf_bid(prog, b0);
	const struct sym_frame *x;
	struct spool sp;
	uint32_t mod, f;

	CHECK(n1 > 0 && n0 > 0 && (n1 != n0 || memcmp(b0, b1, n0)),
	      "variants share a build-id");
	hexs(rec, b1, n1);
	hexs(file, b0, n0);
	spool_begin(&sp, "mismatch");
	/* recorded: variant 1's build-id; on disk at the path: variant 0 */
	mod = spool_module(&sp, prog, v1);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_line_probe"));
	spool_open(&sp, NULL);
	capture_stderr();
	x = symbolizer_frame(sp.s, f);
	symbolizer_frame(sp.s, f);
	msg = captured();
	CHECK(x && !x->func && x->build_id_mismatch, "used: %s", label(&sp, f));
	want = fmt("spulse: %s: build-id mismatch (recorded %s, file %s): "
		   "not used\n", prog, rec, file);
	CHECK(strstr(msg, want), "message %s", msg);
	CHECK(strstr(msg, "mismatch") &&
	      !strstr(strstr(msg, "mismatch") + 1, "mismatch"),
	      "not said exactly once");
	free(want);
	spool_end(&sp);
	free(prog);
	free(v1);
}

static void test_build_id_mismatch_uses_build_id_dir(void)
{
	char *prog = fmt("%s/symprog", symt), *v1 = fmt("%s/v1/symprog", symt);
	char *root = fmt("%s/v1root", symt);
	const struct sym_frame *x;
	struct spool sp;
	uint32_t mod, f;

	spool_begin(&sp, "mismatch-dir");
	mod = spool_module(&sp, prog, v1);
	f = spool_frame(&sp, mod, rel_of(v1, "sym_line_probe"));
	spool_open(&sp, NULL);
	symbolizer_set_debug_dir(sp.s, root);
	x = symbolizer_frame(sp.s, f);
	CHECK(x && x->build_id_mismatch && x->func &&
	      !strcmp(x->label, "sym_line_probe"), "got %s", label(&sp, f));
	spool_end(&sp);
	free(prog);
	free(v1);
	free(root);
}

static void test_build_id_mismatch_under_symfs(void)
{
	/* --symfs DIR: DIR/PATH has another build-id: not used, said with
	 * its own name; PATH itself (the right build) is used instead */
	char *v1 = fmt("%s/v1/symprog", symt), *prog = fmt("%s/symprog", symt);
	char *root = fmt("%s/symfs", work), *dir, *copy, *cmd, *msg, *want;
	const struct sym_frame *x;
	struct spool sp;
	uint32_t mod, f;

	dir = fmt("%s%s", root, symt);
	copy = fmt("%s/v1/symprog", dir);
	cmd = fmt("mkdir -p '%s/v1' && cp '%s' '%s'", dir, prog, copy);
	if (system(cmd)) {
		CHECK(0, "%s", cmd);
		return;
	}
	spool_begin(&sp, "symfs-mismatch");
	mod = spool_module(&sp, v1, v1);	/* recorded: v1, right build */
	f = spool_frame(&sp, mod, rel_of(v1, "sym_line_probe"));
	spool_open(&sp, NULL);
	symbolizer_set_symfs(sp.s, root);
	capture_stderr();
	x = symbolizer_frame(sp.s, f);
	msg = captured();
	want = fmt("spulse: %s: build-id mismatch", copy);
	CHECK(strstr(msg, want), "message: %s", msg);
	CHECK(x && x->build_id_mismatch && x->func &&
	      !strcmp(x->func, "sym_line_probe"), "got %s", label(&sp, f));
	spool_end(&sp);
	free(want);
	free(cmd);
	free(copy);
	free(dir);
	free(root);
	free(prog);
	free(v1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "timeout: open() blocked\n";

	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void test_fifo_path_never_blocks(void)
{
	char *fifo = fmt("%s/fifo", work), *want;
	struct spool sp;
	uint32_t mod, f;

	if (mkfifo(fifo, 0600)) {
		CHECK(0, "mkfifo: %s", strerror(errno));
		return;
	}
	spool_begin(&sp, "fifo");
	mod = spool_module(&sp, fifo, NULL);
	f = spool_frame(&sp, mod, 0x1170);
	spool_open(&sp, NULL);
	signal(SIGALRM, on_alarm);
	alarm(20);
	want = fmt("0x1170 [%s]", fifo);
	CHECK(!strcmp(label(&sp, f), want), "got %s", label(&sp, f));
	alarm(0);
	free(want);
	spool_end(&sp);
	free(fifo);
}

static void test_fifo_debuglink_never_blocks(void)
{
	/* the stripped copy's .gnu_debuglink names symprog.debug beside it:
	 * here a FIFO, which libdwfl's plain open() would block on */
	char *dir = fmt("%s/dl", work), *copy = fmt("%s/dl/symprog", work);
	char *prog = fmt("%s/symprog", symt), *fifo, *cmd;
	struct spool sp;
	uint32_t mod, f;

	cmd = fmt("mkdir -p '%s' && cp '%s/dl/symprog' '%s'", dir, symt, copy);
	fifo = fmt("%s/symprog.debug", dir);
	if (system(cmd) || mkfifo(fifo, 0600)) {
		CHECK(0, "setup: %s", cmd);
		return;
	}
	spool_begin(&sp, "fifo-debuglink");
	mod = spool_module(&sp, copy, copy);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_local_fn"));
	spool_open(&sp, NULL);
	signal(SIGALRM, on_alarm);
	alarm(20);
	capture_stderr();
	CHECK(strcmp(label(&sp, f), "sym_local_fn"), "named from a FIFO?");
	CHECK(strstr(captured(), "not a regular file"), "no warning");
	alarm(0);
	spool_end(&sp);
	free(cmd);
	free(fifo);
	free(prog);
	free(copy);
	free(dir);
}

static void test_vdso_named_from_sidecar(void)
{
	struct spool sp;
	const struct sym_frame *x;
	char *side;
	uint64_t rel = 0;
	uint32_t mod, f, g;
	long n;
	const char *fn = "__vdso_clock_gettime";

	spool_begin(&sp, "vdso");
	n = drain_capture_vdso(sp.path);
	CHECK(n > 0, "drain_capture_vdso: %ld", n);
	side = fmt("%s.vdso", sp.path);
	if (n <= 0 || rel_of(side, fn) == 0) {
		spool_end(&sp);
		return;
	}
	rel = rel_of(side, fn);
	mod = spool_module(&sp, "[vdso]", NULL);
	f = spool_frame(&sp, mod, rel);
	g = spool_frame(&sp, mod, 0x0);	/* the ELF header: no function */
	spool_open(&sp, NULL);
	x = symbolizer_frame(sp.s, f);
	/* clock_gettime is the weak alias at the same address */
	CHECK(x && x->func && (!strcmp(x->func, fn) ||
			       !strcmp(x->func, "clock_gettime")),
	      "got %s", label(&sp, f));
	CHECK(x && !strcmp(x->dso, "[vdso]"), "dso %s", x ? x->dso : "");
	CHECK(!strcmp(label(&sp, g), "0x0 [vdso]"), "unnamed: %s",
	      label(&sp, g));
	spool_end(&sp);
	free(side);
}

static void test_vdso_without_sidecar_is_hex(void)
{
	struct spool sp;
	uint32_t mod, f;

	spool_begin(&sp, "vdso-none");
	mod = spool_module(&sp, "[vdso]", NULL);
	f = spool_frame(&sp, mod, 0x7a0);
	spool_open(&sp, NULL);
	CHECK(!strcmp(label(&sp, f), "0x7a0 [vdso]"), "got %s", label(&sp, f));
	CHECK(!strcmp(symbolizer_frame(sp.s, f)->dso, "[vdso]"), "dso");
	spool_end(&sp);
}

static void test_kernel_bounded_by_text_and_modules(void)
{
	char *ks = fmt("%s/kallsyms", work);
	FILE *k = fopen(ks, "w");
	struct spool sp;
	uint32_t in, past, mod, modpast, below;
	char want[32];

	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000100 T kfn_a\n"
	      "ffffffff81000200 t kfn_b\n"
	      "ffffffff82000000 T _etext\n"
	      "ffffffffc0001000 t modfn_a\t[mymod]\n"
	      "ffffffffc0001100 t modfn_b\t[mymod]\n", k);
	fclose(k);
	spool_begin(&sp, "kernel");
	in = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffff81000210);
	past = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffff82000010);
	mod = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffffc0001110);
	modpast = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffffc0001100 +
			    0x3faa932bULL);
	below = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffff80000000);
	spool_open(&sp, ks);
	CHECK(!strcmp(label(&sp, in), "kfn_b"), "in: %s", label(&sp, in));
	CHECK(!strcmp(label(&sp, past), "0xffffffff82000010"), "past _etext: %s",
	      label(&sp, past));
	CHECK(!strcmp(label(&sp, mod), "modfn_b") &&
	      !strcmp(symbolizer_frame(sp.s, mod)->dso, "[mymod]"), "mod: %s",
	      label(&sp, mod));
	snprintf(want, sizeof(want), "0x%llx",
		 0xffffffffc0001100ULL + 0x3faa932bULL);
	CHECK(!strcmp(label(&sp, modpast), want), "past module: %s",
	      label(&sp, modpast));
	CHECK(!strcmp(label(&sp, below), "0xffffffff80000000"), "below: %s",
	      label(&sp, below));
	spool_end(&sp);
	free(ks);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* Lines out of address order (modules listed in any order, an image
 * written backwards): sorted by the merge, lookups as for a sorted file. */
static void test_kallsyms_unsorted_file_is_sorted(void)
{
	char *ks = fmt("%s/kallsyms.unsorted", work);
	const struct ksym *a;
	struct kallsyms k;
	int rc;

	write_file(ks, "ffffffffc0002000 t m2_fn\t[m2]\n"
		       "ffffffffc0001000 t m1_fn\t[m1]\n"
		       "ffffffff81000300 T kfn_c\n"
		       "ffffffff81000200 t kfn_b\n"
		       "ffffffff81000100 T kfn_a\n"
		       "ffffffff81000000 T _stext\n"
		       "ffffffff81000150 D not_text\n"
		       "ffffffff82000000 T _etext\n");
	rc = kallsyms_load(ks, &k);
	CHECK(rc == 0 && k.n == 7, "rc %d n %zu", rc, k.n);
	for (size_t i = 1; i < k.n; i++)
		CHECK(k.syms[i - 1].addr <= k.syms[i].addr, "order at %zu", i);
	CHECK(k.stext == 0xffffffff81000000ULL && k.etext == 0xffffffff82000000ULL,
	      "stext/etext");
	a = kallsyms_lookup(&k, 0xffffffff81000250);
	CHECK(a && !strcmp(a->name, "kfn_b"), "%s", a ? a->name : "(null)");
	a = kallsyms_lookup(&k, 0xffffffffc0001010);
	CHECK(a && !strcmp(a->name, "m1_fn") && !strcmp(a->module, "m1"),
	      "%s", a ? a->name : "(null)");
	a = kallsyms_lookup(&k, 0xffffffffc0002010);
	CHECK(a && !strcmp(a->module, "m2"), "m2");
	kallsyms_free(&k);
	free(ks);
}

/* Several symbols at one address: the same one (the greatest name) wins
 * whatever the file's order; a last line without '\n' still counts. */
static void test_kallsyms_equal_addresses_pick_by_name(void)
{
	char *ks = fmt("%s/kallsyms.eq", work);
	const char *order[2] = {
		"ffffffff81000100 T alias_a\nffffffff81000100 T alias_z\n"
		"ffffffff81000100 W alias_m\nffffffff81000400 T tail_fn",
		"ffffffff81000100 W alias_m\nffffffff81000100 T alias_z\n"
		"ffffffff81000100 T alias_a\nffffffff81000400 T tail_fn",
	};

	for (int i = 0; i < 2; i++) {
		const struct ksym *a;
		struct kallsyms k;

		write_file(ks, order[i]);
		CHECK(kallsyms_load(ks, &k) == 0 && k.n == 4, "load %d", i);
		a = kallsyms_lookup(&k, 0xffffffff81000120);
		CHECK(a && !strcmp(a->name, "alias_z"), "order %d: %s", i,
		      a ? a->name : "(null)");
		a = kallsyms_lookup(&k, 0xffffffff81000410);
		CHECK(a && !strcmp(a->name, "tail_fn"), "order %d: last line", i);
		kallsyms_free(&k);
	}
	free(ks);
}

/* The kallsyms file is read on the first kernel frame only: symbolizing
 * module frames never touches it (a missing file: no warning yet). */
static void test_kallsyms_read_on_first_kernel_frame(void)
{
	char *ks = fmt("%s/kallsyms.missing", work);
	char *prog = fmt("%s/symprog", symt);
	struct spool sp;
	uint32_t mod, uf, kf;

	spool_begin(&sp, "klazy");
	mod = spool_module(&sp, prog, NULL);
	uf = spool_frame(&sp, mod, rel_of(prog, "sym_caller"));
	kf = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffff81000210);
	capture_stderr();
	spool_open(&sp, ks);
	CHECK(!strcmp(label(&sp, uf), "sym_caller"), "%s", label(&sp, uf));
	CHECK(!strstr(captured(), "kallsyms"), "kallsyms read before a kernel frame");
	capture_stderr();
	CHECK(!strcmp(label(&sp, kf), "0xffffffff81000210"), "%s",
	      label(&sp, kf));
	CHECK(strstr(captured(), "kallsyms.missing: No such file"),
	      "no warning on the first kernel frame");
	spool_end(&sp);
	free(prog);
	free(ks);
}

static void test_kallsyms_fifo_never_blocks(void)
{
	char *ks = fmt("%s/kallsyms.fifo", work);
	struct spool sp;
	uint32_t f;

	if (mkfifo(ks, 0600)) {
		CHECK(0, "mkfifo: %s", strerror(errno));
		return;
	}
	spool_begin(&sp, "kfifo");
	f = spool_abs(&sp, SPULSE_FRAME_KERNEL, 0xffffffff81000210);
	signal(SIGALRM, on_alarm);
	alarm(20);
	capture_stderr();
	spool_open(&sp, ks);
	CHECK(!strcmp(label(&sp, f), "0xffffffff81000210"), "%s",
	      label(&sp, f));
	CHECK(strstr(captured(), "kernel frames stay hex"), "no warning");
	alarm(0);
	spool_end(&sp);
	free(ks);
}

static void write_map(const char *path)
{
	FILE *f = fopen(path, "w");

	fputs("7f0000001000 40 jit_one\n"
	      "0x7f0000002000 0x100 Lua:jit_two\n"
	      "garbage line\n", f);
	fclose(f);
}

static void test_jit_from_saved_perf_map(void)
{
	struct spool sp;
	char *map;
	uint32_t a, b, c;

	spool_begin(&sp, "jit");
	map = fmt("%s.perf-%u.map", sp.path, PID);
	write_map(map);
	a = spool_abs(&sp, SPULSE_FRAME_USER, 0x7f0000001010);
	b = spool_abs(&sp, SPULSE_FRAME_USER, 0x7f00000020ff);
	c = spool_abs(&sp, SPULSE_FRAME_USER, 0x7f0000001040);	/* past end */
	spool_open(&sp, NULL);
	CHECK(!strcmp(label(&sp, a), "jit_one") &&
	      symbolizer_frame(sp.s, a)->func_off == 0x10, "a: %s",
	      label(&sp, a));
	CHECK(!strcmp(symbolizer_frame(sp.s, a)->dso, map), "dso %s",
	      symbolizer_frame(sp.s, a)->dso);
	CHECK(!strcmp(label(&sp, b), "Lua:jit_two"), "b: %s", label(&sp, b));
	CHECK(!strcmp(label(&sp, c), "0x7f0000001040"), "c: %s", label(&sp, c));
	spool_end(&sp);
	free(map);
}

static void test_jit_tmp_map_only_when_fresh(void)
{
	/* a pid no process has (above the kernel's pid_max limit) */
	const uint32_t pid = 4194305;
	char *tmp = fmt("/tmp/perf-%u.map", pid), *msg;
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true };
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_error err;

	for (int old = 0; old < 2; old++) {
		struct spulse_recorder *r;
		struct spulse_snapshot *snap;
		struct symbolizer *s;
		char *path = fmt("%s/jittmp%d.spulse", work, old);
		uint32_t tid, fid;

		write_map(tmp);
		if (old) {
			struct timeval tv[2] = { { 1000000000, 0 },
						 { 1000000000, 0 } };

			utimes(tmp, tv);	/* 2001: before the recording */
		}
		spulse_recorder_open(path, &o, &r);
		spulse_rec_thread(r, pid, pid, "jit", &tid);
		spulse_rec_frame_abs(r, SPULSE_FRAME_USER, 0x7f0000001000,
				     &fid);
		spulse_recorder_close(r);
		spulse_snapshot_open(path, &ro, &snap, &err);
		s = symbolizer_new(spulse_snapshot_defs(snap), NULL);
		symbolizer_set_spool(s, path,
				     spulse_snapshot_info(snap)->start_us);
		capture_stderr();
		const struct sym_frame *x = symbolizer_frame(s, fid);
		msg = captured();
		if (old) {
			CHECK(x && !x->func, "old map used: %s", x->label);
			CHECK(strstr(msg, "not used: modified outside"), "%s",
			      msg);
		} else {
			CHECK(x && x->func && !strcmp(x->func, "jit_one"),
			      "fresh map not used: %s", x ? x->label : "");
			CHECK(strstr(msg, tmp) &&
			      strstr(msg, "not saved with the spool"), "%s",
			      msg);
		}
		symbolizer_free(s);
		spulse_snapshot_close(snap);
		free(path);
	}
	unlink(tmp);
	free(tmp);
}

static void test_drain_copies_jit_maps(void)
{
	const uint32_t pids[3] = { 4194306, 4194307, 4194308 };
	char *src0 = fmt("/tmp/perf-%u.map", pids[0]);
	char *fifo = fmt("/tmp/perf-%u.map", pids[2]);
	char *spool = fmt("%s/drain.spulse", work), *dst;
	struct stat st;
	int n;

	write_map(src0);
	unlink(fifo);
	/* pids[1] has no map; pids[2]'s is a FIFO: refused, never read */
	n = drain_capture_jit_maps(spool, pids, 2);
	CHECK(n == 1, "copied %d", n);
	dst = fmt("%s.perf-%u.map", spool, pids[0]);
	CHECK(!stat(dst, &st) && st.st_size > 0, "no %s", dst);
	if (!mkfifo(fifo, 0600)) {
		signal(SIGALRM, on_alarm);
		alarm(20);
		n = drain_capture_jit_maps(spool, pids + 2, 1);
		alarm(0);
		CHECK(n == -EINVAL, "FIFO: %d", n);
		unlink(fifo);
	}
	unlink(src0);
	free(dst);
	free(src0);
	free(fifo);
	free(spool);
}

static void test_libc_named_through_libc6_dbg(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const char *fn = "__memmove_avx_unaligned_erms";
	char h[129], *dbg;
	uint8_t bid[64];
	uint64_t rel = 0, size;
	int n = elf_bid(libc, bid);
	struct spool sp;
	uint32_t mod, f;

	if (n < 0)
		exit(77);
	hexs(h, bid, n);
	dbg = fmt("/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	if (access(dbg, R_OK) || elf_sym_in(dbg, libc, fn, &rel, &size)) {
		fprintf(stderr, "no libc6-dbg file %s with %s\n", dbg, fn);
		exit(77);
	}
	spool_begin(&sp, "libc");
	mod = spool_module(&sp, libc, libc);
	f = spool_frame(&sp, mod, rel + 0x10);
	spool_open(&sp, NULL);
	CHECK(!strcmp(label(&sp, f), fn), "got %s", label(&sp, f));
	spool_end(&sp);
	free(dbg);
}

static void test_debuginfod_by_build_id(void)
{
	/* run.sh starts debuginfod over SYMT/dbgd (variant 1 only) and sets
	 * DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH */
	char *v1 = fmt("%s/v1/symprog", symt), *gone = fmt("%s/gone", work);
	struct spool sp;
	uint32_t mod, f;

	if (!getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS"))
		exit(77);
	spool_begin(&sp, "dbgd");
	mod = spool_module(&sp, gone, v1);	/* no file at the path */
	f = spool_frame(&sp, mod, rel_of(v1, "sym_local_fn"));
	spool_open(&sp, NULL);
	symbolizer_set_debuginfod(sp.s, true);
	CHECK(!strcmp(label(&sp, f), "sym_local_fn"), "got %s", label(&sp, f));
	spool_end(&sp);
	/* control: with debuginfod off nothing else has variant 1 */
	spool_begin(&sp, "dbgd-off");
	mod = spool_module(&sp, gone, v1);
	f = spool_frame(&sp, mod, rel_of(v1, "sym_local_fn"));
	spool_open(&sp, NULL);
	CHECK(strcmp(label(&sp, f), "sym_local_fn"), "named without debuginfod");
	spool_end(&sp);
	free(v1);
	free(gone);
}

static void test_debug_file_alone(void)
{
	/* the executable is gone; only its separate debug file is left in
	 * a build-id directory: names and lines still come from it */
	char *prog = fmt("%s/symprog", symt), *gone = fmt("%s/gone", work);
	char *root = fmt("%s/dbgroot", symt);
	uint32_t want = marker_line("symprog.c", "SYM:probe"), mod, f, g;
	const struct sym_frame *x;
	struct spool sp;

	spool_begin(&sp, "debug-alone");
	mod = spool_module(&sp, gone, prog);
	f = spool_frame(&sp, mod, rel_of(prog, "sym_local_fn"));
	g = spool_frame(&sp, mod, rel_of(prog, "sym_line_probe"));
	spool_open(&sp, NULL);
	symbolizer_set_debug_dir(sp.s, root);
	CHECK(!strcmp(label(&sp, f), "sym_local_fn"), "got %s", label(&sp, f));
	x = symbolizer_frame(sp.s, g);
	CHECK(x && x->func && !strcmp(x->func, "sym_line_probe") &&
	      x->line == want, "got %s:%u", label(&sp, g), x ? x->line : 0);
	CHECK(x && !strcmp(x->dso, gone), "dso %s", x ? x->dso : "");
	spool_end(&sp);
	free(prog);
	free(gone);
	free(root);
}

static void test_frames_cached(void)
{
	char *prog = fmt("%s/symprog", symt);
	struct spool sp;
	uint32_t mod, a, b;

	spool_begin(&sp, "cache");
	mod = spool_module(&sp, prog, prog);
	a = spool_frame(&sp, mod, rel_of(prog, "sym_caller"));
	b = spool_frame(&sp, mod, rel_of(prog, "sym_caller") + 1);
	spool_open(&sp, NULL);
	CHECK(symbolizer_frame(sp.s, a) == symbolizer_frame(sp.s, a), "a");
	CHECK(symbolizer_label_id(sp.s, a) == symbolizer_label_id(sp.s, b) &&
	      symbolizer_label_id(sp.s, a) >= 0, "one label for one function");
	spool_end(&sp);
	free(prog);
}

static void test_frames_defined_later_are_symbolized(void)
{
	/* a Tail reader's defs grow: the same symbolizer names new frames
	 * (and modules) and keeps the old results where they were */
	char *prog = fmt("%s/symprog", symt), *lib = fmt("%s/libsymlib.so", symt);
	char *path = fmt("%s/grow.spulse", work);
	struct spulse_recorder_opts o = { .sz = sizeof(o), .truncate = true };
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	const struct spulse_sample *smp;
	const struct sym_frame *a, *b;
	struct spulse_recorder *r;
	struct spulse_tail *t;
	struct spulse_error err;
	struct symbolizer *s;
	uint32_t tid, mod, f0, f1, st;

	spulse_recorder_open(path, &o, &r);
	spulse_rec_thread(r, PID, PID, "grow", &tid);
	spulse_rec_module(r, PID, 0x7f0000000000, 0x7f0010000000, 0, prog,
			  NULL, 0, &mod);
	spulse_rec_frame_module(r, mod, rel_of(prog, "sym_caller"), &f0);
	spulse_rec_stack(r, SPULSE_NONE, f0, &st);
	spulse_rec_sample(r, 1000, tid, st);
	spulse_recorder_flush(r);
	if (spulse_tail_open(path, &ro, &t, &err) < 0 ||
	    spulse_tail_poll(t, &smp, &err) < 0) {
		CHECK(0, "tail: %s", err.msg);
		return;
	}
	s = symbolizer_new(spulse_tail_defs(t), NULL);
	a = symbolizer_frame(s, f0);
	CHECK(a && !strcmp(a->label, "sym_caller"), "first: %s",
	      a ? a->label : "(null)");
	/* more than one block of frames later, in a new module */
	spulse_rec_module(r, PID, 0x7f2000000000, 0x7f2010000000, 0, lib,
			  NULL, 0, &mod);
	for (uint64_t i = 0; i < 5000; i++)
		spulse_rec_frame_module(r, mod, rel_of(lib, "symlib_entry") +
					(i % 4), &f1);
	spulse_rec_stack(r, SPULSE_NONE, f1, &st);
	spulse_rec_sample(r, 2000, tid, st);
	spulse_recorder_close(r);
	CHECK(symbolizer_frame(s, f1) == NULL, "frame %u before the poll", f1);
	spulse_tail_poll(t, &smp, &err);
	b = symbolizer_frame(s, f1);
	CHECK(b && !strcmp(b->label, "symlib_entry"), "later: %s",
	      b ? b->label : "(null)");
	CHECK(symbolizer_frame(s, f0) == a && !strcmp(a->label, "sym_caller"),
	      "first frame moved");
	symbolizer_free(s);
	spulse_tail_close(t);
	free(path);
	free(prog);
	free(lib);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
#define T(n) { #n, test_##n }
	T(pie_function_names),
	T(shared_library_names),
	T(srcline_file_and_line),
	T(inline_chain),
	T(cxx_demangled),
	T(rust_demangled),
	T(stripped_debuglink),
	T(build_id_dir),
	T(build_id_mismatch_not_used),
	T(build_id_mismatch_uses_build_id_dir),
	T(build_id_mismatch_under_symfs),
	T(fifo_path_never_blocks),
	T(fifo_debuglink_never_blocks),
	T(vdso_named_from_sidecar),
	T(vdso_without_sidecar_is_hex),
	T(kernel_bounded_by_text_and_modules),
	T(kallsyms_fifo_never_blocks),
	T(kallsyms_unsorted_file_is_sorted),
	T(kallsyms_equal_addresses_pick_by_name),
	T(kallsyms_read_on_first_kernel_frame),
	T(jit_from_saved_perf_map),
	T(jit_tmp_map_only_when_fresh),
	T(drain_copies_jit_maps),
	T(libc_named_through_libc6_dbg),
	T(debuginfod_by_build_id),
	T(debug_file_alone),
	T(frames_cached),
	T(frames_defined_later_are_symbolized),
#undef T
};

int main(int argc, char **argv)
{
	symt = getenv("SYMT");
	symsrc = getenv("SYMSRC");
	work = getenv("WORK");
	if (argc == 3 && !strcmp(argv[1], "--capture-vdso")) {
		/* for run.sh's CLI checks: write ARGV[2].vdso */
		long n = drain_capture_vdso(argv[2]);

		if (n < 0)
			fprintf(stderr, "drain_capture_vdso: %s\n",
				strerror((int)-n));
		return n < 0 ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			puts(tests[i].name);
		return 0;
	}
	if (argc != 2 || !symt || !symsrc || !work) {
		fprintf(stderr, "usage: SYMT=DIR SYMSRC=DIR WORK=DIR test_sym "
			"NAME|--list\n       test_sym --capture-vdso SPOOL\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(tests[i].name, argv[1])) {
			tests[i].fn();
			free(stderr_path);
			return failures ? 1 : 0;
		}
	fprintf(stderr, "test_sym: no test %s\n", argv[1]);
	return 2;
}
