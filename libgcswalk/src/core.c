// SPDX-License-Identifier: MIT
/*
 * Core files: threads from NT_PRSTATUS and NT_ARM_GCS notes, the process
 * name from NT_PRPSINFO, file mappings from NT_FILE, memory (the GCS pages
 * included) from the PT_LOAD segments. Every size and offset in the file
 * is checked against the file before use: a hostile or truncated core
 * gives GCSWALK_E_CORRUPT, or unreadable memory, never a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif
#ifndef AT_SYSINFO_EHDR
#define AT_SYSINFO_EHDR 33
#endif

/* What a core target keeps, private to this file. */
struct core_state {
	int fd;
	uint64_t file_size;
	Elf *elf;
	struct gw_segment *segs;
	size_t nsegs;
	/* NT_SIGINFO, and the thread whose NT_PRSTATUS it follows. */
	int have_siginfo;
	int signo, code, error;
	uint64_t address;
	size_t signal_thread;
	uint64_t vdso_base;     /* NT_AUXV's AT_SYSINFO_EHDR, 0 if none */
	char *procname;         /* NT_PRPSINFO's, until it names thread 0 */
};

static struct core_state *C(const struct gcswalk_target *t)
{
	return t->priv;
}

static const struct gw_segment *find_segment(const struct gcswalk_target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < C(t)->nsegs; i++)
		if (addr >= C(t)->segs[i].vaddr && addr - C(t)->segs[i].vaddr < C(t)->segs[i].memsz)
			return &C(t)->segs[i];
	return NULL;
}

static int core_read(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len, size_t *got)
{
	size_t done = 0;

	*got = 0;
	while (done < len) {
		const struct gw_segment *s = find_segment(t, addr + done);
		uint64_t off, avail, file_off;
		size_t chunk;
		ssize_t r;

		if (!s)
			break;
		off = addr + done - s->vaddr;
		if (off >= s->filesz)
			break;                  /* in memory, not in the file */
		avail = s->filesz - off;
		file_off = s->offset + off;
		if (file_off >= C(t)->file_size)
			break;                  /* truncated core */
		if (avail > C(t)->file_size - file_off)
			avail = C(t)->file_size - file_off;
		chunk = len - done < avail ? len - done : (size_t)avail;
		do
			r = pread(C(t)->fd, (char *)buf + done, chunk, (off_t)file_off);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	if (done < len)
		return gw_fail(t, GCSWALK_E_IO, "core: %#llx is not in the dumped memory",
			       (unsigned long long)(addr + done));
	return GCSWALK_OK;
}

static int core_region(struct gcswalk_target *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	const struct gw_segment *s = find_segment(t, addr);

	if (!s || addr - s->vaddr >= s->filesz || s->offset >= C(t)->file_size)
		return gw_fail(t, GCSWALK_E_GCS_NOT_DUMPED,
			       "core: GCS pointer %#llx is outside the dumped segments",
			       (unsigned long long)addr);
	*lo = s->vaddr;
	*hi = s->vaddr + s->memsz;
	return GCSWALK_OK;
}

static void core_close(struct gcswalk_target *t)
{
	struct core_state *c = C(t);

	if (!c)
		return;
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->segs);
	free(c->procname);
	free(c);
	t->priv = NULL;
}

/* The segments that hold the threads' GCS pointers, and the vDSO's. */
static int core_regions(struct gcswalk_target *t)
{
	const struct gw_segment *s;
	size_t i;
	int ret;

	for (i = 0; i < t->nthreads; i++) {
		if (!t->threads[i].have_gcs || !t->threads[i].gcs.gcspr)
			continue;
		s = find_segment(t, t->threads[i].gcs.gcspr);
		if (s && (ret = gw_target_add_region(t, GCSWALK_REGION_GCS, s->vaddr,
						      s->vaddr + s->memsz)) < 0)
			return gw_fail(t, ret, "out of memory");
	}
	s = C(t)->vdso_base ? find_segment(t, C(t)->vdso_base) : NULL;
	if (s && s->vaddr == C(t)->vdso_base &&
	    (ret = gw_target_add_region(t, GCSWALK_REGION_VDSO, s->vaddr, s->vaddr + s->memsz)) < 0)
		return gw_fail(t, ret, "out of memory");
	return GCSWALK_OK;
}

static int core_fatal_signal(const struct gcswalk_target *t, struct gcswalk_signal_info *info)
{
	const struct core_state *c = C(t);

	if (!c->have_siginfo || c->signo == 0)
		return GCSWALK_E_NO_SIGNAL;
	info->signo = c->signo;
	info->code = c->code;
	info->error = c->error;
	info->address = c->address;
	info->thread_index = c->signal_thread;
	info->tid = (int)t->threads[c->signal_thread].tid;
	return GCSWALK_OK;
}

static const struct gw_backend core_backend = {
	.name = "core",
	.read = core_read,
	.region = core_region,
	.check_thread = NULL,
	.close = core_close,
	.load_regions = core_regions,
	.fatal_signal = core_fatal_signal,
	.no_gcs_status = GCSWALK_E_NO_GCS_NOTE,
	.no_gcs_detail = "the core has no such note",
};

/* NT_FILE: count, page size, count * {start, end, page offset}, names. */
static int parse_nt_file(struct gcswalk_target *t, const char *desc, size_t size)
{
	uint64_t count, page, i;
	const char *names, *end = desc + size;
	int ret;

	if (size < 16)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_FILE note of %zu bytes", size);
	memcpy(&count, desc, 8);
	memcpy(&page, desc + 8, 8);
	if (count > (size - 16) / 24)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_FILE claims %llu files in %zu bytes",
			       (unsigned long long)count, size);
	names = desc + 16 + count * 24;
	for (i = 0; i < count; i++) {
		uint64_t e[3];
		const char *nul = memchr(names, '\0', (size_t)(end - names));

		memcpy(e, desc + 16 + i * 24, sizeof(e));
		if (!nul)
			return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_FILE name %llu is cut off",
				       (unsigned long long)i);
		if (e[1] < e[0] || (page && e[2] > UINT64_MAX / page))
			return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_FILE entry %llu is absurd",
				       (unsigned long long)i);
		ret = gw_target_add_mapping(t, e[0], e[1], e[2] * page, names,
					    (size_t)(nul - names));
		if (ret < 0)
			return gw_fail(t, ret, "out of memory");
		names = nul + 1;
	}
	return GCSWALK_OK;
}

/*
 * NT_SIGINFO: the kernel's 64-bit siginfo: si_signo, si_errno, si_code
 * (ints), then the union, 8-aligned, whose first member for the fault
 * signals is si_addr.
 */
#define SI_ADDR_OFFSET 16

static int parse_siginfo(struct gcswalk_target *t, const struct gw_thread *cur, const char *desc,
			 size_t size)
{
	struct core_state *c = C(t);
	int32_t v[3];

	if (size < SI_ADDR_OFFSET + 8)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_SIGINFO of %zu bytes is too short",
			       size);
	if (!cur)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: NT_SIGINFO before any NT_PRSTATUS");
	if (c->have_siginfo)
		return GCSWALK_OK;      /* one per core; the first counts */
	memcpy(v, desc, sizeof(v));
	c->have_siginfo = 1;
	c->signo = v[0];
	c->error = v[1];
	c->code = v[2];
	c->signal_thread = (size_t)(cur - t->threads);
	if (c->signo == SIGSEGV || c->signo == SIGBUS || c->signo == SIGILL ||
	    c->signo == SIGFPE || c->signo == SIGTRAP)
		memcpy(&c->address, desc + SI_ADDR_OFFSET, 8);
	return GCSWALK_OK;
}

/* NT_AUXV: {type, value} pairs of 64 bits; AT_SYSINFO_EHDR is the vDSO. */
static void parse_auxv(struct gcswalk_target *t, const char *desc, size_t size)
{
	uint64_t e[2];
	size_t off;

	for (off = 0; off + sizeof(e) <= size; off += sizeof(e)) {
		memcpy(e, desc + off, sizeof(e));
		if (e[0] == AT_SYSINFO_EHDR)
			C(t)->vdso_base = e[1];
		if (e[0] == AT_NULL)
			break;
	}
}

static int parse_notes(struct gcswalk_target *t, Elf *e, const GElf_Phdr *ph)
{
	const struct gw_arch *arch = t->arch;
	struct gw_thread *cur = NULL;
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	Elf_Data *d;

	if (ph->p_offset > C(t)->file_size || ph->p_filesz > C(t)->file_size - ph->p_offset)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: note segment beyond the end of the file");
	if (ph->p_filesz == 0)
		return GCSWALK_OK;
	d = elf_getdata_rawchunk(e, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	if (!d)
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: unreadable note segment: %s",
			       elf_errmsg(-1));
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)d->d_buf + name_off;
		const char *desc = (const char *)d->d_buf + desc_off;
		int linux_note = nh.n_namesz == 6 && memcmp(name, "LINUX", 6) == 0;
		int core_note = nh.n_namesz == 5 && memcmp(name, "CORE", 5) == 0;
		int ret;

		off = next;
		if (core_note && nh.n_type == NT_PRSTATUS) {
			pid_t tid;
			struct gw_regs regs;

			if (arch->parse_prstatus(desc, nh.n_descsz, &tid, &regs) != 0)
				return gw_fail(t, GCSWALK_E_CORRUPT,
					       "core: NT_PRSTATUS of %u bytes is too short",
					       (unsigned)nh.n_descsz);
			cur = gw_target_add_thread(t, tid);
			if (!cur)
				return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
			cur->regs = regs;
		} else if (linux_note && nh.n_type == arch->note_gcs) {
			if (!cur)
				return gw_fail(t, GCSWALK_E_CORRUPT,
					       "core: NT_ARM_GCS before any NT_PRSTATUS");
			if (arch->parse_gcs(desc, nh.n_descsz, &cur->gcs) != 0)
				return gw_fail(t, GCSWALK_E_CORRUPT,
					       "core: GCS note of %u bytes is too short",
					       (unsigned)nh.n_descsz);
			cur->have_gcs = 1;
		} else if (core_note && nh.n_type == NT_PRPSINFO) {
			size_t fo = arch->prpsinfo_fname_offset, fs = arch->prpsinfo_fname_size;
			int32_t pid;

			if (nh.n_descsz < fo + fs)
				return gw_fail(t, GCSWALK_E_CORRUPT,
					       "core: NT_PRPSINFO of %u bytes is too short",
					       (unsigned)nh.n_descsz);
			memcpy(&pid, desc + arch->prpsinfo_pid_offset, sizeof(pid));
			t->pid = pid;
			free(C(t)->procname);
			C(t)->procname = strndup(desc + fo, fs);
			if (!C(t)->procname)
				return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
		} else if (core_note && nh.n_type == NT_SIGINFO) {
			ret = parse_siginfo(t, cur, desc, nh.n_descsz);
			if (ret < 0)
				return ret;
		} else if (core_note && nh.n_type == NT_AUXV) {
			parse_auxv(t, desc, nh.n_descsz);
		} else if (core_note && nh.n_type == NT_FILE) {
			ret = parse_nt_file(t, desc, nh.n_descsz);
			if (ret < 0)
				return ret;
		}
	}
	/* gelf_getnote() stops at the end or at a note that does not fit. */
	if (d->d_size - off >= sizeof(Elf64_Nhdr))
		return gw_fail(t, GCSWALK_E_CORRUPT, "core: truncated note at offset %zu of %zu",
			       off, (size_t)d->d_size);
	return GCSWALK_OK;
}

static int load_core(struct gcswalk_target *t, const char *path)
{
	GElf_Ehdr eh;
	struct stat st;
	size_t phnum, i;
	Elf *e;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return gw_fail(t, GCSWALK_E_SYSTEM, "libelf: %s", elf_errmsg(-1));
	C(t)->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (C(t)->fd < 0)
		return gw_fail_errno(t, errno == ENOENT ? GCSWALK_E_IO :
					errno == EACCES ? GCSWALK_E_PERMISSION : GCSWALK_E_IO,
				     errno, "%s", path);
	if (fstat(C(t)->fd, &st) != 0)
		return gw_fail_errno(t, GCSWALK_E_IO, errno, "%s", path);
	if (!S_ISREG(st.st_mode))
		return gw_fail(t, GCSWALK_E_NOT_CORE, "%s: not a regular file", path);
	C(t)->file_size = (uint64_t)st.st_size;
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	e = elf_begin(C(t)->fd, ELF_C_READ, NULL);
	if (!e)
		return gw_fail(t, GCSWALK_E_NOT_CORE, "%s: %s", path, elf_errmsg(-1));
	C(t)->elf = e;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return gw_fail(t, GCSWALK_E_NOT_CORE, "%s: not an ELF file", path);
	if (eh.e_type != ET_CORE)
		return gw_fail(t, GCSWALK_E_NOT_CORE, "%s: ELF type %u, not a core", path,
			       (unsigned)eh.e_type);
	t->arch = gw_arch_for_machine(eh.e_machine);
	if (!t->arch || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return gw_fail(t, GCSWALK_E_WRONG_ARCH,
			       "%s: machine %u class %u: no back end for this architecture", path,
			       (unsigned)eh.e_machine, (unsigned)eh.e_ident[EI_CLASS]);
	if (elf_getphdrnum(e, &phnum) != 0)
		return gw_fail(t, GCSWALK_E_CORRUPT, "%s: %s", path, elf_errmsg(-1));
	if (phnum > C(t)->file_size / sizeof(Elf64_Phdr))
		return gw_fail(t, GCSWALK_E_CORRUPT, "%s: %zu program headers in %llu bytes",
			       path, phnum, (unsigned long long)C(t)->file_size);
	C(t)->segs = calloc(phnum ? phnum : 1, sizeof(*C(t)->segs));
	if (!C(t)->segs)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			return gw_fail(t, GCSWALK_E_CORRUPT, "%s: program header %zu: %s", path, i,
				       elf_errmsg(-1));
		if (ph.p_type == PT_LOAD) {
			if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
				return gw_fail(t, GCSWALK_E_CORRUPT,
					       "%s: PT_LOAD %zu has absurd sizes", path, i);
			C(t)->segs[C(t)->nsegs++] = (struct gw_segment){ ph.p_vaddr, ph.p_memsz,
								   ph.p_offset, ph.p_filesz };
		} else if (ph.p_type == PT_NOTE) {
			ret = parse_notes(t, e, &ph);
			if (ret < 0)
				return ret;
		}
	}
	if (t->nthreads == 0)
		return gw_fail(t, GCSWALK_E_CORRUPT, "%s: no NT_PRSTATUS note: no threads", path);
	t->threads[0].name = C(t)->procname;
	C(t)->procname = NULL;
	if (t->pid == 0)
		t->pid = t->threads[0].tid;
	return GCSWALK_OK;
}

int gcswalk_target_open_core(gcswalk_target **out, const char *path, char **errmsg)
{
	struct gcswalk_target *t;

	if (errmsg)
		*errmsg = NULL;
	if (out)
		*out = NULL;
	if (!out || !path)
		return GCSWALK_E_INVALID;
	t = gw_target_alloc(&core_backend);
	if (!t)
		return GCSWALK_E_NOMEM;
	t->priv = calloc(1, sizeof(struct core_state));
	if (!t->priv) {
		gcswalk_target_close(t);
		return GCSWALK_E_NOMEM;
	}
	C(t)->fd = -1;
	return gw_target_opened(t, load_core(t, path), out, errmsg);
}
