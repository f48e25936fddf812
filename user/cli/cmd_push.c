/* SPDX-License-Identifier: MIT */
/* spulse push: spools into ClickHouse (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_push(int argc, char **argv);

int cmd_push(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse push: not built yet\n");
	return EXIT_USAGE;
}
