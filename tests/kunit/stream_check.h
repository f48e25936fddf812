/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small in-kernel SPULSE stream checker for the KUnit suites: decodes the
 * bytes spulse.ko emitted and checks the rules that matter for the kernel
 * writer (docs/FORMAT.md §3): dense ids per kind, no forward or dangling
 * references, truncated marker only as a root node, kernel-stream frame
 * kinds only. It is deliberately independent of kmod/ code.
 */
#ifndef SPULSE_KUNIT_STREAM_CHECK_H
#define SPULSE_KUNIT_STREAM_CHECK_H

#include <linux/types.h>

#define SK_MAX_FRAMES	4096

/**
 * struct sk_stream - state carried across chunks of one stream
 * @n_frames: frames defined so far
 * @n_stacks: stacks defined so far
 * @n_threads: threads defined so far
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
	size_t err_off;
	const char *err;
};

void sk_init(struct sk_stream *s);
int sk_feed(struct sk_stream *s, const u8 *p, size_t len);

#endif
