/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: a process's code map, as the method sampling it knows
 * it (the perf method from the kernel's MMAP2 records, the ptrace method
 * from libgcswalk's read of /proc/PID/maps). Sorted, without overlaps: a
 * new mapping replaces what it overlaps, as mmap() does. A sample's
 * addresses are looked up here to find the mapping the profile needs for
 * each; whether that mapping is in the file yet is the profile writer's
 * question (profile_out.h), not this map's.
 */
#ifndef GCSPROF_RECORD_MAPS_H
#define GCSPROF_RECORD_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct rec_mapping {
	uint64_t start, end, offset;
	char *path;                /* owned by the map */
	unsigned char *build_id;   /* owned by the map; NULL: unknown (read from */
	size_t build_id_size;      /* the file when the mapping is written) */
};

struct rec_map {
	struct rec_mapping *m;
	size_t n, cap;
	/* Counts the changes: a chain whose mappings were handed over at
	 * one generation need not be looked up again until the next. */
	uint64_t generation;
};

/* Add [START, END) (nothing if empty), cutting away what it overlaps: a
 * piece keeps its file offset. 0, or -1 for out of memory. */
int rec_map_insert(struct rec_map *map, uint64_t start, uint64_t end, uint64_t offset,
		   const char *path, const unsigned char *build_id, size_t build_id_size);
/* The mapping holding ADDRESS, or NULL. */
const struct rec_mapping *rec_map_find(const struct rec_map *map, uint64_t address);
/* DST (emptied first) becomes a copy of SRC: a forked child's map. */
int rec_map_copy(struct rec_map *dst, const struct rec_map *src);
/* Empty MAP, keeping its room; rec_map_free gives the room back. */
void rec_map_clear(struct rec_map *map);
void rec_map_free(struct rec_map *map);

#endif
