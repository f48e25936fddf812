/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spulse.ko internal interfaces. The pure pieces (intern tables, batch
 * encoder, user-stack walker, kernel-stack trimming, parameter validation,
 * module span lookup) take all their state as arguments so KUnit can drive
 * them; see docs/KERNEL.md.
 */
#ifndef SPULSE_KMOD_H
#define SPULSE_KMOD_H

#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include <linux/relay.h>
#include <linux/sched.h>

#include <spulse/format.h>
#include <spulse/encode.h>

#if IS_ENABLED(CONFIG_KUNIT)
#include <kunit/visibility.h>
#endif
#ifndef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

#define SPULSE_NAME		"spulse"

/* Parameter bounds (validated at load). */
#define SPULSE_FREQ_MIN		1
#define SPULSE_FREQ_MAX		100000
#define SPULSE_DEPTH_TOTAL_MAX	(SPULSE_MAX_DEPTH - 1)	/* + marker */
#define SPULSE_SUBBUF_MAX	(64U << 20)
#define SPULSE_NSUBBUF_MIN	2
#define SPULSE_NSUBBUF_MAX	1024

/* Event kinds (parameter "event"). */
enum spulse_event {
	SPULSE_EVENT_CPU_CLOCK,
	SPULSE_EVENT_CYCLES,
};

/**
 * struct spulse_params - validated load-time parameters
 * @target_pid: tgid to sample, 0 = whole system
 * @freq: sampling frequency in Hz
 * @max_user_depth: user frames kept per sample (walk limit)
 * @max_kernel_depth: kernel frames kept per sample; deeper samples are
 *	dropped (counted as dropped_too_deep)
 * @event: which perf event to sample on
 * @subbuf_size: relay sub-buffer size in bytes
 * @n_subbufs: relay sub-buffers per CPU
 * @autostart: start sampling at load
 */
struct spulse_params {
	u32 target_pid;
	u32 freq;
	u32 max_user_depth;
	u32 max_kernel_depth;
	enum spulse_event event;
	size_t subbuf_size;
	size_t n_subbufs;
	bool autostart;
};

/* params.c */
size_t spulse_batch_max(u32 max_user_depth, u32 max_kernel_depth);
int spulse_parse_event(const char *s, enum spulse_event *out);
const char *spulse_event_name(enum spulse_event ev);
int spulse_params_check(const struct spulse_params *p, const char **why);

/* intern.c: fixed-size open-addressing tables with O(1) generation reset. */
struct spulse_intern_ent {
	u64 k[3];
	u32 id;
	u32 gen;
};

/**
 * struct spulse_intern - one intern table
 * @ent: 2^@shift entries, allocated by the caller
 * @shift: log2 of the number of entries
 * @count: live entries in the current generation
 * @gen: current generation; entries of another generation are empty
 */
struct spulse_intern {
	struct spulse_intern_ent *ent;
	u32 shift;
	u32 count;
	u32 gen;
};

#define SPULSE_INTERN_PROBES	32

void spulse_intern_init(struct spulse_intern *t, struct spulse_intern_ent *ent,
			u32 shift);
void spulse_intern_reset(struct spulse_intern *t);
bool spulse_intern_full(const struct spulse_intern *t);
int spulse_intern_find(struct spulse_intern *t, const u64 k[3], u32 *id,
		       struct spulse_intern_ent **slot);
void spulse_intern_set(struct spulse_intern *t, struct spulse_intern_ent *slot,
		       const u64 k[3], u32 id);

/* encode.c: per-CPU encoder. */
struct spulse_frame {
	u8 kind;	/* SPULSE_FRAME_USER/KERNEL/TRUNCATED */
	u64 addr;	/* already normalized */
};

/**
 * struct spulse_enc - per-CPU encoder state (one SPULSE stream)
 * @frames: frames by (kind, addr)
 * @stacks: stack nodes by (parent + 1 or 0, frame id)
 * @threads: threads by (pid << 32 | tid, comm[0..7], comm[8..15])
 * @next_frame: next frame id of this stream
 * @next_stack: next stack id of this stream
 * @next_thread: next thread id of this stream
 * @header_done: the stream header has been written
 * @last_ns: time of the previous written sample (ns since session start)
 * @records: records written
 * @bytes: bytes written
 */
struct spulse_enc {
	struct spulse_intern frames;
	struct spulse_intern stacks;
	struct spulse_intern threads;
	u32 next_frame;
	u32 next_stack;
	u32 next_thread;
	bool header_done;
	u64 last_ns;
	u64 records;
	u64 bytes;
};

/**
 * struct spulse_batch - one sample's records, built before reservation
 * @buf: scratch buffer
 * @cap: size of @buf
 * @len: bytes used
 * @records: records in @buf
 * @saved_frame: encoder id counter before the batch (for rollback)
 * @saved_stack: see @saved_frame
 * @saved_thread: see @saved_frame
 * @saved_header: header state before the batch
 */
struct spulse_batch {
	u8 *buf;
	size_t cap;
	size_t len;
	u32 records;
	u32 saved_frame;
	u32 saved_stack;
	u32 saved_thread;
	bool saved_header;
};

/**
 * struct spulse_sample - what the handler captured
 * @pid: tgid
 * @tid: thread id
 * @comm: command name (TASK_COMM_LEN bytes, NUL padded)
 * @frames: root .. leaf
 * @n: number of @frames
 * @t_ns: sample time, ns since session start
 */
struct spulse_sample {
	u32 pid;
	u32 tid;
	char comm[16];
	const struct spulse_frame *frames;
	u32 n;
	u64 t_ns;
};

void spulse_enc_reset(struct spulse_enc *e);
int spulse_batch_build(struct spulse_enc *e, struct spulse_batch *b,
		       const struct spulse_sample *s, u64 start_us,
		       u64 interval_us);
void spulse_batch_commit(struct spulse_enc *e, const struct spulse_batch *b,
			 u64 t_ns);
void spulse_batch_rollback(struct spulse_enc *e, const struct spulse_batch *b);

/* ustack.c: user frame-pointer walker over a "read memory" callback. */
typedef int (*spulse_read_fn)(void *ctx, u64 addr, void *dst, size_t len);

/**
 * struct spulse_uregs - the user registers the walker starts from
 * @ip: user instruction pointer (exact)
 * @sp: user stack pointer
 * @bp: user frame pointer
 */
struct spulse_uregs {
	u64 ip;
	u64 sp;
	u64 bp;
};

int spulse_ustack_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx, u64 *out, u32 max,
		       bool *truncated);

/* kstack.c */
int spulse_kstack_trim(const unsigned long *ent, unsigned int n,
		       unsigned long ip);
#define SPULSE_KSTACK_SLACK	64	/* handler frames stack_trace_save sees */
int spulse_kstack_capture(struct pt_regs *regs, unsigned long *out, u32 cap,
			  u32 max, bool *too_deep);

/* buildid.c */
u32 spulse_note_build_id(const u8 *buf, size_t len, u8 *id);
u32 spulse_file_build_id(struct file *f, u8 *id);

/* meta.c: module spans (pure lookup over a sorted array). */
struct spulse_span {
	u32 pid;
	u64 start;
	u64 end;
};

bool spulse_span_lookup(const struct spulse_span *s, u32 n, u32 pid, u64 addr);

/* Runtime state (main.c owns the instance). */
struct spulse_cpu_stats {
	u64 taken;
	u64 written;
	u64 dropped_buffer_full;
	u64 dropped_busy;
	u64 dropped_too_deep;
	u64 handler_ns;
};

#define SPULSE_PID_RING		32
#define SPULSE_UCACHE		512

/**
 * struct spulse_ucache - window of user stack read in one copy
 * @base: user address of @buf[0]
 * @len: valid bytes in @buf (0 = empty)
 * @buf: the bytes
 */
struct spulse_ucache {
	u64 base;
	u32 len;
	u8 buf[SPULSE_UCACHE];
};

/**
 * struct spulse_cpu - everything one CPU's sampler owns
 * @enc: encoder (intern tables, id counters)
 * @scratch: batch buffer
 * @frames: capture buffer (root..leaf)
 * @ubuf: user walk output (leaf first)
 * @kbuf: kernel capture output (leaf first), max_kernel_depth + slack
 * @busy: nesting guard (NMI that finds it set drops the sample)
 * @stats: counters, written only by this CPU's handler
 * @event: this CPU's perf event, or NULL
 * @uc: user stack window of the current sample
 * @pids: recently sampled tgids (whole-system mode), for the meta worker
 * @pid_head: next slot in @pids
 */
struct spulse_cpu {
	struct spulse_enc enc;
	struct spulse_batch batch;
	struct spulse_frame *frames;
	u64 *ubuf;
	unsigned long *kbuf;
	int busy;
	struct spulse_cpu_stats stats;
	struct perf_event *event;
	struct spulse_ucache uc;
	u32 pids[SPULSE_PID_RING];
	u32 pid_head;
};

/**
 * struct spulse_state - the module's global state
 * @p: validated parameters
 * @cpu: per-CPU state
 * @lock: serializes control operations and hotplug callbacks
 * @running: events enabled
 * @started: a session start time has been taken
 * @start_us: realtime µs at session start
 * @start_mono: ktime_get_mono_fast_ns() at session start
 * @interval_us: 1e6 / freq
 * @chan: relay channel
 * @dir: debugfs directory
 * @cpuhp_state: dynamic hotplug state
 * @ev_type: perf type actually used
 * @ev_config: perf config actually used
 */
struct spulse_state {
	struct spulse_params p;
	struct spulse_cpu __percpu *cpu;
	struct mutex lock;
	bool running;
	bool started;
	u64 start_us;
	u64 start_mono;
	u64 interval_us;
	struct rchan *chan;
	struct dentry *dir;
	int cpuhp_state;
	u32 ev_type;
	u64 ev_config;
};

extern struct spulse_state spulse;

/* relay.c */
int spulse_relay_open(void);
void spulse_relay_close(void);
bool spulse_relay_put(struct rchan_buf *buf, const void *data, size_t len);
struct rchan *spulse_meta_chan_open(size_t subbuf_size, size_t n_subbufs);
void spulse_relay_flush(void);
void spulse_relay_flush_chan(struct rchan *chan);

/* sample.c */
int spulse_sample_init(void);
void spulse_sample_exit(void);
void spulse_sample_enable(bool on);

/* percpu.c */
int spulse_cpu_alloc(void);
void spulse_cpu_free(void);

/* meta.c */
int spulse_meta_init(void);
void spulse_meta_exit(void);
void spulse_meta_start(void);
void spulse_meta_stop(void);
void spulse_meta_kick(void);
void spulse_meta_flush(void);
void spulse_meta_process_event(u32 pid);

/* procwatch.c */
void spulse_procwatch_init(void);
void spulse_procwatch_exit(void);
bool spulse_meta_known(u32 pid, u64 addr);
u64 spulse_meta_bytes(void);
u64 spulse_meta_dropped(void);

/* control.c */
int spulse_control_init(void);
int spulse_control_start(void);
void spulse_control_stop(void);
void spulse_control_flush(void);

#endif /* SPULSE_KMOD_H */
