/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * SPULSE record encoders, shared by spulse.ko and libspulse. Each writes one
 * complete record (tag included) at @p and returns its length. @p must have
 * room for the record's SPULSE_*_MAX size from format.h. Callers own the
 * rules (dense ids, no forward references); these only lay out bytes.
 */
#ifndef SPULSE_ENCODE_H
#define SPULSE_ENCODE_H

#include "types.h"
#include "format.h"
#include "varint.h"

/**
 * spulse_enc_header() - encode the stream header
 * @p: destination, SPULSE_HEADER_MAX bytes
 * @start_us: profile start, microseconds since the Unix epoch
 * @interval_us: requested sample interval in microseconds
 */
static inline size_t spulse_enc_header(uint8_t *p, uint64_t start_us,
				       uint64_t interval_us)
{
	size_t n = SPULSE_MAGIC_LEN;

	memcpy(p, SPULSE_MAGIC, SPULSE_MAGIC_LEN);
	n += spulse_put_uvar(p + n, start_us);
	n += spulse_put_uvar(p + n, interval_us);
	return n;
}

static inline size_t spulse_put_bytes(uint8_t *p, const void *s, size_t len)
{
	size_t n = spulse_put_uvar(p, len);

	if (len)
		memcpy(p + n, s, len);
	return n + len;
}

/**
 * spulse_enc_module() - encode a module record
 * @p: destination, SPULSE_MODULE_REC_MAX bytes
 * @id: module id
 * @pid: owning process, 0 for the kernel
 * @start: first mapped address
 * @end: one past the last mapped address
 * @file_offset: file offset mapped at @start
 * @path: path bytes, clamped to SPULSE_MAX_STRING
 * @path_len: length of @path
 * @build_id: build-id bytes, clamped to SPULSE_MAX_BUILD_ID
 * @build_id_len: length of @build_id (0 = none)
 */
static inline size_t spulse_enc_module(uint8_t *p, uint32_t id, uint32_t pid,
				       uint64_t start, uint64_t end,
				       uint64_t file_offset,
				       const char *path, size_t path_len,
				       const uint8_t *build_id,
				       size_t build_id_len)
{
	size_t n = 0;

	if (path_len > SPULSE_MAX_STRING)
		path_len = SPULSE_MAX_STRING;
	if (build_id_len > SPULSE_MAX_BUILD_ID)
		build_id_len = SPULSE_MAX_BUILD_ID;
	p[n++] = SPULSE_TAG_MODULE;
	n += spulse_put_uvar(p + n, id);
	n += spulse_put_uvar(p + n, pid);
	n += spulse_put_uvar(p + n, start);
	n += spulse_put_uvar(p + n, end);
	n += spulse_put_uvar(p + n, file_offset);
	n += spulse_put_bytes(p + n, path, path_len);
	n += spulse_put_bytes(p + n, build_id, build_id_len);
	return n;
}

/**
 * spulse_enc_frame_abs() - encode an absolute (user or kernel) frame
 * @p: destination, SPULSE_FRAME_REC_MAX bytes
 * @id: frame id
 * @kind: SPULSE_FRAME_USER or SPULSE_FRAME_KERNEL
 * @addr: absolute address (already normalized)
 */
static inline size_t spulse_enc_frame_abs(uint8_t *p, uint32_t id,
					  uint8_t kind, uint64_t addr)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_FRAME;
	n += spulse_put_uvar(p + n, id);
	p[n++] = kind;
	n += spulse_put_uvar(p + n, addr);
	return n;
}

/**
 * spulse_enc_frame_module() - encode a module-relative frame
 * @p: destination, SPULSE_FRAME_REC_MAX bytes
 * @id: frame id
 * @module: module id
 * @rel: file-relative address
 */
static inline size_t spulse_enc_frame_module(uint8_t *p, uint32_t id,
					     uint32_t module, uint64_t rel)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_FRAME;
	n += spulse_put_uvar(p + n, id);
	p[n++] = SPULSE_FRAME_MODULE;
	n += spulse_put_uvar(p + n, module);
	n += spulse_put_uvar(p + n, rel);
	return n;
}

/**
 * spulse_enc_frame_truncated() - encode the truncated-stack marker frame
 * @p: destination, SPULSE_FRAME_REC_MAX bytes
 * @id: frame id
 */
static inline size_t spulse_enc_frame_truncated(uint8_t *p, uint32_t id)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_FRAME;
	n += spulse_put_uvar(p + n, id);
	p[n++] = SPULSE_FRAME_TRUNCATED;
	return n;
}

/**
 * spulse_enc_stack() - encode a stack node
 * @p: destination, SPULSE_STACK_REC_MAX bytes
 * @id: stack id
 * @parent: parent stack id + 1, or SPULSE_STACK_ROOT
 * @frame: frame id
 */
static inline size_t spulse_enc_stack(uint8_t *p, uint32_t id,
				      uint64_t parent, uint32_t frame)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_STACK;
	n += spulse_put_uvar(p + n, id);
	n += spulse_put_uvar(p + n, parent);
	n += spulse_put_uvar(p + n, frame);
	return n;
}

/**
 * spulse_enc_thread() - encode a thread record
 * @p: destination, SPULSE_THREAD_REC_MAX bytes
 * @id: thread id
 * @pid: process id (tgid)
 * @tid: thread id
 * @comm: command name bytes, clamped to SPULSE_MAX_COMM
 * @comm_len: length of @comm
 */
static inline size_t spulse_enc_thread(uint8_t *p, uint32_t id, uint32_t pid,
				       uint32_t tid, const char *comm,
				       size_t comm_len)
{
	size_t n = 0;

	if (comm_len > SPULSE_MAX_COMM)
		comm_len = SPULSE_MAX_COMM;
	p[n++] = SPULSE_TAG_THREAD;
	n += spulse_put_uvar(p + n, id);
	n += spulse_put_uvar(p + n, pid);
	n += spulse_put_uvar(p + n, tid);
	n += spulse_put_bytes(p + n, comm, comm_len);
	return n;
}

/**
 * spulse_enc_sample() - encode a sample record
 * @p: destination, SPULSE_SAMPLE_MAX bytes
 * @dt_ns: nanoseconds since the previous sample (or the profile start)
 * @thread: thread id
 * @stack: leaf stack id
 */
static inline size_t spulse_enc_sample(uint8_t *p, int64_t dt_ns,
				       uint32_t thread, uint32_t stack)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_SAMPLE;
	n += spulse_put_svar(p + n, dt_ns);
	n += spulse_put_uvar(p + n, thread);
	n += spulse_put_uvar(p + n, stack);
	return n;
}

/**
 * spulse_enc_python() - encode a Python runtime enter/leave record
 * @p: destination, 1 + SPULSE_VARINT_MAX + 1 bytes
 * @pid: process id
 * @enter: SPULSE_PYTHON_ENTER or SPULSE_PYTHON_LEAVE
 */
static inline size_t spulse_enc_python(uint8_t *p, uint32_t pid, uint8_t enter)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_PYTHON;
	n += spulse_put_uvar(p + n, pid);
	p[n++] = enter;
	return n;
}

/**
 * spulse_enc_process_deactivate() - retire every module of a process
 * @p: destination, 1 + SPULSE_VARINT_MAX bytes
 * @pid: process id
 */
static inline size_t spulse_enc_process_deactivate(uint8_t *p, uint32_t pid)
{
	p[0] = SPULSE_TAG_PROCESS_DEACTIVATE;
	return 1 + spulse_put_uvar(p + 1, pid);
}

/**
 * spulse_enc_module_deactivate() - retire one module
 * @p: destination, 1 + SPULSE_VARINT_MAX bytes
 * @module: module id
 */
static inline size_t spulse_enc_module_deactivate(uint8_t *p, uint32_t module)
{
	p[0] = SPULSE_TAG_MODULE_DEACTIVATE;
	return 1 + spulse_put_uvar(p + 1, module);
}

#endif /* SPULSE_ENCODE_H */
