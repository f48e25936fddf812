/* SPDX-License-Identifier: MIT */
/* Interactive SVG flame graphs (svg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "analysis/util.h"

#define SVG_WIDTH	1200.0
#define SVG_ROW		16
#define SVG_TOP		60	/* title, buttons and legend above */
#define SVG_BOTTOM	30	/* details line below */
#define SVG_PAD_SIDE	10.0
#define SVG_MIN_WIDTH	0.3	/* px; narrower frames are not drawn */
/*
 * The fill of a search match (its text turns white): near black, the
 * colour farthest from every palette below (> 190 in RGB distance from
 * each; FlameGraph's magenta rgb(230,0,230) was 115 from the violet waker
 * palette and read as one more waker frame in a --wakers graph).
 */
#define SVG_SEARCH_FILL	"rgb(16,16,16)"

/*
 * The embedded script. Frames are the <g> children of #frames; each rect
 * carries sp:x (offset from the left edge in samples or ns), sp:w (its
 * value) and sp:d (depth), so zooming needs no geometry parsing. The name
 * is the <title> text before its last " (".
 */
static const char svg_script[] =
"var W = %.1f, PAD = %.1f, FULL = W - 2 * PAD;\n"
"var frames = [], total = 0, details, matched, unzoomBtn, searchBtn;\n"
"var searchTerm = null, zoomed = null;\n"
"function byId(id) { return document.getElementById(id); }\n"
"function nameOf(g) {\n"
"  var t = g.getElementsByTagName('title')[0].textContent;\n"
"  var i = t.lastIndexOf(' (');\n"
"  return i < 0 ? t : t.substring(0, i);\n"
"}\n"
"function init(evt) {\n"
"  details = byId('details'); matched = byId('matched');\n"
"  unzoomBtn = byId('unzoom'); searchBtn = byId('search');\n"
"  var gs = byId('frames').getElementsByTagName('g');\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var r = gs[i].getElementsByTagName('rect')[0];\n"
"    var f = { g: gs[i], r: r, t: gs[i].getElementsByTagName('text')[0],\n"
"      x: +r.getAttribute('sp:x'), w: +r.getAttribute('sp:w'),\n"
"      d: +r.getAttribute('sp:d'), name: nameOf(gs[i]),\n"
"      fill: r.getAttribute('fill'),\n"
"      tip: gs[i].getElementsByTagName('title')[0].textContent };\n"
"    if (f.d == 0 && f.w > total) total = f.w;\n"
"    frames.push(f);\n"
"    gs[i].onmouseover = (function (f) { return function () {\n"
"      details.textContent = 'Function: ' + f.tip; }; })(f);\n"
"    gs[i].onmouseout = function () { details.textContent = ' '; };\n"
"    gs[i].onclick = (function (f) { return function () { zoom(f); }; })(f);\n"
"  }\n"
"  unzoomBtn.onclick = unzoom;\n"
"  searchBtn.onclick = function () {\n"
"    if (searchTerm !== null) { resetSearch(); return; }\n"
"    var s = prompt('Search (regular expression)', '');\n"
"    if (s) search(s);\n"
"  };\n"
"  document.addEventListener('keydown', function (e) {\n"
"    if (e.key == 'Escape') { unzoom(); resetSearch(); }\n"
"    else if ((e.ctrlKey && e.key == 'f') || e.key == '/') {\n"
"      e.preventDefault(); searchBtn.onclick(); }\n"
"  });\n"
"  var q = {}, parts = (location.search || '').substring(1).split('&');\n"
"  for (var k = 0; k < parts.length; k++) {\n"
"    var kv = parts[k].split('=');\n"
"    if (kv[0]) q[kv[0]] = decodeURIComponent((kv[1] || '').replace(/\\+/g, ' '));\n"
"  }\n"
"  var z = widest(q.z), h = widest(q.h);\n"
"  if (z) zoom(z);\n"
"  if (q.u) unzoom();\n"
"  if (q.s) search(q.s);\n"
"  if (h) h.g.onmouseover();\n"
"  document.documentElement.setAttribute('sp:ready', '1');\n"
"}\n"
"function widest(name) {\n"
"  var best = null;\n"
"  for (var j = 0; name && j < frames.length; j++)\n"
"    if (frames[j].name == name && (!best || frames[j].w > best.w)) best = frames[j];\n"
"  return best;\n"
"}\n"
"function fit(name, w) {\n"
"  if (w < 25) return '';\n"
"  var n = Math.floor((w - 6) / 7);\n"
"  if (name.length <= n) return name;\n"
"  return n > 2 ? name.substring(0, n - 2) + '..' : '';\n"
"}\n"
"function place(f, x, w) {\n"
"  f.r.setAttribute('x', x.toFixed(1));\n"
"  f.r.setAttribute('width', w.toFixed(1));\n"
"  f.t.setAttribute('x', (x + 3).toFixed(1));\n"
"  f.t.textContent = fit(f.name, w);\n"
"}\n"
"function zoom(z) {\n"
"  zoomed = z; unzoomBtn.setAttribute('class', 'btn');\n"
"  var scale = FULL / z.w;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    if (f.d < z.d && f.x <= z.x && f.x + f.w >= z.x + z.w) {\n"
"      place(f, PAD, FULL); f.g.setAttribute('class', 'parent');\n"
"    } else if (f.d >= z.d && f.x >= z.x && f.x + f.w <= z.x + z.w) {\n"
"      place(f, PAD + (f.x - z.x) * scale, f.w * scale);\n"
"      f.g.removeAttribute('class');\n"
"    } else {\n"
"      f.g.setAttribute('class', 'hide');\n"
"    }\n"
"  }\n"
"  if (searchTerm !== null) search(searchTerm);\n"
"}\n"
"function unzoom() {\n"
"  zoomed = null; unzoomBtn.setAttribute('class', 'btn hide');\n"
"  var scale = total ? FULL / total : 0;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    place(frames[i], PAD + frames[i].x * scale, frames[i].w * scale);\n"
"    frames[i].g.removeAttribute('class');\n"
"  }\n"
"  if (searchTerm !== null) search(searchTerm);\n"
"}\n"
"function search(term) {\n"
"  var re;\n"
"  try { re = new RegExp(term); } catch (err) { return; }\n"
"  searchTerm = term;\n"
"  var hits = [];\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    if (re.test(f.name)) {\n"
"      f.r.setAttribute('fill', '" SVG_SEARCH_FILL "');\n"
"      f.t.setAttribute('class', 'hit'); hits.push(f);\n"
"    } else {\n"
"      f.r.setAttribute('fill', f.fill); f.t.removeAttribute('class');\n"
"    }\n"
"  }\n"
"  /* the union of the matched ranges: nested matches count once */\n"
"  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
"  var sum = 0, end = -1;\n"
"  for (var h = 0; h < hits.length; h++) {\n"
"    var e = hits[h].x + hits[h].w;\n"
"    if (hits[h].x >= end) { sum += hits[h].w; end = e; }\n"
"    else if (e > end) { sum += e - end; end = e; }\n"
"  }\n"
"  var pct = total ? 100 * sum / total : 0;\n"
"  matched.textContent = 'Matched: ' + pct.toFixed(2) + '%%';\n"
"  searchBtn.textContent = 'Reset Search';\n"
"}\n"
"function resetSearch() {\n"
"  searchTerm = null;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    frames[i].r.setAttribute('fill', frames[i].fill);\n"
"    frames[i].t.removeAttribute('class');\n"
"  }\n"
"  matched.textContent = ' ';\n"
"  searchBtn.textContent = 'Search';\n"
"}\n";

/*
 * @s as XML text: first the CLI's text escape (CLI.md "Printing spool
 * text": control bytes, DEL, '\\' and malformed UTF-8 as \xNN, so the
 * document is well-formed UTF-8 and XML 1.0 and no byte is lost), then
 * the XML entities; at most @max characters (never cutting a UTF-8
 * sequence), ".." when cut.
 */
static void put_xml_n(FILE *f, const char *s, size_t len, size_t max)
{
	char *e = cli_text_dup(s, len), *p;
	size_t n = 0;

	if (!e) {
		fputs("?", f);
		return;
	}
	for (p = e; *p && n < max; p++) {
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			fputc(*p, f);
			/* a UTF-8 sequence counts as one character */
			while (((unsigned char)p[1] & 0xc0) == 0x80)
				fputc(*++p, f);
		}
		n++;
	}
	if (*p && max > 2)
		fputs("..", f);
	free(e);
}

static void put_xml(FILE *f, const char *s, size_t max)
{
	put_xml_n(f, s, strlen(s), max);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

struct rgb {
	int r, g, b;
};

/* The palettes; each legend entry shows the middle of its range. */
enum pal {
	PAL_USER,	/* on-CPU user: red/yellow (FlameGraph "hot") */
	PAL_KERNEL,	/* on-CPU kernel: green */
	PAL_TRUNCATED,	/* grey */
	PAL_OFF_USER,	/* off-CPU user: blue (FlameGraph "io") */
	PAL_OFF_KERNEL,	/* off-CPU kernel: cyan */
	PAL_WAKER,	/* violet */
	PAL_SEPARATOR,	/* light grey */
	PAL_ROOT,	/* --root frames: khaki */
	PAL_N
};

static const char *const pal_names[PAL_N] = {
	"user", "kernel", "[truncated]", "off-CPU user", "off-CPU kernel",
	"waker", "--", "comm/pid/tid",
};

static struct rgb pal_color(int pal, uint32_t h)
{
	switch (pal) {
	case PAL_USER:
		return (struct rgb){ 205 + (int)(h % 50),
				     70 + (int)((h >> 8) % 150),
				     40 + (int)((h >> 16) % 40) };
	case PAL_KERNEL:
		return (struct rgb){ 100 + (int)(h % 40),
				     180 + (int)((h >> 8) % 50),
				     50 + (int)((h >> 16) % 40) };
	case PAL_TRUNCATED:
		return (struct rgb){ 170, 170, 170 };
	case PAL_OFF_USER: {
		int v = 80 + (int)(h % 60);

		return (struct rgb){ v, v, 190 + (int)((h >> 8) % 55) };
	}
	case PAL_OFF_KERNEL:
		return (struct rgb){ (int)(h % 60), 170 + (int)((h >> 8) % 60),
				     200 + (int)((h >> 16) % 45) };
	case PAL_WAKER:
		return (struct rgb){ 150 + (int)(h % 50),
				     110 + (int)((h >> 8) % 40),
				     220 + (int)((h >> 16) % 30) };
	case PAL_SEPARATOR:
		return (struct rgb){ 200, 200, 200 };
	default:
		return (struct rgb){ 200 + (int)(h % 20), 195 + (int)(h % 20),
				     140 };
	}
}

static int node_pal(const struct calltree *t, const struct ct_node *nd)
{
	if (nd->kind == SPULSE_FRAME_TRUNCATED)
		return PAL_TRUNCATED;
	if (nd->kind == CT_KIND_SEPARATOR)
		return PAL_SEPARATOR;
	if (nd->kind == CT_KIND_ROOT)
		return PAL_ROOT;
	if (t->palette == CT_PALETTE_OFFCPU) {
		if (nd->waker)
			return PAL_WAKER;
		return nd->kind == SPULSE_FRAME_KERNEL ? PAL_OFF_KERNEL :
							 PAL_OFF_USER;
	}
	return nd->kind == SPULSE_FRAME_KERNEL ? PAL_KERNEL : PAL_USER;
}

struct svg_ctx {
	const struct calltree *t;
	const struct svg_opts *o;
	FILE *f;
	double scale;		/* px per sample (or ns) */
	int height;
	double base_scale;	/* diff: second total / first total */
	double max_delta;	/* diff: largest |delta| of a drawn frame */
	bool used[PAL_N];	/* palettes drawn, for the legend */
};

/* Diff: value - base scaled to the second profile's total. */
static double node_delta(const struct svg_ctx *c, const struct ct_node *nd)
{
	return (double)nd->value - (double)nd->base * c->base_scale;
}

/* Red for growth, blue for shrinkage, intensity by |delta|, white for 0. */
static struct rgb diff_color(const struct svg_ctx *c, const struct ct_node *nd)
{
	double d = node_delta(c, nd);
	double r = c->max_delta > 0 ? (d < 0 ? -d : d) / c->max_delta : 0;
	int v = (int)(250.5 - 190 * (r > 1 ? 1 : r));

	if (d > 0 && r > 1e-9)
		return (struct rgb){ 255, v, v };
	if (d < 0 && r > 1e-9)
		return (struct rgb){ v, v, 255 };
	return (struct rgb){ 250, 250, 250 };
}

/* "N samples" or "X.XXX ms" */
static void put_value(const struct calltree *t, FILE *f, uint64_t v)
{
	if (t->ns)
		fprintf(f, "%.3f ms", (double)v / 1e6);
	else
		fprintf(f, "%llu samples", (unsigned long long)v);
}

static uint32_t max_depth(const struct calltree *t)
{
	uint32_t *depth = calloc(t->n ? t->n : 1, sizeof(*depth)), i, best = 0;

	if (!depth)
		return 64;
	/* parents come before their children */
	for (i = 1; i < t->n; i++) {
		depth[i] = depth[t->parent[i]] + 1;
		if (depth[i] > best)
			best = depth[i];
	}
	free(depth);
	return best + 1;
}

static void diff_max(struct svg_ctx *c)
{
	const struct calltree *t = c->t;
	uint32_t i;

	for (i = 1; i < t->n; i++) {
		double d = node_delta(c, &t->nodes[i]);

		if (d < 0)
			d = -d;
		if ((double)t->nodes[i].value * c->scale >= SVG_MIN_WIDTH &&
		    d > c->max_delta)
			c->max_delta = d;
	}
}

static void frame_title(const struct svg_ctx *c, const struct ct_node *nd,
			const char *name, size_t name_len)
{
	const struct calltree *t = c->t;
	double tot = t->nodes[0].value ? (double)t->nodes[0].value : 1;

	put_xml_n(c->f, name, name_len, 4096);
	fputs(" (", c->f);
	put_value(t, c->f, nd->value);
	fprintf(c->f, ", %.2f%%", 100.0 * (double)nd->value / tot);
	if (t->diff) {
		double btot = t->nodes[0].base ? (double)t->nodes[0].base : 1;
		double d = 100.0 * (double)nd->value / tot -
			   100.0 * (double)nd->base / btot;

		fputs("; before ", c->f);
		put_value(t, c->f, nd->base);
		fprintf(c->f, ", %.2f%%; %+.2f%%", 100.0 * (double)nd->base /
			btot, d);
	}
	fputs(")", c->f);
}

/* Depth-first with an explicit stack: a tree may be SPULSE_MAX_DEPTH+ deep. */
static void svg_frames(struct svg_ctx *c)
{
	const struct calltree *t = c->t;
	struct item {
		uint32_t node, depth;
		uint64_t off;		/* value offset from the left edge */
	} *stack;
	size_t sp = 0, cap = 256;

	stack = malloc(cap * sizeof(*stack));
	if (!stack)
		return;
	stack[sp++] = (struct item){ 0, 0, 0 };
	while (sp) {
		struct item it = stack[--sp];
		const struct ct_node *nd = &t->nodes[it.node];
		size_t name_len;
		const char *name = calltree_name(t, it.node, &name_len);
		double x = SVG_PAD_SIDE + (double)it.off * c->scale;
		double w = (double)nd->value * c->scale;
		int y = c->o->inverted ?
			SVG_TOP + SVG_ROW * (int)it.depth :
			c->height - SVG_BOTTOM - SVG_ROW * (int)(it.depth + 1);
		uint64_t off = it.off;
		size_t first = sp;
		struct rgb col;
		uint32_t ch;

		if (w < SVG_MIN_WIDTH)
			continue;
		if (t->diff) {
			col = diff_color(c, nd);
		} else {
			int pal = node_pal(t, nd);

			col = pal_color(pal, name_hash(name));
			if (it.node)
				c->used[pal] = true;
		}
		fputs("<g><title>", c->f);
		frame_title(c, nd, name, name_len);
		fprintf(c->f, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			"height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" "
			"sp:x=\"%llu\" sp:w=\"%llu\" sp:d=\"%u\"/>"
			"<text x=\"%.1f\" y=\"%d\">", x, y, w, SVG_ROW - 1,
			col.r, col.g, col.b, (unsigned long long)it.off,
			(unsigned long long)nd->value, it.depth, x + 3,
			y + SVG_ROW - 4);
		if (w > 25)
			put_xml_n(c->f, name, name_len,
				  (size_t)((w - 6) / 7));
		fputs("</text></g>\n", c->f);
		/* children left to right: push in reverse */
		for (ch = nd->child; ch != CALLTREE_NONE;
		     ch = t->nodes[ch].sibling) {
			if (sp == cap) {
				struct item *ns = realloc(stack, cap * 2 *
							  sizeof(*ns));

				if (!ns)
					break;
				stack = ns;
				cap *= 2;
			}
			stack[sp++] = (struct item){ ch, it.depth + 1, off };
			off += t->nodes[ch].value;
		}
		for (size_t a = first, b = sp; b > a + 1; a++, b--) {
			struct item tmp = stack[a];

			stack[a] = stack[b - 1];
			stack[b - 1] = tmp;
		}
	}
	free(stack);
}

static void legend(struct svg_ctx *c)
{
	double x = 260;
	int i;

	fputs("<g id=\"legend\">", c->f);
	if (c->t->diff) {
		struct rgb red = { 255, 60, 60 }, blue = { 60, 60, 255 };

		fprintf(c->f, "<rect x=\"%.0f\" y=\"30\" width=\"12\" "
			"height=\"12\" fill=\"rgb(%d,%d,%d)\"/><text x=\"%.0f\" "
			"y=\"40\">grew (share of samples)</text>", x, red.r,
			red.g, red.b, x + 16);
		x += 190;
		fprintf(c->f, "<rect x=\"%.0f\" y=\"30\" width=\"12\" "
			"height=\"12\" fill=\"rgb(%d,%d,%d)\"/><text x=\"%.0f\" "
			"y=\"40\">shrank</text>", x, blue.r, blue.g, blue.b,
			x + 16);
		x += 80;
		fprintf(c->f, "<text x=\"%.0f\" y=\"40\">width: second "
			"profile</text>", x);
	}
	for (i = 0; i < PAL_N && !c->t->diff; i++) {
		struct rgb col;

		if (!c->used[i])
			continue;
		col = pal_color(i, 0x80808080u);
		fprintf(c->f, "<rect x=\"%.0f\" y=\"30\" width=\"12\" "
			"height=\"12\" fill=\"rgb(%d,%d,%d)\"/><text x=\"%.0f\" "
			"y=\"40\">", x, col.r, col.g, col.b, x + 16);
		put_xml(c->f, pal_names[i], 64);
		fputs("</text>", c->f);
		x += 28 + 7.0 * (double)strlen(pal_names[i]);
	}
	fputs("</g>\n", c->f);
}

int svg_write(const struct calltree *t, FILE *f, const struct svg_opts *o)
{
	struct svg_ctx c = { .t = t, .o = o, .f = f };
	uint32_t depth = max_depth(t);
	double total = t->nodes[0].value ? (double)t->nodes[0].value : 1.0;

	c.height = SVG_TOP + SVG_ROW * (int)depth + SVG_BOTTOM;
	c.scale = (SVG_WIDTH - 2 * SVG_PAD_SIDE) / total;
	if (t->diff) {
		c.base_scale = t->nodes[0].base ?
			(double)t->nodes[0].value / (double)t->nodes[0].base : 0;
		diff_max(&c);
	}
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"onload=\"init(evt)\" viewBox=\"0 0 %.0f %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:sp=\"https://spulse.invalid/flame\">\n"
		"<style>text{font-family:monospace;font-size:11px;fill:#000}"
		"#frames g:hover rect{stroke:#000;stroke-width:0.5}"
		"#frames g{cursor:pointer}.btn{cursor:pointer}"
		".hide{display:none}.parent{opacity:0.5}text.hit{fill:#fff}"
		"</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n", SVG_WIDTH,
		c.height, SVG_WIDTH, c.height);
	fprintf(f, svg_script, SVG_WIDTH, SVG_PAD_SIDE);
	fprintf(f, "]]></script>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" "
		"style=\"font-size:16px\">", SVG_WIDTH / 2);
	put_xml(f, o->title ? o->title : "", 200);
	fputs(" (", f);
	put_value(t, f, t->nodes[0].value);
	fprintf(f, "%s)</text>\n", t->ns ? " off-CPU" : "");
	fprintf(f, "<text id=\"unzoom\" class=\"btn hide\" x=\"%.0f\" "
		"y=\"40\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"40\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%d\" "
		"text-anchor=\"end\"> </text>\n", SVG_PAD_SIDE,
		SVG_WIDTH - SVG_PAD_SIDE, SVG_PAD_SIDE, c.height - 10,
		SVG_WIDTH - SVG_PAD_SIDE, c.height - 10);
	fputs("<g id=\"frames\">\n", f);
	svg_frames(&c);
	fputs("</g>\n", f);
	legend(&c);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
