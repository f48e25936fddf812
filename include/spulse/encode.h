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

/* ---- Extension records (tag 9, docs/FORMAT.md section 3.10) ---------- */

static inline size_t spulse_put_ext_hdr(uint8_t *p, uint32_t kind, size_t len)
{
	size_t n = 0;

	p[n++] = SPULSE_TAG_EXT;
	n += spulse_put_uvar(p + n, kind);
	n += spulse_put_uvar(p + n, len);
	return n;
}

/**
 * spulse_enc_ext_cpu() - encode a cpu record (later samples ran on @cpu)
 * @p: destination, SPULSE_EXT_CPU_MAX bytes
 * @cpu: CPU number, < SPULSE_MAX_CPU
 */
static inline size_t spulse_enc_ext_cpu(uint8_t *p, uint32_t cpu)
{
	size_t n = spulse_put_ext_hdr(p, SPULSE_EXT_CPU, spulse_uvar_len(cpu));

	return n + spulse_put_uvar(p + n, cpu);
}

/**
 * struct spulse_offcpu_fields - one off-CPU interval as encoded
 * @dt_ns: switch-out time minus the previous event-clock time (section 3.10)
 * @thread: thread id
 * @stack: leaf stack id at switch-out
 * @state: enum spulse_offcpu_state
 * @cpu_out: CPU the thread left
 * @cpu_in: CPU the thread next ran on
 * @blocked_ns: switch-out to wakeup (0 when @state is RUNNABLE)
 * @runq_ns: wakeup (or switch-out when preempted) to switch-in
 * @has_waker: a waker was recorded
 * @waker_thread: waker thread id (when @has_waker)
 * @waker_stack: waker leaf stack id (when @has_waker)
 * @waker_cpu: CPU the waker ran on (when @has_waker)
 */
struct spulse_offcpu_fields {
	int64_t dt_ns;
	uint32_t thread;
	uint32_t stack;
	uint32_t state;
	uint32_t cpu_out;
	uint32_t cpu_in;
	uint64_t blocked_ns;
	uint64_t runq_ns;
	bool has_waker;
	uint32_t waker_thread;
	uint32_t waker_stack;
	uint32_t waker_cpu;
};

/**
 * spulse_enc_ext_offcpu() - encode an off-CPU interval record
 * @p: destination, SPULSE_EXT_OFFCPU_MAX bytes
 * @f: the fields
 */
static inline size_t spulse_enc_ext_offcpu(uint8_t *p,
					   const struct spulse_offcpu_fields *f)
{
	uint8_t pl[SPULSE_EXT_OFFCPU_PAYLOAD_MAX];
	size_t len = 0, n;

	/*
	 * One pass: the payload first, into @pl, so that its length needs
	 * no pass of its own over the fields; then the header and the copy
	 */
	len += spulse_put_svar(pl + len, f->dt_ns);
	len += spulse_put_uvar(pl + len, f->thread);
	len += spulse_put_uvar(pl + len, f->stack);
	len += spulse_put_uvar(pl + len, f->state);
	len += spulse_put_uvar(pl + len, f->cpu_out);
	len += spulse_put_uvar(pl + len, f->cpu_in);
	len += spulse_put_uvar(pl + len, f->blocked_ns);
	len += spulse_put_uvar(pl + len, f->runq_ns);
	len += spulse_put_uvar(pl + len, f->has_waker ?
			       (uint64_t)f->waker_thread + 1 : 0);
	if (f->has_waker) {
		len += spulse_put_uvar(pl + len, f->waker_stack);
		len += spulse_put_uvar(pl + len, f->waker_cpu);
	}
	n = spulse_put_ext_hdr(p, SPULSE_EXT_OFFCPU, len);
	memcpy(p + n, pl, len);
	return n + len;
}

/**
 * struct spulse_trigger_fields - one flight-recorder trigger mark
 * @dt_ns: trigger time minus the previous event-clock time
 * @reason: enum spulse_trigger_reason
 * @seq: trigger number in the run, from 1
 * @value_ns: measured duration that fired (0 for manual/signal)
 * @threshold_ns: the trigger's threshold (0 for manual/signal)
 * @window_start_ns: start of the window the spool covers (profile offset)
 * @window_end_ns: end of that window (>= @window_start_ns; 0/0 = not a dump)
 * @text: description bytes, clamped to SPULSE_MAX_TRIGGER_TEXT
 * @text_len: length of @text
 */
struct spulse_trigger_fields {
	int64_t dt_ns;
	uint32_t reason;
	uint32_t seq;
	uint64_t value_ns;
	uint64_t threshold_ns;
	uint64_t window_start_ns;
	uint64_t window_end_ns;
	const char *text;
	size_t text_len;
};

/**
 * spulse_enc_ext_trigger() - encode a trigger record
 * @p: destination, SPULSE_EXT_REC_MAX bytes
 * @f: the fields
 */
static inline size_t spulse_enc_ext_trigger(uint8_t *p,
					    const struct spulse_trigger_fields *f)
{
	size_t tl = f->text_len > SPULSE_MAX_TRIGGER_TEXT ?
		    SPULSE_MAX_TRIGGER_TEXT : f->text_len;
	size_t len, n;

	len = spulse_uvar_len(spulse_zigzag(f->dt_ns)) +
	      spulse_uvar_len(f->reason) + spulse_uvar_len(f->seq) +
	      spulse_uvar_len(f->value_ns) + spulse_uvar_len(f->threshold_ns) +
	      spulse_uvar_len(f->window_start_ns) +
	      spulse_uvar_len(f->window_end_ns) + spulse_uvar_len(tl) + tl;
	n = spulse_put_ext_hdr(p, SPULSE_EXT_TRIGGER, len);
	n += spulse_put_svar(p + n, f->dt_ns);
	n += spulse_put_uvar(p + n, f->reason);
	n += spulse_put_uvar(p + n, f->seq);
	n += spulse_put_uvar(p + n, f->value_ns);
	n += spulse_put_uvar(p + n, f->threshold_ns);
	n += spulse_put_uvar(p + n, f->window_start_ns);
	n += spulse_put_uvar(p + n, f->window_end_ns);
	n += spulse_put_bytes(p + n, f->text, tl);
	return n;
}

/**
 * struct spulse_identity_fields - one identity record (kind 4) as encoded
 * @source: index of the recording in the spool (0, 1, ...)
 * @recording_id: SPULSE_RECORDING_ID_LEN raw bytes
 * @start_us: the recording's own profile start (realtime us)
 * @host: host name, clamped to SPULSE_MAX_HOST bytes
 * @host_len: length of @host
 * @machine_id: /etc/machine-id, clamped to SPULSE_MAX_MACHINE_ID
 * @machine_id_len: length of @machine_id
 * @boot_id: boot id, clamped to SPULSE_MAX_BOOT_ID
 * @boot_id_len: length of @boot_id
 * @kernel: kernel release, clamped to SPULSE_MAX_KERNEL
 * @kernel_len: length of @kernel
 */
struct spulse_identity_fields {
	uint32_t source;
	const uint8_t *recording_id;
	uint64_t start_us;
	const char *host;
	size_t host_len;
	const char *machine_id;
	size_t machine_id_len;
	const char *boot_id;
	size_t boot_id_len;
	const char *kernel;
	size_t kernel_len;
};

static inline size_t spulse_clamp_len(size_t len, size_t limit)
{
	return len > limit ? limit : len;
}

/**
 * spulse_enc_ext_identity() - encode a recording identity record (kind 4)
 * @p: destination, SPULSE_EXT_REC_MAX bytes
 * @f: the fields
 */
static inline size_t spulse_enc_ext_identity(uint8_t *p,
		const struct spulse_identity_fields *f)
{
	size_t hl = spulse_clamp_len(f->host_len, SPULSE_MAX_HOST);
	size_t ml = spulse_clamp_len(f->machine_id_len, SPULSE_MAX_MACHINE_ID);
	size_t bl = spulse_clamp_len(f->boot_id_len, SPULSE_MAX_BOOT_ID);
	size_t kl = spulse_clamp_len(f->kernel_len, SPULSE_MAX_KERNEL);
	size_t len, n, i;

	len = spulse_uvar_len(f->source) + SPULSE_RECORDING_ID_LEN +
	      spulse_uvar_len(f->start_us) +
	      spulse_uvar_len(hl) + hl + spulse_uvar_len(ml) + ml +
	      spulse_uvar_len(bl) + bl + spulse_uvar_len(kl) + kl;
	n = spulse_put_ext_hdr(p, SPULSE_EXT_IDENTITY, len);
	n += spulse_put_uvar(p + n, f->source);
	for (i = 0; i < SPULSE_RECORDING_ID_LEN; i++)
		p[n++] = f->recording_id[i];
	n += spulse_put_uvar(p + n, f->start_us);
	n += spulse_put_bytes(p + n, f->host, hl);
	n += spulse_put_bytes(p + n, f->machine_id, ml);
	n += spulse_put_bytes(p + n, f->boot_id, bl);
	n += spulse_put_bytes(p + n, f->kernel, kl);
	return n;
}

/**
 * spulse_enc_ext_thread_source() - encode a thread-source record (kind 5)
 * @p: destination, SPULSE_EXT_HDR_MAX + 2 * SPULSE_VARINT32_MAX bytes
 * @thread: a defined thread id
 * @source: a defined source
 */
static inline size_t spulse_enc_ext_thread_source(uint8_t *p, uint32_t thread,
						  uint32_t source)
{
	size_t n = spulse_put_ext_hdr(p, SPULSE_EXT_THREAD_SOURCE,
				      spulse_uvar_len(thread) +
				      spulse_uvar_len(source));

	n += spulse_put_uvar(p + n, thread);
	return n + spulse_put_uvar(p + n, source);
}

#endif /* SPULSE_ENCODE_H */
