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
	SPULSE_TAG_EXT = 9,		/* length-prefixed extension record */
};

#define SPULSE_TAG_MIN		1
#define SPULSE_TAG_MAX		9

/*
 * Extension kinds (uvar after tag 9, then a uvar payload length). Readers
 * validate the kinds they know and skip the others by length
 * (docs/FORMAT.md section 3.10). Kind 0 is reserved (corruption).
 */
enum spulse_ext_kind {
	SPULSE_EXT_CPU = 1,		/* samples that follow ran on this CPU */
	SPULSE_EXT_OFFCPU = 2,		/* one closed off-CPU interval */
	SPULSE_EXT_TRIGGER = 3,		/* flight-recorder trigger mark */
	SPULSE_EXT_IDENTITY = 4,	/* recording identity (host, ids) */
	SPULSE_EXT_THREAD_SOURCE = 5,	/* a thread belongs to a source */
};

#define SPULSE_EXT_KIND_MAX_KNOWN	5
#define SPULSE_EXT_MAX_KIND	0xffffffffU	/* kind is a u32 */
#define SPULSE_EXT_MAX_LEN	4096	/* payload bytes */
#define SPULSE_MAX_CPU		65536	/* cpu fields are < this */
#define SPULSE_MAX_TRIGGER_TEXT	256
/* Identity records (kind 4): sources per spool and field limits. */
#define SPULSE_MAX_SOURCES	65536	/* source fields are < this */
#define SPULSE_RECORDING_ID_LEN	16	/* raw bytes (UUID v4) */
#define SPULSE_MAX_HOST		255
#define SPULSE_MAX_MACHINE_ID	64
#define SPULSE_MAX_BOOT_ID	64
#define SPULSE_MAX_KERNEL	255

/*
 * Off-CPU states: the kernel's task_state_index() order ("RSDTtXZPI").
 * 0 = preempted while runnable (no blocked time, no waker).
 */
enum spulse_offcpu_state {
	SPULSE_STATE_RUNNABLE = 0,	/* R: preempted */
	SPULSE_STATE_SLEEPING = 1,	/* S: interruptible sleep */
	SPULSE_STATE_DISK = 2,		/* D: uninterruptible */
	SPULSE_STATE_STOPPED = 3,	/* T */
	SPULSE_STATE_TRACED = 4,	/* t */
	SPULSE_STATE_DEAD = 5,		/* X */
	SPULSE_STATE_ZOMBIE = 6,	/* Z */
	SPULSE_STATE_PARKED = 7,	/* P */
	SPULSE_STATE_IDLE = 8,		/* I: idle kernel thread */
};

#define SPULSE_STATE_MAX	8

/* Trigger reasons (extension kind 3). */
enum spulse_trigger_reason {
	SPULSE_TRIGGER_MANUAL = 1,	/* debugfs "trigger" */
	SPULSE_TRIGGER_SIGNAL = 2,	/* SIGUSR1 to spulse record */
	SPULSE_TRIGGER_OFFCPU = 3,	/* a target thread off-CPU > threshold */
	SPULSE_TRIGGER_RUNQ = 4,	/* run-queue delay > threshold */
};

#define SPULSE_TRIGGER_REASON_MAX	4

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
#define SPULSE_VARINT_MAX	10	/* a u64 varint */
#define SPULSE_VARINT32_MAX	5	/* a varint holding a u32 (ids, pids) */
#define SPULSE_MAX_STRING	4096	/* module path */
#define SPULSE_MAX_COMM		64	/* thread comm (readers enforce it) */
#define SPULSE_MAX_BUILD_ID	64
#define SPULSE_MAX_DEPTH	1024
#define SPULSE_MAX_ID		0xfffffffeU
/*
 * Sample and event times are offsets from the profile start; the absolute
 * time start_us * 1000 + offset must fit in an i64 of epoch nanoseconds
 * (year 2262), so start_us is at most INT64_MAX / 1000 and no offset
 * exceeds INT64_MAX - start_us * 1000 (docs/FORMAT.md 3.6).
 */
#define SPULSE_MAX_START_US	9223372036854775ULL

/* Largest header: magic + two u64 varints. */
#define SPULSE_HEADER_MAX	(SPULSE_MAGIC_LEN + 2 * SPULSE_VARINT_MAX)

/*
 * Largest encodings of each record that a reader accepts (ids and pids are
 * u32: 5 bytes; a length <= 4096: 2 bytes; <= 127: 1 byte), for sizing
 * scratch buffers. Encoders never write more for any argument values.
 */
#define SPULSE_SAMPLE_MAX	(1 + SPULSE_VARINT_MAX + 2 * SPULSE_VARINT32_MAX)
#define SPULSE_FRAME_REC_MAX	(1 + SPULSE_VARINT32_MAX + 1 + \
				 SPULSE_VARINT32_MAX + SPULSE_VARINT_MAX)
#define SPULSE_STACK_REC_MAX	(1 + 3 * SPULSE_VARINT32_MAX)
#define SPULSE_THREAD_REC_MAX	(1 + 3 * SPULSE_VARINT32_MAX + 1 + \
				 SPULSE_MAX_COMM)
/* 1 + 5 + 5 + 3 * 10 + 2 + 4096 + 1 + 64 = 4204 */
#define SPULSE_MODULE_REC_MAX	(1 + 2 * SPULSE_VARINT32_MAX + \
				 3 * SPULSE_VARINT_MAX + 2 + \
				 SPULSE_MAX_STRING + 1 + SPULSE_MAX_BUILD_ID)
/* Extension records: tag + kind (u32) + length (<= 4096: 2 bytes) + payload. */
#define SPULSE_EXT_HDR_MAX	(1 + 5 + 2)
#define SPULSE_EXT_REC_MAX	(SPULSE_EXT_HDR_MAX + SPULSE_EXT_MAX_LEN)
/* cpu: one uvar; off-CPU interval: at most 11 varints (a bound, not exact). */
#define SPULSE_EXT_CPU_MAX	(SPULSE_EXT_HDR_MAX + SPULSE_VARINT_MAX)
#define SPULSE_EXT_OFFCPU_PAYLOAD_MAX	(11 * SPULSE_VARINT_MAX)
#define SPULSE_EXT_OFFCPU_MAX	(SPULSE_EXT_HDR_MAX + \
				 SPULSE_EXT_OFFCPU_PAYLOAD_MAX)
/*
 * The largest record of the format, 4,204 bytes: a module with a
 * 4096-byte path, a 64-byte build-id and 10-byte addresses (an extension
 * record is at most 4,104). docs/FORMAT.md section 4 quotes this value.
 */
#define SPULSE_MAX_RECORD	SPULSE_MODULE_REC_MAX

#endif /* SPULSE_FORMAT_H */
