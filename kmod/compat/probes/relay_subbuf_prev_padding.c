// SPDX-License-Identifier: GPL-2.0
/*
 * relay's subbuf_start callback has a prev_padding argument (gone in 7.x).
 */
#include <linux/relay.h>

static int spulse_probe_start(struct rchan_buf *buf, void *subbuf,
			      void *prev_subbuf, size_t prev_padding)
{
	return 1;
}

static struct rchan_callbacks spulse_probe_cb __maybe_unused = {
	.subbuf_start = spulse_probe_start,
};
