// SPDX-License-Identifier: MIT
/*
 * gcswalk-guest-test: libgcswalk end to end in the guest (TAP).
 *
 *   gcswalk-guest-test [FEATURE...]
 *      Skips (4) without GCS. Otherwise the features named (none: all),
 *      each a CTest test of its own: self (self walks: plain, inside a
 *      signal handler, on a map_shadow_stack stack, cut); live
 *      (gcswalk-target seized by the library: thread names, the depth
 *      limit, verify, facts, the fallbacks, a second tracer refused);
 *      live-stopped (threads the caller or job control stopped, release);
 *      core (its core walked); errors (typed errors for a process without
 *      GCS, a dead pid, a target we may not trace, a process that dies
 *      mid-walk); system (perf's sysctls). Every chain must match the
 *      target's own record of functions and lines.
 *
 *   gcswalk-guest-test --core-for-host DIR
 *      Only the core: walked here, then the core, the expected chains, the
 *      guest's full symbolised dump and the mapped files (a sysroot) are
 *      left in DIR for the host test (tests/host/guest-core-test.sh).
 *
 *   gcswalk-guest-test --no-gcs-cpu
 *      For a CPU without GCS: the typed errors that say so (self walk, live
 *      walk) and the labelled CFI fallback. Skips where the CPU has GCS.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "chain-text.h"
#include "debug-kernel.h"
#include "find-core.h"
#include "gcs-util.h"
#include "gcswalk.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop

#define TARGET "/opt/gcsprof/tests/gcswalk-target"
#define TARGET_NAME "gcswalk-target"
#define SELF_NAME "gcswalk-guest-test"

/* ---- helpers ---- */

static const char *volatile section = "start";

/* A test that hangs fails, and says where. */
static void on_alarm(int sig)
{
	static const char msg[] = "# watchdog: no progress in section ";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0 || write(1, section, strlen(section)) < 0 ||
	    write(1, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

/* Seconds a section may take: 200, ten times that on the debug kernel,
 * where KASAN and lockdep make every fork, ptrace stop and core dump 10-15
 * times slower. Read once: enter() runs for every section. */
static unsigned int watchdog_seconds(void)
{
	static unsigned int seconds;

	if (!seconds)
		seconds = on_debug_kernel() ? 2000 : 200;
	return seconds;
}

static void enter(const char *name)
{
	section = name;
	alarm(watchdog_seconds());
}

struct child {
	pid_t pid;
	char *expect;
};

/*
 * "ready" is printed just before the last thread parks: wait until every
 * thread of PID sits in ppoll (/proc/PID/task/TID/syscall starts with its
 * number), for at most 60 s (TCG under load is slow).
 */
static void wait_parked(pid_t pid)
{
	char path[96], buf[64];
	int round, all = 0;

	for (round = 0; round < 6000 && !all; round++) {
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		d = opendir(path);
		if (!d)
			return;
		all = 1;
		while ((de = readdir(d)) != NULL) {
			ssize_t n;
			int fd;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, atoi(de->d_name));
			fd = open(path, O_RDONLY);
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			buf[n > 0 ? n : 0] = '\0';
			if (atoi(buf) != __NR_ppoll || n <= 0)
				all = 0;
		}
		closedir(d);
		if (!all)
			usleep(10000);
	}
	if (!all)
		tap_diag("the target's threads did not all park");
}

/* Start the target with stdout on a pipe; read until "ready", and until
 * every thread is parked. */
static int spawn_target(struct child *c, const char *dir, int gcs)
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
		if (dup2(fds[1], 1) < 0)
			_exit(2);
		execl(TARGET, TARGET, "--dir", dir, gcs ? NULL : "--no-gcs", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	c->expect = read_until_ready(fds[0], &all);
	close(fds[0]);
	if (!c->expect) {
		tap_diag("the target did not get ready: %s", all ? all : "");
		free(all);
		return -1;
	}
	wait_parked(c->pid);
	return 0;
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

/* Every thread of EXPECT walked in T equals its expected block. */
static int chains_match(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect,
			const char *exe, const char *what)
{
	struct text why = { NULL, 0, 0 };
	int ok = chains_match_text(t, sym, expect, exe, what, &why);

	if (!ok)
		tap_diag("%s", why.s ? why.s : "");
	text_free(&why);
	return ok;
}

static int open_live(gcswalk_target **t, pid_t pid, unsigned flags)
{
	char *err = NULL;
	int ret = gcswalk_target_open_pid(t, pid, flags, 30000, &err);

	if (ret != GCSWALK_OK)
		tap_diag("open pid %d: %s: %s", (int)pid, gcswalk_strerror(ret), err ? err : "");
	free(err);
	return ret;
}

/* The state letter of PID in /proc/PID/stat ('?' if unknown). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* In a child, as uid 65534 or just as another tracer: the open status. */
static int open_status_in_child(pid_t pid, int drop)
{
	pid_t c = fork();
	int st;

	if (c == 0) {
		gcswalk_target *t = NULL;
		int ret;

		if (drop && (setresgid(65534, 65534, 65534) != 0 ||
			     setresuid(65534, 65534, 65534) != 0))
			_exit(100);
		ret = gcswalk_target_open_pid(&t, pid, 0, 0, NULL);
		gcswalk_target_close(t);
		_exit(ret < 0 ? -ret : 0);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st))
		return 1000;
	return -WEXITSTATUS(st);
}

static int copy_file(const char *from, const char *to)
{
	char *buf = malloc(1 << 16);
	int in = open(from, O_RDONLY), out = -1, ok = 0;
	ssize_t r;

	if (buf && in >= 0)
		out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out >= 0) {
		ok = 1;
		while ((r = read(in, buf, 1 << 16)) > 0)
			if (write(out, buf, (size_t)r) != r)
				ok = 0;
		if (r < 0)
			ok = 0;
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = 0;
	free(buf);
	return ok;
}

static int mkdirs(const char *path)
{
	char *p = strdup(path), *s;

	if (!p)
		return 0;
	for (s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				free(p);
				return 0;
			}
			*s = '/';
		}
	}
	free(p);
	return 1;
}

static int write_text(const char *dir, const char *name, const char *s)
{
	char *path;
	FILE *f;
	int ok;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return 0;
	f = fopen(path, "w");
	free(path);
	if (!f)
		return 0;
	ok = fputs(s, f) >= 0;
	return fclose(f) == 0 && ok;
}

/* The core, the expectation, the full dump and the mapped files, for the
 * host test. */
static int share_core(const char *share, const char *core, gcswalk_target *t,
		      gcswalk_symbolizer *sym, const char *expect)
{
	struct text full = { NULL, 0, 0 };
	char *to;
	size_t i, n;
	int *tids = text_tids(expect, &n), ok = 1;

	for (i = 0; i < n; i++)
		walk_text(&full, t, sym, tids[i], NULL, TARGET_NAME, 1);
	free(tids);
	ok = full.s && write_text(share, "guest-full.txt", full.s) &&
	     write_text(share, "expect.txt", expect);
	text_free(&full);
	if (asprintf(&to, "%s/gcswalk.core", share) < 0)
		return 0;
	ok = ok && copy_file(core, to);
	free(to);
	for (i = 0; ok && i < gcswalk_target_mapping_count(t); i++) {
		struct gcswalk_mapping m;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK || m.offset != 0)
			continue;
		if (asprintf(&to, "%s/sysroot%s", share, m.path) < 0)
			return 0;
		ok = mkdirs(to) && copy_file(m.path, to);
		if (!ok)
			tap_diag("could not copy %s to %s", m.path, to);
		free(to);
	}
	return ok;
}

/* ---- self walks ---- */

struct self_rec {
	struct gcswalk_frame frames[64];
	size_t n;
	int ret;
	int lines[6];
	/* gcswalk_self_signal() from the same handler */
	struct gcswalk_frame frames2[64];
	size_t n2;
	int ret2;
};

static struct self_rec self_plain, self_sig, self_sw, self_cut;
static atomic_int self_sw_done;

static NOINLINE void self_leaf(struct self_rec *r)
{
	r->lines[0] = __LINE__, r->ret = gcswalk_self(r->frames, 64, &r->n);
	KEEP_FRAME();
}

static NOINLINE void self_b(struct self_rec *r)
{
	r->lines[1] = __LINE__, self_leaf(r);
	KEEP_FRAME();
}

static NOINLINE void self_a(struct self_rec *r)
{
	r->lines[2] = __LINE__, self_b(r);
	KEEP_FRAME();
}

static NOINLINE void self_cut_leaf(struct self_rec *r)
{
	r->ret = gcswalk_self(r->frames, 2, &r->n);
	KEEP_FRAME();
}

static NOINLINE void self_hnd(struct self_rec *r, void *uc)
{
	r->lines[0] = __LINE__, r->ret = gcswalk_self(r->frames, 64, &r->n);
	r->lines[4] = __LINE__, r->ret2 = gcswalk_self_signal(uc, r->frames2, 64, &r->n2);
	KEEP_FRAME();
}

static void on_usr2(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)info;
	self_sig.lines[1] = __LINE__, self_hnd(&self_sig, uc);
	KEEP_FRAME();
}

static NOINLINE void self_sig_raise(struct self_rec *r)
{
	r->lines[5] = __LINE__; TGKILL_HERE(gettid(), SIGUSR2);
	KEEP_FRAME();
}

static NOINLINE void self_sig_b(struct self_rec *r)
{
	r->lines[2] = __LINE__, self_sig_raise(r);
	KEEP_FRAME();
}

static NOINLINE void self_sig_a(struct self_rec *r)
{
	r->lines[3] = __LINE__, self_sig_b(r);
	KEEP_FRAME();
}

static NOINLINE void self_sw_leaf(struct self_rec *r)
{
	r->lines[0] = __LINE__, r->ret = gcswalk_self(r->frames, 64, &r->n);
	KEEP_FRAME();
}

static NOINLINE void self_sw_a(struct self_rec *r)
{
	r->lines[1] = __LINE__, self_sw_leaf(r);
	atomic_store(&self_sw_done, 1);
	PARK_FOREVER();
}

#define SW_SIZE (4 * 4096)

static void *self_sw_thread(void *arg)
{
	struct self_rec *r = arg;
	long gcs = raw_syscall3(NR_map_shadow_stack, 0, SW_SIZE, SHADOW_STACK_SET_TOKEN);

	if (gcs < 0 && gcs > -4096) {
		r->ret = 1000;
		atomic_store(&self_sw_done, 1);
		return NULL;
	}
	/* Never returns from here: its return address is on the old GCS. */
	gcsss1((uint64_t)gcs + SW_SIZE - 8);
	(void)gcsss2();
	r->lines[2] = __LINE__, self_sw_a(r);
	exit(3);
}

/* 2000 calls deep: the chain spans several GCS pages. */
#define SELF_DEEP 2000
static struct {
	struct gcswalk_frame frames[4096];
	size_t n;
	int ret;
} self_deep_rec;

static NOINLINE void self_deep(int n)
{
	if (n == 0) {
		self_deep_rec.ret = gcswalk_self(self_deep_rec.frames, 4096, &self_deep_rec.n);
		KEEP_FRAME();
		return;
	}
	self_deep(n - 1);
	KEEP_FRAME();
}

static int self_deep_ok(void)
{
	size_t i, same = 0, n = self_deep_rec.n;

	self_deep(SELF_DEEP);
	n = self_deep_rec.n;
	for (i = 1; i < n; i++)
		same += self_deep_rec.frames[i].address == self_deep_rec.frames[1].address;
	if (self_deep_rec.ret != GCSWALK_END || n < SELF_DEEP + 2 || same < SELF_DEEP - 1 ||
	    self_deep_rec.frames[n - 1].kind != GCSWALK_FRAME_TERMINATOR) {
		tap_diag("deep self walk: %s, %zu frames, %zu recursive",
			 gcswalk_strerror(self_deep_rec.ret), n, same);
		return 0;
	}
	return 1;
}

static int self_text_starts(gcswalk_symbolizer *sym, const struct self_rec *r, const char *want,
			    const char *what)
{
	struct text got = { NULL, 0, 0 };
	int ok;

	chain_text(&got, sym, r->frames, r->n, r->ret, SELF_NAME, 0);
	ok = got.s && strncmp(got.s, want, strlen(want)) == 0;
	if (!ok)
		tap_diag("%s: expected a chain starting with:\n%s# got:\n%s", what, want,
			 got.s ? got.s : "");
	text_free(&got);
	return ok;
}

static void test_self(void)
{
	struct sigaction sa;
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t = NULL;
	struct text want = { NULL, 0, 0 };
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pthread_t th;
	int ok, i;

	self_a(&self_plain);
	self_cut_leaf(&self_cut);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr2;
	sa.sa_flags = SA_SIGINFO;
	ok = sigaction(SIGUSR2, &sa, NULL) == 0;
	if (ok)
		self_sig_a(&self_sig);
	if (pthread_create(&th, NULL, self_sw_thread, &self_sw) == 0)
		for (i = 0; i < 3000 && !atomic_load(&self_sw_done); i++)
			nanosleep(&ts, NULL);

	if (open_live(&t, getpid(), GCSWALK_ATTACH_NONE) != GCSWALK_OK ||
	    gcswalk_symbolizer_new(&sym, t, NULL) != GCSWALK_OK) {
		tap_diag("cannot symbolise this process: %s", gcswalk_target_errmsg(t));
		for (i = 0; i < 5; i++)
			tap_result(0, "self: (no symboliser)");
		tap_result(self_deep_ok(), "self: a 2000-deep chain across GCS pages, complete");
		gcswalk_target_close(t);
		return;
	}
	text_printf(&want, "return self_leaf:%d\nreturn self_b:%d\nreturn self_a:%d\n",
		    self_plain.lines[0], self_plain.lines[1], self_plain.lines[2]);
	tap_result(self_plain.ret == GCSWALK_END && want.s &&
		   self_text_starts(sym, &self_plain, want.s, "self") &&
		   self_plain.frames[self_plain.n - 1].kind == GCSWALK_FRAME_TERMINATOR,
		   "self: a known chain, function and line, up to the terminator");
	text_free(&want);
	text_printf(&want, "return self_hnd:%d\nreturn on_usr2:%d\nsigreturn\nsignal-cap\n"
		    "return self_sig_b:%d\nreturn self_sig_a:%d\n",
		    self_sig.lines[0], self_sig.lines[1], self_sig.lines[2], self_sig.lines[3]);
	tap_result(ok && self_sig.ret == GCSWALK_END && want.s &&
		   self_text_starts(sym, &self_sig, want.s, "self in a signal handler"),
		   "self: from a signal handler, across the signal cap");
	text_free(&want);
	text_printf(&want, "return self_hnd:%d\nreturn on_usr2:%d\nsigreturn\nsignal-cap\n"
		    "interrupted-pc self_sig_raise:%d\nreturn self_sig_b:%d\nreturn self_sig_a:%d\n",
		    self_sig.lines[4], self_sig.lines[1], self_sig.lines[5], self_sig.lines[2],
		    self_sig.lines[3]);
	{
		struct self_rec r2 = self_sig;

		memcpy(r2.frames, self_sig.frames2, sizeof(r2.frames));
		r2.n = self_sig.n2;
		r2.ret = self_sig.ret2;
		tap_result(ok && r2.ret == GCSWALK_END && want.s &&
			   self_text_starts(sym, &r2, want.s, "self with the signal's ucontext"),
			   "self: with the handler's ucontext, the interrupted PC too");
	}
	text_free(&want);
	text_printf(&want, "return self_sw_leaf:%d\nreturn self_sw_a:%d\nreturn self_sw_thread:%d\nend\n",
		    self_sw.lines[0], self_sw.lines[1], self_sw.lines[2]);
	tap_result(self_sw.ret == GCSWALK_END && want.s &&
		   self_text_starts(sym, &self_sw, want.s, "self on a switched GCS"),
		   "self: on a map_shadow_stack GCS, ending at its mapping");
	text_free(&want);
	tap_result(self_cut.ret == GCSWALK_CUT && self_cut.n == 2, "self: depth limit says cut");
	tap_result(self_deep_ok(), "self: a 2000-deep chain across GCS pages, complete");
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
}

/* ---- live and core ---- */

static int thread_names_ok(gcswalk_target *t)
{
	const char *want[] = { TARGET_NAME, "gw-plain", "gw-signal", "gw-switch", "gw-smash",
			       "gw-deep" };
	size_t i, j, found = 0;

	for (j = 0; j < 6; j++) {
		for (i = 0; i < gcswalk_target_thread_count(t); i++) {
			struct gcswalk_thread_info info;

			if (gcswalk_target_thread(t, i, &info) == GCSWALK_OK && info.name &&
			    strcmp(info.name, want[j]) == 0 && info.have_gcs &&
			    (info.gcs.features_enabled & 1) && (j != 0 || i == 0)) {
				found++;
				break;
			}
		}
	}
	return gcswalk_target_thread_count(t) == 6 && found == 6;
}

/* The deep thread (1500+ frames) with the default options: 1024 frames,
 * then GCSWALK_CUT. */
static int default_limit_cuts(gcswalk_target *t, const char *expect)
{
	struct gcswalk_frame f;
	gcswalk_walk *w;
	size_t nt, n = 0;
	int *tids = text_tids(expect, &nt), idx, ret = GCSWALK_E_INVALID;

	idx = nt == 6 ? gcswalk_target_thread_index(t, tids[5]) : -1;
	free(tids);
	if (idx < 0 || gcswalk_walk_begin(&w, t, (size_t)idx, NULL) != GCSWALK_OK)
		return 0;
	while ((ret = gcswalk_walk_next(w, &f)) == GCSWALK_OK)
		n++;
	gcswalk_walk_free(w);
	if (n != 1024 || ret != GCSWALK_CUT)
		tap_diag("default walk of the deep thread: %zu frames, %s", n, gcswalk_strerror(ret));
	return n == 1024 && ret == GCSWALK_CUT;
}

/* Frame records against the GCS: the plain thread's all match; the smash
 * thread's overwritten one, and only it, does not. */
static int verify_ok(gcswalk_target *t, const char *expect)
{
	struct gcswalk_record_check c[64];
	size_t n, nt, i;
	int *tids = text_tids(expect, &nt), ok = 0, matches = 0, bad = 0, ret;

	if (nt == 6) {
		ret = gcswalk_verify(t, (size_t)gcswalk_target_thread_index(t, tids[1]), c, 64, &n);
		for (i = 0; ret == GCSWALK_END && i < n; i++) {
			matches += c[i].verdict == GCSWALK_RECORD_MATCHES;
			bad += c[i].verdict == GCSWALK_RECORD_MISMATCH;
		}
		ok = ret == GCSWALK_END && matches >= 4 && bad == 0;
		if (!ok)
			tap_diag("verify plain: %s, %d matches, %d mismatches", gcswalk_strerror(ret),
				 matches, bad);
		matches = bad = 0;
		ret = gcswalk_verify(t, (size_t)gcswalk_target_thread_index(t, tids[4]), c, 64, &n);
		for (i = 0; ret == GCSWALK_END && i < n; i++) {
			if (c[i].verdict == GCSWALK_RECORD_MISMATCH) {
				bad++;
				ok &= c[i].return_address == 0xdead0;
			}
			matches += c[i].verdict == GCSWALK_RECORD_MATCHES;
		}
		if (ret != GCSWALK_END || bad != 1 || matches < 2) {
			tap_diag("verify smash: %s, %d matches, %d mismatches", gcswalk_strerror(ret),
				 matches, bad);
			ok = 0;
		}
	}
	free(tids);
	return ok;
}

static int strip_line(char *s, const char *line)
{
	char *p;
	int n = 0;

	while ((p = strstr(s, line)) != NULL) {
		memmove(p, p + strlen(line), strlen(p + strlen(line)) + 1);
		n++;
	}
	return n;
}

static int fp_labelled(gcswalk_target *t, int tid)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame f;
	gcswalk_walk *w;
	int idx = gcswalk_target_thread_index(t, tid), ok = 1;

	o.method = GCSWALK_METHOD_FP;
	if (idx < 0 || gcswalk_walk_begin(&w, t, (size_t)idx, &o) != GCSWALK_OK)
		return 0;
	while (gcswalk_walk_next(w, &f) == GCSWALK_OK)
		ok &= f.source == GCSWALK_SOURCE_FP;
	gcswalk_walk_free(w);
	return ok;
}

static void test_fallbacks(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	size_t n;
	int *tids = text_tids(expect, &n), ok = 0;
	struct text got = { NULL, 0, 0 };
	char *want = NULL;

	/* The plain thread: CFI must find the same chain, minus the GCS's own
	 * terminator; every frame labelled as coming from the CFI unwinder. */
	if (n >= 2) {
		gcswalk_walk *w = NULL;
		struct gcswalk_frame f;
		int idx = gcswalk_target_thread_index(t, tids[1]), labelled = 1;

		o.method = GCSWALK_METHOD_CFI;
		o.symbolizer = sym;
		want = text_block(expect, tids[1]);
		walk_text(&got, t, sym, tids[1], &o, TARGET_NAME, 0);
		if (want && strip_line(want, "terminator\n") == 1 && got.s &&
		    strcmp(want, got.s) == 0)
			ok = 1;
		else
			tap_diag("CFI chain differs; expected:\n%s# got:\n%s", want ? want : "",
				 got.s ? got.s : "");
		if (idx >= 0 && gcswalk_walk_begin(&w, t, (size_t)idx, &o) == GCSWALK_OK) {
			while (gcswalk_walk_next(w, &f) == GCSWALK_OK)
				labelled &= f.source == GCSWALK_SOURCE_CFI;
			gcswalk_walk_free(w);
		} else {
			labelled = 0;
		}
		ok &= labelled;
	}
	tap_result(ok, "live fallback: CFI gives the GCS chain, labelled cfi");
	free(want);
	text_free(&got);
	{
		/* Frame records: labelled, and every frame they give in the
		 * target itself is one the GCS has too (they may miss a leaf's
		 * caller; libc's records are not this test's business). */
		struct text gcs = { NULL, 0, 0 }, fp = { NULL, 0, 0 };
		char *line, *save = NULL;
		int frames = 0, bad = 0;

		o.method = GCSWALK_METHOD_FP;
		o.symbolizer = NULL;
		ok = 0;
		if (n >= 2 && walk_text(&gcs, t, sym, tids[1], NULL, TARGET_NAME, 0) == GCSWALK_OK &&
		    walk_text(&fp, t, sym, tids[1], &o, TARGET_NAME, 0) == GCSWALK_OK && gcs.s &&
		    fp.s) {
			for (line = strtok_r(fp.s, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				if (strncmp(line, "return ", 7) != 0)
					continue;
				frames++;
				if (!strstr(gcs.s, line)) {
					tap_diag("FP frame \"%s\" is not on the GCS", line);
					bad++;
				}
			}
			ok = frames >= 3 && bad == 0 && fp_labelled(t, tids[1]);
			tap_diag("frame records: %d frames in the target", frames);
		}
		tap_result(ok, "live fallback: frame records agree with the GCS, labelled fp");
		text_free(&gcs);
		text_free(&fp);
	}
	free(tids);
}

/* Kill the target with SIGQUIT, walk its core; with SHARE, leave it there
 * for the host test. */
/* Every GCS-enabled thread's GCSPR lies in a GCS region; a vDSO region
 * is there, and its image names __kernel_clock_gettime and has the
 * build-id of this process's own vDSO (the same kernel). */
static int regions_and_vdso_ok(gcswalk_target *t, const char *what)
{
	const struct gcswalk_elf_symbol *syms = NULL, *own_syms = NULL;
	const unsigned char *bid = NULL, *own_bid = NULL;
	size_t n = gcswalk_target_region_count(t), i, k, nsyms = 0, nbid = 0, own_n = 0, own_nbid = 0;
	uint64_t start = 0, size = 0, own_start = 0;
	gcswalk_target *self = NULL;
	int ok = 1, vdso = 0, clock = 0;

	for (i = 0; i < gcswalk_target_thread_count(t); i++) {
		struct gcswalk_thread_info info;
		int in = 0;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK || !info.have_gcs ||
		    !(info.gcs.features_enabled & GCSWALK_GCS_ENABLE))
			continue;
		for (k = 0; k < n; k++) {
			struct gcswalk_region r = { sizeof(r), 0, 0, 0 };

			if (gcswalk_target_region(t, k, &r) == GCSWALK_OK &&
			    r.kind == GCSWALK_REGION_GCS && info.gcs.gcspr >= r.start &&
			    info.gcs.gcspr < r.end)
				in = 1;
		}
		if (!in) {
			tap_diag("%s: thread %d's GCSPR %#llx is in no GCS region (%zu regions)", what,
				 info.tid, (unsigned long long)info.gcs.gcspr, n);
			ok = 0;
		}
	}
	for (k = 0; k < n; k++) {
		struct gcswalk_region r = { sizeof(r), 0, 0, 0 };

		if (gcswalk_target_region(t, k, &r) == GCSWALK_OK && r.kind == GCSWALK_REGION_VDSO)
			vdso++;
	}
	if (gcswalk_target_vdso(t, &start, &size, &syms, &nsyms, &bid, &nbid) != GCSWALK_OK) {
		tap_diag("%s: vdso: %s", what, gcswalk_target_errmsg(t));
		return 0;
	}
	for (i = 0; i < nsyms; i++)
		clock += strcmp(syms[i].name, "__kernel_clock_gettime") == 0 && syms[i].size > 0 &&
			 syms[i].offset < size;
	ok = ok && vdso == 1 && clock == 1 && nbid > 0;
	/* This process's own vDSO, through a target on itself. */
	if (gcswalk_target_open_pid(&self, (int)getpid(), GCSWALK_ATTACH_NONE, 0, NULL) !=
		    GCSWALK_OK ||
	    gcswalk_target_vdso(self, &own_start, NULL, &own_syms, &own_n, &own_bid, &own_nbid) !=
		    GCSWALK_OK)
		ok = 0;
	ok = ok && own_start == getauxval(AT_SYSINFO_EHDR) && own_n == nsyms &&
	     own_nbid == nbid && memcmp(own_bid, bid, nbid) == 0;
	if (!ok)
		tap_diag("%s: %zu vDSO regions, %d clock_gettime, %zu symbols, build-id %zu bytes", what,
			 (size_t)vdso, clock, nsyms, nbid);
	gcswalk_target_close(self);
	return ok;
}

/* The core's fatal signal: the SIGQUIT we sent, to its first thread. */
static int core_facts_ok(gcswalk_target *core)
{
	struct gcswalk_signal_info si;
	struct gcswalk_thread_info info;
	int ret;

	memset(&si, 0, sizeof(si));
	si.size = sizeof(si);
	ret = gcswalk_target_fatal_signal(core, &si);
	if (ret != GCSWALK_OK || si.signo != SIGQUIT || si.code != SI_USER || si.address != 0 ||
	    si.thread_index != 0 || gcswalk_target_thread(core, 0, &info) != GCSWALK_OK ||
	    info.tid != si.tid) {
		tap_diag("core signal: %s: %d code %d tid %d", gcswalk_strerror(ret), si.signo, si.code,
			 si.tid);
		return 0;
	}
	return regions_and_vdso_ok(core, "core");
}

/* While we hold the target: the /proc calls see it traced by us, its
 * threads are those of the target, and its executable's build-id is the
 * file's. */
static int live_facts_ok(gcswalk_target *t, pid_t pid)
{
	const unsigned char *id = NULL;
	unsigned char *file_id = NULL;
	size_t n = 0, i, nid = 0, nfile = 0;
	int *tids = NULL, ok, exe = 0;

	ok = gcswalk_system_gcs() == GCSWALK_OK &&
	     gcswalk_proc_threads(pid, &tids, &n) == GCSWALK_OK &&
	     n == gcswalk_target_thread_count(t);
	for (i = 0; ok && i < n; i++) {
		struct gcswalk_proc_thread pt;

		memset(&pt, 0, sizeof(pt));
		pt.size = sizeof(pt);
		ok = gcswalk_target_thread_index(t, tids[i]) >= 0 &&
		     gcswalk_proc_thread(pid, tids[i], NULL, &pt) == GCSWALK_OK && pt.tgid == pid &&
		     pt.tracer_pid == getpid() && pt.state == 't';
		if (!ok)
			tap_diag("proc thread %d: tgid %d tracer %d state %c", tids[i], pt.tgid,
				 pt.tracer_pid, pt.state);
	}
	free(tids);
	for (i = 0; ok && i < gcswalk_target_mapping_count(t); i++) {
		struct gcswalk_mapping m;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK || strcmp(m.path, TARGET) != 0)
			continue;
		exe = gcswalk_target_mapping_build_id(t, i, &id, &nid) == GCSWALK_OK &&
		      gcswalk_file_build_id(TARGET, &file_id, &nfile) == GCSWALK_OK && nid == nfile &&
		      memcmp(id, file_id, nid) == 0;
		free(file_id);
		file_id = NULL;
		/* The same through the process's own root, without a target. */
		exe = exe && gcswalk_proc_build_id(pid, TARGET, &file_id, &nfile) == GCSWALK_OK &&
		      nfile == nid && memcmp(id, file_id, nid) == 0 &&
		      gcswalk_proc_build_id(pid, "relative/path", &file_id, &nfile) ==
			      GCSWALK_E_INVALID &&
		      gcswalk_proc_build_id(0, TARGET, &file_id, &nfile) == GCSWALK_E_INVALID &&
		      gcswalk_proc_build_id(pid, "/nonexistent/file", &file_id, &nfile) ==
			      GCSWALK_E_IO;
		free(file_id);
		file_id = NULL;
		break;
	}
	if (ok && !exe)
		tap_diag("the target's build-id through its mapping or gcswalk_proc_build_id() "
			 "differs from the file's");
	return ok && exe && regions_and_vdso_ok(t, "live");
}

static void core_of_target(struct child *c, const char *dir, const char *share)
{
	gcswalk_target *core = NULL;
	gcswalk_symbolizer *sym = NULL;
	char *corepath = NULL, *err = NULL;
	int ret, st, ok;

	kill(c->pid, SIGQUIT);
	ok = waitpid(c->pid, &st, 0) == c->pid && WIFSIGNALED(st) && WCOREDUMP(st);
	c->pid = 0;
	corepath = ok ? find_core(dir) : NULL;
	ret = corepath ? gcswalk_target_open_core(&core, corepath, &err) : GCSWALK_E_IO;
	if (ret != GCSWALK_OK)
		tap_diag("core %s: %s: %s", corepath ? corepath : "(none)", gcswalk_strerror(ret),
			 err ? err : "");
	free(err);
	ok = ret == GCSWALK_OK && gcswalk_symbolizer_new(&sym, core, NULL) == GCSWALK_OK;
	tap_result(ok && gcswalk_target_thread_count(core) == 6 &&
		   chains_match(core, sym, c->expect, TARGET_NAME, "core"),
		   "core: every thread's chain matches");
	tap_result(ok && core_facts_ok(core),
		   "core: its fatal signal, GCS and vDSO regions, the vDSO's symbols and build-id");
	if (share)
		tap_result(ok && share_core(share, corepath, core, sym, c->expect),
			   "core: left for the host test with its sysroot");
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(core);
	if (corepath)
		unlink(corepath);
	free(corepath);
}

/* --core-for-host DIR: only the core, left in DIR. */
static void __attribute__((noreturn)) core_for_host(const char *share)
{
	char dir[] = "/tmp/gcswalk-core.XXXXXX";
	struct child c;

	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	tap_plan(3);
	if (!mkdtemp(dir) || spawn_target(&c, dir, 1) != 0)
		tap_finish();
	core_of_target(&c, dir, share);
	reap(&c, SIGKILL);
	rmdir(dir);
	tap_finish();
}

/* gcswalk_target_mapping_find() agrees with the mapping list. */
static int mapping_find_ok(gcswalk_target *t)
{
	size_t i, n = gcswalk_target_mapping_count(t);
	int ok = n > 0 && gcswalk_target_mapping_find(t, 0) == GCSWALK_E_NO_SYMBOL;

	for (i = 0; i < n && ok; i++) {
		struct gcswalk_mapping m;

		ok = gcswalk_target_mapping(t, i, &m) == GCSWALK_OK &&
		     gcswalk_target_mapping_find(t, m.start) == (int)i &&
		     gcswalk_target_mapping_find(t, m.end - 1) == (int)i;
		if (!ok)
			tap_diag("mapping %zu [%#llx, %#llx) %s not found by address", i,
				 (unsigned long long)m.start, (unsigned long long)m.end, m.path);
	}
	return ok;
}

/*
 * A sampler's loop on one target: the caller resumes the threads it holds
 * (PROBE lists them), stops them again, refreshes each, and the chains are
 * the same; a thread resumed and not stopped again is NOT_STOPPED, and
 * strings from before a refresh of the map and the names stay valid.
 */
static int resample_ok(gcswalk_target *t, gcswalk_target *probe, const char *expect)
{
	struct gcswalk_thread_info info;
	struct gcswalk_mapping m0;
	gcswalk_symbolizer *sym = NULL;
	gcswalk_walk *w = NULL;
	const char *name0;
	char *path_copy, *name_copy;
	size_t k, n = gcswalk_target_thread_count(probe);
	int round, ok = 1, s, idx;

	if (gcswalk_target_mapping(t, 0, &m0) != GCSWALK_OK ||
	    gcswalk_target_thread(t, 0, &info) != GCSWALK_OK || !info.name)
		return 0;
	name0 = info.name;
	path_copy = strdup(m0.path);
	name_copy = strdup(name0);
	for (round = 0; round < 3 && ok; round++) {
		for (k = 0; k < n; k++) {
			if (gcswalk_target_thread(probe, k, &info) != GCSWALK_OK ||
			    ptrace(PTRACE_CONT, info.tid, NULL, NULL) != 0)
				ok = 0;
		}
		usleep(20000);
		if (round == 0 && gcswalk_target_thread(probe, 1, &info) == GCSWALK_OK) {
			idx = gcswalk_target_refresh_thread(t, info.tid, 0);
			if (idx != GCSWALK_E_NOT_STOPPED) {
				tap_diag("refresh of a running thread: %d, expected NOT_STOPPED", idx);
				ok = 0;
			}
		}
		for (k = 0; k < n; k++) {
			if (gcswalk_target_thread(probe, k, &info) != GCSWALK_OK ||
			    ptrace(PTRACE_INTERRUPT, info.tid, NULL, NULL) != 0 ||
			    waitpid(info.tid, &s, __WALL) != info.tid || !WIFSTOPPED(s)) {
				ok = 0;
				continue;
			}
			idx = gcswalk_target_refresh_thread(t, info.tid,
							    round == 1 ? GCSWALK_REFRESH_NAMES : 0);
			if (idx != gcswalk_target_thread_index(t, info.tid)) {
				tap_diag("refresh of thread %d: %d (%s)", info.tid, idx,
					 gcswalk_target_errmsg(t));
				ok = 0;
			}
		}
		if (round == 2 && gcswalk_target_refresh(t, GCSWALK_REFRESH_MAPS) != GCSWALK_OK)
			ok = 0;
		ok = ok && gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK &&
		     chains_match(t, sym, expect, TARGET_NAME, "live, refreshed");
		gcswalk_symbolizer_free(sym);
		sym = NULL;
	}
	/* Thread 0 of the probe was refreshed; the target still counts six. */
	ok = ok && gcswalk_target_thread_count(t) == n &&
	     gcswalk_walk_begin(&w, t, 0, NULL) == GCSWALK_OK;
	gcswalk_walk_free(w);
	ok = ok && path_copy && name_copy && strcmp(m0.path, path_copy) == 0 &&
	     strcmp(name0, name_copy) == 0 &&
	     gcswalk_target_refresh_thread(t, 1, 0) == GCSWALK_E_INVALID;
	free(path_copy);
	free(name_copy);
	return ok;
}

/* Start the target (with GCS) in a fresh folder: 0, or -1 (a failed
 * case WHAT said). */
static int start_target(struct child *c, char *dir, const char *what)
{
	if (mkdtemp(dir) && spawn_target(c, dir, 1) == 0)
		return 0;
	tap_result(0, what);
	return -1;
}

static void stop_target(struct child *c, char *dir)
{
	reap(c, SIGKILL);
	rmdir(dir);
}

/* The library seizes the target, walks, and releases it. */
static void test_live(void)
{
	char dir[] = "/tmp/gcswalk-test.XXXXXX";
	struct child c;
	gcswalk_target *t = NULL;
	gcswalk_symbolizer *sym = NULL;
	int ret, ok;

	if (start_target(&c, dir, "live: the target started") != 0)
		return;
	/* The library seizes and releases. */
	ret = open_live(&t, c.pid, GCSWALK_ATTACH_SEIZE);
	ok = ret == GCSWALK_OK && gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK;
	tap_result(ok && chains_match(t, sym, c.expect, TARGET_NAME, "live"),
		   "live: every thread's chain matches (plain, inlined, signal, switched)");
	tap_result(ok && thread_names_ok(t), "live: six threads with names and GCS state");
	tap_result(ok && default_limit_cuts(t, c.expect),
		   "live: the deep chain is cut at the default 1024 frames, and says so");
	tap_result(ok && verify_ok(t, c.expect), "live: verify finds the smashed frame record, only it");
	tap_result(ok && live_facts_ok(t, c.pid),
		   "live: /proc threads and states, build-ids, GCS and vDSO regions, vDSO symbols");
	if (ok)
		test_fallbacks(t, sym, c.expect);
	else {
		tap_result(0, "live fallback: CFI gives the GCS chain, labelled cfi");
		tap_result(0, "live fallback: frame records agree with the GCS, labelled fp");
	}
	/* While we hold it, another tracer is refused with BUSY. */
	ret = open_status_in_child(c.pid, 0);
	tap_result(ret == GCSWALK_E_BUSY, "errors: a target traced by another process is BUSY");
	if (ret != GCSWALK_E_BUSY)
		tap_diag("got %d (%s)", ret, gcswalk_strerror(ret));
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
	stop_target(&c, dir);
}

/* The caller stops the threads (or job control does): the library only
 * reads, and leaves them as they were. */
static void test_live_stopped(void)
{
	char dir[] = "/tmp/gcswalk-test.XXXXXX";
	struct child c;
	gcswalk_target *t = NULL;
	gcswalk_symbolizer *sym = NULL;
	int ret, ok;

	if (start_target(&c, dir, "live, stopped: the target started") != 0)
		return;
	/* The caller stops the threads; the library only reads. */
	{
		gcswalk_target *probe = NULL;
		int stopped = 0, n = 0;
		size_t k;

		if (open_live(&probe, c.pid, GCSWALK_ATTACH_NONE) == GCSWALK_OK) {
			for (k = 0; k < gcswalk_target_thread_count(probe); k++) {
				struct gcswalk_thread_info info;
				int s;

				if (gcswalk_target_thread(probe, k, &info) != GCSWALK_OK)
					continue;
				n++;
				if (ptrace(PTRACE_SEIZE, info.tid, NULL, NULL) == 0 &&
				    ptrace(PTRACE_INTERRUPT, info.tid, NULL, NULL) == 0 &&
				    waitpid(info.tid, &s, __WALL) == info.tid && WIFSTOPPED(s))
					stopped++;
			}
		}
		ret = open_live(&t, c.pid, GCSWALK_ATTACH_STOPPED);
		ok = n == 6 && stopped == 6 && ret == GCSWALK_OK &&
		     gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK &&
		     chains_match(t, sym, c.expect, TARGET_NAME, "live, stopped by the caller");
		tap_result(ok, "live: threads the caller stopped are walked as they are");
		gcswalk_symbolizer_free(sym);
		sym = NULL;
		tap_result(ok && mapping_find_ok(t), "live: mapping_find finds every mapping, only them");
		tap_result(ok && resample_ok(t, probe, c.expect),
			   "live: the same target, refreshed, samples the threads stopped again");
		gcswalk_target_close(t);
		t = NULL;
		for (k = 0; probe && k < gcswalk_target_thread_count(probe); k++) {
			struct gcswalk_thread_info info;

			if (gcswalk_target_thread(probe, k, &info) == GCSWALK_OK)
				ptrace(PTRACE_DETACH, info.tid, NULL, NULL);
		}
		gcswalk_target_close(probe);
	}
	/* The caller stopped only the main thread: the others are NOT_STOPPED. */
	{
		gcswalk_walk *w = NULL;
		int s, one = -1, main_ok = 0;
		size_t n, nt;
		int *tids = text_tids(c.expect, &nt);

		ok = 0;
		if (nt >= 2 && ptrace(PTRACE_SEIZE, c.pid, NULL, NULL) == 0 &&
		    ptrace(PTRACE_INTERRUPT, c.pid, NULL, NULL) == 0 &&
		    waitpid(c.pid, &s, __WALL) == c.pid && open_live(&t, c.pid, GCSWALK_ATTACH_STOPPED) ==
								GCSWALK_OK) {
			main_ok = gcswalk_walk_begin(&w, t, 0, NULL) == GCSWALK_OK;
			gcswalk_walk_free(w);
			w = NULL;
			one = gcswalk_target_thread_index(t, tids[1]);
			n = one >= 0 ? (size_t)one : 0;
			ok = main_ok && one > 0 &&
			     gcswalk_walk_begin(&w, t, n, NULL) == GCSWALK_E_NOT_STOPPED && w == NULL;
			gcswalk_target_close(t);
			t = NULL;
		}
		ptrace(PTRACE_DETACH, c.pid, NULL, NULL);
		free(tids);
		tap_result(ok, "live: threads the caller did not stop are NOT_STOPPED");
	}
	/* A process stopped by job control is walked and left stopped. */
	{
		char state = '?';
		int s, i;

		ok = 0;
		if (kill(c.pid, SIGSTOP) == 0 && waitpid(c.pid, &s, WUNTRACED) == c.pid &&
		    WIFSTOPPED(s) && open_live(&t, c.pid, 0) == GCSWALK_OK) {
			ok = gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK &&
			     chains_match(t, sym, c.expect, TARGET_NAME, "live, job-control stopped");
			gcswalk_symbolizer_free(sym);
			sym = NULL;
			gcswalk_target_close(t);
			t = NULL;
			for (i = 0; i < 100 && state != 'T'; i++) {
				state = proc_state(c.pid);
				if (state != 'T')
					usleep(10000);
			}
			if (state != 'T')
				tap_diag("after the walk the process is in state %c, not T", state);
			ok = ok && state == 'T';
		}
		kill(c.pid, SIGCONT);
		tap_result(ok, "live: a process stopped by SIGSTOP is walked and stays stopped");
	}
	/* Released: it runs on and can be walked again. */
	ret = open_live(&t, c.pid, 0);
	tap_result(ret == GCSWALK_OK && kill(c.pid, 0) == 0,
		   "live: released on close, walkable again");
	gcswalk_target_close(t);
	stop_target(&c, dir);
}

/* The target's core. */
static void test_core(void)
{
	char dir[] = "/tmp/gcswalk-test.XXXXXX";
	struct child c;

	if (start_target(&c, dir, "core: the target started") != 0)
		return;
	core_of_target(&c, dir, NULL);
	stop_target(&c, dir);
}

static void test_errors(void)
{
	char dir[] = "/tmp/gcswalk-err.XXXXXX";
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct child c;
	gcswalk_target *t = NULL;
	gcswalk_walk *w = NULL;
	int ret, st, ok = 0, i;
	pid_t pid;

	/* A dead, reaped pid. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &st, 0);
	ret = gcswalk_target_open_pid(&t, pid, 0, 0, NULL);
	tap_result(ret == GCSWALK_E_NO_PROCESS && t == NULL, "errors: a dead pid is NO_PROCESS");

	if (!mkdtemp(dir)) {
		tap_result(0, "errors: (no folder)");
		return;
	}
	/* Not ours to trace: as nobody, a root process. */
	if (spawn_target(&c, dir, 1) == 0) {
		ret = open_status_in_child(c.pid, 1);
		tap_result(ret == GCSWALK_E_PERMISSION, "errors: a target we may not trace is PERMISSION");
		if (ret != GCSWALK_E_PERMISSION)
			tap_diag("got %d (%s)", ret, gcswalk_strerror(ret));
		/* A process that dies while we hold it. */
		ret = open_live(&t, c.pid, 0);
		if (ret == GCSWALK_OK) {
			kill(c.pid, SIGKILL);
			for (i = 0; i < 500; i++) {
				char state = proc_state(c.pid);

				if (state == '?' || state == 'Z' || state == 'X')
					break;
				usleep(10000);
			}
			ret = gcswalk_walk_begin(&w, t, 1, NULL);
			tap_result(ret == GCSWALK_E_THREAD_GONE,
				   "errors: a process killed mid-walk is THREAD_GONE");
			if (ret != GCSWALK_E_THREAD_GONE)
				tap_diag("got %s: %s", gcswalk_strerror(ret), gcswalk_target_errmsg(t));
			gcswalk_walk_free(w);
			gcswalk_target_close(t);
			t = NULL;
		} else {
			tap_result(0, "errors: a process killed mid-walk is THREAD_GONE");
		}
		reap(&c, SIGKILL);
	} else {
		tap_result(0, "errors: a target we may not trace is PERMISSION");
		tap_result(0, "errors: a process killed mid-walk is THREAD_GONE");
	}
	/* A process without GCS: typed error, then the labelled fallback. */
	enter("errors: process without GCS");
	if (spawn_target(&c, dir, 0) == 0 && open_live(&t, c.pid, 0) == GCSWALK_OK) {
		gcswalk_symbolizer *sym = NULL;
		struct gcswalk_frame f;
		int n = 0, labelled = 1;

		ret = gcswalk_walk_begin(&w, t, 0, NULL);
		tap_result(ret == GCSWALK_E_GCS_DISABLED && w == NULL,
			   "errors: a process without GCS is GCS_DISABLED");
		o.method = GCSWALK_METHOD_CFI;
		enter("errors: CFI without GCS");
		if (gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK) {
			o.symbolizer = sym;
			if (gcswalk_walk_begin(&w, t, 0, &o) == GCSWALK_OK) {
				while (gcswalk_walk_next(w, &f) == GCSWALK_OK) {
					n++;
					labelled &= f.source == GCSWALK_SOURCE_CFI;
				}
				gcswalk_walk_free(w);
				ok = n >= 3 && labelled;
			}
		}
		tap_result(ok, "errors: without GCS, the CFI fallback walks, labelled");
		gcswalk_symbolizer_free(sym);
		gcswalk_target_close(t);
	} else {
		tap_result(0, "errors: a process without GCS is GCS_DISABLED");
		tap_result(0, "errors: without GCS, the CFI fallback walks, labelled");
	}
	reap(&c, SIGKILL);
	rmdir(dir);
}

/* A CPU without GCS: every way in says so, with a type. */
static void __attribute__((noreturn)) no_gcs_cpu(void)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame f[8];
	char dir[] = "/tmp/gcswalk-nogcs.XXXXXX";
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t = NULL;
	gcswalk_walk *w = NULL;
	struct child c;
	size_t n = 1;
	int ret, ok = 0;

	if (getauxval(AT_HWCAP) & HWCAP_GCS)
		tap_skip_all("this CPU has GCS");
	tap_plan(4);
	tap_result(gcswalk_system_gcs() == GCSWALK_E_NO_GCS_CPU,
		   "no GCS CPU: gcswalk_system_gcs() says so");
	ret = gcswalk_self(f, 8, &n);
	tap_result(ret == GCSWALK_E_NO_GCS_CPU && n == 0, "no GCS CPU: self walk is NO_GCS_CPU");
	if (mkdtemp(dir) && spawn_target(&c, dir, 1) == 0 &&
	    open_live(&t, c.pid, 0) == GCSWALK_OK) {
		ret = gcswalk_walk_begin(&w, t, 0, NULL);
		tap_result(ret == GCSWALK_E_NO_GCS_CPU, "no GCS CPU: live walk is NO_GCS_CPU");
		if (ret != GCSWALK_E_NO_GCS_CPU)
			tap_diag("got %s: %s", gcswalk_strerror(ret), gcswalk_target_errmsg(t));
		gcswalk_walk_free(w);
		w = NULL;
		o.method = GCSWALK_METHOD_CFI;
		if (gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK) {
			o.symbolizer = sym;
			if (gcswalk_walk_begin(&w, t, 0, &o) == GCSWALK_OK) {
				n = 0;
				while (gcswalk_walk_next(w, &f[0]) == GCSWALK_OK)
					n++;
				ok = n >= 3 && f[0].source == GCSWALK_SOURCE_CFI;
				gcswalk_walk_free(w);
			}
		}
		tap_result(ok, "no GCS CPU: the CFI fallback walks, labelled");
		gcswalk_symbolizer_free(sym);
		gcswalk_target_close(t);
		reap(&c, SIGKILL);
	} else {
		tap_result(0, "no GCS CPU: live walk is NO_GCS_CPU");
		tap_result(0, "no GCS CPU: the CFI fallback walks, labelled");
	}
	rmdir(dir);
	tap_finish();
}

static int sysctl_write(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ok = f && fprintf(f, "%ld\n", v) > 0;

	return f && fclose(f) == 0 && ok ? 0 : -1;
}

/* gcswalk_system_perf_callchains() and _max_sample_rate() say what
 * /proc/sys says: perf_callchain_gcs switched off and on again where the
 * kernel has it (this project's), UNSUPPORTED where not (the reference). */
static void test_system_perf(void)
{
	const char *gcs = "/proc/sys/kernel/perf_callchain_gcs";
	long was = read_number_file(gcs);
	long rate = read_number_file("/proc/sys/kernel/perf_event_max_sample_rate");
	int ok;

	if (was < 0) {
		ok = access(gcs, F_OK) != 0 && gcswalk_system_perf_callchains() == GCSWALK_E_UNSUPPORTED;
	} else {
		ok = gcswalk_system_perf_callchains() == (was == 1) &&
		     sysctl_write(gcs, was ? 0 : 1) == 0 &&
		     gcswalk_system_perf_callchains() == (was ? 0 : 1);
		ok = sysctl_write(gcs, was) == 0 && ok && gcswalk_system_perf_callchains() == (was == 1);
	}
	ok = ok && (rate > 0 ? gcswalk_system_perf_max_sample_rate() == rate
			     : gcswalk_system_perf_max_sample_rate() == GCSWALK_E_UNSUPPORTED);
	if (!ok)
		tap_diag("perf_callchain_gcs %ld: %d; max rate %ld: %d", was,
			 gcswalk_system_perf_callchains(), rate, gcswalk_system_perf_max_sample_rate());
	tap_result(ok, "system: perf's GCS call chains and maximum rate as /proc/sys says");
}

/* The features, each a CTest test of its own (tests/CMakeLists.txt). */
static const struct tap_feature features[] = {
	{ "self", test_self },
	{ "live", test_live },
	{ "live-stopped", test_live_stopped },
	{ "core", test_core },
	{ "errors", test_errors },
	{ "system", test_system_perf },
};
#define NFEATURES (sizeof(features) / sizeof(features[0]))

int main(int argc, char **argv)
{
	int fds_before = count_open_fds(), before, i, self;
	struct gcswalk_frame f[4];
	size_t n = 9;
	long ret;

	if (argc == 2 && strcmp(argv[1], "--no-gcs-cpu") == 0)
		no_gcs_cpu();
	if (argc == 3 && strcmp(argv[1], "--core-for-host") == 0)
		core_for_host(argv[2]);
	if (!tap_features_known(features, NFEATURES, argc, argv)) {
		fprintf(stderr, "usage: gcswalk-guest-test [FEATURE...] | --core-for-host DIR | "
				"--no-gcs-cpu\n");
		return 2;
	}
	self = tap_feature_requested(argc, argv, "self");
	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	tap_start();
	before = gcswalk_self(f, 4, &n) == GCSWALK_E_GCS_DISABLED && n == 0;
	/* From here on main() must not return (GCS is on; its return address
	 * is not on the GCS): it leaves through tap_done(). */
	ret = raw_syscall3(__NR_prctl, PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE, 0);
	if (self) {
		tap_result(before, "self: before GCS is enabled, GCS_DISABLED");
		tap_result(ret == 0, "enable GCS in the test itself");
	} else if (ret != 0) {
		tap_diag("cannot enable GCS in the test itself");
	}
	signal(SIGALRM, on_alarm);
	for (i = 0; i < (int)NFEATURES; i++) {
		if (!tap_feature_requested(argc, argv, features[i].name))
			continue;
		if (features[i].run == test_self && ret != 0)
			continue;     /* self walks need GCS on: said above */
		enter(features[i].name);
		features[i].run();
	}
	tap_result(fds_before >= 0 && count_open_fds() == fds_before,
		   "no file descriptor leaked by any case");
	tap_done();
}
