// SPDX-License-Identifier: MIT
/*
 * gcs-probe: does this kernel and CPU give user space a working Guarded
 * Control Stack with upstream Linux's ABI? The rig's first guest test.
 *
 * Skips (exit 4) where the CPU or kernel has no GCS; otherwise checks
 *  - HWCAP_GCS in AT_HWCAP;
 *  - enabling GCS with PR_SET_SHADOW_STACK_STATUS and reading it back;
 *  - its own GCS holds the return addresses of a known chain of calls;
 *  - a child stopped deep in a known chain gives NT_ARM_GCS through
 *    PTRACE_GETREGSET and its GCS entries through one process_vm_readv;
 *  - a multi-threaded child killed by SIGSEGV leaves a core with one
 *    NT_ARM_GCS note per thread and the GCS pages themselves.
 *
 * Everything runs from main(), which enables GCS and so must never return
 * (the return address it was entered with is not on the new GCS): it
 * leaves through exit().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gcs-abi.h"
#include "../find-core.h"
#include "../gcs-inline.h"
#include "../tap.h"

#define CHAIN_DEPTH 3
#define CORE_THREADS 3

/*
 * What a chain of calls records about itself: the return address each
 * level was called with (innermost first) and GCSPR_EL0 in the innermost.
 */
struct chain_record {
	uint64_t ra[CHAIN_DEPTH];
	uint64_t gcspr;
	uint64_t entries[CHAIN_DEPTH];
};

#define RETURN_ADDRESS() \
	((uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))
/* After a call, so that the call is not a tail call and stays on the GCS. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

static __attribute__((noinline)) void chain_leaf(struct chain_record *r, int stop)
{
	const uint64_t *gcs;
	int i;

	r->ra[0] = RETURN_ADDRESS();
	r->gcspr = gcs_read_gcspr();
	gcs = (const uint64_t *)(uintptr_t)r->gcspr;
	for (i = 0; i < CHAIN_DEPTH; i++)
		r->entries[i] = gcs[i];
	if (stop)
		raise(SIGSTOP);
	KEEP_FRAME();
}

static __attribute__((noinline)) void chain_mid(struct chain_record *r, int stop)
{
	r->ra[1] = RETURN_ADDRESS();
	chain_leaf(r, stop);
	KEEP_FRAME();
}

static __attribute__((noinline)) void chain_top(struct chain_record *r, int stop)
{
	r->ra[2] = RETURN_ADDRESS();
	chain_mid(r, stop);
	KEEP_FRAME();
}

static int gcs_status(uint64_t *mode)
{
	unsigned long m = 0;

	if (gcs_raw_prctl(PR_GET_SHADOW_STACK_STATUS, (long)&m) != 0)
		return -1;
	*mode = m;
	return 0;
}

/* RET is the enabling prctl's result: it must be made in main() itself. */
static void test_enable(long ret)
{
	uint64_t mode = ~0ULL;

	if (ret != 0)
		tap_diag("PR_SET_SHADOW_STACK_STATUS(ENABLE) returned %ld", ret);
	tap_result(ret == 0, "enable GCS with prctl 75");
	if (gcs_status(&mode) != 0)
		tap_diag("PR_GET_SHADOW_STACK_STATUS failed");
	else
		tap_diag("PR_GET_SHADOW_STACK_STATUS: %#llx", (unsigned long long)mode);
	tap_result(mode == PR_SHADOW_STACK_ENABLE, "prctl 74 reads back exactly ENABLE");
}

static int chain_matches(const uint64_t *entries, const uint64_t *ra)
{
	int i;

	for (i = 0; i < CHAIN_DEPTH; i++) {
		if (entries[i] != ra[i]) {
			tap_diag("entry %d is %#llx, expected return address %#llx", i,
				 (unsigned long long)entries[i], (unsigned long long)ra[i]);
			return 0;
		}
	}
	return 1;
}

static void test_self_walk(void)
{
	struct chain_record r;

	memset(&r, 0, sizeof(r));
	chain_top(&r, 0);
	tap_result(r.gcspr != 0 && chain_matches(r.entries, r.ra),
		   "own GCS holds the return addresses of a known chain");
}

/* End of the mapping of PID that contains ADDR, from /proc/PID/maps. */
static uint64_t mapping_end(pid_t pid, uint64_t addr)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	uint64_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			found = hi;
			break;
		}
	}
	free(line);
	fclose(f);
	return found;
}

static void test_ptrace(void)
{
	struct chain_record *shared;
	struct user_gcs ugcs;
	struct iovec iov = { &ugcs, sizeof(ugcs) };
	uint64_t *buf = NULL, end, k;
	size_t n;
	int status, ok_regset = 0, ok_read = 0;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		tap_result(0, "ptrace: NT_ARM_GCS of a stopped child");
		tap_result(0, "ptrace: the child's GCS through process_vm_readv");
		return;
	}
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(2);
		chain_top(shared, 1);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		tap_diag("child did not stop: %s", pid < 0 ? strerror(errno) : "wait failed");
		goto out;
	}

	memset(&ugcs, 0, sizeof(ugcs));
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_ARM_GCS, &iov) != 0) {
		tap_diag("PTRACE_GETREGSET NT_ARM_GCS: %s", strerror(errno));
	} else {
		tap_diag("NT_ARM_GCS: enabled %#llx locked %#llx gcspr %#llx (child saw %#llx)",
			 (unsigned long long)ugcs.features_enabled,
			 (unsigned long long)ugcs.features_locked,
			 (unsigned long long)ugcs.gcspr_el0, (unsigned long long)shared->gcspr);
		ok_regset = iov.iov_len == sizeof(ugcs) &&
			    (ugcs.features_enabled & PR_SHADOW_STACK_ENABLE) &&
			    ugcs.gcspr_el0 <= shared->gcspr && ugcs.gcspr_el0 % 8 == 0 &&
			    (shared->gcspr - ugcs.gcspr_el0) % 8 == 0;
	}
	tap_result(ok_regset, "ptrace: NT_ARM_GCS of a stopped child");

	/* One bulk read from GCSPR to the end of the GCS mapping, bounded. */
	end = ok_regset ? mapping_end(pid, ugcs.gcspr_el0) : 0;
	if (end) {
		struct iovec local, remote;

		n = (end - ugcs.gcspr_el0) / 8;
		if (n > 4096)
			n = 4096;
		buf = calloc(n, sizeof(*buf));
		local.iov_base = buf;
		local.iov_len = n * 8;
		remote.iov_base = (void *)(uintptr_t)ugcs.gcspr_el0;
		remote.iov_len = n * 8;
		k = (shared->gcspr - ugcs.gcspr_el0) / 8;
		if (!buf) {
			tap_diag("out of memory");
		} else if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)(n * 8)) {
			tap_diag("process_vm_readv of %zu entries: %s", n, strerror(errno));
		} else if (k + CHAIN_DEPTH > n) {
			tap_diag("the known chain lies beyond the GCS mapping");
		} else {
			tap_diag("read %zu entries; the known chain starts at entry %llu", n,
				 (unsigned long long)k);
			ok_read = chain_matches(buf + k, shared->ra);
		}
	}
	tap_result(ok_read, "ptrace: the child's GCS through process_vm_readv");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	free(buf);
	munmap(shared, sizeof(*shared));
}

static pthread_barrier_t core_barrier;
/* Volatile so that the compiler cannot see the fault coming. */
static int *volatile core_fault_address;

static __attribute__((noinline)) void core_thread_block(void)
{
	pthread_barrier_wait(&core_barrier);
	for (;;)
		pause();
}

static void *core_thread(void *arg)
{
	(void)arg;
	core_thread_block();
	return NULL;
}

/* In the child: threads parked in a call, then a fault in the main thread. */
static void __attribute__((noreturn)) crash_with_threads(const char *dir)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	pthread_t t;
	int i;

	if (chdir(dir) != 0 || setrlimit(RLIMIT_CORE, &rl) != 0)
		_exit(2);
	prctl(PR_SET_DUMPABLE, 1);
	pthread_barrier_init(&core_barrier, NULL, CORE_THREADS + 1);
	for (i = 0; i < CORE_THREADS; i++)
		if (pthread_create(&t, NULL, core_thread, NULL) != 0)
			_exit(3);
	pthread_barrier_wait(&core_barrier);
	*core_fault_address = 1;
	_exit(4);
}

struct core_facts {
	int prstatus;
	int gcs_notes;
	int gcs_enabled;
	int gcs_pages_dumped;
};

/* Is ADDR inside a PT_LOAD segment whose contents are in the file? */
static int core_has_bytes(Elf *e, size_t phnum, uint64_t addr)
{
	size_t i;

	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    addr >= ph.p_vaddr && addr + 8 <= ph.p_vaddr + ph.p_filesz)
			return 1;
	}
	return 0;
}

static int read_core(const char *path, struct core_facts *cf)
{
	size_t phnum, i;
	Elf *e;
	int fd, ret = -1;

	memset(cf, 0, sizeof(*cf));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum) != 0)
		goto out;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			goto out;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)d->d_buf + name_off;
			struct user_gcs g;

			if (nh.n_type == NT_PRSTATUS)
				cf->prstatus++;
			if (nh.n_type != NT_ARM_GCS || nh.n_namesz != 6 || memcmp(name, "LINUX", 6))
				continue;
			cf->gcs_notes++;
			if (nh.n_descsz < sizeof(g))
				continue;
			memcpy(&g, (const char *)d->d_buf + desc_off, sizeof(g));
			if (g.features_enabled & PR_SHADOW_STACK_ENABLE)
				cf->gcs_enabled++;
			if (g.gcspr_el0 && core_has_bytes(e, phnum, g.gcspr_el0))
				cf->gcs_pages_dumped++;
		}
	}
	ret = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

static void remove_dir(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char *p;

	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (asprintf(&p, "%s/%s", dir, de->d_name) >= 0) {
				unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	rmdir(dir);
}

static void test_core(void)
{
	const char *name = "core: one NT_ARM_GCS note per thread, GCS pages dumped";
	char dir[] = "/tmp/gcs-probe.XXXXXX", pattern[256] = "";
	struct core_facts cf;
	char *core = NULL;
	int status, fd;
	ssize_t n;
	pid_t pid;

	fd = open("/proc/sys/kernel/core_pattern", O_RDONLY);
	n = fd >= 0 ? read(fd, pattern, sizeof(pattern) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0 || pattern[0] == '|' || strchr(pattern, '/')) {
		tap_skip(name, "core_pattern does not write cores to the working folder");
		return;
	}
	if (!mkdtemp(dir)) {
		tap_diag("mkdtemp: %s", strerror(errno));
		tap_result(0, name);
		return;
	}
	pid = fork();
	if (pid == 0)
		crash_with_threads(dir);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		tap_diag("fork or wait failed: %s", strerror(errno));
		tap_result(0, name);
		goto out;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV || !WCOREDUMP(status)) {
		tap_diag("child status %#x: not a SIGSEGV with a core", status);
		tap_result(0, name);
		goto out;
	}
	core = find_core(dir);
	if (!core || read_core(core, &cf) != 0) {
		tap_diag("no readable core file in %s", dir);
		tap_result(0, name);
		goto out;
	}
	tap_diag("core: %d NT_PRSTATUS, %d NT_ARM_GCS (%d enabled, %d with GCS pages)",
		 cf.prstatus, cf.gcs_notes, cf.gcs_enabled, cf.gcs_pages_dumped);
	tap_result(cf.prstatus == CORE_THREADS + 1 && cf.gcs_notes == cf.prstatus &&
		   cf.gcs_enabled == cf.prstatus && cf.gcs_pages_dumped == cf.prstatus, name);
out:
	free(core);
	remove_dir(dir);
}

int main(void)
{
	uint64_t mode;
	long ret;

	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	if (gcs_status(&mode) != 0)
		tap_skip_all("HWCAP_GCS set but PR_GET_SHADOW_STACK_STATUS fails");
	tap_plan(7);
	tap_result(1, "HWCAP_GCS in AT_HWCAP");
	/* From here on main() must not return: see the comment at the top. */
	ret = gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE);
	test_enable(ret);
	if (gcs_status(&mode) != 0 || !(mode & PR_SHADOW_STACK_ENABLE)) {
		tap_diag("GCS is off: the remaining cases cannot run");
		tap_finish();
	}
	test_self_walk();
	test_ptrace();
	test_core();
	tap_finish();
}
