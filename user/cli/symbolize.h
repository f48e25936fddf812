/* SPDX-License-Identifier: MIT */
/*
 * Frame symbolization: module-relative frames through the module file's ELF
 * symbol tables (libelf), kernel frames through a /proc/kallsyms-format
 * sidecar, everything else as hex. Symbol tables are loaded once per path
 * and every result is cached per frame id.
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
	const char *func;	/* NULL when unknown */
	uint64_t func_off;	/* address - function start, when known */
	uint64_t addr;		/* rel for module frames, else absolute */
	const char *dso;	/* module path, "[kernel.kallsyms]",
				 * "[module]" or "[unknown]" */
	const char *label;	/* display name, see docs/CLI.md */
};

/*
 * @kallsyms: path of a /proc/kallsyms-format file, or NULL. A file that
 * cannot be read only leaves kernel frames as hex (a warning is printed once).
 */
struct symbolizer *symbolizer_new(const struct spulse_defs *defs,
				  const char *kallsyms);

/*
 * Look module files up under @dir first (as perf --symfs): DIR/PATH, then
 * PATH itself. Call before the first symbolizer_frame(); @dir must outlive @s.
 */
void symbolizer_set_symfs(struct symbolizer *s, const char *dir);
void symbolizer_free(struct symbolizer *s);

/* Symbolize frame @id; NULL on allocation failure or an undefined id. */
const struct sym_frame *symbolizer_frame(struct symbolizer *s, uint32_t id);

/* Interned label id of frame @id (dense, for aggregation); -1 on error. */
int64_t symbolizer_label_id(struct symbolizer *s, uint32_t id);
const char *symbolizer_label(const struct symbolizer *s, uint32_t label_id);
uint32_t symbolizer_label_count(const struct symbolizer *s);
/* Label id of an arbitrary display text (e.g. the "--" separator). */
int64_t symbolizer_intern_label(struct symbolizer *s, const char *text);

/* Default kallsyms sidecar of @spool (@spool + ".kallsyms") if it exists;
 * caller frees. */
char *symbolizer_default_kallsyms(const char *spool);

#endif /* SPULSE_SYMBOLIZE_H */
