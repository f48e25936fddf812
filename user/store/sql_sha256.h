/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 of a file, for `spulse sql`: the content key of a spool that
 * carries no recording identity. Computed by libcrypto (link -lcrypto).
 */
#ifndef SPULSE_SQL_SHA256_H
#define SPULSE_SQL_SHA256_H

/**
 * sql_sha256_file() - hash a whole file
 * @path: file to read
 * @hex: receives 64 lower-case hex digits and a NUL
 *
 * Return: 0, or a negative errno when the file cannot be read.
 */
int sql_sha256_file(const char *path, char hex[65]);

#endif /* SPULSE_SQL_SHA256_H */
