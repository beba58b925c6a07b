// SPDX-License-Identifier: MIT
/* Error reporting, checked output, small helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gcswalk.h>

#include "gcsprof.h"

int gp_error(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("gcsprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

void gp_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("gcsprof: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int gp_exit_for_gcswalk(int status)
{
	switch (status) {
	case GCSWALK_E_NO_PROCESS:
	case GCSWALK_E_THREAD_GONE:
		return GP_EXIT_NO_PROCESS;
	case GCSWALK_E_PERMISSION:
		return GP_EXIT_PERMISSION;
	case GCSWALK_E_BUSY:
		return GP_EXIT_BUSY;
	case GCSWALK_E_NO_GCS_CPU:
		return GP_EXIT_KERNEL_NO_GCS;
	case GCSWALK_E_GCS_DISABLED:
		return GP_EXIT_TARGET_NO_GCS;
	case GCSWALK_E_UNSUPPORTED:
		return GP_EXIT_UNSUPPORTED;
	case GCSWALK_E_IO:
		return GP_EXIT_INPUT;
	case GCSWALK_E_NOT_CORE:
	case GCSWALK_E_WRONG_ARCH:
		return GP_EXIT_BAD_CORE;
	case GCSWALK_E_CORRUPT:
		return GP_EXIT_TRUNCATED;
	default:
		return GP_EXIT_SYSTEM;
	}
}

int gp_out_open(struct gp_out *out, const char *path)
{
	memset(out, 0, sizeof(*out));
	if (!path || strcmp(path, "-") == 0) {
		out->fp = stdout;
		out->name = "standard output";
		out->is_stdout = 1;
		return 0;
	}
	out->fp = fopen(path, "w");
	out->name = path;
	if (!out->fp)
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int gp_out_close(struct gp_out *out)
{
	int bad;

	if (!out->fp)
		return 0;
	bad = ferror(out->fp) != 0;
	if (out->is_stdout)
		bad |= fflush(out->fp) != 0;
	else
		bad |= fclose(out->fp) != 0;
	out->fp = NULL;
	if (bad)
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", out->name,
				errno ? strerror(errno) : "write error");
	return 0;
}

int gp_looks_like_profile(const char *path)
{
	static const char magic[] = "gcsprof-profile ";
	char head[sizeof(magic)] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(head, 1, sizeof(magic) - 1, f);
	fclose(f);
	return n == sizeof(magic) - 1 && memcmp(head, magic, n) == 0;
}

void *gp_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return ptr;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return NULL;
		n *= 2;
	}
	p = realloc(ptr, n * elem);
	if (p)
		*cap = n;
	return p;
}

int gp_sysroot_resolve(const char *cmd, const char *dir, char **abs)
{
	struct stat st;

	*abs = NULL;
	if (stat(dir, &st) != 0)
		return gp_error(GP_EXIT_INPUT, "%s: --sysroot %s: %s", cmd, dir,
				errno == ENOENT ? "no such folder" : strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gp_error(GP_EXIT_INPUT, "%s: --sysroot %s: not a folder", cmd, dir);
	/* Absolute: libdwfl reads a relative debug folder as relative to
	 * each file's own folder, and would miss SYSROOT/usr/lib/debug. */
	*abs = realpath(dir, NULL);
	if (!*abs)
		return gp_error(GP_EXIT_INPUT, "%s: --sysroot %s: %s", cmd, dir, strerror(errno));
	return 0;
}
