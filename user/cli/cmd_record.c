// SPDX-License-Identifier: MIT
/*
 * spulse record: load spulse.ko (finit_module) unless it is loaded, drain
 * its debugfs files into one spool in process (user/drain, DRAIN_A), run or
 * attach to the target, stop on target exit, Ctrl-C or duration, unload what
 * was loaded here, print a summary.
 *
 * For `-- CMD ARGS` the child is forked first and waits on a pipe, so its
 * pid is known when the module is loaded with target_pid=; it is released to
 * exec only once the drainer has written `start`.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "drain/drain.h"
#include "drain/drain_ucut.h"
#include "drain/iface.h"
#include "drain/thp.h"
#include "drain/unwind_load.h"
#include "unwind_build.h"

#define DEBUGFS_ROOT	"/sys/kernel/debug"
#define DEBUGFS_MAGIC_NR 0x64626720
#define SYSFS_MODULE	"/sys/module/spulse"

static volatile sig_atomic_t rec_stop, rec_usr1;

static void rec_on_signal(int sig)
{
	(void)sig;
	rec_stop = 1;
}

static void rec_on_usr1(int sig)
{
	(void)sig;
	rec_usr1++;
}

static void rec_usage(FILE *f)
{
	fprintf(f,
"NAME\n"
"    spulse record - record a process or a command with spulse.ko\n"
"\n"
"SYNOPSIS\n"
"    spulse record [-p PID | -- CMD ARGS] [-F HZ] [-o FILE] [-d SECONDS]\n"
"                  [--module PATH] [--event cpu-clock|cycles]\n"
"                  [--unwind auto|fp|tables] [--unwind-cache DIR]\n"
"                  [--no-unwind-tables] [--unwind-wait MS]\n"
"                  [--off-cpu [--offcpu-min-us N]]\n"
"                  [--flight SECONDS [--trigger SPEC]... [--post SECONDS]\n"
"                   [--max-dumps N] [--min-gap SECONDS] [--gen-bytes N]]\n"
"                  [--debugfs DIR] [--kallsyms PATH] [--kallsyms-cache DIR]\n"
"                  [--no-load]\n"
"                  [--module-params 'KEY=VALUE ...'] [-v]\n"
"\n"
"DESCRIPTION\n"
"    Loads spulse.ko (unless it is loaded already) for the target, drains\n"
"    its per-CPU relay files into one SPULSE spool in process, and stops\n"
"    when the target exits, on Ctrl-C/SIGTERM or after the duration; then\n"
"    unloads the module if it loaded it and prints one summary line.\n"
"    With -- CMD the command is forked first and held until recording has\n"
"    started; without -p or CMD the whole system is sampled.\n"
"\n"
"    User stacks: for every executable mapping the module reports, the\n"
"    file's unwind table is built from its .eh_frame/.debug_frame (or read\n"
"    from the cache by build-id), checked against the mapping's build-id\n"
"    and loaded into the module, so code built without frame pointers\n"
"    (Debian's own binaries) unwinds to its entry point. Before sampling\n"
"    starts (and before CMD is released) the tables of CMD's executable,\n"
"    its ELF interpreter and DT_NEEDED libraries (with -p: the process's\n"
"    executable mappings; whole system: every process's) and of the\n"
"    vDSO are loaded; later mappings (dlopen) get theirs from a worker\n"
"    thread, and samples taken before a mapping's table arrives use the\n"
"    frame-pointer walk. docs/UNWIND.md.\n"
"\n"
"OPTIONS\n"
"    -p PID           sample the running process PID (and its threads)\n"
"    -- CMD ARGS      run CMD and sample it (default: the whole system)\n"
"    -F HZ            sampling frequency (default 999)\n"
"    -o FILE          output spool (default spulse.out.spulse); kernel\n"
"                     symbols go to FILE.kallsyms\n"
"    -d SECONDS       stop after SECONDS\n"
"    --module PATH    spulse.ko to load (default: TOP/spulse.ko next to the\n"
"                     binary's directory, else /lib/modules/RELEASE/extra)\n"
"    --event E        cpu-clock (default) or cycles\n"
"    --unwind MODE    user-stack unwinding, the module's unwind= parameter:\n"
"                     auto (the module's default: tables where loaded, the\n"
"                     frame-pointer walk elsewhere), tables (tables only; no\n"
"                     table = truncated) or fp (frame pointers only, as\n"
"                     before tables; no tables are loaded). Applies when\n"
"                     this command loads the module.\n"
"    --unwind-cache DIR  table cache (default $HOME/.cache/spulse/unwind;\n"
"                     \"\" = no cache, build every table)\n"
"    --unwind-wait MS  spend at most MS milliseconds loading tables before\n"
"                     sampling starts (default 3000; 0 = no bound); past\n"
"                     it the rest come from the worker, said on stderr\n"
"    --no-unwind-tables  load no tables (whatever the module already holds\n"
"                     stays; with --unwind auto: frame-pointer stacks)\n"
"    --off-cpu        also record off-CPU intervals (stack at switch-out,\n"
"                     waker and its stack, run-queue delay): offcpu=1\n"
"    --offcpu-min-us N  only intervals at least N us long (offcpu_min_us=)\n"
"    --debugfs DIR    spulse debugfs directory (default %s); when its\n"
"                     control file is refused (EPERM: kernel lockdown under\n"
"                     Secure Boot) or the default one is absent,\n"
"                     " DRAIN_PROCFS_DIR " (the same files) is used instead\n"
"    --kallsyms PATH  kernel symbols saved as FILE.kallsyms (default %s)\n"
"    --kallsyms-cache DIR  keep /proc/kallsyms's text symbols in DIR, keyed\n"
"                     by the boot, the modules (build-id, address) and the\n"
"                     BPF program/link ids, and link FILE.kallsyms to the\n"
"                     cached copy while they are unchanged (default\n"
"                     $HOME/.cache/spulse/kallsyms; \"\" = none)\n"
"    --no-load        do not load/unload the module (use what DIR provides)\n"
"    --module-params 'KEY=VALUE ...'  more spulse.ko parameters for the load\n"
"                     (docs/KERNEL.md), e.g. 'subbuf_size=1048576' or the\n"
"                     debug 'sample_null=1'; not the ones set by the options\n"
"                     above (target_pid, freq, autostart, event, offcpu,\n"
"                     offcpu_min_us, unwind). Bad values fail the load;\n"
"                     unknown keys the kernel ignores (a dmesg warning).\n"
DRAIN_FLIGHT_USAGE
"    With --flight, -o FILE names the dumps (FILE-001.EXT, ...); SIGUSR1 to\n"
"    spulse record triggers a dump.\n"
"    -v, --verbose    say which interface (debugfs or procfs) is used\n"
"    -h, --help       this text\n"
"\n"
"EXAMPLES\n"
"    spulse record -F 999 -o py.spulse -- python3 script.py\n"
"        record a command; whole stacks through python3 and libc\n"
"    spulse record -p 1234 -d 10 -o app.spulse\n"
"        record a running process for 10 seconds\n"
"    spulse record --unwind fp -o fp.spulse -- ./app\n"
"        frame-pointer stacks only (to compare)\n"
"    spulse unwind build /usr/bin/python3.11 -o ~/.cache/spulse/unwind\n"
"        pre-build a table, so the first samples are covered too\n"
"    spulse record --off-cpu --flight 3 --trigger 'offcpu>50ms' -- ./srv\n"
"        keep the last 3 s, write a dump per long off-CPU interval\n"
"\n"
"    The summary line: samples, dropped, file and size (flight: dumps), duration,\n"
"    what stopped the recording, then, when tables were loaded,\n"
"    \"unwind tables N (cache hits H, refused R, failed F)\", and when the\n"
"    module cut user stacks, \"user stacks cut N (no table yet A, ...)\" by\n"
"    cause (docs/KERNEL.md \"User unwinding\").\n"
"\n"
"EXIT STATUS\n"
"    0 recorded; 1 the module could not be loaded, debugfs or the spool\n"
"    could not be used, or the target does not exist; 2 bad usage.\n",
		DRAIN_DEFAULT_DEBUGFS, DRAIN_DEFAULT_KALLSYMS);
}

static int rec_usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "spulse record: %s%s%s\n", msg, arg ? ": " : "",
		arg ? arg : "");
	fprintf(stderr, "try 'spulse record --help'\n");
	return EXIT_USAGE;
}

static bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		return false;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out <= max;
}

/*
 * --module-params: "KEY=VALUE ..." for finit_module(), which parses and
 * checks the values. Refused here: nothing at all, control characters
 * (the kernel's parser would split or end there), and the keys record
 * sets itself (the later one would silently win).
 */
static bool module_params_ok(const char *s, char *msg, size_t len)
{
	static const char *const own[] = {
		"target_pid", "freq", "autostart", "event", "offcpu",
		"offcpu_min_us", "unwind",
	};
	const char *p = s, *k;
	size_t i, n;

	if (!s[strspn(s, " ")]) {
		snprintf(msg, len, "empty --module-params");
		return false;
	}
	for (k = s; *k; k++)
		if ((unsigned char)*k < 0x20 || *k == 0x7f) {
			snprintf(msg, len, "bad --module-params (control "
				 "character at offset %zu)", (size_t)(k - s));
			return false;
		}
	for (;;) {
		p += strspn(p, " ");
		if (!*p)
			break;
		n = strcspn(p, "= ");
		for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			if (strlen(own[i]) == n && !strncmp(p, own[i], n)) {
				snprintf(msg, len, "--module-params: %s is set "
					 "by spulse record (use its option)",
					 own[i]);
				return false;
			}
		p += strcspn(p, " ");
	}
	return true;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Default module path: TOP/spulse.ko for TOP/build/spulse, else extra/. */
static char *default_module(void)
{
	char exe[PATH_MAX], *p, *path = NULL;
	struct utsname u;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		p = strrchr(exe, '/');
		if (p) {
			*p = 0;
			p = strrchr(exe, '/');
			if (p) {
				*p = 0;
				if (asprintf(&path, "%s/spulse.ko",
					     exe[0] ? exe : "") < 0)
					path = NULL;
				if (path && !access(path, R_OK))
					return path;
				free(path);
				path = NULL;
			}
		}
	}
	if (!uname(&u) &&
	    asprintf(&path, "/lib/modules/%s/extra/spulse.ko", u.release) < 0)
		path = NULL;
	return path;
}

static int load_module(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	return ret;
}

static int unload_module(void)
{
	int i;

	/* open debugfs files hold a module reference for a moment */
	for (i = 0; i < 50; i++) {
		if (!syscall(SYS_delete_module, "spulse", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EBUSY)
			return -errno;
		usleep(20000);
	}
	return -EBUSY;
}

static int ensure_debugfs(const char *dir)
{
	struct statfs sf;

	if (!access(dir, F_OK))
		return 0;
	if (statfs(DEBUGFS_ROOT, &sf) == 0 && sf.f_type == DEBUGFS_MAGIC_NR)
		return 0;	/* mounted; the module's directory is missing */
	if (mount("debugfs", DEBUGFS_ROOT, "debugfs", 0, NULL) && errno != EBUSY)
		return -errno;
	return 0;
}

/*
 * Fork @argv stopped on a pipe; returns the pid, *release gets the fd and
 * *status the read end of the child's answer to 't'. The child waits for
 * one byte: 'g' execs at once; 't' first asks to be traced
 * (PTRACE_TRACEME: the kernel then stops it right after the exec, before
 * its first instruction) and answers 'T' (traced) or 'N', then execs.
 * @thp_changed: drain_thp_disable()'s answer in this process: the child
 * puts THP back as the recorder found it, before anything else.
 */
static pid_t fork_stopped(char **argv, int *release, int *status,
			  bool thp_changed)
{
	int p[2], q[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(q[0]);
		close(q[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		ssize_t n;

		drain_thp_child_restore(thp_changed);
		close(p[1]);
		close(q[0]);
		/* named apart from CMD until the exec: flight triggers ignore
		 * this thread's intervals under this name (flight.h) */
		prctl(PR_SET_NAME, DRAIN_FLIGHT_HOLD_COMM, 0, 0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);	/* recording never started */
		if (c == 't') {
			char a = ptrace(PTRACE_TRACEME, 0, NULL, NULL) ? 'N' : 'T';

			if (write(q[1], &a, 1) != 1)
				_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "spulse record: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	close(q[1]);
	*release = p[1];
	*status = q[0];
	return pid;
}

/* AT_ENTRY of @pid (/proc/PID/auxv), 0 if unknown. */
static unsigned long entry_of(pid_t pid)
{
	unsigned long v[2], entry = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "re");
	while (f && fread(v, sizeof(v), 1, f) == 1 && v[0])
		if (v[0] == 9)	/* AT_ENTRY */
			entry = v[1];
	if (f)
		fclose(f);
	return entry;
}

/* Wait for a ptrace stop of @pid; other signals are passed on. */
static int wait_trap(pid_t pid, int *wstatus)
{
	for (;;) {
		int st;

		if (waitpid(pid, &st, 0) != pid) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*wstatus = st;
			return -1;
		}
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
			return 0;
		if (WIFSTOPPED(st) &&
		    ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st)))
			return -1;
	}
}

/*
 * Release the command under ptrace and hold it at its entry point
 * (docs/UNWIND.md "Load timing"): stopped after the exec, run to AT_ENTRY
 * (the dynamic loader has mapped the DT_NEEDED libraries then) by a
 * one-byte breakpoint, which is removed and the IP put back. Returns 1
 * stopped there (or at the exec when the breakpoint could not be set: the
 * caller detaches), 0 not traced (the child is running), -1 the command
 * ended (*wstatus) or tracing failed after the exec (it was killed).
 */
static int hold_at_entry(pid_t child, int release_fd, int status_fd,
			 int *wstatus)
{
	struct user_regs_struct regs;
	unsigned long entry;
	long word;
	char a = 0;
	ssize_t n;

	if (write(release_fd, "t", 1) != 1)
		return 0;
	do
		n = read(status_fd, &a, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || a != 'T')
		return 0;
	if (wait_trap(child, wstatus) < 0)
		return -1;	/* exec failed: the child said why and exited */
	entry = entry_of(child);
	errno = 0;
	word = entry ? ptrace(PTRACE_PEEKTEXT, child, (void *)entry, NULL) : 0;
	if (!entry || errno ||
	    ptrace(PTRACE_POKETEXT, child, (void *)entry,
		   (void *)((word & ~0xffL) | 0xcc)))
		return 1;	/* held at the exec instead */
	if (ptrace(PTRACE_CONT, child, NULL, NULL) ||
	    wait_trap(child, wstatus) < 0) {
		kill(child, SIGKILL);
		waitpid(child, wstatus, 0);
		return -1;
	}
	if (ptrace(PTRACE_POKETEXT, child, (void *)entry, (void *)word) ||
	    ptrace(PTRACE_GETREGS, child, NULL, &regs) ||
	    regs.rip != entry + 1 || (regs.rip = entry,
	    ptrace(PTRACE_SETREGS, child, NULL, &regs))) {
		fprintf(stderr, "spulse record: %s: stopped elsewhere than "
			"its entry point; killed\n", "command");
		kill(child, SIGKILL);
		waitpid(child, wstatus, 0);
		return -1;
	}
	return 1;
}

/* execvp()'s choice of file for @name: a path as is, else $PATH's first. */
static char *find_exe(const char *name)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return strdup(name);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p;) {
		size_t len = strcspn(p, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", len ? (int)len : 1,
			     len ? p : ".", name) < (int)sizeof(buf) &&
		    !access(buf, X_OK)) {
			struct stat sb;

			if (!stat(buf, &sb) && S_ISREG(sb.st_mode))
				return strdup(buf);
		}
		p += len;
		if (*p)
			p++;
	}
	return NULL;
}

/* A script's "#!INTERP" (malloc'd), else NULL. */
static char *shebang(const char *path)
{
	char line[PATH_MAX + 3], *s, *e;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	s = line + 2;
	while (*s == ' ' || *s == '\t')
		s++;
	for (e = s; *e && !isspace((unsigned char)*e); e++)
		;
	*e = 0;
	return *s == '/' ? strdup(s) : NULL;
}

/* Add the executable file mappings of /proc/PID/maps to @v (deduplicated). */
static void proc_files(const char *pid, char ***v, size_t *n, size_t *cap)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char perm[8], *p;
		size_t i;
		int k = 0;

		if (sscanf(line, "%*x-%*x %7s %*s %*s %*s %n", perm, &k) < 1 ||
		    !k || !strchr(perm, 'x'))
			continue;
		p = line + k;
		p[strcspn(p, "\n")] = 0;
		if (*p != '/' || strstr(p, " (deleted)"))
			continue;
		for (i = 0; i < *n && strcmp((*v)[i], p); i++)
			;
		if (i < *n)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			char **nv = realloc(*v, c * sizeof(*nv));

			if (!nv)
				break;
			*v = nv;
			*cap = c;
		}
		(*v)[*n] = strdup(p);
		if ((*v)[*n])
			(*n)++;
	}
	fclose(f);
}

/*
 * Tables before the first sample that needs them (docs/UNWIND.md "Load
 * timing"): for -- CMD the executable (a script's interpreter), its ELF
 * interpreter and DT_NEEDED closure; for -p PID that process's executable
 * mappings; for the whole system every process's; always the vDSO. They
 * are ADDed now, before sampling starts and the command is released, so
 * the loader only has to MAP them when the meta stream reports the
 * mappings. At most @wait_ms is spent (said on stderr when exceeded).
 */
static void preload_tables(const struct drain_opts *o, char **cmd,
			   unsigned long pid, unsigned int wait_ms)
{
	struct drain_unwind_opts uo = { .sz = sizeof(uo) };
	struct drain_unwind_preload_stats ps;
	char **files = NULL, *upath = NULL, *exe = NULL, *interp = NULL;
	size_t n = 0, cap = 0;
	int ret;

	if (asprintf(&upath, "%s/unwind", o->debugfs) < 0)
		return;
	if (access(upath, W_OK)) {
		free(upath);
		return;		/* a module that takes no tables */
	}
	if (cmd) {
		exe = find_exe(cmd[0]);
		ret = exe ? sut_deps(exe, &files, &n) : -ENOENT;
		if (ret == -ENOEXEC && (interp = shebang(exe)))
			ret = sut_deps(interp, &files, &n);
		cap = n;
	} else if (pid) {
		char s[24];

		snprintf(s, sizeof(s), "%lu", pid);
		proc_files(s, &files, &n, &cap);
	} else {
		DIR *dp = opendir("/proc");
		struct dirent *de;

		while (dp && (de = readdir(dp)))
			if (isdigit((unsigned char)de->d_name[0]))
				proc_files(de->d_name, &files, &n, &cap);
		if (dp)
			closedir(dp);
	}
	uo.path = upath;
	uo.cache_dir = o->unwind_cache;
	ret = drain_unwind_preload(&uo, (const char *const *)files, n, true,
				   wait_ms, &ps);
	if (!ret && ps.timed_out)
		fprintf(stderr, "spulse record: unwind: tables still being "
			"built after %u ms (%zu of %zu files loaded); not "
			"waiting for the rest\n", wait_ms, ps.loaded, ps.files);
	if (getenv("SPULSE_UNWIND_TRACE"))
		fprintf(stderr, "spulse record: unwind: preloaded %zu of %zu "
			"tables in %.3f ms\n", ps.loaded, ps.files,
			(double)ps.ns / 1e6);
	sut_deps_free(files, n);
	free(exe);
	free(interp);
	free(upath);
}

static void print_summary(const struct drain_stats *st, const char *ucut,
			  const char *out, double secs, const char *why)
{
	struct stat sb;
	long long size = stat(out, &sb) ? -1 : (long long)sb.st_size;

	printf("spulse record: samples %" PRIu64 ", dropped ", st->samples);
	if (st->kernel_dropped >= 0)
		printf("%" PRId64, st->kernel_dropped);
	else
		printf("unknown");
	if (st->ring_bound)	/* flight mode: the dumps are the output */
		printf(", flight dumps %u (triggers %" PRIu64 ", suppressed %"
		       PRIu64 "), ring at most %" PRIu64 " bytes (bound %"
		       PRIu64 "), duration %.2f s, stopped by %s", st->dumps,
		       st->triggers_fired, st->triggers_suppressed,
		       st->gen_bytes_max, st->ring_bound, secs, why);
	else
		printf(", file %s, size %lld bytes, duration %.2f s, stopped by %s",
		       out, size, secs, why);
	if (st->offcpu)
		printf(", off-CPU intervals %" PRIu64, st->offcpu);
	if (st->unwind)
		printf(", unwind tables %" PRIu64 " (cache hits %" PRIu64
		       ", refused %" PRIu64 ", failed %" PRIu64 ")",
		       st->unwind_loaded, st->unwind_cache_hits,
		       st->unwind_refused, st->unwind_failed);
	printf("%s", ucut);	/* ", user stacks cut N (...)" or "" */
	if (st->stream_errors)
		printf(", %u stream errors", st->stream_errors);
	printf("\n");
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "module", required_argument, NULL, 'M' },
		{ "event", required_argument, NULL, 'E' },
		{ "debugfs", required_argument, NULL, 'D' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "kallsyms-cache", required_argument, NULL, 'k' },
		{ "no-load", no_argument, NULL, 'N' },
		{ "off-cpu", no_argument, NULL, 'O' },
		{ "offcpu-min-us", required_argument, NULL, 'U' },
		{ "unwind", required_argument, NULL, 'W' },
		{ "unwind-cache", required_argument, NULL, 'C' },
		{ "no-unwind-tables", no_argument, NULL, 'T' },
		{ "unwind-wait", required_argument, NULL, 'X' },
		{ "module-params", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		DRAIN_FLIGHT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct drain_opts o = {
		.debugfs = DRAIN_DEFAULT_DEBUGFS,
		.kallsyms = DRAIN_DEFAULT_KALLSYMS,
		.output = "spulse.out.spulse",
		.sync_ms = 1000,
		.window_ms = 100,
		.control = true,
		.unwind_wait_ms = 1000,
	};
	struct sigaction sa, old_int, old_term, old_usr1;
	struct drain_flight_opts fo;
	unsigned long pid_arg = 0, freq = 999, offcpu_min_us = 0;
	unsigned long unwind_wait_ms = 3000;
	bool off_cpu = false, have_min_us = false, any_flight = false;
	sig_atomic_t usr1_seen = 0;
	char msg[256];
	const char *event = "cpu-clock", *why = "?", *unwind = NULL;
	char *module = NULL, *params = NULL;
	const char *more_params = NULL;
	char min_us[40] = "";
	bool no_load = false, loaded = false, target_gone = false;
	bool verbose = false, thp_changed;
	const char *iface_why;
	double duration = -1, t0;
	struct drain_stats st;
	struct drain_ucut ucut_n;
	char ucut[DRAIN_UCUT_TEXT_MAX] = "";
	struct drain *d = NULL;
	char **cmd = NULL;
	pid_t child = -1, target = 0;
	int release_fd = -1, status_fd = -1, c, ret, rc = EXIT_OK, status = 0;
	int held = 0;

	drain_flight_defaults(&fo);
	optind = 0;
	while ((c = getopt_long(argc, argv, "+p:F:o:d:hv", lo, NULL)) != -1) {
		char *end;

		if (c >= DRAIN_FLIGHT_OPT_BASE && c <= DRAIN_OPT_GEN_BYTES) {
			if (drain_flight_option(&fo, c, optarg, msg, sizeof(msg))) {
				free(module);
				return rec_usage_error(msg, NULL);
			}
			any_flight = any_flight || c != DRAIN_OPT_FLIGHT;
			continue;
		}
		switch (c) {
		case 'p':
			if (!parse_ulong(optarg, INT_MAX, &pid_arg) || !pid_arg)
				return rec_usage_error("bad pid", optarg);
			break;
		case 'F':
			if (!parse_ulong(optarg, 1000000, &freq) || !freq)
				return rec_usage_error("bad frequency", optarg);
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(duration >= 0))
				return rec_usage_error("bad duration", optarg);
			break;
		case 'M':
			free(module);
			module = strdup(optarg);
			break;
		case 'E':
			if (strcmp(optarg, "cpu-clock") && strcmp(optarg, "cycles"))
				return rec_usage_error("bad event", optarg);
			event = optarg;
			break;
		case 'D':
			o.debugfs = optarg;
			break;
		case 'K':
			o.kallsyms = optarg;
			break;
		case 'k':
			o.kallsyms_cache = optarg;
			break;
		case 'N':
			no_load = true;
			break;
		case 'W':
			if (strcmp(optarg, "auto") && strcmp(optarg, "fp") &&
			    strcmp(optarg, "tables")) {
				free(module);
				return rec_usage_error("bad --unwind (auto, fp "
						       "or tables)", optarg);
			}
			unwind = optarg;
			break;
		case 'C':
			o.unwind_cache = optarg;
			break;
		case 'T':
			o.no_unwind = true;
			break;
		case 'X':
			if (!parse_ulong(optarg, 600000, &unwind_wait_ms)) {
				free(module);
				return rec_usage_error("bad --unwind-wait "
					"(milliseconds, 0 to 600000)", optarg);
			}
			break;
		case 'O':
			off_cpu = true;
			break;
		case 'P':
			if (!module_params_ok(optarg, msg, sizeof(msg))) {
				free(module);
				return rec_usage_error(msg, optarg);
			}
			more_params = optarg;
			break;
		case 'U':
			if (!parse_ulong(optarg, 10000000, &offcpu_min_us)) {
				free(module);
				return rec_usage_error("bad --offcpu-min-us "
					"(microseconds, 0 to 10000000)", optarg);
			}
			have_min_us = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			rec_usage(stdout);
			free(module);
			return EXIT_OK;
		default:
			free(module);
			return rec_usage_error("bad option", NULL);
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--")) {
			free(module);
			return rec_usage_error("unexpected argument", argv[optind]);
		}
		cmd = argv + optind;
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		free(module);
		return rec_usage_error("no command after --", NULL);
	}
	if (cmd && pid_arg) {
		free(module);
		return rec_usage_error("-p and -- CMD exclude each other", NULL);
	}
	if (more_params && no_load) {
		free(module);
		return rec_usage_error("--module-params needs a load (not "
				       "--no-load)", NULL);
	}
	if (have_min_us && !off_cpu) {
		free(module);
		return rec_usage_error("--offcpu-min-us needs --off-cpu", NULL);
	}
	if (drain_flight_check(&fo, any_flight, msg, sizeof(msg))) {
		free(module);
		return rec_usage_error(msg, NULL);
	}
	for (c = 0; c < (int)fo.nspecs; c++)
		if (!off_cpu && (fo.specs[c].reason == SPULSE_TRIGGER_OFFCPU ||
				 fo.specs[c].reason == SPULSE_TRIGGER_RUNQ)) {
			free(module);
			return rec_usage_error("off-CPU triggers need --off-cpu",
					       fo.specs[c].text);
		}
	if (fo.seconds_ns)
		o.flight = &fo;
	if (unwind && !strcmp(unwind, "fp"))
		o.no_unwind = true;	/* the module would not use them */
	if (pid_arg && kill((pid_t)pid_arg, 0) && errno == ESRCH) {
		fprintf(stderr, "spulse record: no process %lu\n", pid_arg);
		free(module);
		return EXIT_INVALID;
	}

	/* the recorder's memory stays out of THP (docs/DRAIN.md "The
	 * recorder's memory and THP"); the command gets it back */
	thp_changed = drain_thp_disable();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = o.flight ? rec_on_usr1 : SIG_DFL;
	sigaction(SIGUSR1, &sa, &old_usr1);
	rec_stop = 0;
	rec_usr1 = 0;

	target = (pid_t)pid_arg;
	if (cmd) {
		child = fork_stopped(cmd, &release_fd, &status_fd,
				     thp_changed);
		if (child < 0) {
			fprintf(stderr, "spulse record: fork: %s\n", strerror(errno));
			rc = EXIT_INVALID;
			goto out;
		}
		target = child;
		/* its modules before the exec are spulse's own */
		o.unwind_skip_pid = (uint32_t)child;
		/* and so are its off-CPU intervals: no flight trigger */
		fo.hold_pid = (uint32_t)child;
		snprintf(fo.hold_comm, sizeof(fo.hold_comm), "%s",
			 DRAIN_FLIGHT_HOLD_COMM);
	}

	if (!no_load && access(SYSFS_MODULE, F_OK)) {
		if (!module)
			module = default_module();
		if (have_min_us)
			snprintf(min_us, sizeof(min_us), " offcpu_min_us=%lu",
				 offcpu_min_us);
		if (!module || asprintf(&params,
				"target_pid=%d freq=%lu autostart=0 event=%s"
				"%s%s%s%s%s%s", (int)target, freq, event,
				off_cpu ? " offcpu=1" : "",
				unwind ? " unwind=" : "", unwind ? unwind : "",
				min_us, more_params ? " " : "",
				more_params ? more_params : "") < 0) {
			rc = EXIT_INVALID;
			goto out;
		}
		ret = load_module(module, params);
		if (ret < 0) {
			fprintf(stderr, "spulse record: loading %s (%s): %s\n",
				module, params, strerror(-ret));
			rc = EXIT_INVALID;
			goto out;
		}
		loaded = true;
	} else if (!no_load) {
		fprintf(stderr, "spulse record: spulse.ko is already loaded; "
			"its parameters (target, frequency%s%s) are used\n",
			off_cpu ? ", offcpu" : "", unwind ? ", unwind" : "");
		if (more_params)
			fprintf(stderr, "spulse record: --module-params not "
				"applied (%s)\n", more_params);
	}
	if (!no_load) {
		ret = ensure_debugfs(o.debugfs);
		if (ret < 0 && !access(DRAIN_PROCFS_DIR "/control", F_OK)) {
			ret = 0;	/* /proc/spulse does without debugfs */
		} else if (ret < 0) {
			fprintf(stderr, "spulse record: mounting debugfs: %s\n",
				strerror(-ret));
			rc = EXIT_INVALID;
			goto out;
		}
	}
	o.debugfs = drain_iface_pick(o.debugfs, &iface_why);
	if (iface_why || verbose)
		fprintf(stderr, "spulse record: interface %s %s%s%s%s\n",
			drain_iface_name(o.debugfs), o.debugfs,
			iface_why ? " (debugfs: " : "", iface_why ? iface_why : "",
			iface_why ? ")" : "");

	if (!o.no_unwind)
		preload_tables(&o, cmd, pid_arg, (unsigned int)unwind_wait_ms);
	if (!o.no_unwind && release_fd >= 0 && !getenv("SPULSE_RECORD_NO_PTRACE")) {
		/* the command's set in the kernel before its first sample */
		held = hold_at_entry(child, release_fd, status_fd, &status);
		close(release_fd);	/* released (traced or not), or it ended */
		release_fd = -1;
		if (held < 0) {
			child = -1;	/* reaped */
			target_gone = true;
			why = "command exit";
		} else if (held > 0) {
			ret = drain_unwind_preload_map((uint32_t)child);
			if (getenv("SPULSE_UNWIND_TRACE"))
				fprintf(stderr, "spulse record: unwind: command "
					"held at its entry point, %d mappings "
					"sent\n", ret);
		}
	} else if (!o.no_unwind && pid_arg) {
		(void)drain_unwind_preload_map((uint32_t)pid_arg);
	}
	ret = drain_open(&o, &d);	/* writes "start" to control */
	if (held > 0) {
		/* sampling runs (or will not): let the command go */
		if (ptrace(PTRACE_DETACH, child, NULL, NULL))
			fprintf(stderr, "spulse record: releasing the command: "
				"%s\n", strerror(errno));
	}
	if (ret < 0) {
		drain_unwind_preload_drop();
		fprintf(stderr, "spulse record: cannot drain %s: %s\n",
			o.debugfs, strerror(-ret));
		rc = EXIT_INVALID;
		goto out;
	}
	t0 = mono_s();
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1)
			fprintf(stderr, "spulse record: releasing child: %s\n",
				strerror(errno));
		close(release_fd);
		release_fd = -1;
	}
	for (;;) {
		if (held < 0)
			break;	/* the command ended before it ran */
		if (rec_stop) {
			why = "signal";
			break;
		}
		if (duration >= 0 && mono_s() - t0 >= duration) {
			why = "duration";
			break;
		}
		if (child > 0) {
			pid_t w = waitpid(child, &status, WNOHANG);

			if (w == child) {
				child = -1;
				target_gone = true;
				why = "command exit";
				break;
			}
		} else if (target > 0 && kill(target, 0) && errno == ESRCH) {
			target_gone = true;
			why = "target exit";
			break;
		}
		if (drain_step(d, DRAIN_WAKE_MS_DEFAULT) < 0) {
			why = "error";
			break;
		}
		while (usr1_seen != rec_usr1) {
			usr1_seen++;
			drain_flight_signal(d);
		}
		if (drain_inputs_closed(d)) {
			why = "inputs closed";
			break;
		}
	}
	ret = drain_finish(d);	/* writes "stop", drains the rest */
	if (ret < 0) {
		fprintf(stderr, "spulse record: draining: %s\n", strerror(-ret));
		rc = EXIT_INVALID;
	}
	drain_get_stats(d, &st);
	drain_ucut_read(d, &ucut_n);	/* before the module goes */
	drain_ucut_text(&ucut_n, ucut, sizeof(ucut));
	ret = drain_close(d);	/* closes the debugfs files before rmmod */
	d = NULL;
	if (ret < 0 && rc == EXIT_OK) {
		fprintf(stderr, "spulse record: %s: %s\n", o.output,
			strerror(-ret));
		rc = EXIT_INVALID;
	}
	print_summary(&st, ucut, o.output, mono_s() - t0, why);
	if (target_gone && cmd && WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "spulse record: %s exited with status %d\n",
			cmd[0], WEXITSTATUS(status));
out:
	if (release_fd >= 0)
		close(release_fd);	/* child sees EOF and exits 127 */
	if (status_fd >= 0)
		close(status_fd);
	if (child > 0) {
		/* stopped by duration, a signal or an error: end the command
		 * (SIGTERM, then SIGKILL after 2 s) */
		int i;

		kill(child, SIGTERM);
		for (i = 0; i < 200 && waitpid(child, &status, WNOHANG) == 0; i++)
			usleep(10000);
		if (i == 200) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
		}
	}
	if (d)
		drain_close(d);
	if (loaded) {
		ret = unload_module();
		if (ret < 0)
			fprintf(stderr, "spulse record: unloading spulse: %s\n",
				strerror(-ret));
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	free(module);
	free(params);
	return rc;
}
