/* SPDX-License-Identifier: MIT */
/*
 * libgcswalk: walk and symbolise a thread's call chain from its Guarded
 * Control Stack (arm64 FEAT_GCS).
 *
 * Chains are walked from:
 *  - the calling thread itself: gcswalk_self(), async-signal-safe and
 *    allocation-free, for SIGPROF and crash handlers;
 *  - a live process, through ptrace (gcswalk_target_open_pid());
 *  - a core file, arm64 cores on any host (gcswalk_target_open_core());
 *  - registers and memory the caller supplies, e.g. a debugger's
 *    (gcswalk_target_open_source()).
 * A fifth kind of target, file mappings only (gcswalk_target_open_mappings()),
 * symbolises addresses recorded earlier.
 *
 * Conventions, the same in every call:
 *  - Calls that can fail return an int status: GCSWALK_OK (0), a positive
 *    status that is not an error (GCSWALK_END, GCSWALK_CUT), or a negative
 *    gcswalk_error. gcswalk_strerror() names a status; for calls on a
 *    target, gcswalk_target_errmsg() gives the detail of the last failure
 *    (which file, which errno).
 *  - Objects come from a ..._open or ..._new call through an output pointer given
 *    first, and are released by the matching ..._close or ..._free call, which
 *    accepts NULL.
 *  - The library keeps no global state. One handle, and everything created
 *    from it, may be used by one thread at a time; different handles may be
 *    used concurrently.
 *  - Strings and arrays returned by the library belong to the library; the
 *    documentation of each call says how long they stay valid.
 *
 * ABI: libgcswalk.so.1. The calls of 1.0 are versioned GCSWALK_1.0; each
 * minor release versions the calls it adds with a node of its own
 * (GCSWALK_1.1: the call marked "Since 1.1"). Structs follow one of two
 * rules:
 *  - Sized: options and sources the caller passes in, and the output
 *    structs new in 1.0 (gcswalk_signal_info, gcswalk_region,
 *    gcswalk_proc_thread) start with `size_t size`, the caller's sizeof
 *    (the ..._INIT macros set it). The library accepts a size from an older
 *    header (missing fields take their defaults, or are not filled) and a
 *    larger one from a newer header: its unknown part must be zero in an
 *    input, and is zeroed in an output. Sizes below 1.0's are
 *    GCSWALK_E_INVALID.
 *  - Fixed: gcswalk_frame, gcswalk_gcs_state, gcswalk_thread_info,
 *    gcswalk_mapping, gcswalk_record_check, gcswalk_symbol,
 *    gcswalk_location and gcswalk_elf_symbol keep their layout for as long
 *    as the soname is 1 (they are filled or passed in arrays); facts
 *    added later come through new calls taking the same target and index,
 *    as gcswalk_target_mapping_build_id() does for mappings.
 */
#ifndef GCSWALK_H
#define GCSWALK_H

#include <stddef.h>
#include <stdint.h>

#include "gcswalk_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version at run time, e.g. "1.0.0" (a static string); the
 * header's is GCSWALK_VERSION_STRING. */
const char *gcswalk_version(void);

/*
 * Statuses. 0 and the positive values are not errors; the negative values
 * are. Their meaning is stable; new ones may be added at the end.
 */
enum gcswalk_status {
	GCSWALK_OK = 0,
	/* The walk has no more frames: the whole chain has been returned. */
	GCSWALK_END = 1,
	/* The walk stopped at the caller's depth limit: the chain is deeper. */
	GCSWALK_CUT = 2,
};

enum gcswalk_error {
	GCSWALK_E_NOMEM = -1,         /* out of memory */
	GCSWALK_E_INVALID = -2,       /* bad argument (NULL, index out of range, bad options) */
	GCSWALK_E_UNSUPPORTED = -3,   /* not possible with this build or host (e.g. self walk on x86_64) */
	GCSWALK_E_NO_GCS_CPU = -4,    /* the CPU or kernel has no GCS (no HWCAP_GCS, no NT_ARM_GCS regset) */
	GCSWALK_E_GCS_DISABLED = -5,  /* GCS is not enabled for this thread */
	GCSWALK_E_NO_PROCESS = -6,    /* no such process */
	GCSWALK_E_THREAD_GONE = -7,   /* the thread (or process) exited during the walk */
	GCSWALK_E_PERMISSION = -8,    /* the caller may not trace or read the target */
	GCSWALK_E_BUSY = -9,          /* the target is already traced by another process */
	GCSWALK_E_NOT_STOPPED = -10,  /* a thread is not ptrace-stopped by the caller */
	GCSWALK_E_TIMEOUT = -11,      /* a thread did not stop in time */
	GCSWALK_E_IO = -12,           /* a file could not be opened or read */
	GCSWALK_E_NOT_CORE = -13,     /* not an ELF core file */
	GCSWALK_E_WRONG_ARCH = -14,   /* a core of an architecture without a back end */
	GCSWALK_E_CORRUPT = -15,      /* truncated or malformed core file */
	GCSWALK_E_NO_GCS_NOTE = -16,  /* the core has no GCS note for this thread */
	GCSWALK_E_GCS_NOT_DUMPED = -17, /* the GCS pointer lies outside the dumped memory */
	GCSWALK_E_NO_REGISTERS = -18, /* the thread's registers are not available */
	GCSWALK_E_NO_SYMBOL = -19,    /* no module or symbol at this address */
	GCSWALK_E_DWFL = -20,         /* elfutils (libdwfl) failed */
	GCSWALK_E_SYSTEM = -21,       /* another system call failure (errno in the message) */
	GCSWALK_E_NO_SIGNAL = -22,    /* the core records no signal (no NT_SIGINFO) */
};

/* A static, never-NULL English description of any status or error. */
const char *gcswalk_strerror(int status);

/*
 * Whether this CPU and kernel give GCS to user space: GCSWALK_OK,
 * GCSWALK_E_NO_GCS_CPU (arm64 without HWCAP_GCS), GCSWALK_E_UNSUPPORTED
 * (not an arm64 build). Cheap (one getauxval()), async-signal-safe.
 */
int gcswalk_system_gcs(void);

/* Since 1.2. An architecture the library walks. Caller-sized: set size. */
struct gcswalk_arch_info {
	size_t size;                 /* caller sets sizeof(struct gcswalk_arch_info) */
	const char *name;            /* "arm64", "riscv64" (static) */
	/* The shadow stack's own name, for messages: "GCS" (arm64's Guarded
	 * Control Stack), "Zicfiss" (RISC-V's shadow stack). Static. */
	const char *shadow_stack;
	unsigned elf_machine;        /* 183 (EM_AARCH64), 243 (EM_RISCV) */
	/* Since 1.3. perf's register numbers (sample_regs_user bits) for a
	 * profiler of the kernel's call chains from the shadow stack (this
	 * project's kernel series): the shadow stack pointer, 0 in a sample
	 * of a thread without one (47 PERF_REG_ARM64_GCSPR, 32
	 * PERF_REG_RISCV_SSP); and the link register, where a leaf's caller
	 * is only there because callees push their own return address (1
	 * PERF_REG_RISCV_RA; -1 on arm64, whose calls push it): see
	 * gcswalk_symbolizer_leaf_caller(). */
	int perf_reg_shadow_stack;
	int perf_reg_leaf_caller;
};

/*
 * Since 1.2. The architecture of this machine's processes (the live
 * targets' and gcswalk_self()'s): GCSWALK_OK, GCSWALK_E_UNSUPPORTED (a
 * host without a back end, e.g. x86_64), GCSWALK_E_INVALID (NULL, size
 * too small).
 */
int gcswalk_system_arch(struct gcswalk_arch_info *info);

/*
 * Whether the kernel takes perf's user call chains of GCS-enabled threads
 * from their GCS (kernel.perf_callchain_gcs, this project's kernel
 * series): 1 yes, 0 the sysctl is there but 0 (frame records, as other
 * kernels), GCSWALK_E_UNSUPPORTED this kernel cannot.
 */
int gcswalk_system_perf_callchains(void);

/*
 * kernel.perf_event_max_sample_rate: the highest sampling frequency perf
 * accepts now (the kernel lowers it when its sampling interrupts take too
 * long, which emulators provoke). > 0, or GCSWALK_E_UNSUPPORTED (no perf),
 * GCSWALK_E_IO.
 */
int gcswalk_system_perf_max_sample_rate(void);

/* ---- Frames --------------------------------------------------------- */

/* What a frame is. GCS walks yield PC, LR, RETURN, SIGRETURN, SIGNAL_CAP,
 * INTERRUPTED_PC, SWITCH_CAP, TERMINATOR, UNREADABLE and INVALID; the
 * fallback unwinders
 * yield PC and RETURN with gcswalk_frame.source saying which unwinder. */
enum gcswalk_frame_kind {
	/* The thread's program counter (the innermost frame; not on the GCS). */
	GCSWALK_FRAME_PC = 1,
	/* The link register, only with GCSWALK_WALK_LR, when it differs from
	 * the newest GCS entry. Unverified: it may be a stale value. */
	GCSWALK_FRAME_LR,
	/* A GCS entry holding a return address: address is where the caller
	 * resumes; the call is at address - 4. */
	GCSWALK_FRAME_RETURN,
	/* The GCS entry the kernel pushes with a signal cap: the return
	 * address into the signal trampoline (the handler returns there),
	 * not a caller. */
	GCSWALK_FRAME_SIGRETURN,
	/* A signal cap token ((slot & ~0xfff) | 0): a signal was delivered
	 * here; the frames that follow belong to the interrupted context. */
	GCSWALK_FRAME_SIGNAL_CAP,
	/* A valid switch cap token ((slot & ~0xfff) | 1): a GCS switch
	 * (GCSSS1/GCSSS2) left this stack here. */
	GCSWALK_FRAME_SWITCH_CAP,
	/* The 0 entry at the top of a GCS: the walk ends after it. */
	GCSWALK_FRAME_TERMINATOR,
	/* The next GCS slot could not be read (not mapped, not dumped): the
	 * walk ends after it. address is 0, slot is the unreadable slot. */
	GCSWALK_FRAME_UNREADABLE,
	/* A GCS entry that is none of the above (misaligned, a cap token for
	 * another page, an in-progress token): address is the raw value. */
	GCSWALK_FRAME_INVALID,
	/* Right after a SIGNAL_CAP, in live and core walks: the PC of the
	 * interrupted context, read from the kernel's signal frame on the
	 * stack, which is found by its GCS record naming this very cap; slot
	 * is where the signal frame holds it. Not a return address. Absent
	 * when no such signal frame is found near the thread's stack pointer;
	 * from the handler's ucontext in gcswalk_self_signal(). */
	GCSWALK_FRAME_INTERRUPTED_PC,
};

/* Which unwinder produced a frame. (Named enum gcswalk_source before 1.0:
 * that tag is now struct gcswalk_source, a caller-supplied target.) */
enum gcswalk_frame_source {
	GCSWALK_SOURCE_GCS = 1,     /* the Guarded Control Stack (or registers, for PC/LR) */
	GCSWALK_SOURCE_FP = 2,      /* frame records (x29 chain): fallback */
	GCSWALK_SOURCE_CFI = 3,     /* DWARF call frame information via libdwfl: fallback */
};

struct gcswalk_frame {
	enum gcswalk_frame_kind kind;
	enum gcswalk_frame_source source;
	/* PC, LR or return address; for INVALID the raw entry; for caps the
	 * raw token; 0 for TERMINATOR and UNREADABLE. */
	uint64_t address;
	/* Address of the GCS slot the frame was read from; for FP frames the
	 * address of the frame record; 0 for PC, LR and CFI frames. */
	uint64_t slot;
};

/* Name of a frame kind ("return", "signal-cap", ...), static, or "?". */
const char *gcswalk_frame_kind_name(enum gcswalk_frame_kind kind);
/* Name of a frame source ("gcs", "fp", "cfi"), static, or "?". */
const char *gcswalk_source_name(enum gcswalk_frame_source source);

/* ---- The calling thread --------------------------------------------- */

/*
 * Copy the calling thread's chain from its GCS into FRAMES (room for MAX),
 * newest first, starting with the return address into the function that
 * called gcswalk_self(), and store the number of frames in *COUNT. Frames
 * are classified as for any walk (RETURN, SIGRETURN, SIGNAL_CAP, ...); a
 * call from a signal handler continues past the signal cap into the
 * interrupted context. The walk ends at the terminator (included) or at
 * the end of the GCS pages.
 *
 * Async-signal-safe, allocates nothing, takes no lock: it reads GCSPR_EL0
 * and copies entries. Only when the chain continues past the page
 * GCSPR_EL0 points into does it read /proc/self/maps once (open, read,
 * close) to find where the GCS mapping ends.
 *
 * Returns GCSWALK_END (complete chain), GCSWALK_CUT (MAX frames were
 * filled and the chain goes on), GCSWALK_E_INVALID (NULL argument),
 * GCSWALK_E_NO_GCS_CPU (no HWCAP_GCS), GCSWALK_E_GCS_DISABLED (GCS off for
 * this thread), or GCSWALK_E_UNSUPPORTED (not an arm64 build).
 */
int gcswalk_self(struct gcswalk_frame *frames, size_t max, size_t *count);

/*
 * The same from a signal handler installed with SA_SIGINFO (a SIGPROF
 * sampler): UCONTEXT is the handler's third argument. After the signal cap
 * of that signal comes the interrupted context's PC from UCONTEXT, as a
 * GCSWALK_FRAME_INTERRUPTED_PC frame: the function that was running, which
 * the GCS alone does not have. Async-signal-safe and allocation-free like
 * gcswalk_self(). GCSWALK_E_INVALID for a NULL UCONTEXT.
 */
int gcswalk_self_signal(const void *ucontext, struct gcswalk_frame *frames, size_t max,
			size_t *count);

/* ---- Targets: live processes and core files ------------------------- */

typedef struct gcswalk_target gcswalk_target;

/* gcswalk_target_open_pid() flags. */
enum gcswalk_attach_flags {
	/* Attach with PTRACE_SEIZE + PTRACE_INTERRUPT to every thread, wait
	 * until each has stopped, and detach in gcswalk_target_close(). */
	GCSWALK_ATTACH_SEIZE = 0,
	/* The caller already ptrace-attached and stopped the threads it wants
	 * walked; the library only reads. Threads not stopped by the caller
	 * are listed but their walk gives GCSWALK_E_NOT_STOPPED. */
	GCSWALK_ATTACH_STOPPED = 1 << 0,
	/* No ptrace at all: threads (with names) and the memory map are
	 * listed, memory is read with process_vm_readv, and a symboliser can
	 * be made, but threads have no registers (walks give
	 * GCSWALK_E_NO_REGISTERS). Works on the caller's own process, e.g. to
	 * symbolise what gcswalk_self() returned. */
	GCSWALK_ATTACH_NONE = 1 << 1,
};

/*
 * Open the live process PID. With GCSWALK_ATTACH_SEIZE every thread is
 * stopped (threads that appear while attaching are attached too) until
 * gcswalk_target_close(); a thread that does not stop within
 * TIMEOUT_MS milliseconds (0: 5000) gives GCSWALK_E_TIMEOUT.
 * Registers, NT_ARM_GCS and the memory map are read at open time.
 *
 * Errors: GCSWALK_E_NO_PROCESS, GCSWALK_E_PERMISSION, GCSWALK_E_BUSY,
 * GCSWALK_E_TIMEOUT, GCSWALK_E_NOMEM, GCSWALK_E_UNSUPPORTED (a host
 * architecture without a back end), GCSWALK_E_SYSTEM. On error *OUT is
 * NULL and nothing stays attached.
 *
 * ERRMSG, if not NULL, receives NULL on success and on failure a one-line
 * detail (which file, which system call, errno) that the caller frees with
 * free(); it may be NULL even on failure if memory ran out.
 */
int gcswalk_target_open_pid(gcswalk_target **out, int pid, unsigned flags,
			    unsigned timeout_ms, char **errmsg);

/*
 * Open a core file. Reads the ELF headers, the notes (NT_PRSTATUS and
 * NT_ARM_GCS per thread, NT_PRPSINFO, NT_FILE) and the PT_LOAD table; the
 * file stays open until gcswalk_target_close(). Works for arm64 cores on
 * any host.
 *
 * Errors: GCSWALK_E_IO, GCSWALK_E_NOT_CORE, GCSWALK_E_WRONG_ARCH,
 * GCSWALK_E_CORRUPT (truncated headers or notes, absurd sizes),
 * GCSWALK_E_NOMEM, GCSWALK_E_PERMISSION. On error *OUT is NULL. ERRMSG is
 * as for gcswalk_target_open_pid().
 */
int gcswalk_target_open_core(gcswalk_target **out, const char *path, char **errmsg);

/* Detach (live targets opened with GCSWALK_ATTACH_SEIZE), close files and
 * free everything, including every string the target returned. NULL is
 * accepted. Walks and symbolisers of the target must be freed first. */
void gcswalk_target_close(gcswalk_target *target);

/* The detail of the last failure of a call on TARGET or on a walk or
 * symboliser made from it, or "" if none. Valid until the next call on
 * TARGET or its walks and symbolisers. */
const char *gcswalk_target_errmsg(const gcswalk_target *target);

/* The process id (for a core, the one recorded in it). */
int gcswalk_target_pid(const gcswalk_target *target);

/* Number of threads. Thread indexes run from 0; index 0 is the thread the
 * core's first NT_PRSTATUS describes (the one that crashed) or, for a live
 * process, the main thread. */
size_t gcswalk_target_thread_count(const gcswalk_target *target);

/* GCS mode bits, as in prctl(PR_{GET,SET,LOCK}_SHADOW_STACK_STATUS) and
 * NT_ARM_GCS (PR_SHADOW_STACK_ENABLE, _WRITE, _PUSH). On riscv64 (the
 * Zicfiss shadow stack, NT_RISCV_USER_CFI) only ENABLE exists. */
#define GCSWALK_GCS_ENABLE (1ULL << 0)
#define GCSWALK_GCS_WRITE  (1ULL << 1)
#define GCSWALK_GCS_PUSH   (1ULL << 2)
/* Since 1.2, riscv64 only: Zicfilp landing pads are on (enabled) or
 * locked (locked), PR_SET_CFI's state as NT_RISCV_USER_CFI reports it. */
#define GCSWALK_LANDING_PADS (1ULL << 16)

/* si_code of the SIGSEGV a failed GCS check raises (the kernel's
 * SEGV_CPERR; older C libraries do not define it). */
#define GCSWALK_SEGV_CPERR 10

/* GCS state of a thread, as the kernel reports it (struct user_gcs). */
struct gcswalk_gcs_state {
	uint64_t features_enabled;   /* GCSWALK_GCS_ENABLE | _WRITE | _PUSH */
	uint64_t features_locked;
	uint64_t gcspr;              /* GCSPR_EL0: the newest entry */
};

struct gcswalk_thread_info {
	int tid;
	/* Thread name (live: /proc comm; core: the process name for the
	 * first thread, NULL for the others, since cores record no thread
	 * names). Valid until gcswalk_target_close(). */
	const char *name;
	int have_registers;          /* pc, lr, sp, fp are valid */
	uint64_t pc, lr, sp, fp;
	/* 1: gcs holds the thread's GCS state; 0: no GCS information (no
	 * NT_ARM_GCS note or regset: a kernel without GCS). */
	int have_gcs;
	struct gcswalk_gcs_state gcs;
};

/* Fill *INFO for thread INDEX. GCSWALK_E_INVALID for a bad index. */
int gcswalk_target_thread(const gcswalk_target *target, size_t index,
			  struct gcswalk_thread_info *info);

/* Index of the thread TID, or GCSWALK_E_INVALID if there is none. */
int gcswalk_target_thread_index(const gcswalk_target *target, int tid);

/* A file mapping of the target (live: /proc/PID/maps; core: NT_FILE). */
struct gcswalk_mapping {
	uint64_t start, end;         /* [start, end) */
	uint64_t offset;             /* file offset of start, in bytes */
	const char *path;            /* valid until gcswalk_target_close() */
};

size_t gcswalk_target_mapping_count(const gcswalk_target *target);
int gcswalk_target_mapping(const gcswalk_target *target, size_t index,
			   struct gcswalk_mapping *mapping);

/*
 * Read SIZE bytes of target memory at ADDRESS into BUF (core: from the
 * PT_LOAD segments). *GOT (may be NULL) receives the number of bytes read
 * before the first unreadable byte. Returns GCSWALK_OK when all SIZE bytes
 * were read, GCSWALK_E_IO when fewer were, GCSWALK_E_THREAD_GONE when the
 * live process is gone.
 */
int gcswalk_target_read(gcswalk_target *target, uint64_t address, void *buf,
			size_t size, size_t *got);

/*
 * Index of the file mapping that contains ADDRESS (a binary search, cheap
 * enough for every frame of every sample), or GCSWALK_E_NO_SYMBOL when no
 * file mapping does (anonymous memory, the vDSO, or a file mapped after
 * the map was last read: see gcswalk_target_refresh()).
 */
int gcswalk_target_mapping_find(const gcswalk_target *target, uint64_t address);

/* ---- Facts about a target ------------------------------------------- */

/* A core's fatal signal (NT_SIGINFO). Caller-sized: set size first. */
struct gcswalk_signal_info {
	size_t size;                 /* caller sets sizeof(struct gcswalk_signal_info) */
	int signo;
	int code;                    /* si_code, e.g. SEGV_CPERR (10) */
	int error;                   /* si_errno */
	uint64_t address;            /* si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP, else 0 */
	int tid;                     /* the thread that got it (first NT_PRSTATUS) */
	size_t thread_index;
};

/*
 * The signal that made the core: GCSWALK_OK, GCSWALK_E_INVALID (not a core,
 * NULL, or INFO->size too small), GCSWALK_E_NO_SIGNAL (the core records no
 * signal: no NT_SIGINFO, or one with signal 0).
 */
int gcswalk_target_fatal_signal(const gcswalk_target *target, struct gcswalk_signal_info *info);

/*
 * The GNU build-id of the ELF file at PATH: *ID gets a malloc'd copy the
 * caller frees, *SIZE its length. GCSWALK_OK, GCSWALK_E_IO (cannot open),
 * GCSWALK_E_NO_SYMBOL (not ELF or no build-id note), GCSWALK_E_NOMEM,
 * GCSWALK_E_INVALID (NULL argument).
 */
int gcswalk_file_build_id(const char *path, unsigned char **id, size_t *size);

/*
 * The same for the file at PATH (absolute) as live process PID sees it:
 * through /proc/PID/root, its own mount namespace and root. For a mapping
 * the caller learnt of without a target (a perf MMAP2 record).
 */
int gcswalk_proc_build_id(int pid, const char *path, unsigned char **id, size_t *size);

/*
 * The build-id of mapping INDEX's file (live: read through /proc/PID/root,
 * the process's own view; core, mappings and source targets: the path as
 * recorded, on this machine). Cached per file, failures too: *ID stays
 * valid until gcswalk_target_close(). Errors as for gcswalk_file_build_id(),
 * and GCSWALK_E_INVALID for a bad index.
 */
int gcswalk_target_mapping_build_id(gcswalk_target *target, size_t index,
				    const unsigned char **id, size_t *size);

/*
 * Since 1.1. The build-id the caller knows for mapping INDEX's file, e.g.
 * recorded with the mapping in a profile made elsewhere: it replaces what
 * the library would read (for every mapping of the same path), and
 * gcswalk_target_mapping_build_id() returns a copy of it. A symboliser
 * made afterwards looks a file that is not on this machine up by this
 * build-id: in the debuginfo path's .build-id folders and, when
 * DEBUGINFOD_URLS is set, from debuginfod servers. GCSWALK_OK,
 * GCSWALK_E_INVALID (NULL, SIZE 0, a bad index), GCSWALK_E_NOMEM.
 */
int gcswalk_target_set_mapping_build_id(gcswalk_target *target, size_t index,
					const unsigned char *id, size_t size);

/*
 * Since 1.2. The architecture of TARGET's threads (a core's ELF machine, a
 * source's machine, this machine's for a live process): GCSWALK_OK,
 * GCSWALK_E_UNSUPPORTED (a target of mappings only: no threads),
 * GCSWALK_E_INVALID (NULL, size too small).
 */
int gcswalk_target_arch(const gcswalk_target *target, struct gcswalk_arch_info *info);

/* Regions that are not file mappings. */
enum gcswalk_region_kind {
	GCSWALK_REGION_GCS = 1,      /* a Guarded Control Stack ("ss" in smaps VmFlags) */
	GCSWALK_REGION_VDSO = 2,     /* [vdso] */
};

struct gcswalk_region {
	size_t size;                 /* caller sets sizeof(struct gcswalk_region) */
	enum gcswalk_region_kind kind;
	uint64_t start, end;         /* [start, end) */
};

/*
 * Live targets: from /proc/PID/smaps, read on the first call and again
 * after a GCSWALK_REFRESH_MAPS. Cores: the segments that hold the threads'
 * GCS pointers, and the vDSO's segment where NT_AUXV (AT_SYSINFO_EHDR)
 * names it. Source and mappings targets have none. In address order.
 * gcswalk_target_region_count() gives 0 when they cannot be read (the
 * detail is in gcswalk_target_errmsg()); gcswalk_target_region() gives
 * GCSWALK_OK or GCSWALK_E_INVALID (bad index, NULL, size too small).
 */
size_t gcswalk_target_region_count(gcswalk_target *target);
int gcswalk_target_region(gcswalk_target *target, size_t index, struct gcswalk_region *region);

/* A function symbol of an ELF image: OFFSET from the start of the image. */
struct gcswalk_elf_symbol {
	uint64_t offset;
	uint64_t size;
	const char *name;
};

/*
 * The vDSO of TARGET: where it is mapped (*START, *IMAGE_SIZE), its
 * function symbols from .dynsym in offset order (*SYMBOLS, *COUNT) and its
 * build-id (*BUILD_ID, *BUILD_ID_SIZE; NULL and 0 if it has none). The image
 * is read from the target's memory (live: the process's, which for a
 * target opened on the caller's own pid with GCSWALK_ATTACH_NONE is the
 * caller's own vDSO; core: its dumped segment) once, and parsed with
 * libelf. Every output pointer may be NULL; what is returned stays valid
 * until gcswalk_target_close(). GCSWALK_OK, GCSWALK_E_NO_SYMBOL (no vDSO
 * known), GCSWALK_E_IO (not readable, not dumped), GCSWALK_E_CORRUPT (not
 * an ELF image), GCSWALK_E_NOMEM, GCSWALK_E_INVALID.
 */
int gcswalk_target_vdso(gcswalk_target *target, uint64_t *start, uint64_t *image_size,
			const struct gcswalk_elf_symbol **symbols, size_t *count,
			const unsigned char **build_id, size_t *build_id_size);

/* ---- /proc facts of live processes ---------------------------------- */

/* The thread ids of PID (/proc/PID/task), ascending: a malloc'd array the
 * caller frees. GCSWALK_OK, GCSWALK_E_NO_PROCESS, GCSWALK_E_PERMISSION,
 * GCSWALK_E_NOMEM, GCSWALK_E_INVALID. */
int gcswalk_proc_threads(int pid, int **tids, size_t *count);

struct gcswalk_proc_thread {
	size_t size;                 /* caller sets sizeof(struct gcswalk_proc_thread) */
	int tgid;
	int tracer_pid;
	char state;                  /* 'R', 'S', 't', 'Z', ... */
	uint64_t cpu_time_ns;        /* utime + stime */
};

/*
 * Thread TID of process PID (/proc/PID/task/TID/stat and status).
 * GCSWALK_E_NO_PROCESS when the thread is gone. A sampler calling it for
 * every thread on every tick passes STAT_FD (initially -1): the library
 * keeps the stat file open there and re-reads it with pread (no open and
 * close per call); the caller close()s it when the thread is done. NULL:
 * open and close each time. tgid and tracer_pid come from status only
 * when STAT_FD is NULL or -1 on entry (once per thread); on later calls
 * with the same STAT_FD they are left as they are in *INFO. Other errors:
 * GCSWALK_E_INVALID (bad argument, INFO->size too small),
 * GCSWALK_E_PERMISSION, GCSWALK_E_IO (a stat line that does not parse).
 */
int gcswalk_proc_thread(int pid, int tid, int *stat_fd, struct gcswalk_proc_thread *info);

/* ---- Sampling a live process again and again ------------------------ */

/* gcswalk_target_refresh() and gcswalk_target_refresh_thread() flags. */
enum gcswalk_refresh_flags {
	/* Re-read the memory map (/proc/PID/maps): after mmap, dlopen, ... */
	GCSWALK_REFRESH_MAPS = 1 << 0,
	/* Re-read thread names (/proc/PID/task/TID/comm). */
	GCSWALK_REFRESH_NAMES = 1 << 1,
};

/*
 * A sampler that stops a process's threads many times a second (gcsprof
 * record) keeps one target opened with GCSWALK_ATTACH_STOPPED and
 * refreshes it for each sample, instead of opening a new one each time,
 * which would list /proc/PID/task and read every thread's registers and
 * name and the whole memory map.
 *
 * gcswalk_target_refresh_thread(): the caller has stopped thread TID of
 * the target's process (again): read its registers and GCS state now (two
 * ptrace requests), and its name too when FLAGS has GCSWALK_REFRESH_NAMES
 * or the target did not know the thread yet (it is added: threads created
 * after the open), and the process's map too when FLAGS has
 * GCSWALK_REFRESH_MAPS. Returns the thread's index (>= 0), or
 * GCSWALK_E_THREAD_GONE, GCSWALK_E_NOT_STOPPED (the caller has not
 * stopped it), GCSWALK_E_NOMEM, GCSWALK_E_INVALID (not a live target
 * opened with GCSWALK_ATTACH_STOPPED, or TID is not a thread of the
 * process). Thread indexes stay valid: threads are never removed; a walk
 * of a thread the caller has since resumed gives GCSWALK_E_NOT_STOPPED.
 *
 * gcswalk_target_refresh(): re-read what FLAGS names, for the whole
 * process: GCSWALK_E_NO_PROCESS when it is gone, GCSWALK_E_NOMEM,
 * GCSWALK_E_INVALID (not a live target). A walk re-reads the map by itself
 * when the GCS pointer lies in no known mapping (the GCS of a new thread).
 *
 * After either call, strings returned before (mapping paths, thread names)
 * stay valid until gcswalk_target_close(); mapping indexes may change
 * with a new map.
 */
int gcswalk_target_refresh_thread(gcswalk_target *target, int tid, unsigned flags);
int gcswalk_target_refresh(gcswalk_target *target, unsigned flags);

/* ---- Targets whose registers and memory the caller supplies --------- */

/*
 * Read SIZE bytes at ADDRESS into BUF; store in *GOT the bytes read before
 * the first unreadable one. Return GCSWALK_OK when all were read,
 * GCSWALK_E_IO when fewer, or another negative gcswalk_error (passed on to
 * the caller of the walk). Called only from the thread using the target,
 * during calls on it (walks, verify, reads, CFI unwinding). A callback that
 * can only say "all or nothing" (got 0 on failure) still gives exact walks:
 * after a short read the library retries the rest page by page.
 */
typedef int (*gcswalk_read_fn)(void *data, uint64_t address, void *buf, size_t size,
			       size_t *got);

/* One thread of a caller-supplied source. */
struct gcswalk_source_thread {
	size_t size;                 /* sizeof(struct gcswalk_source_thread) */
	int tid;
	const char *name;            /* may be NULL; copied */
	int have_registers;          /* pc, lr, sp, fp are valid */
	uint64_t pc, lr, sp, fp;
	int have_gcs;                /* gcs below is valid */
	struct gcswalk_gcs_state gcs;
};

struct gcswalk_source {
	size_t size;                 /* sizeof(struct gcswalk_source) */
	int pid;                     /* what gcswalk_target_pid() returns */
	gcswalk_read_fn read;        /* required */
	void *data;                  /* passed to read */
	/* THREAD_COUNT threads, copied; each item's size field is the
	 * array's stride and must be the same in every item. */
	const struct gcswalk_source_thread *threads;
	size_t thread_count;
	const struct gcswalk_mapping *mappings;      /* copied; may be NULL/0 */
	size_t mapping_count;
	/* Since 1.2: the ELF machine of the registers and memory: 0 (a 1.0
	 * or 1.1 caller) or 183 (EM_AARCH64) for arm64, 243 (EM_RISCV) for
	 * riscv64, whose lr is ra and fp is s0. */
	unsigned machine;
};

/*
 * A target whose registers and memory the caller supplies: a debugger that
 * owns ptrace (the library reads through it), or a test feeding hand-made
 * stacks. The architecture is SOURCE->machine's (arm64 by default), on
 * any host. Threads keep the order
 * given; mappings (file mappings, for symbolisers) likewise. The walk of a
 * GCS without a known mapping reads until the terminator, an unreadable
 * slot, or max_frames. A thread without have_gcs gives
 * GCSWALK_E_NO_GCS_CPU when walked with GCSWALK_METHOD_GCS.
 *
 * Errors: GCSWALK_E_INVALID (NULL, no read callback, a size too small,
 * a mapping without a path or with end <= start), GCSWALK_E_WRONG_ARCH
 * (a machine without a back end), GCSWALK_E_NOMEM. On error *OUT is
 * NULL. ERRMSG is as for gcswalk_target_open_pid().
 */
int gcswalk_target_open_source(gcswalk_target **out, const struct gcswalk_source *source,
			       char **errmsg);

/* ---- Walks ---------------------------------------------------------- */

typedef struct gcswalk_walk gcswalk_walk;
typedef struct gcswalk_symbolizer gcswalk_symbolizer;

enum gcswalk_method {
	GCSWALK_METHOD_GCS = 0,  /* the GCS; GCSWALK_E_GCS_DISABLED when off */
	GCSWALK_METHOD_FP = 1,   /* fallback: frame records from x29 */
	GCSWALK_METHOD_CFI = 2,  /* fallback: libdwfl's CFI unwinder (needs a symboliser) */
};

/* gcswalk_walk_options.flags */
enum gcswalk_walk_flags {
	/* Yield the LR after the PC when it is not the newest GCS entry. */
	GCSWALK_WALK_LR = 1 << 0,
};

struct gcswalk_walk_options {
	size_t size;                 /* sizeof(struct gcswalk_walk_options): the INIT macro sets it */
	enum gcswalk_method method;
	unsigned flags;              /* enum gcswalk_walk_flags */
	/* Most frames yielded (0: 1024). Deeper chains end in GCSWALK_CUT. */
	size_t max_frames;
	/* For GCSWALK_METHOD_CFI: the symboliser whose modules give the CFI. */
	gcswalk_symbolizer *symbolizer;
};
#define GCSWALK_WALK_OPTIONS_INIT \
	{ sizeof(struct gcswalk_walk_options), GCSWALK_METHOD_GCS, 0, 0, NULL }

/*
 * Start a walk of thread INDEX of TARGET. OPTIONS may be NULL (defaults:
 * GCS, 1024 frames). The GCS is read here, in one bulk read bounded by the
 * GCS mapping (live: one process_vm_readv). Errors: GCSWALK_E_INVALID,
 * GCSWALK_E_GCS_DISABLED, GCSWALK_E_NO_GCS_CPU, GCSWALK_E_NO_GCS_NOTE,
 * GCSWALK_E_GCS_NOT_DUMPED, GCSWALK_E_NO_REGISTERS, GCSWALK_E_NOT_STOPPED,
 * GCSWALK_E_THREAD_GONE, GCSWALK_E_NOMEM, GCSWALK_E_DWFL (CFI).
 */
int gcswalk_walk_begin(gcswalk_walk **out, gcswalk_target *target, size_t index,
		       const struct gcswalk_walk_options *options);

/*
 * The next frame, newest first, into *FRAME. Returns GCSWALK_OK (a frame),
 * GCSWALK_END (no more frames: the chain is complete or ended at an
 * UNREADABLE frame), or GCSWALK_CUT (no more frames: max_frames reached and
 * the chain is deeper). After END or CUT further calls return the same.
 */
int gcswalk_walk_next(gcswalk_walk *walk, struct gcswalk_frame *frame);

/* Free a walk. NULL is accepted. */
void gcswalk_walk_free(gcswalk_walk *walk);

/* ---- Checking the stack against the GCS ----------------------------- */

/* What the GCS says about one frame record of the stack. */
enum gcswalk_verdict {
	/* Its return address is on the GCS, in order: the record is sound. */
	GCSWALK_RECORD_MATCHES = 1,
	/* The record the kernel builds in a signal frame, holding the
	 * interrupted context's LR, which may legitimately be stale: not
	 * checked. */
	GCSWALK_RECORD_UNCHECKED,
	/* Its return address is not on the GCS where it should be, while the
	 * GCS holds entries older than it: the stack was overwritten (or the
	 * record is not a frame record). */
	GCSWALK_RECORD_MISMATCH,
	/* Older than the GCS's oldest entry, on the same stack as the
	 * records before it: made before GCS was enabled (a program or thread
	 * that enables GCS part-way). The GCS cannot vouch for it; not a sign
	 * of corruption. */
	GCSWALK_RECORD_OLDER_THAN_GCS,
	/* Past the GCS's oldest entry and on another stack (an unreadable gap
	 * lies between it and the records before it): the thread switched
	 * stacks and GCSs (GCSSS1/GCSSS2, a coroutine) and the chain of
	 * records links back to the stack it left, whose entries are on the
	 * other GCS. Not checked; not a sign of corruption. */
	GCSWALK_RECORD_OTHER_STACK,
	/* The last record of the chain: its return address is on the GCS,
	 * but its saved frame pointer (x29) points below it, to readable
	 * memory that cannot hold an older frame of this stack (stacks grow
	 * down), while the GCS holds older entries: the saved frame pointer
	 * was overwritten, e.g. to point into the heap. */
	GCSWALK_RECORD_BAD_LINK,
	/* Only when the thread died of a GCS check fault (SIGSEGV,
	 * SEGV_CPERR, in a core): the link register, which the refused
	 * return used, is not the newest GCS entry: the saved return address
	 * it was loaded from was overwritten. record is 0 (a register),
	 * return_address the LR, gcs_slot the newest entry's slot. First of
	 * the checks. */
	GCSWALK_REGISTER_LR_MISMATCH,
	/* Only at a GCS check fault: x29 is not 16-byte aligned, so not the
	 * address of a frame record: it was loaded from an overwritten
	 * stack. record is that x29; return_address and gcs_slot are 0. */
	GCSWALK_REGISTER_FP_NOT_RECORD,
};

struct gcswalk_record_check {
	uint64_t record;             /* address of the record {x29, x30}; see the REGISTER verdicts */
	uint64_t return_address;     /* the x30 it holds */
	enum gcswalk_verdict verdict;
	/* MATCHES and BAD_LINK: the GCS slot holding the same return
	 * address; MISMATCH: the slot of the GCS entry the record should have
	 * held (the next one in order after the last record that matched);
	 * else 0. */
	uint64_t gcs_slot;
};

/*
 * Check thread INDEX's frame records (the x29 chain) against its GCS, the
 * basis of stack-corruption reports: each record's return address must
 * appear on the GCS after the previous record's (records may skip GCS
 * entries: leaf functions and code built without frame pointers make
 * none). Records the GCS cannot vouch for are said so, neutrally: the
 * record of a signal frame (UNCHECKED), records older than the GCS or on
 * another stack. Only MISMATCH, BAD_LINK and the two REGISTER verdicts
 * (a core of a thread killed by a GCS check fault) mean the stack was
 * overwritten. Fills CHECKS (room for MAX), innermost first; *COUNT gets their
 * number. Returns GCSWALK_END (every record checked), GCSWALK_CUT (MAX
 * reached), or the errors of gcswalk_walk_begin().
 */
int gcswalk_verify(gcswalk_target *target, size_t index, struct gcswalk_record_check *checks,
		   size_t max, size_t *count);

/* ---- Symbolisation -------------------------------------------------- */

struct gcswalk_symbolizer_options {
	size_t size;                 /* sizeof(struct gcswalk_symbolizer_options): INIT sets it */
	/* Directory prepended to every mapped file's path before it is
	 * opened (e.g. an arm64 root on an x86_64 host); the path itself is
	 * tried if the prefixed one does not exist. NULL: none for a core;
	 * /proc/PID/root for a live process (its own view of the files). */
	const char *sysroot;
	/* Where to look for separate debug files, in libdwfl's
	 * debuginfo_path syntax; NULL: ":.debug:/usr/lib/debug" (with the
	 * sysroot's /usr/lib/debug first when a sysroot is set). Build-id
	 * lookups go to debuginfod servers when DEBUGINFOD_URLS is set. */
	const char *debuginfo_path;
};
#define GCSWALK_SYMBOLIZER_OPTIONS_INIT { sizeof(struct gcswalk_symbolizer_options), NULL, NULL }

/*
 * A symboliser of TARGET's addresses, through libdwfl, with the target's
 * file mappings as modules. OPTIONS may be NULL. TARGET must outlive it.
 * Errors: GCSWALK_E_NOMEM, GCSWALK_E_DWFL, GCSWALK_E_INVALID.
 */
int gcswalk_symbolizer_new(gcswalk_symbolizer **out, gcswalk_target *target,
			   const struct gcswalk_symbolizer_options *options);
void gcswalk_symbolizer_free(gcswalk_symbolizer *symbolizer);

/* One source-level frame of an address. An address inside inlined code has
 * several: the innermost inlined function first, the real function last. */
struct gcswalk_symbol {
	/* Source-level name (DWARF), else the ELF symbol; NULL if unknown. */
	const char *function;
	/* The ELF symbol containing the address (e.g. "f.constprop.0" for a
	 * specialised copy of f); only in the last symbol, NULL if unknown. */
	const char *symbol;
	/* Offset from the start of the (outermost, real) function's symbol;
	 * only in the last symbol of an address, 0 in inlined ones. */
	uint64_t function_offset;
	const char *file;            /* NULL if unknown */
	int line;                    /* 0 if unknown */
	int column;                  /* 0 if unknown */
	int inlined;                 /* 1 for an inlined function */
};

struct gcswalk_location {
	uint64_t address;            /* the address asked about */
	uint64_t lookup_address;     /* address - 4 for return addresses */
	const char *module;          /* mapped file path, NULL if none */
	uint64_t module_bias;        /* load bias of the module */
	const unsigned char *build_id; /* NULL if unknown */
	size_t build_id_size;
	size_t nsymbols;             /* 0 when nothing more is known */
	const struct gcswalk_symbol *symbols;
};

/*
 * Symbolise ADDRESS. RETURN_ADDRESS non-zero looks up ADDRESS - 4 (the
 * call instruction), which is what GCS entries, LR and fallback frames
 * other than the PC need. Results are cached per lookup address: the
 * second lookup of an address costs a hash lookup. *LOCATION points into
 * the cache and stays valid until gcswalk_symbolizer_free().
 *
 * Returns GCSWALK_OK with at least the module, GCSWALK_E_NO_SYMBOL (no
 * module at this address: *LOCATION is still set, with module NULL),
 * GCSWALK_E_NOMEM.
 */
int gcswalk_symbolize(gcswalk_symbolizer *symbolizer, uint64_t address,
		      int return_address, const struct gcswalk_location **location);

/*
 * Since 1.3 (GCSWALK_1.3). Whether RA, the link register of a thread
 * sampled or stopped at PC, holds the caller of PC's function, where
 * functions push their own return address onto the shadow stack
 * (riscv64's sspush ra; gcswalk_arch_info's perf_reg_leaf_caller is not
 * -1): a leaf, or code built without it, has its caller only in RA, and
 * the kernel's perf call chains lack it. 1 when the CFI of PC's function
 * (in the symboliser's modules) says the return address is not saved at
 * PC and RA does not point back into that function (the stale value a
 * call it made leaves); 0 when not; GCSWALK_E_NO_SYMBOL when PC's module
 * or its CFI is unknown; GCSWALK_E_INVALID for a NULL symboliser or RA 0.
 * Walks of riscv64 threads add such a caller as a GCSWALK_FRAME_LR frame.
 */
int gcswalk_symbolizer_leaf_caller(gcswalk_symbolizer *symbolizer, uint64_t pc, uint64_t ra);

/*
 * Whether a frame is code: a place the thread was running or will return
 * to, which a printed chain numbers (#0 the PC) and names. PC, LR, RETURN,
 * SIGRETURN and INTERRUPTED_PC are; SIGNAL_CAP, SWITCH_CAP, TERMINATOR,
 * UNREADABLE and INVALID are not (they mark the chain: a line of their
 * own, no number). 0 for NULL. Since 1.2 (GCSWALK_1.2).
 */
int gcswalk_frame_is_code(const struct gcswalk_frame *frame);

/* Whether a frame's address is a return address, to be looked up at its
 * call (pass it as gcswalk_symbolize()'s RETURN_ADDRESS): the code frames
 * but PC and INTERRUPTED_PC, so LR, RETURN and SIGRETURN. 0 for frames that
 * are not code (before 1.2 it was 1 for them too). */
int gcswalk_frame_is_return(const struct gcswalk_frame *frame);

/* ---- Targets of mappings only (symbolising recorded addresses) ------- */

/*
 * A target with no threads and no memory, only the file mappings of one
 * address space (COUNT items of MAPPINGS, whose paths are copied), for
 * symbolising addresses recorded earlier, possibly on another machine:
 * gcsprof records raw addresses and mappings in a profile and symbolises
 * them later with gcswalk_symbolizer_new() on such a target (the sysroot
 * option finds the files). PID is what gcswalk_target_pid() returns.
 * Reads give GCSWALK_E_IO; there are no threads to walk.
 *
 * Errors: GCSWALK_E_INVALID (NULL OUT, a mapping without a path or with
 * end <= start), GCSWALK_E_NOMEM. On error *OUT is NULL. ERRMSG is as for
 * gcswalk_target_open_pid().
 */
int gcswalk_target_open_mappings(gcswalk_target **out, int pid,
				 const struct gcswalk_mapping *mappings, size_t count,
				 char **errmsg);

#ifdef __cplusplus
}
#endif

#endif /* GCSWALK_H */
