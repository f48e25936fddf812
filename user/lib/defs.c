// SPDX-License-Identifier: MIT
/*
 * Definition tables shared by every reader: modules (with their active state
 * and per-process active lists), frames, stacks (with depth) and threads,
 * plus the string arena that keeps paths, build-ids and comms stable.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ARENA_BLOCK	65536

struct spulse_arena_block {
	struct spulse_arena_block *next;
	size_t size;
	uint8_t data[];
};

char *spulse_arena_copy(struct spulse_arena *a, const void *p, size_t len)
{
	size_t need = len + 1;
	char *dst;

	if (!a->head || a->cap - a->used < need) {
		size_t size = need > ARENA_BLOCK ? need : ARENA_BLOCK;
		struct spulse_arena_block *b = malloc(sizeof(*b) + size);

		if (!b)
			return NULL;
		b->size = size;
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->cap = size;
		a->bytes += sizeof(*b) + size;
	}
	dst = (char *)a->head->data + a->used;
	a->used += need;
	if (len)
		memcpy(dst, p, len);
	dst[len] = '\0';
	return dst;
}

static void arena_free(struct spulse_arena *a)
{
	while (a->head) {
		struct spulse_arena_block *n = a->head->next;

		free(a->head);
		a->head = n;
	}
	memset(a, 0, sizeof(*a));
}

void spulse_defs_init(struct spulse_defs *d)
{
	memset(d, 0, sizeof(*d));
}

void spulse_defs_fini(struct spulse_defs *d)
{
	free(d->mods);
	free(d->frames);
	free(d->stacks);
	free(d->threads);
	free(d->idents);
	arena_free(&d->arena);
	spulse_u32map_free(&d->pid_active);
	memset(d, 0, sizeof(*d));
}

size_t spulse_defs_bytes(const struct spulse_defs *d)
{
	return (size_t)d->cap_mods * sizeof(*d->mods) +
	       (size_t)d->cap_frames * sizeof(*d->frames) +
	       (size_t)d->cap_stacks * sizeof(*d->stacks) +
	       (size_t)d->cap_threads * sizeof(*d->threads) +
	       (size_t)d->cap_idents * sizeof(*d->idents) +
	       d->arena.bytes + spulse_u32map_bytes(&d->pid_active);
}

/* Grow array *@arr of @size-byte elements so that index @n fits. */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? (size_t)*cap * 2 : 64;
	if (ncap > (size_t)UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap <= n)
		return -ENOMEM;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

int spulse_defs_add_module(struct spulse_defs *d, const struct spulse_mod_def *m)
{
	struct spulse_mod_def *dst;
	uint32_t *head;

	if (grow((void **)&d->mods, &d->cap_mods, d->nmods, sizeof(*d->mods)))
		return -ENOMEM;
	head = spulse_u32map_get(&d->pid_active, m->pid, SPULSE_NONE);
	if (!head)
		return -ENOMEM;
	dst = &d->mods[d->nmods];
	*dst = *m;
	dst->path = spulse_arena_copy(&d->arena, m->path, m->path_len);
	if (!dst->path)
		return -ENOMEM;
	dst->build_id = NULL;
	if (m->build_id_len) {
		dst->build_id = (const uint8_t *)spulse_arena_copy(
			&d->arena, m->build_id, m->build_id_len);
		if (!dst->build_id)
			return -ENOMEM;
	}
	dst->active = true;
	dst->next_same_pid = *head;
	*head = d->nmods;
	d->nmods++;
	return 0;
}

int spulse_defs_add_frame(struct spulse_defs *d, const struct spulse_frame_def *f)
{
	if (grow((void **)&d->frames, &d->cap_frames, d->nframes,
		 sizeof(*d->frames)))
		return -ENOMEM;
	d->frames[d->nframes++] = *f;
	return 0;
}

int spulse_defs_add_stack(struct spulse_defs *d, const struct spulse_stack_def *s)
{
	if (grow((void **)&d->stacks, &d->cap_stacks, d->nstacks,
		 sizeof(*d->stacks)))
		return -ENOMEM;
	d->stacks[d->nstacks++] = *s;
	return 0;
}

int spulse_defs_add_thread(struct spulse_defs *d, const struct spulse_thread_def *t)
{
	struct spulse_thread_def *dst;

	if (grow((void **)&d->threads, &d->cap_threads, d->nthreads,
		 sizeof(*d->threads)))
		return -ENOMEM;
	dst = &d->threads[d->nthreads];
	*dst = *t;
	dst->comm = spulse_arena_copy(&d->arena, t->comm, t->comm_len);
	if (!dst->comm)
		return -ENOMEM;
	dst->source = SPULSE_NONE;
	d->nthreads++;
	return 0;
}

int spulse_defs_add_ident(struct spulse_defs *d, const struct spulse_ident_def *id,
			  const uint32_t lens[4])
{
	struct spulse_ident_def *dst;

	if (grow((void **)&d->idents, &d->cap_idents, d->nidents,
		 sizeof(*d->idents)))
		return -ENOMEM;
	dst = &d->idents[d->nidents];
	*dst = *id;
	dst->host = spulse_arena_copy(&d->arena, id->host, lens[0]);
	dst->machine_id = spulse_arena_copy(&d->arena, id->machine_id, lens[1]);
	dst->boot_id = spulse_arena_copy(&d->arena, id->boot_id, lens[2]);
	dst->kernel = spulse_arena_copy(&d->arena, id->kernel, lens[3]);
	memcpy(dst->lens, lens, sizeof(dst->lens));
	if (!dst->host || !dst->machine_id || !dst->boot_id || !dst->kernel)
		return -ENOMEM;
	d->nidents++;
	return 0;
}

SPULSE_EXPORT uint32_t spulse_defs_identity_count(const struct spulse_defs *d)
{
	return d->nidents;
}

SPULSE_EXPORT int spulse_defs_identity(const struct spulse_defs *d,
				       uint32_t source,
				       struct spulse_identity *out)
{
	const struct spulse_ident_def *s;

	if (source >= d->nidents)
		return -ENOENT;
	s = &d->idents[source];
	out->source = source;
	memcpy(out->recording_id, s->recording_id, sizeof(out->recording_id));
	out->start_us = s->start_us;
	out->host = s->host;
	out->machine_id = s->machine_id;
	out->boot_id = s->boot_id;
	out->kernel = s->kernel;
	out->host_len = s->lens[0];
	out->machine_id_len = s->lens[1];
	out->boot_id_len = s->lens[2];
	out->kernel_len = s->lens[3];
	return 0;
}

SPULSE_EXPORT uint32_t spulse_defs_thread_source(const struct spulse_defs *d,
						 uint32_t thread)
{
	if (thread >= d->nthreads)
		return SPULSE_NONE;
	if (d->threads[thread].source != SPULSE_NONE)
		return d->threads[thread].source;
	return d->nidents ? 0 : SPULSE_NONE;
}

SPULSE_EXPORT void spulse_recording_id_hex(const uint8_t id[16], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[32] = '\0';
}

/*
 * A retired module stays on its process's list until the next process
 * deactivation walks and clears the list, so each module is walked at most
 * once by process deactivations: total work stays linear.
 */
void spulse_defs_retire_module(struct spulse_defs *d, uint32_t id)
{
	d->mods[id].active = false;
}

void spulse_defs_retire_pid(struct spulse_defs *d, uint32_t pid)
{
	uint32_t *head = spulse_u32map_find(&d->pid_active, pid);
	uint32_t id;

	if (!head)
		return;
	for (id = *head; id != SPULSE_NONE; id = d->mods[id].next_same_pid)
		d->mods[id].active = false;
	*head = SPULSE_NONE;
}

void spulse_info_sync_counts(struct spulse_info *info,
			     const struct spulse_defs *d)
{
	info->modules = d->nmods;
	info->frames = d->nframes;
	info->stacks = d->nstacks;
	info->threads = d->nthreads;
	info->identities = d->nidents;
}

/* ---- public accessors ---- */

SPULSE_EXPORT uint32_t spulse_defs_count(const struct spulse_defs *d,
					 enum spulse_tag kind)
{
	switch (kind) {
	case SPULSE_TAG_MODULE:
		return d->nmods;
	case SPULSE_TAG_FRAME:
		return d->nframes;
	case SPULSE_TAG_STACK:
		return d->nstacks;
	case SPULSE_TAG_THREAD:
		return d->nthreads;
	default:
		return 0;
	}
}

SPULSE_EXPORT int spulse_defs_module(const struct spulse_defs *d, uint32_t id,
				     struct spulse_module *out)
{
	const struct spulse_mod_def *m;

	if (id >= d->nmods)
		return -ENOENT;
	m = &d->mods[id];
	out->id = id;
	out->pid = m->pid;
	out->start = m->start;
	out->end = m->end;
	out->file_offset = m->file_offset;
	out->path = m->path;
	out->path_len = m->path_len;
	out->build_id = m->build_id;
	out->build_id_len = m->build_id_len;
	out->active = m->active;
	return 0;
}

SPULSE_EXPORT int spulse_defs_frame(const struct spulse_defs *d, uint32_t id,
				    struct spulse_frame *out)
{
	const struct spulse_frame_def *f;

	if (id >= d->nframes)
		return -ENOENT;
	f = &d->frames[id];
	out->id = id;
	out->kind = f->kind;
	out->module = f->module;
	out->addr = f->addr;
	return 0;
}

SPULSE_EXPORT int spulse_defs_stack(const struct spulse_defs *d, uint32_t id,
				    struct spulse_stack *out)
{
	const struct spulse_stack_def *s;

	if (id >= d->nstacks)
		return -ENOENT;
	s = &d->stacks[id];
	out->id = id;
	out->parent = s->parent;
	out->frame = s->frame;
	out->depth = s->depth;
	return 0;
}

SPULSE_EXPORT int spulse_defs_thread(const struct spulse_defs *d, uint32_t id,
				     struct spulse_thread *out)
{
	const struct spulse_thread_def *t;

	if (id >= d->nthreads)
		return -ENOENT;
	t = &d->threads[id];
	out->id = id;
	out->pid = t->pid;
	out->tid = t->tid;
	out->comm = t->comm;
	out->comm_len = t->comm_len;
	return 0;
}

SPULSE_EXPORT int spulse_defs_frame_address(const struct spulse_defs *d,
					    uint32_t frame, uint64_t *addr)
{
	const struct spulse_frame_def *f;
	const struct spulse_mod_def *m;

	if (frame >= d->nframes)
		return -ENOENT;
	f = &d->frames[frame];
	switch (f->kind) {
	case SPULSE_FRAME_USER:
	case SPULSE_FRAME_KERNEL:
		*addr = f->addr;
		return 0;
	case SPULSE_FRAME_MODULE:
		/* validated on definition: file_offset <= rel < file_offset + size */
		m = &d->mods[f->module];
		*addr = m->start + (f->addr - m->file_offset);
		return 0;
	default:
		return -ENOENT;
	}
}
