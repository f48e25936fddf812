// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the relay channel (kmod/relay.c, compiled into this module): the
 * cpuN files appear at open and go at close, a written batch reads back
 * byte for byte, a full buffer refuses whole batches (non-overwrite) and
 * reading frees room again; relay's own state never reaches "full" and the
 * sub-buffers a racing read could reach hold no stale bytes
 * (spulse_relay_switch()); a CPU without a relay buffer drops the sample
 * (counted) instead of dereferencing NULL.
 */
#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/relay.h>
#include <asm/segment.h>

#include "kmod_copy.h"
#include "stream_check.h"

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
	/* relay makes buffers for online CPUs (and those coming online) */
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_TRUE_MSG(test, cpu_file_exists(cpu), "cpu%d", cpu);
	spulse_stream_close();
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

/*
 * Relay's own overwrite test (produced - consumed >= n_subbufs, which its
 * read() resolves by discarding the oldest unread sub-buffer) and its
 * "full" offset must never be reached: at most n_subbufs sub-buffers of the
 * n_subbufs + 1 relay has hold data, and the free one after the current
 * one is all padding.
 */
static void relay_never_reaches_full_and_guards_free_subbufs(struct kunit *test)
{
	struct spulse_params p = small_params();
	struct rchan_buf *buf;
	unsigned int i, round, ok;
	u8 batch[700];
	size_t n, sz;
	u8 *data;

	p.n_subbufs = 3;
	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	n = spulse.chan->n_subbufs;
	sz = spulse.chan->subbuf_size;
	KUNIT_ASSERT_EQ(test, n, (size_t)p.n_subbufs + 1);
	for (round = 0; round < 5; round++) {
		ok = 0;
		for (i = 0; i < 40; i++) {
			memset(batch, 'a' + (i % 26), sizeof(batch));
			if (spulse_relay_put(buf, batch, sizeof(batch)))
				ok++;
			KUNIT_EXPECT_LE(test, buf->subbufs_produced -
					buf->subbufs_consumed, n - 2);
			KUNIT_EXPECT_FALSE(test, relay_buf_full(buf));
			KUNIT_EXPECT_LE(test, buf->offset, sz);
		}
		/* 3 sub-buffers of 4096 hold 5 batches of 700 each */
		KUNIT_EXPECT_EQ_MSG(test, ok, 15U, "round %u", round);
		/* the free one after the current one: all padding */
		KUNIT_EXPECT_EQ(test, buf->padding[(buf->subbufs_produced + 1) % n], sz);
		/* a flush with no free sub-buffer leaves the partial one current */
		spulse_relay_flush_chan(spulse.chan);
		KUNIT_EXPECT_LE(test, buf->subbufs_produced -
				buf->subbufs_consumed, n - 2);
		KUNIT_EXPECT_EQ(test, rt_read_cpu(test, 0, &data),
				(ssize_t)(ok * sizeof(batch)));
		KUNIT_EXPECT_EQ(test, data[0], 'a');
		/* rt_read_cpu() leaves the current one unconsumed: start over */
		relay_reset(spulse.chan);
		buf = *per_cpu_ptr(spulse.chan->buf, 0);
	}
	rt_teardown();
}

/*
 * A flush with room publishes the partial sub-buffer: the bytes are the
 * same, whether read before or after it.
 */
static void relay_flush_publishes_when_room(struct kunit *test)
{
	struct spulse_params p = small_params();
	static const u8 a[] = "partial";
	struct rchan_buf *buf;
	u8 *data;

	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	KUNIT_ASSERT_TRUE(test, spulse_relay_put(buf, a, sizeof(a)));
	spulse_relay_flush_chan(spulse.chan);
	KUNIT_EXPECT_EQ(test, buf->subbufs_produced, (size_t)1);
	KUNIT_EXPECT_EQ(test, buf->padding[0], spulse.chan->subbuf_size - sizeof(a));
	KUNIT_EXPECT_EQ(test, buf->offset, (size_t)0);
	KUNIT_ASSERT_EQ(test, rt_read_cpu(test, 0, &data), (ssize_t)sizeof(a));
	KUNIT_EXPECT_EQ(test, memcmp(data, a, sizeof(a)), 0);
	rt_teardown();
}

/*
 * The published count moves at switches only, equals the relay file's
 * size, and the read position counts what readers consumed: published
 * sub-buffers and what was read of the current one. A switch seen in
 * progress (odd sequence) that never ends gives no reading.
 */
static void relay_position_counts_published_and_read(struct kunit *test)
{
	struct spulse_params p = small_params();
	static const u8 a[] = "published", b[] = "current";
	struct spulse_relay_pos *pos;
	struct rchan_buf *buf;
	u64 pub = 1, rd = 1;
	u8 *data;

	rt_setup(test, &p, DIR_NAME);
	buf = *per_cpu_ptr(spulse.chan->buf, 0);
	pos = &per_cpu_ptr(spulse.cpu, 0)->rpos;
	KUNIT_ASSERT_TRUE(test, spulse_relay_put(buf, a, sizeof(a)));
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, pub, 0ULL);
	KUNIT_EXPECT_EQ(test, rd, 0ULL);
	spulse_relay_flush_chan(spulse.chan);
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, pub, (u64)sizeof(a));
	KUNIT_EXPECT_EQ(test, rd, 0ULL);
	KUNIT_EXPECT_EQ(test, (u64)i_size_read(d_inode(buf->dentry)), pub);
	KUNIT_ASSERT_EQ(test, rt_read_cpu(test, 0, &data), (ssize_t)sizeof(a));
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, rd, (u64)sizeof(a));
	/* unpublished bytes, then read out of the current sub-buffer */
	KUNIT_ASSERT_TRUE(test, spulse_relay_put(buf, b, sizeof(b)));
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, pub, (u64)sizeof(a));
	KUNIT_EXPECT_EQ(test, rd, (u64)sizeof(a));
	KUNIT_ASSERT_EQ(test, rt_read_cpu(test, 0, &data), (ssize_t)sizeof(b));
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, pub, (u64)sizeof(a));
	KUNIT_EXPECT_EQ(test, rd, (u64)(sizeof(a) + sizeof(b)));
	spulse_relay_flush_chan(spulse.chan);
	KUNIT_ASSERT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	KUNIT_EXPECT_EQ(test, pub, (u64)(sizeof(a) + sizeof(b)));
	KUNIT_EXPECT_EQ(test, rd, pub);
	KUNIT_EXPECT_EQ(test, (u64)i_size_read(d_inode(buf->dentry)), pub);
	/* a writer stalled inside a switch: no consistent reading */
	pos->seq++;
	KUNIT_EXPECT_FALSE(test, spulse_relay_position(buf, &pub, &rd));
	pos->seq++;
	KUNIT_EXPECT_TRUE(test, spulse_relay_position(buf, &pub, &rd));
	rt_teardown();
}

/*
 * A CPU whose relay buffer is missing (relay_open() raced a CPU coming
 * online): the sampler drops the sample before capturing anything
 * (counted as dropped_busy, the count for "this CPU cannot take samples",
 * as for a CPU without sampler state), and nothing of it reaches the
 * encoder: the next sample written once the buffer is back still makes a
 * valid stream.
 */
static void relay_missing_buffer_is_a_counted_drop(struct kunit *test)
{
	struct spulse_params p = small_params();
	struct spulse_cpu_stats st;
	struct rchan_buf *saved;
	struct sk_stream *sk;
	unsigned long flags;
	struct pt_regs r;
	ssize_t n;
	u8 *data;
	int cpu;

	rt_setup(test, &p, DIR_NAME);
	memset(&r, 0, sizeof(r));
	r.cs = __USER_CS;
	r.ss = __USER_DS;
	r.ip = 0x400000;
	local_irq_save(flags);
	cpu = smp_processor_id();
	saved = *per_cpu_ptr(spulse.chan->buf, cpu);
	*per_cpu_ptr(spulse.chan->buf, cpu) = NULL;
	spulse_kunit_take(&r);
	*per_cpu_ptr(spulse.chan->buf, cpu) = saved;
	r.ip = 0x400010;
	spulse_kunit_take(&r);
	local_irq_restore(flags);
	rt_stats(&st);
	KUNIT_EXPECT_EQ(test, st.taken, 2ULL);
	KUNIT_EXPECT_EQ(test, st.written, 1ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_busy, 1ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_buffer_full, 0ULL);
	n = rt_read_cpu(test, cpu, &data);
	KUNIT_ASSERT_GT(test, n, (ssize_t)0);
	KUNIT_EXPECT_EQ(test, (u64)n, per_cpu_ptr(spulse.cpu, cpu)->enc.bytes);
	sk = kunit_kzalloc(test, sizeof(*sk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sk);
	sk_init(sk);
	KUNIT_EXPECT_EQ(test, sk_feed(sk, data, n), 0);
	KUNIT_EXPECT_EQ(test, sk->n_samples, 1U);
	rt_teardown();
}

static struct kunit_case spulse_relay_cases[] = {
	KUNIT_CASE(relay_open_creates_one_file_per_cpu),
	KUNIT_CASE(relay_write_reads_back),
	KUNIT_CASE(relay_full_buffer_refuses_whole_batches),
	KUNIT_CASE(relay_reading_makes_room_again),
	KUNIT_CASE(relay_never_reaches_full_and_guards_free_subbufs),
	KUNIT_CASE(relay_flush_publishes_when_room),
	KUNIT_CASE(relay_position_counts_published_and_read),
	KUNIT_CASE(relay_missing_buffer_is_a_counted_drop),
	{}
};

static struct kunit_suite spulse_relay_suite = {
	.name = "spulse_relay",
	.test_cases = spulse_relay_cases,
};

kunit_test_suite(spulse_relay_suite);
