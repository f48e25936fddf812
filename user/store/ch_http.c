/* SPDX-License-Identifier: MIT */
/* ClickHouse HTTP client (ch_http.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "ch_http.h"

void ch_buf_free(struct ch_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool buf_reserve(struct ch_buf *b, size_t more)
{
	size_t nc;
	char *np;

	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	nc = b->cap ? b->cap : 4096;
	while (nc < b->n + more + 1)
		nc *= 2;
	np = realloc(b->p, nc);
	if (!np) {
		b->oom = true;
		return false;
	}
	b->p = np;
	b->cap = nc;
	return true;
}

void ch_buf_add(struct ch_buf *b, const void *p, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = 0;
}

void ch_buf_printf(struct ch_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

void rb_u8(struct ch_buf *b, uint8_t v)
{
	ch_buf_add(b, &v, 1);
}

/* RowBinary numbers are little-endian (x86-64 and arm64 hosts). */
void rb_u16(struct ch_buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	ch_buf_add(b, x, 2);
}

void rb_u32(struct ch_buf *b, uint32_t v)
{
	uint8_t x[4];
	int i;

	for (i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	ch_buf_add(b, x, 4);
}

void rb_u64(struct ch_buf *b, uint64_t v)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	ch_buf_add(b, x, 8);
}

void rb_len(struct ch_buf *b, uint64_t n)
{
	uint8_t x[10];
	int i = 0;

	do {
		x[i] = n & 0x7f;
		n >>= 7;
		if (n)
			x[i] |= 0x80;
		i++;
	} while (n);
	ch_buf_add(b, x, (size_t)i);
}

void rb_str(struct ch_buf *b, const char *s, size_t n)
{
	rb_len(b, n);
	ch_buf_add(b, s, n);
}

void ch_sql_quote(struct ch_buf *b, const char *s, size_t n)
{
	size_t i;

	ch_buf_add(b, "'", 1);
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' || s[i] == '\'')
			ch_buf_add(b, "\\", 1);
		ch_buf_add(b, s + i, 1);
	}
	ch_buf_add(b, "'", 1);
}

int ch_tsv_row(struct ch_buf *b, size_t *pos, char **fields, size_t *lens,
	       int max)
{
	size_t i = *pos, o;
	int nf = 0;

	if (i >= b->n)
		return 0;
	o = i;
	fields[0] = b->p + o;
	while (i < b->n && b->p[i] != '\n') {
		char ch = b->p[i++];

		if (ch == '\t') {
			if (nf + 1 < max) {
				lens[nf] = (size_t)(b->p + o - fields[nf]);
				b->p[o++] = 0;
				nf++;
				fields[nf] = b->p + o;
			}
			continue;
		}
		if (ch == '\\' && i < b->n) {
			char e = b->p[i++];

			switch (e) {
			case 't': ch = '\t'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case '0': ch = 0; break;
			default: ch = e; break;	/* \\ \' and others */
			}
		}
		b->p[o++] = ch;
	}
	lens[nf] = (size_t)(b->p + o - fields[nf]);
	if (o < b->n + 1)
		b->p[o] = 0;
	*pos = i + 1;
	return nf + 1;
}

int ch_open(struct ch_conn *c, const char *url, const char *db)
{
	size_t n = strlen(url), i;
	static bool inited;

	memset(c, 0, sizeof(*c));
	if (!db)
		db = "spulse";
	if (!*db || strlen(db) > 64) {
		snprintf(c->err, sizeof(c->err), "bad database name '%s'", db);
		return -EINVAL;
	}
	for (i = 0; db[i]; i++)
		if (!isalnum((unsigned char)db[i]) && db[i] != '_') {
			snprintf(c->err, sizeof(c->err), "bad database name "
				 "'%s' (letters, digits and _ only)", db);
			return -EINVAL;
		}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(c->err, sizeof(c->err), "%s: not an http:// or "
			 "https:// URL of ClickHouse's HTTP interface", url);
		return -EINVAL;
	}
	while (n && url[n - 1] == '/')
		n--;
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = true;
	}
	c->stall_s = 600;
	if (getenv("SPULSE_CH_STALL_TIMEOUT")) {
		long v = strtol(getenv("SPULSE_CH_STALL_TIMEOUT"), NULL, 10);

		if (v > 0)
			c->stall_s = v;
	}
	c->url = strndup(url, n);
	c->db = strdup(db);
	c->curl = curl_easy_init();
	if (!c->url || !c->db || !c->curl) {
		ch_close(c);
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void ch_close(struct ch_conn *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->url);
	free(c->db);
	c->curl = NULL;
	c->url = c->db = NULL;
}

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
	struct ch_buf *b = arg;

	ch_buf_add(b, p, sz * n);
	return b->oom ? 0 : sz * n;
}

int ch_query(struct ch_conn *c, const char *sql, const void *body, size_t len,
	     struct ch_buf *out, bool use_db)
{
	struct ch_buf url = { 0 }, ans = { 0 };
	CURL *h = c->curl;
	long status = 0;
	CURLcode rc;
	int ret = 0;

	ch_buf_printf(&url, "%s/?", c->url);
	if (use_db)
		ch_buf_printf(&url, "database=%s&", c->db);
	if (body) {
		char *q = curl_easy_escape(h, sql, 0);

		ch_buf_printf(&url, "query=%s", q ? q : "");
		curl_free(q);
	}
	if (url.oom) {
		ch_buf_free(&url);
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -ENOMEM;
	}
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url.p);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : sql);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(body ? len : strlen(sql)));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	/* a server that stops answering: give up after c->stall_s seconds
	 * without a byte either way */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->stall_s);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		snprintf(c->err, sizeof(c->err), "%s: %s", c->url,
			 curl_easy_strerror(rc));
		ret = -EIO;
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (status != 200) {
			size_t l = 0;

			while (l < ans.n && ans.p[l] != '\n' && l < 300)
				l++;
			snprintf(c->err, sizeof(c->err), "%s: HTTP %ld: %.*s",
				 c->url, status, (int)l, ans.p ? ans.p : "");
			ret = -EIO;
		} else if (ans.oom) {
			snprintf(c->err, sizeof(c->err), "out of memory");
			ret = -ENOMEM;
		}
	}
	if (!ret && out)
		ch_buf_add(out, ans.p ? ans.p : "", ans.n);
	ch_buf_free(&ans);
	ch_buf_free(&url);
	return ret;
}

int ch_query_u64(struct ch_conn *c, const char *sql, uint64_t *v)
{
	struct ch_buf b = { 0 };
	char *end;
	int rc = ch_query(c, sql, NULL, 0, &b, true);

	if (rc)
		return rc;
	*v = b.p ? strtoull(b.p, &end, 10) : 0;
	if (!b.p || end == b.p) {
		snprintf(c->err, sizeof(c->err), "%s: unexpected answer to "
			 "'%.60s': '%.40s'", c->url, sql, b.p ? b.p : "");
		rc = -EIO;
	}
	ch_buf_free(&b);
	return rc;
}
