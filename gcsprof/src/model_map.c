// SPDX-License-Identifier: MIT
/*
 * The model's one hash map and its string table. The map is open
 * addressing over slots that keep their hash, so that growing it never
 * needs the keys again; keys are three words, or a string (word a points
 * at the text) for the string table. The string table interns each text
 * once and numbers it in order of first use, "" being 0: pprof's
 * string_table, Gecko's stringTable and speedscope's frames index it
 * directly.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "model_map.h"

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL;

	h ^= b + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
	h ^= c + 0x94d049bb133111ebULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	return h * 0xbf58476d1ce4e5b9ULL;
}

static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* A probe: what is looked for and how a slot is compared with it. */
struct probe {
	uint64_t hash, a, b, c;
	const char *text;          /* string keys: compare texts, not words */
};

static int same(const struct gp_map_slot *s, const struct probe *p)
{
	if (s->hash != p->hash)
		return 0;
	if (p->text)
		return strcmp((const char *)(uintptr_t)s->a, p->text) == 0;
	return s->a == p->a && s->b == p->b && s->c == p->c;
}

/* The slot holding P's key, or the empty one where it would go. */
static struct gp_map_slot *find(const struct gp_map *m, const struct probe *p)
{
	size_t i;

	for (i = (size_t)p->hash & (m->cap - 1); m->slots[i].value; i = (i + 1) & (m->cap - 1))
		if (same(&m->slots[i], p))
			break;
	return &m->slots[i];
}

/* Make room for one more key: at most half full. */
static int reserve(struct gp_map *m)
{
	struct gp_map n;
	size_t i;

	if ((m->count + 1) * 2 <= m->cap)
		return 0;
	n.cap = m->cap ? m->cap * 2 : 256;
	n.count = m->count;
	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -1;
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].value)
			continue;
		for (j = (size_t)m->slots[i].hash & (n.cap - 1); n.slots[j].value; j = (j + 1) & (n.cap - 1))
			;
		n.slots[j] = m->slots[i];
	}
	free(m->slots);
	*m = n;
	return 0;
}

uint64_t gp_map_get(const struct gp_map *m, uint64_t a, uint64_t b, uint64_t c)
{
	struct probe p = { mix(a, b, c), a, b, c, NULL };

	return m->cap ? find(m, &p)->value : 0;
}

int gp_map_put(struct gp_map *m, uint64_t a, uint64_t b, uint64_t c, uint64_t value)
{
	struct probe p = { mix(a, b, c), a, b, c, NULL };
	struct gp_map_slot *s;

	if (reserve(m) != 0)
		return -1;
	s = find(m, &p);
	if (!s->value)
		m->count++;
	*s = (struct gp_map_slot){ p.hash, a, b, c, value };
	return 0;
}

void gp_map_free(struct gp_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- The string table ----------------------------------------------- */

/* Each interned text is stored after its id, so that a writer gets the id
 * of a string the model hands it without a look-up. */
struct interned {
	size_t id;
	char text[];
};

const char *gp_strtab_intern(struct gp_strtab *t, const char *s)
{
	struct probe p;
	struct gp_map_slot *slot;
	struct interned *in;
	size_t len;
	char **v;

	if (!s)
		s = "";
	if (t->n == 0 && *s) {
		/* Id 0 is "", as pprof's string table requires. */
		if (!gp_strtab_intern(t, ""))
			return NULL;
	}
	p = (struct probe){ hash_text(s), 0, 0, 0, s };
	if (reserve(&t->map) != 0)
		return NULL;
	slot = find(&t->map, &p);
	if (slot->value)
		return t->text[slot->value - 1];
	v = gp_grow(t->text, &t->cap, t->n + 1, sizeof(*t->text));
	if (!v)
		return NULL;
	t->text = v;
	len = strlen(s);
	in = malloc(sizeof(*in) + len + 1);
	if (!in)
		return NULL;
	in->id = t->n;
	memcpy(in->text, s, len + 1);
	t->text[t->n++] = in->text;
	*slot = (struct gp_map_slot){ p.hash, (uintptr_t)in->text, 0, 0, t->n };
	t->map.count++;
	return in->text;
}

size_t gp_string_id(const char *interned)
{
	return ((const struct interned *)(const void *)(interned - offsetof(struct interned, text)))->id;
}

void gp_strtab_free(struct gp_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->text[i] - offsetof(struct interned, text));
	free(t->text);
	gp_map_free(&t->map);
	memset(t, 0, sizeof(*t));
}
