/* SPDX-License-Identifier: MIT */
/* Demangling with libiberty's cplus_demangle() (sym_demangle.h). */
#include <stddef.h>

#include <libiberty/demangle.h>

#include "sym_demangle.h"

char *sym_demangle(const char *name)
{
	/* Only names that look mangled: Itanium _Z, Rust v0 _R (legacy Rust
	 * is _ZN...17h<hash>E); libiberty's automatic style tries Rust
	 * first, so a legacy Rust name loses its hash suffix. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}
