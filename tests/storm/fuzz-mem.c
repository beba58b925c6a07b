// SPDX-License-Identifier: MIT
/*
 * storm-fuzz's memory operations: map_shadow_stack, and mmap, mprotect,
 * munmap, mremap, madvise, process_vm_readv/writev and /proc/self/mem over
 * the GCS (and ordinary) regions of the worker's pool, plus the GCS
 * instructions that touch them. Every worker thread shares the pool, so
 * one thread's munmap lands under another's switch: that is the point.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuzz.h"

#define PAGE 4096ULL

void fz_pool_add(struct fz_pool *p, uint64_t addr, uint64_t len, enum fz_kind kind)
{
	pthread_mutex_lock(&p->lock);
	if (p->n == FZ_POOL_SIZE) {
		/* Full: the oldest region goes, for real. */
		fz_count(FZ_MUNMAP, munmap((void *)(uintptr_t)p->r[0].addr, p->r[0].len));
		for (int i = 1; i < p->n; i++)
			p->r[i - 1] = p->r[i];
		p->n--;
	}
	p->r[p->n++] = (struct fz_region){ addr, len, kind };
	pthread_mutex_unlock(&p->lock);
}

/* A region of the pool (it may be gone by now): 0, or -1 if empty. */
int fz_pool_pick(struct fz_thread *t, struct fz_region *out)
{
	int ret = -1;

	pthread_mutex_lock(&t->pool->lock);
	if (t->pool->n) {
		*out = t->pool->r[storm_below(&t->rng, (uint64_t)t->pool->n)];
		ret = 0;
	}
	pthread_mutex_unlock(&t->pool->lock);
	return ret;
}

/* An address: mostly in a pool region, sometimes anywhere. */
uint64_t fz_random_addr(struct fz_thread *t)
{
	static const uint64_t odd[] = { 0, 8, 0xfff8, 1ULL << 47, 0xffff800000000000ULL, ~7ULL };
	struct fz_region r;

	if (storm_below(&t->rng, 8) && fz_pool_pick(t, &r) == 0)
		return r.addr + (storm_below(&t->rng, r.len / 8 + 2) * 8);
	if (storm_below(&t->rng, 2))
		return gcs_read_gcspr() + storm_below(&t->rng, 64) * 8;
	return odd[storm_below(&t->rng, sizeof(odd) / sizeof(odd[0]))];
}

/* A page-aligned part of a pool region, as [*addr, *addr + *len). */
static int pick_range(struct fz_thread *t, uint64_t *addr, uint64_t *len)
{
	struct fz_region r;
	uint64_t pages, first;

	if (fz_pool_pick(t, &r) != 0)
		return -1;
	pages = r.len / PAGE;
	first = storm_below(&t->rng, pages);
	*addr = r.addr + first * PAGE;
	*len = (1 + storm_below(&t->rng, pages - first)) * PAGE;
	if (storm_below(&t->rng, 16) == 0)
		*len += 1 + storm_below(&t->rng, PAGE); /* unaligned length */
	return 0;
}

static uint64_t random_size(struct fz_thread *t)
{
	static const uint64_t sizes[] = { 0, 4, 8, 16, 4095, PAGE, 2 * PAGE, 4 * PAGE + 24,
					  64 * 1024, 1 << 20, ~7ULL, 1ULL << 62 };

	if (storm_below(&t->rng, 4) == 0)
		return 8 * (1 + storm_below(&t->rng, 8192));
	return sizes[storm_below(&t->rng, sizeof(sizes) / sizeof(sizes[0]))];
}

void fz_op_map_shadow_stack(struct fz_thread *t)
{
	static const uint64_t flags[] = { 0, SHADOW_STACK_SET_TOKEN, SHADOW_STACK_SET_MARKER,
					  SHADOW_STACK_SET_TOKEN | SHADOW_STACK_SET_MARKER };
	uint64_t size = random_size(t), fl, addr = 0;
	long r;

	fl = flags[storm_below(&t->rng, 4)];
	if (storm_below(&t->rng, 16) == 0)
		fl |= 1ULL << storm_below(&t->rng, 64);
	if (storm_below(&t->rng, 8) == 0)
		addr = fz_random_addr(t) & ~(PAGE - 1);
	r = fz_count(FZ_MAP_SHADOW_STACK, syscall(NR_map_shadow_stack, addr, size, fl));
	if (r != -1)
		fz_pool_add(t->pool, (uint64_t)r, (size + PAGE - 1) & ~(PAGE - 1),
			    (fl & SHADOW_STACK_SET_TOKEN) ? FZ_GCS_TOKEN : FZ_GCS);
}

static int random_prot(struct fz_thread *t)
{
	static const int prot[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE,
				    PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
				    PROT_WRITE };
	return prot[storm_below(&t->rng, sizeof(prot) / sizeof(prot[0]))];
}

void fz_op_mmap(struct fz_thread *t)
{
	uint64_t addr, len = (1 + storm_below(&t->rng, 8)) * PAGE;
	void *p;

	if (storm_below(&t->rng, 2) && pick_range(t, &addr, &len) == 0) {
		/* Replace part of a (GCS) region. */
		fz_count(FZ_MMAP, (long)(intptr_t)mmap((void *)(uintptr_t)addr, len, random_prot(t),
						       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fz_count(FZ_MMAP, (long)(intptr_t)p);
	if (p != MAP_FAILED)
		fz_pool_add(t->pool, (uint64_t)(uintptr_t)p, len, FZ_PLAIN);
}

void fz_op_mprotect(struct fz_thread *t)
{
	uint64_t addr, len;

	if (pick_range(t, &addr, &len) == 0)
		fz_count(FZ_MPROTECT, mprotect((void *)(uintptr_t)addr, len, random_prot(t)));
}

void fz_op_munmap(struct fz_thread *t)
{
	uint64_t addr, len;

	if (pick_range(t, &addr, &len) == 0)
		fz_count(FZ_MUNMAP, munmap((void *)(uintptr_t)addr, len));
}

void fz_op_mremap(struct fz_thread *t)
{
	static const int flags[] = { 0, MREMAP_MAYMOVE, MREMAP_MAYMOVE | MREMAP_FIXED,
				     MREMAP_MAYMOVE | MREMAP_DONTUNMAP };
	uint64_t addr, len, to = 0, nlen;
	int fl = flags[storm_below(&t->rng, 4)];
	void *p;

	if (pick_range(t, &addr, &len) != 0)
		return;
	nlen = (1 + storm_below(&t->rng, 16)) * PAGE;
	if (fl & MREMAP_DONTUNMAP)
		nlen = len & ~(PAGE - 1);
	if (fl & MREMAP_FIXED)
		to = fz_random_addr(t) & ~(PAGE - 1);
	p = mremap((void *)(uintptr_t)addr, len, nlen, fl, (void *)(uintptr_t)to);
	fz_count(FZ_MREMAP, (long)(intptr_t)p);
	if (p != MAP_FAILED && p != (void *)(uintptr_t)addr)
		fz_pool_add(t->pool, (uint64_t)(uintptr_t)p, nlen, FZ_GCS);
}

void fz_op_madvise(struct fz_thread *t)
{
	static const int advice[] = { MADV_DONTNEED, MADV_FREE, MADV_WIPEONFORK, MADV_KEEPONFORK,
				      MADV_DONTFORK, MADV_DOFORK, MADV_COLD, MADV_PAGEOUT,
				      MADV_MERGEABLE, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP,
				      MADV_REMOVE, MADV_WILLNEED, MADV_POPULATE_READ,
				      MADV_POPULATE_WRITE, MADV_NORMAL, MADV_RANDOM };
	uint64_t addr, len;

	if (pick_range(t, &addr, &len) == 0)
		fz_count(FZ_MADVISE,
			 madvise((void *)(uintptr_t)addr, len,
				 advice[storm_below(&t->rng, sizeof(advice) / sizeof(advice[0]))]));
}

/* Read or write a few GCS words through the process_vm calls. */
void fz_op_process_vm(struct fz_thread *t)
{
	uint64_t buf[8] = { 0 };
	struct iovec local = { buf, 8 * (1 + storm_below(&t->rng, 8)) };
	struct iovec remote = { (void *)(uintptr_t)fz_random_addr(t), local.iov_len };

	if (storm_below(&t->rng, 2))
		fz_count(FZ_PROCESS_VM, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	else
		fz_count(FZ_PROCESS_VM, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
}

/* /proc/self/mem writes are forced (FOLL_FORCE): they do reach a GCS. */
void fz_op_proc_mem(struct fz_thread *t)
{
	struct fz_region r;
	uint64_t word = 0, at;
	int fd;

	if (fz_pool_pick(t, &r) != 0)
		return;
	at = r.addr + storm_below(&t->rng, r.len / 8) * 8;
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (storm_below(&t->rng, 2))
		fz_count(FZ_PROC_MEM, pread(fd, &word, 8, (off_t)at));
	else {
		word = storm_below(&t->rng, 2) ? 0 : STORM_CAP(at);
		fz_count(FZ_PROC_MEM, pwrite(fd, &word, 8, (off_t)at));
	}
	close(fd);
}

static __attribute__((noinline)) uint64_t nest(int n)
{
	uint64_t v = n ? nest(n - 1) + 1 : gcs_read_gcspr();

	__asm__ volatile("" ::: "memory");
	return v;
}

/*
 * Switch to a pool GCS that was made with a cap token (another thread may
 * have unmapped or changed it), call a little there, switch back. In a
 * child of its own: a failed switch kills whoever makes it.
 */
void fz_op_gcs_switch(struct fz_thread *t)
{
	struct fz_region r;
	pid_t pid;
	int st;

	if (fz_pool_pick(t, &r) != 0 || r.kind != FZ_GCS_TOKEN)
		return;
	pid = (pid_t)fz_count(FZ_FORK, fork());
	if (pid == 0) {
		uint64_t cap = r.addr + r.len - 8, old;

		if (*(volatile uint64_t *)(uintptr_t)cap != STORM_CAP(cap))
			cap -= 8; /* made with a marker above the token */
		fz_count(FZ_GCS_INSN, 0);
		storm_gcsss1(cap);
		old = storm_gcsss2();
		nest((int)storm_below(&t->rng, 32));
		storm_gcsss1(old);
		(void)storm_gcsss2();
		_exit(0);
	}
	if (pid > 0)
		fz_reap(pid, &st);
}

/* GCSPUSHM, GCSPOPM or GCSSTR: allowed or not by the mode, in a child. */
void fz_op_gcs_insn(struct fz_thread *t)
{
	unsigned int which = (unsigned int)storm_below(&t->rng, 3);
	uint64_t at = fz_random_addr(t);
	pid_t pid;
	int st;

	pid = (pid_t)fz_count(FZ_FORK, fork());
	if (pid == 0) {
		if (storm_below(&t->rng, 2))
			gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS,
				      (long)(PR_SHADOW_STACK_ENABLE | (2ULL << which % 2)));
		fz_count(FZ_GCS_INSN, 0);
		if (which == 0) {
			storm_gcspushm(STORM_CAP(gcs_read_gcspr()));
			(void)storm_gcspopm();
		} else if (which == 1) {
			(void)storm_gcspopm();
		} else {
			storm_gcsstr((uint64_t *)(uintptr_t)at, storm_next(&t->rng));
		}
		_exit(0);
	}
	if (pid > 0)
		fz_reap(pid, &st);
}
