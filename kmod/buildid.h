/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF build-ids (buildid.c): from a note section (pure) or a file.
 */
#ifndef SPULSE_KMOD_BUILDID_H
#define SPULSE_KMOD_BUILDID_H

#include <linux/types.h>

#include <spulse/format.h>

struct file;

u32 spulse_note_build_id(const u8 *buf, size_t len, u8 *id);
u32 spulse_file_build_id(struct file *f, u8 *id);

#endif /* SPULSE_KMOD_BUILDID_H */
