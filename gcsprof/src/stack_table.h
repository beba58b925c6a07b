/* SPDX-License-Identifier: MIT */
/*
 * The stack table: every distinct call chain of a profile, stored once, as
 * a prefix tree of frames (docs/profile-format.md, "Stacks"). A node is a
 * frame and the node of its caller's chain: node 0 is the empty chain, and
 * a chain is the id of its innermost frame's node, whose parents lead out
 * to the outermost frame. Chains that share their outer frames (most of a
 * program's, and all of a recursion's) share those nodes.
 *
 * The recorder interns each sample's chain and writes the nodes that are
 * new; the reader of a version-1 file interns the chains it reads, and the
 * reader of version 2 adds the nodes as the file lists them. The model
 * walks a sample's chain from its node, innermost first.
 */
#ifndef GCSPROF_STACK_TABLE_H
#define GCSPROF_STACK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "model_map.h"

/* Frame kinds as written in the file. */
enum gp_frame_kind {
	GP_FRAME_PC = 'P',         /* the program counter */
	GP_FRAME_RETURN = 'R',     /* a return address from the GCS */
	GP_FRAME_SIGRETURN = 'S',  /* return into the signal trampoline */
	GP_FRAME_FALLBACK = 'F',   /* a return address from a fallback unwinder */
};

struct gp_frame {
	uint64_t address;
	char kind;                 /* enum gp_frame_kind */
};

struct gp_stack_node {
	struct gp_frame frame;
	uint32_t parent;           /* the caller's chain; 0: FRAME is the outermost */
	uint32_t depth;            /* frames in the chain that ends here */
};

struct gp_stack_table {
	struct gp_stack_node *nodes;  /* nodes[0] is the empty chain */
	size_t n, cap;
	/* (parent, address, kind) -> node: which frames have a node. */
	struct gp_map children;
	/* (hash of a whole chain, depth, 0) -> its node, the last chain
	 * interned with that hash: a chain seen before is found in one probe
	 * and one comparison, not one probe a frame. */
	struct gp_map chains;
};

/* Make T the table with only the empty chain. 0, or -1 for out of memory. */
int gp_stack_init(struct gp_stack_table *t);
/* The node of the chain FRAMES (N of them, innermost first) into *ID,
 * adding the nodes it lacks at the end of T->nodes (in an order where a
 * parent comes before its children). 0, or -1 for out of memory or a
 * chain deeper than a node can count. */
int gp_stack_intern(struct gp_stack_table *t, const struct gp_frame *frames, size_t n,
		    uint32_t *id);
/* The node of FRAME called from the chain PARENT (a node of T) into *ID,
 * added if new: a chain whose callers' node is known already. 0, or -1
 * for out of memory or a PARENT not in T. */
int gp_stack_intern_under(struct gp_stack_table *t, uint32_t parent, const struct gp_frame *frame,
			  uint32_t *id);
/* Add the node FRAME called from PARENT, as a version-2 file lists it:
 * its id is the next one. 0; -1 when PARENT is not a node yet; -2 for out
 * of memory. */
int gp_stack_add(struct gp_stack_table *t, uint32_t parent, const struct gp_frame *frame);
void gp_stack_free(struct gp_stack_table *t);

#endif
