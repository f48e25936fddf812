// SPDX-License-Identifier: GPL-2.0
/*
 * Relay channels as debugfs files: per-CPU (one file per CPU that is or
 * was online since the channel was opened: relay creates a buffer at
 * relay_open() for the online CPUs and in its CPUHP_RELAY_PREPARE callback
 * for later ones) or global (one file). Non-overwrite mode: a full buffer
 * refuses the write and the batch is dropped whole. Sub-buffer switches go
 * through spulse_relay_switch(), which keeps relay's read() from
 * discarding or replaying a sub-buffer (docs/KERNEL.md, "Relay files").
 * Each buffer's switch count (struct spulse_relay_pos) belongs to the
 * caller; the channel's private_data says where it is.
 *
 * Every buffer file has a procfs twin of the same name once
 * spulse_relay_set_proc_dir() named a directory (docs/KERNEL.md,
 * "Lockdown"): kernel lockdown makes debugfs refuse relay files, procfs
 * does not. The twin is the same buffer behind relay's own file
 * operations; relay keeps the debugfs dentry (and grows its inode's size),
 * spulse_relay_switch() copies that size to the twin's inode.
 */
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "relay.h"
#include "compat/procfs.h"
#include "compat/relay.h"

/* set by spulse_relay_set_proc_dir() */
static struct proc_dir_entry *spulse_relay_procdir;
static const char *spulse_relay_procpath;

/**
 * spulse_relay_set_proc_dir() - where buffer files get their procfs twins
 * @dir: the procfs directory (NULL: no twins from now on)
 * @path: its path under the /proc mount, e.g. "/proc/spulse"
 *
 * Channels opened afterwards (and their buffers of CPUs that come online
 * later) get a twin per buffer file. Called before the first channel is
 * opened, and with NULL after the last one is closed.
 */
void spulse_relay_set_proc_dir(struct proc_dir_entry *dir, const char *path)
{
	spulse_relay_procdir = dir;
	spulse_relay_procpath = path;
}

/* The switch count of @buf (the channel's private_data says where). */
static struct spulse_relay_pos *spulse_relay_pos(struct rchan_buf *buf)
{
	struct spulse_relay_posref *ref = buf->chan->private_data;

	if (buf->chan->is_global)
		return &ref->global;
	return per_cpu_ptr(ref->cpu, buf->cpu);
}

/*
 * The procfs twin's file operations: relay's, on the buffer the entry was
 * created with. Only the inode of the /proc mount the twin was created
 * under (the one holding the reference) has a size that follows the
 * buffer: an open through another mount of procfs (a container's own
 * /proc) is refused with EXDEV rather than reading nothing.
 */
static int spulse_relay_proc_open(struct inode *inode, struct file *f)
{
	struct rchan_buf *buf = spulse_pde_data(inode);
	struct dentry *twin = READ_ONCE(spulse_relay_pos(buf)->twin.dentry);

	if (!twin || d_inode(twin) != inode)
		return -EXDEV;
	return relay_file_operations.open(inode, f);
}

static ssize_t spulse_relay_proc_read(struct file *f, char __user *ubuf,
				      size_t len, loff_t *ppos)
{
	return relay_file_operations.read(f, ubuf, len, ppos);
}

static __poll_t spulse_relay_proc_poll(struct file *f, poll_table *wait)
{
	return relay_file_operations.poll(f, wait);
}

static int spulse_relay_proc_mmap(struct file *f, struct vm_area_struct *vma)
{
	return relay_file_operations.mmap(f, vma);
}

static int spulse_relay_proc_release(struct inode *inode, struct file *f)
{
	return relay_file_operations.release(inode, f);
}

static const struct proc_ops spulse_relay_proc_ops = {
	.proc_open = spulse_relay_proc_open,
	.proc_read = spulse_relay_proc_read,
	.proc_poll = spulse_relay_proc_poll,
	.proc_mmap = spulse_relay_proc_mmap,
	.proc_release = spulse_relay_proc_release,
};

/*
 * Create @buf's procfs twin @name (0400) and take the twin's dentry in the
 * caller's /proc (relay_open() runs in the loader's context, the buffer of
 * a CPU coming online later in the context of the task bringing it up: on
 * a usual system both see the one /proc). @pos is the buffer's (relay sets
 * buf->cpu only after this callback, so the caller names it). Without a
 * directory, nothing; a failure leaves the buffer without a twin and says
 * so once.
 */
static void spulse_relay_twin_create(const char *name, struct rchan_buf *buf,
				     struct spulse_relay_pos *pos)
{
	struct proc_dir_entry *pde;
	struct path p;
	char *path;
	int r;

	if (!spulse_relay_procdir || !pos)
		return;
	pde = proc_create_data(name, 0400, spulse_relay_procdir,
			       &spulse_relay_proc_ops, buf);
	if (!pde) {
		pr_warn_once("spulse: no procfs twin for relay file %s\n",
			     name);
		return;
	}
	path = kasprintf(GFP_KERNEL, "%s/%s", spulse_relay_procpath, name);
	r = path ? kern_path(path, 0, &p) : -ENOMEM;
	kfree(path);
	if (!r && spulse_pde_data(d_inode(p.dentry)) != buf) {
		path_put(&p);
		r = -ESTALE;
	}
	if (r) {
		pr_warn_once("spulse: %s/%s not found in this /proc (%d): no procfs twin\n",
			     spulse_relay_procpath, name, r);
		proc_remove(pde);
		return;
	}
	/* relay's open takes the buffer from i_private (so does pde_data()
	 * since 5.17)
	 */
	d_inode(p.dentry)->i_private = buf;
	pos->pde = pde;
	WRITE_ONCE(pos->twin.mnt, p.mnt);
	WRITE_ONCE(pos->twin.dentry, p.dentry);
}

/* Remove the twin of @buf's file, if it has one. */
static void spulse_relay_twin_remove(struct rchan_buf *buf)
{
	struct spulse_relay_pos *pos = spulse_relay_pos(buf);
	struct path p = pos->twin;

	if (pos->pde)
		proc_remove(pos->pde);	/* waits for calls in flight */
	pos->pde = NULL;
	WRITE_ONCE(pos->twin.dentry, NULL);
	pos->twin.mnt = NULL;
	if (p.dentry)
		path_put(&p);
}

/* The switch count of a per-CPU buffer being created as file @name. */
static struct spulse_relay_pos *spulse_relay_pos_named(struct rchan_buf *buf,
						       const char *name)
{
	struct spulse_relay_posref *ref = buf->chan->private_data;
	size_t n = strlen(buf->chan->base_filename);
	unsigned int cpu;

	if (strncmp(name, buf->chan->base_filename, n) ||
	    kstrtouint(name + n, 10, &cpu) || cpu >= nr_cpu_ids)
		return NULL;
	return per_cpu_ptr(ref->cpu, cpu);
}

static struct dentry *spulse_create_buf_file(const char *filename,
					     struct dentry *parent,
					     umode_t mode,
					     struct rchan_buf *buf,
					     int *is_global)
{
	struct dentry *d;

	*is_global = 0;
	d = debugfs_create_file(filename, 0400, parent, buf,
				&relay_file_operations);
	if (!IS_ERR_OR_NULL(d))
		spulse_relay_twin_create(filename, buf,
					 spulse_relay_pos_named(buf, filename));
	return d;
}

/*
 * relay calls this from relay_close() (and when relay_open() fails) with
 * the buffer still there: its debugfs inode's i_private.
 */
static int spulse_remove_buf_file(struct dentry *dentry)
{
	spulse_relay_twin_remove(d_inode(dentry)->i_private);
	debugfs_remove(dentry);
	return 0;
}

static int spulse_subbuf_start(SPULSE_SUBBUF_START_PARAMS)
{
	return !relay_buf_full(buf);
}

static struct dentry *spulse_create_global_file(const char *filename,
					      struct dentry *parent,
					      umode_t mode,
					      struct rchan_buf *buf,
					      int *is_global)
{
	struct spulse_relay_posref *ref = buf->chan->private_data;
	struct dentry *d;

	*is_global = 1;
	d = debugfs_create_file(buf->chan->base_filename, 0400, parent, buf,
				&relay_file_operations);
	if (!IS_ERR_OR_NULL(d))
		spulse_relay_twin_create(buf->chan->base_filename, buf,
					 &ref->global);
	return d;
}

static spulse_relay_cb_const struct rchan_callbacks spulse_global_cb = {
	.subbuf_start = spulse_subbuf_start,
	.create_buf_file = spulse_create_global_file,
	.remove_buf_file = spulse_remove_buf_file,
};

static spulse_relay_cb_const struct rchan_callbacks spulse_cpus_cb = {
	.subbuf_start = spulse_subbuf_start,
	.create_buf_file = spulse_create_buf_file,
	.remove_buf_file = spulse_remove_buf_file,
};

/*
 * Each channel gets one sub-buffer more than asked for: the guard that
 * spulse_relay_switch() keeps free (so n_subbufs stays the number that can
 * hold data).
 */
static struct rchan *spulse_relay_chan_open(const char *name,
					    struct dentry *parent,
					    size_t subbuf_size,
					    size_t n_subbufs,
					    spulse_relay_cb_const
					    struct rchan_callbacks *cb,
					    struct spulse_relay_posref *pos)
{
	struct rchan *chan;

	/*
	 * relay_open() walks the online CPUs without the hotplug lock: a CPU
	 * whose CPUHP_RELAY_PREPARE step ran before the channel was listed
	 * but that was not yet online during the walk would get no buffer.
	 * With hotplug held off, a CPU is either online for the walk or
	 * prepared later with the channel listed.
	 */
	cpus_read_lock();
	chan = relay_open(name, parent, subbuf_size, n_subbufs + 1, cb, pos);
	cpus_read_unlock();
	return chan;
}

/**
 * spulse_relay_open_cpus() - create a per-CPU channel and its files
 * @name: file name prefix (files @name0, @name1, ...)
 * @parent: debugfs directory
 * @subbuf_size: sub-buffer size
 * @n_subbufs: sub-buffers per CPU that can hold data
 * @pos: where the switch counts are (@pos->cpu, one per buffer)
 *
 * Close with relay_close().
 *
 * Return: the channel or NULL.
 */
struct rchan *spulse_relay_open_cpus(const char *name, struct dentry *parent,
				     size_t subbuf_size, size_t n_subbufs,
				     struct spulse_relay_posref *pos)
{
	return spulse_relay_chan_open(name, parent, subbuf_size, n_subbufs,
				      &spulse_cpus_cb, pos);
}

/**
 * spulse_relay_open_global() - create a global relay file
 * @name: the file's name
 * @parent: debugfs directory
 * @subbuf_size: sub-buffer size (>= SPULSE_MAX_RECORD)
 * @n_subbufs: sub-buffers that can hold data
 * @pos: where the switch count is (@pos->global)
 *
 * The meta file is a single global relay buffer rather than a file with
 * module file_operations: relay's file_operations belong to the kernel, so
 * an open file does not pin the module and rmmod stays possible while the
 * drainer is attached (later reads give EIO). Close with relay_close().
 *
 * Return: the channel or NULL.
 */
struct rchan *spulse_relay_open_global(const char *name,
				       struct dentry *parent,
				       size_t subbuf_size, size_t n_subbufs,
				       struct spulse_relay_posref *pos)
{
	return spulse_relay_chan_open(name, parent, subbuf_size, n_subbufs,
				      &spulse_global_cb, pos);
}

/**
 * spulse_relay_switch() - relay_switch_subbuf() made safe for a racing read
 * @buf: the buffer (its only writer is the caller)
 * @len: bytes the caller is about to write into the new sub-buffer (0 for
 *	a flush)
 *
 * relay_switch_subbuf() publishes the finished sub-buffer
 * (subbufs_produced++) before it points buf->data at the next one and
 * resets its padding, and relay's read() looks at those fields without
 * any lock against the writer. Two windows lose or repeat data:
 *
 * * A switch that fills the buffer: until the offset is set to
 *   "full" (subbuf_size + 1), relay_file_read_avail() sees
 *   produced - consumed == n_subbufs, takes it for an overwrite-mode wrap
 *   and discards the oldest unread sub-buffer. Here a switch that would
 *   leave fewer than two free sub-buffers is refused instead (the caller
 *   drops the batch), so relay never reaches "full".
 * * A caught-up reader inside the switch sees the next sub-buffer
 *   published but not yet current, and reads it whole with the padding of
 *   its previous lap: stale bytes. Here the next sub-buffer and the one
 *   after it get padding == subbuf_size first: relay's read skips a
 *   sub-buffer that is all padding and finds nothing to read in the one
 *   after it, until relay_switch_subbuf() has reset the padding of the new
 *   current sub-buffer. Both are free (the check above), so no reader is
 *   in them.
 *
 * Both fixes hold only for a reader that is not inside the current
 * sub-buffer: relay's read() still races a switch when it has read the
 * current sub-buffer up to its end (it can take the switch for a wrap and
 * move subbufs_consumed back). Readers that must not lose or repeat a byte
 * read only published sub-buffers: the file's size less what was read
 * (spulse_relay_position(), docs/KERNEL.md "Relay files").
 *
 * The switch runs inside @pos->seq: a reader of subbufs_produced, the
 * paddings and the file's size (which relay_switch_subbuf() raises by the
 * bytes it publishes) sees them all before or all after it. The procfs
 * twin's size is set to the debugfs file's right after relay raised it (a
 * plain store, as relay's own): readers of the twin see the published
 * bytes a moment later, never earlier.
 *
 * Return: true when switched (relay then accepts @len bytes).
 */
static bool spulse_relay_switch(struct rchan_buf *buf, size_t len)
{
	struct spulse_relay_pos *pos = spulse_relay_pos(buf);
	size_t n = buf->chan->n_subbufs;
	size_t produced = buf->subbufs_produced;
	size_t consumed = READ_ONCE(buf->subbufs_consumed);
	struct dentry *twin;
	bool ok;

	if (produced + 2 - consumed >= n)
		return false;
	buf->padding[(produced + 1) % n] = buf->chan->subbuf_size;
	buf->padding[(produced + 2) % n] = buf->chan->subbuf_size;
	WRITE_ONCE(pos->seq, pos->seq + 1);
	smp_wmb();	/* the guards and seq before the new sub-buffer is published */
	ok = relay_switch_subbuf(buf, len) == len;
	twin = READ_ONCE(pos->twin.dentry);
	if (twin)	/* the twin's size is the debugfs file's (as relay sets it) */
		d_inode(twin)->i_size = d_inode(buf->dentry)->i_size;
	smp_wmb();	/* the switch before seq says it is over */
	WRITE_ONCE(pos->seq, pos->seq + 1);
	return ok;
}

/**
 * spulse_relay_position() - how far a relay buffer was published and read
 * @buf: the buffer
 * @published: set to the bytes published so far (the relay file's size,
 *	read outside any switch)
 * @read: set to the bytes readers have consumed so far: @published less
 *	the published bytes still unread, plus what was read of the current
 *	sub-buffer
 *
 * A reader opening the file takes @read as its start, and then reads at
 * most (file size - @read - what it read since): only published
 * sub-buffers, which no switch changes. Reader fields are read racily: the
 * result is exact while nobody reads the file. Retries around a switch in
 * progress (the writer never waits); gives up after about 10 ms, when the
 * writer's CPU is stalled inside a switch.
 *
 * Return: true when both values were read consistently.
 */
bool spulse_relay_position(struct rchan_buf *buf, u64 *published, u64 *read)
{
	struct spulse_relay_pos *pos = spulse_relay_pos(buf);
	size_t n = buf->chan->n_subbufs, sz = buf->chan->subbuf_size;
	unsigned int tries;

	for (tries = 0; tries < 1000; tries++) {
		size_t produced, consumed, bc, i;
		u64 pub, unread = 0;
		u32 seq = READ_ONCE(pos->seq);

		if (seq & 1) {
			usleep_range(10, 20);
			continue;
		}
		smp_rmb();	/* seq before what the switch writes */
		pub = buf->dentry ? i_size_read(d_inode(buf->dentry)) :
				    READ_ONCE(buf->early_bytes);
		produced = READ_ONCE(buf->subbufs_produced);
		consumed = READ_ONCE(buf->subbufs_consumed);
		bc = READ_ONCE(buf->bytes_consumed);
		if (produced - consumed > n)
			consumed = produced - n;
		for (i = consumed; i < produced; i++)
			unread += sz - READ_ONCE(buf->padding[i % n]);
		smp_rmb();	/* what the switch writes before seq again */
		if (READ_ONCE(pos->seq) != seq)
			continue;
		*published = pub;
		*read = pub - unread + bc;
		return true;
	}
	return false;
}

/*
 * Copy a batch: a small one (a sample's, mostly under 64 bytes) a word at a
 * time, where memcpy() (rep movsb where the CPU has ERMS) costs its setup
 * and, under emulation, an instruction per byte; a large one with memcpy().
 * The barrier keeps the compiler from turning the loops into that call.
 */
static __always_inline void spulse_relay_copy(u8 *d, const u8 *s, size_t len)
{
	u64 w;

	if (len > 64) {
		memcpy(d, s, len);
		return;
	}
	for (; len >= 8; len -= 8, d += 8, s += 8) {
		memcpy(&w, s, 8);	/* one unaligned load and store */
		memcpy(d, &w, 8);
		barrier();
	}
	for (; len; len--) {
		*d++ = *s++;
		barrier();
	}
}

/**
 * spulse_relay_put() - append one batch to a relay buffer
 * @buf: the buffer (this CPU's, or the global meta buffer)
 * @data: batch
 * @len: its length (1..subbuf_size)
 *
 * Like __relay_write() but reports a refused write, switches sub-buffers
 * with spulse_relay_switch(), and copies the data before publishing the
 * new offset so that a reader on another CPU never sees
 * reserved-but-unwritten bytes (relay_reserve() advances buf->offset
 * before its caller copies, and relay's read() returns the current
 * sub-buffer up to buf->offset, so relay does not give that guarantee).
 * The caller is the buffer's only writer (the sampler of that CPU with
 * interrupts off, or the meta writer under its mutex); NMI-safe (the
 * sub-buffer switch defers its wake-up to irq_work).
 *
 * Return: true when written.
 */
bool spulse_relay_put(struct rchan_buf *buf, const void *data, size_t len)
{
	size_t off = buf->offset;

	if (unlikely(!spulse_relay_fits(buf, off, len))) {
		if (!spulse_relay_switch(buf, len))
			return false;
		off = 0;
	}
	spulse_relay_copy((u8 *)buf->data + off, data, len);
	spulse_relay_publish(buf, off + len);
	return true;
}

/*
 * Does @buf hold unpublished bytes? Exact for the buffer's writer (or
 * with the writers quiet); for another CPU a racy hint.
 */
static bool spulse_relay_partial(const struct rchan *chan,
				 const struct rchan_buf *buf)
{
	size_t off;

	if (!buf)
		return false;
	off = READ_ONCE(buf->offset);
	return off && off <= chan->subbuf_size;
}

static void spulse_relay_flush_buf(struct rchan *chan, struct rchan_buf *buf)
{
	if (spulse_relay_partial(chan, buf))
		spulse_relay_switch(buf, 0);
}

/**
 * spulse_relay_flush_chan() - publish partially filled sub-buffers
 * @chan: channel
 *
 * Like relay_flush(), but leaves empty sub-buffers alone (relay_flush()
 * would turn each into a whole sub-buffer of padding, and repeated flushes
 * with nobody reading would fill the buffer with nothing), and switches
 * with spulse_relay_switch(): when no sub-buffer is free the partial one
 * stays current (relay's read() returns it anyway). Must not race
 * with writers: callers disable the events (or hold the meta mutex) first.
 */
void spulse_relay_flush_chan(struct rchan *chan)
{
	int cpu;

	if (!chan)
		return;
	for_each_possible_cpu(cpu) {
		spulse_relay_flush_buf(chan, *per_cpu_ptr(chan->buf, cpu));
		if (chan->is_global)
			break;
	}
}

/* what spulse_relay_flush_cpus() hands each CPU */
struct spulse_relay_flush_arg {
	struct rchan *chan;
	int __percpu *busy;
};

static void spulse_relay_flush_here(void *info)
{
	struct spulse_relay_flush_arg *a = info;
	int *busy = this_cpu_ptr(a->busy);

	/* busy here means busy for good (no writer state): nothing written */
	if (*busy)
		return;
	*busy = 1;
	barrier();
	spulse_relay_flush_buf(a->chan, *this_cpu_ptr(a->chan->buf));
	barrier();
	*busy = 0;
}

/* Has @cpu's buffer unpublished bytes? Read racily: a hint for the IPI. */
static bool spulse_relay_has_partial(int cpu, void *info)
{
	struct spulse_relay_flush_arg *a = info;

	return spulse_relay_partial(a->chan, *per_cpu_ptr(a->chan->buf, cpu));
}

/**
 * spulse_relay_flush_cpus() - publish a per-CPU channel's partial sub-buffers
 * @chan: the channel (NULL: nothing)
 * @busy: the writers' per-CPU nesting guard
 *
 * Each online CPU flushes its own buffer in an IPI (interrupts off), so
 * the flush cannot interleave with that CPU's writers, which all run with
 * interrupts off too (the cpu-clock handler, the off-CPU probes, the
 * trigger command). The IPI holds the CPU's @busy flag like a writer, so an
 * NMI sample (cycles) landing meanwhile is dropped and counted as busy
 * instead of writing into the switch. Nothing is paused: a flush costs at
 * most the NMI samples that land inside it. A CPU whose buffer holds no
 * unpublished byte gets no IPI (an idle CPU is not woken by a reader that
 * flushes periodically); its offset is read racily, so a write landing
 * meanwhile waits for the next flush (after stop the writers are quiet,
 * and a flush then sees every offset).
 * Offline CPUs have no writer and are flushed from here.
 */
void spulse_relay_flush_cpus(struct rchan *chan, int __percpu *busy)
{
	struct spulse_relay_flush_arg a = { .chan = chan, .busy = busy };
	int cpu;

	if (!chan)
		return;
	cpus_read_lock();
	on_each_cpu_cond(spulse_relay_has_partial, spulse_relay_flush_here,
			 &a, true);
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			spulse_relay_flush_buf(chan, *per_cpu_ptr(chan->buf, cpu));
	cpus_read_unlock();
}
