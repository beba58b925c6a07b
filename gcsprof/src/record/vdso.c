// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the vDSO (vdso.h), read from gcsprof's own process.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"
#include "vdso.h"

/* Copy what libgcswalk read of our own vDSO into V. */
static int copy_vdso(struct rec_vdso *v, uint64_t image_size,
		     const struct gcswalk_elf_symbol *syms, size_t n, const unsigned char *id,
		     size_t id_size)
{
	size_t i;

	v->size = (image_size + 4095) & ~(uint64_t)4095;
	if (id && id_size <= sizeof(v->build_id)) {
		memcpy(v->build_id, id, id_size);
		v->build_id_size = id_size;
	}
	v->symbols = calloc(n ? n : 1, sizeof(*v->symbols));
	if (!v->symbols)
		return -1;
	v->symbols_cap = n;
	for (i = 0; i < n; i++) {
		struct rec_vdso_symbol *s = &v->symbols[v->nsymbols];

		if (!syms[i].name || !*syms[i].name)
			continue;
		s->name = strdup(syms[i].name);
		if (!s->name)
			return -1;
		s->offset = syms[i].offset;
		s->size = syms[i].size;
		v->nsymbols++;
		if (strcmp(s->name, "__kernel_rt_sigreturn") == 0)
			v->sigreturn = s->offset;
	}
	return 0;
}

int rec_vdso_load(struct rec_vdso *v)
{
	const struct gcswalk_elf_symbol *syms;
	const unsigned char *id;
	uint64_t start, image_size;
	size_t n, id_size;
	gcswalk_target *t = NULL;
	int ret = 0;

	memset(v, 0, sizeof(*v));
	/* Our own process, read without ptrace: its vDSO is every process's. */
	if (gcswalk_target_open_pid(&t, (int)getpid(), GCSWALK_ATTACH_NONE, 0, NULL) != GCSWALK_OK)
		return 0;
	if (gcswalk_target_vdso(t, &start, &image_size, &syms, &n, &id, &id_size) == GCSWALK_OK &&
	    copy_vdso(v, image_size, syms, n, id, id_size) != 0)
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
	gcswalk_target_close(t);
	return ret;
}

void rec_vdso_free(struct rec_vdso *v)
{
	size_t i;

	for (i = 0; i < v->nsymbols; i++)
		free(v->symbols[i].name);
	free(v->symbols);
	memset(v, 0, sizeof(*v));
}

int rec_vdso_mapping(const struct rec_vdso *v, uint64_t start, struct rec_mapping *m)
{
	if (!start || !v->size)
		return 0;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = start + v->size;
	m->path = (char *)GP_VDSO_PATH;
	m->build_id = v->build_id_size ? (unsigned char *)v->build_id : NULL;
	m->build_id_size = v->build_id_size;
	return 1;
}
