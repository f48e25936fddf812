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

/*
 * The one output-escaping rule for spool-derived text printed as text
 * (docs/CLI.md "Printing spool text"): bytes 0x20..0x7e other than '\'
 * and well-formed UTF-8 sequences of code points U+00A0 and above pass
 * through; every other byte (NUL, control bytes, DEL, '\', C1 controls,
 * bytes of malformed UTF-8) is written as \xNN (two lower-case hex
 * digits). The result never holds a terminal control byte and is
 * injective: two different strings never print the same.
 *
 * cli_text_escape() writes the escaped text of @s (@len bytes) into @out
 * (at most @outlen bytes, always NUL-terminated when @outlen > 0) and
 * returns the full escaped length (as snprintf: a result >= @outlen means
 * it was cut). cli_put_text() writes it to @f. cli_text_dup() returns a
 * malloc'ed copy (NULL on allocation failure).
 */
size_t cli_text_escape(char *out, size_t outlen, const char *s, size_t len);
void cli_put_text(FILE *f, const char *s, size_t len);
char *cli_text_dup(const char *s, size_t len);
/*
 * Sums of spool values (durations, weights) are kept in this type: each
 * value fits a u64, and 2^64 of them cannot wrap it (issue 25: ten
 * intervals within the format's bounds wrapped a u64 total). cli_u128()
 * writes its exact decimal into @buf (40 bytes) and returns @buf.
 */
typedef unsigned __int128 cli_sum;
#define CLI_U128_BUF 40
const char *cli_u128(char *buf, cli_sum v);

/* cli_put_text() of a NUL-terminated string. */
void cli_put_cstr(FILE *f, const char *s);

#endif /* SPULSE_ANALYSIS_UTIL_H */
