// SPDX-License-Identifier: MIT
/*
 * The stack table (stack_table.h): a prefix tree of frames. Interning a
 * chain hashes it whole first: a chain seen before (the usual case: a
 * profile repeats its chains) costs one pass over its frames to hash and
 * one to compare, with no probe per frame. Only a chain not seen before
 * walks the tree from its outermost frame, adding the nodes it lacks.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "stack_table.h"

/* Depths and ids are 32 bits in a node. */
#define MAX_NODES UINT32_MAX

int gp_stack_init(struct gp_stack_table *t)
{
	memset(t, 0, sizeof(*t));
	t->nodes = calloc(1, sizeof(*t->nodes));
	if (!t->nodes)
		return -1;
	t->n = t->cap = 1;
	return 0;
}

static uint64_t chain_hash(const struct gp_frame *frames, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= frames[i].address + (uint64_t)(unsigned char)frames[i].kind;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return h | 1;    /* never 0: a map key part may be anything, but keep it apart */
}

/* Is node ID the chain FRAMES (N, innermost first)? */
static int same_chain(const struct gp_stack_table *t, uint32_t id, const struct gp_frame *frames,
		      size_t n)
{
	size_t i;

	if (id >= t->n || t->nodes[id].depth != n)
		return 0;
	for (i = 0; i < n; i++, id = t->nodes[id].parent) {
		const struct gp_frame *f = &t->nodes[id].frame;

		if (f->address != frames[i].address || f->kind != frames[i].kind)
			return 0;
	}
	return 1;
}

/* Node FRAME under PARENT: the one there is, or a new one. 0 for out of
 * memory. */
static uint32_t child(struct gp_stack_table *t, uint32_t parent, const struct gp_frame *frame)
{
	uint64_t id = gp_map_get(&t->children, parent, frame->address,
				 (uint64_t)(unsigned char)frame->kind);

	if (id)
		return (uint32_t)id;
	if (gp_stack_add(t, parent, frame) != 0)
		return 0;
	id = t->n - 1;
	if (gp_map_put(&t->children, parent, frame->address, (uint64_t)(unsigned char)frame->kind,
		       id) != 0) {
		t->n--;
		return 0;
	}
	return (uint32_t)id;
}

int gp_stack_intern(struct gp_stack_table *t, const struct gp_frame *frames, size_t n,
		    uint32_t *id)
{
	uint64_t h, known;
	uint32_t node = 0;
	size_t i;

	*id = 0;
	if (n == 0)
		return 0;
	if (n >= MAX_NODES)
		return -1;
	h = chain_hash(frames, n);
	known = gp_map_get(&t->chains, h, n, 0);
	if (known && same_chain(t, (uint32_t)known, frames, n)) {
		*id = (uint32_t)known;
		return 0;
	}
	for (i = n; i-- > 0;) {
		node = child(t, node, &frames[i]);
		if (!node)
			return -1;
	}
	if (gp_map_put(&t->chains, h, n, 0, node) != 0)
		return -1;
	*id = node;
	return 0;
}

int gp_stack_intern_under(struct gp_stack_table *t, uint32_t parent, const struct gp_frame *frame,
			  uint32_t *id)
{
	*id = parent < t->n ? child(t, parent, frame) : 0;
	return *id ? 0 : -1;
}

int gp_stack_add(struct gp_stack_table *t, uint32_t parent, const struct gp_frame *frame)
{
	struct gp_stack_node *n;

	if (parent >= t->n)
		return -1;
	if (t->n >= MAX_NODES)
		return -2;
	n = gp_grow(t->nodes, &t->cap, t->n + 1, sizeof(*n));
	if (!n)
		return -2;
	t->nodes = n;
	n[t->n] = (struct gp_stack_node){ *frame, parent, n[parent].depth + 1 };
	t->n++;
	return 0;
}

void gp_stack_free(struct gp_stack_table *t)
{
	free(t->nodes);
	gp_map_free(&t->children);
	gp_map_free(&t->chains);
	memset(t, 0, sizeof(*t));
}
