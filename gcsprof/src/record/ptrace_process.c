// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method: a traced process's libgcswalk target
 * (one per process, opened at its first sample, refreshed for the next
 * ones, closed at exec and exit), its map as the profile has it, and the
 * symboliser of the CFI fallback.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "clock.h"
#include "ptrace.h"

/* How often a process's map may be read again once its burst is spent. */
#define MAPS_PERIOD_NS 100000000u
#define MAPS_BURST 8u
#define UNKNOWN_PAGES_NS 1000000000u
#define UNKNOWN_SLOTS (sizeof(((struct pt_process *)0)->unknown_pages) / sizeof(uint64_t))

/* In one pass over the target's map: write its new file mappings, and
 * keep them all as the ones the profile has for P. */
static int sync_mappings(struct recording *rec, struct pt_process *p)
{
	size_t i, n = gcswalk_target_mapping_count(p->target);
	struct rec_mapping vdso;
	int ret = 0;

	rec_map_clear(&p->base.map);
	for (i = 0; i < n && !ret; i++) {
		struct gcswalk_mapping m;
		const unsigned char *id;
		size_t id_size;
		struct rec_mapping rm;

		if (gcswalk_target_mapping(p->target, i, &m) != GCSWALK_OK || !m.path)
			continue;
		if (gcswalk_target_mapping_build_id(p->target, i, &id, &id_size) != GCSWALK_OK) {
			id = NULL;
			id_size = 0;
		}
		rm = (struct rec_mapping){ m.start, m.end, m.offset, (char *)m.path,
					   (unsigned char *)id, id ? id_size : 0 };
		ret = rec_out_mapping(&rec->out, p->base.asid, p->base.pid, &rm);
		if (!ret && rec_map_insert(&p->base.map, m.start, m.end, m.offset, m.path, id,
					   id_size) != 0)
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	/* The vDSO, in no file: its symbols are in the profile. */
	if (!ret && rec_vdso_mapping(&rec->vdso, p->base.vdso, &vdso)) {
		if (rec_map_insert(&p->base.map, vdso.start, vdso.end, 0, vdso.path, vdso.build_id,
				   vdso.build_id_size) != 0)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		ret = rec_out_vdso_mapping(&rec->out, p->base.asid, p->base.pid, p->base.vdso);
	}
	return ret;
}

/* A fresh target: a full burst of map re-reads. */
static void maps_credits_reset(struct pt_process *p, uint64_t now)
{
	p->maps_credits = MAPS_BURST;
	p->maps_ns = now;
	p->maps_stale = 0;
	memset(p->unknown_pages, 0, sizeof(p->unknown_pages));
}

/* Take a credit for reading P's map again, if one is left: 1, else 0. */
static int maps_credit_take(struct pt_process *p, uint64_t now)
{
	uint64_t earned = (now - p->maps_ns) / MAPS_PERIOD_NS;

	if (earned >= MAPS_BURST - p->maps_credits) {
		p->maps_credits = MAPS_BURST;
		p->maps_ns = now;
	} else if (earned) {
		p->maps_credits += (unsigned)earned;
		p->maps_ns += earned * MAPS_PERIOD_NS;
	}
	if (!p->maps_credits)
		return 0;
	p->maps_credits--;
	return 1;
}

int pt_process_open(struct recording *rec, struct pt_process *p)
{
	char *msg = NULL;
	int ret = gcswalk_target_open_pid(&p->target, p->base.pid, GCSWALK_ATTACH_STOPPED, 0, &msg);

	free(msg);
	if (ret < 0)
		return -1;
	maps_credits_reset(p, rec_now_ns());
	p->base.vdso = rec_region_start(p->target, GCSWALK_REGION_VDSO);
	return sync_mappings(rec, p);
}

static int page_known_unmapped(const struct pt_process *p, uint64_t page, uint64_t now)
{
	size_t i;

	if (now - p->unknown_ns >= UNKNOWN_PAGES_NS)
		return 0;
	for (i = 0; i < UNKNOWN_SLOTS; i++)
		if (p->unknown_pages[i] == page + 1)
			return 1;
	return 0;
}

/* Is ADDRESS in no file the profile has for P, and not in a page we
 * know is in none? */
static int unknown_address(const struct pt_process *p, uint64_t address, uint64_t now)
{
	return !rec_map_find(&p->base.map, address) &&
	       !page_known_unmapped(p, address >> 12, now);
}

/* Does a code address of the sample lie in an unknown place? Then a
 * library was probably loaded since the map was read (by us or by a
 * walk). */
static int has_unknown_address(const struct pt_process *p, const struct gp_frame *frames,
			       size_t n, uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (unknown_address(p, frames[i].address, now))
			return 1;
	return 0;
}

/*
 * Read P's map again, if a credit is left (else mark it stale), and write
 * its new mappings. The pages of FRAMES still in no file are remembered,
 * so that the vDSO or anonymous code does not make us read it at every
 * sample.
 */
static int refresh_maps(struct recording *rec, struct pt_process *p,
			const struct gp_frame *frames, size_t n, uint64_t now)
{
	size_t i, k = 0;
	int ret;

	if (!maps_credit_take(p, now)) {
		p->maps_stale = 1;
		return 0;
	}
	p->maps_stale = 0;
	if (gcswalk_target_refresh(p->target, GCSWALK_REFRESH_MAPS) != GCSWALK_OK)
		return 0;       /* gone: the next sample says so */
	/* A symboliser knows the map it was made with. */
	gcswalk_symbolizer_free(p->cfi_sym);
	p->cfi_sym = NULL;
	ret = sync_mappings(rec, p);
	if (ret)
		return ret;
	memset(p->unknown_pages, 0, sizeof(p->unknown_pages));
	p->unknown_ns = now;
	for (i = 0; i < n && k < UNKNOWN_SLOTS; i++)
		if (unknown_address(p, frames[i].address, now))
			p->unknown_pages[k++] = (frames[i].address >> 12) + 1;
	return 0;
}

int pt_process_mappings(struct recording *rec, struct pt_process *p,
			const struct gp_frame *frames, size_t n, uint64_t now)
{
	int ret;

	/* The mappings a sample needs are written before it, or, when the
	 * map may not be re-read yet (credits spent), at the next sample that
	 * may. */
	if (!p->maps_stale && !has_unknown_address(p, frames, n, now))
		return 0;
	/* First what the walk itself may have read, then a new read. */
	ret = sync_mappings(rec, p);
	if (!ret && (p->maps_stale || has_unknown_address(p, frames, n, now)))
		ret = refresh_maps(rec, p, frames, n, now);
	return ret;
}

gcswalk_symbolizer *pt_process_cfi(struct pt_process *p)
{
	size_t n = gcswalk_target_mapping_count(p->target);

	if (p->cfi_sym && p->cfi_nmaps != n) {
		gcswalk_symbolizer_free(p->cfi_sym);
		p->cfi_sym = NULL;
	}
	if (!p->cfi_sym && gcswalk_symbolizer_new(&p->cfi_sym, p->target, NULL) != GCSWALK_OK)
		p->cfi_sym = NULL;
	p->cfi_nmaps = n;
	return p->cfi_sym;
}

void pt_process_release(struct pt_process *p)
{
	gcswalk_symbolizer_free(p->cfi_sym);
	p->cfi_sym = NULL;
	gcswalk_target_close(p->target);
	p->target = NULL;
	rec_map_clear(&p->base.map);
}
