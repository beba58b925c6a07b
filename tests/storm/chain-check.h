/* SPDX-License-Identifier: MIT */
/*
 * Is a user call chain the kernel returned for a thread of this process
 * one that its GCS can have held? The PC lies in executable memory; each
 * later entry is a return address: it follows a call instruction (BL,
 * BLR, BLRAA...) in executable memory, or it is the signal trampoline's
 * address in the vDSO; and a chain shorter than the limit ends where a
 * GCS walk can end: at a root. libc is one (it called each thread's
 * function); the program adds the others (the return into main() of the
 * main thread, whose GCS started there; the return into a switch routine,
 * under a switched-to GCS's marker or an in-progress cap).
 */
#ifndef GCSPROF_STORM_CHAIN_CHECK_H
#define GCSPROF_STORM_CHAIN_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Read /proc/self/maps: 0, or -1. Again after dlopen. */
int storm_maps_load(void);

/* Add the return addresses [LO, HI) as roots: 0, or -1 if full. */
int storm_chain_add_root(uint64_t lo, uint64_t hi);

/*
 * Check CHAIN (N entries, the PC first) against the rules; LIMIT is the
 * most entries the kernel may give. NULL if it is fine, else why not (a
 * static string).
 */
const char *storm_chain_check(const uint64_t *chain, uint64_t n, uint64_t limit);

#endif
