/* SPDX-License-Identifier: MIT */
/* spulse top: live top functions (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_top(int argc, char **argv);

int cmd_top(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse top: not built yet\n");
	return EXIT_USAGE;
}
