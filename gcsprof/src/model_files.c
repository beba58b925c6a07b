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

struct file_census {
	size_t files, missing, missing_with_id, differs;
	const char *missing_eg, *differs_eg;
};

/* Whether the profile was recorded on another machine than this one, as
 * far as it says (older files do not). */
static int recorded_elsewhere(const struct gp_model *m)
{
	char here[256];

	if (!*m->host || gethostname(here, sizeof(here)) != 0)
		return 0;
	here[sizeof(here) - 1] = '\0';
	return strcmp(here, m->host) != 0;
}

/* File I (used by samples, absolute): missing here, or another build? */
static void check_one(const struct gp_model *m, const unsigned char *used, size_t i,
		      const char *sysroot, struct file_census *c)
{
	const struct gp_mapping *mp = &m->mappings[i];
	unsigned char *id = NULL;
	size_t n = 0;
	char *local;

	if (asprintf(&local, "%s%s", sysroot ? sysroot : "", mp->file) < 0)
		return;
	c->files++;
	if (access(local, R_OK) != 0) {
		/* Found by its build-id elsewhere (debuginfod, a .build-id
		 * folder): its frames are named. */
		if (!*mp->build_id || !file_named(m, used, mp->file)) {
			if (!c->missing++)
				c->missing_eg = mp->file;
			if (*mp->build_id)
				c->missing_with_id++;
		}
	} else if (*mp->build_id) {
		if (gcswalk_file_build_id(local, &id, &n) != GCSWALK_OK)
			n = 0;
		if (n && !same_build_id(id, n, mp->build_id) && !c->differs++)
			c->differs_eg = mp->file;
		free(id);
	}
	free(local);
}

/* The census of the files samples use, each file once. */
static int census(const struct gp_model *m, const char *sysroot, struct file_census *c)
{
	const char **checked = calloc(m->nmappings + 1, sizeof(*checked));
	unsigned char *used = calloc(m->nmappings + 1, 1);
	size_t nchecked = 0, i, j;

	if (!checked || !used) {
		free(checked);
		free(used);
		return -1;
	}
	for (i = 0; i < m->nlocations; i++)
		if (m->locations[i].mapping_id)
			used[m->locations[i].mapping_id - 1] = 1;
	for (i = 0; i < m->nmappings; i++) {
		if (!used[i] || m->mappings[i].file[0] != '/')
			continue;
		for (j = 0; j < nchecked && checked[j] != m->mappings[i].file; j++)
			;
		if (j < nchecked)
			continue;      /* another mapping of a file already looked at */
		checked[nchecked++] = m->mappings[i].file;
		check_one(m, used, i, sysroot, c);
	}
	free(checked);
	free(used);
	return 0;
}

void gp_model_check_files(const struct gp_model *m, const char *sysroot)
{
	struct file_census c = { 0 };

	if (census(m, sysroot, &c) != 0)
		return;
	/* A profile from another machine reported without its files: one
	 * line for it all, with the fix. */
	if (!sysroot && c.missing + c.differs && recorded_elsewhere(m)) {
		gp_warn("this profile was recorded on %s%s%s%s, and %zu of the %zu files it names are "
			"not here or are other builds (e.g. %s): their frames show as [file+offset] "
			"or are misnamed; give --sysroot DIR, a copy of that machine's root (its / as "
			"a folder), or report a bundle made there with 'gcsprof archive'%s",
			m->host, *m->kernel ? " (Linux " : "",
			m->kernel, *m->kernel ? ")" : "", c.missing + c.differs, c.files,
			c.missing ? c.missing_eg : c.differs_eg, debuginfod_hint(c.missing_with_id));
		return;
	}
	if (c.missing && sysroot)
		gp_warn("%zu file(s) the profile names are not under --sysroot %s (e.g. %s%s): "
			"their frames show as [file+offset]%s", c.missing, sysroot, sysroot, c.missing_eg,
			debuginfod_hint(c.missing_with_id));
	else if (c.missing)
		gp_warn("%zu file(s) the profile names are not on this machine (e.g. %s): their "
			"frames show as [file+offset]; give --sysroot DIR, or report a bundle made "
			"with 'gcsprof archive' where it was recorded%s", c.missing, c.missing_eg,
			debuginfod_hint(c.missing_with_id));
	/* libgcswalk names frames from the file it finds, whatever its
	 * build-id: say what that means. */
	if (c.differs)
		gp_warn("%zu file(s) here are not the ones recorded (build-id mismatch, e.g. %s%s): "
			"their frames are still named from these files, and another build has other "
			"functions at those addresses, so those names are probably wrong; give the "
			"recorded files (--sysroot, or a bundle from 'gcsprof archive')", c.differs,
			sysroot ? sysroot : "", c.differs_eg);
}
