/* SPDX-License-Identifier: MIT */
/* Placeholder: `spulse record` is implemented by user/drain's owner. */
#include <stdio.h>

int cmd_record(int argc, char **argv);

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "spulse record: not built yet\n");
	return 2;
}
