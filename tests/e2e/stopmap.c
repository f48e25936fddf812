// SPDX-License-Identifier: GPL-2.0
/*
 * Target of the latency suite's stop run (tests/e2e/guest-latency.sh
 * run_stop): static, so it runs in the guest's own root, outside the
 * /host chroot.
 *
 * stopmap DIR FILE ROOT: prints "pid N"; forks the stopper, which
 * chroots into ROOT; waits until DIR/go exists, maps FILE executable (a
 * new module for spulse.ko's meta scans), and at once has the stopper
 * write "stop" to /sys/kernel/debug/spulse/control in its chroot (the
 * stop's last meta scan is the one that finds the mapping); writes the
 * stopper's write(2) result to DIR/stop.rc, creates DIR/mapped and sleeps
 * until killed (at most 60 s). Trace marker lines "spulse-test mapped",
 * "spulse-test stop" when the tracefs is there.
 *
 * stopmap -e ENDFILE: re-executes itself every millisecond (same pid: an
 * exec event for a target_pid recording each time) until ENDFILE exists.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int exec_loop(char **argv)
{
	struct stat st;

	if (stat(argv[2], &st) == 0)
		return 0;
	nap_ms(1);
	execv("/proc/self/exe", argv);
	perror("stopmap: execv");
	return 1;
}

static void marker(const char *text)
{
	int fd = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		perror("stopmap: trace_marker");
	close(fd);
}

/* The stopper: chrooted into @root, writes stop when @rfd is readable. */
static int stopper(const char *root, int rfd)
{
	int ctl, mk;
	char b;

	if (chroot(root) < 0 || chdir("/") < 0) {
		perror("stopmap: chroot");
		return 1;
	}
	mk = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY);
	if (read(rfd, &b, 1) != 1)
		return 1;
	/* opened now: spulse.ko is loaded after this process started */
	ctl = open("/sys/kernel/debug/spulse/control", O_WRONLY);
	if (ctl < 0) {
		perror("stopmap: control in the chroot");
		return 1;
	}
	if (mk >= 0 && write(mk, "spulse-test stop\n", 17) < 0)
		perror("stopmap: trace_marker");
	if (write(ctl, "stop", 4) != 4) {
		perror("stopmap: write stop");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char go[4096], done[4096], rc[4096];
	int fd, i, p[2], status;
	struct stat st;
	pid_t child;
	FILE *f;
	void *m;

	if (argc == 3 && !strcmp(argv[1], "-e"))
		return exec_loop(argv);
	if (argc != 4) {
		fprintf(stderr, "usage: stopmap DIR FILE ROOT | stopmap -e ENDFILE\n");
		return 2;
	}
	if (pipe(p) < 0) {
		perror("stopmap: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("stopmap: fork");
		return 1;
	}
	if (child == 0)
		_exit(stopper(argv[3], p[0]));
	snprintf(go, sizeof(go), "%s/go", argv[1]);
	snprintf(done, sizeof(done), "%s/mapped", argv[1]);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; stat(go, &st) < 0; i++) {
		if (i > 6000) {
			fprintf(stderr, "stopmap: no %s after 60 s\n", go);
			return 1;
		}
		nap_ms(10);
	}
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	m = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("stopmap: mmap");
		return 1;
	}
	marker("spulse-test mapped\n");
	if (write(p[1], "s", 1) != 1 || waitpid(child, &status, 0) != child) {
		perror("stopmap: stopper");
		return 1;
	}
	snprintf(rc, sizeof(rc), "%s/stop.rc", argv[1]);
	f = fopen(rc, "w");
	if (!f) {
		perror(rc);
		return 1;
	}
	fprintf(f, "%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	fclose(f);
	fd = open(done, O_WRONLY | O_CREAT, 0644);
	if (fd < 0) {
		perror(done);
		return 1;
	}
	close(fd);
	nap_ms(60000);
	return 0;
}
