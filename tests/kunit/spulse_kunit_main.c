// SPDX-License-Identifier: GPL-2.0
/*
 * spulse_kunit.ko: KUnit suites for spulse.ko. The suites register
 * themselves (kunit_test_suite in each *_test.c) and run at module load;
 * results are read from /sys/kernel/debug/kunit/<suite>/results. Internals
 * of spulse.ko are reached through its EXPORT_SYMBOL_IF_KUNIT exports, so
 * spulse.ko must be loaded first.
 */
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suites for the spulse sampling profiler module");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
