// SPDX-License-Identifier: MIT
/*
 * abuse-map_shadow_stack: map_shadow_stack(addr, size, flags) with every
 * kind of bad size, address, alignment and flag, each with the errno it
 * must fail with; and the good combinations, each with the exact layout
 * of the top of the new stack (cap token, top marker) it must have.
 *
 * Needs no GCS of its own: map_shadow_stack() is for making new ones.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "abuse.h"

#define TOKEN SHADOW_STACK_SET_TOKEN
#define MARKER SHADOW_STACK_SET_MARKER

enum where { ANY, FIXED_FREE, ON_MAPPING, ABOVE_TASK, KERNEL, MISALIGNED };

struct mss_case {
	const char *name;
	enum where where;
	uint64_t size;
	uint64_t flags;
	int want_errno;   /* 0: must succeed */
};

/* A free, page-aligned address (and a mapped one) for the fixed cases. */
static uint64_t free_addr, mapped_addr;

static uint64_t address(enum where w)
{
	switch (w) {
	case ANY:
		return 0;
	case FIXED_FREE:
		return free_addr;
	case ON_MAPPING:
		return mapped_addr;
	case ABOVE_TASK:
		return 1ULL << 60;
	case KERNEL:
		return 0xffff800000000000ULL;
	case MISALIGNED:
		return free_addr + 8;
	}
	return 0;
}

/* The top of a stack just made: what the flags promise, nothing else. */
static int layout_ok(uint64_t addr, uint64_t size, uint64_t flags)
{
	const uint64_t *top = (const uint64_t *)(uintptr_t)(addr + size) - 1;
	uint64_t lo = 0, hi = 0;

	if (abuse_mapping(getpid(), addr, &lo, &hi) || lo != addr || hi != ((addr + size + 4095) & ~4095ULL)) {
		tap_diag("  mapping %#llx-%#llx for %#llx+%#llx", (unsigned long long)lo,
			 (unsigned long long)hi, (unsigned long long)addr, (unsigned long long)size);
		return 0;
	}
	tap_diag("  top entries %#llx %#llx", (unsigned long long)top[0],
		 (unsigned long long)top[-1]);
	if (!(flags & TOKEN))
		return top[0] == 0 && top[-1] == 0;
	if (flags & MARKER)
		return top[0] == 0 && top[-1] == (((uint64_t)(uintptr_t)&top[-1] & ~0xfffULL) | 1);
	return top[0] == (((uint64_t)(uintptr_t)top & ~0xfffULL) | 1);
}

static void run_mss_case(const struct mss_case *c)
{
	uint64_t want_addr = address(c->where);
	long r;
	int err, ok;

	if (abuse_filtered(c->name))
		return;
	errno = 0;
	r = syscall(NR_map_shadow_stack, want_addr, c->size, c->flags);
	err = r < 0 ? errno : 0;
	tap_diag("%s: map_shadow_stack(%#llx, %#llx, %#llx) = %s", c->name,
		 (unsigned long long)want_addr, (unsigned long long)c->size,
		 (unsigned long long)c->flags, r < 0 ? strerror(err) : "an address");
	if (c->want_errno) {
		ok = r == -1 && err == c->want_errno;
		if (!ok)
			tap_diag("  expected %s", strerror(c->want_errno));
	} else {
		ok = r > 0 && (!want_addr || (uint64_t)r == want_addr) &&
		     layout_ok((uint64_t)r, c->size, c->flags);
	}
	if (r > 0)
		munmap((void *)r, c->size);
	tap_result(ok, c->name);
}

int main(void)
{
	const struct mss_case cases[] = {
		/* Sizes. */
		{ "size 0", ANY, 0, 0, EINVAL },
		{ "size 4 (not a multiple of 8)", ANY, 4, 0, EINVAL },
		{ "size 8 (room for a token only)", ANY, 8, 0, EINVAL },
		{ "size 12 (not a multiple of 8)", ANY, 12, 0, EINVAL },
		{ "size 4097 (not a multiple of 8)", ANY, 4097, 0, EINVAL },
		{ "size 2^64-8 (page rounding overflows)", ANY, ~7ULL, 0, EOVERFLOW },
		{ "size 2^62 (more than the address space)", ANY, 1ULL << 62, 0, ENOMEM },
		/* Addresses. */
		{ "address not page aligned", MISALIGNED, 4096, 0, EINVAL },
		{ "address on an existing mapping", ON_MAPPING, 4096, 0, EEXIST },
		{ "address above TASK_SIZE", ABOVE_TASK, 4096, 0, ENOMEM },
		{ "kernel address", KERNEL, 4096, 0, ENOMEM },
		/* Flags. */
		{ "unknown flag bit 2", ANY, 4096, 1ULL << 2, EINVAL },
		{ "unknown flag bit 31", ANY, 4096, 1ULL << 31, EINVAL },
		{ "all flag bits", ANY, 4096, 0xffffffffULL, EINVAL },
		{ "TOKEN with an unknown flag", ANY, 4096, TOKEN | (1ULL << 5), EINVAL },
		/* What must work, and how the top of the stack looks. */
		{ "no flags: top entry 0", ANY, 4096, 0, 0 },
		{ "TOKEN: a cap token at the top", ANY, 4096, TOKEN, 0 },
		{ "TOKEN|MARKER: a 0 marker, the cap token below it", ANY, 4096, TOKEN | MARKER, 0 },
		{ "MARKER alone: no token, top 0", ANY, 4096, MARKER, 0 },
		{ "size 16 with TOKEN", ANY, 16, TOKEN, 0 },
		{ "size 4096+24 with TOKEN: rounded up, token at addr+size-8", ANY, 4096 + 24, TOKEN, 0 },
		{ "a free fixed address is honoured", FIXED_FREE, 8192, TOKEN, 0 },
	};
	void *m;
	size_t i;

	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	/* A free address: one just unmapped; a mapped one: kept mapped. */
	m = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m, 1 << 20)) {
		tap_print("Bail out! mmap: %s\n", strerror(errno));
		exit(TAP_EXIT_FAIL);
	}
	free_addr = (uint64_t)(uintptr_t)m;
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		tap_print("Bail out! mmap: %s\n", strerror(errno));
		exit(TAP_EXIT_FAIL);
	}
	mapped_addr = (uint64_t)(uintptr_t)m;
	tap_plan((int)(sizeof(cases) / sizeof(cases[0])));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_mss_case(&cases[i]);
	tap_finish();
}
