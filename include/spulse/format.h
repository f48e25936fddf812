/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * SPULSE spool format constants. docs/FORMAT.md is the prose for every value
 * here; change both together.
 */
#ifndef SPULSE_FORMAT_H
#define SPULSE_FORMAT_H

#include "types.h"

#define SPULSE_MAGIC		"SPULSE3\0"
#define SPULSE_MAGIC_LEN	8

/* Record tags (one byte at the start of every record). */
enum spulse_tag {
	SPULSE_TAG_MODULE = 1,
	SPULSE_TAG_FRAME = 2,
	SPULSE_TAG_STACK = 3,
	SPULSE_TAG_THREAD = 4,
	SPULSE_TAG_SAMPLE = 5,
	SPULSE_TAG_PYTHON = 6,
	SPULSE_TAG_PROCESS_DEACTIVATE = 7,
	SPULSE_TAG_MODULE_DEACTIVATE = 8,
};

#define SPULSE_TAG_MIN		1
#define SPULSE_TAG_MAX		8

/* Frame kinds (u8 after the frame id). */
enum spulse_frame_kind {
	SPULSE_FRAME_MODULE = 0,	/* module id + file-relative address */
	SPULSE_FRAME_USER = 1,		/* absolute user-mode address */
	SPULSE_FRAME_KERNEL = 2,	/* absolute kernel-mode address */
	SPULSE_FRAME_TRUNCATED = 3,	/* truncated-stack marker, no payload */
};

#define SPULSE_FRAME_KIND_MAX	3

/* Python runtime states. */
#define SPULSE_PYTHON_LEAVE	0
#define SPULSE_PYTHON_ENTER	1

/* Stack node parent field: 0 is the root, otherwise parent id + 1. */
#define SPULSE_STACK_ROOT	0

/* Reader limits (docs/FORMAT.md section 4). */
#define SPULSE_VARINT_MAX	10
#define SPULSE_MAX_STRING	4096
#define SPULSE_MAX_COMM		64
#define SPULSE_MAX_BUILD_ID	64
#define SPULSE_MAX_DEPTH	1024
#define SPULSE_MAX_ID		0xfffffffeU

/* Largest header: magic + two u64 varints. */
#define SPULSE_HEADER_MAX	(SPULSE_MAGIC_LEN + 2 * SPULSE_VARINT_MAX)

/* Largest encodings of each record, for sizing scratch buffers. */
#define SPULSE_SAMPLE_MAX	(1 + 3 * SPULSE_VARINT_MAX)
#define SPULSE_FRAME_REC_MAX	(1 + SPULSE_VARINT_MAX + 1 + 2 * SPULSE_VARINT_MAX)
#define SPULSE_STACK_REC_MAX	(1 + 3 * SPULSE_VARINT_MAX)
#define SPULSE_THREAD_REC_MAX	(1 + 4 * SPULSE_VARINT_MAX + SPULSE_MAX_COMM)
#define SPULSE_MODULE_REC_MAX	(1 + 6 * SPULSE_VARINT_MAX + \
				 SPULSE_MAX_STRING + SPULSE_MAX_BUILD_ID)
#define SPULSE_MAX_RECORD	SPULSE_MODULE_REC_MAX

#endif /* SPULSE_FORMAT_H */
