// SPDX-License-Identifier: MIT
/*
 * Are the files a profile names here? A report made elsewhere than the
 * recording (another machine, a wrong --sysroot, a program rebuilt since)
 * would otherwise name their frames [file+offset] without saying why. One
 * line per cause, with an example, for the files that samples use. A
 * missing file that libgcswalk found by its recorded build-id (debuginfod,
 * a .build-id folder) named its frames: nothing to say about it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcswalk.h>

#include "model.h"

/* Hex of SIZE bytes, as the model keeps build-ids. */
static int same_build_id(const unsigned char *id, size_t size, const char *hex)
{
	size_t i;

	if (strlen(hex) != 2 * size)
		return 0;
	for (i = 0; i < size; i++) {
		static const char digits[] = "0123456789abcdef";

		if (hex[2 * i] != digits[id[i] >> 4] || hex[2 * i + 1] != digits[id[i] & 15])
			return 0;
	}
	return 1;
}

/* Whether some used mapping of FILE (interned) got function names. */
static int file_named(const struct gp_model *m, const unsigned char *used, const char *file)
{
	size_t i;

	for (i = 0; i < m->nmappings; i++)
		if (used[i] && m->mappings[i].file == file && m->mappings[i].has_functions)
			return 1;
	return 0;
}

/* What a missing file with a build-id can still get: debuginfod. */
static const char *debuginfod_hint(size_t missing_with_id)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!missing_with_id)
		return "";
	if (urls && *urls)
		return " (DEBUGINFOD_URLS is set: debuginfod did not have them either)";
	return "; or set DEBUGINFOD_URLS to fetch them from debuginfod by build-id";
}

void gp_model_check_files(const struct gp_model *m, const char *sysroot)
{
	const char **checked = calloc(m->nmappings + 1, sizeof(*checked));
	unsigned char *used = calloc(m->nmappings + 1, 1);
	const char *missing_eg = NULL, *differs_eg = NULL;
	size_t nchecked = 0, missing = 0, missing_with_id = 0, differs = 0, i, j;

	if (!checked || !used) {
		free(checked);
		free(used);
		return;
	}
	for (i = 0; i < m->nlocations; i++)
		if (m->locations[i].mapping_id)
			used[m->locations[i].mapping_id - 1] = 1;
	for (i = 0; i < m->nmappings; i++) {
		const struct gp_mapping *mp = &m->mappings[i];
		char *local;

		if (!used[i] || mp->file[0] != '/')
			continue;
		for (j = 0; j < nchecked && checked[j] != mp->file; j++)
			;
		if (j < nchecked)
			continue;      /* another mapping of a file already looked at */
		checked[nchecked++] = mp->file;
		if (asprintf(&local, "%s%s", sysroot ? sysroot : "", mp->file) < 0)
			break;
		if (access(local, R_OK) != 0) {
			/* Found by its build-id elsewhere (debuginfod, a
			 * .build-id folder): its frames are named. */
			if (*mp->build_id && file_named(m, used, mp->file)) {
				free(local);
				continue;
			}
			if (!missing++)
				missing_eg = mp->file;
			if (*mp->build_id)
				missing_with_id++;
		} else if (*mp->build_id) {
			unsigned char *id = NULL;
			size_t n = 0;

			if (gcswalk_file_build_id(local, &id, &n) != GCSWALK_OK)
				n = 0;

			if (n && !same_build_id(id, n, mp->build_id) && !differs++)
				differs_eg = mp->file;
			free(id);
		}
		free(local);
	}
	if (missing && sysroot)
		gp_warn("%zu file(s) the profile names are not under --sysroot %s (e.g. %s%s): "
			"their frames show as [file+offset]%s", missing, sysroot, sysroot, missing_eg,
			debuginfod_hint(missing_with_id));
	else if (missing)
		gp_warn("%zu file(s) the profile names are not on this machine (e.g. %s): their "
			"frames show as [file+offset]; give --sysroot DIR, or report a bundle made "
			"with 'gcsprof archive' where it was recorded%s", missing, missing_eg,
			debuginfod_hint(missing_with_id));
	if (differs)
		gp_warn("%zu file(s) differ from the ones recorded (build-id mismatch, e.g. %s%s): "
			"their frames may be misnamed", differs, sysroot ? sysroot : "", differs_eg);
	free(checked);
	free(used);
}
