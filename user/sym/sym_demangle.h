/* SPDX-License-Identifier: MIT */
/* Symbol demangling through libiberty (C++ Itanium, Rust legacy and v0). */
#ifndef SPULSE_SYM_DEMANGLE_H
#define SPULSE_SYM_DEMANGLE_H

/**
 * sym_demangle() - demangle one symbol name
 * @name: a linkage name as found in a symbol table or DWARF
 *
 * C++ names come out with parameter lists and qualifiers
 * ("ns::Tmpl<int>::get(int) const"), Rust legacy names without their hash
 * suffix, Rust v0 names as rustc prints them.
 *
 * Return: a malloc()ed demangled name, or NULL when @name is not a mangled
 * name (or on allocation failure): the caller keeps @name then.
 */
char *sym_demangle(const char *name);

#endif /* SPULSE_SYM_DEMANGLE_H */
