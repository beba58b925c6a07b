// SPDX-License-Identifier: MIT
/*
 * Targets made of mappings only, for symbolising addresses that were
 * recorded earlier, elsewhere (a profile recorded in the guest and read on
 * the host): no threads, no memory, just the file mappings of one address
 * space, enough for gcswalk_symbolizer_new(). Added for gcsprof report.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int mappings_read(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len,
			 size_t *got)
{
	(void)buf;
	(void)len;
	*got = 0;
	return gw_fail(t, GCSWALK_E_IO, "no memory at %#llx: a target of mappings only",
		       (unsigned long long)addr);
}

static int mappings_region(struct gcswalk_target *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	(void)lo;
	(void)hi;
	return gw_fail(t, GCSWALK_E_GCS_NOT_DUMPED, "no memory at %#llx: a target of mappings only",
		       (unsigned long long)addr);
}

static const struct gw_backend mappings_backend = {
	.name = "mappings",
	.read = mappings_read,
	.region = mappings_region,
	.check_thread = NULL,
	.close = NULL,
	.no_gcs_status = GCSWALK_E_NO_GCS_NOTE,
	.no_gcs_detail = "a target of mappings only",
};

int gcswalk_target_open_mappings(gcswalk_target **out, int pid,
				 const struct gcswalk_mapping *mappings, size_t count,
				 char **errmsg)
{
	struct gcswalk_target *t;
	size_t i;
	int ret = GCSWALK_OK;

	if (errmsg)
		*errmsg = NULL;
	if (out)
		*out = NULL;
	if (!out || (!mappings && count))
		return GCSWALK_E_INVALID;
	t = gw_target_alloc(&mappings_backend);
	if (!t)
		return GCSWALK_E_NOMEM;
	t->pid = pid;
	for (i = 0; i < count && ret == GCSWALK_OK; i++) {
		const struct gcswalk_mapping *m = &mappings[i];

		if (!m->path || m->end <= m->start) {
			ret = gw_fail(t, GCSWALK_E_INVALID, "mapping %zu: no path or empty range", i);
			break;
		}
		ret = gw_target_add_mapping(t, m->start, m->end, m->offset, m->path, strlen(m->path));
		if (ret < 0)
			ret = gw_fail(t, ret, "out of memory");
	}
	return gw_target_opened(t, ret, out, errmsg);
}
