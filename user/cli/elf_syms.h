/* SPDX-License-Identifier: MIT */
/* Function symbols of one ELF file, looked up by file-relative address. */
#ifndef SPULSE_ELF_SYMS_H
#define SPULSE_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

struct elf_sym {
	uint64_t start, size;	/* ELF virtual address, st_size (0 = unknown) */
	char *name;
};

struct elf_load {
	uint64_t offset, filesz, vaddr;	/* PT_LOAD p_offset/p_filesz/p_vaddr */
};

struct elf_syms {
	struct elf_sym *syms;	/* sorted by start, unique starts */
	size_t n;
	struct elf_load *loads;
	size_t nloads;
};

/**
 * elf_syms_load() - read FUNC symbols (.symtab and .dynsym) and PT_LOADs
 * @path: ELF file
 * @build_id: GNU build-id of the module, or NULL; when @path has no
 *	function symbols, /usr/lib/debug/.build-id/xx/yyyy.debug is tried
 * @build_id_len: length of @build_id
 * @out: filled; free with elf_syms_free() even on failure
 *
 * Return: 0, or a negative errno (file missing, not ELF).
 */
int elf_syms_load(const char *path, const uint8_t *build_id,
		  size_t build_id_len, struct elf_syms *out);

/**
 * elf_syms_lookup() - function containing a file-relative address
 * @e: loaded symbols
 * @rel: file offset (FORMAT.md module-relative address)
 * @off: set to the offset of the address inside the function
 *
 * The offset is converted to a virtual address through the PT_LOAD segment
 * whose file range contains it.
 *
 * Return: the symbol, or NULL.
 */
const struct elf_sym *elf_syms_lookup(const struct elf_syms *e, uint64_t rel,
				      uint64_t *off);

void elf_syms_free(struct elf_syms *e);

#endif /* SPULSE_ELF_SYMS_H */
