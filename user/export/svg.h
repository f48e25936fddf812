/* SPDX-License-Identifier: MIT */
/*
 * Interactive, self-contained SVG flame graphs of a call tree (docs/CLI.md
 * "flame"): an embedded script (search with match %, click to zoom, reset
 * zoom, a details line on hover; URL parameters for links and tests:
 * z=NAME zooms to the widest box NAME, u=1 then resets the zoom, s=REGEX
 * searches, h=NAME shows NAME's details line), distinct palettes with a
 * legend, icicle layout and differential colouring.
 */
#ifndef SPULSE_SVG_H
#define SPULSE_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/calltree.h"

struct svg_opts {
	const char *title;
	bool inverted;		/* icicle: root at the top, callees below */
	bool diff;		/* colour by the change from ct_node.base */
};

/**
 * svg_write() - write @t as an SVG document
 * @t: call tree (calltree_sort() first for stable output)
 * @f: output
 * @o: options
 *
 * Return: 0, or -EIO when writing failed.
 */
int svg_write(const struct calltree *t, FILE *f, const struct svg_opts *o);

#endif /* SPULSE_SVG_H */
