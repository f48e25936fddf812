// SPDX-License-Identifier: MIT
/*
 * Copy /proc/kallsyms text symbols to FILE.kallsyms. Lines look like
 * "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo	[mod]"; only
 * types t and T are kept, unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms_copy.h"

static int is_text(const char *line)
{
	const char *sp = strchr(line, ' ');

	return sp && (sp[1] == 't' || sp[1] == 'T') && sp[2] == ' ';
}

long drain_copy_kallsyms(const char *src, const char *dst)
{
	char *tmp = NULL, *line = NULL;
	size_t cap = 0;
	long kept = 0;
	FILE *in, *out;
	int ret = 0;

	in = fopen(src, "re");
	if (!in)
		return -errno;
	if (asprintf(&tmp, "%s.tmp", dst) < 0) {
		fclose(in);
		return -ENOMEM;
	}
	out = fopen(tmp, "we");
	if (!out) {
		ret = -errno;
		goto done;
	}
	while (getline(&line, &cap, in) > 0) {
		if (!is_text(line))
			continue;
		if (fputs(line, out) == EOF) {
			ret = -errno;
			break;
		}
		kept++;
	}
	if (ferror(in) && !ret)
		ret = -EIO;
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, dst))
		ret = -errno;
	if (ret)
		unlink(tmp);
done:
	fclose(in);
	free(line);
	free(tmp);
	return ret ? ret : kept;
}
