/* SPDX-License-Identifier: MIT */
/*
 * Room sym (user/sym/, build/sym/libsym.a): turning frames into names.
 * Owns symbolize.c (the entry point, per-frame cache), sym_dwfl.c
 * (libdwfl: ELF, debug files, debuginfod, inlines), sym_jit.c (perf-PID.map),
 * sym_demangle.c (C++/Rust), kallsyms.c (kernel frames) and strtab.c (the
 * interned string table the rooms above share). Includes only libspulse.
 *
 * Frame symbolization (docs/CLI.md "Symbolization"): module-relative frames
 * through elfutils libdwfl (symbol tables, separate debug files by build-id
 * and .gnu_debuglink, debuginfod, DWARF lines and inline scopes), C++/Rust
 * names demangled, [vdso] through the SPOOL.vdso sidecar, JIT frames through
 * perf-PID.map files, kernel frames through a /proc/kallsyms-format sidecar
 * bounded by the kernel text and module ranges; everything else as hex.
 * Modules are opened once per path and every result is cached per frame id,
 * so the cost is per distinct frame, never per sample.
 */
#ifndef SPULSE_SYMBOLIZE_H
#define SPULSE_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include <libspulse.h>

struct symbolizer;

/** A symbolized frame; strings are owned by the symbolizer. */
struct sym_frame {
	uint8_t kind;		/* enum spulse_frame_kind */
	const char *func;	/* NULL when unknown (demangled when on) */
	uint64_t func_off;	/* address - function start, when known */
	uint64_t addr;		/* rel for module frames, else absolute */
	/* module path, every byte as recorded (a NUL byte inside too, so
	 * print @dso_len bytes, never up to the first NUL),
	 * "[kernel.kallsyms]", "[module]", "[vdso]", a perf map file or
	 * "[unknown]"; NUL-terminated after @dso_len */
	const char *dso;
	size_t dso_len;
	/* display name, see docs/CLI.md: @label_len bytes (an unresolved
	 * module frame's label holds its path, NUL bytes included) */
	const char *label;
	size_t label_len;
	uint32_t label_id;	/* interned id of @label (symbolizer_label) */
	/* source line of the address (NULL/0 unknown); for the outer entries
	 * of an inline chain, the call site of the next inner one */
	const char *file;
	uint32_t line;
	/* GNU build-id recorded in the spool for the module (hex, lower case),
	 * NULL when none was recorded */
	const char *build_id;
	/* the file at the module's path (or under --symfs) has a different
	 * build-id and was not used; the frame was resolved from a build-id
	 * directory or debuginfod, or left as hex */
	bool build_id_mismatch;
	/* the frame is an inlined call (only in symbolizer_inline_chain) */
	bool inlined;
	/* a module frame whose file was opened: @addr (a file offset) as the
	 * ELF virtual address, the address addr2line -e FILE, objdump and
	 * perf script take (0x4016a1 for file offset 0x16a1 of a non-PIE
	 * executable) */
	bool has_elf_addr;
	uint64_t elf_addr;
};

/*
 * @kallsyms: path of a /proc/kallsyms-format file, or NULL. A file that
 * cannot be read only leaves kernel frames as hex (a warning is printed once).
 * Raises the process's soft RLIMIT_NOFILE to its hard limit (libdwfl keeps
 * two descriptors per module open).
 */
struct symbolizer *symbolizer_new(const struct spulse_defs *defs,
				  const char *kallsyms);

/*
 * Look module files up under @dir first (as perf --symfs): DIR/PATH, then
 * PATH itself. Call before the first symbolizer_frame(); @dir must outlive @s.
 */
void symbolizer_set_symfs(struct symbolizer *s, const char *dir);

/*
 * The spool being read, for its sidecars: SPOOL.vdso (the [vdso] image
 * saved at record time) and SPOOL.perf-PID.map (JIT maps saved at record
 * time). @start_us is the header's start time: without a saved map, a
 * /tmp/perf-PID.map is used only when its mtime is not before the start of
 * the recording (nor after the spool's own mtime). Call before the first
 * symbolizer_frame(); @spool is copied.
 */
void symbolizer_set_spool(struct symbolizer *s, const char *spool,
			  uint64_t start_us);

/* Demangle C++ (Itanium) and Rust names (default on). */
void symbolizer_set_demangle(struct symbolizer *s, bool on);

/* Ask debuginfod for missing files by build-id (default: on when the
 * DEBUGINFOD_URLS environment variable is set and not empty). Off also
 * empties DEBUGINFOD_URLS for the process when the first module is opened,
 * so that libdwfl's own debug-file search does not ask either. */
void symbolizer_set_debuginfod(struct symbolizer *s, bool on);

/* Compute inline chains for symbolizer_inline_chain() (default off: it
 * reads DWARF scopes for every frame, which is slower). */
void symbolizer_set_inline(struct symbolizer *s, bool on);

/* Read source lines (sym_frame.file/line; default on). */
void symbolizer_set_srcline(struct symbolizer *s, bool on);

/*
 * Extra directory searched for separate debug files before the system's
 * /usr/lib/debug: DIR/.build-id/xx/rest.debug, DIR/.build-id/xx/rest (the
 * executable itself) and DIR/PATH.debug by .gnu_debuglink. @dir is copied.
 */
void symbolizer_set_debug_dir(struct symbolizer *s, const char *dir);

void symbolizer_free(struct symbolizer *s);

/* Symbolize frame @id; NULL on allocation failure or an undefined id.
 * Frames (and modules) defined after symbolizer_new() — a Tail reader's
 * definitions grow — are picked up: there is no need for a new symbolizer.
 * Returned frames stay valid until symbolizer_free(). */
const struct sym_frame *symbolizer_frame(struct symbolizer *s, uint32_t id);

/*
 * Inline chain of frame @id: *@chain is set to an array of the frames at
 * that address, innermost (deepest inlined) first, ending with the real
 * function that contains the address (its entry equals symbolizer_frame()
 * apart from file/line). Returns the count: 1 when nothing is inlined or
 * inline chains are off (symbolizer_set_inline), 0 on error (*@chain NULL).
 * The array is owned by @s and cached.
 */
uint32_t symbolizer_inline_chain(struct symbolizer *s, uint32_t frame_id,
				 const struct sym_frame **chain);

/* Interned label id of frame @id (dense, for aggregation); -1 on error. */
int64_t symbolizer_label_id(struct symbolizer *s, uint32_t id);
/* The text of a label: symbolizer_label_len() bytes (it may hold a NUL:
 * an unresolved frame's module path), NUL-terminated after them. */
const char *symbolizer_label(const struct symbolizer *s, uint32_t label_id);
size_t symbolizer_label_len(const struct symbolizer *s, uint32_t label_id);
uint32_t symbolizer_label_count(const struct symbolizer *s);
/* Byte order of two labels (every byte, the shorter first on a tie), as
 * strcmp() but never stopping at a NUL. */
int symbolizer_label_cmp(const struct symbolizer *s, uint32_t a, uint32_t b);
/* Label id of an arbitrary display text (e.g. the "--" separator). */
int64_t symbolizer_intern_label(struct symbolizer *s, const char *text);
int64_t symbolizer_intern_label_n(struct symbolizer *s, const char *text,
				  size_t len);

/* Default kallsyms sidecar of @spool (@spool + ".kallsyms") if it exists;
 * caller frees. */
char *symbolizer_default_kallsyms(const char *spool);

#endif /* SPULSE_SYMBOLIZE_H */
