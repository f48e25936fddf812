/* SPDX-License-Identifier: MIT */
/* spulse merge: merge spools (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_merge(int argc, char **argv);

int cmd_merge(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse merge: not built yet\n");
	return EXIT_USAGE;
}
