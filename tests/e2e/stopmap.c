// SPDX-License-Identifier: GPL-2.0
/*
 * Target of the latency suite's stop run (tests/e2e/guest-latency.sh
 * run_stop): static, so it runs in the guest's own root, outside the
 * /host chroot. Prints "pid N", waits until DIR/go exists, maps FILE
 * executable (a new module for spulse.ko's meta scans), creates
 * DIR/mapped and sleeps until killed (at most 60 s).
 *
 * usage: stopmap DIR FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	char go[4096], done[4096];
	struct stat st;
	void *m;
	int fd, i;

	if (argc != 3) {
		fprintf(stderr, "usage: stopmap DIR FILE\n");
		return 2;
	}
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
	fd = open(done, O_WRONLY | O_CREAT, 0644);
	if (fd < 0) {
		perror(done);
		return 1;
	}
	close(fd);
	nap_ms(60000);
	return 0;
}
