/* SPDX-License-Identifier: MIT */
/*
 * The cli room: the spulse command line itself. main.c dispatches to the
 * cmd_*.c subcommand entry points, which parse options and drive the rooms
 * below: store/ (SQLite, ClickHouse), export/ (file writers, SVG), analysis/
 * (profiles, call trees, filters, sorting), sym/ (symbolization), synth/
 * (synthetic spools), drain/ and unwind/ (record, unwind tables), all over
 * libspulse. Includes run one way, down: cli -> store -> export -> analysis
 * -> sym -> libspulse, and synth -> libspulse; no room includes one above
 * it, and no room but this one includes cli.h. A header from another room
 * is included by its room ("sym/symbolize.h", with -I user/); a header of
 * the same room by its bare name.
 *
 * This header: subcommand entry points and the helpers only the
 * subcommands use; exit codes and the shared helpers are in
 * analysis/util.h.
 */
#ifndef SPULSE_CLI_H
#define SPULSE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libspulse.h>

#include "analysis/util.h"

int cmd_check(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);

/*
 * Parse a --by value ("self" or "total") into @by_total. Returns EXIT_OK,
 * or prints the usage error for @cmd and returns EXIT_USAGE.
 */
int cli_parse_by(const char *cmd, const char *s, bool *by_total);

/* Is @arg "--help" or "-h"? */
bool cli_is_help(const char *arg);

#endif /* SPULSE_CLI_H */
