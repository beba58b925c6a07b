// SPDX-License-Identifier: MIT
/*
 * libgcswalk: what the running kernel does with GCS beyond the ABI, read
 * from its sysctls.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* Where a kernel that takes perf's user call chains from the GCS says so
 * (this project's series; no upstream kernel has it yet). */
#define PERF_CALLCHAIN_SYSCTL "/proc/sys/kernel/perf_callchain_gcs"

int gcswalk_system_perf_callchains(void)
{
	char v = 0;
	int fd;

	fd = open(PERF_CALLCHAIN_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return GCSWALK_E_UNSUPPORTED;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	return v == '1' ? 1 : 0;
}

int gcswalk_system_perf_max_sample_rate(void)
{
	char buf[32];
	ssize_t n;
	long v;
	int fd;

	fd = open("/proc/sys/kernel/perf_event_max_sample_rate", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return GCSWALK_E_UNSUPPORTED;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return GCSWALK_E_IO;
	buf[n] = '\0';
	v = strtol(buf, NULL, 10);
	return v > 0 && v <= INT_MAX ? (int)v : GCSWALK_E_IO;
}
