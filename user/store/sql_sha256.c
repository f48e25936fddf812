/* SPDX-License-Identifier: MIT */
/* SHA-256 of a file through libcrypto (OpenSSL's EVP digest interface). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sql_sha256.h"

int sql_sha256_file(const char *path, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char buf[1 << 16], d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx;
	ssize_t n;
	int fd, i, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			ret = -EIO;
			goto out;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, d, &dlen) || dlen != 32) {
		ret = -EIO;
		goto out;
	}
	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = 0;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return ret;
}
