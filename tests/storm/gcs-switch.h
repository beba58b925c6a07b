/* SPDX-License-Identifier: MIT */
/*
 * Stack switches for the sampling storm, in assembly so that exactly
 * which instructions sit between GCSSS1 and GCSSS2 is known (gcs-switch.c).
 */
#ifndef GCSPROF_STORM_GCS_SWITCH_H
#define GCSPROF_STORM_GCS_SWITCH_H

#include <stdint.h>

/* Switch to the GCS whose cap token is at CAP, call FN(ARG) there, and
 * switch back. */
void storm_call_on_gcs(uint64_t *cap, void (*fn)(void *), void *arg);

/*
 * GCSSS1 to the GCS whose cap token is at CAP, then, before GCSSS2: SPINS
 * turns of a loop (storm_window_spin .. storm_window_spin_end), then a
 * call of storm_window_leaf(LEAF_SPINS), which spins as long; then GCSSS2
 * and the switch back. A sample in the loop must have the chain [PC] and
 * GCSPR_EL0 == CAP (the in-progress cap ends the walk); one in the leaf
 * [PC, storm_window_ret] and GCSPR_EL0 == CAP - 8.
 */
void storm_window(uint64_t *cap, uint64_t spins, uint64_t leaf_spins);

/* Code labels of storm_window(), for telling where a sample landed. */
extern const char storm_window_spin[], storm_window_spin_end[], storm_window_ret[];
extern const char storm_window_leaf[], storm_window_leaf_end[];
extern const char storm_call_on_gcs_end[];

#endif
