// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/percpu.c compiled into spulse_kunit.ko (see kmod_noexport.h). Its
 * kvmalloc() (only the batch buffer of a CPU's large part uses it) goes
 * through spulse_kunit_kvmalloc(), which fails on demand
 * (spulse_kunit_alloc_fail) so a CPU coming online without memory can be
 * tested.
 */
#include "kmod_noexport.h"
#include <linux/mm.h>
#include <linux/slab.h>

#include "kmod_copy.h"

/*
 * kvmalloc() is a function up to 6.9 and a macro (memory allocation
 * profiling's alloc_hooks()) since: keep the kernel's own across the copy.
 */
#pragma push_macro("kvmalloc")
#undef kvmalloc
#define kvmalloc(size, flags) spulse_kunit_kvmalloc(size, flags)
#include "../../kmod/percpu.c"
#undef kvmalloc
#pragma pop_macro("kvmalloc")

atomic_t spulse_kunit_alloc_fail = ATOMIC_INIT(0);

/**
 * spulse_kunit_kvmalloc() - kvmalloc(), or NULL while failures are due
 * @size: bytes
 * @flags: GFP flags
 *
 * Return: the memory, or NULL (spulse_kunit_alloc_fail counted down).
 */
void *spulse_kunit_kvmalloc(size_t size, gfp_t flags)
{
	if (atomic_add_unless(&spulse_kunit_alloc_fail, -1, 0))
		return NULL;
	return kvmalloc(size, flags);
}
