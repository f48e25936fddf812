/* SPDX-License-Identifier: MIT */
/* Option parsing and the per-thread / per-frame decisions of filter.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "filter.h"

static int push_u32(uint32_t **v, size_t *n, uint32_t x)
{
	uint32_t *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	nv[(*n)++] = x;
	*v = nv;
	return 0;
}

static int push_str(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strndup(s, len);
	if (!nv[*n])
		return -1;
	(*n)++;
	return 0;
}

/* "1,2,3" into @v; each a decimal u32. */
static int parse_ids(const char *opt, const char *arg, uint32_t **v, size_t *n)
{
	const char *s = arg;

	for (;;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		char buf[32];
		uint64_t x;

		if (!len || len >= sizeof(buf)) {
			fprintf(stderr, "spulse: %s: bad list '%s' (ids "
				"separated by commas)\n", opt, arg);
			return EXIT_USAGE;
		}
		memcpy(buf, s, len);
		buf[len] = 0;
		if (!cli_parse_u64(opt, buf, &x))
			return EXIT_USAGE;
		if (x > UINT32_MAX) {
			fprintf(stderr, "spulse: %s %s is not a process or "
				"thread id\n", opt, buf);
			return EXIT_USAGE;
		}
		if (push_u32(v, n, (uint32_t)x) < 0)
			goto oom;
		if (!e)
			return 1;
		s = e + 1;
	}
oom:
	fprintf(stderr, "spulse: out of memory\n");
	return EXIT_USAGE;
}

static int parse_strs(const char *opt, const char *arg, char ***v, size_t *n)
{
	const char *s = arg;

	for (;;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (!len) {
			fprintf(stderr, "spulse: %s: empty name in '%s'\n",
				opt, arg);
			return EXIT_USAGE;
		}
		if (push_str(v, n, s, len) < 0) {
			fprintf(stderr, "spulse: out of memory\n");
			return EXIT_USAGE;
		}
		if (!e)
			return 1;
		s = e + 1;
	}
}

static bool parse_seconds(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	double v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || isnan(v) || v < 0)
		return false;
	*out = v;
	return true;
}

/* "START,END", "START," or ",END": seconds from the origin. */
static int parse_time(struct filter *f, const char *arg)
{
	const char *comma = strchr(arg, ',');
	double a = 0, b = INFINITY;

	if (!comma)
		goto bad;
	if (comma > arg && !parse_seconds(arg, (size_t)(comma - arg), &a))
		goto bad;
	if (comma[1] && !parse_seconds(comma + 1, strlen(comma + 1), &b))
		goto bad;
	if (b < a) {
		fprintf(stderr, "spulse: --time %s: END is before START\n",
			arg);
		return EXIT_USAGE;
	}
	f->has_time = true;
	f->t_start = a;
	f->t_end = b;
	return 1;
bad:
	fprintf(stderr, "spulse: --time must be START,END in seconds from "
		"the first sample (either may be empty, e.g. 1.5, or ,2), not "
		"'%s'\n", arg);
	return EXIT_USAGE;
}

int filter_option(struct filter *f, int c, const char *arg)
{
	switch (c) {
	case 'p':
		return parse_ids("--pid", arg, &f->pids, &f->npids);
	case FILTER_OPT_TID:
		return parse_ids("--tid", arg, &f->tids, &f->ntids);
	case FILTER_OPT_COMM:
		return parse_strs("--comm", arg, &f->comms, &f->ncomms);
	case FILTER_OPT_DSO:
		return parse_strs("--dso", arg, &f->dsos, &f->ndsos);
	case FILTER_OPT_TIME:
		return parse_time(f, arg);
	case FILTER_OPT_HOST:
		return parse_strs("--host", arg, &f->hosts, &f->nhosts);
	case FILTER_OPT_KERNEL:
	case FILTER_OPT_USER: {
		int want = c == FILTER_OPT_KERNEL ? FILTER_FRAMES_KERNEL :
						    FILTER_FRAMES_USER;

		if (f->frames && f->frames != want) {
			fprintf(stderr, "spulse: --kernel and --user exclude "
				"each other\n");
			return EXIT_USAGE;
		}
		f->frames = want;
		return 1;
	}
	}
	return 0;
}

bool filter_has_thread(const struct filter *f)
{
	return f->npids || f->ntids || f->ncomms || f->nhosts;
}

const char *filter_thread_host(const struct spulse_defs *d, uint32_t thread)
{
	size_t len;

	return filter_thread_host_n(d, thread, &len);
}

const char *filter_thread_host_n(const struct spulse_defs *d, uint32_t thread,
				 size_t *len)
{
	struct spulse_identity id;
	uint32_t src = spulse_defs_thread_source(d, thread);

	if (src == SPULSE_NONE || spulse_defs_identity(d, src, &id)) {
		*len = 7;
		return "unknown";
	}
	*len = id.host_len;
	return id.host;
}

bool filter_host(const struct filter *f, const char *host)
{
	size_t i;

	if (!f->nhosts)
		return true;
	for (i = 0; i < f->nhosts; i++)
		if (!strcmp(f->hosts[i], host))
			return true;
	return false;
}

static bool has_u32(const uint32_t *v, size_t n, uint32_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool filter_thread(const struct filter *f, uint32_t pid, uint32_t tid,
		   const char *comm, size_t comm_len)
{
	size_t i;

	if (f->npids && !has_u32(f->pids, f->npids, pid))
		return false;
	if (f->ntids && !has_u32(f->tids, f->ntids, tid))
		return false;
	if (!f->ncomms)
		return true;
	for (i = 0; i < f->ncomms; i++)
		if (strlen(f->comms[i]) == comm_len &&
		    !memcmp(f->comms[i], comm, comm_len))
			return true;
	return false;
}

bool filter_dso_matches(const struct filter *f, const char *dso,
			size_t len)
{
	const char *base = memrchr(dso, '/', len);
	size_t i, bl;

	base = base ? base + 1 : dso;
	bl = len - (size_t)(base - dso);
	for (i = 0; i < f->ndsos; i++) {
		size_t n = strlen(f->dsos[i]);

		if ((n == len && !memcmp(f->dsos[i], dso, len)) ||
		    (n == bl && !memcmp(f->dsos[i], base, bl)))
			return true;
	}
	return false;
}

bool filter_frame_kind(const struct filter *f, uint8_t kind)
{
	switch (f->frames) {
	case FILTER_FRAMES_KERNEL:
		return kind == SPULSE_FRAME_KERNEL;
	case FILTER_FRAMES_USER:
		return kind != SPULSE_FRAME_KERNEL;
	}
	return true;
}

static void put_list(char *buf, size_t len, size_t *n, const char *name,
		     const uint32_t *ids, char **strs, size_t cnt)
{
	size_t i;

	if (!cnt || *n >= len)
		return;
	*n += (size_t)snprintf(buf + *n, len - *n, ", %s ", name);
	for (i = 0; i < cnt && *n < len; i++) {
		if (ids)
			*n += (size_t)snprintf(buf + *n, len - *n, "%s%u",
					       i ? "," : "", ids[i]);
		else
			*n += (size_t)snprintf(buf + *n, len - *n, "%s%s",
					       i ? "," : "", strs[i]);
	}
}

const char *filter_describe(const struct filter *f, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	put_list(buf, len, &n, "tid", f->tids, NULL, f->ntids);
	put_list(buf, len, &n, "comm", NULL, f->comms, f->ncomms);
	put_list(buf, len, &n, "dso", NULL, f->dsos, f->ndsos);
	put_list(buf, len, &n, "host", NULL, f->hosts, f->nhosts);
	if (f->has_time && n < len) {
		if (isinf(f->t_end))
			n += (size_t)snprintf(buf + n, len - n,
					      ", time %.6f s..end", f->t_start);
		else
			n += (size_t)snprintf(buf + n, len - n,
					      ", time %.6f..%.6f s",
					      f->t_start, f->t_end);
	}
	if (f->frames && n < len)
		snprintf(buf + n, len - n, ", %s frames only",
			 f->frames == FILTER_FRAMES_KERNEL ? "kernel" : "user");
	return buf;
}

static int copy_strs(char ***dst, char *const *src, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	*dst = calloc(n, sizeof(**dst));
	if (!*dst)
		return -1;
	for (i = 0; i < n; i++)
		if (!((*dst)[i] = strdup(src[i])))
			return -1;
	return 0;
}

static int copy_ids(uint32_t **dst, const uint32_t *src, size_t n)
{
	if (!n)
		return 0;
	*dst = malloc(n * sizeof(**dst));
	if (!*dst)
		return -1;
	memcpy(*dst, src, n * sizeof(**dst));
	return 0;
}

int filter_copy(struct filter *dst, const struct filter *src)
{
	*dst = *src;
	dst->pids = dst->tids = NULL;
	dst->comms = dst->dsos = dst->hosts = NULL;
	if (copy_strs(&dst->hosts, src->hosts, src->nhosts)) {
		dst->ncomms = dst->ndsos = dst->npids = dst->ntids = 0;
		dst->nhosts = dst->hosts ? src->nhosts : 0;
		filter_free(dst);
		return -ENOMEM;
	}
	if (copy_ids(&dst->pids, src->pids, src->npids) ||
	    copy_ids(&dst->tids, src->tids, src->ntids) ||
	    copy_strs(&dst->comms, src->comms, src->ncomms) ||
	    copy_strs(&dst->dsos, src->dsos, src->ndsos)) {
		/* free what was copied; unset entries are NULL */
		size_t nc = src->ncomms, nd = src->ndsos;

		dst->ncomms = dst->comms ? nc : 0;
		dst->ndsos = dst->dsos ? nd : 0;
		filter_free(dst);
		return -ENOMEM;
	}
	return 0;
}

void filter_free(struct filter *f)
{
	size_t i;

	free(f->pids);
	free(f->tids);
	for (i = 0; f->comms && i < f->ncomms; i++)
		free(f->comms[i]);
	for (i = 0; f->dsos && i < f->ndsos; i++)
		free(f->dsos[i]);
	for (i = 0; f->hosts && i < f->nhosts; i++)
		free(f->hosts[i]);
	free(f->hosts);
	free(f->comms);
	free(f->dsos);
	memset(f, 0, sizeof(*f));
}
