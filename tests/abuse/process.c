// SPDX-License-Identifier: MIT
/*
 * abuse-process: GCS across process and thread creation. After fork() the
 * GCS pages are copy-on-write: both sides keep calling deep and neither
 * sees the other's entries. A vfork() child shares its parent's GCS and
 * must not disturb it. execve() from a multi-threaded GCS process starts
 * a program with GCS off and no GCS left. clone() without CLONE_VM copies
 * the GCS, with CLONE_VM gets a new one that goes when it exits. A thread
 * that exits while traced can be read at its exit stop, and its GCS goes.
 *
 * Usage: abuse-process [--exec-report]
 * (how a thread of a test child re-executes the program).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "abuse.h"

#define DEEP 20000

/* Shared with every child: what they saw. */
struct seen {
	uint64_t gcspr;
	int ss_mapping;       /* the child's GCSPR lies in an ss mapping */
	uint64_t lo;          /* that mapping */
	unsigned long depth;  /* what a deep recursion returned */
	pid_t tid;
	int go;
};

static struct seen *seen;

/* fork(): both sides call deep; the pre-fork entries stay on each side. */
static __attribute__((noinline)) int fork_cow(void *arg)
{
	uint64_t gcspr = abuse_gcspr();
	uint64_t top = *(volatile uint64_t *)(uintptr_t)gcspr;
	int status;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid < 0)
		return 60;
	if (pid == 0) {
		if (abuse_recurse(DEEP) != DEEP || *(volatile uint64_t *)(uintptr_t)gcspr != top)
			_exit(61);
		_exit(0);
	}
	if (abuse_recurse(DEEP) != DEEP || *(volatile uint64_t *)(uintptr_t)gcspr != top)
		return 62;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tap_diag("  fork child status %#x", status);
		return 63;
	}
	ABUSE_KEEP_FRAME();
	return 0;
}

/*
 * vfork() by hand: the child runs in this very frame on the parent's GCS,
 * so it must not return; with CALL it makes (balanced) calls first, which
 * write below the parent's GCSPR; with EXEC it runs /bin/true.
 */
static __attribute__((noinline)) int vfork_case(void *arg)
{
	int mode = *(int *)arg, status;
	register long x8 __asm__("x8") = __NR_clone;
	register long x0 __asm__("x0") = CLONE_VM | CLONE_VFORK | SIGCHLD;
	register long x1 __asm__("x1") = 0;
	register long x2 __asm__("x2") = 0;
	register long x3 __asm__("x3") = 0;
	register long x4 __asm__("x4") = 0;
	pid_t pid;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	pid = (pid_t)x0;
	if (pid == 0) {
		if (mode == 1 && abuse_recurse(100) != 100)
			syscall(__NR_exit, 71);
		if (mode == 2)
			execl("/bin/true", "true", (char *)NULL);
		/* Inline exit: no call whose return would matter. */
		register long e8 __asm__("x8") = __NR_exit;
		register long e0 __asm__("x0") = 0;
		__asm__ volatile("svc #0" : : "r"(e8), "r"(e0) : "memory");
		__builtin_unreachable();
	}
	if (pid < 0)
		return 70;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tap_diag("  vfork child status %#x", status);
		return 72;
	}
	/* The parent's own returns, from here and from deep calls, still check out. */
	if (abuse_recurse(DEEP) != DEEP)
		return 73;
	ABUSE_KEEP_FRAME();
	return 0;
}

static void *exec_thread(void *arg)
{
	char *const argv[] = { (char *)arg, "--exec-report", NULL };

	execv("/proc/self/exe", argv);
	return NULL;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* execve() from one of five threads, all with GCS. */
static int exec_threaded(void *arg)
{
	pthread_t t;
	int i;

	for (i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, idle_thread, NULL))
			return 80;
	if (pthread_create(&t, NULL, exec_thread, arg))
		return 81;
	pthread_join(t, NULL);
	return 82; /* the execve failed */
}

/* The new image: GCS off, no GCS mapping left over from the old one. */
static void __attribute__((noreturn)) exec_report(void)
{
	struct abuse_ss ss;
	uint64_t st = abuse_status();

	if (abuse_smaps(getpid(), 0, &ss)) {
		tap_diag("  after execve: smaps unreadable");
		_exit(90);
	}
	tap_diag("  after execve: GCS status %#llx, %ld ss mappings", (unsigned long long)st,
		 ss.count);
	_exit(st == 0 && ss.count == 0 ? 0 : 91);
}

/* In a clone() child: where its GCS is, and whether deep calls work. */
static int clone_fn(void *arg)
{
	struct abuse_ss ss;
	uint64_t hi;

	(void)arg;
	seen->gcspr = abuse_gcspr();
	seen->depth = abuse_recurse(DEEP);
	if (abuse_smaps(getpid(), seen->gcspr, &ss) == 0)
		seen->ss_mapping = ss.addr_is_ss;
	abuse_mapping(getpid(), seen->gcspr, &seen->lo, &hi);
	return 0;
}

static int clone_case(void *arg)
{
	int vm = *(int *)arg, status;
	size_t stack_size = 1 << 20;
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t lo, hi, mine = abuse_gcspr();
	struct abuse_ss before, after;
	pid_t pid;

	if (stack == MAP_FAILED || abuse_mapping(getpid(), mine, &lo, &hi) ||
	    abuse_smaps(getpid(), 0, &before))
		return 100;
	memset(seen, 0, sizeof(*seen));
	pid = clone(clone_fn, stack + stack_size, (vm ? CLONE_VM : 0) | SIGCHLD, NULL);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 101;
	if (abuse_smaps(getpid(), 0, &after))
		return 102;
	tap_diag("  child GCSPR %#llx (in ss: %d, mapping at %#llx; ours at %#llx); ss mappings %ld -> %ld",
		 (unsigned long long)seen->gcspr, seen->ss_mapping, (unsigned long long)seen->lo,
		 (unsigned long long)lo, before.count, after.count);
	if (!seen->ss_mapping || seen->depth != DEEP || after.count != before.count)
		return 103;
	/* Without CLONE_VM: our GCS, copied. With it: a GCS of its own. */
	if (vm ? seen->lo == lo : seen->lo != lo)
		return 104;
	return abuse_recurse(DEEP) == DEEP ? 0 : 105;
}

static void *traced_thread(void *arg)
{
	(void)arg;
	seen->tid = (pid_t)syscall(__NR_gettid);
	while (!__atomic_load_n(&seen->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	abuse_recurse(100);
	return NULL;
}

/* The child whose thread is traced: start it, wait for it, then idle. */
static void __attribute__((noreturn)) traced_thread_owner(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, traced_thread, NULL))
		_exit(110);
	pthread_join(t, NULL);
	for (;;)
		pause();
}

static void test_thread_exit_traced(void)
{
	const char *name = "a thread exits while traced: NT_ARM_GCS at its exit stop, its GCS freed";
	struct user_gcs g;
	struct iovec iov = { &g, sizeof(g) };
	struct abuse_ss with, without;
	int status, ok = 0, tries;
	pid_t owner, tid;

	if (abuse_filtered(name))
		return;
	memset(seen, 0, sizeof(*seen));
	owner = fork();
	if (owner < 0)
		goto out;
	if (owner == 0)
		traced_thread_owner();
	for (tries = 0; tries < 5000 && !__atomic_load_n(&seen->tid, __ATOMIC_ACQUIRE); tries++)
		usleep(1000);
	tid = seen->tid;
	if (!tid || ptrace(PTRACE_SEIZE, tid, NULL, (void *)PTRACE_O_TRACEEXIT) ||
	    abuse_smaps(owner, 0, &with))
		goto kill;
	__atomic_store_n(&seen->go, 1, __ATOMIC_RELEASE);
	if (waitpid(tid, &status, __WALL) != tid || status >> 8 != (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
		goto kill;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_GCS, &iov))
		goto kill;
	tap_diag("  at exit: enabled %#llx gcspr %#llx; owner has %ld ss mappings",
		 (unsigned long long)g.features_enabled, (unsigned long long)g.gcspr_el0, with.count);
	if (ptrace(PTRACE_CONT, tid, NULL, NULL) || waitpid(tid, &status, __WALL) != tid)
		goto kill;
	/* The owner's join returns once the thread is gone. */
	for (tries = 0; tries < 500; tries++) {
		if (abuse_smaps(owner, 0, &without) == 0 && without.count < with.count)
			break;
		usleep(10000);
	}
	tap_diag("  after exit: owner has %ld ss mappings", without.count);
	ok = g.features_enabled == PR_SHADOW_STACK_ENABLE && g.gcspr_el0 != 0 &&
	     without.count == with.count - 1;
kill:
	kill(owner, SIGKILL);
	waitpid(owner, &status, 0);
out:
	tap_result(ok, name);
}

int main(int argc, char **argv)
{
	static int plain = 0, call = 1, exec = 2, no_vm = 0, vm = 1;

	if (argc > 1 && strcmp(argv[1], "--exec-report") == 0)
		exec_report();
	seen = mmap(NULL, sizeof(*seen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seen == MAP_FAILED) {
		tap_print("Bail out! mmap: %s\n", strerror(errno));
		exit(TAP_EXIT_FAIL);
	}
	ABUSE_ENABLE_GCS_OR_SKIP();
	tap_plan(8);
	abuse_expect_exit0("fork: copy-on-write GCS, deep calls on both sides", fork_cow, NULL);
	abuse_expect_exit0("vfork: the child exits at once; the parent goes on", vfork_case, &plain);
	abuse_expect_exit0("vfork: the child calls below the parent's GCSPR", vfork_case, &call);
	abuse_expect_exit0("vfork: the child runs execve", vfork_case, &exec);
	abuse_expect_exit0("execve from a thread of a 6-thread GCS process", exec_threaded, argv[0]);
	abuse_expect_exit0("clone without CLONE_VM: a copy of our GCS", clone_case, &no_vm);
	abuse_expect_exit0("clone with CLONE_VM: a GCS of its own, freed at its exit", clone_case, &vm);
	test_thread_exit_traced();
	tap_finish();
}
