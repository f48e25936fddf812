/* SPDX-License-Identifier: MIT */
/*
 * Room store (user/store/, build/store/libstore.a): profiles in databases.
 * Owns the SQLite side, sql_db.c, sql_schema.c, sql_sha256.c, and the
 * ClickHouse side, ch_http.c (HTTP interface, libcurl), ch_schema.c and
 * ch_query.c (report/flame from ClickHouse). Includes export/ (svg),
 * analysis/, sym/ and libspulse only.
 *
 * The SQLite store of `spulse sql` (docs/FLEET.md): opening a
 * database, its schema (tables, indexes, views) and the load of one spool.
 */
#ifndef SPULSE_SQL_DB_H
#define SPULSE_SQL_DB_H

#include <stdbool.h>
#include <stdint.h>

struct sqlite3;

/* PRAGMA user_version of the schema this code writes and reads. */
#define SQL_SCHEMA_VERSION	1

/**
 * sql_db_open() - open or create @path and make its schema current
 * @path: database file
 * @out: receives the handle (close with sqlite3_close())
 *
 * Sets journal_mode WAL and synchronous NORMAL, creates the tables,
 * indexes and views when the database is new, refuses one written by a
 * different schema version. Prints the reason on failure.
 *
 * Return: 0, or -1 after printing an error.
 */
int sql_db_open(const char *path, struct sqlite3 **out);

/** Options of sql_load_spool(); zero-initialize, set .sz = sizeof. */
struct sql_load_opts {
	size_t sz;
	const char *kallsyms;	/* NULL: SPOOL.kallsyms beside each spool */
	const char *symfs;	/* --symfs DIR, or NULL */
	const char *debug_dir;	/* --debug-dir DIR, or NULL */
	bool no_demangle;
	const char *host;	/* host of a spool without identity records
				 * (NULL: "unknown"); identities win */
};

/** What one sql_load_spool() call added. */
struct sql_load_result {
	uint64_t recordings_added, recordings_present;
	uint64_t threads, modules, functions, frames, stacks, stack_functions;
	uint64_t samples, offcpu;
	uint64_t rows;		/* every row inserted, all tables */
	bool recovered;		/* spool recovered from a truncated tail */
};

/**
 * sql_load_spool() - add one spool to @db in one transaction
 * @db: from sql_db_open()
 * @file: spool path
 * @o: options (may be NULL)
 * @res: receives the counts (zeroed first)
 *
 * A recording already present (same recording_id, or for a spool without
 * identities the same SHA-256 of the file) is not added again; the other
 * recordings of the spool are. Nothing is written unless everything is.
 *
 * Return: EXIT_OK, or EXIT_INVALID after printing the error (the database
 * is unchanged).
 */
int sql_load_spool(struct sqlite3 *db, const char *file,
		   const struct sql_load_opts *o, struct sql_load_result *res);

#endif /* SPULSE_SQL_DB_H */
