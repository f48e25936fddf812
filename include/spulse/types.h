/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Fixed-width types for code shared by the kernel module and userspace.
 */
#ifndef SPULSE_TYPES_H
#define SPULSE_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#endif

#endif /* SPULSE_TYPES_H */
