/* SPDX-License-Identifier: MIT */
/* spulse diff: compare two profiles (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_diff(int argc, char **argv);

int cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse diff: not built yet\n");
	return EXIT_USAGE;
}
