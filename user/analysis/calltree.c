/* SPDX-License-Identifier: MIT */
/* Call tree construction, differential merge and folded-stack output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "util.h"

static int64_t new_node(struct calltree *t, uint32_t label, uint8_t kind)
{
	struct ct_node *nd;

	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		struct ct_node *nn = realloc(t->nodes, cap * sizeof(*nn));
		uint32_t *np;

		if (!nn)
			return -1;
		t->nodes = nn;
		np = realloc(t->parent, cap * sizeof(*np));
		if (!np)
			return -1;
		t->parent = np;
		t->cap = cap;
	}
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->label = label;
	nd->kind = kind;
	nd->child = nd->sibling = CALLTREE_NONE;
	t->parent[t->n] = CALLTREE_NONE;
	return t->n++;
}

static uint32_t slot_hash(uint32_t parent, uint32_t label)
{
	uint64_t k = (uint64_t)parent << 32 | label;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Double the (parent, label) table and re-insert every node but the root. */
static int grow_slots(struct calltree *t)
{
	uint32_t ns = t->nslots ? t->nslots * 2 : 4096, i;
	uint32_t *sl = calloc(ns, sizeof(*sl));

	if (!sl)
		return -1;
	for (i = 1; i < t->n; i++) {
		uint32_t h = slot_hash(t->parent[i], t->nodes[i].label);

		while (sl[h & (ns - 1)])
			h++;
		sl[h & (ns - 1)] = i + 1;
	}
	free(t->slots);
	t->slots = sl;
	t->nslots = ns;
	return 0;
}

/*
 * The child of @parent labelled @label, created if new: a hash lookup, so
 * building is linear in the frames added however wide the tree is.
 */
static int64_t child_of(struct calltree *t, uint32_t parent, uint32_t label,
			uint8_t kind)
{
	uint32_t h, c;
	int64_t nc;

	if (t->nslots) {
		for (h = slot_hash(parent, label);
		     (c = t->slots[h & (t->nslots - 1)]); h++) {
			c--;
			if (t->nodes[c].label == label &&
			    t->parent[c] == parent)
				return c;
		}
	}
	nc = new_node(t, label, kind);
	if (nc < 0)
		return -1;
	t->parent[nc] = parent;
	t->nodes[nc].sibling = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)nc;
	if ((uint64_t)t->n * 2 >= t->nslots) {
		if (grow_slots(t) < 0)
			return -1;
		return nc;	/* grow_slots inserted it */
	}
	for (h = slot_hash(parent, label); t->slots[h & (t->nslots - 1)]; h++)
		;
	t->slots[h & (t->nslots - 1)] = (uint32_t)nc + 1;
	return nc;
}

int calltree_init(struct calltree *t, const struct profile *p)
{
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->sym = p->sym;
	t->ns = p->offcpu;
	t->palette = p->offcpu ? CT_PALETTE_OFFCPU : CT_PALETTE_ONCPU;
	if (new_node(t, CALLTREE_NONE, 0) < 0)
		return -ENOMEM;
	return 0;
}

/* Walk down from @cur along @frames (in the order given), adding @c. */
static int64_t add_frames(struct calltree *t, uint32_t cur,
			  const uint32_t *frames, int n, int step,
			  bool waker, uint64_t c)
{
	int i, k;

	for (k = 0, i = step > 0 ? 0 : n - 1; k < n; k++, i += step) {
		const struct sym_frame *sf = profile_frame(t->p, frames[i]);
		int64_t lid = profile_label_id(t->p, frames[i]);
		int64_t nc;

		if (!sf || lid < 0)
			return -ENOMEM;
		nc = child_of(t, cur, (uint32_t)lid, sf->kind);
		if (nc < 0)
			return -ENOMEM;
		cur = (uint32_t)nc;
		t->nodes[cur].waker = waker;
		t->nodes[cur].value += c;
	}
	return cur;
}

int64_t calltree_add_path(struct calltree *t, const uint32_t *frames, int n,
			  int step, uint64_t w)
{
	int64_t cur;

	t->nodes[0].value += w;
	cur = add_frames(t, 0, frames, n, step, false, w);
	if (cur >= 0)
		t->nodes[cur].self += w;
	return cur;
}

/* Root frame of thread @thread for --root (label cached per thread id). */
static int64_t root_node(struct calltree *t, struct profile *p, int root,
			 uint32_t thread, int64_t *cache, uint32_t ncache)
{
	char buf[512];
	int64_t lid;

	if (thread < ncache && cache[thread] >= 0)
		return cache[thread];
	lid = symbolizer_intern_label(p->sym, profile_thread_label(p, thread,
						root, buf, sizeof(buf)));
	if (lid < 0)
		return -ENOMEM;
	lid = child_of(t, 0, (uint32_t)lid, CT_KIND_ROOT);
	if (lid >= 0 && thread < ncache)
		cache[thread] = lid;
	return lid;
}

static int64_t *root_cache(struct profile *p, int root, uint32_t *n)
{
	uint32_t i;
	int64_t *c;

	*n = 0;
	if (!root)
		return NULL;
	*n = spulse_defs_count(p->defs, SPULSE_TAG_THREAD);
	c = malloc((*n ? *n : 1) * sizeof(*c));
	if (c)
		for (i = 0; i < *n; i++)
			c[i] = -1;
	return c;
}

int calltree_build(struct calltree *t, struct profile *p, int root)
{
	uint32_t frames[SPULSE_MAX_DEPTH], nc;
	int64_t *cache;
	size_t i;
	int n, rc = 0;

	if (calltree_init(t, p) < 0)
		return -ENOMEM;
	cache = root_cache(p, root, &nc);
	if (root && !cache)
		return -ENOMEM;
	for (i = 0; i < p->ncells && !rc; i++) {
		const struct profile_cell *pc = &p->cells[i];
		uint64_t c = pc->weight;
		int64_t cur = 0;

		if (!c)
			continue;
		n = profile_stack_frames(p, pc->stack, frames);
		if (n <= 0) {
			rc = -EBADMSG;
			break;
		}
		if (t->nodes[0].value + c < t->nodes[0].value) {
			rc = -EOVERFLOW;	/* every node sum <= the root's */
			break;
		}
		t->nodes[0].value += c;
		if (root) {
			cur = root_node(t, p, root, pc->thread, cache, nc);
			if (cur < 0) {
				rc = (int)cur;
				break;
			}
			t->nodes[cur].value += c;
		}
		cur = add_frames(t, (uint32_t)cur, frames, n, 1, false, c);
		if (cur < 0)
			rc = (int)cur;
		else
			t->nodes[cur].self += c;
	}
	free(cache);
	return rc;
}

int calltree_build_wakers(struct calltree *t, struct profile *p,
			  const struct spulse_offcpu *iv, size_t n, int root)
{
	uint32_t frames[SPULSE_MAX_DEPTH], nc;
	int64_t sep, *cache;
	size_t i;
	int rc = 0;

	if (calltree_init(t, p) < 0)
		return -ENOMEM;
	sep = symbolizer_intern_label(p->sym, "--");
	if (sep < 0)
		return -ENOMEM;
	cache = root_cache(p, root, &nc);
	if (root && !cache)
		return -ENOMEM;
	for (i = 0; i < n && !rc; i++) {
		uint64_t c = profile_offcpu_weight(p, &iv[i]);
		int64_t cur = 0;
		int d;

		if (!c)
			continue;
		d = profile_stack_frames(p, iv[i].stack, frames);
		if (d <= 0) {
			rc = -EBADMSG;
			break;
		}
		if (t->nodes[0].value + c < t->nodes[0].value) {
			rc = -EOVERFLOW;	/* every node sum <= the root's */
			break;
		}
		t->nodes[0].value += c;
		if (root) {
			cur = root_node(t, p, root, iv[i].thread, cache, nc);
			if (cur < 0) {
				rc = (int)cur;
				break;
			}
			t->nodes[cur].value += c;
		}
		cur = add_frames(t, (uint32_t)cur, frames, d, 1, false, c);
		if (cur >= 0 && iv[i].waker_thread != SPULSE_NONE &&
		    iv[i].waker_stack != SPULSE_NONE) {
			cur = child_of(t, (uint32_t)cur, (uint32_t)sep,
				       CT_KIND_SEPARATOR);
			if (cur < 0) {
				rc = -ENOMEM;
				break;
			}
			t->nodes[cur].value += c;
			d = profile_stack_frames(p, iv[i].waker_stack, frames);
			if (d < 0) {
				rc = -EBADMSG;
				break;
			}
			/* the waker's stack top-down: leaf first */
			if (d)
				cur = add_frames(t, (uint32_t)cur, frames, d,
						 -1, true, c);
		}
		if (cur < 0)
			rc = (int)cur;
		else
			t->nodes[cur].self += c;
	}
	free(cache);
	return rc;
}

int calltree_merge_base(struct calltree *b, const struct calltree *a)
{
	uint32_t *map = malloc((a->n ? a->n : 1) * sizeof(*map)), i;

	if (!map)
		return -ENOMEM;
	map[0] = 0;
	b->nodes[0].base = a->nodes[0].value;
	b->nodes[0].base_self = a->nodes[0].self;
	for (i = 1; i < a->n; i++) {
		const struct ct_node *an = &a->nodes[i];
		int64_t lid = symbolizer_intern_label_n(b->sym,
					symbolizer_label(a->sym, an->label),
					symbolizer_label_len(a->sym, an->label));
		int64_t bn;

		if (lid < 0) {
			free(map);
			return -ENOMEM;
		}
		/* parents are created before their children: map is set */
		bn = child_of(b, map[a->parent[i]], (uint32_t)lid, an->kind);
		if (bn < 0) {
			free(map);
			return -ENOMEM;
		}
		map[i] = (uint32_t)bn;
		b->nodes[bn].base += an->value;
		b->nodes[bn].base_self += an->self;
		b->nodes[bn].waker |= an->waker;
	}
	free(map);
	b->diff = true;
	return 0;
}

void calltree_free(struct calltree *t)
{
	free(t->nodes);
	free(t->parent);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static const struct calltree *sort_tree;

static int cmp_label(const void *a, const void *b)
{
	const struct ct_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const struct ct_node *y = &sort_tree->nodes[*(const uint32_t *)b];

	return symbolizer_label_cmp(sort_tree->sym, x->label, y->label);
}

void calltree_sort(struct calltree *t)
{
	uint32_t *kids = NULL, cap = 0, i;

	sort_tree = t;
	for (i = 0; i < t->n; i++) {
		uint32_t c, k = 0;

		for (c = t->nodes[i].child; c != CALLTREE_NONE;
		     c = t->nodes[c].sibling) {
			if (k == cap) {
				uint32_t *nk;

				cap = cap ? cap * 2 : 64;
				nk = realloc(kids, cap * sizeof(*nk));
				if (!nk) {
					free(kids);
					return;	/* unsorted output still valid */
				}
				kids = nk;
			}
			kids[k++] = c;
		}
		if (k < 2)
			continue;
		qsort(kids, k, sizeof(*kids), cmp_label);
		t->nodes[i].child = kids[0];
		for (c = 0; c + 1 < k; c++)
			t->nodes[kids[c]].sibling = kids[c + 1];
		t->nodes[kids[k - 1]].sibling = CALLTREE_NONE;
	}
	free(kids);
}

/*
 * Folded names: the text escape of CLI.md (no control byte, so no newline)
 * with the ';' separator shown as ':'.
 */
static void put_folded_name(FILE *f, const char *s, size_t len)
{
	char buf[256], *e = buf;
	size_t n = cli_text_escape(buf, sizeof(buf), s, len);

	if (n >= sizeof(buf)) {
		e = cli_text_dup(s, len);
		if (!e) {
			fputs("?", f);
			return;
		}
	}
	for (char *c = e; *c; c++)
		fputc(*c == ';' ? ':' : *c, f);
	if (e != buf)
		free(e);
}

int calltree_write_folded(const struct calltree *t, FILE *f)
{
	uint32_t *path = NULL, depth = 0, cap = 0, cur, i;

	/*
	 * iterative DFS: path[0..depth) are the nodes below the root. The
	 * path grows as needed: a wakers tree is blocked stack + "--" +
	 * waker stack deep (up to 2 * SPULSE_MAX_DEPTH + 2), and no line is
	 * dropped for its depth (issue 25).
	 */
	cur = t->nodes[0].child;
	while (cur != CALLTREE_NONE) {
		const struct ct_node *nd = &t->nodes[cur];

		if (depth == cap) {
			uint32_t nc = cap ? cap * 2 : 256;
			uint32_t *np = realloc(path, nc * sizeof(*path));

			if (!np) {
				free(path);
				return -ENOMEM;
			}
			path = np;
			cap = nc;
		}
		path[depth++] = cur;
		if (nd->self || (t->diff && nd->base_self)) {
			for (i = 0; i < depth; i++) {
				if (i)
					fputc(';', f);
				uint32_t l = t->nodes[path[i]].label;

				put_folded_name(f, symbolizer_label(t->sym, l),
					symbolizer_label_len(t->sym, l));
			}
			if (t->diff)
				fprintf(f, " %llu",
					(unsigned long long)nd->base_self);
			fprintf(f, " %llu\n", (unsigned long long)nd->self);
		}
		if (nd->child != CALLTREE_NONE) {
			cur = nd->child;
			continue;
		}
		/* climb until a node has a next sibling */
		cur = CALLTREE_NONE;
		while (depth) {
			uint32_t up = path[--depth];

			if (t->nodes[up].sibling != CALLTREE_NONE) {
				cur = t->nodes[up].sibling;
				break;
			}
		}
	}
	free(path);
	return ferror(f) ? -EIO : 0;
}

const char *calltree_name(const struct calltree *t, uint32_t node,
			  size_t *len)
{
	if (!node) {
		*len = 3;
		return "all";
	}
	*len = symbolizer_label_len(t->sym, t->nodes[node].label);
	return symbolizer_label(t->sym, t->nodes[node].label);
}
