/* SPDX-License-Identifier: MIT */
/* spulse sql: spools into SQLite (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_sql(int argc, char **argv);

int cmd_sql(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse sql: not built yet\n");
	return EXIT_USAGE;
}
