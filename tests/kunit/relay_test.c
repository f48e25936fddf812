// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the relay channel (kmod/relay.c, compiled into this module): the
 * cpuN files appear at open and go at close, a written batch reads back
 * byte for byte, a full buffer refuses whole batches (non-overwrite) and
 * reading frees room again.
 */
#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/relay.h>

#include "kmod_copy.h"

#define DIR_NAME "spulse_kunit_relay"

static struct spulse_params small_params(void)
{
	struct spulse_params p = {
		.freq = 1000,
		.max_user_depth = 4,
		.max_kernel_depth = 4,
		.subbuf_size = 4096,
		.n_subbufs = 2,
		.offcpu_threads = SPULSE_OFFCPU_THREADS_MIN,
		.unwind_mem_kb = 64,
	};
	return p;
}

static bool cpu_file_exists(int cpu)
{
	char name[16];
	struct dentry *d;

	snprintf(name, sizeof(name), "cpu%d", cpu);
	d = debugfs_lookup(name, spulse.dir);
	if (!d)
		return false;
	dput(d);
	return true;
}

static void relay_open_creates_one_file_per_cpu(struct kunit *test)
{
	struct spulse_params p = small_params();
	int cpu;

	rt_setup(test, &p, DIR_NAME);
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_TRUE_MSG(test, cpu_file_exists(cpu), "cpu%d", cpu);
	spulse_relay_close();
	KUNIT_EXPECT_NULL(test, spulse.chan);
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_FALSE_MSG(test, cpu_file_exists(cpu),
				       "cpu%d survived close", cpu);
	rt_teardown();
}

static void relay_write_reads_back(struct kunit *test)
{
	struct spulse_params p = small_params();
	static const u8 a[] = "first batch", b[] = "second";
	struct rchan_buf *buf;
	ssize_t n;
	u8 *data;

	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	KUNIT_ASSERT_TRUE(test, spulse_relay_put(buf, a, sizeof(a)));
	KUNIT_ASSERT_TRUE(test, spulse_relay_put(buf, b, sizeof(b)));
	n = rt_read_cpu(test, 0, &data);
	KUNIT_EXPECT_EQ(test, n, (ssize_t)(sizeof(a) + sizeof(b)));
	if (n == sizeof(a) + sizeof(b)) {
		KUNIT_EXPECT_EQ(test, memcmp(data, a, sizeof(a)), 0);
		KUNIT_EXPECT_EQ(test, memcmp(data + sizeof(a), b, sizeof(b)), 0);
	}
	rt_teardown();
}

static void relay_full_buffer_refuses_whole_batches(struct kunit *test)
{
	struct spulse_params p = small_params();
	struct rchan_buf *buf;
	u8 batch[1000];
	unsigned int i, ok = 0, refused = 0;
	ssize_t n;
	u8 *data;

	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	for (i = 0; i < 20; i++) {
		memset(batch, 'A' + i, sizeof(batch));
		if (spulse_relay_put(buf, batch, sizeof(batch)))
			ok++;
		else
			refused++;
	}
	/* 2 sub-buffers of 4096 hold 4 batches of 1000 each */
	KUNIT_EXPECT_EQ(test, ok, 8U);
	KUNIT_EXPECT_EQ(test, refused, 12U);
	n = rt_read_cpu(test, 0, &data);
	KUNIT_ASSERT_EQ(test, n, (ssize_t)(ok * sizeof(batch)));
	/* whole batches, in order, the first 'ok' ones */
	for (i = 0; i < ok; i++) {
		KUNIT_EXPECT_EQ_MSG(test, data[i * 1000], 'A' + i, "batch %u", i);
		KUNIT_EXPECT_EQ_MSG(test, data[i * 1000 + 999], 'A' + i,
				    "batch %u", i);
	}
	rt_teardown();
}

static void relay_reading_makes_room_again(struct kunit *test)
{
	struct spulse_params p = small_params();
	struct rchan_buf *buf;
	u8 batch[1000];
	unsigned int i;
	u8 *data;

	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	memset(batch, 'x', sizeof(batch));
	for (i = 0; i < 12; i++)
		spulse_relay_put(buf, batch, sizeof(batch));
	KUNIT_EXPECT_FALSE(test, spulse_relay_put(buf, batch, sizeof(batch)));
	KUNIT_EXPECT_GT(test, rt_read_cpu(test, 0, &data), 0);
	KUNIT_EXPECT_TRUE(test, spulse_relay_put(buf, batch, sizeof(batch)));
	rt_teardown();
}

static struct kunit_case spulse_relay_cases[] = {
	KUNIT_CASE(relay_open_creates_one_file_per_cpu),
	KUNIT_CASE(relay_write_reads_back),
	KUNIT_CASE(relay_full_buffer_refuses_whole_batches),
	KUNIT_CASE(relay_reading_makes_room_again),
	{}
};

static struct kunit_suite spulse_relay_suite = {
	.name = "spulse_relay",
	.test_cases = spulse_relay_cases,
};
kunit_test_suite(spulse_relay_suite);
