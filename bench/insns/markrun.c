// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-insns: run a workload between two markers.
 *
 * usage: markrun [-c SRC DST] [-f FLAG] CMD [ARGS...]
 *
 * The profilers profile the process they started (spulse record follows
 * the threads of its target, not its children), so markrun BECOMES the
 * workload: it forks a watcher, executes the marker instruction
 * `xchg %bx,%bx` (66 87 db) and execs CMD in its own pid. The watcher
 * blocks on a pipe whose only write end the workload holds (inherited
 * across exec); the kernel closes it when the workload exits (exit_files,
 * before the parent is notified), and the watcher executes the second
 * marker at once. The TCG plugin (bench/insns/insns.c) snapshots the
 * instruction counts at both markers, so the window between them holds the
 * workload's own run: its exec, work and exit. Both markers execute
 * whatever happens (a failed exec closes the pipe too), so the host can
 * pair snapshots with runs by count.
 * -c SRC DST: before the second marker, copy SRC to DST (spulse.ko's
 * stats while spulse record still has the module loaded; a constant cost).
 * -f FLAG: after the second marker, create the file FLAG (the guest script
 * waits for it before its own next marker).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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
	const char *src = NULL, *dst = NULL, *flag = NULL;
	int p[2], fd;
	char c;
	pid_t pid;

	for (;;) {
		if (argc > 3 && !strcmp(argv[1], "-c")) {
			src = argv[2];
			dst = argv[3];
			argv += 3;
			argc -= 3;
		} else if (argc > 2 && !strcmp(argv[1], "-f")) {
			flag = argv[2];
			argv += 2;
			argc -= 2;
		} else {
			break;
		}
	}
	if (argc < 2 || pipe(p)) {
		fprintf(stderr, argc < 2 ? "usage: markrun [-c SRC DST] [-f FLAG] CMD [ARGS...]\n"
			: "markrun: pipe failed\n");
		marker();
		marker();
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) != 0 && (errno == EINTR || errno == EAGAIN))
			;
		if (src)
			copy(src, dst);
		marker();
		if (flag) {
			fd = open(flag, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		}
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		perror("markrun: fork");
		marker();
		marker();
		return 127;
	}
	marker();
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;	/* the watcher's marker follows the pipe's close at exit */
}
