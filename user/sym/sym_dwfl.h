/* SPDX-License-Identifier: MIT */
/*
 * One user-space module (an ELF file named by a spool's module record)
 * opened through elfutils libdwfl: the right file chosen by build-id, its
 * separate debug file found by build-id or .gnu_debuglink (and debuginfod),
 * names, source lines and inline scopes looked up by module-relative
 * (file offset) address.
 */
#ifndef SPULSE_SYM_DWFL_H
#define SPULSE_SYM_DWFL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct debuginfod_client;

/** Where to look; shared by all modules of one symbolizer. */
struct sym_dwfl_opts {
	const char *symfs;	/* perf --symfs root, or NULL */
	const char *debug_dir;	/* extra debug root before /usr/lib/debug */
	bool debuginfod;	/* ask debuginfod by build-id */
	struct debuginfod_client *dbgd;	/* created on first use */
	bool dbgd_failed;	/* debuginfod_begin() failed once */
};

/** How a module was opened (for messages and sym_frame flags). */
struct sym_open_info {
	bool mismatch;		/* a file had another build-id: not used */
	char file_bid[129];	/* that file's build-id (hex), "none" none */
	const char *how;	/* "path", "symfs", "build-id dir",
				 * "debuginfod" — static strings */
	int path_err;		/* why PATH itself did not open (negative
				 * errno; -EINVAL: not a regular file, -ENOEXEC:
				 * not ELF), 0 when it did */
};

struct sym_mod;

/** One looked-up location; strings belong to the module. */
struct sym_loc {
	const char *name;	/* raw (mangled) name, NULL unknown */
	uint64_t off;		/* address - symbol start */
	const char *file;	/* source file, NULL unknown */
	uint32_t line;		/* 0 unknown */
	bool inlined;		/* an inlined call (inline chains only) */
};

/**
 * sym_mod_open() - open a module's file and its debug information
 * @o: search options
 * @path: the module path (NUL-terminated; the caller never passes a path
 *	that contained a NUL byte)
 * @display: @path as printed in messages (escaped)
 * @bid: build-id recorded for the module, or NULL
 * @bid_len: its length (0 = none)
 * @out: the module on success
 * @info: filled in either case
 *
 * Candidates, in order: SYMFS/PATH, PATH, then (with a recorded build-id)
 * DIR/.build-id/xx/rest and DIR/.build-id/xx/rest.debug for DIR in the
 * extra debug dir, SYMFS/usr/lib/debug and /usr/lib/debug, then
 * debuginfod's executable and debuginfo. Each is opened O_NONBLOCK and
 * used only when it is a regular ELF file whose build-id equals the
 * recorded one (when one was recorded). The first candidate with another
 * build-id prints "spulse: FILE: build-id mismatch (recorded X, file Y):
 * not used" (FILE: @display, or the file under the symfs).
 *
 * Return: 0, or a negative errno (-ENOENT nothing usable).
 */
int sym_mod_open(struct sym_dwfl_opts *o, const char *path,
		 const char *display, const uint8_t *bid, size_t bid_len,
		 struct sym_mod **out, struct sym_open_info *info);

/**
 * sym_mod_elf_addr() - the ELF virtual address of a file offset
 * @m: module
 * @rel: file offset (a module-relative frame's address)
 * @vaddr: set to the address in the ELF file's own layout (p_vaddr of the
 *	PT_LOAD segment holding @rel, plus the offset into it): what
 *	addr2line -e FILE and objdump take
 * Return: false when no segment holds @rel.
 */
bool sym_mod_elf_addr(const struct sym_mod *m, uint64_t rel, uint64_t *vaddr);

/**
 * sym_mod_stripped() - the module has no symbol table of its own (no
 * .symtab), no separate debug file and no DWARF: names come from .dynsym
 * at most, so most addresses stay hex.
 */
bool sym_mod_stripped(struct sym_mod *m);

/**
 * sym_mod_lookup() - function (and source line) at a module-relative address
 * @m: module
 * @rel: file offset, converted through the PT_LOAD segment that holds it
 * @srcline: also look the source line up
 * @out: filled
 *
 * Return: 0 when a function was found, -ENOENT otherwise (@out->file/line
 * may still be set).
 */
int sym_mod_lookup(struct sym_mod *m, uint64_t rel, bool srcline,
		   struct sym_loc *out);

/**
 * sym_mod_inlines() - inline chain at a module-relative address
 * @m: module
 * @rel: file offset
 * @out: set to a malloc()ed array, innermost inlined call first, the last
 *	entry the real function (name from the symbol table, file/line the
 *	call site of the outermost inlined call); the caller frees it
 *
 * Return: number of entries (>= 2), 0 when nothing is inlined there (or
 * no DWARF), or a negative errno.
 */
int sym_mod_inlines(struct sym_mod *m, uint64_t rel, struct sym_loc **out);

/* The file whose symbols are used. */
const char *sym_mod_path(const struct sym_mod *m);

void sym_mod_free(struct sym_mod *m);

/* End the debuginfod client of @o, if one was made. */
void sym_dwfl_opts_fini(struct sym_dwfl_opts *o);

#endif /* SPULSE_SYM_DWFL_H */
