/* SPDX-License-Identifier: GPL-2.0 */
/*
 * EXPORT_SYMBOL_IF_KUNIT for the pure helpers the KUnit module calls in
 * spulse.ko; empty when the kernel has no KUnit (or no such macro).
 */
#ifndef SPULSE_KMOD_KUNIT_EXPORT_H
#define SPULSE_KMOD_KUNIT_EXPORT_H


#if IS_ENABLED(CONFIG_KUNIT)
#include <kunit/visibility.h>
#endif
#ifndef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

#endif /* SPULSE_KMOD_KUNIT_EXPORT_H */
