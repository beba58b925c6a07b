// SPDX-License-Identifier: MIT
/*
 * Host test of the facts that need no GCS: build-ids of files (a probe
 * linked with known build-id bytes), of a target's mappings (cached, or
 * set by the caller), of a file through /proc/PID/root; the /proc calls on
 * this very process (threads, states, CPU time through a kept stat
 * descriptor, a thread that is gone); gcswalk_system_gcs() and the perf
 * sysctls.
 *
 * Usage: gcswalk-facts-test PROBE   (PROBE: linked with
 *        --build-id=0x0123456789abcdef0011223344556677)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chain-text.h"
#include "gcswalk.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop

static const unsigned char probe_id[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
					  0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77 };

static void test_build_ids(const char *probe)
{
	struct gcswalk_mapping maps[3] = { { 0x400000, 0x401000, 0, probe },
					   { 0x500000, 0x501000, 0, "/nonexistent/lib.so" },
					   { 0x600000, 0x601000, 0x1000, probe } };
	const unsigned char *id1 = NULL, *id2 = NULL;
	unsigned char *id = NULL;
	gcswalk_target *t = NULL;
	size_t n = 0, n2 = 0;
	int ok;

	ok = gcswalk_file_build_id(probe, &id, &n) == GCSWALK_OK && n == sizeof(probe_id) &&
	     memcmp(id, probe_id, n) == 0;
	free(id);
	tap_result(ok, "build-id: the probe's known bytes");
	ok = gcswalk_file_build_id("/nonexistent/file", &id, &n) == GCSWALK_E_IO && !id && !n &&
	     gcswalk_file_build_id("/proc/self/status", &id, &n) == GCSWALK_E_NO_SYMBOL && !id &&
	     gcswalk_file_build_id(NULL, &id, &n) == GCSWALK_E_INVALID;
	tap_result(ok, "build-id: a missing file is IO, a text file NO_SYMBOL, NULL INVALID");
	ok = gcswalk_target_open_mappings(&t, 1, maps, 3, NULL) == GCSWALK_OK &&
	     gcswalk_target_mapping_build_id(t, 0, &id1, &n) == GCSWALK_OK &&
	     n == sizeof(probe_id) && memcmp(id1, probe_id, n) == 0 &&
	     gcswalk_target_mapping_build_id(t, 2, &id2, &n2) == GCSWALK_OK && id2 == id1 &&
	     gcswalk_target_mapping_build_id(t, 1, &id2, &n2) == GCSWALK_E_IO && !id2 &&
	     gcswalk_target_mapping_build_id(t, 3, &id2, &n2) == GCSWALK_E_INVALID;
	tap_result(ok, "build-id: per mapping, cached per file, errors per mapping");
	/* The caller's build-id replaces the file's, for every mapping of it. */
	ok = t && gcswalk_target_set_mapping_build_id(t, 2, probe_id + 8, 8) == GCSWALK_OK &&
	     gcswalk_target_mapping_build_id(t, 0, &id1, &n) == GCSWALK_OK && n == 8 &&
	     memcmp(id1, probe_id + 8, 8) == 0 &&
	     gcswalk_target_set_mapping_build_id(t, 1, probe_id, 4) == GCSWALK_OK &&
	     gcswalk_target_mapping_build_id(t, 1, &id2, &n2) == GCSWALK_OK && n2 == 4 &&
	     gcswalk_target_set_mapping_build_id(t, 3, probe_id, 4) == GCSWALK_E_INVALID &&
	     gcswalk_target_set_mapping_build_id(t, 0, NULL, 4) == GCSWALK_E_INVALID &&
	     gcswalk_target_set_mapping_build_id(t, 0, probe_id, 0) == GCSWALK_E_INVALID &&
	     gcswalk_target_set_mapping_build_id(NULL, 0, probe_id, 4) == GCSWALK_E_INVALID;
	tap_result(ok, "build-id: set by the caller, for the file's every mapping; bad ones INVALID");
	gcswalk_target_close(t);
}

static atomic_int stop_spinning;

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_spinning))
		;
	return NULL;
}

static int find_tid(const int *tids, size_t n, int tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

static void test_proc(void)
{
	struct gcswalk_proc_thread a, b;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	pthread_t th;
	int *tids = NULL, fd = -1, spinner = 0, fds_before = count_open_fds(), ok, ret;
	size_t n = 0, i;

	if (pthread_create(&th, NULL, spin, NULL) != 0) {
		tap_skip("proc: threads, state, CPU time", "cannot start a thread");
		return;
	}
	ok = gcswalk_proc_threads(getpid(), &tids, &n) == GCSWALK_OK && n >= 2 &&
	     find_tid(tids, n, getpid());
	for (i = 1; ok && i < n; i++)
		ok = tids[i - 1] < tids[i];
	for (i = 0; ok && i < n; i++)
		if (tids[i] != getpid())
			spinner = tids[i];
	free(tids);
	ok = ok && spinner > 0 && gcswalk_proc_threads(999999999, &tids, &n) == GCSWALK_E_NO_PROCESS;
	tap_result(ok, "proc: this process's threads, ascending; a missing pid is NO_PROCESS");

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	ret = gcswalk_proc_thread(getpid(), spinner, &fd, &a);
	ok = ret == GCSWALK_OK && fd >= 0 && a.tgid == getpid() && a.tracer_pid == 0 &&
	     a.state == 'R';
	/* A shared machine may give the spinner little CPU: wait for 20 ms
	 * of it, for at most 5 s. */
	b = a;
	b.tgid = -5;                    /* left alone when the fd is kept */
	for (i = 0; ok && i < 50; i++) {
		nanosleep(&ts, NULL);
		ret = gcswalk_proc_thread(getpid(), spinner, &fd, &b);
		if (ret != GCSWALK_OK || b.cpu_time_ns >= a.cpu_time_ns + 20000000)
			break;
	}
	ok = ok && ret == GCSWALK_OK && b.tgid == -5 && b.cpu_time_ns >= a.cpu_time_ns + 20000000;
	if (!ok)
		tap_diag("proc_thread: %s; state %c, %llu then %llu ns", gcswalk_strerror(ret),
			 a.state, (unsigned long long)a.cpu_time_ns, (unsigned long long)b.cpu_time_ns);
	tap_result(ok, "proc: a spinning thread is R, its CPU time grows, through a kept stat fd");
	atomic_store(&stop_spinning, 1);
	pthread_join(th, NULL);
	ok = gcswalk_proc_thread(getpid(), spinner, &fd, &b) == GCSWALK_E_NO_PROCESS &&
	     gcswalk_proc_thread(getpid(), spinner, NULL, &b) == GCSWALK_E_NO_PROCESS;
	if (fd >= 0)
		close(fd);
	a.size = sizeof(a) - 1;
	ok = ok && gcswalk_proc_thread(getpid(), getpid(), NULL, &a) == GCSWALK_E_INVALID;
	a.size = sizeof(a);
	ok = ok && gcswalk_proc_thread(getpid(), getpid(), NULL, &a) == GCSWALK_OK &&
	     a.tgid == getpid() && count_open_fds() == fds_before;
	tap_result(ok, "proc: a joined thread is NO_PROCESS; sizes checked; no descriptor left open");
}

/* This host's kernel, read by the library as by hand: no GCS call chains
 * (no such sysctl on a kernel without this project's series), and perf's
 * maximum rate. (The guest test also switches perf_callchain_gcs.) */
static void test_system_perf(void)
{
	const char *gcs = "/proc/sys/kernel/perf_callchain_gcs";
	long was = read_number_file(gcs);
	long rate = read_number_file("/proc/sys/kernel/perf_event_max_sample_rate");
	int chains = gcswalk_system_perf_callchains(), max = gcswalk_system_perf_max_sample_rate();
	int ok;

	ok = (was < 0 ? access(gcs, F_OK) != 0 && chains == GCSWALK_E_UNSUPPORTED
		      : chains == (was == 1)) &&
	     (rate > 0 ? max == rate : max == GCSWALK_E_UNSUPPORTED || max == GCSWALK_E_IO);
	if (!ok)
		tap_diag("perf_callchain_gcs %ld: %d; max rate %ld: %d", was, chains, rate, max);
	tap_result(ok, "system: perf's GCS call chains and maximum rate as /proc/sys says");
}

/* gcswalk_proc_build_id() on this very process: the probe is not mapped
 * here, but a pid's root sees every file. */
static void test_proc_build_id(const char *probe)
{
	unsigned char *id = NULL;
	size_t n = 0;
	char *abs = realpath(probe, NULL);
	int ok;

	ok = abs && gcswalk_proc_build_id(getpid(), abs, &id, &n) == GCSWALK_OK &&
	     n == sizeof(probe_id) && memcmp(id, probe_id, n) == 0;
	free(id);
	id = NULL;
	ok = ok && gcswalk_proc_build_id(getpid(), "relative", &id, &n) == GCSWALK_E_INVALID &&
	     !id && n == 0 && gcswalk_proc_build_id(0, abs, &id, &n) == GCSWALK_E_INVALID &&
	     gcswalk_proc_build_id(getpid(), "/nonexistent/file", &id, &n) == GCSWALK_E_IO &&
	     gcswalk_proc_build_id(getpid(), "/proc/self/status", &id, &n) == GCSWALK_E_NO_SYMBOL &&
	     !id;
	free(abs);
	tap_result(ok, "proc build-id: through /proc/PID/root; relative, pid 0 INVALID; missing IO");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gcswalk-facts-test PROBE\n");
		return 2;
	}
	tap_plan(10);
#if defined(__aarch64__)
	tap_result(gcswalk_system_gcs() == GCSWALK_OK || gcswalk_system_gcs() == GCSWALK_E_NO_GCS_CPU,
		   "system: GCS or not, on arm64");
#else
	tap_result(gcswalk_system_gcs() == GCSWALK_E_UNSUPPORTED, "system: not an arm64 build");
#endif
	test_build_ids(argv[1]);
	test_proc_build_id(argv[1]);
	test_proc();
	test_system_perf();
	tap_finish();
}
