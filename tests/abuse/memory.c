// SPDX-License-Identifier: MIT
/*
 * abuse-memory: ordinary memory operations on a live GCS. Plain stores
 * must fault; mprotect cannot make a GCS writable or executable; munmap,
 * mremap and madvise(MADV_DONTNEED) are allowed (the memory is the
 * process's own) and the thread pays on its next return.
 *
 * Another process's GCS: process_vm_writev() must fail with EFAULT and
 * leave it unchanged; /proc/PID/mem and PTRACE_POKEDATA, which write with
 * FOLL_FORCE like a debugger setting a breakpoint in read-only text, may
 * write it (upstream's gcs.rst and x86's shadow stacks behave the same):
 * access to them already requires ptrace rights over the target.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "abuse.h"

#define GCS_SIZE 65536

static uint64_t *new_gcs(void)
{
	long a = syscall(NR_map_shadow_stack, 0, GCS_SIZE, SHADOW_STACK_SET_TOKEN);

	return a < 0 ? NULL : (uint64_t *)(uintptr_t)a;
}

/* The mapping of our own GCS, where GCSPR points. */
static int own_gcs(uint64_t *lo, uint64_t *hi)
{
	return abuse_mapping(getpid(), abuse_gcspr(), lo, hi);
}

static int store_own_gcs(void *arg)
{
	volatile uint64_t *p = (uint64_t *)(uintptr_t)abuse_gcspr();

	(void)arg;
	*p = 0;
	return 50;
}

static int store_new_gcs(void *arg)
{
	volatile uint64_t *p = new_gcs();

	(void)arg;
	if (!p)
		return 51;
	p[16] = 1;
	return 50;
}

/* mprotect(PROT) of a GCS, then a plain store into it. */
static int mprotect_then_store(void *arg)
{
	int prot = *(int *)arg;
	volatile uint64_t *p = new_gcs();
	int r;

	if (!p)
		return 51;
	r = mprotect((void *)p, GCS_SIZE, prot);
	tap_diag("  mprotect(%#x) of a GCS: %s", prot, r ? strerror(errno) : "accepted");
	p[16] = 1;
	return 50;
}

static int mprotect_exec(void *arg)
{
	uint64_t *p = new_gcs();

	(void)arg;
	if (!p)
		return 51;
	if (mprotect(p, GCS_SIZE, PROT_READ | PROT_EXEC) == 0)
		return 52;
	return errno == EINVAL ? 0 : 53;
}

static int unmap_own_gcs(void *arg)
{
	uint64_t lo, hi;

	(void)arg;
	if (own_gcs(&lo, &hi))
		return 51;
	munmap((void *)(uintptr_t)lo, hi - lo); /* its own return pops from the hole */
	return 50;
}

static int mremap_own_gcs(void *arg)
{
	uint64_t lo, hi;
	void *to;

	(void)arg;
	if (own_gcs(&lo, &hi))
		return 51;
	to = mmap(NULL, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED)
		return 52;
	mremap((void *)(uintptr_t)lo, hi - lo, hi - lo, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	return 50;
}

static int dontneed_own_gcs(void *arg)
{
	uint64_t lo, hi;

	(void)arg;
	if (own_gcs(&lo, &hi))
		return 51;
	madvise((void *)(uintptr_t)lo, hi - lo, MADV_DONTNEED); /* its return finds 0 */
	return 50;
}

/* A moved GCS keeps being one: mremap of a map_shadow_stack() stack. */
static int mremap_keeps_ss(void *arg)
{
	uint64_t *p = new_gcs(), *q;
	struct abuse_ss ss;

	(void)arg;
	if (!p)
		return 51;
	q = mremap(p, GCS_SIZE, GCS_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, (char *)p + 4 * GCS_SIZE);
	if (q == MAP_FAILED) {
		tap_diag("  mremap of an idle GCS: %s", strerror(errno));
		return 52;
	}
	if (abuse_smaps(getpid(), (uint64_t)(uintptr_t)q, &ss) || !ss.addr_is_ss)
		return 53;
	/* Its cap token moved with it: still at the top, naming its old place. */
	return q[GCS_SIZE / 8 - 1] == (((uint64_t)(uintptr_t)&p[GCS_SIZE / 8 - 1] & ~0xfffULL) | 1)
		       ? 0 : 54;
}

/* A stopped, traced child, deep in a call, and the top entry of its GCS. */
struct victim {
	pid_t pid;
	uint64_t gcspr;
	uint64_t top;
};

static __attribute__((noinline)) void victim_stop(void)
{
	raise(SIGSTOP);
	ABUSE_KEEP_FRAME();
}

static int start_victim(struct victim *v)
{
	struct user_gcs g;
	struct iovec iov = { &g, sizeof(g) };
	int status;

	v->pid = fork();
	if (v->pid < 0)
		return -1;
	if (v->pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(120);
		victim_stop();
		_exit(abuse_recurse(100) == 100 ? 0 : 1);
	}
	if (waitpid(v->pid, &status, 0) != v->pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_GETREGSET, v->pid, (void *)NT_ARM_GCS, &iov) || g.gcspr_el0 == 0)
		return -1;
	v->gcspr = g.gcspr_el0;
	{
		struct iovec l = { &v->top, 8 }, r = { (void *)(uintptr_t)v->gcspr, 8 };

		if (process_vm_readv(v->pid, &l, 1, &r, 1, 0) != 8)
			return -1;
	}
	return 0;
}

static void end_victim(struct victim *v, const char *name, int want_fault)
{
	struct abuse_outcome o;

	if (ptrace(PTRACE_CONT, v->pid, NULL, NULL) || abuse_collect(v->pid, &o)) {
		tap_result(0, name);
		return;
	}
	abuse_describe(name, &o);
	if (want_fault)
		tap_result(!o.exited && o.signo == SIGSEGV && o.si_code == SEGV_CPERR, name);
	else
		tap_result(o.exited && o.code == 0, name);
}

static uint64_t victim_read(const struct victim *v)
{
	uint64_t val = 0;
	struct iovec l = { &val, 8 }, r = { (void *)(uintptr_t)v->gcspr, 8 };

	if (process_vm_readv(v->pid, &l, 1, &r, 1, 0) != 8)
		return ~0ULL;
	return val;
}

static void test_vm_writev(void)
{
	const char *name = "process_vm_writev into another process's GCS: EFAULT, unchanged";
	struct victim v;
	uint64_t val = 0x1234;
	struct iovec l = { &val, 8 }, r;
	ssize_t n;

	if (abuse_filtered(name))
		return;
	if (start_victim(&v)) {
		tap_result(0, name);
		return;
	}
	r.iov_base = (void *)(uintptr_t)v.gcspr;
	r.iov_len = 8;
	n = process_vm_writev(v.pid, &l, 1, &r, 1, 0);
	tap_diag("  process_vm_writev: %zd (%s); entry %#llx -> %#llx", n, n < 0 ? strerror(errno) : "",
		 (unsigned long long)v.top, (unsigned long long)victim_read(&v));
	if (n != -1 || errno != EFAULT || victim_read(&v) != v.top) {
		kill(v.pid, SIGKILL);
		waitpid(v.pid, NULL, 0);
		tap_result(0, name);
		return;
	}
	end_victim(&v, name, 0);
}

/* /proc/PID/mem (USE_POKE 0) or PTRACE_POKEDATA: allowed, and it bites. */
static void test_forced_write(int use_poke)
{
	const char *name = use_poke ? "PTRACE_POKEDATA into a GCS: written; the victim faults"
				    : "/proc/PID/mem write into a GCS: written; the victim faults";
	struct victim v;
	uint64_t val;
	char path[64];
	int fd, ok;

	if (abuse_filtered(name))
		return;
	if (start_victim(&v)) {
		tap_result(0, name);
		return;
	}
	val = v.top + 4; /* a return address the victim never had */
	if (use_poke) {
		ok = ptrace(PTRACE_POKEDATA, v.pid, (void *)(uintptr_t)v.gcspr, (void *)val) == 0;
	} else {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)v.pid);
		fd = open(path, O_RDWR);
		ok = fd >= 0 && pwrite(fd, &val, 8, (off_t)v.gcspr) == 8;
		if (fd >= 0)
			close(fd);
	}
	tap_diag("  %s: %s; entry %#llx -> %#llx", use_poke ? "POKEDATA" : "pwrite",
		 ok ? "accepted" : strerror(errno), (unsigned long long)v.top,
		 (unsigned long long)victim_read(&v));
	if (!ok || victim_read(&v) != val) {
		kill(v.pid, SIGKILL);
		waitpid(v.pid, NULL, 0);
		tap_result(0, name);
		return;
	}
	end_victim(&v, name, 1);
}

int main(void)
{
	static int rw = PROT_READ | PROT_WRITE, ro = PROT_READ;

	ABUSE_ENABLE_GCS_OR_SKIP();
	tap_plan(12);
	abuse_expect_fault("plain store to the thread's own GCS", store_own_gcs, NULL, SIGSEGV,
			   SEGV_ACCERR);
	abuse_expect_fault("plain store to a map_shadow_stack() GCS", store_new_gcs, NULL, SIGSEGV,
			   SEGV_ACCERR);
	abuse_expect_fault("mprotect(READ|WRITE) leaves a GCS: a plain store still faults",
			   mprotect_then_store, &rw, SIGSEGV, SEGV_ACCERR);
	abuse_expect_fault("mprotect(READ) of a GCS: a plain store still faults",
			   mprotect_then_store, &ro, SIGSEGV, SEGV_ACCERR);
	abuse_expect_exit0("mprotect(READ|EXEC) of a GCS: EINVAL", mprotect_exec, NULL);
	abuse_expect_fault("munmap of the live GCS: the next return faults", unmap_own_gcs, NULL,
			   SIGSEGV, SEGV_MAPERR);
	abuse_expect_fault("mremap of the live GCS: the next return faults", mremap_own_gcs, NULL,
			   SIGSEGV, SEGV_MAPERR);
	abuse_expect_fault("MADV_DONTNEED on the live GCS: the next return faults",
			   dontneed_own_gcs, NULL, SIGSEGV, SEGV_CPERR);
	abuse_expect_exit0("mremap of an idle GCS: still a GCS, its token moved with it",
			   mremap_keeps_ss, NULL);
	test_vm_writev();
	test_forced_write(0);
	test_forced_write(1);
	tap_finish();
}
