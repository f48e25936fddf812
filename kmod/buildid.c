// SPDX-License-Identifier: GPL-2.0
/*
 * GNU build-id of a mapped ELF file, for module records: the ELF header and
 * program headers are read with kernel_read(), each PT_NOTE segment (first
 * SPULSE_NOTE_MAX bytes) is searched for an NT_GNU_BUILD_ID note. Process
 * context only.
 */
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "spulse.h"

#define SPULSE_NOTE_MAX		4096
#define SPULSE_NT_GNU_BUILD_ID	3
#define SPULSE_PHNUM_MAX	64

/**
 * spulse_note_build_id() - find the GNU build-id in a note segment
 * @buf: note segment bytes (ELF64 notes, 4-byte aligned fields)
 * @len: bytes in @buf
 * @id: receives up to SPULSE_MAX_BUILD_ID bytes
 *
 * Return: build-id length (1..SPULSE_MAX_BUILD_ID), or 0 when there is no
 * well-formed GNU build-id note inside @buf.
 */
u32 spulse_note_build_id(const u8 *buf, size_t len, u8 *id)
{
	size_t off = 0;

	while (len - off >= 12) {
		u32 namesz, descsz, type;
		size_t name_off, desc_off, next;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ALIGN((size_t)namesz, 4);
		next = desc_off + ALIGN((size_t)descsz, 4);
		if (namesz > len || descsz > len || desc_off > len ||
		    next > len || next <= off)
			return 0;
		if (type == SPULSE_NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(buf + name_off, "GNU", 4) && descsz &&
		    descsz <= SPULSE_MAX_BUILD_ID) {
			memcpy(id, buf + desc_off, descsz);
			return descsz;
		}
		off = next;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_note_build_id);

static bool spulse_read_at(struct file *f, void *dst, size_t len, loff_t pos)
{
	return kernel_read(f, dst, len, &pos) == (ssize_t)len;
}

/**
 * spulse_file_build_id() - GNU build-id of an ELF64 file
 * @f: the mapped file (opened readable)
 * @id: receives up to SPULSE_MAX_BUILD_ID bytes
 *
 * Return: build-id length, 0 when none was found or the file is not ELF64.
 */
u32 spulse_file_build_id(struct file *f, u8 *id)
{
	struct elf64_hdr eh;
	struct elf64_phdr *ph;
	u32 n = 0, i;
	u8 *note;

	if (!(f->f_mode & FMODE_READ) || !spulse_read_at(f, &eh, sizeof(eh), 0))
		return 0;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(*ph) || !eh.e_phnum ||
	    eh.e_phnum > SPULSE_PHNUM_MAX)
		return 0;
	ph = kmalloc_array(eh.e_phnum, sizeof(*ph), GFP_KERNEL);
	note = kmalloc(SPULSE_NOTE_MAX, GFP_KERNEL);
	if (!ph || !note ||
	    !spulse_read_at(f, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff))
		goto out;
	for (i = 0; i < eh.e_phnum && !n; i++) {
		size_t sz = min_t(u64, ph[i].p_filesz, SPULSE_NOTE_MAX);

		if (ph[i].p_type != PT_NOTE || sz < 12 ||
		    !spulse_read_at(f, note, sz, ph[i].p_offset))
			continue;
		n = spulse_note_build_id(note, sz, id);
	}
out:
	kfree(ph);
	kfree(note);
	return n;
}
