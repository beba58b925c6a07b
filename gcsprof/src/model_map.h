/* SPDX-License-Identifier: MIT */
#ifndef GCSPROF_MODEL_MAP_H
#define GCSPROF_MODEL_MAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * The one hash map (model_map.c): keys of three words to a non-zero
 * value. The model's index and the writers that merge things (stacks,
 * threads) use it.
 */
struct gp_map_slot {
	uint64_t hash, a, b, c, value;   /* value 0: empty */
};

struct gp_map {
	struct gp_map_slot *slots;
	size_t cap, count;               /* cap: 0 or a power of two */
};

/* The value of key (A, B, C), 0 if none. */
uint64_t gp_map_get(const struct gp_map *m, uint64_t a, uint64_t b, uint64_t c);
/* Set key (A, B, C) to VALUE (not 0). Returns 0, or -1 for out of memory. */
int gp_map_put(struct gp_map *m, uint64_t a, uint64_t b, uint64_t c, uint64_t value);
void gp_map_free(struct gp_map *m);

/*
 * The one string table: every name in the model, interned once and
 * numbered in order of first use from 0, which is "". TEXT[id] is the
 * string of an id; gp_string_id gives the id of an interned string.
 */
struct gp_strtab {
	char **text;
	size_t n, cap;
	struct gp_map map;               /* text -> id + 1 */
};

/* Intern S (NULL is ""); NULL for out of memory. */
const char *gp_strtab_intern(struct gp_strtab *t, const char *s);
/* The id of INTERNED, which must come from gp_strtab_intern. */
size_t gp_string_id(const char *interned);
void gp_strtab_free(struct gp_strtab *t);

#endif
