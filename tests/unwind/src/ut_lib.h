/* SPDX-License-Identifier: MIT */
#ifndef UT_LIB_H
#define UT_LIB_H
#include <stdint.h>
uint64_t ut_realign(int n);
uint64_t ut_fp_align(int n);
uint64_t ut_leaf(int n);
uint64_t ut_recurse(int depth, int n);
#endif
