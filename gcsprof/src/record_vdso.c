// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the vDSO. It is in no file, so a profile read elsewhere
 * could only show its frames as bare addresses. Every process of a
 * machine maps the same vDSO, gcsprof's own included: its function
 * symbols are read once from ours and written to the profile
 * ("vdso-symbol" records), and each process's vDSO as a "[vdso]" mapping,
 * so that report names its frames as perf does. Its signal trampoline
 * marks signal frames in the perf method's chains.
 */
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "record.h"

/* The function symbols of the ELF image at BASE (SIZE bytes) into V. */
static int read_symbols(struct rec_vdso *v, Elf *elf, uint64_t load)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (k = 0; d && k < sh.sh_size / sh.sh_entsize; k++) {
			struct rec_vdso_symbol *s;
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_value < load || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			s = gp_grow(v->symbols, &v->symbols_cap, v->nsymbols + 1, sizeof(*s));
			if (!s)
				return -1;
			v->symbols = s;
			s = &v->symbols[v->nsymbols];
			s->name = strdup(name);
			if (!s->name)
				return -1;
			s->offset = sym.st_value - load;
			s->size = sym.st_size;
			v->nsymbols++;
			if (strcmp(name, "__kernel_rt_sigreturn") == 0)
				v->sigreturn = s->offset;
		}
	}
	return 0;
}

/* The GNU build-id from the image's notes. */
static void vdso_build_id(struct rec_vdso *v, Elf *elf)
{
	size_t nph = 0, i;

	if (elf_getphdrnum(elf, &nph) != 0)
		return;
	for (i = 0; i < nph && !v->build_id_size; i++) {
		GElf_Phdr ph;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
			    nh.n_descsz <= sizeof(v->build_id)) {
				memcpy(v->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				v->build_id_size = nh.n_descsz;
				break;
			}
	}
}

int rec_vdso_load(struct rec_vdso *v)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), load = UINT64_MAX, end = 0;
	const GElf_Ehdr *eh;
	size_t size, nph = 0, i;
	Elf *elf;
	int ret = 0;

	memset(v, 0, sizeof(*v));
	if (!base || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	eh = (const GElf_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	/* The section headers come last in the vDSO image. */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1u << 24))
		return 0;
	elf = elf_memory((char *)base, size);
	if (!elf)
		return 0;
	if (elf_getphdrnum(elf, &nph) == 0)
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (ph.p_vaddr < load)
				load = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > end)
				end = ph.p_vaddr + ph.p_memsz;
		}
	if (load != UINT64_MAX) {
		v->size = (end - load + 4095) & ~(uint64_t)4095;
		vdso_build_id(v, elf);
		if (read_symbols(v, elf, load) != 0)
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	elf_end(elf);
	return ret;
}

int rec_vdso_write(FILE *f, const struct rec_vdso *v)
{
	size_t i;

	for (i = 0; i < v->nsymbols; i++) {
		const struct rec_vdso_symbol *s = &v->symbols[i];

		if (fprintf(f, "vdso-symbol %" PRIx64 " %" PRIx64 " ", s->offset, s->size) < 0 ||
		    gp_write_escaped(f, s->name) != 0 || fputc('\n', f) == EOF)
			return -1;
	}
	return 0;
}

void rec_vdso_free(struct rec_vdso *v)
{
	size_t i;

	for (i = 0; i < v->nsymbols; i++)
		free(v->symbols[i].name);
	free(v->symbols);
	memset(v, 0, sizeof(*v));
}

uint64_t rec_vdso_of(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	uint64_t start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!start && getline(&line, &cap, f) > 0)
		if (strstr(line, "[vdso]"))
			start = strtoull(line, NULL, 16);
	free(line);
	fclose(f);
	return start;
}

int rec_vdso_mapping(struct recorder *r, unsigned asid, pid_t pid, uint64_t start)
{
	const struct rec_vdso *v = &r->vdso;

	if (!start || !v->size)
		return 0;
	return rec_write_mapping(r, asid, pid, start, start + v->size, 0, REC_VDSO_PATH,
				 v->build_id_size ? v->build_id : NULL, v->build_id_size);
}
