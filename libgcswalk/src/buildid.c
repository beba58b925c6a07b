// SPDX-License-Identifier: MIT
/*
 * GNU build-ids (NT_GNU_BUILD_ID) of ELF files and images, through libelf:
 * the note sections when there are section headers, else the PT_NOTE
 * segments (a stripped or in-memory image may have only those); and of
 * the first page of a mapped image (what a core keeps of a file), by hand,
 * since libelf will not open an image whose section headers are missing.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* The build-id in note data D, malloc'd; 1 found, 0 not, -1 no memory. */
static int note_build_id(Elf_Data *d, unsigned char **id, size_t *size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz == 0 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) != 0)
			continue;
		*id = malloc(nh.n_descsz);
		if (!*id)
			return -1;
		memcpy(*id, (const char *)d->d_buf + desc_off, nh.n_descsz);
		*size = nh.n_descsz;
		return 1;
	}
	return 0;
}

int gw_elf_build_id(void *elf, unsigned char **id, size_t *size)
{
	Elf *e = elf;
	Elf_Scn *scn = NULL;
	size_t phnum, i;
	int r;

	*id = NULL;
	*size = 0;
	if (elf_kind(e) != ELF_K_ELF)
		return GCSWALK_E_NO_SYMBOL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && (r = note_build_id(d, id, size)) != 0)
			return r > 0 ? GCSWALK_OK : GCSWALK_E_NOMEM;
	}
	if (elf_getphdrnum(e, &phnum) != 0)
		return GCSWALK_E_NO_SYMBOL;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && (r = note_build_id(d, id, size)) != 0)
			return r > 0 ? GCSWALK_OK : GCSWALK_E_NOMEM;
	}
	return GCSWALK_E_NO_SYMBOL;
}

/* A native-endian 64-bit ELF image's build-id, from the PT_NOTE segments
 * that lie inside IMAGE (LEN bytes from the image's start: its first
 * page, as a core dumps it). */
int gw_image_build_id(const void *image, size_t len, unsigned char **id, size_t *size)
{
	const unsigned char *b = image;
	Elf64_Ehdr eh;
	size_t i;

	*id = NULL;
	*size = 0;
	if (len < sizeof(eh))
		return GCSWALK_E_NO_SYMBOL;
	memcpy(&eh, b, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									    : ELFDATA2MSB) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > len ||
	    eh.e_phnum > (len - eh.e_phoff) / sizeof(Elf64_Phdr))
		return GCSWALK_E_NO_SYMBOL;
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t off;

		memcpy(&ph, b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			continue;
		for (off = ph.p_offset; ph.p_offset + ph.p_filesz - off >= sizeof(Elf64_Nhdr);) {
			Elf64_Nhdr nh;
			uint64_t name = off + sizeof(nh), desc, next;

			memcpy(&nh, b + off, sizeof(nh));
			desc = name + ((nh.n_namesz + 3ULL) & ~3ULL);
			next = desc + ((nh.n_descsz + 3ULL) & ~3ULL);
			if (next > ph.p_offset + ph.p_filesz || desc + nh.n_descsz > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
			    memcmp(b + name, "GNU", 4) == 0) {
				*id = malloc(nh.n_descsz);
				if (!*id)
					return GCSWALK_E_NOMEM;
				memcpy(*id, b + desc, nh.n_descsz);
				*size = nh.n_descsz;
				return GCSWALK_OK;
			}
			off = next;
		}
	}
	return GCSWALK_E_NO_SYMBOL;
}

int gcswalk_file_build_id(const char *path, unsigned char **id, size_t *size)
{
	Elf *e;
	int fd, ret;

	if (id)
		*id = NULL;
	if (size)
		*size = 0;
	if (!path || !id || !size)
		return GCSWALK_E_INVALID;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return GCSWALK_E_SYSTEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return GCSWALK_E_IO;
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	ret = e ? gw_elf_build_id(e, id, size) : GCSWALK_E_NO_SYMBOL;
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

int gcswalk_proc_build_id(int pid, const char *path, unsigned char **id, size_t *size)
{
	char *root_path;
	int ret;

	if (id)
		*id = NULL;
	if (size)
		*size = 0;
	if (pid <= 0 || !path || path[0] != '/' || !id || !size)
		return GCSWALK_E_INVALID;
	/* The process's own view of its files (its mount namespace, its
	 * chroot), which is where its mapped paths are to be found. */
	if (asprintf(&root_path, "/proc/%d/root%s", pid, path) < 0)
		return GCSWALK_E_NOMEM;
	ret = gcswalk_file_build_id(root_path, id, size);
	free(root_path);
	return ret;
}
