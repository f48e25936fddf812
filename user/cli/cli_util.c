/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the spulse subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
	if (rc == -EBADMSG)
		fprintf(stderr, "%s: offset %llu: %s\n", file,
			(unsigned long long)err->offset, err->msg);
	else if (err->msg[0])
		fprintf(stderr, "%s: %s (%s)\n", file, strerror(-rc), err->msg);
	else
		fprintf(stderr, "%s: %s\n", file, strerror(-rc));
}

void cli_json_string(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

bool cli_is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}
