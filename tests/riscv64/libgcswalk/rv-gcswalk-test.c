// SPDX-License-Identifier: MIT
/*
 * libgcswalk on riscv64 shadow stacks, in the riscv guest (TAP):
 *  - the calling thread's own chain (gcswalk_self), plain and from a
 *    signal handler (gcswalk_self_signal), with the caller's return from
 *    ra first;
 *  - rv-target's six threads walked live (ptrace) and through its core,
 *    each chain exactly as the target printed it: leaves' callers from ra,
 *    a signal's token and interrupted PC, a switched-to stack ending at its
 *    mapping's end, a deep recursion whole; the smashed record found by
 *    gcswalk_verify(); the regions and the target's architecture;
 *  - without a shadow stack (GCSPROF_SHADOW_STACK=0): typed errors;
 *  - with --no-cfi-cpu (QEMU's plain rv64, no Zicfiss): typed errors.
 * With --share DIR the core, the target and the chains it printed go to
 * DIR for the host tests.
 *
 * Usage: rv-gcswalk-test [--share DIR] | --no-cfi-cpu
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chain-text.h"
#include "find-core.h"
#include "rv-util.h"
#include "tap.h"

#define TARGET "/opt/gcsprof/tests/riscv64/rv-target"
#define EXE "rv-target"
#define SELF "rv-gcswalk-test"
#define SMASHED_RETURN 0xdead0

struct child {
	pid_t pid;
	char *expect;       /* the chains it printed */
};

/* Start the target in DIR (its core goes there), with or without a
 * shadow stack; read its expected chains up to "ready". */
static int spawn_target(struct child *c, const char *dir, int shstk)
{
	char *all = NULL;
	int fds[2];

	memset(c, 0, sizeof(*c));
	if (pipe(fds) != 0)
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], 1) < 0 || chdir(dir) != 0 ||
		    setenv("GCSPROF_SHADOW_STACK", shstk ? "3" : "0", 1) != 0)
			_exit(2);
		execl(TARGET, TARGET, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	c->expect = read_until_ready(fds[0], &all);
	close(fds[0]);
	if (!c->expect)
		tap_diag("the target did not get ready: %s", all ? all : "");
	free(all);
	return c->expect ? 0 : -1;
}

static void reap(struct child *c, int sig)
{
	int st;

	if (c->pid > 0) {
		kill(c->pid, sig);
		waitpid(c->pid, &st, 0);
	}
	c->pid = 0;
	free(c->expect);
	c->expect = NULL;
}

/* Every thread of EXPECT walked in T equals its block. */
static int chains_match(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect,
			const char *what)
{
	struct text why = { NULL, 0, 0 };
	int ok = chains_match_text(t, sym, expect, EXE, what, &why);

	if (!ok)
		tap_diag("%s", why.s ? why.s : "");
	text_free(&why);
	return ok;
}

/* The smash thread's first record holds SMASHED_RETURN, and verify says
 * so (MISMATCH); no thread's walk is refused. The smash thread is the
 * fifth of EXPECT. */
static int smash_found(gcswalk_target *t, const char *expect)
{
	struct gcswalk_record_check checks[64];
	size_t n, count = 0, i;
	int *tids = text_tids(expect, &n), idx, found = 0;

	idx = n >= 5 ? gcswalk_target_thread_index(t, tids[4]) : -1;
	free(tids);
	if (idx < 0 || gcswalk_verify(t, (size_t)idx, checks, 64, &count) < 0)
		return 0;
	for (i = 0; i < count; i++)
		if (checks[i].verdict == GCSWALK_RECORD_MISMATCH &&
		    checks[i].return_address == SMASHED_RETURN)
			found = 1;
	if (!found)
		tap_diag("verify: no MISMATCH holding %#x in %zu checks", SMASHED_RETURN, count);
	return found;
}

/* Every thread's shadow-stack pointer lies in a GCS region. */
static int regions_ok(gcswalk_target *t)
{
	size_t i, j, nr = gcswalk_target_region_count(t);
	int ok = nr > 0;

	for (i = 0; i < gcswalk_target_thread_count(t); i++) {
		struct gcswalk_thread_info info;
		int in = 0;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK || !info.have_gcs)
			return 0;
		for (j = 0; j < nr; j++) {
			struct gcswalk_region r = { .size = sizeof(r) };

			if (gcswalk_target_region(t, j, &r) == GCSWALK_OK &&
			    r.kind == GCSWALK_REGION_GCS && info.gcs.gcspr >= r.start &&
			    info.gcs.gcspr < r.end)
				in = 1;
		}
		if (!in)
			ok = 0;
	}
	return ok;
}

static int arch_is_riscv(gcswalk_target *t)
{
	struct gcswalk_arch_info a = { .size = sizeof(a) };

	/* perf's registers: PERF_REG_RISCV_SSP and PERF_REG_RISCV_RA. */
	return gcswalk_target_arch(t, &a) == GCSWALK_OK && strcmp(a.name, "riscv64") == 0 &&
	       strcmp(a.shadow_stack, "Zicfiss") == 0 && a.elf_machine == 243 &&
	       a.perf_reg_shadow_stack == 32 && a.perf_reg_leaf_caller == 1;
}

/* What every target of rv-target must give: exact chains, the smash,
 * the regions, the architecture. */
static void check_target(gcswalk_target *t, const char *expect, const char *what)
{
	gcswalk_symbolizer *sym = NULL;
	char name[128];

	if (gcswalk_symbolizer_new(&sym, t, NULL) != GCSWALK_OK) {
		tap_result(0, "a symboliser");
		return;
	}
	snprintf(name, sizeof(name), "%s: six threads' chains, exactly as the target printed them",
		 what);
	tap_result(chains_match(t, sym, expect, what), name);
	snprintf(name, sizeof(name), "%s: verify finds the overwritten return address", what);
	tap_result(smash_found(t, expect), name);
	snprintf(name, sizeof(name), "%s: shadow-stack pointers in GCS regions; arch riscv64, Zicfiss",
		 what);
	tap_result(regions_ok(t) && arch_is_riscv(t), name);
	gcswalk_symbolizer_free(sym);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644), ok = 1;
	ssize_t n;

	if (in < 0 || out < 0)
		ok = 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = 0;
	return ok;
}

/* The core, the target and its chains for the host tests. */
static void share_core(const char *share, const char *core, const char *expect)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/rv-target.core", share);
	ok = copy_file(core, path);
	snprintf(path, sizeof(path), "%s/rv-target", share);
	ok = ok && copy_file(TARGET, path);
	snprintf(path, sizeof(path), "%s/rv-target.expect", share);
	f = fopen(path, "w");
	ok = ok && f && fputs(expect, f) >= 0;
	if (f && fclose(f) != 0)
		ok = 0;
	tap_result(ok, "the core, the target and its chains are in the share for the host");
}

static void test_live_and_core(const char *share)
{
	char dir[] = "/tmp/rv-gcswalk.XXXXXX", *core;
	gcswalk_target *t = NULL;
	struct child c;
	char *err = NULL;
	int ret;

	if (!mkdtemp(dir) || spawn_target(&c, dir, 1) != 0) {
		tap_result(0, "rv-target runs");
		return;
	}
	ret = gcswalk_target_open_pid(&t, c.pid, GCSWALK_ATTACH_SEIZE, 30000, &err);
	tap_result(ret == GCSWALK_OK && gcswalk_target_thread_count(t) == 6,
		   "live: rv-target opened with ptrace, six threads");
	if (ret != GCSWALK_OK)
		tap_diag("open: %s: %s", gcswalk_strerror(ret), err ? err : "");
	free(err);
	if (t)
		check_target(t, c.expect, "live");
	gcswalk_target_close(t);
	t = NULL;
	kill(c.pid, SIGQUIT);
	waitpid(c.pid, &ret, 0);
	c.pid = 0;
	core = find_core(dir);
	tap_result(core && WIFSIGNALED(ret) && WCOREDUMP(ret), "rv-target dumped a core on SIGQUIT");
	err = NULL;
	if (core && gcswalk_target_open_core(&t, core, &err) == GCSWALK_OK) {
		check_target(t, c.expect, "core");
		gcswalk_target_close(t);
		if (share)
			share_core(share, core, c.expect);
	} else {
		tap_result(0, "core: opened");
		tap_diag("%s", err ? err : "no core");
	}
	free(err);
	if (core)
		unlink(core);
	free(core);
	rmdir(dir);
	reap(&c, SIGKILL);
}

/* ---- the calling thread ---- */
struct self_rec {
	int line_a, line_b, line_call;
	struct gcswalk_frame frames[64];
	size_t n;
	int ret;
};

static struct self_rec self_plain, self_sig;

static NOINLINE void self_b(struct self_rec *r)
{
	r->line_call = __LINE__, r->ret = gcswalk_self(r->frames, 64, &r->n);
	KEEP_FRAME();
}

static NOINLINE void self_a(struct self_rec *r)
{
	r->line_b = __LINE__, self_b(r);
	KEEP_FRAME();
}

static NOINLINE void self_hnd(void *uc)
{
	struct self_rec *r = &self_sig;

	r->line_call = __LINE__, r->ret = gcswalk_self_signal(uc, r->frames, 64, &r->n);
	KEEP_FRAME();
}

static void on_usr2(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)info;
	self_sig.line_b = __LINE__, self_hnd(uc);
	KEEP_FRAME();
}

static NOINLINE void self_sig_raise(void)
{
	long pid = getpid();

	self_sig.line_a = __LINE__; TGKILL_HERE(pid, gettid(), SIGUSR2);
	KEEP_FRAME();
}

/* The chain R recorded, canonical, starting as WANT does. */
static int self_text_starts(gcswalk_symbolizer *sym, const struct self_rec *r, const char *want)
{
	struct text got = { NULL, 0, 0 };
	int ok;

	chain_text(&got, sym, r->frames, r->n, r->ret, SELF, 0);
	ok = r->ret == GCSWALK_END && got.s && strncmp(got.s, want, strlen(want)) == 0;
	if (!ok)
		tap_diag("self walk (status %d): expected a start of:\n%s# got:\n%s", r->ret, want,
			 got.s ? got.s : "");
	text_free(&got);
	return ok;
}

static void test_self(void)
{
	struct sigaction sa;
	gcswalk_target *t = NULL;
	gcswalk_symbolizer *sym = NULL;
	char want[512];

	self_plain.line_a = __LINE__, self_a(&self_plain);
	KEEP_FRAME();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr2;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	self_sig_raise();
	KEEP_FRAME();
	if (gcswalk_target_open_pid(&t, getpid(), GCSWALK_ATTACH_NONE, 0, NULL) != GCSWALK_OK ||
	    gcswalk_symbolizer_new(&sym, t, NULL) != GCSWALK_OK) {
		tap_result(0, "self: a symboliser of this process");
		gcswalk_target_close(t);
		return;
	}
	/* The caller's return from ra (the library pushes nothing), then the
	 * shadow stack: self_b's own return into self_a, and so on. */
	snprintf(want, sizeof(want), "lr self_b:%d\nreturn self_a:%d\nreturn test_self:%d\n",
		 self_plain.line_call, self_plain.line_b, self_plain.line_a);
	tap_result(self_text_starts(sym, &self_plain, want),
		   "self: gcswalk_self() gives the caller from ra, then the shadow stack");
	snprintf(want, sizeof(want), "lr self_hnd:%d\nreturn on_usr2:%d\nsigreturn\nsignal-cap\n"
		 "interrupted-pc self_sig_raise:%d\n", self_sig.line_call, self_sig.line_b,
		 self_sig.line_a);
	tap_result(self_text_starts(sym, &self_sig, want),
		   "self: from a handler, the signal's token and the interrupted PC from ucontext");
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
}

/* ---- errors ---- */
static int walks_fail(gcswalk_target *t, int want)
{
	size_t i, n = gcswalk_target_thread_count(t);
	int ok = n > 0;

	for (i = 0; i < n; i++) {
		gcswalk_walk *w = NULL;
		int ret = gcswalk_walk_begin(&w, t, i, NULL);

		if (ret != want) {
			tap_diag("thread index %zu: %s, expected %s", i, gcswalk_strerror(ret),
				 gcswalk_strerror(want));
			ok = 0;
		}
		gcswalk_walk_free(w);
	}
	return ok;
}

static void test_no_shadow_stack(void)
{
	char dir[] = "/tmp/rv-gcswalk.XXXXXX", *core;
	gcswalk_target *t = NULL;
	struct child c;
	int st;

	if (!mkdtemp(dir) || spawn_target(&c, dir, 0) != 0) {
		tap_result(0, "rv-target runs without a shadow stack");
		return;
	}
	st = gcswalk_target_open_pid(&t, c.pid, GCSWALK_ATTACH_SEIZE, 30000, NULL);
	tap_result(st == GCSWALK_OK && walks_fail(t, GCSWALK_E_GCS_DISABLED),
		   "live, shadow stack off: every walk says GCSWALK_E_GCS_DISABLED");
	gcswalk_target_close(t);
	t = NULL;
	kill(c.pid, SIGQUIT);
	waitpid(c.pid, &st, 0);
	c.pid = 0;
	core = find_core(dir);
	st = core ? gcswalk_target_open_core(&t, core, NULL) : -1;
	tap_result(st == GCSWALK_OK && walks_fail(t, GCSWALK_E_GCS_DISABLED),
		   "core, shadow stack off: the same");
	gcswalk_target_close(t);
	if (core)
		unlink(core);
	free(core);
	rmdir(dir);
	reap(&c, SIGKILL);
}

/* On a CPU without Zicfiss the kernel gives no shadow stack and no regset. */
static void __attribute__((noreturn)) no_cfi_cpu(void)
{
	struct gcswalk_frame f[8];
	gcswalk_target *t = NULL;
	struct child c;
	size_t n;
	char dir[] = "/tmp/rv-gcswalk.XXXXXX";
	int st;

	tap_plan(3);
	tap_result(gcswalk_system_gcs() == GCSWALK_E_NO_GCS_CPU,
		   "no Zicfiss: gcswalk_system_gcs() says GCSWALK_E_NO_GCS_CPU");
	tap_result(gcswalk_self(f, 8, &n) == GCSWALK_E_NO_GCS_CPU,
		   "no Zicfiss: gcswalk_self() says GCSWALK_E_NO_GCS_CPU");
	st = mkdtemp(dir) && spawn_target(&c, dir, 1) == 0 ?
		     gcswalk_target_open_pid(&t, c.pid, GCSWALK_ATTACH_SEIZE, 30000, NULL) : -1;
	tap_result(st == GCSWALK_OK && walks_fail(t, GCSWALK_E_NO_GCS_CPU),
		   "no Zicfiss: walks of a process say GCSWALK_E_NO_GCS_CPU");
	gcswalk_target_close(t);
	reap(&c, SIGKILL);
	rmdir(dir);
	tap_finish();
}

int main(int argc, char **argv)
{
	const char *share = NULL;
	int fds;

	if (argc > 1 && strcmp(argv[1], "--no-cfi-cpu") == 0)
		no_cfi_cpu();
	if (argc > 2 && strcmp(argv[1], "--share") == 0)
		share = argv[2];
	if (gcswalk_system_gcs() != GCSWALK_OK)
		tap_skip_all("this CPU or kernel gives no shadow stack to user space");
	tap_plan(share ? 14 : 13);
	fds = count_open_fds();
	test_self();
	test_live_and_core(share);
	test_no_shadow_stack();
	tap_result(count_open_fds() == fds, "no file descriptor leaked");
	tap_finish();
}
