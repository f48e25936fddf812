// SPDX-License-Identifier: MIT
/*
 * runstat - run one command and append its costs to a file (bench-vm).
 *
 * usage: runstat OUTFILE CMD [ARGS...]
 *
 * Reads the guest's busy CPU time from /proc/stat (user + nice + system +
 * irq + softirq of the "cpu" line), forks and execs CMD, waits for it to
 * exit WITHOUT reaping it (waitid WNOWAIT) so that its /proc/PID/stat still
 * holds the final utime/stime of the process itself (all its threads) and
 * cutime/cstime of the children it reaped, reads /proc/stat again, then
 * reaps it. Appends one line to OUTFILE:
 *
 *   total_s=WALL cpu_s=GUEST_BUSY idle_s=IDLE self_cpu_s=U+S
 *   child_cpu_s=CU+CS rc=RC
 *
 * idle_s is the idle + iowait of all CPUs over the window: under TCG on a
 * loaded host, ticks are lost and the busy fields undercount, while NO_HZ
 * idle time is measured; total_s * CPUs - idle_s is the cross-check.
 * total_s is fork to exit (CLOCK_MONOTONIC). Under a profiler that runs the
 * workload as its child (perf record -- CMD, spulse record -- CMD),
 * self_cpu_s is the profiler's own CPU time and child_cpu_s the
 * workload's. Exits with CMD's exit status (128 + signal if killed).
 * Static, so it runs both in the guest's root and in `chroot /host`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* busy ticks of all CPUs: user nice system (idle iowait) irq softirq;
 * *idle = idle + iowait (NO_HZ: measured, not ticked) */
static long long busy_ticks(long long *idle)
{
	unsigned long long v[7] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return -1;
	*idle = (long long)(v[3] + v[4]);
	return (long long)(v[0] + v[1] + v[2] + v[5] + v[6]);
}

/* utime stime cutime cstime (fields 14-17) of a (zombie) process */
static int proc_times(pid_t pid, long long t[4])
{
	char path[64], buf[4096], *p;
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the comm may hold spaces and ')' */
	if (!p)
		return -1;
	p++;
	/* after ")": field 3 (state) is token 0, field 14 (utime) token 11 */
	for (i = 0; i < 11; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	if (sscanf(p, " %lld %lld %lld %lld", &t[0], &t[1], &t[2], &t[3]) != 4)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	long long c0, c1, i0 = 0, i1 = 0, t[4] = { -1, -1, -1, -1 };
	double hz = (double)sysconf(_SC_CLK_TCK), w0, w1;
	siginfo_t si;
	int status = 0, rc;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: runstat OUTFILE CMD [ARGS...]\n");
		return 2;
	}
	out = fopen(argv[1], "a");
	if (!out) {
		fprintf(stderr, "runstat: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	fflush(stdout);
	c0 = busy_ticks(&i0);
	w0 = mono();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runstat: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		fclose(out);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "runstat: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runstat: waitid: %s\n", strerror(errno));
			return 2;
		}
	}
	w1 = mono();
	c1 = busy_ticks(&i1);
	if (proc_times(pid, t) < 0)
		fprintf(stderr, "runstat: cannot read /proc/%d/stat\n", (int)pid);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) :
	     WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
	fprintf(out, "total_s=%.4f cpu_s=%.2f idle_s=%.2f self_cpu_s=%.2f "
		"child_cpu_s=%.2f rc=%d\n", w1 - w0,
		c0 < 0 || c1 < 0 ? -1.0 : (double)(c1 - c0) / hz,
		c0 < 0 || c1 < 0 ? -1.0 : (double)(i1 - i0) / hz,
		t[0] < 0 ? -1.0 : (double)(t[0] + t[1]) / hz,
		t[2] < 0 ? -1.0 : (double)(t[2] + t[3]) / hz, rc);
	fclose(out);
	return rc;
}
