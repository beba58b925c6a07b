// SPDX-License-Identifier: MIT
/*
 * no-gcs: where GCS is absent (a CPU without FEAT_GCS, or a kernel booted
 * with arm64.nogcs) the ABI must say so cleanly: no HWCAP_GCS, no "gcs" in
 * /proc/cpuinfo, the shadow stack prctls fail with EINVAL, and
 * map_shadow_stack fails with EOPNOTSUPP, with nothing crashing.
 *
 * Usage: no-gcs [--kernel-has-gcs]
 * Without --kernel-has-gcs (a kernel built without GCS support at all)
 * map_shadow_stack may also be missing (ENOSYS).
 *
 * Skips (exit 4) where GCS is present: it tests its absence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../gcs-abi.h"
#include "../tap.h"

/* Does the "Features" line of /proc/cpuinfo list "gcs"? -1 if unreadable. */
static int cpuinfo_has_gcs(void)
{
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return -1;
	while (!found && getline(&line, &cap, f) > 0) {
		char *tok, *save = NULL;

		if (strncmp(line, "Features", 8) != 0)
			continue;
		for (tok = strtok_r(line, " \t\n:", &save); tok; tok = strtok_r(NULL, " \t\n:", &save))
			if (strcmp(tok, "gcs") == 0)
				found = 1;
	}
	free(line);
	fclose(f);
	return found;
}

static void expect_errno(const char *name, long ret, int err, int want, int also)
{
	int ok = ret == -1 && (err == want || (also && err == also));

	if (!ok)
		tap_diag("%s: returned %ld, errno %d (%s)", name, ret, err, strerror(err));
	tap_result(ok, name);
}

int main(int argc, char **argv)
{
	int kernel_has_gcs = argc > 1 && strcmp(argv[1], "--kernel-has-gcs") == 0;
	unsigned long mode = 0;
	long ret;

	if (getauxval(AT_HWCAP) & HWCAP_GCS)
		tap_skip_all("HWCAP_GCS is set: this test is for machines without GCS");
	tap_plan(6);
	tap_result(1, "no HWCAP_GCS in AT_HWCAP");
	tap_result(cpuinfo_has_gcs() == 0, "no gcs in /proc/cpuinfo Features");

	errno = 0;
	ret = prctl(PR_GET_SHADOW_STACK_STATUS, &mode, 0, 0, 0);
	expect_errno("PR_GET_SHADOW_STACK_STATUS fails with EINVAL", ret, errno, EINVAL, 0);
	errno = 0;
	ret = prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE, 0, 0, 0);
	expect_errno("PR_SET_SHADOW_STACK_STATUS(ENABLE) fails with EINVAL", ret, errno, EINVAL, 0);
	errno = 0;
	ret = prctl(PR_LOCK_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE, 0, 0, 0);
	expect_errno("PR_LOCK_SHADOW_STACK_STATUS fails with EINVAL", ret, errno, EINVAL, 0);
	errno = 0;
	ret = syscall(NR_map_shadow_stack, 0UL, 4096UL, SHADOW_STACK_SET_TOKEN);
	expect_errno(kernel_has_gcs ? "map_shadow_stack fails with EOPNOTSUPP"
				    : "map_shadow_stack fails with EOPNOTSUPP or ENOSYS",
		     ret, errno, EOPNOTSUPP, kernel_has_gcs ? 0 : ENOSYS);
	tap_finish();
}
