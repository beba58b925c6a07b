// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: a leaf's caller (perf.h). Where a function
 * pushes its own return address in its prologue (riscv64's sspush ra,
 * -fcf-protection=return), a leaf (or code built without it, or a
 * prologue before its push) has its caller only in the link register, and
 * the kernel's chain from the shadow stack lacks it. Each sample carries
 * that register (perf_user_regs()); the CFI of the PC's function says
 * whether it still holds the caller (gcswalk_symbolizer_leaf_caller(), the
 * rule libgcswalk's own walks follow for the ptrace method), read through
 * a target of the process's mappings as its MMAP2 records made them, made
 * again when they change. arm64 needs none of this: its calls push.
 */
#include <stdlib.h>

#include "gcsprof.h"
#include "perf.h"

void perf_leaf_free(struct perf_process *p)
{
	gcswalk_symbolizer_free(p->leaf_sym);
	gcswalk_target_close(p->leaf_target);
	p->leaf_sym = NULL;
	p->leaf_target = NULL;
	p->leaf_made = 0;
}

/* P's file mappings as a libgcswalk target, and its symboliser (the
 * files by the paths the kernel named); NULL if that fails, until the
 * mappings change. */
static gcswalk_symbolizer *leaf_symbolizer(struct perf_process *p)
{
	const struct rec_map *map = &p->base.map;
	struct gcswalk_mapping *m;
	size_t i, n = 0;

	if (p->leaf_made && p->leaf_generation == map->generation)
		return p->leaf_sym;
	perf_leaf_free(p);
	p->leaf_made = 1;
	p->leaf_generation = map->generation;
	m = calloc(map->n ? map->n : 1, sizeof(*m));
	if (!m)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (map->m[i].path[0] == '/')
			m[n++] = (struct gcswalk_mapping){ map->m[i].start, map->m[i].end,
							   map->m[i].offset, map->m[i].path };
	if (gcswalk_target_open_mappings(&p->leaf_target, p->base.pid, m, n, NULL) == GCSWALK_OK &&
	    gcswalk_symbolizer_new(&p->leaf_sym, p->leaf_target, NULL) != GCSWALK_OK)
		p->leaf_sym = NULL;
	free(m);
	return p->leaf_sym;
}

int perf_leaf_caller(struct perf_process *p, const struct perf_sample *s, const uint64_t *user,
		     size_t n)
{
	gcswalk_symbolizer *sym;

	/* Not sampled (arm64), no shadow stack, or already the chain's. */
	if (perf_user_regs()->lr < 0 || s->abi == PERF_SAMPLE_REGS_ABI_NONE || !s->ssp ||
	    !s->lr || !n || (n > 1 && user[1] == s->lr))
		return 0;
	sym = leaf_symbolizer(p);
	return sym && gcswalk_symbolizer_leaf_caller(sym, user[0], s->lr) == 1;
}
