// SPDX-License-Identifier: MIT
/*
 * The kernel's perf user call chains on riscv64, checked frame by frame
 * on gcsprof's 3:1 split workload (built -O2 -fomit-frame-pointer, its
 * shadow stack on): samples PROGRAM on cpu-clock with PERF_SAMPLE_CALLCHAIN
 * and the user registers pc, ra and (where the kernel has it) ssp
 * (PERF_REG_RISCV_SSP, 32), then judges every sample taken in the
 * workload's own functions against the chain its code makes:
 *
 *   burn_a, burn_b (leaves, nothing pushed): the chain is the PC, the
 *     return into main (pushed by path_x), main's return into libc, and
 *     nothing after; ra is the leaf's caller, path_x;
 *   path_a, path_b: the same, or, before its push or after its pop, the
 *     PC and main's return into libc with ra in main;
 *   main: the PC and its return into libc.
 *
 * A chain from the shadow stack (the project kernel's patch 56) is all
 * of these; a frame record walk (the reference kernel, or
 * kernel.perf_callchain_gcs=0) puts ra second and whatever s0 points at
 * after it, none of them.
 *
 * Usage: rv-perf-chains [-s SECONDS] [-F HZ] --chains shstk|frames
 *                       --ssp set|zero|refused PROGRAM [ARG...]
 * PROGRAM must take SECONDS as its one argument (gcsprof-split does).
 * Prints one summary line and the first inexact chains; exits 0 when the
 * samples are as --chains and --ssp say, 1 when not, 2 on other trouble.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PERF_REG_RISCV_PC 0
#define PERF_REG_RISCV_RA 1
#define PERF_REG_RISCV_SSP 32
#define RING_PAGES 512
/* A 5-point split test needs this many samples to fail only when wrong. */
#define MIN_SAMPLES 1000
#define SHOW_BAD 5

enum fn { BURN_A, BURN_B, PATH_A, PATH_B, MAIN, NFN, IN_EXE = NFN, OUTSIDE };
static const char *const fn_names[NFN] = { "burn_a", "burn_b", "path_a", "path_b", "main" };

struct range {
	uint64_t lo, hi;
};

struct state {
	char *exe;
	struct range fns[NFN];     /* link-time addresses */
	struct range maps[8];      /* the executable's mappings, run-time */
	size_t nmaps;
	uint64_t bias;             /* run-time minus link-time address */
	int regs_ssp;              /* the ssp register was asked for */
	uint64_t samples, in_workload, exact, path[2], ssp_set, lost, shown;
};

static int fail(const char *what)
{
	fprintf(stderr, "rv-perf-chains: %s: %s\n", what, strerror(errno));
	return 2;
}

/* The link-time ranges of the workload's functions, from EXE's symtab. */
static int load_symbols(struct state *st)
{
	int fd = open(st->exe, O_RDONLY), ret = -1;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			int f;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			for (f = 0; name && f < NFN; f++)
				if (strcmp(name, fn_names[f]) == 0)
					st->fns[f] = (struct range){ s.st_value, s.st_value + s.st_size };
		}
		ret = 0;
	}
	for (int f = 0; f < NFN; f++)
		if (!st->fns[f].hi)
			ret = -1;
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static enum fn where(const struct state *st, uint64_t addr)
{
	size_t i;
	int f;

	for (f = 0; f < NFN; f++)
		if (addr - st->bias >= st->fns[f].lo && addr - st->bias < st->fns[f].hi)
			return (enum fn)f;
	for (i = 0; i < st->nmaps; i++)
		if (addr >= st->maps[i].lo && addr < st->maps[i].hi)
			return IN_EXE;
	return OUTSIDE;
}

/* Is the chain U[0..N) with RA the one the code at IP makes? */
static int exact(const struct state *st, uint64_t ip, uint64_t ra, const uint64_t *u, uint64_t n)
{
	enum fn f = where(st, ip), r = where(st, ra);
	int full = n == 3 && where(st, u[1]) == MAIN && where(st, u[2]) == OUTSIDE;
	int bare = n == 2 && where(st, u[1]) == OUTSIDE;

	if (n == 0 || u[0] != ip)
		return 0;
	switch (f) {
	case BURN_A:
	case BURN_B:
		return full && r == (f == BURN_A ? PATH_A : PATH_B);
	case PATH_A:
	case PATH_B:
		return full || (bare && r == MAIN);
	case MAIN:
		return bare;
	default:
		return 0;
	}
}

static void show_chain(struct state *st, uint64_t ra, const uint64_t *u, uint64_t n)
{
	uint64_t i;

	if (st->shown++ >= SHOW_BAD)
		return;
	printf("inexact: ra %#llx (%s):", (unsigned long long)ra,
	       where(st, ra) < NFN ? fn_names[where(st, ra)] : "-");
	for (i = 0; i < n && i < 8; i++)
		printf(" %#llx (%s)", (unsigned long long)u[i],
		       where(st, u[i]) < NFN ? fn_names[where(st, u[i])] :
		       where(st, u[i]) == IN_EXE ? "exe" : "outside");
	printf("%s\n", n > 8 ? " ..." : "");
}

/* A sample: ip, pid/tid, the chain, the user registers' ABI and values. */
static void on_sample(struct state *st, const uint64_t *p)
{
	uint64_t ip = p[0], nr = p[2], n = 0, i, ra, ssp;
	const uint64_t *chain = p + 3, *regs = p + 3 + nr;
	uint64_t u[64];
	enum fn f;

	for (i = 0; i < nr && n < 64; i++)
		if (chain[i] < PERF_CONTEXT_MAX)
			u[n++] = chain[i];
	st->samples++;
	if (regs[0] == PERF_SAMPLE_REGS_ABI_NONE)
		return;
	ra = regs[2];
	ssp = st->regs_ssp ? regs[3] : 0;
	f = where(st, ip);
	if (f >= NFN)
		return;
	st->in_workload++;
	st->ssp_set += ssp != 0;
	if (f == BURN_A || f == PATH_A || f == BURN_B || f == PATH_B)
		st->path[f == BURN_B || f == PATH_B]++;
	if (exact(st, ip, ra, u, n))
		st->exact++;
	else
		show_chain(st, ra, u, n);
}

static void on_mmap(struct state *st, const struct perf_event_header *h)
{
	const uint64_t *q = (const uint64_t *)(h + 1) + 1;   /* after pid, tid */
	const char *file = (const char *)(q + 3);

	if (strcmp(file, st->exe) != 0 || st->nmaps == sizeof(st->maps) / sizeof(st->maps[0]))
		return;
	/* The text's segment has its file offsets for addresses (ld's layout). */
	st->bias = q[0] - q[2];
	st->maps[st->nmaps++] = (struct range){ q[0], q[0] + q[1] };
}

/* Every record in the ring, copied out first when it wraps. */
static void drain(struct state *st, struct perf_event_mmap_page *meta)
{
	unsigned char *data = (unsigned char *)meta + sysconf(_SC_PAGESIZE), rec[65536];
	uint64_t size = meta->data_size, head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		uint64_t off = tail % size, i;

		/* rec holds the largest record there is (the size is 16 bits). */
		if (h->size < sizeof(*h))
			break;
		for (i = 0; i < h->size; i++)
			rec[i] = data[(off + i) % size];
		h = (void *)rec;
		if (h->type == PERF_RECORD_SAMPLE)
			on_sample(st, (const uint64_t *)(h + 1));
		else if (h->type == PERF_RECORD_MMAP)
			on_mmap(st, h);
		else if (h->type == PERF_RECORD_LOST)
			st->lost += ((const uint64_t *)(h + 1))[1];
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int open_event(struct state *st, pid_t pid, unsigned hz)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = hz;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_REGS_USER;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.mmap = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.wakeup_events = 64;
	for (st->regs_ssp = 1; st->regs_ssp >= 0; st->regs_ssp--) {
		a.sample_regs_user = 1ULL << PERF_REG_RISCV_PC | 1ULL << PERF_REG_RISCV_RA |
				     (uint64_t)st->regs_ssp << PERF_REG_RISCV_SSP;
		fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		/* A kernel without the ssp register refuses its bit. */
		if (fd >= 0 || errno != EINVAL)
			return fd;
	}
	return -1;
}

/* Run PROGRAM SECONDS under the event, draining the ring until it exits. */
static int run(struct state *st, char **argv, unsigned hz, int *status)
{
	int go[2], fd;
	pid_t pid;
	void *m;

	if (pipe(go) != 0)
		return fail("pipe");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	fd = open_event(st, pid, hz);
	m = fd < 0 ? MAP_FAILED : mmap(NULL, (RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE),
				       PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || write(go[1], "g", 1) != 1) {
		int ret = fail(fd < 0 ? "perf_event_open" : "mmap");

		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		return ret;
	}
	close(go[1]);
	while (waitpid(pid, status, WNOHANG) == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		(void)poll(&p, 1, 100);
		drain(st, m);
	}
	drain(st, m);
	return 0;
}

static int judge(const struct state *st, const char *chains, const char *ssp)
{
	uint64_t ab = st->path[0] + st->path[1];
	double a = ab ? 100.0 * (double)st->path[0] / (double)ab : 0;
	int ok = st->in_workload >= MIN_SAMPLES;

	printf("rv-perf-chains: %llu samples, %llu in the workload, %llu exact, path_a %.1f%%, "
	       "ssp register %s, %llu of those with ssp set, %llu lost\n",
	       (unsigned long long)st->samples, (unsigned long long)st->in_workload,
	       (unsigned long long)st->exact, a, st->regs_ssp ? "sampled" : "refused",
	       (unsigned long long)st->ssp_set, (unsigned long long)st->lost);
	if (strcmp(chains, "shstk") == 0)
		ok = ok && st->exact == st->in_workload && a >= 70.0 && a <= 80.0;
	else
		ok = ok && st->exact == 0;
	if (strcmp(ssp, "refused") == 0)
		ok = ok && !st->regs_ssp;
	else
		ok = ok && st->regs_ssp &&
		     st->ssp_set == (strcmp(ssp, "set") == 0 ? st->in_workload : 0);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *chains = NULL, *ssp = NULL, *secs = "8";
	struct state st = { 0 };
	unsigned hz = 1000;
	char *args[3];
	int status, i, ret;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-s") == 0)
			secs = argv[i + 1];
		else if (strcmp(argv[i], "-F") == 0)
			hz = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--chains") == 0)
			chains = argv[i + 1];
		else if (strcmp(argv[i], "--ssp") == 0)
			ssp = argv[i + 1];
		else
			break;
	}
	if (i >= argc || !chains || !ssp || !hz) {
		fprintf(stderr, "usage: rv-perf-chains [-s SECONDS] [-F HZ] --chains shstk|frames "
			"--ssp set|zero|refused PROGRAM\n");
		return 2;
	}
	/* The kernel names mapped files by their real path. */
	st.exe = realpath(argv[i], NULL);
	if (!st.exe || load_symbols(&st) != 0) {
		fprintf(stderr, "rv-perf-chains: %s: no symbols for the split workload\n", argv[i]);
		return 2;
	}
	args[0] = argv[i];
	args[1] = (char *)secs;
	args[2] = NULL;
	ret = run(&st, args, hz, &status);
	free(st.exe);
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "rv-perf-chains: %s failed (status %#x)\n", argv[i], status);
		return 2;
	}
	return judge(&st, chains, ssp);
}
