/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compat: short-lived page mappings. spulse_kmap_local_page() and
 * spulse_kunmap_local() are kmap_local_page()/kunmap_local() (5.11+).
 * Before, on a kernel without highmem (spulse.ko is x86-64 only) every
 * page is mapped: page_address(), which is what kmap_local_page() does
 * there too.
 */
#ifndef SPULSE_COMPAT_HIGHMEM_H
#define SPULSE_COMPAT_HIGHMEM_H

#include <linux/highmem.h>
#include <linux/mm.h>

#include "features.h"

#ifdef SPULSE_HAVE_KMAP_LOCAL_PAGE
#define spulse_kmap_local_page(page)	kmap_local_page(page)
#define spulse_kunmap_local(addr)	kunmap_local(addr)
#elif !defined(CONFIG_HIGHMEM)
#define spulse_kmap_local_page(page)	page_address(page)
#define spulse_kunmap_local(addr)	do { } while (0)
#else
#error "spulse.ko: no kmap_local_page() and CONFIG_HIGHMEM: unsupported kernel"
#endif

#endif /* SPULSE_COMPAT_HIGHMEM_H */
