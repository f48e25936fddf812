/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small in-kernel SPULSE stream checker for the KUnit suites: decodes the
 * bytes spulse.ko emitted and checks the rules that matter for the kernel
 * writer (docs/FORMAT.md §3): dense ids per kind, no forward or dangling
 * references, truncated marker only as a root node, kernel-stream frame
 * kinds only. A stream header at a record boundary starts a new epoch
 * (§7): every id space and both clocks restart. It is deliberately
 * independent of kmod/ code.
 */
#ifndef SPULSE_KUNIT_STREAM_CHECK_H
#define SPULSE_KUNIT_STREAM_CHECK_H

#include <linux/types.h>

#include <spulse/encode.h>

#define SK_MAX_FRAMES	4096

/**
 * struct sk_stream - state carried across chunks of one stream
 * @n_frames: frames defined so far in this epoch
 * @n_stacks: stacks defined so far in this epoch
 * @n_threads: threads defined so far in this epoch
 * @n_samples: samples seen
 * @header_seen: the stream header was decoded
 * @frame_kind: kind of each frame id (first SK_MAX_FRAMES)
 * @frame_addr: address of each frame id (first SK_MAX_FRAMES)
 * @stack_frame: frame id of each stack id (first SK_MAX_FRAMES)
 * @stack_depth: depth of each stack id (first SK_MAX_FRAMES)
 * @max_depth: deepest stack node seen
 * @last_sample_stack: stack id named by the most recent sample
 * @last_sample_thread: thread id named by the most recent sample
 * @leaf_pred: optional predicate on a sample's leaf frame (kind, address)
 * @n_leaf_pred: samples whose leaf frame satisfied @leaf_pred
 * @n_kernel_frames: frames of kind SPULSE_FRAME_KERNEL
 * @n_user_frames: frames of kind SPULSE_FRAME_USER
 * @n_trunc_frames: frames of kind SPULSE_FRAME_TRUNCATED
 * @n_cpu_records: extension kind-1 (cpu) records
 * @first_is_cpu: the first record after the header was a cpu record
 * @cpu: CPU named by the latest cpu record (-1 before any)
 * @n_offcpu: extension kind-2 (off-CPU interval) records
 * @n_triggers: extension kind-3 (trigger) records
 * @n_records: records after the header
 * @event_ns: event clock (FORMAT.md 3.10): offset of the latest kind-2/3
 * @oc: fields of the latest off-CPU interval (@oc_t: its switch-out time)
 * @oc_t: event-clock time of @oc
 * @oc_stack_depth: depth of @oc's stack node
 * @oc_leaf_addr: address of @oc's leaf frame
 * @tr: fields of the latest trigger (text not kept, @tr_text_len is)
 * @tr_t: event-clock time of @tr
 * @tr_text: its first bytes, NUL terminated
 * @sample_ns: sample clock: offset of the latest sample (this epoch)
 * @n_epochs: stream headers after the first (epochs started)
 * @n_epoch_cpu: epochs whose first record is a cpu record
 * @start_us: start_us of the first header (every epoch must repeat it)
 * @epoch_first: no record yet after the latest header
 * @err_off: offset of the first error inside the chunk
 * @err: reason of the first error
 */
struct sk_stream {
	u32 n_frames;
	u32 n_stacks;
	u32 n_threads;
	u32 n_samples;
	bool header_seen;
	u8 frame_kind[SK_MAX_FRAMES];
	u64 frame_addr[SK_MAX_FRAMES];
	u32 stack_frame[SK_MAX_FRAMES];
	u16 stack_depth[SK_MAX_FRAMES];
	u32 max_depth;
	u32 last_sample_stack;
	u32 last_sample_thread;
	bool (*leaf_pred)(u8 kind, u64 addr);
	u32 n_leaf_pred;
	u32 n_kernel_frames;
	u32 n_user_frames;
	u32 n_trunc_frames;
	u32 n_cpu_records;
	bool first_is_cpu;
	s32 cpu;
	u32 n_offcpu;
	u32 n_triggers;
	u32 n_records;
	s64 event_ns;
	struct spulse_offcpu_fields oc;
	s64 oc_t;
	u32 oc_stack_depth;
	u64 oc_leaf_addr;
	struct spulse_trigger_fields tr;
	s64 tr_t;
	char tr_text[SPULSE_MAX_TRIGGER_TEXT + 1];
	s64 sample_ns;
	u32 n_epochs;
	u32 n_epoch_cpu;
	u64 start_us;
	bool epoch_first;
	size_t err_off;
	const char *err;
};

void sk_init(struct sk_stream *s);
int sk_feed(struct sk_stream *s, const u8 *p, size_t len);

#endif
