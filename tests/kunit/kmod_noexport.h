/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Included first by the copy_*.c files, which compile kmod/ sources into
 * spulse_kunit.ko itself (see docs/KUNIT.md, "Two ways in"): their
 * EXPORT_SYMBOL_IF_KUNIT lines must not export a second copy of a symbol
 * spulse.ko already exports, so the macro is emptied here, before
 * kmod/kunit_export.h includes <kunit/visibility.h> (include-guarded).
 */
#ifndef SPULSE_KUNIT_NOEXPORT_H
#define SPULSE_KUNIT_NOEXPORT_H

#include <kunit/visibility.h>
#undef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)

/* kstack.c's exported helper gets a private name in the copy. */
#define spulse_kstack_trim spulse_kunit_copy_kstack_trim

#endif
