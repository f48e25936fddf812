/* SPDX-License-Identifier: MIT */
/*
 * Call tree of symbolized stacks (a trie keyed by frame label, root frame
 * at the top level), the common source of folded stacks and SVG flame
 * graphs.
 */
#ifndef SPULSE_CALLTREE_H
#define SPULSE_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

#define CALLTREE_NONE UINT32_MAX
#define CT_KIND_SEPARATOR 0xff	/* the "--" frame between wakee and waker */
#define CT_KIND_ROOT 0xfe	/* a --root comm|pid|tid frame */

enum ct_palette {
	CT_PALETTE_ONCPU = 0,	/* red/yellow user, orange kernel */
	CT_PALETTE_OFFCPU,	/* blue user, cyan kernel, violet waker */
};

struct ct_node {
	uint32_t label;		/* symbolizer label id */
	uint8_t kind;		/* frame kind of the first frame seen, or
				 * CT_KIND_SEPARATOR */
	uint8_t waker;		/* frame of a waker's stack (above "--") */
	uint64_t value;		/* samples (or ns) in this subtree */
	uint64_t self;		/* samples (or ns) ending here */
	uint64_t base;		/* diff: value in the first (base) profile */
	uint64_t base_self;	/* diff: self in the first profile */
	uint32_t child, sibling;	/* CALLTREE_NONE terminated */
};

struct calltree {
	struct ct_node *nodes;	/* nodes[0] is the synthetic root "all" */
	uint32_t n, cap;
	struct symbolizer *sym;
	const struct profile *p;	/* frames (virtual ids with --inline) */
	uint32_t *parent;	/* node -> parent node (CALLTREE_NONE for 0) */
	uint32_t *slots;	/* (parent, label) -> node + 1, 0 = empty */
	uint32_t nslots;	/* power of two, > 2 * n */
	bool ns;		/* values are nanoseconds, not samples */
	int palette;		/* enum ct_palette */
	bool diff;		/* ->base fields hold a first profile */
};

/*
 * An empty tree (root "all" only) over @p's frames and labels (values in
 * ns for an off-CPU profile).
 */
int calltree_init(struct calltree *t, const struct profile *p);

/*
 * Add a path of frame ids below the root: @frames[0..n) in that order
 * (@step 1) or reversed (@step -1), each node's value += @w, the last
 * node's self += @w. Returns the last node, or a negative errno.
 */
int64_t calltree_add_path(struct calltree *t, const uint32_t *frames, int n,
			  int step, uint64_t w);

/*
 * Build from the cells of @p (profile_count() first). @root: 0, or 'c',
 * 'p', 't' for a root frame per comm, per process ("COMM PID") or per
 * thread ("COMM PID/TID") below "all" (needs p->by_thread).
 */
int calltree_build(struct calltree *t, struct profile *p, int root);
/*
 * Build from off-CPU intervals (off-CPU profile @p): each interval's
 * blocked stack root first, then with a waker the separator "--" and the
 * waker's stack leaf first (bcc offwaketime), weighted by the metric.
 */
int calltree_build_wakers(struct calltree *t, struct profile *p,
			  const struct spulse_offcpu *iv, size_t n, int root);

/*
 * Differential tree: add @a (the first profile, its own symbolizer) into
 * @b as ->base/->base_self, matching frames by label text along the same
 * path; paths only in @a get nodes of value 0. Sets b->diff.
 */
int calltree_merge_base(struct calltree *b, const struct calltree *a);
void calltree_free(struct calltree *t);

/* Sort every node's children by label text (stable output). */
void calltree_sort(struct calltree *t);

/*
 * Write "root;...;leaf count" lines; for a diff tree "root;...;leaf
 * COUNT_A COUNT_B" (as FlameGraph's difffolded.pl).
 */
int calltree_write_folded(const struct calltree *t, FILE *f);

/* Label text of node @node ("all" for the root): *@len bytes (a NUL may
 * be one of them). */
const char *calltree_name(const struct calltree *t, uint32_t node,
			  size_t *len);

#endif /* SPULSE_CALLTREE_H */
