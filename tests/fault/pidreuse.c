// SPDX-License-Identifier: GPL-2.0
/*
 * Pid-reuse helper of the fault campaign (tests/fault/guest-debug.sh),
 * built static for the debug kernel's bare initramfs:
 *
 *   pidreuse range LO HI PROG ARGS...   start PROG under the first pid in
 *                                       [LO, HI); print it; do not wait
 *   pidreuse at PID PROG ARGS...        start PROG under pid PID (once the
 *                                       pid counter comes round to it),
 *                                       wait for it; print the fork count
 *
 * Children are made with vfork() (no mm copy: a few thousand per second
 * even under KASAN and TCG); a child whose pid is not the one wanted exits
 * at once, the wanted one execs PROG. Gives up after MAX_FORKS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FORKS 200000

int main(int argc, char **argv)
{
	long lo, hi, n;
	char **prog;
	pid_t p;
	int st;

	if (argc >= 5 && !strcmp(argv[1], "range")) {
		lo = atol(argv[2]);
		hi = atol(argv[3]);
		prog = argv + 4;
	} else if (argc >= 4 && !strcmp(argv[1], "at")) {
		lo = atol(argv[2]);
		hi = lo + 1;
		prog = argv + 3;
	} else {
		fprintf(stderr, "usage: pidreuse range LO HI PROG ARGS... | at PID PROG ARGS...\n");
		return 2;
	}
	for (n = 1; n <= MAX_FORKS; n++) {
		p = vfork();
		if (p < 0) {
			perror("pidreuse: vfork");
			return 1;
		}
		if (p == 0) {
			pid_t me = getpid();

			if (me >= lo && me < hi)
				execv(prog[0], prog);
			_exit(127);
		}
		if (p >= lo && p < hi) {
			printf("%d %ld\n", (int)p, n);
			fflush(stdout);
			if (hi != lo + 1)
				return 0;
			if (waitpid(p, &st, 0) != p)
				return 1;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		}
		waitpid(p, &st, 0);
	}
	fprintf(stderr, "pidreuse: no pid in [%ld, %ld) after %d forks\n", lo, hi, MAX_FORKS);
	return 1;
}
