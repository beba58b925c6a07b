// SPDX-License-Identifier: MIT
/*
 * abuse-ptrace: a tracer writes the NT_ARM_GCS regset of a stopped child
 * with values a thread could never set itself: a misaligned, unmapped or
 * non-GCS GCSPR, features changed under a lock, unknown bits, GCS turned
 * on for a thread that never had it. Each case checks what SETREGSET
 * returns, what GETREGSET reads back, and how the child then ends.
 *
 * A debugger is trusted (upstream's gcs.rst): it may change the mode, the
 * locks notwithstanding, and point GCSPR anywhere; the kernel only refuses
 * bits it does not know. What the child then does with a GCSPR that leads
 * nowhere is the hardware's business: a fault, reported as SIGSEGV.
 *
 * Usage: abuse-ptrace [--never-gcs-child]
 */
#define _GNU_SOURCE
#include <elf.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "abuse.h"

/* What the child publishes for its tracer, in memory shared across fork. */
struct shared {
	uint64_t ordinary;   /* an ordinary RW page of the child */
	uint64_t unmapped;   /* a page the child unmapped */
	uint64_t gcs_top;    /* the top entry of a map_shadow_stack() stack */
};

static struct shared *shared;

/* Stop for the tracer without a call: nothing must be popped after it. */
static inline __attribute__((always_inline)) void stop_self(void)
{
	long pid = getpid(); /* before the register variables: a call clobbers them */
	register long x8 __asm__("x8") = __NR_kill;
	register long x0 __asm__("x0") = pid;
	register long x1 __asm__("x1") = SIGSTOP;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
}

/*
 * The child: set up, stop, then (in the same frame, so that no return
 * depends on the GCS the tracer may have replaced) make nested calls and
 * exit with the GCS status it then has.
 */
static void __attribute__((noreturn)) child_body(uint64_t lock, int disable)
{
	void *p;
	long gcs;

	if (disable && abuse_prctl(PR_SET_SHADOW_STACK_STATUS, 0))
		_exit(100);
	if (lock && abuse_prctl(PR_LOCK_SHADOW_STACK_STATUS, (long)lock))
		_exit(101);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gcs = syscall(NR_map_shadow_stack, 0, 8192, 0);
	if (p == MAP_FAILED || gcs < 0 || munmap((char *)p + 4096, 4096))
		_exit(102);
	shared->ordinary = (uint64_t)(uintptr_t)p + 2048;
	shared->unmapped = (uint64_t)(uintptr_t)p + 4096 + 2048;
	shared->gcs_top = (uint64_t)gcs + 8192 - 8;
	stop_self();
	if (abuse_recurse(200) != 200)
		_exit(103);
	_exit((int)(abuse_status() & 0xff));
}

static int child_plain(void *arg)
{
	(void)arg;
	child_body(0, 0);
}

static int child_locked(void *arg)
{
	child_body(*(uint64_t *)arg, 0);
}

static int child_disabled(void *arg)
{
	(void)arg;
	child_body(0, 1);
}

/* The memfd behind *shared: it survives the child's execve. */
static int shared_fd = -1;

static int child_never_gcs(void *arg)
{
	char fd[16];
	char *const argv[] = { (char *)arg, "--never-gcs-child", fd, NULL };

	snprintf(fd, sizeof(fd), "%d", shared_fd);
	execv("/proc/self/exe", argv);
	return 104;
}

enum gcspr_to { KEEP, PLUS4, UNMAPPED, ORDINARY, NEW_GCS };

struct pt_case {
	const char *name;
	int (*child)(void *);
	void *arg;
	uint64_t set_enabled;  /* ~0: keep */
	uint64_t set_locked;   /* ~0: keep */
	enum gcspr_to gcspr;
	int want_errno;        /* what SETREGSET must fail with; 0: succeed */
	/* How the child must end: exit code (want_signo 0) or a fault. */
	int want_code;
	int want_signo;
	int want_si_code;
	/* D3: the project kernel refuses with this errno instead (0: agrees). */
	int project_errno;
};

static int regset(pid_t pid, int set, struct user_gcs *g)
{
	struct iovec iov = { g, sizeof(*g) };

	if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, pid, (void *)NT_ARM_GCS, &iov))
		return -1;
	return iov.iov_len == sizeof(*g) ? 0 : -1;
}

static void show(const char *what, const struct user_gcs *g)
{
	tap_diag("  %s: enabled %#llx locked %#llx gcspr %#llx", what,
		 (unsigned long long)g->features_enabled, (unsigned long long)g->features_locked,
		 (unsigned long long)g->gcspr_el0);
}

static int same(const struct user_gcs *a, const struct user_gcs *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static void run_pt_case(const struct pt_case *c)
{
	struct user_gcs before, want, after;
	struct abuse_outcome o;
	int status, ok = 0, err = 0, set, want_errno = c->want_errno;
	pid_t pid;

	if (abuse_filtered(c->name))
		return;
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(120);
		_exit(c->child(c->arg));
	}
	/* Up to the child's own SIGSTOP (an execve's SIGTRAP on the way). */
	for (;;) {
		if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
			tap_diag("%s: child ended (%#x) before stopping", c->name, status);
			goto out;
		}
		if (WSTOPSIG(status) == SIGSTOP)
			break;
		if (ptrace(PTRACE_CONT, pid, NULL, NULL))
			goto out;
	}
	if (regset(pid, 0, &before)) {
		tap_diag("%s: GETREGSET: %s", c->name, strerror(errno));
		goto kill;
	}
	show("before", &before);
	want = before;
	if (c->set_enabled != ~0ULL)
		want.features_enabled = c->set_enabled;
	if (c->set_locked != ~0ULL)
		want.features_locked = c->set_locked;
	switch (c->gcspr) {
	case KEEP:
		break;
	case PLUS4:
		want.gcspr_el0 += 4;
		break;
	case UNMAPPED:
		want.gcspr_el0 = shared->unmapped;
		break;
	case ORDINARY:
		want.gcspr_el0 = shared->ordinary;
		break;
	case NEW_GCS:
		want.gcspr_el0 = shared->gcs_top;
		break;
	}
	if (c->project_errno) {
		abuse_diverges("D3");
		if (abuse_project_kernel())
			want_errno = c->project_errno;
	}
	set = regset(pid, 1, &want);
	err = set ? errno : 0;
	if (regset(pid, 0, &after)) {
		tap_diag("%s: GETREGSET after: %s", c->name, strerror(errno));
		goto kill;
	}
	show("written", &want);
	show("read back", &after);
	tap_diag("  SETREGSET: %s", err ? strerror(err) : "accepted");
	if (err != want_errno) {
		tap_diag("%s: SETREGSET errno %d, expected %d", c->name, err, want_errno);
		goto kill;
	}
	/* Refused: nothing changed. Accepted: what was written reads back. */
	if (!same(&after, err ? &before : &want)) {
		tap_diag("%s: the regset does not read back as expected", c->name);
		goto kill;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) || abuse_collect(pid, &o)) {
		tap_diag("%s: lost the child: %s", c->name, strerror(errno));
		goto kill;
	}
	abuse_describe(c->name, &o);
	if (c->want_signo)
		ok = !o.hung && !o.exited && o.signo == c->want_signo && o.si_code == c->want_si_code;
	else
		ok = !o.hung && o.exited && o.code == c->want_code;
	pid = 0;
kill:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
out:
	tap_result(ok, c->name);
}

#define KEEPV (~0ULL)
#define EN PR_SHADOW_STACK_ENABLE
#define WR PR_SHADOW_STACK_WRITE

int main(int argc, char **argv)
{
	static uint64_t lock_en = EN;
	const struct pt_case cases[] = {
		{ "unchanged regset written back", child_plain, NULL, KEEPV, KEEPV, KEEP, 0, EN, 0, 0, 0 },
		/* Accepted and read back as written; the hardware drops bits [2:0]. */
		{ "GCSPR misaligned by 4", child_plain, NULL, KEEPV, KEEPV, PLUS4, 0, EN, 0, 0,
		  EINVAL },
		{ "GCSPR at an unmapped page", child_plain, NULL, KEEPV, KEEPV, UNMAPPED, 0, 0, SIGSEGV,
		  SEGV_MAPERR, 0 },
		{ "GCSPR at an ordinary page", child_plain, NULL, KEEPV, KEEPV, ORDINARY, 0, 0, SIGSEGV,
		  SEGV_ACCERR, 0 },
		{ "GCSPR moved to another GCS (map_shadow_stack)", child_plain, NULL, KEEPV, KEEPV,
		  NEW_GCS, 0, EN, 0, 0, 0 },
		{ "GCS turned off on a thread with ENABLE locked", child_locked, &lock_en, 0, KEEPV,
		  KEEP, 0, 0, 0, 0, 0 },
		{ "WRITE turned on on a thread with ENABLE locked", child_locked, &lock_en, EN | WR,
		  KEEPV, KEEP, 0, EN | WR, 0, 0, 0 },
		{ "locks cleared", child_locked, &lock_en, KEEPV, 0, KEEP, 0, EN, 0, 0, 0 },
		{ "unknown feature bit 3", child_plain, NULL, EN | (1ULL << 3), KEEPV, KEEP, EINVAL, EN,
		  0, 0, 0 },
		{ "unknown feature bit 63", child_plain, NULL, EN | (1ULL << 63), KEEPV, KEEP, EINVAL,
		  EN, 0, 0, 0 },
		{ "GCS turned back on after prctl turned it off", child_disabled, NULL, EN, KEEPV, KEEP,
		  0, EN, 0, 0, 0 },
		{ "thread that never had GCS: GCS on at a map_shadow_stack stack", child_never_gcs,
		  argv[0], EN, KEEPV, NEW_GCS, 0, EN, 0, 0, 0 },
		{ "thread that never had GCS: GCS on with GCSPR 0", child_never_gcs, argv[0], EN,
		  KEEPV, KEEP, 0, 0, SIGSEGV, SEGV_MAPERR, 0 },
	};
	size_t i;

	if (argc > 2 && strcmp(argv[1], "--never-gcs-child") == 0)
		shared_fd = atoi(argv[2]);
	else if ((shared_fd = memfd_create("abuse-ptrace", 0)) < 0 ||
		 ftruncate(shared_fd, sizeof(*shared)) != 0)
		shared_fd = -1;
	shared = shared_fd < 0 ? MAP_FAILED : mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
						    MAP_SHARED, shared_fd, 0);
	if (shared == MAP_FAILED) {
		tap_print("Bail out! shared memory: %s\n", strerror(errno));
		exit(TAP_EXIT_FAIL);
	}
	if (argc > 2 && strcmp(argv[1], "--never-gcs-child") == 0)
		child_body(0, 0);
	ABUSE_ENABLE_GCS_OR_SKIP();
	tap_plan((int)(sizeof(cases) / sizeof(cases[0])));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_pt_case(&cases[i]);
	tap_finish();
}
