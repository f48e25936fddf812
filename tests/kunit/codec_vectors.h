/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Adapter between codec_test.c and the shared varint vector table
 * tests/vectors/varint_vectors.h (also used by the userspace unit tests, so
 * kernel and userspace codecs are held to the same bytes).
 */
#ifndef SPULSE_KUNIT_CODEC_VECTORS_H
#define SPULSE_KUNIT_CODEC_VECTORS_H

#include "../vectors/varint_vectors.h"

#define KV_N_UVAR		ARRAY_SIZE(kv_uvar)
#define KV_UVAR_VALUE(i)	(kv_uvar[i].v)
#define KV_UVAR_LEN(i)		(kv_uvar[i].len)
#define KV_UVAR_BYTES(i)	(kv_uvar[i].b)
#define KV_N_SVAR		ARRAY_SIZE(kv_svar)
#define KV_SVAR_VALUE(i)	(kv_svar[i].v)
#define KV_SVAR_LEN(i)		(kv_svar[i].len)
#define KV_SVAR_BYTES(i)	(kv_svar[i].b)
#define KV_N_BAD		ARRAY_SIZE(kv_bad)
#define KV_BAD_LEN(i)		(kv_bad[i].len)
#define KV_BAD_BYTES(i)		(kv_bad[i].b)
#define KV_BAD_STATUS(i)	(kv_bad[i].status)

#endif
