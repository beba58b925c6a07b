// SPDX-License-Identifier: MIT
/*
 * gcsprof archive [FILE] [-o DIR]: a bundle that reports anywhere, like
 * perf archive. DIR gets the profile (DIR/profile) and every file its
 * samples' mappings name, at its path under DIR/root, checked against the
 * build-id the recording saw. gcsprof report DIR reads the profile and
 * looks for the files under DIR/root, so an arm64 guest's profile reports
 * on an x86_64 host without a copy of the guest's root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"

struct archive_opts {
	const char *output;
	const char *sysroot;
};

#define OPT(field) offsetof(struct archive_opts, field)
static const struct gp_option archive_options[] = {
	{ "output", 'o', GP_OPT_STRING, OPT(output), "DIR", "the bundle (default FILE.archive)", 0,
	  0, NULL, 0 },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "take the recorded files from under DIR", 0, 0, NULL, 0 },
};
#undef OPT

/* mkdir -p of PATH's parent folders. */
static int make_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* Copy FROM to the new file TO. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		ssize_t done = 0;

		while (done < n) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w <= 0) {
				ret = -1;
				break;
			}
			done += w;
		}
		if (ret)
			break;
	}
	if (n < 0)
		ret = -1;
	if (close(out) != 0)
		ret = -1;
	close(in);
	return ret;
}

/* A path the bundle may hold: absolute, and never leaving its root. */
static int safe_path(const char *path)
{
	return path[0] == '/' && !strstr(path, "/../") &&
	       (strlen(path) < 3 || strcmp(path + strlen(path) - 3, "/..") != 0);
}

static int same_id(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
	return na == nb && memcmp(a, b, na) == 0;
}

static int archive_run(void *p, int argc, char **argv)
{
	const struct archive_opts *o = p;
	const char *file = argc > 0 ? argv[0] : "gcsprof.data", *missing_eg = NULL;
	const char *differs_eg = NULL;
	size_t i, j, copied = 0, missing = 0, differs = 0;
	struct gp_rprofile raw;
	char *dir = NULL, *dst = NULL;
	int ret;

	if (strcmp(file, "-") == 0)
		return gp_error(GP_EXIT_USAGE, "archive: give the profile's file (the bundle holds a "
				"copy), not standard input");
	if (o->sysroot) {
		char *abs;

		ret = gp_sysroot_resolve("archive", o->sysroot, &abs);
		free(abs);
		if (ret)
			return ret;
	}
	ret = gp_profile_read(&raw, file);
	if (ret == GP_EXIT_TRUNCATED)
		gp_profile_free(&raw);
	if (ret)
		return ret;
	if (o->output)
		dir = strdup(o->output);
	else if (asprintf(&dir, "%s.archive", file) < 0)
		dir = NULL;
	if (!dir) {
		gp_profile_free(&raw);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	if (mkdir(dir, 0755) != 0) {
		ret = gp_error(GP_EXIT_OUTPUT, "archive: cannot make %s: %s%s", dir, strerror(errno),
			       errno == EEXIST ? " (remove it, or give -o DIR)" : "");
		goto out;
	}
	if (asprintf(&dst, "%s/profile", dir) < 0 || copy_file(file, dst) != 0) {
		ret = gp_error(GP_EXIT_OUTPUT, "archive: cannot copy %s into %s: %s", file, dir,
			       strerror(errno));
		goto out;
	}
	for (i = 0; i < raw.nmappings; i++) {
		const struct gp_rmapping *m = &raw.mappings[i];
		unsigned char *id = NULL;
		char *src = NULL;
		size_t n;

		for (j = 0; j < i && strcmp(raw.mappings[j].path, m->path) != 0; j++)
			;
		if (j < i || !safe_path(m->path))
			continue;      /* done already, or not a file (the vDSO) */
		free(dst);
		dst = NULL;
		if (asprintf(&src, "%s%s", o->sysroot ? o->sysroot : "", m->path) < 0 ||
		    asprintf(&dst, "%s/root%s", dir, m->path) < 0) {
			free(src);
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
			goto out;
		}
		if (gcswalk_file_build_id(src, &id, &n) != GCSWALK_OK)
			n = 0;
		if (access(src, R_OK) != 0) {
			if (!missing++)
				missing_eg = m->path;
		} else if (m->build_id_size && !same_id(id, n, m->build_id, m->build_id_size)) {
			if (!differs++)
				differs_eg = m->path;
		} else if (make_parents(dst) != 0 || copy_file(src, dst) != 0) {
			ret = gp_error(GP_EXIT_OUTPUT, "archive: cannot write %s: %s", dst,
				       strerror(errno));
			free(id);
			free(src);
			goto out;
		} else {
			copied++;
		}
		free(id);
		free(src);
	}
	if (missing)
		gp_warn("archive: %zu file(s) the profile names are not here (e.g. %s%s): their "
			"frames will show as [file+offset]", missing, o->sysroot ? o->sysroot : "",
			missing_eg);
	if (differs)
		gp_warn("archive: %zu file(s) differ from the ones recorded (build-id mismatch, "
			"e.g. %s): left out", differs, differs_eg);
	/* Only a bundle with every file reports anywhere: say what this one
	 * holds. */
	if (!missing && !differs)
		printf("%s: the profile and the %zu file(s) it names; report it anywhere with: "
		       "gcsprof report %s\n", dir, copied, dir);
	else if (copied)
		printf("%s: the profile and %zu of the %zu file(s) it names; gcsprof report %s names "
		       "the frames in those, the others show as [file+offset]\n", dir, copied,
		       copied + missing + differs, dir);
	else
		printf("%s: the profile alone: none of the %zu file(s) it names %s (give --sysroot "
		       "DIR where they are), so gcsprof report %s can name no frame by these\n", dir,
		       missing + differs, missing ? "is here" : "matches the recorded one", dir);
	ret = fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
out:
	free(dst);
	free(dir);
	gp_profile_free(&raw);
	return ret;
}

const struct gp_command gp_cmd_archive = {
	.name = "archive",
	.synopsis = "[FILE]",
	.summary = "bundle a profile with the files it names, to report it on another machine",
	.options = archive_options,
	.noptions = sizeof(archive_options) / sizeof(archive_options[0]),
	.min_args = 0,
	.max_args = 1,
	.run = archive_run,
	.opts_size = sizeof(struct archive_opts),
	.init = NULL,
};
