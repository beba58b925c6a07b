/* SPDX-License-Identifier: MIT */
/*
 * What every program of the GCS abuse suite shares: turning GCS on in
 * main(), the GCS instructions binutils 2.40 cannot spell, running one case
 * in a traced child so that a fatal signal is seen with its si_code (the
 * child may have no usable GCS left to deliver it on), and reading
 * /proc/PID/smaps.
 *
 * Header-only like tap.h, so that each group stays one program.
 */
#ifndef GCSPROF_ABUSE_H
#define GCSPROF_ABUSE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gcs-abi.h"
#include "../gcs-inline.h"
#include "../tap.h"

#ifndef SEGV_CPERR
#define SEGV_CPERR 10 /* control protection error: a GCS check failed */
#endif

/* The inline prctl and GCSPR read, by this suite's names. */
#define abuse_prctl gcs_raw_prctl
#define abuse_gcspr gcs_read_gcspr

/* GCSSTR x1, [x0]: a store into a GCS page (needs PR_SHADOW_STACK_WRITE). */
static inline void abuse_gcsstr(uint64_t *addr, uint64_t val)
{
	register uint64_t *x0 __asm__("x0") = addr;
	register uint64_t x1 __asm__("x1") = val;

	__asm__ volatile(".inst 0xd91f0c01" : : "r"(x0), "r"(x1) : "memory");
}

/* The GCS status of the calling thread, or ~0 if the prctl fails. */
static inline uint64_t abuse_status(void)
{
	unsigned long m = 0;

	if (abuse_prctl(PR_GET_SHADOW_STACK_STATUS, (long)&m) != 0)
		return ~0ULL;
	return m;
}

/*
 * Turn GCS on for the main thread, or skip the whole program. A macro, so
 * that the prctl is made in main() itself, which then must never return:
 * every program leaves through tap_finish() or exit().
 */
#define ABUSE_ENABLE_GCS_OR_SKIP()                                                     \
	do {                                                                           \
		if (!(getauxval(AT_HWCAP) & HWCAP_GCS))                                \
			tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");   \
		if (abuse_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE))   \
			tap_skip_all("PR_SET_SHADOW_STACK_STATUS(ENABLE) failed");     \
		if (abuse_status() != PR_SHADOW_STACK_ENABLE)                          \
			tap_skip_all("GCS did not read back as enabled");              \
	} while (0)

/* After a call, so that the call is not a tail call and stays on the GCS. */
#define ABUSE_KEEP_FRAME() __asm__ volatile("" ::: "memory")

/* N nested calls, each with its return address on the GCS. */
static __attribute__((noinline, unused)) unsigned long abuse_recurse(unsigned long n)
{
	unsigned long r;

	if (n == 0)
		return 0;
	r = abuse_recurse(n - 1) + 1;
	ABUSE_KEEP_FRAME();
	return r;
}

/* How a case run in a child ended. */
struct abuse_outcome {
	int exited;      /* 1: _exit(code); 0: a fatal signal */
	int code;        /* the exit code */
	int signo;       /* the fatal signal */
	int si_code;     /* its si_code */
	uint64_t fault_addr;
	int hung;        /* killed after ABUSE_CASE_TIMEOUT seconds */
	int unkillable;  /* and still there 5 s after SIGKILL */
};

static inline int abuse_is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGSYS;
}

/*
 * Run FN(ARG) in a child that is traced by us: the first fault signal is
 * caught at its delivery stop, before the kernel tries to set up a handler
 * on what may be a broken GCS, and the child is killed there. Other signals
 * are passed on. FN's return value is the child's exit code.
 */
/* A case that takes longer than this is killed and fails as hung. */
#define ABUSE_CASE_TIMEOUT 30

static void abuse_alarm(int sig)
{
	(void)sig;
}

/* Arm (seconds > 0) or disarm (0) the parent's deadline for one case. */
static inline void abuse_deadline(unsigned int seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = abuse_alarm; /* no SA_RESTART: waitpid() gets EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

/*
 * Follow traced child PID to its end (it is running or about to be):
 * SIGTRAP stops (execve) are swallowed, other non-fault signals passed on.
 */
static inline int abuse_collect(pid_t pid, struct abuse_outcome *out)
{
	int status;

	memset(out, 0, sizeof(*out));
	abuse_deadline(ABUSE_CASE_TIMEOUT);
	for (;;) {
		if (waitpid(pid, &status, 0) != pid) {
			if (errno == EINTR) {
				/* Hung: say so, and do not leave it running. */
				out->hung = 1;
				kill(pid, SIGKILL);
				/* A child looping in the kernel may not even die. */
				abuse_deadline(5);
				if (waitpid(pid, &status, 0) != pid)
					out->unkillable = 1;
				alarm(0);
				return 0;
			}
			return -1;
		}
		if (WIFEXITED(status)) {
			alarm(0);
			out->exited = 1;
			out->code = WEXITSTATUS(status);
			return 0;
		}
		if (WIFSIGNALED(status)) {
			alarm(0);
			out->signo = WTERMSIG(status);
			return 0;
		}
		if (WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);
			siginfo_t si;

			if (abuse_is_fault(sig)) {
				alarm(0);
				memset(&si, 0, sizeof(si));
				if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0) {
					out->si_code = si.si_code;
					out->fault_addr = (uint64_t)(uintptr_t)si.si_addr;
				}
				out->signo = sig;
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				return 0;
			}
			/* The SIGTRAP after an execve is ptrace's, not the child's. */
			if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)(sig == SIGTRAP ? 0 : sig)))
				return -1;
		}
	}
}

/* Fork a traced child that runs FN(ARG), and follow it to its end. */
static inline int abuse_run(int (*fn)(void *), void *arg, struct abuse_outcome *out)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(120);
		_exit(fn(arg));
	}
	return abuse_collect(pid, out);
}

static inline void abuse_describe(const char *name, const struct abuse_outcome *o)
{
	if (o->hung)
		tap_diag("%s: HUNG: still running after %d s; SIGKILL %s", name, ABUSE_CASE_TIMEOUT,
			 o->unkillable ? "did not end it" : "ended it");
	else if (o->exited)
		tap_diag("%s: exited with %d", name, o->code);
	else
		tap_diag("%s: signal %d (%s), si_code %d, si_addr %#llx", name, o->signo,
			 strsignal(o->signo), o->si_code, (unsigned long long)o->fault_addr);
}

/*
 * ABUSE_ONLY=TEXT in the environment runs only the cases whose name holds
 * TEXT (the others are reported as skipped): for looking at one case.
 */
static inline int abuse_filtered(const char *name)
{
	const char *only = getenv("ABUSE_ONLY");

	if (!only || strstr(name, only))
		return 0;
	tap_skip(name, "not selected by ABUSE_ONLY");
	return 1;
}

/*
 * Where the project's kernel and the reference kernel (upstream GCS) were
 * found to behave differently, a case pins each kernel's behaviour and
 * says so in its output, so that the difference stays visible and any
 * change of either side fails: docs/abuse.md lists these findings (D1...).
 * The project's kernel is the 6.12 one.
 */
static inline int abuse_project_kernel(void)
{
	struct utsname u;

	return uname(&u) == 0 && strncmp(u.release, "6.12.", 5) == 0;
}

static inline void abuse_diverges(const char *finding)
{
	tap_diag("  DIVERGES (docs/abuse.md %s): expecting this %s kernel's own behaviour", finding,
		 abuse_project_kernel() ? "project" : "reference");
}

/*
 * Run the case NAME (unless ABUSE_ONLY leaves it out) and say how it
 * ended: 0 with *O filled in, -1 if it was not run or could not be.
 */
static inline int abuse_case(const char *name, int (*fn)(void *), void *arg,
			     struct abuse_outcome *o)
{
	if (abuse_filtered(name))
		return -1;
	if (abuse_run(fn, arg, o) != 0) {
		tap_diag("%s: could not run the child: %s", name, strerror(errno));
		tap_result(0, name);
		return -1;
	}
	abuse_describe(name, o);
	return 0;
}

/* Run a case and expect a fault SIGNO with si_code CODE. */
static inline void abuse_expect_fault(const char *name, int (*fn)(void *), void *arg, int signo,
				      int code)
{
	struct abuse_outcome o;

	if (abuse_case(name, fn, arg, &o) == 0)
		tap_result(!o.hung && !o.exited && o.signo == signo && o.si_code == code, name);
}

/* Run a case and expect it to exit with 0 (its own checks passed). */
static inline void abuse_expect_exit0(const char *name, int (*fn)(void *), void *arg)
{
	struct abuse_outcome o;

	if (abuse_case(name, fn, arg, &o) == 0)
		tap_result(!o.hung && o.exited && o.code == 0, name);
}

/* The mapping of PID holding ADDR, from /proc/PID/maps: 0 if found. */
static inline int abuse_mapping(pid_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && addr >= a && addr < b) {
			*lo = a;
			*hi = b;
			ret = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

/* Is " ss" among the VmFlags of this smaps line? */
static inline int abuse_vmflags_ss(const char *line)
{
	const char *p;

	if (strncmp(line, "VmFlags:", 8) != 0)
		return 0;
	for (p = line + 8; (p = strstr(p, "ss")) != NULL; p += 2)
		if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\n' || p[2] == '\0'))
			return 1;
	return 0;
}

/*
 * What /proc/PID/smaps says about GCS memory: the number of mappings with
 * "ss" in their VmFlags, their total size in kB, and whether the mapping
 * holding ADDR (if not 0) is one. -1 if smaps cannot be read.
 */
struct abuse_ss {
	long count;
	long kb;
	int addr_is_ss;
};

static inline int abuse_smaps(pid_t pid, uint64_t addr, struct abuse_ss *ss)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	unsigned long long lo = 0, hi = 0;
	int in_addr = 0;
	FILE *f;

	memset(ss, 0, sizeof(*ss));
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long a, b;
		char dash;

		if (sscanf(line, "%llx%c%llx ", &a, &dash, &b) == 3 && dash == '-') {
			lo = a;
			hi = b;
			in_addr = addr >= lo && addr < hi;
		} else if (abuse_vmflags_ss(line)) {
			ss->count++;
			ss->kb += (long)((hi - lo) / 1024);
			if (in_addr)
				ss->addr_is_ss = 1;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

#endif /* GCSPROF_ABUSE_H */
