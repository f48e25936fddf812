/* SPDX-License-Identifier: MIT */
/*
 * The CLI's conventions shared by every room from analysis up (analysis,
 * export, store, cli): exit codes and the small helpers that print option,
 * usage and read errors or write JSON strings. They live here, in the
 * lowest room that needs them, so that no room includes cli/cli.h.
 */
#ifndef SPULSE_ANALYSIS_UTIL_H
#define SPULSE_ANALYSIS_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libspulse.h>

/* Exit codes of every subcommand. */
#define EXIT_OK		0
#define EXIT_INVALID	1	/* invalid data, unreadable file */
#define EXIT_USAGE	2	/* bad command line */

/**
 * cli_parse_u64() - parse a decimal (or 0x hex) unsigned option value
 * @opt: option name for the error message
 * @s: text
 * @out: value
 *
 * Return: true on success; on failure prints "spulse: bad value" and false.
 */
bool cli_parse_u64(const char *opt, const char *s, uint64_t *out);

/* Print "spulse CMD: MSG\n" and a hint to use --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "FILE: offset N: reason" (or "FILE: reason" for I/O errors). */
void cli_print_read_error(const char *file, int rc,
			  const struct spulse_error *err);

/* Write @s as a JSON string literal (quotes included). */
void cli_json_string(FILE *f, const char *s, size_t len);

#endif /* SPULSE_ANALYSIS_UTIL_H */
