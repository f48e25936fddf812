// SPDX-License-Identifier: GPL-2.0
/*
 * GNU build-id of a mapped ELF file, for module records: the ELF header and
 * program headers are read, each PT_NOTE segment (first SPULSE_NOTE_MAX
 * bytes) is searched for an NT_GNU_BUILD_ID note. The meta worker calls it
 * after dropping the target's mmap_read_lock (it holds a file reference):
 * a read may take the inode's i_rwsem, which mm/filemap.c orders before the
 * mmap_lock, or wait on a FUSE daemon that is the target itself. It first
 * tries pages already in the page cache (no I/O, as lib/buildid.c), and
 * reads the file with kernel_read() only when one is missing. Process
 * context only; no lock may be held that a file read could need.
 */
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "buildid.h"
#include "compat/highmem.h"
#include "kunit_export.h"

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

/*
 * @len bytes at @pos: from cached up-to-date pages only (-EAGAIN when one
 * is missing), or with @io by kernel_read(). 0 or a negative errno.
 */
static int spulse_read_at(struct file *f, void *dst, size_t len, u64 pos,
			  bool io)
{
	u64 size = i_size_read(file_inode(f));
	u8 *d = dst;

	if (len > size || pos > size - len)
		return -EIO;
	if (io) {
		loff_t p = pos;

		return kernel_read(f, dst, len, &p) == (ssize_t)len ? 0 : -EIO;
	}
	while (len) {
		size_t off = offset_in_page(pos);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page;
		void *kaddr;

		page = find_get_page(f->f_mapping, pos >> PAGE_SHIFT);
		if (!page)
			return -EAGAIN;
		if (!PageUptodate(page)) {
			put_page(page);
			return -EAGAIN;
		}
		kaddr = spulse_kmap_local_page(page);
		memcpy(d, kaddr + off, n);
		spulse_kunmap_local(kaddr);
		put_page(page);
		d += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/*
 * Only regular files that read() could read: not devices, FIFOs or sockets,
 * not memfd_secret() files (S_IFREG, but their pages are not in the direct
 * map; their file_operations have no read), nor DAX files (no page-cache
 * pages).
 */
static bool spulse_buildid_readable(struct file *f)
{
	return S_ISREG(file_inode(f)->i_mode) && (f->f_mode & FMODE_READ) &&
	       f->f_op && (f->f_op->read_iter || f->f_op->read) &&
	       f->f_mapping && !IS_DAX(file_inode(f));
}

/* Both passes of spulse_file_build_id(): 0 = none, -EAGAIN = not cached. */
static int spulse_build_id_pass(struct file *f, u8 *id, bool io)
{
	struct elf64_hdr eh;
	struct elf64_phdr *ph;
	u8 *note;
	int n = 0, r;
	u32 i;

	r = spulse_read_at(f, &eh, sizeof(eh), 0, io);
	if (r)
		return r == -EAGAIN ? r : 0;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(*ph) || !eh.e_phnum ||
	    eh.e_phnum > SPULSE_PHNUM_MAX)
		return 0;
	ph = kmalloc_array(eh.e_phnum, sizeof(*ph), GFP_KERNEL);
	note = kmalloc(SPULSE_NOTE_MAX, GFP_KERNEL);
	if (!ph || !note)
		goto out;
	r = spulse_read_at(f, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff, io);
	if (r) {
		n = r == -EAGAIN ? r : 0;
		goto out;
	}
	for (i = 0; i < eh.e_phnum && !n; i++) {
		size_t sz = min_t(u64, ph[i].p_filesz, SPULSE_NOTE_MAX);

		if (ph[i].p_type != PT_NOTE || sz < 12)
			continue;
		r = spulse_read_at(f, note, sz, ph[i].p_offset, io);
		if (r == -EAGAIN) {
			n = r;
			break;
		}
		if (!r)
			n = spulse_note_build_id(note, sz, id);
	}
out:
	kfree(ph);
	kfree(note);
	return n;
}

/**
 * spulse_file_build_id() - GNU build-id of an ELF64 file
 * @f: the mapped file (the caller holds a reference)
 * @id: receives up to SPULSE_MAX_BUILD_ID bytes
 *
 * Cached pages first; a missing page makes it read the file. Must not be
 * called under an mmap_lock (or anything a file read may wait for). May
 * sleep.
 *
 * Return: build-id length, 0 when none was found, or the file is not a
 * regular readable file, or not ELF64.
 */
u32 spulse_file_build_id(struct file *f, u8 *id)
{
	int n;

	if (!spulse_buildid_readable(f))
		return 0;
	n = spulse_build_id_pass(f, id, false);
	if (n == -EAGAIN)
		n = spulse_build_id_pass(f, id, true);
	return n > 0 ? n : 0;
}
