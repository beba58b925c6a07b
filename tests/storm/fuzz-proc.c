// SPDX-License-Identifier: MIT
/*
 * storm-fuzz's process operations: the shadow stack prctls with random
 * flags, and fork, vfork + execve, clone(CLONE_VM) and threads made by
 * GCS-enabled threads, each child checking that it has the GCS mode it
 * should have.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

unsigned long fz_gcs_status(void)
{
	unsigned long m = 0;

	if (gcs_raw_prctl(PR_GET_SHADOW_STACK_STATUS, (long)&m) != 0)
		return ~0UL;
	return m;
}

/* The first line of /proc/PID/NAME (NAME may be task/TID/...), or "?". */
static void proc_line(pid_t pid, const char *name, char *out, size_t size)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	snprintf(out, size, "?");
	if ((f = fopen(path, "r"))) {
		if (!fgets(out, (int)size, f))
			snprintf(out, size, "?");
		out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
}

/* A hung task's state, where in the kernel it is, and its user PC. */
void fz_describe_task(pid_t pid, pid_t tid, char *out, size_t size)
{
	char stat[256], wchan[64], sys[128], stack[128], name[64];
	const char *p;

	snprintf(name, sizeof(name), "task/%d/stat", (int)tid);
	proc_line(pid, name, stat, sizeof(stat));
	snprintf(name, sizeof(name), "task/%d/wchan", (int)tid);
	proc_line(pid, name, wchan, sizeof(wchan));
	snprintf(name, sizeof(name), "task/%d/syscall", (int)tid);
	proc_line(pid, name, sys, sizeof(sys));
	snprintf(name, sizeof(name), "task/%d/stack", (int)tid);
	proc_line(pid, name, stack, sizeof(stack));
	p = strrchr(stat, ')');
	snprintf(out, size, "state %c, wchan %.40s, syscall %.100s, stack %.100s",
		 p && p[1] && p[2] ? p[2] : '?', wchan, sys, stack);
}

/*
 * Wait for PID: 0 with *STATUS, or -1 if it would not end. A child
 * still there after 60 s is killed; one still there 5 s after SIGKILL is
 * a kernel problem.
 */
int fz_reap(pid_t pid, int *status)
{
	double end = storm_now() + 60;
	int killed = 0;
	useconds_t nap = 200;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG | __WALL);

		if (r == pid) {
			fz_count(FZ_WAIT4, r); /* once per child, not per poll */
			if (WIFSIGNALED(*status))
				__atomic_fetch_add(&fz->child_signals[WTERMSIG(*status) & 63], 1,
						   __ATOMIC_RELAXED);
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (storm_now() > end) {
			char state[320];

			fz_describe_task(pid, pid, state, sizeof(state));
			if (killed) {
				fz_problem(FZ_INV_HUNG, "child %d of %s still there 5 s after SIGKILL: %s",
					   (int)pid, fz_op_name, state);
				return -1;
			}
			fz_problem(FZ_INV_HUNG, "child %d of %s still running after 60 s: %s", (int)pid,
				   fz_op_name, state);
			fz_count(FZ_KILL, kill(pid, SIGKILL));
			killed = 1;
			end = storm_now() + 5;
		}
		usleep(nap);
		if (nap < 20000)
			nap *= 2;
	}
}

/* A child's life: N random operations, then exit. */
void fz_child_ops(struct fz_thread *t, int n)
{
	t->depth++;
	for (int i = 0; i < n; i++)
		fz_one(t);
	_exit(0);
}

void fz_op_prctl_get(struct fz_thread *t)
{
	unsigned long m = 0;
	long arg = (long)&m;

	if (storm_below(&t->rng, 16) == 0)
		arg = (long)fz_random_addr(t); /* a bad pointer: EFAULT or a GCS */
	fz_count(FZ_PRCTL, prctl(PR_GET_SHADOW_STACK_STATUS, arg, 0, 0, 0));
}

/* Random mode bits, now and then one the ABI does not know. */
static unsigned long random_mode(struct fz_thread *t)
{
	unsigned long m = storm_below(&t->rng, FZ_MODE_BITS + 1);

	if (storm_below(&t->rng, 16) == 0)
		m |= 1UL << storm_below(&t->rng, 64);
	return m;
}

/*
 * Set a random mode. Turning GCS off (or asking for an unknown bit) is
 * rare, since the thread stays that way. The new mode must read back.
 */
void fz_op_prctl_set(struct fz_thread *t)
{
	unsigned long want = random_mode(t), got;
	long r;

	if (storm_below(&t->rng, 8))
		want |= PR_SHADOW_STACK_ENABLE;
	r = gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, (long)want);
	fz_count(FZ_PRCTL, r ? -1 : 0);
	got = fz_gcs_status();
	fz_count(FZ_PRCTL, got == ~0UL ? -1 : 0);
	if (r == 0 && got != want)
		fz_problem(FZ_INV_PRCTL_READBACK, "PR_SET_SHADOW_STACK_STATUS %#lx accepted, reads %#lx",
			   want, got);
}

void fz_op_prctl_lock(struct fz_thread *t)
{
	/* A lock sticks: in a child of its own most of the time. */
	int in_child = 0;
	pid_t pid;
	int st;

	if (t->depth == 0 && storm_below(&t->rng, 8)) {
		pid = (pid_t)fz_count(FZ_FORK, fork());
		if (pid > 0)
			fz_reap(pid, &st);
		if (pid != 0)
			return;
		in_child = 1;
	}
	fz_count(FZ_PRCTL, gcs_raw_prctl(PR_LOCK_SHADOW_STACK_STATUS, (long)random_mode(t)) ? -1 : 0);
	if (in_child)
		fz_child_ops(t, 8);
}

/* fork: the child must have its parent thread's mode, then plays on. */
void fz_op_fork(struct fz_thread *t)
{
	unsigned long before = fz_gcs_status();
	pid_t pid;
	int st;

	if (t->depth > 1)
		return;
	pid = (pid_t)fz_count(FZ_FORK, fork());
	if (pid == 0) {
		if (fz_gcs_status() != before)
			fz_problem(FZ_INV_FORK_STATUS, "forked child has GCS mode %#lx, parent %#lx",
				   fz_gcs_status(), before);
		fz_child_ops(t, 1 + (int)storm_below(&t->rng, 12));
	}
	if (pid > 0)
		fz_reap(pid, &st);
}

/*
 * vfork + execve: this program again (--exec-child turns GCS on and exits
 * 0 only if it is on), a GCS-marked Debian program with glibc's tunable
 * enforcing GCS, or a path that does not exist.
 */
void fz_op_vfork_exec(struct fz_thread *t)
{
	static char tunable[] = "GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=1";
	char *self_argv[] = { (char *)fz_self, (char *)"--exec-child", NULL };
	char *true_argv[] = { (char *)"/usr/bin/true", NULL };
	char *env[] = { tunable, NULL };
	unsigned int which = (unsigned int)storm_below(&t->rng, 4);
	pid_t pid;
	int st;

	pid = (pid_t)fz_count(FZ_VFORK, vfork());
	if (pid == 0) {
		if (which == 3)
			execve("/nonexistent/storm", self_argv, env);
		else if (which == 2)
			execve(true_argv[0], true_argv, env);
		else
			execve(fz_self, self_argv, env + 1);
		_exit(126);
	}
	if (pid < 0)
		return;
	fz_count(FZ_EXECVE, 0); /* the child's execve, counted by the parent */
	if (fz_reap(pid, &st) != 0 || which == 3)
		return;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fz_problem(FZ_INV_EXEC_GCS, "exec'd %s: status %#x (0 means GCS was on)",
			   which == 2 ? "/usr/bin/true" : "--exec-child", st);
}

struct clone_arg {
	struct fz_thread t;
	unsigned long parent_mode;
};

static int clone_child(void *arg)
{
	struct clone_arg *c = arg;

	/* CLONE_VM without CLONE_VFORK: the kernel gave it a GCS of its own. */
	if ((c->parent_mode & PR_SHADOW_STACK_ENABLE) &&
	    !(fz_gcs_status() & PR_SHADOW_STACK_ENABLE))
		fz_problem(FZ_INV_FORK_STATUS, "CLONE_VM child without GCS");
	return 0;
}

void fz_op_clone_vm(struct fz_thread *t)
{
	static const int flags[] = { CLONE_VM | SIGCHLD, CLONE_VM | CLONE_VFORK | SIGCHLD,
				     CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD };
	size_t size = 64 * 1024;
	struct clone_arg c = { *t, fz_gcs_status() };
	char *stack;
	pid_t pid;
	int st;

	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return;
	pid = (pid_t)fz_count(FZ_CLONE, clone(clone_child, stack + size,
					      flags[storm_below(&t->rng, 3)], &c));
	if (pid > 0)
		fz_reap(pid, &st);
	munmap(stack, size);
}

static void *thread_main(void *arg)
{
	struct fz_thread *t = arg;

	for (int i = 0; i < 4; i++)
		fz_one(t);
	return NULL;
}

/* A short-lived thread (a GCS made and freed) doing a few operations. */
void fz_op_thread(struct fz_thread *t)
{
	struct fz_thread child = *t;
	pthread_t th;

	if (t->depth > 0)
		return;
	child.rng = storm_next(&t->rng);
	child.depth = 1;
	fz_count(FZ_CLONE, pthread_create(&th, NULL, thread_main, &child) ? -1 : 0);
	pthread_join(th, NULL);
}
