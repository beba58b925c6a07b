// SPDX-License-Identifier: MIT
/* Core files built around fuzzed parts, with <elf.h>'s layouts: a
 * library that writes ELF would refuse the broken notes on purpose. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "core-image.h"

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

int fz_core_image(const void *notes, size_t notes_size, const struct fz_segment *segs,
		  size_t nsegs, unsigned char **out, size_t *len)
{
	size_t phnum = 1 + nsegs, off, total, i;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	unsigned char *p;

	off = sizeof(eh) + phnum * sizeof(ph);
	total = ALIGN8(off + notes_size);
	for (i = 0; i < nsegs; i++)
		total = ALIGN8(total + segs[i].size);
	p = calloc(1, total ? total : 1);
	if (!p)
		return -1;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_AARCH64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = (Elf64_Half)phnum;
	memcpy(p, &eh, sizeof(eh));

	ph.p_type = PT_NOTE;
	ph.p_offset = off;
	ph.p_filesz = notes_size;
	ph.p_align = 4;
	memcpy(p + sizeof(eh), &ph, sizeof(ph));
	if (notes_size)
		memcpy(p + off, notes, notes_size);
	off = ALIGN8(off + notes_size);
	for (i = 0; i < nsegs; i++) {
		memset(&ph, 0, sizeof(ph));
		ph.p_type = PT_LOAD;
		ph.p_flags = PF_R | PF_W;
		ph.p_offset = off;
		ph.p_vaddr = segs[i].vaddr;
		ph.p_filesz = segs[i].size;
		ph.p_memsz = segs[i].size;
		ph.p_align = 4096;
		memcpy(p + sizeof(eh) + (1 + i) * sizeof(ph), &ph, sizeof(ph));
		if (segs[i].size)
			memcpy(p + off, segs[i].data, segs[i].size);
		off = ALIGN8(off + segs[i].size);
	}
	*out = p;
	*len = total;
	return 0;
}

int fz_note_append(unsigned char **buf, size_t *len, const char *name, uint32_t type,
		   const void *desc, size_t size)
{
	size_t namesz = strlen(name) + 1, need = sizeof(Elf64_Nhdr) + ((namesz + 3) & ~(size_t)3) +
						((size + 3) & ~(size_t)3);
	Elf64_Nhdr nh = { (Elf64_Word)namesz, (Elf64_Word)size, type };
	unsigned char *p = realloc(*buf, *len + need);

	if (!p)
		return -1;
	memset(p + *len, 0, need);
	memcpy(p + *len, &nh, sizeof(nh));
	memcpy(p + *len + sizeof(nh), name, namesz);
	if (size)
		memcpy(p + *len + sizeof(nh) + ((namesz + 3) & ~(size_t)3), desc, size);
	*buf = p;
	*len += need;
	return 0;
}
