// SPDX-License-Identifier: MIT
/* Test entry point: runs `spulse record` (cmd_record) without the CLI. */
int cmd_record(int argc, char **argv);

int main(int argc, char **argv)
{
	return cmd_record(argc, argv);
}
