/* SPDX-License-Identifier: MIT */
/* libgcswalk internals: targets, back ends, the architecture interface. */
#ifndef GCSWALK_INTERNAL_H
#define GCSWALK_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "gcswalk.h"

#define GW_HIDDEN __attribute__((visibility("hidden")))

/* The lowest (last) error of enum gcswalk_error. */
#define GW_E_LOWEST GCSWALK_E_NO_SIGNAL

/* Registers of a thread, in the architecture-neutral shape walks need. */
struct gw_regs {
	int valid;
	uint64_t pc, lr, sp, fp;
	/* All general registers in DWARF numbering, for the CFI unwinder. */
	uint64_t dwarf[34];
	unsigned ndwarf;
};

struct gw_thread {
	pid_t tid;
	char *name;
	struct gw_regs regs;
	int have_gcs;
	struct gcswalk_gcs_state gcs;
};

struct gw_mapping {
	uint64_t start, end, offset;
	char *path;
};

struct gcswalk_target;

/* A back end: where a target's threads, memory and facts come from (live
 * process, core file, caller-supplied source, mappings only). Its state
 * is private, in the target's priv. */
struct gw_backend {
	const char *name;
	/* Read up to LEN bytes at ADDR; *GOT = bytes read before the first
	 * unreadable one. GCSWALK_OK if all were read, else an error. */
	int (*read)(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len, size_t *got);
	/* The readable region [*lo, *hi) that contains ADDR (the GCS mapping
	 * or the core segment), or GCSWALK_E_GCS_NOT_DUMPED/E_IO. */
	int (*region)(struct gcswalk_target *t, uint64_t addr, uint64_t *lo, uint64_t *hi);
	/* Check that thread TH can be walked now (live: still there and
	 * stopped). May be NULL (core). */
	int (*check_thread)(struct gcswalk_target *t, struct gw_thread *th);
	/* Free the back end's private state (T->priv). May be NULL. */
	void (*close)(struct gcswalk_target *t);
	/* What a thread without GCS state means here: the status and the
	 * detail of the error a GCS walk gives. */
	int no_gcs_status;
	const char *no_gcs_detail;
	/* Append the target's regions (GCS, vDSO) with gw_target_add_region.
	 * May be NULL (none). */
	int (*load_regions)(struct gcswalk_target *t);
	/* The malloc'd path under which this machine opens the target's file
	 * PATH (live: through /proc/PID/root). May be NULL (PATH itself). */
	char *(*file_path)(const struct gcswalk_target *t, const char *path);
	/* The core's fatal signal into INFO, this library's own struct,
	 * zeroed (the caller copies it out by the size rule). May be NULL
	 * (not a core). */
	int (*fatal_signal)(const struct gcswalk_target *t, struct gcswalk_signal_info *info);
};

struct gw_region {
	enum gcswalk_region_kind kind;
	uint64_t start, end;
};

struct gw_build_id {
	char *path;             /* as mapped; the cache key */
	int status;
	unsigned char *id;
	size_t size;
};

struct gw_vdso {
	int status;             /* 1: not looked at yet */
	uint64_t start, size;
	struct gcswalk_elf_symbol *symbols;
	size_t nsymbols;
	char *names;            /* every symbol's name, one block */
	unsigned char *build_id;
	size_t build_id_size;
};

struct gw_segment {
	uint64_t vaddr, memsz, offset, filesz;
};

struct gcswalk_target {
	const struct gw_backend *be;
	void *priv;             /* the back end's own state */
	const struct gw_arch *arch;
	pid_t pid;
	struct gw_thread *threads;
	size_t nthreads, threads_cap;
	struct gw_mapping *maps;
	size_t nmaps, maps_cap;
	int maps_unsorted;      /* some mapping starts before the one above it ends */
	/* Strings replaced by a refresh, kept until close: callers may
	 * still hold them (live). */
	char **retired;
	size_t nretired, retired_cap;
	char *errmsg;
	/* Facts read on first use (facts.c, vdso.c). */
	struct gw_region *regions;
	size_t nregions, regions_cap;
	int regions_loaded;     /* 0: read them on the next call */
	struct gw_build_id *build_ids;
	size_t nbuild_ids, build_ids_cap;
	struct gw_vdso vdso;
	/* Bumped whenever the mappings are read again (facts.c). */
	unsigned maps_generation;
	/* leaf.c's own symboliser, for targets whose callers give none, the
	 * maps_generation it was made for, and how to free it at close (a
	 * pointer: target.c stays below symbol.c). */
	gcswalk_symbolizer *leaf_sym;
	unsigned leaf_sym_generation;
	void (*leaf_sym_free)(gcswalk_symbolizer *s);
};

/* errors.c */
GW_HIDDEN int gw_fail(struct gcswalk_target *t, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
GW_HIDDEN int gw_fail_errno(struct gcswalk_target *t, int status, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
GW_HIDDEN void gw_clear_error(struct gcswalk_target *t);

/* target.c */
GW_HIDDEN struct gcswalk_target *gw_target_alloc(const struct gw_backend *be);
GW_HIDDEN struct gw_thread *gw_target_add_thread(struct gcswalk_target *t, pid_t tid);
GW_HIDDEN int gw_target_add_mapping(struct gcswalk_target *t, uint64_t start, uint64_t end,
				    uint64_t offset, const char *path, size_t path_len);
GW_HIDDEN void gw_target_free(struct gcswalk_target *t);
/* Keep S until the target is freed; 0, or GCSWALK_E_NOMEM (S is leaked). */
GW_HIDDEN int gw_target_retire(struct gcswalk_target *t, char *s);
/* The file mapping containing ADDR, or NULL. */
GW_HIDDEN const struct gw_mapping *gw_target_find_mapping(const struct gcswalk_target *t,
							  uint64_t addr);
/* facts.c: append a region; 0 or GCSWALK_E_NOMEM. Kept in address order. */
GW_HIDDEN int gw_target_add_region(struct gcswalk_target *t, enum gcswalk_region_kind kind,
				   uint64_t start, uint64_t end);
/* Forget what facts.c and vdso.c read (after a new memory map). */
GW_HIDDEN void gw_target_forget_facts(struct gcswalk_target *t);
/* target.c: ARR (N items, *CAP allocated) with room for one more (doubling),
 * or NULL with ARR unchanged. */
GW_HIDDEN void *gw_grow(void *arr, size_t n, size_t *cap, size_t size);

/* buildid.c: the GNU build-id note of an open ELF, malloc'd into *ID.
 * GCSWALK_OK, GCSWALK_E_NO_SYMBOL, GCSWALK_E_NOMEM. */
GW_HIDDEN int gw_elf_build_id(void *elf, unsigned char **id, size_t *size);
/* buildid.c: the build-id of the first LEN bytes of a mapped ELF image (its
 * headers and notes, the page a core dumps of each file). GCSWALK_OK,
 * GCSWALK_E_NO_SYMBOL, GCSWALK_E_NOMEM. */
GW_HIDDEN int gw_image_build_id(const void *image, size_t len, unsigned char **id, size_t *size);

/* Finish an open call: on success store T in *OUT; on failure hand the
 * detail to *ERRMSG (if not NULL), close T and return STATUS. */
GW_HIDDEN int gw_target_opened(struct gcswalk_target *t, int status, gcswalk_target **out,
			       char **errmsg);

/*
 * target.c: sized structs (the rule of docs/libgcswalk.md, "Sized
 * structs"). Every sized struct has a frozen 1.0 size below, the smallest
 * a caller may give; a field added later goes at the end, and the
 * minimum stays.
 *
 * gw_sized_in: a struct the caller passes in. SRC holds SRC_SIZE bytes
 * (its size field), at least MIN_SIZE; a larger struct from a newer caller
 * is accepted when the bytes this library does not know are zero. DST
 * (DST_SIZE bytes, holding the defaults) gets the known part: an older
 * caller's missing fields keep their defaults. GCSWALK_OK or
 * GCSWALK_E_INVALID.
 *
 * gw_sized_out: a struct the library fills. The call fills a local copy
 * SRC (SRC_SIZE bytes, its own sizeof), then this copies it out to the
 * caller's DST of DST_SIZE bytes (its size field), at least MIN_SIZE:
 * min(DST_SIZE, SRC_SIZE) bytes, the caller's size field kept; a newer
 * caller's bytes this library does not know are zeroed. Nothing past
 * DST_SIZE is written. GCSWALK_OK or GCSWALK_E_INVALID.
 */
GW_HIDDEN int gw_sized_in(void *dst, size_t dst_size, const void *src, size_t src_size,
			  size_t min_size);
GW_HIDDEN int gw_sized_out(void *dst, size_t dst_size, const void *src, size_t src_size,
			   size_t min_size);

/* The end of FIELD in TYPE: a struct's size up to and with that field. */
#define GW_SIZE_TO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* The sized structs' sizes in 1.0: each up to its last 1.0 field. */
#define GW_WALK_OPTIONS_SIZE_1_0 GW_SIZE_TO(struct gcswalk_walk_options, symbolizer)
#define GW_SYMBOLIZER_OPTIONS_SIZE_1_0 GW_SIZE_TO(struct gcswalk_symbolizer_options, debuginfo_path)
#define GW_SOURCE_SIZE_1_0 GW_SIZE_TO(struct gcswalk_source, mapping_count)
#define GW_SOURCE_THREAD_SIZE_1_0 GW_SIZE_TO(struct gcswalk_source_thread, gcs)
#define GW_SIGNAL_INFO_SIZE_1_0 GW_SIZE_TO(struct gcswalk_signal_info, thread_index)
#define GW_REGION_SIZE_1_0 GW_SIZE_TO(struct gcswalk_region, end)
#define GW_PROC_THREAD_SIZE_1_0 GW_SIZE_TO(struct gcswalk_proc_thread, cpu_time_ns)
/* New in 1.2: its first size is its minimum. */
#define GW_ARCH_INFO_SIZE_1_2 GW_SIZE_TO(struct gcswalk_arch_info, elf_machine)

/* symbol.c: unwind thread TH with libdwfl's CFI unwinder over the
 * symboliser's modules (the symboliser owns the Dwfl and sets up its
 * thread state, reading registers and memory through T's back end):
 * FRAME(ARG, pc) for each frame, newest first, until it returns non-zero.
 * GCSWALK_OK, GCSWALK_E_INVALID (S belongs to another target),
 * GCSWALK_E_DWFL (not one frame). */
GW_HIDDEN int gw_symbolizer_unwind(gcswalk_symbolizer *s, struct gcswalk_target *t,
				   struct gw_thread *th, int (*frame)(void *arg, uint64_t pc),
				   void *arg);

/* fallback.c: the FP and CFI unwinders fill FRAMES (room for MAX). */
GW_HIDDEN int gw_unwind_fp(struct gcswalk_target *t, struct gw_thread *th,
			   struct gcswalk_frame *frames, size_t max, size_t *count);
GW_HIDDEN int gw_unwind_cfi(struct gcswalk_target *t, gcswalk_symbolizer *s,
			    struct gw_thread *th, struct gcswalk_frame *frames, size_t max,
			    size_t *count);

/*
 * The architecture back end: everything that depends on the shadow stack's
 * flavour, one instance per file (arch-arm64.c: GCS; arch-riscv64.c:
 * Zicfiss), chosen by the target's ELF machine (arch.c).
 */
struct gw_arch {
	const char *name;              /* "arm64", "riscv64" */
	const char *feature;           /* the shadow stack's name: "GCS", "Zicfiss" */
	unsigned elf_machine;          /* EM_AARCH64, EM_RISCV */
	unsigned note_gcs;             /* NT_ARM_GCS, NT_RISCV_USER_CFI */
	const char *note_name;         /* "NT_ARM_GCS", ... for messages */
	size_t gcs_note_size;          /* sizeof(struct user_gcs), ... */
	size_t entry_size;             /* bytes per GCS entry */
	/* Where a frame record {previous frame pointer, return address}
	 * lies relative to the frame pointer: arm64 0 (x29 points at it),
	 * riscv64 -16 (s0 points above it, at the caller's stack pointer). */
	int record_offset;
	/* Offsets from a signal frame's saved PC (the INTERRUPTED_PC frame's
	 * slot) of its saved frame pointer and link register. */
	int sigframe_fp_offset, sigframe_lr_offset;
	/* 1 when a callee's prologue pushes the return address (riscv's
	 * sspush ra), not the call itself (arm64's BL): a function that
	 * pushes nothing (a leaf, uninstrumented code) has its caller only
	 * in the link register. */
	int callee_pushes;
	/* perf's numbers for the user registers a profiler asks for with
	 * the kernel's call chains from the shadow stack: the shadow stack
	 * pointer (this project's kernel series: PERF_REG_ARM64_GCSPR 47,
	 * PERF_REG_RISCV_SSP 32, 0 in a sample without a shadow stack), and,
	 * where callee_pushes, the link register holding a leaf's caller
	 * (PERF_REG_RISCV_RA 1); -1 where the call itself pushes (arm64). */
	int perf_reg_shadow_stack, perf_reg_leaf_caller;
	/* Registers from an NT_PRSTATUS descriptor (of this architecture's
	 * layout, in the core's byte order which must be the host's).
	 * Returns 0, or -1 if LEN is too short. *PID gets pr_pid. */
	int (*parse_prstatus)(const void *desc, size_t len, pid_t *pid, struct gw_regs *regs);
	/* GCS state from a GCS note or regset. -1 if LEN is too short. */
	int (*parse_gcs)(const void *desc, size_t len, struct gcswalk_gcs_state *gcs);
	/* The DWARF registers the CFI unwinder gets from REGS's pc, lr, sp
	 * and fp alone (a caller-supplied source gives no others). */
	void (*basic_dwarf)(struct gw_regs *regs);
	/* Offset and length of pr_fname in NT_PRPSINFO. */
	size_t prpsinfo_fname_offset, prpsinfo_fname_size;
	/* Offset of pr_pid (32 bits) in NT_PRPSINFO. */
	size_t prpsinfo_pid_offset;
	/* A code address saved on the stack, without pointer-authentication
	 * bits (frame records of PAC-built code hold signed LRs). */
	uint64_t (*strip_pac)(uint64_t address);
	/* In BUF, LEN bytes of stack read from BASE (upwards from the stack
	 * pointer), find the signal frame whose saved GCS pointer names the
	 * signal cap at CAP_SLOT: the interrupted PC into *PC and its stack
	 * address into *PC_ADDR. 0 if found, -1 if not. */
	int (*signal_pc)(const unsigned char *buf, size_t len, uint64_t base, uint64_t cap_slot,
			 uint64_t *pc, uint64_t *pc_addr);
	/* The same for a signal handler's own UCONTEXT (ucontext_t), read in
	 * place: async-signal-safe. NULL where there is no self back end. */
	int (*self_signal_pc)(const void *ucontext, uint64_t cap_slot, uint64_t *pc,
			      uint64_t *pc_addr);
	/* Classify ENTRY read from SLOT (without the SIGRETURN relabelling). */
	enum gcswalk_frame_kind (*classify)(uint64_t entry, uint64_t slot);
	/* The return address a failed shadow-stack check compared with the
	 * newest entry: the LR a RET used (arm64), the t0 of GCC's
	 * `sspopchk t0` (riscv64). */
	uint64_t (*checked_return)(const struct gw_regs *regs);
};

/* arch-*.c: the instances; arch.c: the table. */
GW_HIDDEN extern const struct gw_arch gw_arch_arm64, gw_arch_riscv64;
GW_HIDDEN const struct gw_arch *gw_arch_for_machine(unsigned elf_machine);
/* The architecture of live targets on this host, or NULL. */
GW_HIDDEN const struct gw_arch *gw_arch_native(void);
/* Live registers and GCS state of a stopped tracee thread. Return 0, or
 * -1 with errno set (ENODEV/EINVAL from the GCS regset: no GCS). */
GW_HIDDEN int gw_arch_ptrace_regs(pid_t tid, struct gw_regs *regs);
/* arch.c, native builds: PTRACE_GETREGSET of TYPE into BUF, all LEN bytes
 * of it: 0, or -1 with errno set (EIO: the kernel gave fewer). */
GW_HIDDEN int gw_ptrace_regset(pid_t tid, unsigned type, void *buf, size_t len);
GW_HIDDEN int gw_arch_ptrace_gcs(pid_t tid, struct gcswalk_gcs_state *gcs);
/* The calling thread: does the CPU and kernel give it a shadow stack; and
 * the slot of the newest entry that belongs to gcswalk_self()'s caller
 * or an older function (0 if the shadow stack is off). */
GW_HIDDEN int gw_arch_self_supported(void);
GW_HIDDEN uint64_t gw_arch_self_gcspr(void);

/* Little-endian fields of a byte layout (notes, signal frames). */
static inline uint64_t gw_get64(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static inline uint32_t gw_get32(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

/* leaf.c: whether TH's link register holds the caller of the function
 * its PC is in (which then has pushed nothing: a leaf, or a prologue not
 * yet run), from the CFI of S (or a symboliser of T's own when S is
 * NULL): 1 yes, 0 no or unknown. NEWEST is the newest GCS entry (0 if
 * none). Only for architectures whose callees push. */
GW_HIDDEN int gw_leaf_caller(struct gcswalk_target *t, gcswalk_symbolizer *s,
			     const struct gw_thread *th, uint64_t newest);
/* symbol.c: whether the CFI at PC says the return address is still in
 * its register (1), saved in memory by the frame (0), or unknown (-1);
 * and the bounds of the function (its FDE) into *LO and *HI. */
GW_HIDDEN int gw_symbolizer_ra_live(gcswalk_symbolizer *s, uint64_t pc, uint64_t *lo,
				    uint64_t *hi);

/* frames.c: relabel entry I as SIGRETURN when entry I+1 is a signal cap;
 * shared by every walk. FRAMES has N items. */
GW_HIDDEN void gw_mark_sigreturn(struct gcswalk_frame *frames, size_t n);

#endif
