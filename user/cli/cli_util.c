/* SPDX-License-Identifier: MIT */
/*
 * Small helpers only the subcommands use (the ones lower rooms need too are
 * in analysis/util.c).
 */
#include <string.h>

#include "cli.h"

bool cli_is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int cli_parse_by(const char *cmd, const char *s, bool *by_total)
{
	if (!strcmp(s, "self"))
		*by_total = false;
	else if (!strcmp(s, "total"))
		*by_total = true;
	else
		return cli_usage_error(cmd, "--by must be self or total");
	return EXIT_OK;
}
