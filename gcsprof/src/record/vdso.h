/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the vDSO. It is in no file, so a profile read elsewhere
 * could only show its frames as bare addresses. Every process of a
 * machine maps the same vDSO, gcsprof's own included: its function
 * symbols are read once from ours (libgcswalk parses the image), to be
 * written to the profile ("vdso-symbol" records), and each process's vDSO
 * becomes a "[vdso]" mapping, so that report names its frames as perf
 * does. Its signal trampoline marks signal frames in the perf method's
 * chains.
 */
#ifndef GCSPROF_RECORD_VDSO_H
#define GCSPROF_RECORD_VDSO_H

#include <stddef.h>
#include <stdint.h>

#include "maps.h"

struct rec_vdso_symbol {
	uint64_t offset, size;     /* from the vDSO's start */
	char *name;
};

struct rec_vdso {
	uint64_t size;             /* of its code mapping; 0: no vDSO known */
	uint64_t sigreturn;        /* offset of the signal trampoline, 0 unknown */
	unsigned char build_id[20];
	size_t build_id_size;
	struct rec_vdso_symbol *symbols;
	size_t nsymbols, symbols_cap;
};

/* Read gcsprof's own vDSO into V (all zero when it has none). 0, or
 * GP_EXIT_SYSTEM. */
int rec_vdso_load(struct rec_vdso *v);
void rec_vdso_free(struct rec_vdso *v);
/* The "[vdso]" mapping of a process whose vDSO is at START, into *M
 * (pointing into V): 1, or 0 when START is 0 or no vDSO is known. */
int rec_vdso_mapping(const struct rec_vdso *v, uint64_t start, struct rec_mapping *m);

#endif
