// SPDX-License-Identifier: GPL-2.0
/*
 * iouring [SECONDS] — keeps io_uring's io-wq workers busy: 1 MiB reads of
 * /dev/zero submitted with IOSQE_ASYNC (always punted to a worker thread,
 * "iou-wrk-TID"), 8 in flight, for SECONDS (default 3). Raw syscalls, no
 * liburing. Prints "iouring pid N" first and "iouring done N reads" last.
 * The workers share the process's mm but never run in user mode: their
 * saved user registers are the creator's with ip = sp = 0, which a
 * profiler must not walk (docs/KERNEL.md, "The stack of one sample").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define QD	8
#define BUFSZ	(1 << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0;
	struct io_uring_params p;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned long reads = 0;
	char *sq, *cq, *buf;
	int ring, zero, i, inflight = 0;

	printf("iouring pid %d\n", getpid());
	fflush(stdout);
	memset(&p, 0, sizeof(p));
	ring = syscall(__NR_io_uring_setup, QD, &p);
	zero = open("/dev/zero", O_RDONLY);
	buf = malloc((size_t)QD * BUFSZ);
	if (ring < 0 || zero < 0 || !buf) {
		perror("iouring: setup");
		return 1;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*cqes),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		perror("iouring: mmap");
		return 1;
	}
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	cq_head = (unsigned *)(cq + p.cq_off.head);
	cq_tail = (unsigned *)(cq + p.cq_off.tail);
	cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	t0 = now();
	while (now() - t0 < secs || inflight) {
		unsigned tail = *sq_tail, n = 0;

		while (inflight + n < QD && now() - t0 < secs) {
			unsigned idx = tail & *sq_mask;
			struct io_uring_sqe *e = &sqes[idx];

			memset(e, 0, sizeof(*e));
			e->opcode = IORING_OP_READ;
			e->flags = IOSQE_ASYNC;
			e->fd = zero;
			e->addr = (unsigned long)(buf + (size_t)idx % QD * BUFSZ);
			e->len = BUFSZ;
			e->user_data = idx;
			sq_array[idx] = idx;
			tail++;
			n++;
		}
		__atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, ring, n, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
			perror("iouring: enter");
			return 1;
		}
		inflight += n;
		for (i = 0;; i++) {
			unsigned head = *cq_head;

			if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE))
				break;
			if (cqes[head & *cq_mask].res != BUFSZ) {
				fprintf(stderr, "iouring: read %d\n",
					cqes[head & *cq_mask].res);
				return 1;
			}
			__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
			inflight--;
			reads++;
		}
	}
	printf("iouring done %lu reads\n", reads);
	return 0;
}
