// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables and per-process map sets: the debugfs file spulse/unwind
 * that receives the messages of include/spulse/unwind.h, their validation
 * (a malformed message is refused whole), the memory bound (unwind_mem_kb),
 * RCU publication for the lock-free readers (the sampler in hardirq/NMI,
 * the off-CPU probes) and release (DEL, process exit/exec, rmmod).
 *
 * Writers serialize on reg->lock. Readers find a process's map set with
 * spulse_ut_pset_find() in an RCU read-side section (legal in NMI; the
 * capture's is rcu_read_lock_sched(), a preempt-disabled section, which
 * synchronize_rcu() and kfree_rcu() have waited for since the RCU
 * flavours were merged in 4.20) and keep it, and the tables it names,
 * until the section ends: a replaced or removed map set is freed with
 * kfree_rcu(), a deleted table after synchronize_rcu(), once no map set
 * names it any more. A published map
 * set is never changed (a MAP or DEL publishes a new one, with a new
 * serial), so a reader may remember lookups in it by (pointer, serial)
 * from one walk to the next (struct spulse_ut_memo): it uses them only
 * while it holds that same set again, and with it the tables it names.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/threads.h>
#include <linux/uaccess.h>

#include "spulse.h"
#include "procfs.h"
#include "unwind.h"
#include "kunit_export.h"

#define SPULSE_UT_HDR		sizeof(struct spulse_ut_msg)
#define SPULSE_UT_ADD_HDR	(SPULSE_UT_HDR + sizeof(struct spulse_ut_add))
#define SPULSE_UT_MAP_HDR	(SPULSE_UT_HDR + sizeof(struct spulse_ut_mapset))
#define SPULSE_UT_MSG_MAX	(SPULSE_UT_ADD_HDR + (size_t)SPULSE_UT_ROWS_MAX * \
				 sizeof(struct spulse_ut_row))

struct spulse_ut_reg spulse_ut;

/* serials of map sets, over every registry (KUnit makes several) */
static atomic64_t spulse_ut_serial = ATOMIC64_INIT(0);

/**
 * spulse_ut_serial_next() - a map set serial never given before
 *
 * Return: a non-zero value (64 bits: no wrap in practice).
 */
u64 spulse_ut_serial_next(void)
{
	return atomic64_inc_return(&spulse_ut_serial);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_serial_next);

static bool spulse_ut_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

/*
 * Kinds whose bp_off must be 0 (NONE, CFA_DEREF_BP, SIGNAL, END, UNKNOWN)
 * and whose cfa_off must be 0 (NONE, SIGNAL, END, UNKNOWN), as bit masks
 * by kind.
 */
#define SPULSE_UT_ZERO_BP	(BIT(SPULSE_UT_NONE) | BIT(SPULSE_UT_CFA_DEREF_BP) | \
				 BIT(SPULSE_UT_SIGNAL) | BIT(SPULSE_UT_END) | \
				 BIT(SPULSE_UT_UNKNOWN))
#define SPULSE_UT_ZERO_CFA	(BIT(SPULSE_UT_NONE) | BIT(SPULSE_UT_SIGNAL) | \
				 BIT(SPULSE_UT_END) | BIT(SPULSE_UT_UNKNOWN))
static_assert(SPULSE_UT_KIND_MAX < 32);

/*
 * Whether a row breaks a per-row rule (kind, flags, bp_off, the offsets
 * of the kinds without any), in few instructions: ADD checks every row
 * of tables of up to SPULSE_UT_ROWS_MAX rows.
 */
static __always_inline bool spulse_ut_row_bad(const struct spulse_ut_row *r)
{
	u32 kind = r->kind;

	if (kind > SPULSE_UT_KIND_MAX || r->flags)
		return true;
	/*
	 * bp_off 0, -8, ..., -2048: -bp_off a multiple of 8 up to 2048, so
	 * rotated right by 3 it is at most 256 (set low bits land on top)
	 */
	if (ror32(-(s32)r->bp_off, 3) > 2048 >> 3)
		return true;
	if (!((SPULSE_UT_ZERO_BP | SPULSE_UT_ZERO_CFA) & BIT(kind)) ||
	    (!r->bp_off && !r->cfa_off))
		return false;
	return ((SPULSE_UT_ZERO_BP & BIT(kind)) && r->bp_off) ||
	       ((SPULSE_UT_ZERO_CFA & BIT(kind)) && r->cfa_off);
}

/**
 * spulse_ut_check_rows() - validate an ADD body
 * @a: the table header
 * @rows: its @a->n_rows rows
 *
 * Rules: table id non-zero; 1..SPULSE_UT_ROWS_MAX rows; @a->lo < @a->hi
 * and @a->hi - @a->lo < 2^32; build-id length <= SPULSE_UT_BUILD_ID_MAX;
 * reserved bytes zero. Per row: kind <= SPULSE_UT_KIND_MAX, flags 0,
 * bp_off 0 or a negative multiple of 8 >= -2048 (0 for CFA_DEREF_BP,
 * whose caller's BP is *(BP)), cfa_off and bp_off 0 for NONE, SIGNAL, END
 * and UNKNOWN (docs/UNWIND.md), the first start 0, starts strictly
 * increasing and below @a->hi - @a->lo. (For the CFA kinds cfa_off is not
 * restricted: every step checks the CFA it yields.) A refused table is
 * refused whole, whichever rule it breaks first.
 *
 * Return: 0 or -EINVAL.
 */
int spulse_ut_check_rows(const struct spulse_ut_add *a,
			 const struct spulse_ut_row *rows)
{
	u32 i, n = a->n_rows;

	if (!a->table_id || !n || n > SPULSE_UT_ROWS_MAX ||
	    a->lo >= a->hi || a->hi - a->lo > U32_MAX ||
	    a->build_id_len > SPULSE_UT_BUILD_ID_MAX ||
	    !spulse_ut_zero(a->rsvd, sizeof(a->rsvd)))
		return -EINVAL;
	/*
	 * Starts strictly increasing from 0: then the last one below the
	 * span puts every one below it.
	 */
	if (rows[0].start || rows[n - 1].start >= a->hi - a->lo)
		return -EINVAL;
	if (spulse_ut_row_bad(&rows[0]))
		return -EINVAL;
	for (i = 1; i < n; i++)
		if (spulse_ut_row_bad(&rows[i]) ||
		    rows[i].start <= rows[i - 1].start)
			return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_check_rows);

/**
 * spulse_ut_check_maps() - validate a MAP body (tables are checked later)
 * @ms: the map set header
 * @m: its @ms->n entries
 *
 * Rules: pid 1..PID_MAX_LIMIT; reserved fields zero; per entry start <
 * end <= TASK_SIZE_MAX, a non-zero table id, sorted by start and not
 * overlapping. The count bound is checked by the caller (-E2BIG).
 *
 * Return: 0 or -EINVAL.
 */
int spulse_ut_check_maps(const struct spulse_ut_mapset *ms,
			 const struct spulse_ut_map *m)
{
	u32 i;

	if (!ms->pid || ms->pid > PID_MAX_LIMIT || ms->rsvd)
		return -EINVAL;
	for (i = 0; i < ms->n; i++) {
		if (m[i].start >= m[i].end || m[i].end > TASK_SIZE_MAX ||
		    !m[i].table_id || m[i].rsvd)
			return -EINVAL;
		if (i && m[i].start < m[i - 1].end)
			return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_check_maps);

static struct hlist_head *spulse_ut_bucket(struct spulse_ut_reg *reg, u32 pid)
{
	return &reg->procs[hash_32(pid, SPULSE_UT_HASH_SHIFT)];
}

/**
 * spulse_ut_pset_find() - a live process's map set (reader side)
 * @reg: registry
 * @pid: tgid
 *
 * Call under rcu_read_lock() or rcu_read_lock_sched() (any context, NMI
 * included); the set and its tables stay valid until the section ends.
 *
 * Return: the map set, or NULL (none, or the process was retired).
 */
const struct spulse_ut_pset *spulse_ut_pset_find(struct spulse_ut_reg *reg,
						 u32 pid)
{
	struct spulse_ut_pset *ps;

	hlist_for_each_entry_rcu(ps, spulse_ut_bucket(reg, pid), node)
		if (ps->pid == pid)
			return READ_ONCE(ps->dead) ? NULL : ps;
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_pset_find);

/* Writer side (reg->lock held): the published set of @pid, dead or not. */
static struct spulse_ut_pset *spulse_ut_pset_get(struct spulse_ut_reg *reg,
						 u32 pid)
{
	struct spulse_ut_pset *ps;

	hlist_for_each_entry(ps, spulse_ut_bucket(reg, pid), node)
		if (ps->pid == pid)
			return ps;
	return NULL;
}

static void spulse_ut_pset_unpublish(struct spulse_ut_reg *reg,
				     struct spulse_ut_pset *ps)
{
	hlist_del_rcu(&ps->node);
	reg->bytes -= ps->bytes;
	reg->nmaps -= ps->n;
	WRITE_ONCE(reg->nprocs, reg->nprocs - 1);
	kfree_rcu(ps, rcu);
}

static struct spulse_ut_tab *spulse_ut_tab_get(struct spulse_ut_reg *reg,
					       u32 id)
{
	return xa_load(&reg->tab_ids, id);
}

/* Map sets published in @pid's bucket (writer side). */
static u32 spulse_ut_bucket_len(struct spulse_ut_reg *reg, u32 pid)
{
	struct spulse_ut_pset *ps;
	u32 n = 0;

	hlist_for_each_entry(ps, spulse_ut_bucket(reg, pid), node)
		n++;
	return n;
}

static ssize_t spulse_ut_refuse(struct spulse_ut_reg *reg, ssize_t r)
{
	if (r == -EINVAL || r == -E2BIG)
		reg->refused_invalid++;
	else if (r == -ENOSPC || r == -ENOMEM)
		reg->refused_nomem++;
	else
		reg->refused_other++;
	return r;
}

/* ADD: @msg becomes the table's storage on success. */
static ssize_t spulse_ut_add(struct spulse_ut_reg *reg, void *msg, size_t len)
{
	const struct spulse_ut_add *a = msg + SPULSE_UT_HDR;
	const struct spulse_ut_row *rows = msg + SPULSE_UT_ADD_HDR;
	struct spulse_ut_tab *t;
	size_t need;
	u32 ilen;
	u8 shift;

	if (len < SPULSE_UT_ADD_HDR || a->n_rows > SPULSE_UT_ROWS_MAX ||
	    len != SPULSE_UT_ADD_HDR + (size_t)a->n_rows * sizeof(*rows) ||
	    spulse_ut_check_rows(a, rows))
		return -EINVAL;
	if (spulse_ut_tab_get(reg, a->table_id))
		return -EEXIST;
	ilen = spulse_ut_index_len(a->hi - a->lo, a->n_rows, &shift);
	need = sizeof(*t) + len + (size_t)ilen * sizeof(u32);
	if (reg->bytes + need > reg->limit)
		return -ENOSPC;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->idx = kvmalloc_array(ilen, sizeof(u32), GFP_KERNEL);
	if (!t->idx || xa_insert(&reg->tab_ids, a->table_id, t, GFP_KERNEL)) {
		kvfree(t->idx);
		kfree(t);
		return -ENOMEM;
	}
	spulse_ut_index_fill(rows, a->n_rows, shift, t->idx, ilen);
	t->idx_len = ilen;
	t->shift = shift;
	t->id = a->table_id;
	t->n_rows = a->n_rows;
	t->lo = a->lo;
	t->hi = a->hi;
	t->rows = rows;
	t->msg = msg;
	t->bytes = need;
	t->build_id_len = a->build_id_len;
	memcpy(t->build_id, a->build_id, a->build_id_len);
	list_add_tail(&t->node, &reg->tables);
	reg->bytes += need;
	reg->ntables++;
	reg->rows += t->n_rows;
	return len;
}

/* A copy of @ps without the entries naming @t, or NULL (none left). */
static struct spulse_ut_pset *spulse_ut_pset_without(const struct spulse_ut_pset *ps,
						     const struct spulse_ut_tab *t)
{
	struct spulse_ut_pset *np;
	u32 i, n = 0;

	for (i = 0; i < ps->n; i++)
		n += ps->map[i].tab != t;
	if (!n)
		return NULL;
	np = kzalloc(struct_size(np, map, n), GFP_KERNEL);
	if (!np)
		return NULL;
	np->pid = ps->pid;
	np->serial = spulse_ut_serial_next();
	np->dead = ps->dead;
	np->bytes = struct_size(np, map, n);
	for (i = 0; i < ps->n; i++)
		if (ps->map[i].tab != t)
			np->map[np->n++] = ps->map[i];
	return np;
}

/* DEL: drop the table from every map set, then free it after readers. */
static ssize_t spulse_ut_del(struct spulse_ut_reg *reg, const void *msg,
			     size_t len, struct spulse_ut_tab **gone)
{
	const struct spulse_ut_del *d = msg + SPULSE_UT_HDR;
	struct spulse_ut_pset *ps, *np;
	struct hlist_node *tmp;
	struct spulse_ut_tab *t;
	u32 b, i;

	if (len != SPULSE_UT_HDR + sizeof(*d) || !d->table_id || d->rsvd)
		return -EINVAL;
	t = spulse_ut_tab_get(reg, d->table_id);
	if (!t)
		return -ENOENT;
	for (b = 0; b < ARRAY_SIZE(reg->procs); b++) {
		hlist_for_each_entry_safe(ps, tmp, &reg->procs[b], node) {
			for (i = 0; i < ps->n && ps->map[i].tab != t; i++)
				;
			if (i == ps->n)
				continue;
			/* no memory for the copy: the process loses all */
			np = spulse_ut_pset_without(ps, t);
			if (np) {
				reg->bytes += np->bytes;
				reg->nmaps += np->n;
				WRITE_ONCE(reg->nprocs, reg->nprocs + 1);
				hlist_add_before_rcu(&np->node, &ps->node);
			}
			spulse_ut_pset_unpublish(reg, ps);
		}
	}
	list_del(&t->node);
	xa_erase(&reg->tab_ids, t->id);
	reg->bytes -= t->bytes;
	reg->ntables--;
	reg->rows -= t->n_rows;
	*gone = t;
	return len;
}

/* MAP: replace (or, with n = 0, remove) one process's map set. */
static ssize_t spulse_ut_map(struct spulse_ut_reg *reg, const void *msg,
			     size_t len)
{
	const struct spulse_ut_mapset *ms = msg + SPULSE_UT_HDR;
	const struct spulse_ut_map *m = msg + SPULSE_UT_MAP_HDR;
	struct spulse_ut_pset *old, *np;
	size_t sz;
	u32 i;

	if (len < SPULSE_UT_MAP_HDR)
		return -EINVAL;
	if (ms->n > SPULSE_UT_MAPS_MAX)
		return -E2BIG;
	if (len != SPULSE_UT_MAP_HDR + (size_t)ms->n * sizeof(*m) ||
	    spulse_ut_check_maps(ms, m))
		return -EINVAL;
	for (i = 0; i < ms->n; i++)
		if (!spulse_ut_tab_get(reg, m[i].table_id))
			return -ENOENT;
	old = spulse_ut_pset_get(reg, ms->pid);
	if (!ms->n) {
		if (old)
			spulse_ut_pset_unpublish(reg, old);
		return len;
	}
	sz = struct_size(np, map, ms->n);
	if (reg->bytes - (old ? old->bytes : 0) + sz > reg->limit)
		return -ENOSPC;
	if (!old && spulse_ut_bucket_len(reg, ms->pid) >= SPULSE_UT_BUCKET_MAX)
		return -ENOSPC;
	np = kzalloc(sz, GFP_KERNEL);
	if (!np)
		return -ENOMEM;
	np->pid = ms->pid;
	np->serial = spulse_ut_serial_next();
	np->n = ms->n;
	np->bytes = sz;
	for (i = 0; i < ms->n; i++)
		np->map[i] = (struct spulse_ut_ment){
			.start = m[i].start,
			.end = m[i].end,
			.bias = m[i].bias,
			.tab = spulse_ut_tab_get(reg, m[i].table_id),
		};
	reg->bytes += sz;
	reg->nmaps += np->n;
	WRITE_ONCE(reg->nprocs, reg->nprocs + 1);
	if (old) {
		hlist_add_before_rcu(&np->node, &old->node);
		spulse_ut_pset_unpublish(reg, old);
	} else {
		hlist_add_head_rcu(&np->node, spulse_ut_bucket(reg, ms->pid));
	}
	return len;
}

static void spulse_ut_tab_free(struct spulse_ut_tab *t)
{
	kvfree(t->idx);
	kvfree(t->msg);
	kfree(t);
}

/**
 * spulse_ut_apply() - validate and apply one message
 * @reg: registry
 * @msg: the whole message, kvmalloc'd; ownership passes to this call (an
 *	ADD keeps it as the table's storage, anything else frees it)
 * @len: its length
 *
 * Process context (takes @reg->lock; DEL waits for an RCU grace period).
 * A refused message changes nothing and is counted.
 *
 * Return: @len, or -EINVAL (malformed), -E2BIG (too many mappings),
 * -ENOSPC (memory bound), -ENOMEM, -EEXIST (ADD of a loaded id), -ENOENT
 * (DEL or MAP of a table that is not loaded).
 */
ssize_t spulse_ut_apply(struct spulse_ut_reg *reg, void *msg, size_t len)
{
	const struct spulse_ut_msg *h = msg;
	struct spulse_ut_tab *gone = NULL;
	ssize_t r = -EINVAL;

	mutex_lock(&reg->lock);
	if (len < SPULSE_UT_HDR || len > SPULSE_UT_MSG_MAX ||
	    h->magic != SPULSE_UT_MAGIC || h->version != SPULSE_UT_VERSION ||
	    h->len != len || h->rsvd)
		goto out;
	switch (h->op) {
	case SPULSE_UT_OP_ADD:
		r = spulse_ut_add(reg, msg, len);
		if (r >= 0) {
			mutex_unlock(&reg->lock);
			return r;	/* msg is the table now */
		}
		break;
	case SPULSE_UT_OP_DEL:
		r = spulse_ut_del(reg, msg, len, &gone);
		break;
	case SPULSE_UT_OP_MAP:
		r = spulse_ut_map(reg, msg, len);
		break;
	}
out:
	if (r < 0)
		spulse_ut_refuse(reg, r);
	mutex_unlock(&reg->lock);
	kvfree(msg);
	if (gone) {
		synchronize_rcu();
		spulse_ut_tab_free(gone);
	}
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_apply);

/**
 * spulse_ut_forget() - unpublish a process's map set (process context)
 * @reg: registry
 * @pid: tgid
 */
void spulse_ut_forget(struct spulse_ut_reg *reg, u32 pid)
{
	struct spulse_ut_pset *ps;

	mutex_lock(&reg->lock);
	ps = spulse_ut_pset_get(reg, pid);
	if (ps)
		spulse_ut_pset_unpublish(reg, ps);
	mutex_unlock(&reg->lock);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_forget);

/**
 * spulse_ut_mark_dead() - retire a process's map set from atomic context
 * @reg: registry
 * @pid: tgid that exited or exec'd
 *
 * Any context but NMI (the exec/exit tracepoint probes): readers stop
 * using the set at once, the reap work unpublishes and frees it.
 */
void spulse_ut_mark_dead(struct spulse_ut_reg *reg, u32 pid)
{
	const struct spulse_ut_pset *ps;
	bool hit = false;

	if (!READ_ONCE(reg->nprocs))
		return;
	rcu_read_lock();
	ps = spulse_ut_pset_find(reg, pid);
	if (ps) {
		WRITE_ONCE(((struct spulse_ut_pset *)ps)->dead, true);
		hit = true;
	}
	rcu_read_unlock();
	if (hit)
		schedule_work(&reg->reap);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_mark_dead);

/**
 * spulse_ut_reap() - unpublish every map set marked dead
 * @reg: registry
 */
void spulse_ut_reap(struct spulse_ut_reg *reg)
{
	struct spulse_ut_pset *ps;
	struct hlist_node *tmp;
	u32 b;

	mutex_lock(&reg->lock);
	for (b = 0; b < ARRAY_SIZE(reg->procs); b++)
		hlist_for_each_entry_safe(ps, tmp, &reg->procs[b], node)
			if (READ_ONCE(ps->dead))
				spulse_ut_pset_unpublish(reg, ps);
	mutex_unlock(&reg->lock);
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_reap);

static void spulse_ut_reap_fn(struct work_struct *w)
{
	spulse_ut_reap(container_of(w, struct spulse_ut_reg, reap));
}

/**
 * spulse_ut_reg_init() - an empty registry
 * @reg: registry
 * @limit: memory bound in bytes
 */
void spulse_ut_reg_init(struct spulse_ut_reg *reg, u64 limit)
{
	u32 b;

	memset(reg, 0, sizeof(*reg));
	mutex_init(&reg->lock);
	INIT_LIST_HEAD(&reg->tables);
	xa_init(&reg->tab_ids);
	for (b = 0; b < ARRAY_SIZE(reg->procs); b++)
		INIT_HLIST_HEAD(&reg->procs[b]);
	INIT_WORK(&reg->reap, spulse_ut_reap_fn);
	reg->limit = limit;
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_reg_init);

/**
 * spulse_ut_reg_free() - unpublish and free everything
 * @reg: registry (no writer may run; readers may, until this returns)
 *
 * Waits for readers (synchronize_rcu()) and for pending kfree_rcu()
 * callbacks (rcu_barrier()).
 */
void spulse_ut_reg_free(struct spulse_ut_reg *reg)
{
	struct spulse_ut_tab *t, *tt;
	struct spulse_ut_pset *ps;
	struct hlist_node *tmp;
	LIST_HEAD(gone);
	u32 b;

	cancel_work_sync(&reg->reap);
	mutex_lock(&reg->lock);
	for (b = 0; b < ARRAY_SIZE(reg->procs); b++)
		hlist_for_each_entry_safe(ps, tmp, &reg->procs[b], node)
			spulse_ut_pset_unpublish(reg, ps);
	list_splice_init(&reg->tables, &gone);
	xa_destroy(&reg->tab_ids);
	reg->bytes = 0;
	reg->ntables = 0;
	reg->rows = 0;
	mutex_unlock(&reg->lock);
	synchronize_rcu();
	list_for_each_entry_safe(t, tt, &gone, node)
		spulse_ut_tab_free(t);
	rcu_barrier();
}
EXPORT_SYMBOL_IF_KUNIT(spulse_ut_reg_free);

static ssize_t spulse_ut_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *pos)
{
	struct spulse_ut_reg *reg = &spulse_ut;
	struct spulse_ut_msg h;
	ssize_t r;
	void *msg;

	if (len < sizeof(h) || len > SPULSE_UT_MSG_MAX) {
		r = -EINVAL;
		goto refuse;
	}
	if (copy_from_user(&h, ubuf, sizeof(h)))
		return -EFAULT;
	/* refuse what cannot be valid or cannot fit before allocating */
	if (h.op != SPULSE_UT_OP_ADD &&
	    len > SPULSE_UT_MAP_HDR + SPULSE_UT_MAPS_MAX *
			sizeof(struct spulse_ut_map)) {
		r = h.op == SPULSE_UT_OP_MAP ? -E2BIG : -EINVAL;
		goto refuse;
	}
	if (h.magic == SPULSE_UT_MAGIC && h.op == SPULSE_UT_OP_ADD &&
	    len > READ_ONCE(reg->limit) - min(READ_ONCE(reg->bytes),
					      READ_ONCE(reg->limit))) {
		r = -ENOSPC;
		goto refuse;
	}
	msg = kvmalloc(len, GFP_KERNEL | __GFP_NOWARN);
	if (!msg) {
		r = -ENOMEM;
		goto refuse;
	}
	if (copy_from_user(msg, ubuf, len)) {
		kvfree(msg);
		return -EFAULT;
	}
	return spulse_ut_apply(reg, msg, len);
refuse:
	mutex_lock(&reg->lock);
	spulse_ut_refuse(reg, r);
	mutex_unlock(&reg->lock);
	return r;
}

static int spulse_ut_show(struct seq_file *m, void *v)
{
	struct spulse_ut_reg *reg = &spulse_ut;
	struct spulse_ut_tab *t;

	mutex_lock(&reg->lock);
	seq_printf(m, "mode %s\n", spulse_unwind_name(spulse.p.unwind));
	seq_printf(m, "tables %u\n", reg->ntables);
	seq_printf(m, "rows %llu\n", reg->rows);
	seq_printf(m, "bytes %llu\n", reg->bytes);
	seq_printf(m, "limit %llu\n", reg->limit);
	seq_printf(m, "processes %u\n", reg->nprocs);
	seq_printf(m, "maps %u\n", reg->nmaps);
	seq_printf(m, "refused_invalid %llu\n", reg->refused_invalid);
	seq_printf(m, "refused_nomem %llu\n", reg->refused_nomem);
	seq_printf(m, "refused_other %llu\n", reg->refused_other);
	list_for_each_entry(t, &reg->tables, node)
		seq_printf(m, "table %u rows %u range %#llx-%#llx build_id %*phN\n",
			   t->id, t->n_rows, t->lo, t->hi, t->build_id_len,
			   t->build_id);
	mutex_unlock(&reg->lock);
	return 0;
}

static int spulse_ut_open(struct inode *inode, struct file *f)
{
	return single_open(f, spulse_ut_show, NULL);
}

static const struct file_operations spulse_ut_fops = {
	.owner = THIS_MODULE,
	.open = spulse_ut_open,
	.read = seq_read,
	.write = spulse_ut_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* the twin /proc/spulse/unwind (procfs.c): the same handlers */
static const struct proc_ops spulse_ut_pops = {
	.proc_open = spulse_ut_open,
	.proc_read = seq_read,
	.proc_write = spulse_ut_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/**
 * spulse_unwind_init() - the module's registry, debugfs spulse/unwind and
 *	its twin /proc/spulse/unwind
 *
 * Return: 0 or the procfs error.
 */
int spulse_unwind_init(void)
{
	spulse_ut_reg_init(&spulse_ut, (u64)spulse.p.unwind_mem_kb << 10);
	debugfs_create_file("unwind", 0600, spulse.dir, NULL, &spulse_ut_fops);
	return spulse_procfs_file("unwind", 0600, &spulse_ut_pops);
}

/**
 * spulse_unwind_exit() - free every table and map set
 *
 * Called after the sampler, the off-CPU probes and the exec/exit probes are
 * gone (and the debugfs file, which pins the module while open, and the
 * procfs twin, whose removal waited for its calls in flight).
 */
void spulse_unwind_exit(void)
{
	if (spulse_ut.limit)
		spulse_ut_reg_free(&spulse_ut);
}
