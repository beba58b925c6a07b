// SPDX-License-Identifier: MIT
/*
 * gcsprof record: how a launched command gets its shadow stack, and how to
 * tell a user whose process has none, on each architecture.
 *  - arm64: glibc 2.41+ turns GCS on by its tunable glibc.cpu.aarch64_gcs:
 *    --gcs-tunable N goes into GLIBC_TUNABLES.
 *  - riscv64: no glibc turns Zicfiss on yet (sid's 2.43 does not), and
 *    exec turns it off, so no launcher can: the command gets
 *    libgcsprof-shstk.so preloaded, whose constructor does what a loader
 *    would, told by GCSPROF_SHADOW_STACK=N the tunable's values
 *    (gcsprof/shstk/shstk-enable.c). A user's own choice, in either
 *    variable, is kept.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "env.h"

#define SHSTK_LIB "libgcsprof-shstk.so"

int rec_is_riscv(void)
{
	struct gcswalk_arch_info a = { .size = sizeof(a) };

	return gcswalk_system_arch(&a) == GCSWALK_OK && strcmp(a.name, "riscv64") == 0;
}

const char *rec_shadow_stack_name(void)
{
	return rec_is_riscv() ? "Zicfiss" : "GCS";
}

const char *rec_shadow_stack_hint(void)
{
	return rec_is_riscv() ? "GCSPROF_SHADOW_STACK=3 LD_PRELOAD=" SHSTK_LIB " (gcsprof's lib/), or "
			    "link it with gcsprof-shstk.o"
			  : "GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 (or a GCS-marked build)";
}

/* gcsprof's own lib/ folder: the enabler's, beside the executable's bin/. */
static char *shstk_library(void)
{
	char exe[PATH_MAX], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (asprintf(&path, "%s/../lib/%s", exe, SHSTK_LIB) < 0)
		return NULL;
	if (access(path, R_OK) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

static int env_add(struct rec_env *e, const char *name, char *value)
{
	if (!value)
		return -1;
	e->name[e->n] = name;
	e->value[e->n++] = value;
	return 0;
}

/* riscv64: the enabler preloaded, before what the user preloads. */
static int riscv_env(struct rec_env *e, const char *tunable)
{
	const char *cur = getenv("LD_PRELOAD");
	char *lib, *v;

	if (getenv("GCSPROF_SHADOW_STACK") || strcmp(tunable, "0") == 0)
		return 0;               /* the user chose */
	lib = shstk_library();
	if (!lib) {
		gp_warn("record: no %s beside gcsprof: the command starts without Zicfiss",
			SHSTK_LIB);
		return 0;
	}
	if (asprintf(&v, "%s%s%s", lib, cur && *cur ? ":" : "", cur ? cur : "") < 0)
		v = NULL;
	free(lib);
	if (env_add(e, "LD_PRELOAD", v) != 0 || env_add(e, "GCSPROF_SHADOW_STACK", strdup(tunable)))
		return -1;
	return 0;
}

/* arm64: the tunable, after the user's other tunables. */
static int arm64_env(struct rec_env *e, const char *tunable)
{
	const char *cur = getenv("GLIBC_TUNABLES");
	char *s;

	if (cur && strstr(cur, "glibc.cpu.aarch64_gcs"))
		return 0;               /* the user chose */
	if (asprintf(&s, "%s%sglibc.cpu.aarch64_gcs=%s", cur ? cur : "", cur && *cur ? ":" : "",
		     tunable) < 0)
		s = NULL;
	return env_add(e, "GLIBC_TUNABLES", s);
}

int rec_env_for_command(struct rec_env *e, const char *tunable)
{
	int ret;

	memset(e, 0, sizeof(*e));
	ret = rec_is_riscv() ? riscv_env(e, tunable) : arm64_env(e, tunable);
	if (ret) {
		rec_env_free(e);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	return 0;
}

void rec_env_apply(const struct rec_env *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		(void)setenv(e->name[i], e->value[i], 1);
}

void rec_env_free(struct rec_env *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->value[i]);
	e->n = 0;
}
