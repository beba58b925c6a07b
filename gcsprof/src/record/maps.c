// SPDX-License-Identifier: MIT
/*
 * gcsprof record: a process's code map (maps.h), a sorted array. Maps
 * hold tens to a few hundred mappings, changed seldom and looked up for
 * every frame of every sample: a binary search, and a memmove to change.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "maps.h"

/* The index of the first mapping that ends after ADDRESS (the map is
 * sorted and without overlaps, so ends are sorted too). */
static size_t first_ending_after(const struct rec_map *map, uint64_t address)
{
	size_t lo = 0, hi = map->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->m[mid].end <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct rec_map *map, size_t i, const struct rec_mapping *m)
{
	struct rec_mapping *g = gp_grow(map->m, &map->cap, map->n + 1, sizeof(*g));

	if (!g)
		return -1;
	map->m = g;
	memmove(&map->m[i + 1], &map->m[i], (map->n - i) * sizeof(*g));
	map->m[i] = *m;
	map->n++;
	return 0;
}

static void free_mapping(struct rec_mapping *m)
{
	free(m->path);
	free(m->build_id);
}

/* A copy of M's path and build-id into *COPY. */
static int copy_mapping(struct rec_mapping *copy, const struct rec_mapping *m)
{
	*copy = *m;
	copy->path = strdup(m->path);
	copy->build_id = m->build_id_size ? malloc(m->build_id_size) : NULL;
	if (copy->build_id)
		memcpy(copy->build_id, m->build_id, m->build_id_size);
	if (copy->path && (copy->build_id || !m->build_id_size))
		return 0;
	free_mapping(copy);
	return -1;
}

static void remove_at(struct rec_map *map, size_t i)
{
	free_mapping(&map->m[i]);
	memmove(&map->m[i], &map->m[i + 1], (map->n - i - 1) * sizeof(*map->m));
	map->n--;
}

/* Cut [START, END) out of the map; what is left of a mapping keeps the
 * file offset of its bytes. */
static int cut(struct rec_map *map, uint64_t start, uint64_t end)
{
	size_t i = first_ending_after(map, start);

	while (i < map->n && map->m[i].start < end) {
		struct rec_mapping *m = &map->m[i];

		if (m->start >= start && m->end <= end) {
			remove_at(map, i);
		} else if (m->start < start && m->end > end) {
			struct rec_mapping tail;

			if (copy_mapping(&tail, m) != 0)
				return -1;
			tail.offset += end - m->start;
			tail.start = end;
			m->end = start;
			if (insert_at(map, i + 1, &tail) != 0) {
				free_mapping(&tail);
				return -1;
			}
			return 0;
		} else if (m->start < start) {
			m->end = start;
			i++;
		} else {
			m->offset += end - m->start;
			m->start = end;
			i++;
		}
	}
	return 0;
}

int rec_map_insert(struct rec_map *map, uint64_t start, uint64_t end, uint64_t offset,
		   const char *path, const unsigned char *build_id, size_t build_id_size)
{
	struct rec_mapping m = { start, end, offset, (char *)path, (unsigned char *)build_id,
				 build_id ? build_id_size : 0 }, copy;

	if (end <= start)
		return 0;
	map->generation++;
	if (cut(map, start, end) != 0 || copy_mapping(&copy, &m) != 0)
		return -1;
	if (insert_at(map, first_ending_after(map, start), &copy) != 0) {
		free_mapping(&copy);
		return -1;
	}
	return 0;
}

const struct rec_mapping *rec_map_find(const struct rec_map *map, uint64_t address)
{
	size_t i = first_ending_after(map, address);

	return i < map->n && map->m[i].start <= address ? &map->m[i] : NULL;
}

int rec_map_copy(struct rec_map *dst, const struct rec_map *src)
{
	size_t i;

	rec_map_clear(dst);
	for (i = 0; i < src->n; i++) {
		const struct rec_mapping *m = &src->m[i];

		if (rec_map_insert(dst, m->start, m->end, m->offset, m->path, m->build_id,
				   m->build_id_size) != 0)
			return -1;
	}
	return 0;
}

void rec_map_clear(struct rec_map *map)
{
	size_t i;

	for (i = 0; i < map->n; i++)
		free_mapping(&map->m[i]);
	map->n = 0;
	map->generation++;
}

void rec_map_free(struct rec_map *map)
{
	rec_map_clear(map);
	free(map->m);
	memset(map, 0, sizeof(*map));
}
