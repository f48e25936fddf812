/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) of a file, for `spulse sql`: the content key of a
 * spool that carries no recording identity.
 */
#ifndef SPULSE_SQL_SHA256_H
#define SPULSE_SQL_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sql_sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sql_sha256_init(struct sql_sha256 *c);
void sql_sha256_update(struct sql_sha256 *c, const void *data, size_t len);
/* Final digest, 32 bytes. */
void sql_sha256_final(struct sql_sha256 *c, uint8_t out[32]);

/**
 * sql_sha256_file() - hash a whole file
 * @path: file to read
 * @hex: receives 64 lower-case hex digits and a NUL
 *
 * Return: 0, or a negative errno when the file cannot be read.
 */
int sql_sha256_file(const char *path, char hex[65]);

#endif /* SPULSE_SQL_SHA256_H */
