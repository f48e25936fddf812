// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: kernel-stack trimming (kmod/kstack.c): the sampler's own frames
 * before the interrupted IP are cut off; and the ORC capture's truncation
 * flag on crafted interrupt registers whose stack does not unwind.
 */
#include <kunit/test.h>
#include <linux/irqflags.h>
#include <linux/slab.h>
#include <asm/segment.h>

#include "kstack.h"

static void kstack_trim_finds_interrupted_ip(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x20, 0x30, 0x40, 0x50 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x30), 2);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x10), 0);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x50), 4);
}

static void kstack_trim_takes_first_occurrence(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x30, 0x20, 0x30 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x30), 1);
}

static void kstack_trim_missing_ip_is_enoent(struct kunit *test)
{
	static const unsigned long t[] = { 0x10, 0x20 };

	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, ARRAY_SIZE(t), 0x31),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, 0, 0x10), -ENOENT);
	/* the search stays inside n */
	KUNIT_EXPECT_EQ(test, spulse_kstack_trim(t, 1, 0x20), -ENOENT);
}

#ifdef CONFIG_UNWINDER_ORC
/* A real function entry: its ORC row says "return address at sp". */
static noinline int kstack_victim(int x)
{
	return x * 3 + 1;
}

static void kernel_regs(struct pt_regs *r, unsigned long ip, unsigned long sp)
{
	memset(r, 0, sizeof(*r));
	r->cs = __KERNEL_CS;
	r->ss = __KERNEL_DS;
	r->ip = ip;
	r->sp = sp;
}

/*
 * spulse_kstack_capture() as the module calls it: with interrupts off (the
 * sample handler, the scheduler probes). The unwinder's stack checks read
 * this CPU's IRQ stacks, which DEBUG_PREEMPT (the RT debug kernel) reports
 * as a bug from preemptible code.
 */
static int capture_irqs_off(struct pt_regs *r, unsigned long *out, u32 cap,
			    u32 max, bool *deep, bool *trunc)
{
	unsigned long flags;
	int n;

	local_irq_save(flags);
	n = spulse_kstack_capture(r, out, cap, max, deep, trunc);
	local_irq_restore(flags);
	return n;
}

/* The "return address" on the stack is no kernel text: the unwind stops. */
static void kstack_capture_junk_return_is_truncated(struct kunit *test)
{
	unsigned long fake[8], out[8 + SPULSE_KSTACK_SLACK];
	bool deep = true, trunc = false;
	struct pt_regs r;
	int i, n;

	for (i = 0; i < ARRAY_SIZE(fake); i++)
		fake[i] = 0x1234 + i;
	kernel_regs(&r, (unsigned long)kstack_victim, (unsigned long)fake);
	n = capture_irqs_off(&r, out, ARRAY_SIZE(out), 8, &deep, &trunc);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, out[0], (unsigned long)kstack_victim);
	KUNIT_EXPECT_FALSE(test, deep);
	KUNIT_EXPECT_TRUE(test, trunc);
	KUNIT_EXPECT_EQ(test, kstack_victim(1), 4);
}

/* A stack pointer outside every stack: the unwinder reports an error. */
static void kstack_capture_bad_stack_is_truncated(struct kunit *test)
{
	unsigned long out[8 + SPULSE_KSTACK_SLACK];
	unsigned long *heap = kunit_kzalloc(test, 64, GFP_KERNEL);
	bool deep = true, trunc = false;
	struct pt_regs r;
	int n;

	KUNIT_ASSERT_NOT_NULL(test, heap);
	kernel_regs(&r, (unsigned long)kstack_victim, (unsigned long)heap);
	n = capture_irqs_off(&r, out, ARRAY_SIZE(out), 8, &deep, &trunc);
	KUNIT_EXPECT_GE(test, n, 1);
	KUNIT_EXPECT_EQ(test, out[0], (unsigned long)kstack_victim);
	KUNIT_EXPECT_TRUE(test, trunc);
}

/* A depth limit of 1 with callers left: too deep, whatever the rest. */
static void kstack_capture_limit_is_too_deep(struct kunit *test)
{
	unsigned long fake[8], out[8 + SPULSE_KSTACK_SLACK];
	bool deep = false, trunc;
	struct pt_regs r;
	int n;

	fake[0] = (unsigned long)kstack_victim + 4;	/* kernel text */
	kernel_regs(&r, (unsigned long)kstack_victim, (unsigned long)fake);
	n = capture_irqs_off(&r, out, ARRAY_SIZE(out), 1, &deep, &trunc);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_TRUE(test, deep);
}
#endif

static struct kunit_case spulse_kstack_cases[] = {
#ifdef CONFIG_UNWINDER_ORC
	KUNIT_CASE(kstack_capture_junk_return_is_truncated),
	KUNIT_CASE(kstack_capture_bad_stack_is_truncated),
	KUNIT_CASE(kstack_capture_limit_is_too_deep),
#endif
	KUNIT_CASE(kstack_trim_finds_interrupted_ip),
	KUNIT_CASE(kstack_trim_takes_first_occurrence),
	KUNIT_CASE(kstack_trim_missing_ip_is_enoent),
	{}
};

static struct kunit_suite spulse_kstack_suite = {
	.name = "spulse_kstack",
	.test_cases = spulse_kstack_cases,
};

kunit_test_suite(spulse_kstack_suite);
