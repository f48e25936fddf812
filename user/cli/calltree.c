/* SPDX-License-Identifier: MIT */
/* Call tree construction, folded-stack output and SVG flame graphs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"

#define SVG_WIDTH	1200.0
#define SVG_ROW		16
#define SVG_PAD_TOP	40
#define SVG_PAD_SIDE	10.0
#define SVG_MIN_WIDTH	0.3	/* px; narrower frames are not drawn */

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

static int calltree_init(struct calltree *t, struct profile *p)
{
	memset(t, 0, sizeof(*t));
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
		const struct sym_frame *sf = symbolizer_frame(t->sym, frames[i]);
		int64_t lid = symbolizer_label_id(t->sym, frames[i]);
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

int calltree_init_sym(struct calltree *t, struct symbolizer *sym, bool ns)
{
	memset(t, 0, sizeof(*t));
	t->sym = sym;
	t->ns = ns;
	if (new_node(t, CALLTREE_NONE, 0) < 0)
		return -ENOMEM;
	return 0;
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

int calltree_build(struct calltree *t, struct profile *p)
{
	uint32_t frames[SPULSE_MAX_DEPTH], s;
	int n;

	if (calltree_init(t, p) < 0)
		return -ENOMEM;
	for (s = 0; s < p->nstacks; s++) {
		uint64_t c = p->stack_count[s];
		int64_t cur;

		if (!c)
			continue;
		n = profile_stack_frames(p, s, frames);
		if (n <= 0)
			return -EBADMSG;
		t->nodes[0].value += c;
		cur = add_frames(t, 0, frames, n, 1, false, c);
		if (cur < 0)
			return (int)cur;
		t->nodes[cur].self += c;
	}
	return 0;
}

int calltree_build_wakers(struct calltree *t, struct profile *p,
			  const struct spulse_offcpu *iv, size_t n)
{
	uint32_t frames[SPULSE_MAX_DEPTH];
	int64_t sep;
	size_t i;

	if (calltree_init(t, p) < 0)
		return -ENOMEM;
	sep = symbolizer_intern_label(p->sym, "--");
	if (sep < 0)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t c = profile_offcpu_weight(p, &iv[i]);
		int64_t cur;
		int d;

		if (!c)
			continue;
		d = profile_stack_frames(p, iv[i].stack, frames);
		if (d <= 0)
			return -EBADMSG;
		t->nodes[0].value += c;
		cur = add_frames(t, 0, frames, d, 1, false, c);
		if (cur >= 0 && iv[i].waker_thread != SPULSE_NONE &&
		    iv[i].waker_stack != SPULSE_NONE) {
			cur = child_of(t, (uint32_t)cur, (uint32_t)sep,
				       CT_KIND_SEPARATOR);
			if (cur < 0)
				return -ENOMEM;
			t->nodes[cur].value += c;
			d = profile_stack_frames(p, iv[i].waker_stack, frames);
			if (d <= 0)
				return -EBADMSG;
			/* the waker's stack top-down: leaf first */
			cur = add_frames(t, (uint32_t)cur, frames, d, -1, true,
					 c);
		}
		if (cur < 0)
			return (int)cur;
		t->nodes[cur].self += c;
	}
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

	return strcmp(symbolizer_label(sort_tree->sym, x->label),
		      symbolizer_label(sort_tree->sym, y->label));
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

/* Folded names may not hold ';' (separator) or newlines. */
static void put_folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' ? ' ' : *s, f);
}

int calltree_write_folded(const struct calltree *t, FILE *f)
{
	uint32_t path[SPULSE_MAX_DEPTH + 1], depth = 0, cur, i;

	/* iterative DFS: path[0..depth) are the nodes below the root */
	cur = t->nodes[0].child;
	while (cur != CALLTREE_NONE) {
		const struct ct_node *nd = &t->nodes[cur];

		path[depth++] = cur;
		if (nd->self) {
			for (i = 0; i < depth; i++) {
				if (i)
					fputc(';', f);
				put_folded_name(f, symbolizer_label(t->sym,
					t->nodes[path[i]].label));
			}
			fprintf(f, " %llu\n", (unsigned long long)nd->self);
		}
		if (nd->child != CALLTREE_NONE && depth <= SPULSE_MAX_DEPTH) {
			cur = nd->child;
			continue;
		}
		/* climb until a node has a next sibling */
		while (depth) {
			uint32_t up = path[--depth];

			if (t->nodes[up].sibling != CALLTREE_NONE) {
				cur = t->nodes[up].sibling;
				break;
			}
			cur = CALLTREE_NONE;
		}
	}
	return ferror(f) ? -EIO : 0;
}

static void put_xml(FILE *f, const char *s, size_t max)
{
	size_t n = 0;

	for (; *s && n < max; s++, n++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
	if (*s && max > 2)
		fputs("..", f);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void node_color(const struct calltree *t, const struct ct_node *nd,
		       const char *name, int *r, int *g, int *b)
{
	uint32_t h = name_hash(name);

	if (nd->kind == SPULSE_FRAME_TRUNCATED ||
	    nd->kind == CT_KIND_SEPARATOR) {	/* grey */
		*r = *g = *b = nd->kind == CT_KIND_SEPARATOR ? 200 : 170;
		return;
	}
	if (t->palette == CT_PALETTE_OFFCPU) {
		if (nd->waker) {		/* violet (waker) */
			*r = 150 + (int)(h % 50);
			*g = 110 + (int)((h >> 8) % 40);
			*b = 220 + (int)((h >> 16) % 30);
		} else if (nd->kind == SPULSE_FRAME_KERNEL) {	/* cyan */
			*r = (int)(h % 60);
			*g = 170 + (int)((h >> 8) % 60);
			*b = 200 + (int)((h >> 16) % 45);
		} else {			/* blue (FlameGraph "io") */
			*r = *g = 80 + (int)(h % 60);
			*b = 190 + (int)((h >> 8) % 55);
		}
		return;
	}
	switch (nd->kind) {
	case SPULSE_FRAME_KERNEL:	/* orange */
		*r = 230; *g = 140 + (int)(h % 50); *b = 40 + (int)(h % 30);
		break;
	default:			/* warm red/yellow */
		*r = 205 + (int)(h % 50);
		*g = 70 + (int)((h >> 8) % 150);
		*b = 40 + (int)((h >> 16) % 40);
	}
}

/* "N samples" or "X.XXX ms" */
static void put_value(const struct calltree *t, FILE *f, uint64_t v)
{
	if (t->ns)
		fprintf(f, "%.3f ms", (double)v / 1e6);
	else
		fprintf(f, "%llu samples", (unsigned long long)v);
}

static uint32_t max_depth(const struct calltree *t, uint32_t node)
{
	uint32_t c, best = 0;

	for (c = t->nodes[node].child; c != CALLTREE_NONE;
	     c = t->nodes[c].sibling) {
		uint32_t d = max_depth(t, c);

		if (d > best)
			best = d;
	}
	return best + 1;
}

static void svg_node(const struct calltree *t, FILE *f, uint32_t node,
		     double x, uint32_t depth, double scale, int height)
{
	const struct ct_node *nd = &t->nodes[node];
	double w = (double)nd->value * scale, cx = x;
	const char *name = node ? symbolizer_label(t->sym, nd->label) : "all";
	double pct = 100.0 * (double)nd->value / (double)t->nodes[0].value;
	int y = height - SVG_ROW * (int)(depth + 1), r, g, b;
	uint32_t c;

	if (w < SVG_MIN_WIDTH)
		return;
	node_color(t, nd, name, &r, &g, &b);
	fprintf(f, "<g><title>");
	put_xml(f, name, 4096);
	fputs(" (", f);
	put_value(t, f, nd->value);
	fprintf(f, ", %.2f%%)</title>"
		"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
		pct, x, y, w, SVG_ROW - 1, r, g, b);
	if (w > 25) {
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">", x + 3,
			y + SVG_ROW - 4);
		put_xml(f, name, (size_t)((w - 6) / 7));
		fprintf(f, "</text>");
	}
	fprintf(f, "</g>\n");
	for (c = nd->child; c != CALLTREE_NONE; c = t->nodes[c].sibling) {
		svg_node(t, f, c, cx, depth + 1, scale, height);
		cx += (double)t->nodes[c].value * scale;
	}
}

int calltree_write_svg(const struct calltree *t, FILE *f, const char *title)
{
	uint32_t depth = max_depth(t, 0);
	int height = SVG_PAD_TOP + SVG_ROW * (int)depth + 10;
	double total = t->nodes[0].value ? (double)t->nodes[0].value : 1.0;
	double scale = (SVG_WIDTH - 2 * SVG_PAD_SIDE) / total;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"viewBox=\"0 0 %.0f %d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:monospace;font-size:11px;"
		"fill:#000}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size:16px\">", SVG_WIDTH, height, SVG_WIDTH,
		height, SVG_WIDTH / 2);
	put_xml(f, title, 200);
	fputs(" (", f);
	put_value(t, f, t->nodes[0].value);
	fprintf(f, "%s)</text>\n", t->ns ? " off-CPU" : "");
	/* the root "all" box at the bottom, callers below callees */
	svg_node(t, f, 0, SVG_PAD_SIDE, 0, scale, height - 10);
	fprintf(f, "</svg>\n");
	return ferror(f) ? -EIO : 0;
}
