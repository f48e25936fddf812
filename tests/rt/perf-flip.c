// SPDX-License-Identifier: GPL-2.0
/*
 * perf-flip: flip the kernel's perf_sched_events static key without
 * spulse.ko, for tests/rt/patch-race.sh. A per-task perf event (cpu-clock,
 * this thread, any CPU) enables the key, whose jump-label sites sit in the
 * context-switch path (finish_task_switch -> perf_event_task_sched_in,
 * __schedule -> perf_event_task_sched_out); closing it disables the key
 * again about a second later (the kernel defers the decrement). Each
 * enable and disable patches those sites with text_poke_bp (int3 first),
 * as spulse.ko's task-mode events do at load and rmmod.
 *
 * usage: perf-flip HOLD_MS   (open, busy/sleep HOLD_MS, close, exit 0;
 *                            exit 1 with the reason when the open fails)
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	struct timespec ts;
	long ms;
	int fd;

	if (argc != 2 || (ms = strtol(argv[1], NULL, 10)) < 0 || ms > 60000) {
		fprintf(stderr, "usage: perf-flip HOLD_MS (0..60000)\n");
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		fprintf(stderr, "perf-flip: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	close(fd);
	return 0;
}
