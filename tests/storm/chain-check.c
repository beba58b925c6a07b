// SPDX-License-Identifier: MIT
/* Checks of user call chains against this process's memory: chain-check.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain-check.h"

struct xmap {
	uint64_t lo, hi;
	int vdso, libc;
};

/* Executable mappings: a process has a handful; 64 is plenty. */
#define MAX_XMAPS 64
static struct xmap xmaps[MAX_XMAPS];
static int nxmaps;

int storm_maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -1;
	nxmaps = 0;
	while (getline(&line, &cap, f) > 0 && nxmaps < MAX_XMAPS) {
		unsigned long long lo, hi;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		xmaps[nxmaps].lo = lo;
		xmaps[nxmaps].hi = hi;
		xmaps[nxmaps].vdso = strstr(line, "[vdso]") != NULL;
		xmaps[nxmaps].libc = strstr(line, "/libc.so") != NULL;
		nxmaps++;
	}
	free(line);
	fclose(f);
	return nxmaps ? 0 : -1;
}

static const struct xmap *find(uint64_t addr)
{
	for (int i = 0; i < nxmaps; i++)
		if (addr >= xmaps[i].lo && addr < xmaps[i].hi)
			return &xmaps[i];
	return NULL;
}

/* BL imm26; BLR Xn; BLRAA, BLRAB, BLRAAZ, BLRABZ Xn. */
static int is_call(uint32_t insn)
{
	return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u ||
	       (insn & 0xfefff800u) == 0xd63f0800u;
}

static int is_return_address(uint64_t a)
{
	const struct xmap *m = find(a);

	if (!m || (a & 3))
		return 0;
	if (m->vdso)
		return 1; /* the signal trampoline: no call precedes it */
	if (a - 4 < m->lo)
		return 0;
	return is_call(*(const uint32_t *)(uintptr_t)(a - 4));
}

/* Where a walk may stop short of the limit, besides libc (chain-check.h). */
#define MAX_ROOTS 8
static uint64_t roots[MAX_ROOTS][2];
static int nroots;

int storm_chain_add_root(uint64_t lo, uint64_t hi)
{
	if (nroots == MAX_ROOTS)
		return -1;
	roots[nroots][0] = lo;
	roots[nroots][1] = hi;
	nroots++;
	return 0;
}

static int is_root(uint64_t a)
{
	const struct xmap *m = find(a);

	if (m && m->libc)
		return 1;
	for (int i = 0; i < nroots; i++)
		if (a >= roots[i][0] && a < roots[i][1])
			return 1;
	return 0;
}

const char *storm_chain_check(const uint64_t *chain, uint64_t n, uint64_t limit)
{
	if (n == 0)
		return "no user chain";
	if (n > limit)
		return "longer than the limit";
	if (!find(chain[0]))
		return "PC outside executable memory";
	for (uint64_t i = 1; i < n; i++)
		if (!is_return_address(chain[i]))
			return "an entry that is not a return address";
	if (n > 1 && n < limit && !is_root(chain[n - 1]))
		return "ends short of the limit, but not at a root";
	return NULL;
}
