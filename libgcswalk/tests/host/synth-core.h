/* SPDX-License-Identifier: MIT */
/*
 * Synthetic arm64 core files for host tests: an ELF header, program
 * headers, one PT_NOTE segment and PT_LOAD segments, laid out in a memory
 * buffer that tests then write out whole, truncated or damaged. Written
 * with <elf.h>'s structures on purpose: a test that must produce broken
 * files cannot go through a library that refuses to write them.
 */
#ifndef GCSWALK_SYNTH_CORE_H
#define GCSWALK_SYNTH_CORE_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct synth_note {
	const char *name;
	uint32_t type;
	const void *desc;
	size_t size;
};

struct synth_seg {
	uint64_t vaddr;
	const void *data;
	uint64_t filesz, memsz;
};

struct synth_buf {
	unsigned char *p;
	size_t len, cap;
};

static int synth_put(struct synth_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
	return 0;
}

static int synth_align(struct synth_buf *b, size_t a)
{
	return b->len % a ? synth_put(b, NULL, a - b->len % a) : 0;
}

/* The core as bytes in *OUT (free() it); 0 or -1 (out of memory). */
static int synth_core(uint16_t machine, uint16_t type, const struct synth_note *notes,
		      size_t nnotes, const struct synth_seg *segs, size_t nsegs, struct synth_buf *out)
{
	struct synth_buf notebuf = { NULL, 0, 0 };
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t i, phnum = 1 + nsegs, data_off;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < nnotes; i++) {
		Elf64_Nhdr nh = { (Elf64_Word)(strlen(notes[i].name) + 1), (Elf64_Word)notes[i].size,
				  notes[i].type };

		if (synth_put(&notebuf, &nh, sizeof(nh)) || synth_put(&notebuf, notes[i].name, nh.n_namesz) ||
		    synth_align(&notebuf, 4) || synth_put(&notebuf, notes[i].desc, notes[i].size) ||
		    synth_align(&notebuf, 4))
			goto out;
	}
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = type;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)phnum;
	if (synth_put(out, &eh, sizeof(eh)))
		goto out;
	data_off = sizeof(eh) + phnum * sizeof(ph);
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_NOTE;
	ph.p_offset = data_off;
	ph.p_filesz = notebuf.len;
	ph.p_align = 4;
	if (synth_put(out, &ph, sizeof(ph)))
		goto out;
	data_off += notebuf.len;
	for (i = 0; i < nsegs; i++) {
		data_off = (data_off + 7) & ~(size_t)7;
		memset(&ph, 0, sizeof(ph));
		ph.p_type = PT_LOAD;
		ph.p_flags = PF_R;
		ph.p_offset = data_off;
		ph.p_vaddr = segs[i].vaddr;
		ph.p_filesz = segs[i].filesz;
		ph.p_memsz = segs[i].memsz;
		ph.p_align = 4096;
		if (synth_put(out, &ph, sizeof(ph)))
			goto out;
		data_off += segs[i].filesz;
	}
	if (synth_put(out, notebuf.p, notebuf.len))
		goto out;
	for (i = 0; i < nsegs; i++) {
		if (synth_align(out, 8) || synth_put(out, segs[i].data, segs[i].filesz))
			goto out;
	}
	ret = 0;
out:
	free(notebuf.p);
	if (ret) {
		free(out->p);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

#endif
