// SPDX-License-Identifier: MIT
/*
 * The vDSO: in no file, so a profile that names its functions must carry
 * them. Its image is read from the target's memory (the region the back
 * end names GCSWALK_REGION_VDSO), once, and parsed in memory with libelf:
 * the function symbols of .dynsym as offsets from the image's start, and
 * its build-id.
 */
#define _GNU_SOURCE
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* No vDSO is larger than this; a region that is, is not one. */
#define VDSO_MAX_SIZE (64u << 20)

static int by_offset(const void *a, const void *b)
{
	const struct gcswalk_elf_symbol *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The address the image's first byte was linked at (PT_LOAD at offset 0). */
static int link_base(Elf *e, uint64_t *base)
{
	size_t phnum, i;

	if (elf_getphdrnum(e, &phnum) != 0)
		return -1;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*base = ph.p_vaddr - ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* Function symbols of .dynsym into V, names copied into one block. */
static int read_symbols(struct gcswalk_target *t, Elf *e, uint64_t image_size, struct gw_vdso *v)
{
	Elf_Scn *scn = NULL;
	size_t names_len = 0, n = 0, at = 0, i, count, strndx;
	Elf_Data *d = NULL;
	GElf_Shdr sh;
	uint64_t base;

	if (link_base(e, &base) != 0)
		return gw_fail(t, GCSWALK_E_CORRUPT, "vDSO: no PT_LOAD");
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			break;
	if (!scn || !(d = elf_getdata(scn, NULL)) || sh.sh_entsize == 0)
		return GCSWALK_OK;      /* no symbols: an image without .dynsym */
	strndx = sh.sh_link;
	count = d->d_size / sh.sh_entsize;
	/* Two passes: count and measure, then fill. */
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value < base ||
		    sym.st_value - base >= image_size)
			continue;
		name = elf_strptr(e, strndx, sym.st_name);
		if (!name || !name[0])
			continue;
		names_len += strlen(name) + 1;
		n++;
	}
	if (n == 0)
		return GCSWALK_OK;
	v->symbols = calloc(n, sizeof(*v->symbols));
	v->names = malloc(names_len);
	if (!v->symbols || !v->names)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	for (i = 0; i < count && v->nsymbols < n; i++) {
		GElf_Sym sym;
		const char *name;
		size_t len;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value < base ||
		    sym.st_value - base >= image_size)
			continue;
		name = elf_strptr(e, strndx, sym.st_name);
		if (!name || !name[0])
			continue;
		len = strlen(name) + 1;
		if (len > names_len - at)
			break;
		memcpy(v->names + at, name, len);
		v->symbols[v->nsymbols++] = (struct gcswalk_elf_symbol){ sym.st_value - base,
									  sym.st_size,
									  v->names + at };
		at += len;
	}
	qsort(v->symbols, v->nsymbols, sizeof(*v->symbols), by_offset);
	return GCSWALK_OK;
}

static int load_vdso(struct gcswalk_target *t, struct gw_vdso *v)
{
	size_t i, n = gcswalk_target_region_count(t), got = 0;
	struct gcswalk_region r;
	char *image;
	Elf *e;
	int ret;

	for (i = 0; i < n; i++) {
		r.size = sizeof(r);
		if (gcswalk_target_region(t, i, &r) == GCSWALK_OK && r.kind == GCSWALK_REGION_VDSO)
			break;
	}
	if (i == n)
		return gw_fail(t, GCSWALK_E_NO_SYMBOL, "no vDSO known in this target");
	if (r.end - r.start > VDSO_MAX_SIZE)
		return gw_fail(t, GCSWALK_E_CORRUPT, "vDSO region of %llu bytes",
			       (unsigned long long)(r.end - r.start));
	v->start = r.start;
	v->size = r.end - r.start;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return gw_fail(t, GCSWALK_E_SYSTEM, "libelf: %s", elf_errmsg(-1));
	image = malloc(v->size ? v->size : 1);
	if (!image)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	ret = t->be->read(t, v->start, image, v->size, &got);
	if (ret < 0) {
		free(image);
		return ret == GCSWALK_E_IO ? gw_fail(t, ret, "vDSO at %#llx: not readable",
						     (unsigned long long)v->start) : ret;
	}
	e = elf_memory(image, v->size);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		free(image);
		return gw_fail(t, GCSWALK_E_CORRUPT, "vDSO at %#llx: not an ELF image",
			       (unsigned long long)v->start);
	}
	ret = read_symbols(t, e, v->size, v);
	if (ret == GCSWALK_OK) {
		ret = gw_elf_build_id(e, &v->build_id, &v->build_id_size);
		if (ret == GCSWALK_E_NO_SYMBOL)
			ret = GCSWALK_OK;       /* a vDSO without build-id */
		else if (ret < 0)
			gw_fail(t, ret, "out of memory");
	}
	elf_end(e);
	free(image);
	return ret;
}

int gcswalk_target_vdso(gcswalk_target *t, uint64_t *start, uint64_t *image_size,
			const struct gcswalk_elf_symbol **symbols, size_t *count,
			const unsigned char **build_id, size_t *build_id_size)
{
	struct gw_vdso *v;

	if (!t)
		return GCSWALK_E_INVALID;
	v = &t->vdso;
	gw_clear_error(t);
	if (v->status == 1) {
		v->status = load_vdso(t, v);
		if (v->status < 0) {
			free(v->symbols);
			free(v->names);
			free(v->build_id);
			v->symbols = NULL;
			v->names = NULL;
			v->build_id = NULL;
			v->nsymbols = v->build_id_size = 0;
			/* Out of memory is no fact about the vDSO: ask again. */
			if (v->status == GCSWALK_E_NOMEM) {
				v->status = 1;
				return GCSWALK_E_NOMEM;
			}
		}
	}
	if (start)
		*start = v->status == GCSWALK_OK ? v->start : 0;
	if (image_size)
		*image_size = v->status == GCSWALK_OK ? v->size : 0;
	if (symbols)
		*symbols = v->symbols;
	if (count)
		*count = v->nsymbols;
	if (build_id)
		*build_id = v->build_id;
	if (build_id_size)
		*build_id_size = v->build_id_size;
	return v->status;
}
