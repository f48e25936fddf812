// SPDX-License-Identifier: GPL-2.0
/*
 * The session's per-CPU streams: the relay channel "cpu" (files cpuN in
 * the module's debugfs directory, one per CPU that is or was online since
 * load), each CPU's switch count in its struct spulse_cpu, and the flush
 * that runs on each CPU under its busy flag (relay.c does the relay work).
 */
#include <linux/relay.h>

#include "stream.h"

/* the cpuN buffers' switch counts: in each CPU's struct spulse_cpu */
static struct spulse_relay_posref spulse_stream_pos;

/**
 * spulse_stream_open() - create the channel and its cpuN files
 *
 * Return: 0 or -ENOMEM.
 */
int spulse_stream_open(void)
{
	spulse_stream_pos.cpu = &spulse.cpu->rpos;
	spulse.chan = spulse_relay_open_cpus("cpu", spulse.dir,
					     spulse.p.subbuf_size,
					     spulse.p.n_subbufs,
					     &spulse_stream_pos);
	return spulse.chan ? 0 : -ENOMEM;
}

/**
 * spulse_stream_close() - close the channel (removes the files)
 */
void spulse_stream_close(void)
{
	if (spulse.chan)
		relay_close(spulse.chan);
	spulse.chan = NULL;
}

/**
 * spulse_stream_flush() - publish the cpuN streams' partial sub-buffers
 *
 * See spulse_relay_flush_cpus(): each CPU flushes its own buffer holding
 * its sampler's busy flag.
 */
void spulse_stream_flush(void)
{
	spulse_relay_flush_cpus(spulse.chan, &spulse.cpu->busy);
}
