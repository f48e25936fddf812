/* SPDX-License-Identifier: MIT */
/*
 * spulse report / flame --clickhouse: the aggregation runs on the server
 * (GROUP BY over the pushed samples joined with the pushed stacks); only
 * the aggregated rows come back, printed as the local report / flame
 * --folded print them (docs/FLEET.md).
 */
#ifndef SPULSE_CH_QUERY_H
#define SPULSE_CH_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/filter.h"

struct ch_query_opts {
	const char *url;	/* --clickhouse URL */
	const char *db;		/* --database, NULL = "spulse" */
	char **hosts;		/* --host names (NULL/0 = every host) */
	size_t nhosts;
	const struct filter *filter;	/* --time (seconds from the earliest
					 * committed sample) */
	/* report */
	uint64_t top;
	bool by_total, json;
	double percent_limit;
	/* flame */
	bool inverted;		/* icicle layout */
};

/* Option codes report and flame give --clickhouse / --database / --host. */
enum {
	CH_OPT_CLICKHOUSE = 0x1200,
	CH_OPT_DATABASE,
	CH_OPT_HOST,
};

/* Append the comma-separated host names of @arg to o->hosts: 1 or
 * EXIT_USAGE. */
int ch_query_add_hosts(struct ch_query_opts *o, const char *arg);
void ch_query_free(struct ch_query_opts *o);

/* spulse report --clickhouse: exit code. */
int ch_report(const struct ch_query_opts *o);

/*
 * spulse flame --clickhouse: folded stacks (@folded) or the SVG flame graph
 * titled @title (NULL: "clickhouse URL/DB") to @out ("-" or NULL = stdout);
 * the same text as the local flame of the same samples. Exit code.
 */
int ch_flame(const struct ch_query_opts *o, const char *out, bool folded,
	     const char *title);

#endif /* SPULSE_CH_QUERY_H */
