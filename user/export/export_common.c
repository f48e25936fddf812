/* SPDX-License-Identifier: MIT */
/* Helpers shared by the export writers: samples in memory, time order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/util.h"
#include "export_fmt.h"

uint64_t export_period_ns(const struct profile *p)
{
	return p->info->interval_us * 1000;
}

/*
 * Stable merge sort by time_ns. Spools are merged from per-CPU batches, so
 * the input is made of long sorted runs: runs are found first and merged
 * pairwise (natural merge sort), O(n log runs).
 */
static int sort_by_time(struct export_sample *v, size_t n)
{
	struct export_sample *tmp, *src = v, *dst;
	size_t *runs, nruns = 0, i, cap = 64;

	for (i = 1; i < n; i++)
		if (v[i].time_ns < v[i - 1].time_ns)
			break;
	if (i >= n)
		return 0;	/* already in order: the common case */
	runs = malloc(cap * sizeof(*runs));
	tmp = malloc(n * sizeof(*tmp));
	if (!runs || !tmp) {
		free(runs);
		free(tmp);
		return -ENOMEM;
	}
	runs[nruns++] = 0;
	for (i = 1; i < n; i++) {
		if (v[i].time_ns >= v[i - 1].time_ns)
			continue;
		if (nruns == cap) {
			size_t *nr = realloc(runs, cap * 2 * sizeof(*runs));

			if (!nr) {
				free(runs);
				free(tmp);
				return -ENOMEM;
			}
			runs = nr;
			cap *= 2;
		}
		runs[nruns++] = i;
	}
	dst = tmp;
	while (nruns > 1) {
		size_t r, out = 0;

		for (r = 0; r < nruns; r += 2) {
			size_t a = runs[r];
			size_t ae = r + 1 < nruns ? runs[r + 1] : n;
			size_t b = ae;
			size_t be = r + 2 < nruns ? runs[r + 2] : n;
			size_t k = a;

			while (a < ae && b < be)	/* left wins ties */
				dst[k++] = src[b].time_ns < src[a].time_ns ?
					   src[b++] : src[a++];
			while (a < ae)
				dst[k++] = src[a++];
			while (b < be)
				dst[k++] = src[b++];
			runs[out++] = runs[r];
		}
		nruns = out;
		{
			struct export_sample *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(runs);
	free(tmp);
	return 0;
}

int export_load_samples(struct profile *p, bool sort,
			struct export_sample **out, size_t *n)
{
	struct spulse_sample buf[1024];
	struct export_sample *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc, i;

	*out = NULL;
	*n = 0;
	if (p->info->samples) {
		cap = p->info->samples;
		v = malloc(cap * sizeof(*v));
		if (!v)
			goto oom;
	}
	while ((rc = spulse_replay_next_samples(p->replay, buf, 1024)) > 0) {
		for (i = 0; i < rc; i++) {
			if (!profile_wants(p, &buf[i]))
				continue;
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				struct export_sample *nv =
					realloc(v, nc * sizeof(*nv));

				if (!nv)
					goto oom;
				v = nv;
				cap = nc;
			}
			v[cnt].time_ns = buf[i].time_ns;
			v[cnt].thread = buf[i].thread;
			v[cnt].stack = buf[i].stack;
			v[cnt].cpu = buf[i].cpu;
			cnt++;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s: reading samples: %s\n", p->file,
			strerror(-rc));
		free(v);
		return EXIT_INVALID;
	}
	if (sort && sort_by_time(v, cnt) < 0)
		goto oom;
	*out = v;
	*n = cnt;
	return EXIT_OK;
oom:
	free(v);
	fprintf(stderr, "spulse: out of memory\n");
	return EXIT_INVALID;
}
