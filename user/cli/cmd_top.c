/* SPDX-License-Identifier: MIT */
/*
 * spulse top: a live top-N of the functions in the last few seconds of a
 * spool that is being written (spulse record, spulse-drain, any Recorder),
 * read incrementally with libspulse's Tail.
 *
 * Every refresh: poll the Tail until it has nothing new, keep the samples
 * whose time is within --window of the newest one (a ring of
 * {time, thread, stack}), count them per leaf stack, then per function
 * (self = leaf, total = anywhere on the stack, once per sample) and draw.
 * On a terminal the screen is redrawn in place and 'q' (or ^C) quits with
 * the terminal restored; otherwise each refresh is printed as a block
 * (batch mode, as top -b). The symbolizer is rebuilt when the spool has
 * defined new frames or modules since the last refresh (it sizes its
 * caches by the definitions it saw when made).
 *
 * With no FILE, top records by itself: it spawns `spulse record -o TMP
 * [-p PID]` (this binary, /proc/self/exe; SPULSE_TOP_RECORD_CMD names
 * another program taking the same arguments, for tests) into a private
 * mkdtemp directory, tails TMP, and on quit stops the recorder with SIGTERM
 * (SIGKILL after 10 s), reaps it and removes the directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "drain/thp.h"
#include "sym/symbolize.h"

int cmd_top(int argc, char **argv);

static const char top_help[] =
"NAME\n"
"    spulse top - live top functions of a spool while it is being written\n"
"\n"
"SYNOPSIS\n"
"    spulse top [-p PID,..] [-n N] [-w SECONDS] [-i SECONDS]\n"
"               [--iterations N] [--kallsyms PATH] [--symfs DIR] [FILE]\n"
"\n"
"DESCRIPTION\n"
"    Follows FILE as spulse record, spulse-drain or any libspulse Recorder\n"
"    appends to it (libspulse Tail: complete records only, an unfinished\n"
"    final record waits for its bytes) and shows, refreshed every\n"
"    --interval, the functions of the samples in the last --window seconds\n"
"    (by the spool's sample clock, up to the newest sample): self = the\n"
"    function is the leaf, total = it is anywhere on the stack (once per\n"
"    sample), as counts and % of the window's samples, each row marked k\n"
"    (kernel) or u (user) and followed by its module's file name. The\n"
"    second header line gives the window's sample count (naming the --pid\n"
"    filter when one is set), the samples read since the last refresh and\n"
"    the total so far; when FILE has not grown for a second or more, it\n"
"    says for how long (the writer stopped, or is idle). Lines are cut to\n"
"    the terminal's width (in batch mode, to $COLUMNS when set).\n"
"    Symbolization as spulse report (module files, FILE.kallsyms, --symfs).\n"
"\n"
"    On a terminal the screen is redrawn in place; q (or Ctrl-C) quits and\n"
"    restores the terminal. Otherwise (a pipe, a file) every refresh is\n"
"    printed as one block, ending with an empty line.\n"
"\n"
"    Without FILE, top records by itself: it runs spulse record -o TMP\n"
"    (with -p PID when exactly one PID is given; else the whole system,\n"
"    filtered by --pid) in the background, TMP being a file in a private\n"
"    directory made by mkdtemp under $TMPDIR (default /tmp), and follows\n"
"    TMP. The recorder needs what spulse record needs (root, spulse.ko);\n"
"    its messages go to a log in that directory, printed when it fails.\n"
"    On quit the recorder is stopped with SIGTERM (as Ctrl-C stops\n"
"    spulse record; SIGKILL after 10 s), waited for, and the directory\n"
"    with TMP and its sidecars is removed.\n"
"\n"
"OPTIONS\n"
"    -p, --pid PID,..    only samples of these processes\n"
"    -n, --top N         rows (default: what fits the terminal, else 20)\n"
"    -w, --window SECS   seconds of samples counted (default 5)\n"
"    -i, --interval SECS refresh period (default 1; at least 0.05)\n"
"    --iterations N      quit after N refreshes (default 0 = until q)\n"
"    --kallsyms PATH     kernel symbols (default: FILE.kallsyms when present)\n"
"    --symfs DIR         look module files up under DIR first (DIR/PATH)\n"
"    -h, --help          this text\n"
"\n"
"EXAMPLES\n"
"    spulse record -F 999 -o app.spulse -p 1234 -d 60 &\n"
"    spulse top app.spulse\n"
"    spulse top -w 2 -i 0.5 -n 15 app.spulse\n"
"    spulse top --iterations 1 app.spulse     (one block, then exit)\n"
"    spulse top -p 1234                       (records pid 1234 itself)\n"
"\n"
"EXIT STATUS\n"
"    0 quit by q, ^C or --iterations, 1 unreadable or corrupt FILE (the\n"
"    error names the byte offset) or the recorder (no FILE) failed,\n"
"    2 usage error.\n";

struct top_sample {
	int64_t time_ns;
	uint32_t thread;
	uint32_t stack;
};

struct top {
	const char *file;
	struct spulse_tail *tail;
	const struct spulse_defs *defs;
	struct symbolizer *sym;
	const char *kallsyms, *symfs;
	char *def_kallsyms;
	uint32_t sym_frames, sym_modules;	/* defs when sym was made */
	/* --pid */
	uint32_t *pids;
	size_t npids;
	uint8_t *thread_ok;	/* per thread id: 0 unknown, 1 yes, 2 no */
	uint32_t thread_cap;
	/* the window: a ring of samples */
	struct top_sample *ring;
	size_t head, len, cap;
	int64_t newest;
	uint64_t total_read, new_read;
	/* per refresh */
	uint64_t *stack_count;	/* per stack id in the window */
	uint32_t stack_cap;
	uint64_t *self, *incl;	/* per label id */
	uint32_t *stamp;	/* per label id: the stack last counted */
	uint32_t *frame_of;	/* per label id: a frame with that label */
	uint32_t label_cap;
	/* is the writer still writing? (the file's size, per refresh) */
	long long last_size;
	struct timespec last_growth;
	unsigned idle_refreshes;
	uint32_t *order;
	/* options */
	int64_t window_ns;
	double interval;
	unsigned long rows, iterations;
	bool tty_out;
};

static volatile sig_atomic_t stop;
static struct termios saved_tio;
static bool tio_saved;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void restore_tty(void)
{
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
		tio_saved = false;
	}
}

static bool pid_ok(struct top *t, uint32_t thread)
{
	struct spulse_thread th;
	size_t i;

	if (!t->npids)
		return true;
	if (thread >= t->thread_cap) {
		uint32_t nc = t->thread_cap ? t->thread_cap : 64;
		uint8_t *n;

		while (nc <= thread)
			nc *= 2;
		n = realloc(t->thread_ok, nc);
		if (!n)
			return false;
		memset(n + t->thread_cap, 0, nc - t->thread_cap);
		t->thread_ok = n;
		t->thread_cap = nc;
	}
	if (!t->thread_ok[thread]) {
		t->thread_ok[thread] = 2;
		if (spulse_defs_thread(t->defs, thread, &th) == 0)
			for (i = 0; i < t->npids; i++)
				if (th.pid == t->pids[i])
					t->thread_ok[thread] = 1;
	}
	return t->thread_ok[thread] == 1;
}

static int ring_push(struct top *t, const struct spulse_sample *s)
{
	if (t->len == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 4096, i;
		struct top_sample *n = malloc(nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (i = 0; i < t->len; i++)
			n[i] = t->ring[(t->head + i) % t->cap];
		free(t->ring);
		t->ring = n;
		t->head = 0;
		t->cap = nc;
	}
	t->ring[(t->head + t->len) % t->cap] = (struct top_sample){
		s->time_ns, s->thread, s->stack };
	t->len++;
	return 0;
}

/* Read everything new; drop samples older than the window. */
static int top_poll(struct top *t)
{
	const struct spulse_sample *s;
	struct spulse_error err = { 0 };
	int n, i;

	t->new_read = 0;
	do {
		n = spulse_tail_poll(t->tail, &s, &err);
		if (n < 0) {
			restore_tty();
			cli_print_read_error(t->file, n, &err);
			return EXIT_INVALID;
		}
		for (i = 0; i < n; i++) {
			t->total_read++;
			t->new_read++;
			if (s[i].time_ns > t->newest)
				t->newest = s[i].time_ns;
			if (!pid_ok(t, s[i].thread))
				continue;
			if (ring_push(t, &s[i]) < 0)
				goto oom;
		}
	} while (n > 0);
	/* samples may arrive slightly out of order: drop from the front
	 * while it is out of the window (a late old sample ages out with
	 * its neighbours) */
	while (t->len && t->ring[t->head].time_ns < t->newest - t->window_ns) {
		t->head = (t->head + 1) % t->cap;
		t->len--;
	}
	return EXIT_OK;
oom:
	restore_tty();
	fprintf(stderr, "spulse: out of memory\n");
	return EXIT_INVALID;
}

static int grow_u64(uint64_t **v, uint32_t *cap, uint32_t need)
{
	uint32_t nc = *cap ? *cap : 1024;
	uint64_t *n;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	n = realloc(*v, nc * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + *cap, 0, (nc - *cap) * sizeof(*n));
	*v = n;
	*cap = nc;
	return 0;
}

/* (Re)make the symbolizer when new frames or modules were defined. */
static int ensure_symbolizer(struct top *t)
{
	uint32_t nf = spulse_defs_count(t->defs, SPULSE_TAG_FRAME);
	uint32_t nm = spulse_defs_count(t->defs, SPULSE_TAG_MODULE);

	if (t->sym && nf == t->sym_frames && nm == t->sym_modules)
		return 0;
	symbolizer_free(t->sym);
	t->sym = symbolizer_new(t->defs, t->kallsyms ? t->kallsyms :
				t->def_kallsyms);
	if (!t->sym)
		return -ENOMEM;
	symbolizer_set_symfs(t->sym, t->symfs);
	symbolizer_set_spool(t->sym, t->file, spulse_tail_info(t->tail)->start_us);
	t->sym_frames = nf;
	t->sym_modules = nm;
	return 0;
}

static const struct top *sort_ctx;

static int cmp_rows(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct top *t = sort_ctx;

	if (t->self[x] != t->self[y])
		return t->self[x] > t->self[y] ? -1 : 1;
	if (t->incl[x] != t->incl[y])
		return t->incl[x] > t->incl[y] ? -1 : 1;
	return symbolizer_label_cmp(t->sym, x, y);
}

static unsigned long screen_rows(const struct top *t)
{
	struct winsize ws;

	if (t->rows)
		return t->rows;
	if (t->tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_row > 4)
		return ws.ws_row - 4;
	return 20;
}

/* Terminal width on a terminal, else $COLUMNS when set, else 0 (no limit). */
static unsigned screen_cols(const struct top *t)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (t->tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col > 0)
		return ws.ws_col;
	if (env && *env) {
		long v = strtol(env, NULL, 10);

		if (v > 0 && v < 100000)
			return (unsigned)v;
	}
	return 0;
}

/* One line, cut to @cols characters (bytes; 0: whole) so that a narrow
 * terminal never wraps it and the screen keeps its layout. */
__attribute__((format(printf, 3, 4)))
static void put_line(FILE *f, unsigned cols, const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (cols && (unsigned)n > cols)
		line[cols] = 0;
	fputs(line, f);
	fputc('\n', f);
	free(line);
}

/* The module column: the file name of a module path, [kernel.kallsyms],
 * [vdso], ... as they are; "" when unknown. */
static const char *module_name(const char *dso)
{
	const char *b;

	if (!dso || !*dso || !strcmp(dso, "[unknown]"))
		return "";
	if (dso[0] == '[')
		return dso;
	b = strrchr(dso, '/');
	return b && b[1] ? b + 1 : dso;
}

static double since(const struct timespec *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) +
	       (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * Two header lines: the file (and the quit hint), then the window's
 * counts with the active filters named, and, when the file has not grown
 * for at least 1 s over two refreshes, how long it has been idle (the
 * writer stopped, or has nothing to write).
 */
static void draw_header(struct top *t, FILE *f, unsigned cols)
{
	char filt[96] = "", idle[80] = "";
	struct stat st;
	size_t i, o = 0;

	if (!stat(t->file, &st) && st.st_size != t->last_size) {
		t->last_size = st.st_size;
		clock_gettime(CLOCK_MONOTONIC, &t->last_growth);
		t->idle_refreshes = 0;
	} else {
		t->idle_refreshes++;
	}
	if (t->idle_refreshes >= 2 && since(&t->last_growth) >= 1.0)
		snprintf(idle, sizeof(idle), "; no new data for %.1f s "
			 "(writer stopped?)", since(&t->last_growth));
	if (t->npids) {
		o = (size_t)snprintf(filt, sizeof(filt), " of pid%s ",
				     t->npids > 1 ? "s" : "");
		for (i = 0; i < t->npids && o < sizeof(filt) - 16; i++)
			o += (size_t)snprintf(filt + o, sizeof(filt) - o,
					      "%s%u", i ? "," : "", t->pids[i]);
		if (i < t->npids)
			snprintf(filt + o, sizeof(filt) - o, ",...");
	}
	put_line(f, cols, "spulse top %s%s", t->file,
		 t->tty_out ? "   (q quits)" : "");
	put_line(f, cols, "%zu samples%s in the last %.1f s, +%llu new, %llu "
		 "read%s", t->len, filt, (double)t->window_ns / 1e9,
		 (unsigned long long)t->new_read,
		 (unsigned long long)t->total_read, idle);
}

static int top_draw(struct top *t)
{
	uint32_t nstacks = spulse_defs_count(t->defs, SPULSE_TAG_STACK);
	uint32_t nlabels, i, nrows = 0, stamp_id = 0;
	unsigned long rows = screen_rows(t), r;
	unsigned cols = screen_cols(t);
	bool narrow = cols && cols < 80;
	size_t k;
	FILE *f = stdout;

	if (ensure_symbolizer(t) < 0 ||
	    grow_u64(&t->stack_count, &t->stack_cap, nstacks ? nstacks : 1))
		goto oom;
	memset(t->stack_count, 0, t->stack_cap * sizeof(*t->stack_count));
	for (k = 0; k < t->len; k++) {
		uint32_t st = t->ring[(t->head + k) % t->cap].stack;

		if (st < nstacks)
			t->stack_count[st]++;
	}
	/* labels are interned lazily: first pass interns, then size */
	for (i = 0; i < nstacks; i++) {
		struct spulse_stack s;
		uint32_t id = i;

		if (!t->stack_count[i])
			continue;
		while (id != SPULSE_NONE &&
		       spulse_defs_stack(t->defs, id, &s) == 0) {
			if (symbolizer_label_id(t->sym, s.frame) < 0)
				goto oom;
			id = s.parent;
		}
	}
	nlabels = symbolizer_label_count(t->sym);
	if (nlabels > t->label_cap) {
		uint32_t nc = nlabels;
		uint64_t *a = realloc(t->self, nc * sizeof(*a));

		if (!a)
			goto oom;
		t->self = a;
		a = realloc(t->incl, nc * sizeof(*a));
		if (!a)
			goto oom;
		t->incl = a;
		{
			uint32_t *o = realloc(t->order, nc * sizeof(*o));

			if (!o)
				goto oom;
			t->order = o;
			o = realloc(t->stamp, nc * sizeof(*o));
			if (!o)
				goto oom;
			t->stamp = o;
			o = realloc(t->frame_of, nc * sizeof(*o));
			if (!o)
				goto oom;
			t->frame_of = o;
		}
		t->label_cap = nc;
	}
	if (t->label_cap) {	/* none yet: a spool just begun */
		memset(t->self, 0, t->label_cap * sizeof(*t->self));
		memset(t->incl, 0, t->label_cap * sizeof(*t->incl));
		memset(t->stamp, 0xff, t->label_cap * sizeof(*t->stamp));
	}
	for (i = 0; i < nstacks; i++) {
		struct spulse_stack s;
		uint64_t c = t->stack_count[i];
		uint32_t id = i;
		bool leaf = true;

		if (!c)
			continue;
		stamp_id = i;
		while (id != SPULSE_NONE &&
		       spulse_defs_stack(t->defs, id, &s) == 0) {
			int64_t l = symbolizer_label_id(t->sym, s.frame);

			if (l < 0)
				break;
			t->frame_of[l] = s.frame;
			if (leaf)
				t->self[l] += c;
			leaf = false;
			if (t->stamp[l] != stamp_id) {	/* once per stack */
				t->stamp[l] = stamp_id;
				t->incl[l] += c;
			}
			id = s.parent;
		}
	}
	for (i = 0; i < nlabels; i++)
		if (t->incl[i])
			t->order[nrows++] = i;
	sort_ctx = t;
	if (nrows)	/* t->order is NULL until a label exists */
		qsort(t->order, nrows, sizeof(*t->order), cmp_rows);

	if (t->tty_out)
		fputs("\033[H\033[2J", f);
	draw_header(t, f, cols);
	/* under 80 columns the counts go, the percentages stay */
	if (narrow)
		put_line(f, cols, "  self%%  total%%    function [module]");
	else
		put_line(f, cols, "   self%%      self   total%%     total    "
			 "function [module]");
	for (r = 0; r < rows && r < nrows; r++) {
		uint32_t l = t->order[r];
		const struct sym_frame *sf = symbolizer_frame(t->sym,
							      t->frame_of[l]);
		double n = t->len ? (double)t->len : 1;
		/* an unresolved label already names its module */
		const char *mod = sf && sf->func ? module_name(sf->dso) : "";
		bool br = *mod && mod[0] != '[';
		char nums[64];

		if (narrow)
			snprintf(nums, sizeof(nums), "%6.2f%% %6.2f%%",
				 100.0 * (double)t->self[l] / n,
				 100.0 * (double)t->incl[l] / n);
		else
			snprintf(nums, sizeof(nums),
				 "%7.2f%% %9llu %7.2f%% %9llu",
				 100.0 * (double)t->self[l] / n,
				 (unsigned long long)t->self[l],
				 100.0 * (double)t->incl[l] / n,
				 (unsigned long long)t->incl[l]);
		const char *lab = symbolizer_label(t->sym, l);
		/* spool text by the one printing rule (docs/CLI.md) */
		char *elab = cli_text_dup(lab, symbolizer_label_len(t->sym, l));
		char *emod = cli_text_dup(mod, strlen(mod));

		if (!elab || !emod) {
			free(elab);
			free(emod);
			goto oom;
		}
		put_line(f, cols, "%s  %s %s%s%s%s%s", nums,
			 sf && sf->kind == SPULSE_FRAME_KERNEL ? "k" : "u",
			 elab, *mod ? " " : "", br ? "[" : "", emod,
			 br ? "]" : "");
		free(elab);
		free(emod);
	}
	if (!t->tty_out)
		fputc('\n', f);
	fflush(f);
	return EXIT_OK;
oom:
	restore_tty();
	fprintf(stderr, "spulse: out of memory\n");
	return EXIT_INVALID;
}

/* Wait up to the refresh interval for a key; true when q was pressed. */
static bool wait_key(struct top *t, bool tty_in)
{
	int ms = (int)(t->interval * 1000);
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec ts;

	if (!tty_in) {
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		return false;
	}
	if (poll(&pfd, 1, ms) > 0 && (pfd.revents & POLLIN)) {
		char c[64];
		ssize_t n = read(STDIN_FILENO, c, sizeof(c)), i;

		for (i = 0; i < n; i++)
			if (c[i] == 'q' || c[i] == 'Q' || c[i] == 3)
				return true;
	}
	return false;
}

/* ---- recording by itself (no FILE) --------------------------------- */

struct rec {
	pid_t pid;		/* the recorder, 0 none */
	char *dir, *file, *log;
	bool thp_changed;	/* drain_thp_disable() in top: undo in the child */
};

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			char *p;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0) {
				unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Spawn the recorder into a private directory; 0 or EXIT_INVALID. */
static int rec_start(struct rec *r, const struct top *t)
{
	const char *tmp = getenv("TMPDIR"), *cmd = getenv("SPULSE_TOP_RECORD_CMD");
	char pidbuf[16], *argv[8];
	int n = 0, fd;

	if (asprintf(&r->dir, "%s/spulse-top.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		r->dir = NULL;
		return EXIT_INVALID;
	}
	if (!mkdtemp(r->dir)) {
		fprintf(stderr, "spulse top: mkdtemp %s: %s\n", r->dir,
			strerror(errno));
		free(r->dir);
		r->dir = NULL;
		return EXIT_INVALID;
	}
	if (asprintf(&r->file, "%s/top.spulse", r->dir) < 0 ||
	    asprintf(&r->log, "%s/record.log", r->dir) < 0)
		return EXIT_INVALID;
	argv[n++] = cmd && *cmd ? (char *)cmd : "spulse";
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = r->file;
	if (t->npids == 1) {
		snprintf(pidbuf, sizeof(pidbuf), "%u", t->pids[0]);
		argv[n++] = "-p";
		argv[n++] = pidbuf;
	}
	argv[n] = NULL;
	fflush(NULL);
	r->pid = fork();
	if (r->pid < 0) {
		r->pid = 0;
		fprintf(stderr, "spulse top: fork: %s\n", strerror(errno));
		return EXIT_INVALID;
	}
	if (!r->pid) {
		/* the recorder starts with THP as top found it (spulse record
		 * opts out itself, and gives its command back that value) */
		drain_thp_child_restore(r->thp_changed);
		/* own process group: the terminal's ^C reaches top only, and
		 * top stops the recorder; no terminal input or output */
		setpgid(0, 0);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, STDIN_FILENO);
		fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (cmd && *cmd)
			execvp(cmd, argv);
		else
			execv("/proc/self/exe", argv);
		fprintf(stderr, "spulse top: exec %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	setpgid(r->pid, r->pid);
	return EXIT_OK;
}

static void rec_print_log(const struct rec *r)
{
	char buf[4096];
	FILE *f = fopen(r->log, "r");
	size_t n;

	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

/* Has the recorder exited? Its status goes to *status. */
static bool rec_exited(struct rec *r, int *status)
{
	if (!r->pid)
		return true;
	if (waitpid(r->pid, status, WNOHANG) == r->pid) {
		r->pid = 0;
		return true;
	}
	return false;
}

/* Stop and reap the recorder (SIGTERM, SIGKILL after 10 s), remove TMP. */
static void rec_stop(struct rec *r)
{
	int status, i;

	if (r->pid) {
		kill(r->pid, SIGTERM);
		for (i = 0; i < 1000 && waitpid(r->pid, &status, WNOHANG) == 0;
		     i++) {
			struct timespec ts = { 0, 10000000L };

			nanosleep(&ts, NULL);
		}
		if (i == 1000) {
			kill(r->pid, SIGKILL);
			waitpid(r->pid, &status, 0);
		}
		r->pid = 0;
	}
	if (r->dir)
		rm_tree(r->dir);
	free(r->dir);
	free(r->file);
	free(r->log);
	memset(r, 0, sizeof(*r));
}

/* Wait (up to 60 s, q or ^C) until the recorder's spool has a header. */
static int rec_open(struct rec *r, struct top *t,
		    const struct spulse_read_opts *ro, struct spulse_error *err)
{
	int rc = -ENOENT, status = 0, i;

	for (i = 0; i < 600 && !stop; i++) {
		struct timespec ts = { 0, 100000000L };

		if (!access(r->file, F_OK)) {
			rc = spulse_tail_open(r->file, ro, &t->tail, err);
			if (rc == 0)
				return EXIT_OK;
		}
		if (rec_exited(r, &status)) {
			fprintf(stderr, "spulse top: the recorder exited (%s %d) "
				"before writing a spool; its output:\n",
				WIFEXITED(status) ? "status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status)
						  : WTERMSIG(status));
			rec_print_log(r);
			return EXIT_INVALID;
		}
		nanosleep(&ts, NULL);
	}
	if (!stop) {
		fprintf(stderr, "spulse top: no spool from the recorder after 60 s"
			"; its output:\n");
		rec_print_log(r);
	}
	(void)rc;
	return EXIT_INVALID;
}

static int parse_pids(struct top *t, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;

	if (!dup)
		return EXIT_INVALID;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		uint32_t *n;

		if (!cli_parse_u64("--pid", tok, &v) || v > UINT32_MAX) {
			free(dup);
			return EXIT_USAGE;
		}
		n = realloc(t->pids, (t->npids + 1) * sizeof(*n));
		if (!n) {
			free(dup);
			return EXIT_INVALID;
		}
		t->pids = n;
		t->pids[t->npids++] = (uint32_t)v;
	}
	free(dup);
	if (!t->npids)
		return cli_usage_error("top", "--pid needs a process id");
	return EXIT_OK;
}

static bool parse_secs(const char *opt, const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 86400) {
		fprintf(stderr, "spulse top: bad value for %s: '%s' (seconds, "
			"at least %g)\n", opt, s, min);
		return false;
	}
	*out = v;
	return true;
}

static void top_free(struct top *t)
{
	symbolizer_free(t->sym);
	if (t->tail)
		spulse_tail_close(t->tail);
	free(t->def_kallsyms);
	free(t->pids);
	free(t->thread_ok);
	free(t->ring);
	free(t->stack_count);
	free(t->self);
	free(t->incl);
	free(t->stamp);
	free(t->frame_of);
	free(t->order);
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "top", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'I' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct spulse_read_opts ro = { .sz = sizeof(ro) };
	struct spulse_error err = { 0 };
	struct top t = { .interval = 1.0, .window_ns = 5000000000LL,
			 .last_size = -1 };
	struct sigaction sa;
	struct rec rec = { 0 };
	unsigned long it = 0;
	bool tty_in;
	double w = 5;
	uint64_t v;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:n:w:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			rc = parse_pids(&t, optarg);
			if (rc) {
				top_free(&t);
				return rc;
			}
			break;
		case 'n':
			if (!cli_parse_u64("--top", optarg, &v) || !v ||
			    v > 100000) {
				top_free(&t);
				return cli_usage_error("top", "--top must be "
						       "1..100000");
			}
			t.rows = (unsigned long)v;
			break;
		case 'w':
			if (!parse_secs("--window", optarg, 0.001, &w)) {
				top_free(&t);
				return EXIT_USAGE;
			}
			t.window_ns = (int64_t)(w * 1e9);
			break;
		case 'i':
			if (!parse_secs("--interval", optarg, 0.05, &t.interval)) {
				top_free(&t);
				return EXIT_USAGE;
			}
			break;
		case 'I':
			if (!cli_parse_u64("--iterations", optarg, &v)) {
				top_free(&t);
				return EXIT_USAGE;
			}
			t.iterations = (unsigned long)v;
			break;
		case 'k': t.kallsyms = optarg; break;
		case 'S': t.symfs = optarg; break;
		case 'h':
			fputs(top_help, stdout);
			top_free(&t);
			return EXIT_OK;
		default:
			top_free(&t);
			return cli_usage_error("top", "bad option");
		}
	}
	if (argc - optind > 1) {
		top_free(&t);
		return cli_usage_error("top", "expected at most one FILE");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* top's own memory (symbolizer, sample ring) stays out of THP as a
	 * recorder's does (docs/DRAIN.md "The recorder's memory and THP") */
	rec.thp_changed = drain_thp_disable();
	if (argc == optind) {
		rc = rec_start(&rec, &t);
		if (!rc)
			rc = rec_open(&rec, &t, &ro, &err);
		if (rc) {
			rec_stop(&rec);
			top_free(&t);
			return rc;
		}
		t.file = rec.file;
	} else {
		t.file = argv[optind];
		rc = spulse_tail_open(t.file, &ro, &t.tail, &err);
		if (rc < 0) {
			cli_print_read_error(t.file, rc, &err);
			top_free(&t);
			return EXIT_INVALID;
		}
	}
	t.defs = spulse_tail_defs(t.tail);
	/* the recorder writes TMP.kallsyms after TMP: name it anyway (it is
	 * read on the first kernel frame) */
	if (!t.kallsyms && rec.file && asprintf(&t.def_kallsyms, "%s.kallsyms",
						rec.file) < 0)
		t.def_kallsyms = NULL;
	else if (!t.kallsyms && !rec.file)
		t.def_kallsyms = symbolizer_default_kallsyms(t.file);
	t.tty_out = isatty(STDOUT_FILENO);
	tty_in = isatty(STDIN_FILENO);
	if (tty_in && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
			tio_saved = true;
	}
	rc = EXIT_OK;
	while (!stop) {
		rc = top_poll(&t);
		if (rc)
			break;
		rc = top_draw(&t);
		if (rc)
			break;
		if (t.iterations && ++it >= t.iterations)
			break;
		if (wait_key(&t, tty_in))
			break;
	}
	restore_tty();
	if (t.tty_out && rc == EXIT_OK)
		fputc('\n', stdout);
	top_free(&t);
	rec_stop(&rec);
	return rc;
}
