// SPDX-License-Identifier: MIT
/* The table of statuses and their messages, and per-target error detail. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct {
	int status;
	const char *text;
} statuses[] = {
	{ GCSWALK_OK, "success" },
	{ GCSWALK_END, "end of stack" },
	{ GCSWALK_CUT, "chain cut at the depth limit" },
	{ GCSWALK_E_NOMEM, "out of memory" },
	{ GCSWALK_E_INVALID, "invalid argument" },
	{ GCSWALK_E_UNSUPPORTED, "not supported on this build or host" },
	{ GCSWALK_E_NO_GCS_CPU, "the CPU or kernel has no Guarded Control Stack" },
	{ GCSWALK_E_GCS_DISABLED, "GCS is not enabled for this thread" },
	{ GCSWALK_E_NO_PROCESS, "no such process" },
	{ GCSWALK_E_THREAD_GONE, "the thread or process exited" },
	{ GCSWALK_E_PERMISSION, "permission denied: may not trace the target" },
	{ GCSWALK_E_BUSY, "the target is already traced" },
	{ GCSWALK_E_NOT_STOPPED, "the thread is not ptrace-stopped" },
	{ GCSWALK_E_TIMEOUT, "the thread did not stop in time" },
	{ GCSWALK_E_IO, "cannot read the file or memory" },
	{ GCSWALK_E_NOT_CORE, "not an ELF core file" },
	{ GCSWALK_E_WRONG_ARCH, "unsupported architecture" },
	{ GCSWALK_E_CORRUPT, "truncated or corrupt core file" },
	{ GCSWALK_E_NO_GCS_NOTE, "no GCS note for this thread in the core" },
	{ GCSWALK_E_GCS_NOT_DUMPED, "the GCS is not in the dumped memory" },
	{ GCSWALK_E_NO_REGISTERS, "the thread's registers are not available" },
	{ GCSWALK_E_NO_SYMBOL, "no module or symbol at this address" },
	{ GCSWALK_E_DWFL, "elfutils libdwfl failed" },
	{ GCSWALK_E_SYSTEM, "system call failed" },
	{ GCSWALK_E_NO_SIGNAL, "the core records no signal" },
};

const char *gcswalk_strerror(int status)
{
	size_t i;

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].status == status)
			return statuses[i].text;
	return "unknown status";
}

static int vfail(struct gcswalk_target *t, int status, const char *suffix, const char *fmt,
		 va_list ap)
{
	va_list ap2;
	char *msg;
	int n;

	if (!t)
		return status;
	free(t->errmsg);
	t->errmsg = NULL;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return status;
	msg = malloc((size_t)n + strlen(suffix) + 1);
	if (!msg)
		return status;
	if (vsnprintf(msg, (size_t)n + 1, fmt, ap) < 0) {
		free(msg);
		return status;
	}
	memcpy(msg + n, suffix, strlen(suffix) + 1);
	t->errmsg = msg;
	return status;
}

int gw_fail(struct gcswalk_target *t, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(t, status, "", fmt, ap);
	va_end(ap);
	return status;
}

int gw_fail_errno(struct gcswalk_target *t, int status, int err, const char *fmt, ...)
{
	const char *e = strerror(err);
	char *suffix;
	va_list ap;

	suffix = malloc(strlen(e) + 3);
	if (!suffix)
		return status;
	memcpy(suffix, ": ", 2);
	memcpy(suffix + 2, e, strlen(e) + 1);
	va_start(ap, fmt);
	vfail(t, status, suffix, fmt, ap);
	va_end(ap);
	free(suffix);
	return status;
}

void gw_clear_error(struct gcswalk_target *t)
{
	if (t) {
		free(t->errmsg);
		t->errmsg = NULL;
	}
}

const char *gcswalk_target_errmsg(const gcswalk_target *t)
{
	return t && t->errmsg ? t->errmsg : "";
}
