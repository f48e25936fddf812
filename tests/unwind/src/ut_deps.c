// SPDX-License-Identifier: MIT
/*
 * ut_deps FILE: print sut_deps(FILE) (one real path a line) for
 * tests/unwind/run.sh, which compares the list with what ld.so itself
 * loads (ldd, i.e. ld.so --list). Exit 1 with the error on failure.
 */
#include <stdio.h>
#include <string.h>

#include "unwind_build.h"

int main(int argc, char **argv)
{
	char **v;
	size_t n, i;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: ut_deps FILE\n");
		return 2;
	}
	ret = sut_deps(argv[1], &v, &n);
	if (ret < 0) {
		fprintf(stderr, "ut_deps: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%s\n", v[i]);
	sut_deps_free(v, n);
	return 0;
}
