/* SPDX-License-Identifier: MIT */
/*
 * Frame symbolization with per-module and per-frame caches (symbolize.h):
 * user modules through libdwfl (sym_dwfl.c), names demangled
 * (sym_demangle.c), JIT frames through perf maps (sym_jit.c), kernel
 * frames through a kallsyms sidecar (kallsyms.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"
#include "strtab.h"
#include "sym_demangle.h"
#include "sym_dwfl.h"
#include "sym_jit.h"
#include "symbolize.h"

struct mod_entry {
	bool tried;
	struct sym_mod *m;	/* NULL: nothing usable */
	struct sym_open_info info;
	const char *display;	/* the path, every byte (interned) */
	size_t display_len;
	const char *msg;	/* the path escaped for messages (interned) */
	const char *bid;	/* recorded build-id hex (interned) or NULL */
	bool hinted;		/* the debug-symbols hint was printed */
};

struct frame_entry {
	bool done, chain_done;
	struct sym_frame sf;
	struct sym_frame *chain;	/* inline chain; NULL = just sf */
	uint32_t nchain;
};

#define FRAME_BLOCK 4096u

struct symbolizer {
	const struct spulse_defs *defs;
	struct kallsyms *ktabs;		/* one per section of the sidecar */
	struct kallsyms_range *kranges;	/* frame ids -> ktabs[kowner[i]] */
	size_t *kowner;
	size_t nktabs, nkranges;
	bool kmerged;			/* sectioned: by frame id */
	char *ksyms_path;		/* loaded on the first kernel frame */
	bool have_ksyms, ksyms_tried;
	struct strtab modkeys;		/* "escaped path\tbuild-id" -> mods[] */
	struct mod_entry *mods;
	size_t nmods, mods_cap;
	uint32_t *mod_of_id;		/* module record id -> mods[] + 1 */
	uint32_t nmod_ids;
	struct strtab labels;		/* display labels (dense ids) */
	struct strtab strs;		/* every other string handed out */
	struct frame_entry **blocks;	/* FRAME_BLOCK entries each, stable */
	uint32_t nframes;		/* capacity: nblocks * FRAME_BLOCK */
	uint32_t nblocks;
	struct sym_dwfl_opts dopts;
	char *debug_dir;
	char *spool;
	uint64_t start_us;
	bool demangle, inl, srcline;
	bool jit_loaded;
	struct jit_map *jits;
	size_t njits;
};

void symbolizer_set_symfs(struct symbolizer *s, const char *dir)
{
	s->dopts.symfs = dir && *dir ? dir : NULL;
}

void symbolizer_set_spool(struct symbolizer *s, const char *spool,
			  uint64_t start_us)
{
	free(s->spool);
	s->spool = spool ? strdup(spool) : NULL;
	s->start_us = start_us;
}

void symbolizer_set_demangle(struct symbolizer *s, bool on)
{
	s->demangle = on;
}

void symbolizer_set_debuginfod(struct symbolizer *s, bool on)
{
	s->dopts.debuginfod = on;
}

void symbolizer_set_inline(struct symbolizer *s, bool on)
{
	s->inl = on;
}

void symbolizer_set_srcline(struct symbolizer *s, bool on)
{
	s->srcline = on;
}

void symbolizer_set_debug_dir(struct symbolizer *s, const char *dir)
{
	free(s->debug_dir);
	s->debug_dir = dir && *dir ? strdup(dir) : NULL;
	s->dopts.debug_dir = s->debug_dir;
}

char *symbolizer_default_kallsyms(const char *spool)
{
	size_t n = strlen(spool) + sizeof(".kallsyms");
	char *p = malloc(n);

	if (!p)
		return NULL;
	snprintf(p, n, "%s.kallsyms", spool);
	if (access(p, R_OK)) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * Room for frame ids below @n (at least), in blocks that never move, so a
 * returned sym_frame stays valid while frames defined later (a Tail
 * reader's defs grow) are added.
 */
static int grow_frames(struct symbolizer *s, uint32_t n)
{
	uint32_t need = (n + FRAME_BLOCK - 1) / FRAME_BLOCK;
	struct frame_entry **v;

	if (need <= s->nblocks)
		return 0;
	v = realloc(s->blocks, need * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->blocks = v;
	while (s->nblocks < need) {
		v[s->nblocks] = calloc(FRAME_BLOCK, sizeof(**v));
		if (!v[s->nblocks])
			return -ENOMEM;
		s->nblocks++;
		s->nframes = s->nblocks * FRAME_BLOCK;
	}
	return 0;
}

static struct frame_entry *frame_entry(struct symbolizer *s, uint32_t id)
{
	if (id >= s->nframes) {
		if (id >= spulse_defs_count(s->defs, SPULSE_TAG_FRAME) ||
		    grow_frames(s, id + 1) < 0)
			return NULL;
	}
	return &s->blocks[id / FRAME_BLOCK][id % FRAME_BLOCK];
}

/*
 * libdwfl keeps each module's file and debug file open until the end (two
 * descriptors per module): raise the soft descriptor limit to the hard one
 * so that a spool of many hundred libraries does not run out at 1024.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct symbolizer *symbolizer_new(const struct spulse_defs *defs,
				  const char *kallsyms)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!s)
		return NULL;
	raise_nofile();
	s->defs = defs;
	s->demangle = true;
	s->srcline = true;
	s->dopts.debuginfod = urls && *urls;
	strtab_init(&s->modkeys);
	strtab_init(&s->labels);
	strtab_init(&s->strs);
	if (grow_frames(s, spulse_defs_count(defs, SPULSE_TAG_FRAME)) ==
	    -ENOMEM) {
		symbolizer_free(s);
		return NULL;
	}
	if (kallsyms && !(s->ksyms_path = strdup(kallsyms))) {
		symbolizer_free(s);
		return NULL;
	}
	return s;
}

static int load_sections(struct symbolizer *s, const struct kallsyms_file *f)
{
	size_t i, j, nr = 0;
	int rc;

	s->ktabs = calloc(f->nsecs ? f->nsecs : 1, sizeof(*s->ktabs));
	for (i = 0; i < f->nsecs; i++)
		nr += f->secs[i].nranges;
	s->kranges = calloc(nr ? nr : 1, sizeof(*s->kranges));
	s->kowner = calloc(nr ? nr : 1, sizeof(*s->kowner));
	if (!s->ktabs || !s->kranges || !s->kowner)
		return -ENOMEM;
	s->kmerged = f->merged;
	for (i = 0; i < f->nsecs; i++) {
		rc = kallsyms_parse(f->secs[i].text, f->secs[i].len,
				    &s->ktabs[i]);
		s->nktabs = i + 1;
		if (rc < 0)
			return rc;
		for (j = 0; j < f->secs[i].nranges; j++) {
			s->kranges[s->nkranges] = f->secs[i].ranges[j];
			s->kowner[s->nkranges++] = i;
		}
	}
	return 0;
}

/* The kallsyms file is read on the first kernel frame: spools without
 * kernel frames never pay for it. Without one, that is said once. */
static void load_ksyms(struct symbolizer *s)
{
	struct kallsyms_file f;
	int rc;

	s->ksyms_tried = true;
	if (!s->ksyms_path) {
		/* once per spool and process: spulse top makes a new
		 * symbolizer whenever the spool defines new frames */
		static char last[512];

		if (s->spool && !strncmp(last, s->spool, sizeof(last)))
			return;
		snprintf(last, sizeof(last), "%s", s->spool ? s->spool : "");
		if (s->spool)
			fprintf(stderr, "spulse: %s: no %s.kallsyms (kernel "
				"frames stay hex; --kallsyms PATH names them)\n",
				s->spool, s->spool);
		else
			fprintf(stderr, "spulse: no kernel symbol file (kernel "
				"frames stay hex; --kallsyms PATH names them)\n");
		return;
	}
	rc = kallsyms_file_read(s->ksyms_path, &f);
	if (!rc)
		rc = load_sections(s, &f);
	kallsyms_file_free(&f);
	if (rc < 0)
		fprintf(stderr, "spulse: %s: %s (kernel frames stay hex)\n",
			s->ksyms_path, rc == -EINVAL ? "not a regular file "
			"or a malformed #frames line" : strerror(-rc));
	else
		s->have_ksyms = true;
}

/* The symbol table that names kernel frame @id, or NULL. */
static const struct kallsyms *ksyms_for(const struct symbolizer *s,
					uint32_t id)
{
	if (!s->have_ksyms || !s->nktabs)
		return NULL;
	if (!s->kmerged)
		return &s->ktabs[0];
	for (size_t i = 0; i < s->nkranges; i++)
		if (id >= s->kranges[i].lo && id <= s->kranges[i].hi)
			return &s->ktabs[s->kowner[i]];
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++)
		sym_mod_free(s->mods[i].m);
	free(s->mods);
	free(s->mod_of_id);
	for (uint32_t b = 0; b < s->nblocks; b++) {
		for (uint32_t i = 0; i < FRAME_BLOCK; i++)
			free(s->blocks[b][i].chain);
		free(s->blocks[b]);
	}
	free(s->blocks);
	for (size_t i = 0; i < s->njits; i++)
		jit_map_free(&s->jits[i]);
	free(s->jits);
	sym_dwfl_opts_fini(&s->dopts);
	for (size_t i = 0; i < s->nktabs; i++)
		kallsyms_free(&s->ktabs[i]);
	free(s->ktabs);
	free(s->kranges);
	free(s->kowner);
	free(s->ksyms_path);
	strtab_free(&s->modkeys);
	strtab_free(&s->labels);
	strtab_free(&s->strs);
	free(s->debug_dir);
	free(s->spool);
	free(s);
}

static const char *intern_n(struct symbolizer *s, const char *str,
			    size_t len)
{
	int64_t id = strtab_intern_n(&s->strs, str, len);

	return id < 0 ? NULL : strtab_str(&s->strs, (uint32_t)id);
}

static const char *intern(struct symbolizer *s, const char *str)
{
	return intern_n(s, str, strlen(str));
}

/*
 * @len bytes of @p as a C string for the symbolizer's own messages on
 * stderr: NUL, control bytes, DEL and '\' as \xNN (the sym room sits
 * below the CLI's printing rule; this text is only ever printed).
 */
static char *escape_path(const char *p, size_t len)
{
	char *out = malloc(len * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 || c == 0x7f || c == '\\')
			o += sprintf(o, "\\x%02x", c);
		else
			*o++ = (char)c;
	}
	*o = 0;
	return out;
}

/* Demangled (when on) and interned copy of @name. */
static const char *func_name(struct symbolizer *s, const char *name)
{
	char *d = s->demangle ? sym_demangle(name) : NULL;
	const char *r = intern(s, d ? d : name);

	free(d);
	return r;
}

static void hexstr(char *dst, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	dst[2 * n] = 0;
}

static bool is_vdso(const struct spulse_module *m)
{
	return m->path_len == 6 && !memcmp(m->path, "[vdso]", 6);
}

/*
 * libdwfl's own debug-file search asks debuginfod whenever DEBUGINFOD_URLS
 * is set; with debuginfod switched off, empty the variable for this
 * process before the first module is opened so that it does not.
 */
static void quiet_debuginfod(struct symbolizer *s)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!s->dopts.debuginfod && urls && *urls)
		setenv("DEBUGINFOD_URLS", "", 1);
}

static int open_module(struct symbolizer *s, const struct spulse_module *m,
		       struct mod_entry *e)
{
	struct sym_dwfl_opts vo;
	char *path = NULL;
	int rc;

	e->tried = true;
	if (strlen(m->path) != m->path_len)	/* a NUL inside: no such file */
		return 0;
	quiet_debuginfod(s);
	if (is_vdso(m)) {
		/* the image saved at record time; nothing else is this
		 * kernel's vdso */
		if (!s->spool)
			return 0;
		if (asprintf(&path, "%s.vdso", s->spool) < 0)
			return -ENOMEM;
		vo = s->dopts;
		vo.symfs = NULL;
		vo.debuginfod = false;
		rc = sym_mod_open(&vo, path, path, m->build_id,
				  m->build_id_len, &e->m, &e->info);
		free(path);
		return rc == -ENOMEM ? rc : 0;
	}
	if (m->path[0] == '[')	/* [anon], [heap]: no file */
		return 0;
	rc = sym_mod_open(&s->dopts, m->path, e->msg, m->build_id,
			  m->build_id_len, &e->m, &e->info);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		int why = e->info.path_err ? e->info.path_err : rc;

		fprintf(stderr, "spulse: %s: no symbols (%s)\n", e->msg,
			e->info.mismatch ? "no file with the recorded build-id"
			: why == -EINVAL ? "not a regular file"
			: why == -ENOEXEC ? "not an ELF file" : strerror(-why));
	}
	else if (e->info.mismatch)
		fprintf(stderr, "spulse: %s: using %s (%s)\n", e->msg,
			sym_mod_path(e->m), e->info.how);
	return 0;
}

static struct mod_entry *module_entry_slow(struct symbolizer *s,
					   const struct spulse_module *m,
					   int64_t *index);

/* The cache entry of module record @m, by record id after the first. */
static struct mod_entry *module_entry(struct symbolizer *s,
				      const struct spulse_module *m)
{
	struct mod_entry *e;
	int64_t idx;

	if (m->id < s->nmod_ids && s->mod_of_id[m->id])
		return &s->mods[s->mod_of_id[m->id] - 1];
	e = module_entry_slow(s, m, &idx);
	if (!e)
		return NULL;
	if (m->id >= s->nmod_ids) {
		uint32_t n = m->id + 64;
		uint32_t *v = realloc(s->mod_of_id, n * sizeof(*v));

		if (!v)
			return e;
		memset(v + s->nmod_ids, 0, (n - s->nmod_ids) * sizeof(*v));
		s->mod_of_id = v;
		s->nmod_ids = n;
	}
	s->mod_of_id[m->id] = (uint32_t)idx + 1;
	return e;
}

/* Keyed by path and build-id: records of one file share an entry. */
static struct mod_entry *module_entry_slow(struct symbolizer *s,
					   const struct spulse_module *m,
					   int64_t *index)
{
	char bid[2 * 255 + 1] = "", *key;
	struct mod_entry *e;
	size_t blen;
	int64_t id;

	if (m->build_id_len && m->build_id_len <= 255)
		hexstr(bid, m->build_id, m->build_id_len);
	/* the key: build-id hex, a tab, the path's bytes (the hex holds
	 * no tab, so the key is injective) */
	blen = strlen(bid);
	key = malloc(blen + 1 + m->path_len);
	if (!key)
		return NULL;
	memcpy(key, bid, blen);
	key[blen] = '\t';
	memcpy(key + blen + 1, m->path, m->path_len);
	id = strtab_intern_n(&s->modkeys, key, blen + 1 + m->path_len);
	free(key);
	if (id < 0 || ((size_t)id >= s->nmods && (size_t)id != s->nmods))
		return NULL;
	if ((size_t)id == s->nmods) {
		if (s->nmods == s->mods_cap) {
			size_t c = s->mods_cap ? s->mods_cap * 2 : 16;
			struct mod_entry *n = realloc(s->mods, c * sizeof(*n));

			if (!n)
				return NULL;
			s->mods = n;
			s->mods_cap = c;
		}
		memset(&s->mods[s->nmods++], 0, sizeof(*s->mods));
	}
	e = &s->mods[id];
	*index = id;
	if (!e->tried) {
		char *shown = escape_path(m->path, m->path_len);

		e->display = intern_n(s, m->path, m->path_len);
		e->display_len = m->path_len;
		e->msg = shown ? intern(s, shown) : NULL;
		free(shown);
		e->bid = bid[0] ? intern(s, bid) : NULL;
		if (!e->display || !e->msg || (bid[0] && !e->bid) ||
		    open_module(s, m, e) < 0)
			return NULL;
	}
	return e;
}

/* ---- JIT maps ------------------------------------------------------- */

static void add_jit(struct symbolizer *s, const char *path, uint32_t pid,
		    const char *why)
{
	struct jit_map *n = realloc(s->jits, (s->njits + 1) * sizeof(*n));
	long rc;

	if (!n)
		return;
	s->jits = n;
	rc = jit_map_load(path, pid, &s->jits[s->njits]);
	if (rc < 0) {
		fprintf(stderr, "spulse: %s: %s (JIT frames of pid %u stay "
			"hex)\n", path, strerror((int)-rc), pid);
		jit_map_free(&s->jits[s->njits]);
		return;
	}
	fprintf(stderr, "spulse: JIT symbols of pid %u from %s (%s)\n", pid,
		path, why);
	s->njits++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted, unique pid list (the perf maps found in one directory). */
struct pidset {
	uint32_t *v;
	size_t n, cap;
};

static void pidset_add(struct pidset *p, uint32_t pid)
{
	if (p->n == p->cap) {
		size_t c = p->cap ? 2 * p->cap : 16;
		uint32_t *v = realloc(p->v, c * sizeof(*v));

		if (!v)
			return;	/* that map stays unused: frames stay hex */
		p->v = v;
		p->cap = c;
	}
	p->v[p->n++] = pid;
}

static void pidset_sort(struct pidset *p)
{
	size_t k = 0;

	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), cmp_u32);
	for (size_t i = 0; i < p->n; i++)
		if (!k || p->v[i] != p->v[k - 1])
			p->v[k++] = p->v[i];
	p->n = k;
}

static bool pidset_has(const struct pidset *p, uint32_t pid)
{
	return p->n && bsearch(&pid, p->v, p->n, sizeof(pid), cmp_u32);
}

/* @name is PREFIX<decimal pid>.map: its pid into *@pid. */
static bool map_name_pid(const char *name, const char *prefix, size_t plen,
			 uint32_t *pid)
{
	unsigned long long v = 0;
	const char *c = name + plen;

	if (strncmp(name, prefix, plen) || *c < '0' || *c > '9')
		return false;
	for (; *c >= '0' && *c <= '9'; c++) {
		v = v * 10 + (unsigned long long)(*c - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (strcmp(c, ".map"))
		return false;
	*pid = (uint32_t)v;
	return true;
}

/* The pids of the perf maps named PREFIX<pid>.map in @dir. */
static void scan_maps(const char *dir, const char *prefix, struct pidset *p)
{
	size_t plen = strlen(prefix);
	DIR *d = opendir(dir);
	struct dirent *e;
	uint32_t pid;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (map_name_pid(e->d_name, prefix, plen, &pid))
			pidset_add(p, pid);
	closedir(d);
	pidset_sort(p);
}

/*
 * Load the perf maps of the processes of the spool, once. The maps that
 * exist are listed first (two directory reads: the spool's directory for
 * SPOOL.perf-PID.map, /tmp for perf-PID.map), then the spool's threads are
 * matched against them: the cost is one pass over the thread definitions
 * and a stat() per map found, never a stat() per defined pid (a spool of
 * 1M threads made 2M failed stat()s, most of a report's time).
 */
static void load_jits(struct symbolizer *s)
{
	uint32_t nt = spulse_defs_count(s->defs, SPULSE_TAG_THREAD);
	struct pidset saved = { 0 }, tmp = { 0 }, used = { 0 };
	char *dir = NULL, *prefix = NULL, *slash;
	struct stat sp;
	uint64_t end_us = UINT64_MAX;

	s->jit_loaded = true;
	if (!s->spool || !nt)
		return;
	slash = strrchr(s->spool, '/');
	if (asprintf(&dir, "%.*s", slash ? (int)(slash - s->spool + 1) : 2,
		     slash ? s->spool : "./") < 0 ||
	    asprintf(&prefix, "%s.perf-", slash ? slash + 1 : s->spool) < 0) {
		free(dir);
		return;
	}
	scan_maps(dir, prefix, &saved);
	scan_maps("/tmp", "perf-", &tmp);
	free(dir);
	free(prefix);
	for (uint32_t i = 0; (saved.n || tmp.n) && i < nt; i++) {
		struct spulse_thread t;

		if (spulse_defs_thread(s->defs, i, &t) == 0 &&
		    (pidset_has(&saved, t.pid) || pidset_has(&tmp, t.pid)))
			pidset_add(&used, t.pid);
	}
	pidset_sort(&used);
	if (used.n && !stat(s->spool, &sp))
		end_us = (uint64_t)sp.st_mtim.tv_sec * 1000000 +
			 (uint64_t)sp.st_mtim.tv_nsec / 1000;
	for (size_t i = 0; i < used.n; i++) {
		uint32_t pid = used.v[i];
		char *path, tpath[64];
		struct stat st;

		if (pidset_has(&saved, pid)) {
			if (asprintf(&path, "%s.perf-%u.map", s->spool, pid) < 0)
				break;
			add_jit(s, path, pid, "saved at record time");
			free(path);
			continue;
		}
		snprintf(tpath, sizeof(tpath), "/tmp/perf-%u.map", pid);
		if (!stat(tpath, &st)) {
			uint64_t m = (uint64_t)st.st_mtim.tv_sec * 1000000 +
				     (uint64_t)st.st_mtim.tv_nsec / 1000;

			/* a JIT appends while it runs: its last write falls
			 * inside the recording (1 s slack for clock steps) */
			if (m + 1000000 >= s->start_us && m <= end_us + 1000000)
				add_jit(s, tpath, pid, "not saved with the "
					"spool; modified during the recording");
			else
				fprintf(stderr, "spulse: %s not used: modified "
					"outside the recording (JIT frames of "
					"pid %u stay hex)\n", tpath, pid);
		}
	}
	free(saved.v);
	free(tmp.v);
	free(used.v);
}

static const struct jit_sym *jit_lookup(struct symbolizer *s, uint64_t addr,
					const struct jit_map **map)
{
	if (!s->jit_loaded)
		load_jits(s);
	for (size_t i = 0; i < s->njits; i++) {
		const struct jit_sym *j = jit_map_lookup(&s->jits[i], addr);

		if (j) {
			*map = &s->jits[i];
			return j;
		}
	}
	return NULL;
}

/* ---- frames --------------------------------------------------------- */

static int set_label_n(struct symbolizer *s, struct sym_frame *sf,
		       const char *text, size_t len)
{
	int64_t lid = strtab_intern_n(&s->labels, text, len);

	if (lid < 0)
		return -ENOMEM;
	sf->label = strtab_str(&s->labels, (uint32_t)lid);
	sf->label_len = len;
	sf->label_id = (uint32_t)lid;
	return 0;
}

static int set_label(struct symbolizer *s, struct sym_frame *sf,
		     const char *text)
{
	return set_label_n(s, sf, text, strlen(text));
}

/*
 * The Debian package that installed @path, from dpkg's file lists
 * (/var/lib/dpkg/info/PKG[:ARCH].list, one path a line; with merged /usr
 * a file may be listed under /bin or /lib): its name into @pkg, or false.
 */
static bool owning_package(const char *path, char *pkg, size_t len)
{
	const char *alt = !strncmp(path, "/usr/", 5) ? path + 4 : NULL;
	DIR *d = opendir("/var/lib/dpkg/info");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *lp, *buf = NULL, *line;
		FILE *f;
		size_t cap = 0;
		ssize_t got;

		if (n < 6 || strcmp(e->d_name + n - 5, ".list"))
			continue;
		if (asprintf(&lp, "/var/lib/dpkg/info/%s", e->d_name) < 0)
			break;
		f = fopen(lp, "re");
		free(lp);
		if (!f)
			continue;
		while ((got = getline(&buf, &cap, f)) > 0) {
			line = buf;
			if (line[got - 1] == '\n')
				line[got - 1] = 0;
			if (!strcmp(line, path) || (alt && !strcmp(line, alt))) {
				snprintf(pkg, len, "%.*s", (int)(n - 5),
					 e->d_name);
				pkg[strcspn(pkg, ":")] = 0;
				found = true;
				break;
			}
		}
		free(buf);
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * An address of a stripped module stayed hex: say once per module what
 * would name it (its package's debug symbols, or debuginfod).
 */
static void stripped_hint(struct symbolizer *s, struct mod_entry *e)
{
	char pkg[256];
	const char *path;

	e->hinted = true;
	if (!sym_mod_stripped(e->m))
		return;
	path = sym_mod_path(e->m);
	if (path && owning_package(path, pkg, sizeof(pkg)))
		fprintf(stderr, "spulse: %s is stripped: install the debug "
			"symbols of package %s (%s-dbgsym from the debug "
			"archive, or the -dbg package of its source)%s to name "
			"its addresses\n", e->msg, pkg, pkg,
			s->dopts.debuginfod ? "; debuginfod had none" :
			", or set DEBUGINFOD_URLS");
	else
		fprintf(stderr, "spulse: %s is stripped: install its debug "
			"symbols (the -dbgsym or -dbg package of the package "
			"that ships it)%s to name its addresses\n", e->msg,
			s->dopts.debuginfod ? "; debuginfod had none" :
			", or set DEBUGINFOD_URLS");
}

static int resolve_module(struct symbolizer *s, const struct spulse_frame *f,
			  struct sym_frame *sf, char **lbl, size_t *lbl_len)
{
	struct spulse_module m;
	struct mod_entry *e;
	struct sym_loc loc = { 0 };
	uint64_t va, show = f->addr;
	bool brackets;

	if (spulse_defs_module(s->defs, f->module, &m) < 0)
		return -ENOENT;
	e = module_entry(s, &m);
	if (!e)
		return -ENOMEM;
	sf->dso = e->display;
	sf->dso_len = e->display_len;
	sf->build_id = e->bid;
	sf->build_id_mismatch = e->info.mismatch;
	if (e->m && sym_mod_lookup(e->m, f->addr, s->srcline, &loc) == 0) {
		sf->func = func_name(s, loc.name);
		if (!sf->func)
			return -ENOMEM;
		sf->func_off = loc.off;
	}
	if (loc.file) {
		sf->file = intern(s, loc.file);
		sf->line = loc.line;
		if (!sf->file)
			return -ENOMEM;
	}
	brackets = sf->dso_len && sf->dso[0] == '[';
	if (e->m && !sf->func && !e->hinted)
		stripped_hint(s, e);
	/* unresolved: the address addr2line -e FILE takes (the ELF vaddr of
	 * the file offset) when the file is there, else the file offset */
	if (e->m && sym_mod_elf_addr(e->m, f->addr, &va)) {
		sf->has_elf_addr = true;
		sf->elf_addr = va;
		if (!sf->func)
			show = va;
	}
	if (sf->func) {
		*lbl = strdup(sf->func);
		*lbl_len = *lbl ? strlen(*lbl) : 0;
	} else {
		/* "0x... [PATH]" with every byte of the path */
		char head[32];
		int hl = snprintf(head, sizeof(head), brackets ? "0x%llx " :
				  "0x%llx [", (unsigned long long)show);
		size_t n = (size_t)hl + sf->dso_len + !brackets;

		*lbl = malloc(n + 1);
		if (*lbl) {
			memcpy(*lbl, head, (size_t)hl);
			memcpy(*lbl + hl, sf->dso, sf->dso_len);
			if (!brackets)
				(*lbl)[n - 1] = ']';
			(*lbl)[n] = 0;
			*lbl_len = n;
		}
	}
	return *lbl ? 0 : -ENOMEM;
}

static int resolve_kernel(struct symbolizer *s, uint32_t id,
			  const struct spulse_frame *f, struct sym_frame *sf,
			  char **lbl)
{
	const struct kallsyms *tab;
	const struct ksym *k = NULL;

	sf->dso = "[kernel.kallsyms]";
	if (!s->ksyms_tried)
		load_ksyms(s);
	tab = ksyms_for(s, id);
	if (tab)
		k = kallsyms_lookup(tab, f->addr);
	if (!k)
		return 0;
	sf->func = k->name;
	sf->func_off = f->addr - k->addr;
	if (k->module) {
		char *d;

		if (asprintf(&d, "[%s]", k->module) < 0)
			return -ENOMEM;
		sf->dso = intern(s, d);
		free(d);
		if (!sf->dso)
			return -ENOMEM;
	}
	*lbl = strdup(k->name);
	return *lbl ? 0 : -ENOMEM;
}

/* @sf->dso's length, for the NUL-terminated names other than a module
 * path (kernel, JIT map, [unknown]) */
static void dso_len_of_cstr(struct sym_frame *sf)
{
	if (sf->dso && !sf->dso_len)
		sf->dso_len = strlen(sf->dso);
}

static int resolve(struct symbolizer *s, uint32_t id, struct sym_frame *sf)
{
	struct spulse_frame f;
	char hex[32], *lbl = NULL;
	const char *text = hex;
	size_t lbl_len = 0;
	int rc = 0;

	if (spulse_defs_frame(s->defs, id, &f) < 0)
		return -ENOENT;
	memset(sf, 0, sizeof(*sf));
	sf->kind = f.kind;
	sf->addr = f.addr;
	sf->dso = "[unknown]";
	switch (f.kind) {
	case SPULSE_FRAME_MODULE:
		rc = resolve_module(s, &f, sf, &lbl, &lbl_len);
		break;
	case SPULSE_FRAME_KERNEL:
		rc = resolve_kernel(s, id, &f, sf, &lbl);
		if (lbl)
			lbl_len = strlen(lbl);
		break;
	case SPULSE_FRAME_TRUNCATED:
		sf->dso = "";
		text = "[truncated]";
		break;
	case SPULSE_FRAME_USER: {
		const struct jit_map *map = NULL;
		const struct jit_sym *j = jit_lookup(s, f.addr, &map);

		if (j) {
			sf->func = func_name(s, j->name);
			sf->dso = intern(s, map->path);
			if (!sf->func || !sf->dso)
				return -ENOMEM;
			sf->func_off = f.addr - j->start;
			text = sf->func;
			break;
		}
	}
		/* fall through */
	default:
		break;
	}
	if (rc < 0) {
		free(lbl);
		return rc;
	}
	if (f.kind != SPULSE_FRAME_MODULE)
		dso_len_of_cstr(sf);
	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)f.addr);
	/* whole names, whatever their length (C++ templates run to KBs) */
	rc = lbl ? set_label_n(s, sf, lbl, lbl_len) : set_label(s, sf, text);
	free(lbl);
	return rc;
}

const struct sym_frame *symbolizer_frame(struct symbolizer *s, uint32_t id)
{
	struct frame_entry *c = frame_entry(s, id);

	if (!c)
		return NULL;
	if (!c->done) {
		if (resolve(s, id, &c->sf) < 0)
			return NULL;
		c->done = true;
	}
	return &c->sf;
}

static int build_chain(struct symbolizer *s, uint32_t id,
		       struct frame_entry *c)
{
	struct sym_loc *v = NULL;
	struct spulse_frame f;
	struct spulse_module m;
	struct mod_entry *e;
	int n;

	if (spulse_defs_frame(s->defs, id, &f) < 0 ||
	    f.kind != SPULSE_FRAME_MODULE ||
	    spulse_defs_module(s->defs, f.module, &m) < 0)
		return 0;
	e = module_entry(s, &m);
	if (!e)
		return -ENOMEM;
	if (!e->m)
		return 0;
	n = sym_mod_inlines(e->m, f.addr, &v);
	if (n <= 1) {
		free(v);
		return n < 0 ? n : 0;
	}
	c->chain = calloc((size_t)n, sizeof(*c->chain));
	if (!c->chain) {
		free(v);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct sym_frame *x = &c->chain[i];

		*x = c->sf;
		x->inlined = v[i].inlined;
		x->file = v[i].file ? intern(s, v[i].file) : NULL;
		x->line = x->file ? v[i].line : 0;
		if (i < n - 1) {
			x->func = v[i].name ? func_name(s, v[i].name) : NULL;
			x->func_off = 0;
			if (!x->func)
				x->func = "[inlined]";
			if (set_label(s, x, x->func) < 0) {
				free(v);
				return -ENOMEM;
			}
		}
	}
	c->nchain = (uint32_t)n;
	free(v);
	return 0;
}

uint32_t symbolizer_inline_chain(struct symbolizer *s, uint32_t frame_id,
				 const struct sym_frame **chain)
{
	struct frame_entry *c;

	*chain = symbolizer_frame(s, frame_id);
	if (!*chain)
		return 0;
	c = frame_entry(s, frame_id);
	if (!s->inl)
		return 1;
	if (!c->chain_done) {
		if (build_chain(s, frame_id, c) < 0) {
			*chain = NULL;
			return 0;
		}
		c->chain_done = true;
	}
	if (!c->chain)
		return 1;
	*chain = c->chain;
	return c->nchain;
}

int64_t symbolizer_label_id(struct symbolizer *s, uint32_t id)
{
	const struct sym_frame *sf = symbolizer_frame(s, id);

	return sf ? (int64_t)sf->label_id : -1;
}

const char *symbolizer_label(const struct symbolizer *s, uint32_t label_id)
{
	return strtab_str(&s->labels, label_id);
}

size_t symbolizer_label_len(const struct symbolizer *s, uint32_t label_id)
{
	return strtab_len(&s->labels, label_id);
}

int symbolizer_label_cmp(const struct symbolizer *s, uint32_t a, uint32_t b)
{
	size_t la = strtab_len(&s->labels, a), lb = strtab_len(&s->labels, b);
	int d = memcmp(strtab_str(&s->labels, a), strtab_str(&s->labels, b),
		       la < lb ? la : lb);

	return d ? d : (la > lb) - (la < lb);
}

uint32_t symbolizer_label_count(const struct symbolizer *s)
{
	return (uint32_t)s->labels.n;
}

int64_t symbolizer_intern_label(struct symbolizer *s, const char *text)
{
	return strtab_intern(&s->labels, text);
}

int64_t symbolizer_intern_label_n(struct symbolizer *s, const char *text,
				  size_t len)
{
	return strtab_intern_n(&s->labels, text, len);
}
