/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Relay channels (relay.c): opening a per-CPU or a global channel as
 * debugfs files (each with a procfs twin once spulse_relay_set_proc_dir()
 * named a directory), appending batches without exposing unwritten bytes,
 * sub-buffer switches that a racing read() cannot turn into lost or
 * repeated data, flushes, and the published/read position of a buffer
 * (docs/KERNEL.md, "Relay files" and "Lockdown"). Knows nothing of the
 * session: the caller hands in the debugfs directory, the sizes and where
 * each buffer's switch count lives.
 */
#ifndef SPULSE_KMOD_RELAY_H
#define SPULSE_KMOD_RELAY_H

#include <linux/compiler.h>
#include <linux/path.h>
#include <linux/relay.h>
#include <linux/types.h>
#include <asm/barrier.h>

struct dentry;
struct proc_dir_entry;
struct rchan;
struct rchan_buf;

/**
 * struct spulse_relay_pos - a relay buffer's switches, for readers, and
 *	its procfs twin
 * @seq: odd while spulse_relay_switch() runs (a sequence count the writer
 *	never waits on; spulse_relay_position() retries around it)
 * @pde: the buffer's procfs file (NULL: none)
 * @twin: that file in the /proc mount it was created under (its inode's
 *	size follows the debugfs file's, see spulse_relay_switch()); holds
 *	a reference on the dentry and the mount
 */
struct spulse_relay_pos {
	u32 seq;
	struct proc_dir_entry *pde;
	struct path twin;
};

/**
 * struct spulse_relay_posref - where a channel's switch counts are (the
 *	channel's private_data; the caller's, outlives the channel)
 * @global: a global channel's, for its one buffer
 * @cpu: a per-CPU channel's, one per CPU
 */
struct spulse_relay_posref {
	struct spulse_relay_pos global;
	struct spulse_relay_pos __percpu *cpu;
};

struct rchan *spulse_relay_open_cpus(const char *name, struct dentry *parent,
				     size_t subbuf_size, size_t n_subbufs,
				     struct spulse_relay_posref *pos);
struct rchan *spulse_relay_open_global(const char *name,
				       struct dentry *parent,
				       size_t subbuf_size, size_t n_subbufs,
				       struct spulse_relay_posref *pos);
bool spulse_relay_put(struct rchan_buf *buf, const void *data, size_t len);

/*
 * The writer's side of spulse_relay_put(), for a caller that writes into
 * the sub-buffer itself (the sampler's direct record and in-place batch):
 * do @len bytes at offset @off fit the current sub-buffer of @buf?
 */
static __always_inline bool spulse_relay_fits(const struct rchan_buf *buf,
					      size_t off, size_t len)
{
	return off + len <= buf->chan->subbuf_size;
}

/* Publish @buf's bytes up to @end: the data before the offset readers see */
static __always_inline void spulse_relay_publish(struct rchan_buf *buf,
						 size_t end)
{
	smp_wmb();	/* data before offset, for concurrent readers */
	WRITE_ONCE(buf->offset, end);
}
void spulse_relay_flush_chan(struct rchan *chan);
void spulse_relay_flush_cpus(struct rchan *chan, int __percpu *busy);
bool spulse_relay_position(struct rchan_buf *buf, u64 *published, u64 *read);
void spulse_relay_set_proc_dir(struct proc_dir_entry *dir, const char *path);

#endif /* SPULSE_KMOD_RELAY_H */
