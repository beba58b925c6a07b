/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the environment a launched command gets for
 * --gcs-tunable (arm64: GLIBC_TUNABLES; riscv64: the preloaded
 * libgcsprof-shstk.so and GCSPROF_SHADOW_STACK), made in the parent,
 * applied in the child; and the words for a process without a shadow
 * stack: its name ("GCS", "Zicfiss") and how to start one with it.
 */
#ifndef GCSPROF_RECORD_ENV_H
#define GCSPROF_RECORD_ENV_H

#include <stddef.h>

struct rec_env {
	const char *name[2];
	char *value[2];
	size_t n;
};

/* 0, or an exit status (one line said). */
int rec_env_for_command(struct rec_env *e, const char *tunable);
void rec_env_apply(const struct rec_env *e);
void rec_env_free(struct rec_env *e);
/* Is this machine riscv64 (the shadow stack Zicfiss), not arm64 (GCS)? */
int rec_is_riscv(void);
const char *rec_shadow_stack_name(void);
const char *rec_shadow_stack_hint(void);

#endif
