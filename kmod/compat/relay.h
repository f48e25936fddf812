/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: relay callbacks.
 *
 * spulse_relay_cb_const - qualifier of a struct rchan_callbacks handed to
 *	relay_open(): const where relay_open() takes it const; nothing where
 *	it writes defaults into the caller's struct (5.10: a const struct in
 *	rodata oopses there).
 * SPULSE_SUBBUF_START_PARAMS - the subbuf_start callback's parameters
 *	(the last one, prev_padding, is gone in 7.x).
 */
#ifndef SPULSE_COMPAT_RELAY_H
#define SPULSE_COMPAT_RELAY_H

#include <linux/relay.h>

#include "features.h"

#ifdef SPULSE_HAVE_RELAY_CONST_CALLBACKS
#define spulse_relay_cb_const const
#else
#define spulse_relay_cb_const
#endif

#ifdef SPULSE_HAVE_RELAY_SUBBUF_PREV_PADDING
#define SPULSE_SUBBUF_START_PARAMS struct rchan_buf *buf, void *subbuf, \
	void *prev_subbuf, size_t prev_padding
#else
#define SPULSE_SUBBUF_START_PARAMS struct rchan_buf *buf, void *subbuf, \
	void *prev_subbuf
#endif

#endif /* SPULSE_COMPAT_RELAY_H */
