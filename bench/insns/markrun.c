// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-insns: run a workload between two markers.
 *
 * usage: markrun [-c SRC DST] CMD [ARGS...]
 *
 * Executes the marker instruction `xchg %bx,%bx` (66 87 db), forks and
 * execs CMD, waits for it, executes the marker again and exits with CMD's
 * status (127 if it could not be started, 128+N if killed by signal N).
 * The TCG plugin (bench/insns/insns.c) snapshots the instruction counts at
 * both markers, so the window between them holds the workload's own run
 * exactly: under a profiler, markrun is the profiled command, started after
 * the profiler's start-up, and the profiler's teardown begins only when
 * markrun exits. Both markers execute whatever happens, so the host can
 * pair snapshots with runs by count.
 * -c SRC DST: after the second marker, copy the file SRC to DST (the
 * profiler's stats while it still runs; outside the window).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void marker(void)
{
	__asm__ volatile(".byte 0x66, 0x87, 0xdb" ::: "rbx", "memory");
}

static void copy(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0) {
		perror(src);
		return;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		perror(dst);
		close(in);
		return;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			perror(dst);
			break;
		}
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	const char *src = NULL, *dst = NULL;
	int status = 0, rc;
	pid_t pid;

	if (argc > 3 && !strcmp(argv[1], "-c")) {
		src = argv[2];
		dst = argv[3];
		argv += 3;
		argc -= 3;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: markrun [-c SRC DST] CMD [ARGS...]\n");
		marker();
		marker();
		return 2;
	}
	marker();
	pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (pid < 0)
		perror("fork");
	else
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	marker();
	if (src)
		copy(src, dst);
	if (pid < 0)
		return 127;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return rc;
}
