/* SPDX-License-Identifier: MIT */
/* User-space modules through elfutils libdwfl (sym_dwfl.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "sym_dwfl.h"

struct load {
	uint64_t offset, filesz, vaddr;
};

/* One function symbol (libdwfl's, bias applied). */
struct fsym {
	uint64_t addr;
	const char *name;
	uint64_t size;
	int bind;
};

/* The DWARF subprogram of one function symbol, found once. */
struct fdie {
	uint8_t state;		/* FDIE_* */
	Dwarf_Die die;		/* the concrete DW_TAG_subprogram */
};

enum { FDIE_UNKNOWN, FDIE_NONE, FDIE_NO_INLINES, FDIE_INLINES };

struct sym_mod {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	char *path;
	struct load *loads;
	size_t nloads;
	char *debuginfo_path;	/* *cb.debuginfo_path, outlives dwfl */
	Dwfl_Callbacks cb;
	/* the module's function symbols sorted by address, one per address
	 * (the one perf shows); built on the first lookup */
	struct fsym *syms;
	size_t nsyms;
	bool syms_built;
	struct fdie *fdies;	/* per syms[] entry, for inline chains */
	bool dbg_refused;	/* find_debuginfo() warned already */
};

/* Open @path for reading without ever blocking; regular files only. */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static void hex(char *dst, size_t cap, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && 2 * i + 2 < cap; i++)
		snprintf(dst + 2 * i, 3, "%02x", b[i]);
	dst[cap && 2 * i < cap ? 2 * i : 0] = 0;
}

enum cand_rc { CAND_OK, CAND_SKIP, CAND_MISMATCH };

/*
 * Check an open candidate: an ELF file whose build-id is @bid (when
 * given). On CAND_OK the PT_LOAD table is copied to @m.
 */
static enum cand_rc check_candidate(int fd, const uint8_t *bid,
				    size_t bid_len, struct sym_mod *m,
				    struct sym_open_info *info)
{
	const void *fbid = NULL;
	enum cand_rc rc = CAND_SKIP;
	size_t n, i, with_bytes = 0;
	ssize_t len;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return CAND_SKIP;
	if (elf_kind(elf) != ELF_K_ELF)
		goto out;
	len = dwelf_elf_gnu_build_id(elf, &fbid);
	if (bid_len && (len != (ssize_t)bid_len || memcmp(fbid, bid, bid_len))) {
		if (len > 0)
			hex(info->file_bid, sizeof(info->file_bid), fbid,
			    (size_t)len);
		else
			snprintf(info->file_bid, sizeof(info->file_bid),
				 "none");
		rc = CAND_MISMATCH;
		goto out;
	}
	if (elf_getphdrnum(elf, &n) < 0)
		goto out;
	m->loads = calloc(n ? n : 1, sizeof(*m->loads));
	if (!m->loads)
		goto out;
	m->nloads = 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads++] = (struct load){
			ph.p_offset, ph.p_filesz, ph.p_vaddr };
		if (ph.p_filesz)
			with_bytes++;
	}
	/*
	 * A separate debug file (no executable found) keeps the vaddrs and
	 * sizes of the segments but not their file offsets (all 0, filesz
	 * 0): assume offset == vaddr, which holds for the code segments of
	 * the linkers' default layouts (PIE, shared objects).
	 */
	if (m->nloads && with_bytes <= 1)
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) ||
			    ph.p_type != PT_LOAD || ph.p_filesz)
				continue;
			for (size_t j = 0; j < m->nloads; j++)
				if (m->loads[j].vaddr == ph.p_vaddr &&
				    !m->loads[j].filesz)
					m->loads[j] = (struct load){
						ph.p_vaddr, ph.p_memsz,
						ph.p_vaddr };
		}
	rc = CAND_OK;
out:
	elf_end(elf);
	return rc;
}

static char *join(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s%s%s", a, a[0] && b[0] != '/' ? "/" : "", b) < 0)
		return NULL;
	return p;
}

/* ":.debug:EXTRA:SYMFS/usr/lib/debug:/usr/lib/debug" for libdwfl. */
static char *debuginfo_path(const struct sym_dwfl_opts *o)
{
	char *p;

	if (asprintf(&p, ":.debug:%s%s%s%s/usr/lib/debug",
		     o->debug_dir ? o->debug_dir : "", o->debug_dir ? ":" : "",
		     o->symfs ? o->symfs : "", o->symfs ? "/usr/lib/debug:" : "")
	    < 0)
		return NULL;
	return p;
}

/* Is there something at @path that is not a regular file? */
static bool not_regular(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

static bool not_regular2(const char *a, const char *b, const char *c)
{
	char *p;
	bool r;

	if (asprintf(&p, "%s%s%s", a, b, c) < 0)
		return true;
	r = not_regular(p);
	free(p);
	return r;
}

/*
 * Would libdwfl's debug-file search open something that is not a regular
 * file (a FIFO would block its plain open())? The places it tries:
 * ROOT/.build-id/xx/rest.debug and, for a .gnu_debuglink NAME of
 * DIR/FILE, DIR/NAME, DIR/.debug/NAME and ROOT/DIR/NAME, for every
 * absolute ROOT of the debuginfo path.
 */
static bool debuginfo_unsafe(Dwfl_Module *mod, const char *path,
			     const char *file_name, const char *link)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char h[2 * 64 + 1] = "", *dir = NULL, *list, *root, *save = NULL;
	bool bad = false;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	if (n >= 2 && n <= 64)
		hex(h, sizeof(h), bits, (size_t)n);
	if (file_name) {
		const char *slash = strrchr(file_name, '/');

		dir = slash ? strndup(file_name, (size_t)(slash - file_name))
			    : strdup(".");
	}
	if (dir && link && link[0] != '/')
		bad = not_regular2(dir, "/", link) ||
		      not_regular2(dir, "/.debug/", link);
	list = strdup(path);
	for (root = list ? strtok_r(list, ":", &save) : NULL; root && !bad;
	     root = strtok_r(NULL, ":", &save)) {
		if (root[0] == '+' || root[0] == '-')
			root++;
		if (root[0] != '/')
			continue;
		if (h[0]) {
			char *p;

			if (asprintf(&p, "%s/.build-id/%.2s/%s.debug", root, h,
				     h + 2) < 0)
				break;
			bad = not_regular(p);
			free(p);
		}
		if (!bad && dir && link && link[0] != '/') {
			char *p;

			if (asprintf(&p, "%s/%s/%s", root, dir, link) < 0)
				break;
			bad = not_regular(p);
			free(p);
		}
	}
	free(list);
	free(dir);
	return bad;
}

/*
 * libdwfl's standard search (build-id directories, .gnu_debuglink,
 * debuginfod) unless one of the files it would open is not a regular file:
 * then none, with a warning, rather than a hang in open().
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_mod *m = *userdata;

	if (m && (m->dbg_refused ||
		  debuginfo_unsafe(mod, m->debuginfo_path, file_name,
				   debuglink_file))) {
		if (m->dbg_refused)
			return -1;
		m->dbg_refused = true;
		fprintf(stderr, "spulse: %s: a debug file candidate is not a "
			"regular file: separate debug info not used\n",
			file_name ? file_name : modname);
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc,
					    debuginfo_file_name);
}

static int start_dwfl(struct sym_mod *m, const struct sym_dwfl_opts *o,
		      int fd)
{
	m->debuginfo_path = debuginfo_path(o);
	if (!m->debuginfo_path) {
		close(fd);
		return -ENOMEM;
	}
	m->cb = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &m->debuginfo_path,
	};
	m->dwfl = dwfl_begin(&m->cb);
	if (!m->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(m->dwfl);
	/* fd is consumed by libdwfl, even on failure */
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, fd, 0, false);
	if (m->mod) {
		void **ud;

		/* find_debuginfo() reads the module's search path from it */
		if (dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL,
				     NULL))
			*ud = m;
	}
	if (dwfl_report_end(m->dwfl, NULL, NULL) || !m->mod)
		return -EBADMSG;
	if (!dwfl_module_getelf(m->mod, &m->bias))
		return -EBADMSG;
	return 0;
}

/* Try one path; 1 used, 0 not, negative errno fatal. */
static int try_path(struct sym_mod *m, const struct sym_dwfl_opts *o,
		    const char *path, const char *display, const uint8_t *bid,
		    size_t bid_len, struct sym_open_info *info, bool warn)
{
	enum cand_rc c;
	int fd = open_regular(path);

	if (fd < 0) {
		if (warn)
			info->path_err = fd;
		return 0;
	}
	c = check_candidate(fd, bid, bid_len, m, info);
	if (c == CAND_SKIP && warn)
		info->path_err = -ENOEXEC;
	if (c != CAND_OK) {
		close(fd);
		if (c == CAND_MISMATCH && warn && !info->mismatch) {
			char rec[129];

			hex(rec, sizeof(rec), bid, bid_len);
			fprintf(stderr, "spulse: %s: build-id mismatch "
				"(recorded %s, file %s): not used\n",
				display, rec, info->file_bid);
		}
		if (c == CAND_MISMATCH && warn)
			info->mismatch = true;
		return 0;
	}
	m->path = strdup(path);
	if (!m->path) {
		close(fd);
		return -ENOMEM;
	}
	return start_dwfl(m, o, fd) < 0 ? -EBADMSG : 1;
}

static int try_build_id_dirs(struct sym_mod *m, const struct sym_dwfl_opts *o,
			     const uint8_t *bid, size_t bid_len,
			     struct sym_open_info *info)
{
	const char *roots[3] = { o->debug_dir, NULL, "/usr/lib/debug" };
	char *symfs_root = NULL, h[2 * 64 + 1];
	int rc = 0;

	if (bid_len < 2 || bid_len > 64)
		return 0;
	hex(h, sizeof(h), bid, bid_len);
	if (o->symfs) {
		symfs_root = join(o->symfs, "/usr/lib/debug");
		if (!symfs_root)
			return -ENOMEM;
		roots[1] = symfs_root;
	}
	for (size_t r = 0; r < 3 && !rc; r++) {
		for (int dbg = 0; dbg < 2 && !rc; dbg++) {
			char *p;

			if (!roots[r])
				continue;
			if (asprintf(&p, "%s/.build-id/%.2s/%s%s", roots[r], h,
				     h + 2, dbg ? ".debug" : "") < 0) {
				rc = -ENOMEM;
				break;
			}
			rc = try_path(m, o, p, p, bid, bid_len, info, false);
			free(p);
		}
	}
	free(symfs_root);
	if (rc > 0)
		info->how = "build-id dir";
	return rc;
}

static int try_debuginfod(struct sym_mod *m, struct sym_dwfl_opts *o,
			  const uint8_t *bid, size_t bid_len,
			  struct sym_open_info *info)
{
	int rc = 0;

	if (!o->debuginfod || !bid_len || o->dbgd_failed)
		return 0;
	if (!o->dbgd) {
		o->dbgd = debuginfod_begin();
		if (!o->dbgd) {
			o->dbgd_failed = true;
			return 0;
		}
	}
	for (int dbg = 0; dbg < 2 && !rc; dbg++) {
		char *p = NULL;
		int fd = dbg ? debuginfod_find_debuginfo(o->dbgd, bid,
							(int)bid_len, &p)
			     : debuginfod_find_executable(o->dbgd, bid,
							  (int)bid_len, &p);

		if (fd >= 0) {
			close(fd);	/* reopened through the checks */
			rc = try_path(m, o, p, p, bid, bid_len, info, false);
		}
		free(p);
	}
	if (rc > 0)
		info->how = "debuginfod";
	return rc;
}

static void reset(struct sym_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->path);
	free(m->loads);
	free(m->debuginfo_path);
	free(m->syms);
	free(m->fdies);
	memset(m, 0, sizeof(*m));
}

int sym_mod_open(struct sym_dwfl_opts *o, const char *path,
		 const char *display, const uint8_t *bid, size_t bid_len,
		 struct sym_mod **out, struct sym_open_info *info)
{
	struct sym_mod *m = calloc(1, sizeof(*m));
	int rc = 0;

	memset(info, 0, sizeof(*info));
	*out = NULL;
	if (!m)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	if (o->symfs) {
		char *p = join(o->symfs, path);

		if (!p) {
			free(m);
			return -ENOMEM;
		}
		/* a mismatch names the file under the symfs */
		rc = try_path(m, o, p, p, bid, bid_len, info, true);
		free(p);
		if (rc > 0)
			info->how = "symfs";
	}
	if (!rc) {
		rc = try_path(m, o, path, display, bid, bid_len, info, true);
		if (rc > 0)
			info->how = "path";
	}
	if (!rc)
		rc = try_build_id_dirs(m, o, bid, bid_len, info);
	if (!rc)
		rc = try_debuginfod(m, o, bid, bid_len, info);
	if (rc <= 0) {
		reset(m);
		free(m);
		return rc < 0 ? rc : -ENOENT;
	}
	*out = m;
	return 0;
}

static bool is_func(const GElf_Sym *sym)
{
	int t = GELF_ST_TYPE(sym->st_info);

	return sym->st_shndx != SHN_ABS && sym->st_shndx != SHN_UNDEF &&
	       (t == STT_FUNC || t == STT_GNU_IFUNC || t == STT_NOTYPE);
}

static size_t underscores(const char *n)
{
	size_t k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

/*
 * Of two function symbols at one address, the one perf shows: a sized one,
 * then not weak, then global, then fewer leading underscores, then the
 * longer name (libc's __memmove_avx_unaligned_erms over its alias
 * __memcpy_avx_unaligned_erms).
 */
static bool better(const struct fsym *a, const struct fsym *b)
{
	size_t ua, ub, la, lb;

	if (!a->size != !b->size)
		return a->size != 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb;
	return strcmp(a->name, b->name) < 0;
}

static int cmp_fsym(const void *x, const void *y)
{
	const struct fsym *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/*
 * Once per module: every function symbol libdwfl reports (the symbol
 * table of the file or of its separate debug file, else .dynsym; with the
 * bias applied), sorted, the best name kept per address. libdwfl's own
 * dwfl_module_addrinfo() scans all symbols on every call (~0.4 ms per
 * frame in libc), this is one binary search.
 */
static void build_syms(struct sym_mod *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	struct fsym *v;
	size_t k = 0, out = 0;

	m->syms_built = true;
	if (n <= 1)
		return;
	v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym,
							   &addr, NULL, NULL,
							   NULL);

		if (!name || !name[0] || !is_func(&sym))
			continue;
		v[k++] = (struct fsym){ addr, name, sym.st_size,
					GELF_ST_BIND(sym.st_info) };
	}
	if (k > 1)	/* qsort() wants a valid array even for 0 */
		qsort(v, k, sizeof(*v), cmp_fsym);
	for (size_t i = 0; i < k; i++)
		if (!out || v[out - 1].addr != v[i].addr)
			v[out++] = v[i];	/* the best of its address */
	m->syms = v;
	m->nsyms = out;
}

/*
 * The function holding @addr: the nearest symbol at or below it when it
 * has no size or its size covers @addr, else an earlier sized one that
 * covers it (nested or overlapping symbols, a few back); NULL in a gap.
 */
static const struct fsym *find_sym(struct sym_mod *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m->syms_built)
		build_syms(m);
	hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (!m->syms[lo - 1].size)
		return &m->syms[lo - 1];
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++) {
		const struct fsym *f = &m->syms[i];

		if (f->size && addr - f->addr < f->size)
			return f;
	}
	return NULL;
}

static bool to_addr(const struct sym_mod *m, uint64_t rel, Dwarf_Addr *addr)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (rel >= l->offset && rel - l->offset < l->filesz) {
			*addr = rel - l->offset + l->vaddr + m->bias;
			return true;
		}
	}
	return false;
}

int sym_mod_lookup(struct sym_mod *m, uint64_t rel, bool srcline,
		   struct sym_loc *out)
{
	const struct fsym *fs;
	Dwarf_Addr addr;
	uint64_t off;

	memset(out, 0, sizeof(*out));
	if (!to_addr(m, rel, &addr))
		return -ENOENT;
	fs = find_sym(m, addr);
	if (srcline) {
		Dwfl_Line *l = dwfl_module_getsrc(m->mod, addr);
		int line = 0;

		if (l) {
			out->file = dwfl_lineinfo(l, NULL, &line, NULL, NULL,
						  NULL);
			out->line = line > 0 ? (uint32_t)line : 0;
			if (!out->line)
				out->file = NULL;
		}
	}
	if (!fs)
		return -ENOENT;
	out->name = fs->name;
	off = addr - fs->addr;
	out->off = off;
	return 0;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(
			die, DW_AT_MIPS_linkage_name, &a));
	return n ? n : dwarf_diename(die);
}

/* DW_AT_call_file/DW_AT_call_line of an inlined_subroutine DIE. */
static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles,
		      struct sym_loc *loc)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	loc->file = NULL;
	loc->line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a),
				     &w) == 0 && w < nfiles)
		loc->file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0)
		loc->line = (uint32_t)w;
	if (!loc->file || !loc->line) {
		loc->file = NULL;
		loc->line = 0;
	}
}

/* Does @die have a DW_TAG_inlined_subroutine below it? */
static bool has_inlined(Dwarf_Die *die)
{
	Dwarf_Die c;

	if (dwarf_child(die, &c))
		return false;
	do {
		if (dwarf_tag(&c) == DW_TAG_inlined_subroutine ||
		    has_inlined(&c))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Find (once per function symbol) the concrete subprogram DIE at @addr. */
static struct fdie *function_die(struct sym_mod *m, const struct fsym *fs,
				 Dwarf_Addr addr)
{
	Dwarf_Die *cu, *scopes = NULL, *chain = NULL;
	Dwarf_Addr bias;
	struct fdie *fd;
	int n, i;

	if (!m->fdies) {
		m->fdies = calloc(m->nsyms ? m->nsyms : 1, sizeof(*m->fdies));
		if (!m->fdies)
			return NULL;
	}
	fd = &m->fdies[fs - m->syms];
	if (fd->state != FDIE_UNKNOWN)
		return fd;
	fd->state = FDIE_NONE;
	cu = dwfl_module_addrdie(m->mod, addr, &bias);
	if (!cu)
		return fd;
	/* dwarf_getscopes() continues from an inlined instance into its
	 * abstract definition; dwarf_getscopes_die() of that instance gives
	 * the concrete parents, the subprogram among them */
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	for (i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			break;
	if (n > 0 && i < n) {
		int k = dwarf_getscopes_die(&scopes[i], &chain);

		for (int j = 0; j < k; j++)
			if (dwarf_tag(&chain[j]) == DW_TAG_subprogram) {
				fd->die = chain[j];
				fd->state = FDIE_INLINES;
				break;
			}
	} else {
		for (i = 0; i < n; i++)
			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
				fd->die = scopes[i];
				fd->state = has_inlined(&fd->die) ?
					    FDIE_INLINES : FDIE_NO_INLINES;
				break;
			}
	}
	free(chain);
	free(scopes);
	return fd;
}

#define MAX_INLINE_DEPTH 64

int sym_mod_inlines(struct sym_mod *m, uint64_t rel, struct sym_loc **out)
{
	Dwarf_Die path[MAX_INLINE_DEPTH], cudie, cur;
	Dwarf_Files *files = NULL;
	const struct fsym *fs;
	struct sym_loc *v, base;
	size_t nfiles = 0, k = 0;
	struct fdie *fd;
	Dwarf_Addr addr, bias = 0;
	int depth = 0;

	*out = NULL;
	if (!to_addr(m, rel, &addr))
		return 0;
	fs = find_sym(m, addr);
	if (!fs)
		return 0;
	fd = function_die(m, fs, addr);
	if (!fd)
		return -ENOMEM;
	if (fd->state != FDIE_INLINES)
		return 0;
	dwfl_module_getdwarf(m->mod, &bias);
	/* the scopes holding the address, from the subprogram down */
	cur = fd->die;
	for (bool deeper = true; deeper && depth < MAX_INLINE_DEPTH;) {
		Dwarf_Die c;

		deeper = false;
		if (dwarf_child(&cur, &c))
			break;
		do {
			int tag = dwarf_tag(&c);

			if ((tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&c, addr - bias) == 1) {
				if (tag == DW_TAG_inlined_subroutine)
					path[depth++] = c;
				cur = c;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (!depth)
		return 0;
	v = calloc((size_t)depth + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (dwarf_diecu(&fd->die, &cudie, NULL, NULL) &&
	    dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	sym_mod_lookup(m, rel, true, &base);
	/* innermost: the address's own line; each outer entry: the call site
	 * of the entry inside it */
	v[0].file = base.file;
	v[0].line = base.line;
	for (int i = depth - 1; i >= 0; i--) {
		v[k].name = die_name(&path[i]);
		v[k].inlined = true;
		k++;
		call_site(&path[i], files, nfiles, &v[k]);
	}
	/* the real function, as sym_mod_lookup names it */
	v[k].name = base.name ? base.name : die_name(&fd->die);
	v[k].off = base.off;
	*out = v;
	return (int)k + 1;
}

bool sym_mod_elf_addr(const struct sym_mod *m, uint64_t rel, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (rel >= l->offset && rel - l->offset < l->filesz) {
			*vaddr = rel - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

bool sym_mod_stripped(struct sym_mod *m)
{
	Dwarf_Addr b;
	Elf *elf = dwfl_module_getelf(m->mod, &b);
	Elf_Scn *scn = NULL;

	if (dwfl_module_getdwarf(m->mod, &b))
		return false;
	if (!elf)
		return true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
		    sh.sh_size)
			return false;
	}
	return true;
}

const char *sym_mod_path(const struct sym_mod *m)
{
	return m->path;
}

void sym_mod_free(struct sym_mod *m)
{
	if (!m)
		return;
	reset(m);
	free(m);
}

void sym_dwfl_opts_fini(struct sym_dwfl_opts *o)
{
	if (o->dbgd)
		debuginfod_end(o->dbgd);
	o->dbgd = NULL;
}
