/* SPDX-License-Identifier: MIT */
/*
 * ClickHouse over its HTTP interface (libcurl): queries whose answer is
 * read as TabSeparated, and INSERTs whose rows are sent as RowBinary
 * (docs/FLEET.md). Used by spulse push and by report / flame
 * --clickhouse.
 */
#ifndef SPULSE_CH_HTTP_H
#define SPULSE_CH_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer (RowBinary bodies, answers). */
struct ch_buf {
	char *p;
	size_t n, cap;
	bool oom;		/* an append failed; the contents are short */
};

struct ch_conn {
	void *curl;		/* CURL * */
	char *url;		/* base URL, no trailing '/' */
	char *db;		/* database (the URL parameter "database") */
	char err[512];		/* last error: what failed and why */
	long stall_s;		/* give up after this many seconds without
				 * a byte (600, or SPULSE_CH_STALL_TIMEOUT) */
};

/**
 * ch_open() - prepare a connection (nothing is sent yet)
 * @c: zeroed connection
 * @url: http://HOST:PORT of ClickHouse's HTTP interface
 * @db: database name ([A-Za-z0-9_]+), or NULL for "spulse"
 *
 * Return: 0, -EINVAL for a bad database name or URL, -ENOMEM.
 */
int ch_open(struct ch_conn *c, const char *url, const char *db);

void ch_close(struct ch_conn *c);

/**
 * ch_query() - run one statement
 * @c: connection
 * @sql: the statement; with @body, the INSERT ... FORMAT head whose rows
 *       are @body
 * @body: rows to send (or NULL)
 * @len: bytes of @body
 * @out: the answer (appended), or NULL to drop it
 * @use_db: send the database parameter (false for CREATE DATABASE)
 *
 * Return: 0, or -EIO (server unreachable, or an HTTP status other than
 * 200: c->err holds "URL: HTTP 500: <first line of the server's text>").
 */
int ch_query(struct ch_conn *c, const char *sql, const void *body, size_t len,
	     struct ch_buf *out, bool use_db);

/* One unsigned number from a query ("SELECT count() ..."): 0 or -EIO. */
int ch_query_u64(struct ch_conn *c, const char *sql, uint64_t *v);

/* ---- buffers and RowBinary ------------------------------------------- */
void ch_buf_free(struct ch_buf *b);
void ch_buf_add(struct ch_buf *b, const void *p, size_t n);
void ch_buf_printf(struct ch_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rb_u8(struct ch_buf *b, uint8_t v);
void rb_u16(struct ch_buf *b, uint16_t v);
void rb_u32(struct ch_buf *b, uint32_t v);
void rb_u64(struct ch_buf *b, uint64_t v);
/* LEB128 length (RowBinary strings and arrays). */
void rb_len(struct ch_buf *b, uint64_t n);
void rb_str(struct ch_buf *b, const char *s, size_t n);
static inline void rb_cstr(struct ch_buf *b, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	rb_str(b, s, n);
}

/* ---- TabSeparated answers -------------------------------------------- */
/*
 * Split the next row of @b from *@pos into at most @max fields (escapes
 * \t \n \\ \0 \' \b \f \r undone in place, fields NUL-terminated, lengths
 * in @lens). Returns the number of fields, 0 at the end.
 */
int ch_tsv_row(struct ch_buf *b, size_t *pos, char **fields, size_t *lens,
	       int max);

/* Append @s as a quoted SQL string literal ('...' with \\ and \'). */
void ch_sql_quote(struct ch_buf *b, const char *s, size_t n);

#endif /* SPULSE_CH_HTTP_H */
