// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: how deep a chain the kernel may hand over.
 *
 * The kernel cuts each user chain at the event's sample_max_stack, which
 * may not exceed kernel.perf_event_max_stack (127 by default); left at 0
 * it is the sysctl's value, truncated to the field's 16 bits. A sample
 * record must also fit in 64 KiB (its size field is 16 bits, and the
 * kernel does not check a call chain against it: a deeper one would be
 * written with a wrong size). gcsprof asks for the deepest chain both
 * allow, and, knowing the limit, marks a chain that reached it as cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcsprof.h"
#include "perf.h"

#define MAX_STACK_SYSCTL "/proc/sys/kernel/perf_event_max_stack"

/*
 * The words of a sample record (perf_events.c's fill_attr) other than the
 * chain's frames: the header, ip, pid and tid, time, id, cpu, period,
 * the chain's length and its one context marker (PERF_CONTEXT_USER: no
 * kernel chain is asked for), the user registers' ABI and the registers
 * (perf_user_regs(): arm64's GCSPR; riscv64's ra and ssp).
 */
static int sample_fixed_words(void)
{
	return 10 + __builtin_popcountll(perf_user_regs()->mask);
}

#define RECORD_MAX_FRAMES (UINT16_MAX / 8 - sample_fixed_words())

/* The sysctl's value, or -1 (with errno) when it cannot be read. */
static long read_max_stack(void)
{
	char buf[32], *end;
	ssize_t n;
	long v;
	int fd = open(MAX_STACK_SYSCTL, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = EIO;
		return -1;
	}
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || v < 0) {
		errno = EINVAL;
		return -1;
	}
	return v;
}

unsigned perf_max_stack(const char **by)
{
	long v = read_max_stack();

	*by = PERF_MAX_STACK_BY_SYSCTL;
	if (v < 0) {
		/* Without /proc the kernel's own default applies, and a cut
		 * chain cannot be told from a whole one. */
		gp_warn("cannot read %s (%s): chains deeper than the kernel's limit are cut "
			"without a mark", MAX_STACK_SYSCTL, strerror(errno));
		return 0;
	}
	if (v > RECORD_MAX_FRAMES) {
		gp_warn("kernel.perf_event_max_stack is %ld, more than a perf sample holds: chains "
			"are cut at %d frames (--method ptrace records them whole)", v,
			RECORD_MAX_FRAMES);
		*by = PERF_MAX_STACK_BY_RECORD;
		return RECORD_MAX_FRAMES;
	}
	if (v == 0)
		gp_warn("kernel.perf_event_max_stack is 0: the kernel gives no call chains");
	return (unsigned)v;
}

size_t perf_sample_bytes(unsigned max_stack)
{
	/* The kernel's own default limit when none is known. */
	return 8 * ((size_t)(max_stack ? max_stack : 127) + (size_t)sample_fixed_words());
}
