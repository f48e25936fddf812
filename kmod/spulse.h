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
#include <spulse/unwind.h>

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
#define SPULSE_DEPTH_BOTH_MAX	(SPULSE_DEPTH_TOTAL_MAX / 2)	/* max_depth */
#define SPULSE_SUBBUF_MAX	(64U << 20)
#define SPULSE_NSUBBUF_MIN	2
#define SPULSE_NSUBBUF_MAX	1024
/* bound on subbuf_size * n_subbufs (relay data per CPU; + 1 guard) */
#define SPULSE_RELAY_CPU_MAX	(256ULL << 20)
#define SPULSE_OFFCPU_THREADS_MIN	64
#define SPULSE_OFFCPU_THREADS_MAX	65536
#define SPULSE_OFFCPU_MIN_US_MAX	60000000	/* 60 s */

#define SPULSE_UNWIND_MEM_KB_MIN	1
#define SPULSE_UNWIND_MEM_KB_MAX	(4U << 20)	/* 4 GiB */

/* User unwinding (parameter "unwind"). */
enum spulse_unwind_mode {
	SPULSE_UNWIND_AUTO,	/* tables where loaded, else frame pointers */
	SPULSE_UNWIND_FP,	/* frame pointers only, tables never used */
	SPULSE_UNWIND_TABLES,	/* tables only, the FP step never used */
};

/* Where the events are bound (parameter "events"); zero is per-CPU. */
enum spulse_events {
	SPULSE_EVENTS_CPU,	/* one event per online CPU */
	SPULSE_EVENTS_TASK,	/* one inherited event per target thread */
	SPULSE_EVENTS_AUTO,	/* task with target_pid, else cpu (resolved at load) */
};

/* Task events created at start at most (threads beyond: task_events_failed). */
#define SPULSE_TASK_EVENTS_MAX	4096

/* Event kinds (parameter "event"). */
enum spulse_event {
	SPULSE_EVENT_CPU_CLOCK,
	SPULSE_EVENT_CYCLES,
};

/**
 * struct spulse_params - validated load-time parameters
 * @target_pid: tgid to sample, 0 = whole system; after load the tgid in
 *	the initial pid namespace (what task_tgid_nr() and the streams use)
 * @freq: sampling frequency in Hz
 * @max_user_depth: user frames kept per sample (walk limit)
 * @max_kernel_depth: kernel frames kept per sample; deeper samples are
 *	dropped (counted as dropped_too_deep)
 * @max_depth: the max_depth parameter (0 = unset; else both limits above
 *	were set to it)
 * @event: which perf event to sample on
 * @events: per-CPU or per-task events (enum spulse_events, never AUTO
 *	after load)
 * @subbuf_size: relay sub-buffer size in bytes
 * @n_subbufs: relay sub-buffers per CPU
 * @autostart: start sampling at load
 * @offcpu: record off-CPU intervals (sched_switch/sched_waking probes)
 * @offcpu_min_us: shorter intervals are counted as filtered, not written
 * @offcpu_threads: slot-table size (threads off CPU at the same time)
 * @offcpu_phase_stats: time the phases of the off-CPU probes (debug; the
 *	phase_* stats keys)
 * @sample_phase_stats: time the phases of the sample handler (debug; the
 *	sample_phase_* stats keys)
 * @sample_null: the handler counts each overflow in seen and returns:
 *	no stack, no record (debug; measures the event's own cost)
 * @unwind: how user stacks are unwound (enum spulse_unwind_mode)
 * @unwind_mem_kb: bound on all unwind table and map memory, KiB
 */
struct spulse_params {
	u32 target_pid;
	u32 freq;
	u32 max_user_depth;
	u32 max_kernel_depth;
	u32 max_depth;
	enum spulse_event event;
	enum spulse_events events;
	size_t subbuf_size;
	size_t n_subbufs;
	bool autostart;
	bool offcpu;
	u32 offcpu_min_us;
	u32 offcpu_threads;
	bool offcpu_phase_stats;
	bool sample_phase_stats;
	bool sample_null;
	enum spulse_unwind_mode unwind;
	u32 unwind_mem_kb;
};

/* params.c */
size_t spulse_batch_max(u32 max_user_depth, u32 max_kernel_depth);
size_t spulse_batch_max_offcpu(u32 max_user_depth, u32 max_kernel_depth);
size_t spulse_batch_max_trigger(void);
int spulse_parse_event(const char *s, enum spulse_event *out);
const char *spulse_event_name(enum spulse_event ev);
int spulse_parse_events(const char *s, enum spulse_events *out);
const char *spulse_events_name(enum spulse_events ev);
int spulse_parse_unwind(const char *s, enum spulse_unwind_mode *out);
const char *spulse_unwind_name(enum spulse_unwind_mode m);
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

/* Stack cache (encode.c): off-CPU stacks already interned in this stream. */
#define SPULSE_SCACHE_SHIFT	8	/* 256 entries, direct mapped */
#define SPULSE_SCACHE_DEPTH	64	/* deeper stacks are not cached */

/**
 * struct spulse_scache_ent - one cached stack
 * @hash: spulse_scache_hash() of the stack
 * @gen: encoder generation + 1 it was stored in (0 = empty)
 * @leaf: the interned leaf stack id
 * @trunc: the stack's @trunc
 * @nu: user frames
 * @nk: kernel frames
 * @addr: the @nu + @nk addresses, compared exactly on a hit
 */
struct spulse_scache_ent {
	u64 hash;
	u64 gen;
	u32 leaf;
	bool trunc;
	u16 nu;
	u16 nk;
	u64 addr[SPULSE_SCACHE_DEPTH];
};

/**
 * struct spulse_scache - per-CPU stack cache (NULL @ent = no cache)
 * @ent: 2^@shift entries, allocated by the caller
 * @shift: log2 of the number of entries
 * @hits: lookups answered from the cache
 * @misses: lookups of cacheable stacks that were interned frame by frame
 */
struct spulse_scache {
	struct spulse_scache_ent *ent;
	u32 shift;
	u64 hits;
	u64 misses;
};

/**
 * struct spulse_enc - per-CPU encoder state (one SPULSE stream)
 * @frames: frames by (kind, addr)
 * @stacks: stack nodes by (parent + 1 or 0, frame id)
 * @threads: threads by (pid << 32 | tid, comm[0..7], comm[8..15])
 * @next_frame: next frame id of this stream
 * @next_stack: next stack id of this stream
 * @next_thread: next thread id of this stream
 * @cpu: the CPU of this stream (its kind-1 cpu record follows the header)
 * @header_done: the stream header (and cpu record) has been written
 * @last_ns: time of the previous written sample (ns since session start)
 * @last_event_ns: event clock (FORMAT.md 3.10) of the previous written
 *	off-CPU interval or trigger record
 * @records: records written
 * @bytes: bytes written
 * @gen: definition generation: bumped by every spulse_enc_reset() (and so
 *	by every rollback and epoch); @scache entries of another generation
 *	are empty
 * @scache: off-CPU stacks already interned, by their raw frames
 * @id_limit: ids per kind in one epoch (0 = SPULSE_EPOCH_IDS); a batch that
 *	would pass it starts a new epoch (docs/FORMAT.md section 7)
 * @epochs: epochs started after the first (each a fresh stream header)
 * @resets_frames: resets of @frames alone (table full or probes exhausted)
 * @resets_stacks: resets of @stacks alone
 * @resets_threads: resets of @threads alone
 */
struct spulse_enc {
	struct spulse_intern frames;
	struct spulse_intern stacks;
	struct spulse_intern threads;
	u32 next_frame;
	u32 next_stack;
	u32 next_thread;
	u32 cpu;
	bool header_done;
	u64 last_ns;
	u64 last_event_ns;
	u64 records;
	u64 bytes;
	u64 gen;
	struct spulse_scache scache;
	u32 id_limit;
	u64 epochs;
	u64 resets_frames;
	u64 resets_stacks;
	u64 resets_threads;
};

/*
 * Ids per kind in one epoch of a per-CPU stream. The drainer keeps every
 * definition of the current epoch (about 40 bytes per id), so the limit
 * bounds its memory per CPU; an epoch costs one redefinition of the working
 * set, as a table reset does. At most SPULSE_MAX_ID.
 */
#define SPULSE_EPOCH_IDS	(1U << 20)

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
 * @leaf: leaf stack id of the sample spulse_batch_build() encoded
 * @saved_last_ns: sample clock before the batch (an epoch restarts it)
 * @saved_last_event_ns: event clock before the batch
 * @epoch: the batch starts a new epoch (its first bytes are a stream header)
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
	u32 leaf;
	u64 saved_last_ns;
	u64 saved_last_event_ns;
	bool epoch;
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
int spulse_batch_build_leaf(struct spulse_enc *e, struct spulse_batch *b,
			    const struct spulse_sample *s, u32 leaf, u64 gen,
			    u64 start_us, u64 interval_us);
void spulse_batch_commit(struct spulse_enc *e, const struct spulse_batch *b,
			 u64 t_ns);
void spulse_batch_rollback(struct spulse_enc *e, const struct spulse_batch *b);
void spulse_batch_commit_event(struct spulse_enc *e,
			       const struct spulse_batch *b, u64 t_ns);
int spulse_batch_build_trigger(struct spulse_enc *e, struct spulse_batch *b,
			       u64 t_ns, u32 reason, const char *text,
			       u64 start_us, u64 interval_us);

/*
 * offcpu_table.c: the off-CPU slot table. Pure (no globals, no allocation):
 * the caller owns the memory (spulse_oc_table_bytes()) and calls these with
 * interrupts disabled; every call takes exactly one stripe lock (a raw
 * spinlock, a leaf: nothing else is taken under it). See docs/KERNEL.md.
 */

/**
 * struct spulse_oc_stack - one mixed stack, compact
 * @trunc: the user part was cut: a truncated marker is the root node
 * @nu: user frames, @addr[0..@nu), outermost first
 * @nk: kernel frames, @addr[@nu..@nu+@nk), outermost first, leaf last
 * @addr: normalized addresses (return address - 1 except exact IPs),
 *	room for the table's depth
 *
 * Nodes root..leaf: [marker if @trunc] user frames, kernel frames. An empty
 * stack (@nu = @nk = 0) is encoded as the marker alone.
 */
struct spulse_oc_stack {
	bool trunc;
	u16 nu;
	u16 nk;
	u64 *addr;
};

/**
 * struct spulse_oc_who - a thread and its stack
 * @pid: tgid (0 = idle / kernel)
 * @tid: thread id
 * @comm: command name, NUL padded
 * @st: its stack
 */
struct spulse_oc_who {
	u32 pid;
	u32 tid;
	char comm[16];
	struct spulse_oc_stack st;
};

enum spulse_oc_kind {
	SPULSE_OC_FREE = 0,
	SPULSE_OC_OFF = 1,	/* switched out, interval open */
	SPULSE_OC_EARLY = 2,	/* woken while still on CPU (wake only) */
};

/**
 * struct spulse_oc_slot - one thread off CPU (or an early wakeup)
 * @kind: enum spulse_oc_kind
 * @state: enum spulse_offcpu_state at switch-out
 * @has_waker: @t_wake, @waker and @waker_cpu are valid
 * @cpu_out: CPU it was switched out on
 * @waker_cpu: CPU the wakeup ran on
 * @nsw: nvcsw + nivcsw of the thread: after the switch for an OFF slot, at
 *	the wakeup for an EARLY one
 * @t_out: switch-out time (ns since session start)
 * @t_wake: wakeup time
 * @self: the thread (tid is the key) and its stack at switch-out
 * @waker: the waking thread and its stack
 */
struct spulse_oc_slot {
	u8 kind;
	u8 state;
	bool has_waker;
	u16 cpu_out;
	u16 waker_cpu;
	u64 nsw;
	u64 t_out;
	u64 t_wake;
	struct spulse_oc_who self;
	struct spulse_oc_who waker;
};

#define SPULSE_OC_BUCKET	16	/* slots probed per lookup */
#define SPULSE_OC_STRIPES	64	/* stripe locks */

/**
 * struct spulse_oc_table - fixed-size slot table hashed by tid
 * @slot: @n slots in buckets of SPULSE_OC_BUCKET
 * @store: stack storage, 2 * @depth u64 per slot
 * @n: slots (a multiple of SPULSE_OC_BUCKET)
 * @depth: frames per stack (max_user_depth + max_kernel_depth)
 * @early: EARLY slots in use (lets a wakeup probe skip the lookup)
 * @lock: stripe locks; bucket b uses @lock[b % SPULSE_OC_STRIPES]
 */
struct spulse_oc_table {
	struct spulse_oc_slot *slot;
	u64 *store;
	u32 n;
	u32 depth;
	atomic_t early;
	raw_spinlock_t lock[SPULSE_OC_STRIPES];
};

/* What a switch-out did with the thread's slot. */
enum spulse_oc_open_result {
	SPULSE_OC_OPENED = 0,		/* new interval, no waker yet */
	SPULSE_OC_OPENED_EARLY = 1,	/* an early wakeup was applied */
	SPULSE_OC_OPENED_STALE = 2,	/* an early wakeup was stale, dropped */
	SPULSE_OC_OPENED_LOST = 3,	/* an open interval was replaced */
};

/* What a wakeup did. */
enum spulse_oc_wake_result {
	SPULSE_OC_WAKE_ATTACHED = 0,	/* waker recorded into an open slot */
	SPULSE_OC_WAKE_EARLY = 1,	/* early slot created (still on CPU) */
	SPULSE_OC_WAKE_RUNNABLE = 2,	/* slot is R (preempted): no waker */
	SPULSE_OC_WAKE_REPEAT = 3,	/* a waker is already recorded */
	SPULSE_OC_WAKE_UNSLOTTED = 4,	/* no slot and not on CPU */
	SPULSE_OC_WAKE_NO_SLOT = 5,	/* early slot needed, bucket full */
};

size_t spulse_oc_table_bytes(u32 threads, u32 depth);
u32 spulse_oc_table_slots(u32 threads);
void spulse_oc_table_init(struct spulse_oc_table *t, struct spulse_oc_slot *slot,
			  u64 *store, u32 threads, u32 depth);
void spulse_oc_stack_copy(struct spulse_oc_stack *dst,
			  const struct spulse_oc_stack *src);
int spulse_oc_open(struct spulse_oc_table *t, const struct spulse_oc_who *self,
		   u8 state, u16 cpu, u64 t_out, u64 nsw);
int spulse_oc_wake(struct spulse_oc_table *t, u32 tid, bool on_cpu, u64 nsw,
		   const struct spulse_oc_who *waker, u16 cpu, u64 t_wake);
int spulse_oc_wake_peek(struct spulse_oc_table *t, u32 tid, bool on_cpu);
bool spulse_oc_wakeup_done(struct spulse_oc_table *t, u32 tid);
bool spulse_oc_close(struct spulse_oc_table *t, u32 tid,
		     struct spulse_oc_slot *out);
u32 spulse_oc_sweep(struct spulse_oc_table *t, u32 *early);
void spulse_oc_interval(const struct spulse_oc_slot *s, u64 t_in,
			u64 *blocked_ns, u64 *runq_ns);
u32 spulse_oc_stack_frames(const struct spulse_oc_stack *st,
			   struct spulse_frame *out);
u64 spulse_scache_hash(const struct spulse_oc_stack *st);
bool spulse_scache_find(const struct spulse_scache *c, u64 gen, u64 hash,
			const struct spulse_oc_stack *st, u32 *leaf);
void spulse_scache_put(struct spulse_scache *c, u64 gen, u64 hash,
		       const struct spulse_oc_stack *st, u32 leaf);
int spulse_batch_build_offcpu(struct spulse_enc *e, struct spulse_batch *b,
			      const struct spulse_oc_slot *s, u64 t_in,
			      u32 cpu_in, struct spulse_frame *scratch,
			      u64 start_us, u64 interval_us);

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

/*
 * unwind.c / unwind_table.c: table-driven user unwinding (docs/UNWIND.md,
 * "In the kernel"). Tables and per-process map sets are published with RCU;
 * readers (sampler, off-CPU probes) hold rcu_read_lock() across a walk.
 */
#define SPULSE_UT_HASH_SHIFT	10	/* pid -> map set buckets */

/* Offsets in the kernel's struct ucontext (x86-64) read at a SIGNAL row. */
#define SPULSE_UC_MCONTEXT	40
#define SPULSE_UC_BP		(SPULSE_UC_MCONTEXT + 80)
#define SPULSE_UC_SP		(SPULSE_UC_MCONTEXT + 120)
#define SPULSE_UC_IP		(SPULSE_UC_MCONTEXT + 128)

/**
 * struct spulse_ut_tab - one loaded table
 * @node: in spulse_ut_reg.tables (writers only)
 * @id: table id chosen by userspace
 * @n_rows: rows in @rows (>= 1)
 * @lo: first ELF address covered
 * @hi: end of the covered range (exclusive)
 * @rows: the rows, inside @msg (never written after publication)
 * @idx: block index (NULL = none): @idx[b] is the row covering table
 *	offset b << @shift, so a lookup searches only rows @idx[b] ..
 *	@idx[b + 1]; @idx_len entries, the last one n_rows - 1
 * @idx_len: entries in @idx
 * @shift: log2 of the index block size
 * @msg: the ADD message buffer that holds @rows (kvmalloc'd, owned)
 * @bytes: memory charged against the bound
 * @build_id: the ELF's build-id (informational)
 * @build_id_len: bytes used in @build_id
 */
struct spulse_ut_tab {
	struct list_head node;
	u32 id;
	u32 n_rows;
	u64 lo;
	u64 hi;
	const struct spulse_ut_row *rows;
	u32 *idx;
	u32 idx_len;
	u8 shift;
	void *msg;
	size_t bytes;
	u8 build_id[SPULSE_UT_BUILD_ID_MAX];
	u8 build_id_len;
};

/**
 * struct spulse_ut_ment - one mapping of a process onto a table
 * @start: first user address
 * @end: end (exclusive)
 * @bias: table address = user address - @bias
 * @tab: the table (outlives every map set that names it)
 */
struct spulse_ut_ment {
	u64 start;
	u64 end;
	u64 bias;
	const struct spulse_ut_tab *tab;
};

/**
 * struct spulse_ut_pset - the mappings of one process, sorted by @start
 * @node: in a spulse_ut_reg.procs bucket (RCU hlist)
 * @rcu: for kfree_rcu()
 * @pid: tgid
 * @n: entries in @map (>= 1)
 * @dead: the process exited or exec'd; readers ignore the set, the reap
 *	work unpublishes it
 * @bytes: memory charged against the bound
 * @map: the mappings
 */
struct spulse_ut_pset {
	struct hlist_node node;
	struct rcu_head rcu;
	u32 pid;
	u32 n;
	bool dead;
	size_t bytes;
	struct spulse_ut_ment map[];
};

/**
 * struct spulse_ut_reg - a registry of tables and map sets
 * @lock: serializes writers (messages, retirement, teardown)
 * @tables: loaded tables (@lock)
 * @procs: map sets by hash_32(pid); readers walk them under RCU
 * @reap: work that unpublishes map sets marked dead
 * @limit: memory bound in bytes
 * @bytes: memory charged (tables + map sets)
 * @ntables: loaded tables
 * @rows: rows over all tables
 * @nprocs: published map sets (read locklessly as a hint)
 * @nmaps: mappings over all map sets
 * @refused_invalid: messages refused with -EINVAL (or -E2BIG)
 * @refused_nomem: messages refused for the memory bound (or no memory)
 * @refused_other: messages refused with -EEXIST or -ENOENT
 */
struct spulse_ut_reg {
	struct mutex lock;
	struct list_head tables;
	struct hlist_head procs[1U << SPULSE_UT_HASH_SHIFT];
	struct work_struct reap;
	u64 limit;
	u64 bytes;
	u32 ntables;
	u64 rows;
	u32 nprocs;
	u32 nmaps;
	u64 refused_invalid;
	u64 refused_nomem;
	u64 refused_other;
};

/**
 * struct spulse_uw_res - what one table-driven walk did
 * @table_steps: frames found through a table row
 * @fp_steps: frames found through the frame-pointer step
 * @complete: the walk ended on an END row (the stack's real root)
 * @truncated: the walk was cut (the truncated marker is due)
 */
struct spulse_uw_res {
	u32 table_steps;
	u32 fp_steps;
	bool complete;
	bool truncated;
};

#define SPULSE_UT_BLOCK_SHIFT_MIN	8	/* index blocks >= 256 bytes */
u32 spulse_ut_index_len(u64 span, u32 n_rows, u8 *shift);
void spulse_ut_index_fill(const struct spulse_ut_row *rows, u32 n_rows,
			  u8 shift, u32 *idx, u32 len);
const struct spulse_ut_row *spulse_ut_row_find(const struct spulse_ut_tab *t,
					       u64 addr);
const struct spulse_ut_ment *spulse_ut_map_find(const struct spulse_ut_pset *ps,
						u64 pc);
const struct spulse_ut_row *spulse_ut_lookup(const struct spulse_ut_pset *ps,
					     u64 pc);
int spulse_unwind_walk(const struct spulse_uregs *r, u64 task_size,
		       spulse_read_fn rd, void *ctx,
		       const struct spulse_ut_pset *ps, bool fp_fallback,
		       u64 *out, u32 max, struct spulse_uw_res *res);

int spulse_ut_check_rows(const struct spulse_ut_add *a,
			 const struct spulse_ut_row *rows);
int spulse_ut_check_maps(const struct spulse_ut_mapset *ms,
			 const struct spulse_ut_map *m);
void spulse_ut_reg_init(struct spulse_ut_reg *reg, u64 limit);
void spulse_ut_reg_free(struct spulse_ut_reg *reg);
ssize_t spulse_ut_apply(struct spulse_ut_reg *reg, void *msg, size_t len);
const struct spulse_ut_pset *spulse_ut_pset_find(struct spulse_ut_reg *reg,
						 u32 pid);
void spulse_ut_forget(struct spulse_ut_reg *reg, u32 pid);
void spulse_ut_mark_dead(struct spulse_ut_reg *reg, u32 pid);
void spulse_ut_reap(struct spulse_ut_reg *reg);

extern struct spulse_ut_reg spulse_ut;
int spulse_unwind_init(void);
void spulse_unwind_exit(void);

/* kstack.c */
int spulse_kstack_trim(const unsigned long *ent, unsigned int n,
		       unsigned long ip);
#define SPULSE_KSTACK_SLACK	64	/* handler frames stack_trace_save sees */
int spulse_kstack_capture(struct pt_regs *regs, unsigned long *out, u32 cap,
			  u32 max, bool *too_deep, bool *truncated);

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
void spulse_span_sort(struct spulse_span *s, u32 n);

/* Runtime state (main.c owns the instance). */
struct spulse_cpu_stats {
	u64 taken;
	u64 written;
	u64 dropped_buffer_full;
	u64 dropped_busy;
	u64 dropped_too_deep;
	u64 relay_no_buffer;
	u64 handler_ns;
	/* losses before the handler (docs/KERNEL.md, "Losses") */
	u64 seen;
	u64 throttled;
	u64 lost_throttled;
	u64 event_enabled_ns;
	u64 event_running_ns;
	u64 kstack_truncated;
	/* sample_phase_stats=1 only (docs/KERNEL.md, "Phase stats") */
	u64 sample_phase_n;
	u64 sample_phase_outliers;
	u64 sample_phase_ns;
	u64 sample_phase_kstack_ns;
	u64 sample_phase_ustack_ns;
	u64 sample_phase_meta_ns;
	u64 sample_phase_encode_ns;
	u64 sample_phase_relay_ns;
	/* off-CPU intervals (docs/KERNEL.md, "Off-CPU": the identities) */
	u64 offcpu_taken;
	u64 offcpu_written;
	u64 offcpu_filtered;
	u64 offcpu_dropped_buffer_full;
	u64 offcpu_dropped_busy;
	u64 offcpu_dropped_no_slot;
	u64 offcpu_dropped_too_deep;
	u64 offcpu_dropped_error;
	u64 offcpu_lost;
	u64 offcpu_handler_ns;
	/* sched_waking of target threads */
	u64 wakeups_taken;
	u64 wakeups_attached;
	u64 wakeups_early;
	u64 wakeups_runnable;
	u64 wakeups_repeat;
	u64 wakeups_unslotted;
	u64 wakeups_dropped_busy;
	u64 wakeups_dropped_no_slot;
	u64 wakeups_dropped_too_deep;
	u64 early_applied;
	u64 early_stale;
	/* debugfs trigger marks */
	u64 triggers_written;
	u64 triggers_dropped;
	/* user unwinding of samples (docs/KERNEL.md, "User unwinding") */
	u64 ustack_table_steps;
	u64 ustack_fp_steps;
	u64 ustack_complete;
	u64 ustack_truncated;
	/* offcpu_phase_stats=1 only (docs/KERNEL.md, "Phase stats") */
	u64 phase_out_n;
	u64 phase_out_kstack_ns;
	u64 phase_out_ustack_ns;
	u64 phase_out_slot_ns;
	u64 phase_wake_n;
	u64 phase_wake_peek_ns;
	u64 phase_wake_kstack_ns;
	u64 phase_wake_ustack_ns;
	u64 phase_wake_slot_ns;
	u64 phase_in_n;
	u64 phase_in_close_ns;
	u64 phase_in_encode_ns;
	u64 phase_in_relay_ns;
};

#define SPULSE_PID_RING		32
#define SPULSE_UCACHE		512
#define SPULSE_UCACHE_FIRST	128	/* first window; doubles per copy */

/**
 * struct spulse_ucache - window of user stack read in one copy
 * @base: user address of @buf[0]
 * @len: valid bytes in @buf (0 = empty)
 * @win: bytes the next copy asks for (SPULSE_UCACHE_FIRST, doubling up to
 *	SPULSE_UCACHE)
 * @buf: the bytes
 */
struct spulse_ucache {
	u64 base;
	u32 len;
	u32 win;
	u8 buf[SPULSE_UCACHE];
};

bool spulse_task_has_user(const struct task_struct *t);
int spulse_ustack_capture(struct pt_regs *uregs, enum spulse_unwind_mode mode,
			  struct spulse_ucache *uc, u64 *out, u32 max,
			  struct spulse_uw_res *res);

/**
 * struct spulse_relay_pos - a relay buffer's switches, for readers
 * @seq: odd while spulse_relay_switch() runs (a sequence count the writer
 *	never waits on; spulse_relay_position() retries around it)
 */
struct spulse_relay_pos {
	u32 seq;
};

/**
 * struct spulse_cpu - everything one CPU's sampler owns
 * @enc: encoder (intern tables, id counters)
 * @batch: batch buffer
 * @frames: capture buffer (root..leaf)
 * @ubuf: user walk output (leaf first)
 * @kbuf: kernel capture output (leaf first), max_kernel_depth + slack
 * @busy: nesting guard (NMI that finds it set drops the sample); stays set
 *	on a CPU without @ready state
 * @ready: the encoder tables and batch buffer exist (percpu.c)
 * @stats: counters, written only by this CPU's handler
 * @event: this CPU's perf event, or NULL
 * @ev_enabled: @event's time enabled at the last fold (sample.c)
 * @ev_running: @event's time running at the last fold
 * @thr_ns: time of the sample that throttled @event (0 = not throttled)
 * @uc: user stack window of the current sample
 * @chain: the current sample's raw stack (root..leaf in @chain.addr, room
 *	for max_user_depth + max_kernel_depth), the key of @scache
 * @scache: stacks of samples already written in this stream, by @chain
 *	(NULL ent: no cache)
 * @pids: recently sampled tgids (whole-system mode), for the meta worker
 * @pid_head: next slot in @pids
 * @oc_cap: off-CPU capture scratch (switch-out and wakeup probes, under
 *	@busy): a thread and its stack, copied into the slot table
 * @oc_close: the slot closed at switch-in (sched_switch probe only, which
 *	never nests on one CPU), with its own stack storage
 * @rpos: this CPU's relay buffer switches (relay.c)
 */
struct spulse_cpu {
	struct spulse_enc enc;
	struct spulse_batch batch;
	struct spulse_frame *frames;
	u64 *ubuf;
	unsigned long *kbuf;
	int busy;
	bool ready;
	struct spulse_relay_pos rpos;
	struct spulse_cpu_stats stats;
	struct perf_event *event;
	u64 ev_enabled;
	u64 ev_running;
	u64 thr_ns;
	struct spulse_ucache uc;
	struct spulse_oc_stack chain;
	struct spulse_scache scache;
	u32 pids[SPULSE_PID_RING];
	u32 pid_head;
	struct spulse_oc_who oc_cap;
	struct spulse_oc_slot oc_close;
};

/* Remember a sampled tgid for the meta worker (whole-system mode). */
static inline void spulse_note_pid(struct spulse_cpu *c, u32 tgid)
{
	if (c->pids[(c->pid_head - 1) % SPULSE_PID_RING] == tgid)
		return;
	WRITE_ONCE(c->pids[c->pid_head % SPULSE_PID_RING], tgid);
	c->pid_head++;
}

/**
 * struct spulse_tev - one task event (events=task)
 * @ev: the event (its inherited children hang off it)
 * @enabled: @ev's time enabled at the last fold
 * @running: @ev's time running at the last fold
 */
struct spulse_tev {
	struct perf_event *ev;
	u64 enabled;
	u64 running;
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
 * @meta_rpos: the meta relay buffer's switches (relay.c)
 * @dir: debugfs directory
 * @cpuhp_state: dynamic hotplug state (events, sample.c)
 * @cpuhp_prepare: dynamic hotplug prepare state (per-CPU memory, percpu.c)
 * @cpu_loading: the prepare state is being set up (a failure fails the load)
 * @cpus_no_state: CPUs that came online without sampler state (no memory)
 * @percpu_bytes: bytes of per-CPU encoder state allocated
 * @ev_loading: the event state is being set up (a failure fails the load)
 * @cpus_no_event: CPUs that came online but got no perf event
 * @tev: events=task: the events created at start, one per target thread
 *	(sample.c; NULL when none)
 * @ntev: entries of @tev
 * @task_events: task events created at the last start
 * @task_events_failed: threads that got no task event at the last start
 *	(over SPULSE_TASK_EVENTS_MAX, or creation failed)
 * @ev_type: perf type actually used
 * @ev_config: perf config actually used
 * @oc: off-CPU slot table (offcpu=1)
 * @oc_on: off-CPU recording is on (the probes' gate is open)
 * @offcpu_open_at_stop: intervals still open when recording stopped
 * @early_at_stop: early wakeups still pending when recording stopped
 * @target: the target's struct pid (target_pid != 0), a reference held from
 *	load to unload; the sampler compares task_tgid(current) with it, so a
 *	later process reusing the number is never sampled
 * @target_vnr: target_pid as given, in the loader's pid namespace
 * @target_exited: the target exited; sampling was stopped, start refused
 * @target_work: stops sampling once the target exited (process context)
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
	struct spulse_relay_pos meta_rpos;
	struct dentry *dir;
	int cpuhp_state;
	int cpuhp_prepare;
	bool cpu_loading;
	u32 cpus_no_state;
	u64 percpu_bytes;
	bool ev_loading;
	u32 cpus_no_event;
	struct spulse_tev *tev;
	u32 ntev;
	u32 task_events;
	u32 task_events_failed;
	u32 ev_type;
	u64 ev_config;
	struct spulse_oc_table oc;
	bool oc_on;
	u64 offcpu_open_at_stop;
	u64 early_at_stop;
	struct pid *target;
	u32 target_vnr;
	bool target_exited;
	struct work_struct target_work;
};

extern struct spulse_state spulse;

/* relay.c */
int spulse_relay_open(void);
void spulse_relay_close(void);
bool spulse_relay_put(struct rchan_buf *buf, const void *data, size_t len);

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
struct rchan *spulse_meta_chan_open(size_t subbuf_size, size_t n_subbufs);
void spulse_relay_flush(void);
void spulse_relay_flush_chan(struct rchan *chan);
bool spulse_relay_position(struct rchan_buf *buf, u64 *published, u64 *read);

/* sample.c */
int spulse_sample_init(void);
void spulse_sample_exit(void);
int spulse_sample_prepare(void);
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
struct seq_file;
void spulse_meta_stats_show(struct seq_file *m);
void spulse_meta_position_show(struct seq_file *m);

/* offcpu.c */
int spulse_offcpu_init(void);
void spulse_offcpu_exit(void);
int spulse_offcpu_start(void);
void spulse_offcpu_stop(void);

/* control.c */
int spulse_control_init(void);
int spulse_control_start(void);
void spulse_control_stop(void);
void spulse_control_flush(void);
int spulse_control_trigger(void);
void spulse_control_target_exit(struct task_struct *p);
bool spulse_debugfs_locked_down(void);
void spulse_control_target_work(struct work_struct *w);

#endif /* SPULSE_KMOD_H */
