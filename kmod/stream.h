/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session's per-CPU SPULSE streams (stream.c): the relay channel whose
 * debugfs files cpuN hold them, and the write of one built batch into the
 * current CPU's stream.
 */
#ifndef SPULSE_KMOD_STREAM_H
#define SPULSE_KMOD_STREAM_H

#include <linux/percpu.h>
#include <linux/relay.h>

#include "spulse.h"
#include "percpu.h"
#include "relay.h"

int spulse_stream_open(void);
void spulse_stream_close(void);
void spulse_stream_flush(void);

/**
 * spulse_batch_put() - write a CPU's built batch into its relay buffer
 * @c: this CPU's state (c->batch built by a spulse_batch_build*())
 *
 * One reservation; when the buffer is full the encoder is rolled back
 * (spulse_batch_rollback()), so nothing unwritten is ever referenced. The
 * caller commits on success and counts the drop otherwise. A CPU without a
 * relay buffer (relay_open() or its hotplug callback did not create one)
 * is a refused write too, also counted in relay_no_buffer.
 *
 * Return: true when written.
 */
static inline bool spulse_batch_put(struct spulse_cpu *c)
{
	struct rchan_buf *buf = *this_cpu_ptr(spulse.chan->buf);

	if (unlikely(!buf))
		c->stats.relay_no_buffer++;
	else if (spulse_relay_put(buf, c->batch.buf, c->batch.len))
		return true;
	spulse_batch_rollback(&c->enc, &c->batch);
	return false;
}

#endif /* SPULSE_KMOD_STREAM_H */
