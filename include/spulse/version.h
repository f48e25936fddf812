/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The project's version, one string for every program that prints one
 * (spulse-drain --version, spulse --version). Fixed here, not generated:
 * raise it by hand when a release is cut. Independent of the spool format
 * version (format.h) and of the unwind-table version (unwind.h).
 */
#ifndef SPULSE_VERSION_H
#define SPULSE_VERSION_H

#define SPULSE_VERSION	"0.1.0"

#endif /* SPULSE_VERSION_H */
