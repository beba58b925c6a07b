/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz harnesses share. Each harness is one libFuzzer entry point
 * (LLVMFuzzerTestOneInput); built with clang's -fsanitize=fuzzer it is a
 * fuzzer (build/fuzz), built with replay.c it replays a corpus as a
 * regression test in the ordinary gcc builds.
 */
#ifndef GCSPROF_FUZZ_H
#define GCSPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "gcswalk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The readers under test take paths: write DATA to an in-memory file (one
 * memfd per process, rewritten for each input) and return a path that
 * opens it ("/proc/self/fd/N"), or NULL (the harness then gives up on
 * the input; this only happens when memory runs out).
 */
const char *fz_input_path(const void *data, size_t size);

/*
 * Whether PATH, a file name taken from the input (an NT_FILE entry, a
 * profile's mapping), may be opened by the symboliser: a file that does
 * not exist or a regular file. Devices, FIFOs and sockets of the host
 * could block or have side effects; real inputs never name them.
 */
int fz_path_is_harmless(const char *path);

/*
 * Everything a client does with an opened target: every thread's
 * information, walks with each method, the stack check, the mappings and
 * their lookup, reads, and a symboliser with a few addresses symbolised.
 * Results are only checked for consistency (a crash, a hang, a leak or a
 * sanitizer report is the failure being looked for).
 */
void fz_exercise_target(gcswalk_target *target);

#endif
