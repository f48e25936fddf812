/* SPDX-License-Identifier: MIT */
/*
 * The CLI's conventions that every room above sym shares: option values,
 * usage and read errors, JSON string literals (util.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool cli_parse_u64(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		goto bad;
	*out = v;
	return true;
bad:
	fprintf(stderr, "spulse: bad value for %s: '%s'\n", opt, s ? s : "");
	return false;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "spulse %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'spulse %s --help'.\n", cmd);
	return EXIT_USAGE;
}

void cli_print_read_error(const char *file, int rc,
			  const struct spulse_error *err)
{
	size_t fl = strlen(file);
	const char *m = err ? err->msg : "";

	/* the reason once (issue 26): the library's message often repeats
	 * the path and the errno text */
	if (!strncmp(m, file, fl) && !strncmp(m + fl, ": ", 2))
		m += fl + 2;
	if (rc == -EBADMSG)
		fprintf(stderr, "%s: offset %llu: %s\n", file,
			(unsigned long long)err->offset, err->msg);
	else if (rc == -ENOENT && !strcmp(file, "-"))
		fprintf(stderr, "-: reading a spool from standard input is not "
			"supported; give its path (readers seek, and the "
			"sidecars are found next to it)\n");
	else if (m[0] && strcmp(m, strerror(-rc)))
		fprintf(stderr, "%s: %s\n", file, m);
	else
		fprintf(stderr, "%s: %s\n", file, strerror(-rc));
}

/* Length of the well-formed UTF-8 sequence at @s (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;	/* ASCII, continuation, overlong lead, > U+10FFFF */
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (left < n)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * Well-formed UTF-8 passes through; any other byte >= 0x80 (and control
 * characters, DEL) is written as \u00XX of the byte, so the output is
 * always valid UTF-8 JSON and no byte is lost.
 */
void cli_json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, n;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = u[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c >= 0x80 && (n = utf8_len(u + i, len - i))) {
			fwrite(u + i, 1, n, f);
			i += n - 1;
		} else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Length of the well-formed UTF-8 sequence at @s of a code point that is
 * not a C1 control (U+0080..U+009F), else 0. */
static size_t text_utf8_len(const unsigned char *s, size_t left)
{
	size_t n = utf8_len(s, left);

	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return n;
}

size_t cli_text_escape(char *out, size_t outlen, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i, n, o = 0, j;

#define PUT(ch) do { if (o + 1 < outlen) out[o] = (ch); o++; } while (0)
	for (i = 0; i < len; i++) {
		unsigned char c = u[i];

		if (c >= 0x20 && c <= 0x7e && c != '\\') {
			PUT((char)c);
		} else if (c >= 0x80 && (n = text_utf8_len(u + i, len - i))) {
			for (j = 0; j < n; j++)
				PUT((char)u[i + j]);
			i += n - 1;
		} else {
			PUT('\\');
			PUT('x');
			PUT(hex[c >> 4]);
			PUT(hex[c & 15]);
		}
	}
#undef PUT
	if (outlen)
		out[o < outlen ? o : outlen - 1] = 0;
	return o;
}

char *cli_text_dup(const char *s, size_t len)
{
	size_t n = cli_text_escape(NULL, 0, s, len);
	char *out = malloc(n + 1);

	if (out)
		cli_text_escape(out, n + 1, s, len);
	return out;
}

void cli_put_text(FILE *f, const char *s, size_t len)
{
	char buf[512];
	size_t n = cli_text_escape(buf, sizeof(buf), s, len);
	char *big;

	if (n < sizeof(buf)) {
		fwrite(buf, 1, n, f);
		return;
	}
	big = cli_text_dup(s, len);
	if (big) {
		fwrite(big, 1, n, f);
		free(big);
		return;
	}
	for (; len; s++, len--)		/* no memory: every byte on its own */
		if (cli_text_escape(buf, sizeof(buf), s, 1) == 1 ||
		    (unsigned char)*s < 0x80)
			fputs(buf, f);
		else
			fprintf(f, "\\x%02x", (unsigned char)*s);
}

void cli_put_cstr(FILE *f, const char *s)
{
	cli_put_text(f, s, strlen(s));
}

const char *cli_u128(char *buf, cli_sum v)
{
	char tmp[CLI_U128_BUF];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + (unsigned int)(v % 10));
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = 0;
	return buf;
}
