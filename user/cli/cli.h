/* SPDX-License-Identifier: MIT */
/*
 * Shared declarations of the spulse command-line tool: subcommand entry
 * points, exit codes and small helpers used by several subcommands.
 */
#ifndef SPULSE_CLI_H
#define SPULSE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libspulse.h>

/* Exit codes of every subcommand. */
#define EXIT_OK		0
#define EXIT_INVALID	1	/* invalid data, unreadable file */
#define EXIT_USAGE	2	/* bad command line */

int cmd_check(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);

/**
 * cli_parse_u64() - parse a decimal (or 0x hex) unsigned option value
 * @opt: option name for the error message
 * @s: text
 * @out: value
 *
 * Return: true on success; on failure prints "spulse: bad value" and false.
 */
bool cli_parse_u64(const char *opt, const char *s, uint64_t *out);

/*
 * Parse a --by value ("self" or "total") into @by_total. Returns EXIT_OK,
 * or prints the usage error for @cmd and returns EXIT_USAGE.
 */
int cli_parse_by(const char *cmd, const char *s, bool *by_total);

/* Print "spulse CMD: MSG\n" and a hint to use --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "FILE: offset N: reason" (or "FILE: reason" for I/O errors). */
void cli_print_read_error(const char *file, int rc,
			  const struct spulse_error *err);

/* Write @s as a JSON string literal (quotes included). */
void cli_json_string(FILE *f, const char *s, size_t len);

/* Is @arg "--help" or "-h"? */
bool cli_is_help(const char *arg);

#endif /* SPULSE_CLI_H */
