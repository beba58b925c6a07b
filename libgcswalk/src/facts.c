// SPDX-License-Identifier: MIT
/*
 * Facts about a target that tools need beside its chains: its regions
 * (GCS, vDSO), its files' build-ids, a core's fatal signal; and whether
 * this machine has GCS at all. The back ends supply the raw facts through
 * their table; this file keeps them and answers the public calls.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int gcswalk_system_gcs(void)
{
	if (!gw_arch_native())
		return GCSWALK_E_UNSUPPORTED;
	return gw_arch_self_supported() ? GCSWALK_OK : GCSWALK_E_NO_GCS_CPU;
}

int gw_target_add_region(struct gcswalk_target *t, enum gcswalk_region_kind kind,
			 uint64_t start, uint64_t end)
{
	struct gw_region *n;
	size_t i;

	for (i = 0; i < t->nregions; i++)
		if (t->regions[i].start == start && t->regions[i].kind == kind)
			return GCSWALK_OK;      /* two threads on one GCS */
	n = gw_grow(t->regions, t->nregions, &t->regions_cap, sizeof(*n));
	if (!n)
		return GCSWALK_E_NOMEM;
	t->regions = n;
	for (i = t->nregions; i > 0 && t->regions[i - 1].start > start; i--)
		t->regions[i] = t->regions[i - 1];
	t->regions[i] = (struct gw_region){ kind, start, end };
	t->nregions++;
	return GCSWALK_OK;
}

void gw_target_forget_facts(struct gcswalk_target *t)
{
	t->nregions = 0;
	t->regions_loaded = 0;
	t->maps_generation++;
}

static int load_regions(struct gcswalk_target *t)
{
	int ret = GCSWALK_OK;

	if (t->regions_loaded)
		return GCSWALK_OK;
	t->nregions = 0;
	if (t->be->load_regions)
		ret = t->be->load_regions(t);
	if (ret < 0) {
		t->nregions = 0;
		return ret;
	}
	t->regions_loaded = 1;
	return GCSWALK_OK;
}

size_t gcswalk_target_region_count(gcswalk_target *t)
{
	if (!t)
		return 0;
	gw_clear_error(t);
	return load_regions(t) < 0 ? 0 : t->nregions;
}

int gcswalk_target_region(gcswalk_target *t, size_t index, struct gcswalk_region *r)
{
	struct gcswalk_region out;

	if (!t || !r || r->size < GW_REGION_SIZE_1_0)
		return GCSWALK_E_INVALID;
	if (load_regions(t) < 0 || index >= t->nregions)
		return GCSWALK_E_INVALID;
	memset(&out, 0, sizeof(out));
	out.size = sizeof(out);
	out.kind = t->regions[index].kind;
	out.start = t->regions[index].start;
	out.end = t->regions[index].end;
	return gw_sized_out(r, r->size, &out, sizeof(out), GW_REGION_SIZE_1_0);
}

int gcswalk_target_fatal_signal(const gcswalk_target *t, struct gcswalk_signal_info *info)
{
	struct gcswalk_signal_info out;
	int ret;

	if (!t || !info || info->size < GW_SIGNAL_INFO_SIZE_1_0 || !t->be->fatal_signal)
		return GCSWALK_E_INVALID;
	memset(&out, 0, sizeof(out));
	out.size = sizeof(out);
	ret = t->be->fatal_signal(t, &out);
	if (ret < 0)
		return ret;
	return gw_sized_out(info, info->size, &out, sizeof(out), GW_SIGNAL_INFO_SIZE_1_0);
}

/* The cache entry of PATH, a new one (status 1: not looked at yet) when
 * there is none; NULL when out of memory. */
static struct gw_build_id *build_id_entry(struct gcswalk_target *t, const char *path)
{
	struct gw_build_id *b;
	size_t i;

	for (i = 0; i < t->nbuild_ids; i++)
		if (strcmp(t->build_ids[i].path, path) == 0)
			return &t->build_ids[i];
	b = gw_grow(t->build_ids, t->nbuild_ids, &t->build_ids_cap, sizeof(*b));
	if (!b)
		return NULL;
	t->build_ids = b;
	b = &t->build_ids[t->nbuild_ids];
	memset(b, 0, sizeof(*b));
	b->path = strdup(path);
	if (!b->path)
		return NULL;
	b->status = 1;
	t->nbuild_ids++;
	return b;
}

/*
 * A file this machine cannot open: its build-id from the target's memory
 * instead, where the file's first page is mapped (a core keeps that page
 * of every ELF file it maps; a live process has it all). GCSWALK_E_IO when
 * the memory cannot be read either (a target of mappings has none).
 */
static int memory_build_id(struct gcswalk_target *t, const char *path, struct gw_build_id *b)
{
	unsigned char page[4096];
	char *errmsg = t->errmsg;
	size_t i, got = 0;
	int ret;

	for (i = 0; i < t->nmaps; i++)
		if (t->maps[i].offset == 0 && strcmp(t->maps[i].path, path) == 0)
			break;
	if (i == t->nmaps)
		return GCSWALK_E_IO;
	/* A failed read sets the error detail, which is not this call's to
	 * change: the caller's is kept. */
	t->errmsg = NULL;
	(void)t->be->read(t, t->maps[i].start, page,
			  t->maps[i].end - t->maps[i].start < sizeof(page)
				  ? (size_t)(t->maps[i].end - t->maps[i].start)
				  : sizeof(page),
			  &got);
	free(t->errmsg);
	t->errmsg = errmsg;
	ret = got ? gw_image_build_id(page, got, &b->id, &b->size) : GCSWALK_E_IO;
	return ret == GCSWALK_E_NO_SYMBOL ? GCSWALK_E_IO : ret;
}

int gcswalk_target_mapping_build_id(gcswalk_target *t, size_t index, const unsigned char **id,
				    size_t *size)
{
	struct gw_build_id *b;
	const char *path;
	char *open_path;

	if (id)
		*id = NULL;
	if (size)
		*size = 0;
	if (!t || !id || !size || index >= t->nmaps)
		return GCSWALK_E_INVALID;
	path = t->maps[index].path;
	b = build_id_entry(t, path);
	if (!b)
		return GCSWALK_E_NOMEM;
	if (b->status == 1) {
		open_path = t->be->file_path ? t->be->file_path(t, path) : strdup(path);
		if (!open_path)
			return GCSWALK_E_NOMEM;
		b->status = gcswalk_file_build_id(open_path, &b->id, &b->size);
		free(open_path);
		if (b->status == GCSWALK_E_IO)
			b->status = memory_build_id(t, path, b);
	}
	*id = b->id;
	*size = b->size;
	return b->status;
}

int gcswalk_target_set_mapping_build_id(gcswalk_target *t, size_t index,
					const unsigned char *id, size_t size)
{
	struct gw_build_id *b;
	unsigned char *copy;

	if (!t)
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	if (!id || !size || index >= t->nmaps)
		return gw_fail(t, GCSWALK_E_INVALID, "mapping %zu of %zu, build-id of %zu bytes",
			       index, t->nmaps, id ? size : 0);
	copy = malloc(size);
	if (!copy)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	memcpy(copy, id, size);
	b = build_id_entry(t, t->maps[index].path);
	/* A build-id handed out earlier stays valid until close. */
	if (!b || (b->id && gw_target_retire(t, (char *)b->id) != GCSWALK_OK)) {
		free(copy);
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	}
	b->id = copy;
	b->size = size;
	b->status = GCSWALK_OK;
	return GCSWALK_OK;
}
