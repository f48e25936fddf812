// SPDX-License-Identifier: MIT
/*
 * Test helper for the drain suite's unwind-table cases (tests/drain/run.sh).
 *
 *   unwind_msgs meta DIR SPEC...   write DIR/meta (a SPULSE stream: header
 *                                  and the records SPEC names, in order)
 *                                  and empty DIR/unwind and DIR/control
 *     M:ID:PID:START:END:PGOFF:PATH:BID   module record; BID = hex bytes,
 *                                  "-" none, "file" = PATH's own build-id
 *     D:ID                         module deactivation
 *     P:PID                        process deactivation
 *   unwind_msgs append DIR SPEC... the same records appended to DIR/meta
 *   unwind_msgs dump FILE          the messages a loader wrote into FILE
 *                                  (a regular file standing in for
 *                                  debugfs spulse/unwind), one line each:
 *     ADD id=N rows=R lo=0x.. hi=0x.. bid=HEX sum=FNV
 *     MAP pid=P n=N [START-END@BIAS#ID]...
 *     DEL id=N
 *     BAD offset=O reason      (and exit 1) for a malformed message
 *   unwind_msgs sum PATH           sum=FNV of PATH's table as
 *                                  libspulse-unwind builds it (rows + lo/hi)
 *   unwind_msgs bias PATH START PGOFF  the bias from PATH's program
 *                                  headers, computed here (libelf), not by
 *                                  the library: start - pgoff + p_offset -
 *                                  p_vaddr of the PT_LOAD holding pgoff
 *   unwind_msgs vdso FILE          write this process's vDSO image (every
 *                                  process of this kernel maps the same)
 *                                  to FILE, for sum and bias
 *
 * Numbers are hex with or without 0x.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spulse/encode.h>
#include <spulse/format.h>
#include <spulse/unwind.h>

#include "unwind_build.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t table_sum(uint64_t lo, uint64_t hi,
			  const struct spulse_ut_row *rows, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv(h, &lo, sizeof(lo));
	h = fnv(h, &hi, sizeof(hi));
	return fnv(h, rows, (size_t)n * sizeof(*rows));
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 16);
}

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n) {
		perror("write");
		exit(1);
	}
}

static int cmd_meta(int argc, char **argv, bool append)
{
	uint8_t buf[SPULSE_MAX_RECORD + SPULSE_HEADER_MAX];
	char path[4096];
	size_t len;
	int fd, i;

	if (append) {
		snprintf(path, sizeof(path), "%s/meta", argv[0]);
		fd = open(path, O_WRONLY | O_APPEND);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		goto records;
	}
	snprintf(path, sizeof(path), "%s/unwind", argv[0]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/control", argv[0]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/meta", argv[0]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	len = spulse_enc_header(buf, 1700000000000000ull, 1001);
	xwrite(fd, buf, len);
records:
	for (i = 1; i < argc; i++) {
		char *spec = strdup(argv[i]), *f[8], *save = NULL, *p;
		int n = 0;

		for (p = strtok_r(spec, ":", &save); p && n < 8;
		     p = strtok_r(NULL, ":", &save))
			f[n++] = p;
		if (n == 8 && !strcmp(f[0], "M")) {
			uint8_t bid[SPULSE_MAX_BUILD_ID];
			size_t bl = 0;

			if (!strcmp(f[7], "file")) {
				struct sut_table *t;
				const uint8_t *id;
				char err[256];

				if (sut_build_file(f[6], NULL, &t, err, sizeof(err))) {
					fprintf(stderr, "%s: %s\n", f[6], err);
					return 1;
				}
				bl = sut_table_build_id(t, &id);
				memcpy(bid, id, bl);
				sut_table_free(t);
			} else if (strcmp(f[7], "-")) {
				for (bl = 0; f[7][2 * bl] && f[7][2 * bl + 1] &&
				     bl < sizeof(bid); bl++) {
					char h[3] = { f[7][2 * bl], f[7][2 * bl + 1], 0 };

					bid[bl] = (uint8_t)strtoul(h, NULL, 16);
				}
			}
			len = spulse_enc_module(buf, (uint32_t)strtoul(f[1], NULL, 10),
						(uint32_t)strtoul(f[2], NULL, 10),
						num(f[3]), num(f[4]), num(f[5]),
						f[6], strlen(f[6]), bid, bl);
		} else if (n == 2 && !strcmp(f[0], "D")) {
			len = spulse_enc_module_deactivate(buf,
						(uint32_t)strtoul(f[1], NULL, 10));
		} else if (n == 2 && !strcmp(f[0], "P")) {
			len = spulse_enc_process_deactivate(buf,
						(uint32_t)strtoul(f[1], NULL, 10));
		} else {
			fprintf(stderr, "bad spec %s\n", argv[i]);
			return 2;
		}
		xwrite(fd, buf, len);
		free(spec);
	}
	close(fd);
	return 0;
}

static int bad(long off, const char *why)
{
	printf("BAD offset=%ld %s\n", off, why);
	return 1;
}

static int cmd_dump(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t n = 0, cap = 0, off = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			b = realloc(b, cap);
			if (!b)
				return 1;
		}
		got = fread(b + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	while (off < n) {
		struct spulse_ut_msg h;
		const uint8_t *body;
		size_t blen;

		if (n - off < sizeof(h))
			return bad((long)off, "short header");
		memcpy(&h, b + off, sizeof(h));
		if (h.magic != SPULSE_UT_MAGIC || h.version != SPULSE_UT_VERSION ||
		    h.rsvd || h.len < sizeof(h) || h.len > n - off)
			return bad((long)off, "bad header");
		body = b + off + sizeof(h);
		blen = h.len - sizeof(h);
		if (h.op == SPULSE_UT_OP_ADD) {
			struct spulse_ut_add a;
			char hex[2 * SPULSE_UT_BUILD_ID_MAX + 1] = "";
			unsigned int i;

			if (blen < sizeof(a))
				return bad((long)off, "short ADD");
			memcpy(&a, body, sizeof(a));
			if (blen != sizeof(a) + (size_t)a.n_rows *
				    sizeof(struct spulse_ut_row))
				return bad((long)off, "ADD length != rows");
			for (i = 0; i < a.build_id_len && i < SPULSE_UT_BUILD_ID_MAX; i++)
				snprintf(hex + 2 * i, 3, "%02x", a.build_id[i]);
			printf("ADD id=%u rows=%u lo=0x%" PRIx64 " hi=0x%" PRIx64
			       " bid=%s sum=%016" PRIx64 "\n", a.table_id,
			       a.n_rows, a.lo, a.hi, hex[0] ? hex : "-",
			       table_sum(a.lo, a.hi, (const void *)(body + sizeof(a)),
					 a.n_rows));
		} else if (h.op == SPULSE_UT_OP_MAP) {
			struct spulse_ut_mapset ms;
			uint32_t i;

			if (blen < sizeof(ms))
				return bad((long)off, "short MAP");
			memcpy(&ms, body, sizeof(ms));
			if (blen != sizeof(ms) + (size_t)ms.n *
				    sizeof(struct spulse_ut_map))
				return bad((long)off, "MAP length != n");
			printf("MAP pid=%u n=%u", ms.pid, ms.n);
			for (i = 0; i < ms.n; i++) {
				struct spulse_ut_map m;

				memcpy(&m, body + sizeof(ms) + i * sizeof(m), sizeof(m));
				printf(" %" PRIx64 "-%" PRIx64 "@%" PRIx64 "#%u",
				       m.start, m.end, m.bias, m.table_id);
			}
			printf("\n");
		} else if (h.op == SPULSE_UT_OP_DEL) {
			struct spulse_ut_del d;

			if (blen != sizeof(d))
				return bad((long)off, "DEL length");
			memcpy(&d, body, sizeof(d));
			printf("DEL id=%u\n", d.table_id);
		} else {
			return bad((long)off, "unknown op");
		}
		off += h.len;
	}
	free(b);
	return 0;
}

static int cmd_sum(const char *path)
{
	const struct spulse_ut_row *rows;
	struct sut_table *t;
	uint64_t lo, hi;
	uint32_t n;
	char err[256];

	if (sut_build_file(path, NULL, &t, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	n = sut_table_rows(t, &rows, &lo, &hi);
	printf("sum=%016" PRIx64 "\n", table_sum(lo, hi, rows, n));
	sut_table_free(t);
	return 0;
}

static int cmd_bias(const char *path, uint64_t start, uint64_t pgoff)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	size_t i, n;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_getphdrnum(e, &n)) {
		fprintf(stderr, "%s: not an ELF file\n", path);
		return 1;
	}
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff >= (ph.p_offset & ~0xfffull) &&
		    pgoff < ph.p_offset + ph.p_filesz) {
			printf("%" PRIx64 "\n", start - pgoff + ph.p_offset -
			       ph.p_vaddr);
			elf_end(e);
			close(fd);
			return 0;
		}
	}
	fprintf(stderr, "%s: no PT_LOAD at 0x%" PRIx64 "\n", path, pgoff);
	elf_end(e);
	close(fd);
	return 1;
}

/* The [vdso] line of /proc/self/maps gives the image's mapped length. */
static int cmd_vdso(const char *out)
{
	const void *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	unsigned long long s, e;
	char line[512];
	size_t len = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	int fd;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &s, &e) == 2 &&
		    s == (unsigned long long)(uintptr_t)img)
			len = (size_t)(e - s);
	if (f)
		fclose(f);
	if (!img || !len) {
		fprintf(stderr, "no vDSO\n");
		return 1;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		perror(out);
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "vdso"))
		return cmd_vdso(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "meta"))
		return cmd_meta(argc - 2, argv + 2, false);
	if (argc >= 3 && !strcmp(argv[1], "append"))
		return cmd_meta(argc - 2, argv + 2, true);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return cmd_dump(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "sum"))
		return cmd_sum(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "bias"))
		return cmd_bias(argv[2], num(argv[3]), num(argv[4]));
	fprintf(stderr, "usage: unwind_msgs meta DIR SPEC... | dump FILE | "
		"sum PATH | bias PATH START PGOFF\n");
	return 2;
}
