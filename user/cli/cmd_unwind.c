/* SPDX-License-Identifier: MIT */
/* spulse unwind: unwind tables (placeholder until it lands). */
#include <stdio.h>

#include "cli.h"

int cmd_unwind(int argc, char **argv);

int cmd_unwind(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse unwind: not built yet\n");
	return EXIT_USAGE;
}
