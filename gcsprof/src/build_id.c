// SPDX-License-Identifier: MIT
/* The GNU build-id of an ELF file, read with libelf: what record writes
 * for each mapping, and what report and archive check files against. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcsprof.h"

/* The GNU build-id of ELF file PATH into a malloc'd array; 0 if none. */
size_t gp_read_build_id(const char *path, unsigned char **out)
{
	size_t nph = 0, i, size = 0;
	Elf *elf;
	int fd;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph && !*out; i++) {
			GElf_Phdr ph;
			Elf_Data *d;
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_NHDR);
			while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
				    nh.n_descsz > 0 && nh.n_descsz <= 64) {
					*out = malloc(nh.n_descsz);
					if (*out) {
						memcpy(*out, (char *)d->d_buf + desc_off, nh.n_descsz);
						size = nh.n_descsz;
					}
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return size;
}
