// SPDX-License-Identifier: MIT
/*
 * Turn a riscv64 program's shadow stack (Zicfiss) on at start, as its C
 * library would if it could: upstream Linux leaves that to the dynamic
 * loader (Documentation/arch/riscv/zicfiss.rst), and sid's glibc 2.43 does
 * not do it. A program gets this either linked in (gcsprof-shstk.o: no
 * LD_PRELOAD, static programs too) or preloaded (libgcsprof-shstk.so:
 * programs as they are; gcsprof record --gcs-tunable does that). A
 * launcher could not: exec turns the shadow stack off.
 *
 * GCSPROF_SHADOW_STACK in the environment says what to do, the values of
 * arm64's glibc.cpu.aarch64_gcs tunable: 0 leave it off; 1 enforced: on,
 * and a program with a loaded object not built for it (no
 * GNU_PROPERTY_RISCV_FEATURE_1_CFI_SS) exits 127 saying which; 2 optional:
 * on only when every loaded object is built for it; 3, or unset, override:
 * on regardless. An object built without it pushes nothing, so its
 * functions are missing from the shadow stack, but it runs.
 *
 * It runs as a constructor: its callers (ld.so, glibc) push nothing, so
 * returning after turning the shadow stack on pops nothing, provided this
 * file is not built with -fcf-protection either (its epilogue would pop
 * from the new, empty shadow stack).
 *
 * Marking: the linker ANDs the GNU_PROPERTY_RISCV_FEATURE_1_AND bits of
 * its inputs, and sid's crt files carry none, so a program or library is
 * marked only when linked with -z zicfiss=always (libgcsprof-shstk.so is:
 * code that pushes nothing is compatible with a shadow stack, only not
 * protected by it). Nothing of sid's own is marked: 2 turns nothing on
 * there yet, 1 refuses every program, 3 is what works.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#if defined(__riscv_shadow_stack)
#error "build without -fcf-protection: this code returns after turning the shadow stack on"
#endif

/* Upstream's generic prctls (6.13+) and riscv's property (psABI). */
#define SHSTK_GET_STATUS 74
#define SHSTK_SET_STATUS 75
#define SHSTK_ENABLE 1UL
#define PROPERTY_RISCV_FEATURE_1_AND 0xc0000000u
#define PROPERTY_RISCV_CFI_SS (1u << 1)
#define NOTE_GNU_PROPERTY 5

/* Whether the PT_GNU_PROPERTY notes at DESC (LEN bytes) mark the object
 * as built for the shadow stack. */
static int marked(const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type, d;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		/* 8-aligned notes: the descriptor starts at the next multiple
		 * of 8 after the name. */
		if (namesz > len - off - 12)
			return 0;
		off = (off + 12 + namesz + 7u) & ~(size_t)7u;
		if (descsz > len || off > len - descsz)
			return 0;
		for (d = 0; type == NOTE_GNU_PROPERTY && d + 8 <= descsz;) {
			uint32_t pr_type, pr_size, bits;

			memcpy(&pr_type, p + off + d, 4);
			memcpy(&pr_size, p + off + d + 4, 4);
			if (pr_size > descsz - d - 8)
				return 0;
			if (pr_type == PROPERTY_RISCV_FEATURE_1_AND && pr_size >= 4) {
				memcpy(&bits, p + off + d + 8, 4);
				return (bits & PROPERTY_RISCV_CFI_SS) != 0;
			}
			d += 8 + ((pr_size + 7u) & ~7u);
		}
		off = (off + descsz + 7u) & ~(size_t)7u;
	}
	return 0;
}

/* dl_iterate_phdr: stop at the first loaded object that is not marked,
 * its name in *DATA. The vDSO is the kernel's business. */
static int find_unmarked(struct dl_phdr_info *info, size_t size, void *data)
{
	const char **name = data;
	int i;

	(void)size;
	if (strstr(info->dlpi_name, "linux-vdso"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_PROPERTY &&
		    marked((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz))
			return 0;
	}
	*name = info->dlpi_name[0] ? info->dlpi_name : program_invocation_name;
	return 1;
}

__attribute__((constructor)) static void gcsprof_shstk_enable(void)
{
	const char *v = getenv("GCSPROF_SHADOW_STACK"), *unmarked = NULL;
	int mode = v && *v ? atoi(v) : 3;
	unsigned long status = 0;

	if (mode <= 0 || mode > 3)
		return;
	if (prctl(SHSTK_GET_STATUS, &status, 0UL, 0UL, 0UL) != 0 || (status & SHSTK_ENABLE))
		return;         /* no shadow stacks here, or already on */
	if (mode != 3 && dl_iterate_phdr(find_unmarked, &unmarked) && unmarked) {
		if (mode == 2)
			return;
		fprintf(stderr, "gcsprof-shstk: %s is not shadow-stack compatible "
			"(GCSPROF_SHADOW_STACK=1)\n", unmarked);
		_exit(127);
	}
	(void)prctl(SHSTK_SET_STATUS, SHSTK_ENABLE, 0UL, 0UL, 0UL);
}
