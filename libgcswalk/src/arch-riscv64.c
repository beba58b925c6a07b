// SPDX-License-Identifier: MIT
/*
 * The riscv64 back end: the Zicfiss shadow stack as upstream Linux gives it
 * to user space (7.0; Documentation/arch/riscv/zicfiss.rst), its register
 * layout, tokens, signal frame and the ssp CSR.
 *
 * How riscv's shadow stack differs from arm64's GCS, and what a walk makes
 * of it (docs/libgcswalk.md, "riscv64"):
 *  - ssp points at the newest entry, entries are 8 bytes and older ones
 *    lie above, as on arm64; but the callee's prologue pushes its own
 *    return address (sspush ra), not the call: a function that pushes
 *    nothing (a leaf built without frame pointers, code built without
 *    -fcf-protection, such as glibc) has its caller only in ra.
 *  - There is no top marker: the kernel maps a thread's shadow stack and
 *    points ssp at its end, so a walk ends where the ss mapping (a core's
 *    segment) ends. A 0 entry (a restore token the kernel or a switch
 *    consumed) ends it too.
 *  - One token format, the restore token: the address just above its own
 *    slot. The kernel pushes one on signal delivery and names its slot in
 *    the signal frame (ss_ptr); map_shadow_stack(SHADOW_STACK_SET_TOKEN)
 *    puts one at the top of a new stack, and a program switching stacks
 *    leaves one on the stack it leaves. On a thread's active shadow stack
 *    only a signal's can lie below ssp, so a walk calls it a signal cap.
 *
 * The core-file parts are plain byte layouts and work on any host; the
 * live (ptrace) and self parts exist only when built for riscv64.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "internal.h"

#define GW_EM_RISCV 243
#define GW_NT_RISCV_USER_CFI 0x903

/* struct user_cfi_state { u64 cfi_state; u64 shstk_ptr; }: cfi_state bits. */
#define CFI_LP_EN (1ULL << 0)
#define CFI_LP_LOCK (1ULL << 1)
#define CFI_SS_EN (1ULL << 3)
#define CFI_SS_LOCK (1ULL << 4)
#define CFI_SS_PTR (1ULL << 5)

/*
 * struct elf_prstatus for riscv64: the generic 64-bit layout, pr_pid at 32
 * and pr_reg at 112: struct user_regs_struct, pc then x1-x31 (ra, sp, gp,
 * tp, t0-t2, s0, ...), 32 * 8 bytes.
 */
#define PRSTATUS_PID_OFFSET 32
#define PRSTATUS_REG_OFFSET 112
#define PRSTATUS_NREGS 32
#define REG_PC 0
#define REG_RA 1
#define REG_SP 2
#define REG_T0 5
#define REG_S0 8

static void regs_from_array(const uint64_t *r, struct gw_regs *regs)
{
	unsigned i;

	memset(regs, 0, sizeof(*regs));
	regs->valid = 1;
	regs->pc = r[REG_PC];
	regs->lr = r[REG_RA];
	regs->sp = r[REG_SP];
	regs->fp = r[REG_S0];
	/* DWARF numbering on riscv: x0-x31 are 0-31 (x0 is zero; slot 0 of
	 * user_regs_struct holds the PC, passed separately). */
	for (i = 1; i < PRSTATUS_NREGS; i++)
		regs->dwarf[i] = r[i];
	regs->ndwarf = PRSTATUS_NREGS;
}

static int riscv64_parse_prstatus(const void *desc, size_t len, pid_t *pid,
				  struct gw_regs *regs)
{
	uint64_t r[PRSTATUS_NREGS];
	int32_t p;
	unsigned i;

	if (len < PRSTATUS_REG_OFFSET + sizeof(r))
		return -1;
	memcpy(&p, (const char *)desc + PRSTATUS_PID_OFFSET, sizeof(p));
	for (i = 0; i < PRSTATUS_NREGS; i++)
		r[i] = gw_get64(desc, PRSTATUS_REG_OFFSET + 8 * i);
	*pid = p;
	regs_from_array(r, regs);
	return 0;
}

/* NT_RISCV_USER_CFI in the library's terms: the shadow stack's enable and
 * lock bits as the prctl's PR_SHADOW_STACK_ENABLE, the landing pads' as
 * GCSWALK_LANDING_PADS, and the pointer when the kernel says it is valid. */
static int riscv64_parse_gcs(const void *desc, size_t len, struct gcswalk_gcs_state *gcs)
{
	uint64_t state, ptr;

	if (len < 16)
		return -1;
	state = gw_get64(desc, 0);
	ptr = gw_get64(desc, 8);
	gcs->features_enabled = (state & CFI_SS_EN ? GCSWALK_GCS_ENABLE : 0) |
				(state & CFI_LP_EN ? GCSWALK_LANDING_PADS : 0);
	gcs->features_locked = (state & CFI_SS_LOCK ? GCSWALK_GCS_ENABLE : 0) |
			       (state & CFI_LP_LOCK ? GCSWALK_LANDING_PADS : 0);
	gcs->gcspr = state & CFI_SS_PTR ? ptr : 0;
	return 0;
}

/* A caller-supplied source gives ra, sp and s0 (DWARF 1, 2 and 8) only. */
static void riscv64_basic_dwarf(struct gw_regs *regs)
{
	regs->dwarf[REG_RA] = regs->lr;
	regs->dwarf[REG_SP] = regs->sp;
	regs->dwarf[REG_S0] = regs->fp;
	regs->ndwarf = PRSTATUS_NREGS;
}

/* GCC's epilogues load the saved return address into t0 and check that:
 * `sspopchk t0; jr t0`. At the fault, t0 holds what the stack said. */
static uint64_t riscv64_checked_return(const struct gw_regs *regs)
{
	return regs->dwarf[REG_T0];
}

#define SS_PAGE 4096ULL

static enum gcswalk_frame_kind riscv64_classify(uint64_t entry, uint64_t slot)
{
	/* A consumed restore token (sigreturn and switches swap in 0). */
	if (entry == 0)
		return GCSWALK_FRAME_TERMINATOR;
	/* The restore token: the shadow stack pointer to go back to, the
	 * slot just above its own. */
	if (entry == slot + 8)
		return GCSWALK_FRAME_SIGNAL_CAP;
	/* Another pointer into the shadow stack around it (shadow-stack
	 * pages are never executable: no return address points there), or an
	 * odd address (instructions are 2-byte aligned). */
	if ((entry >= (slot & ~(SS_PAGE - 1)) - SS_PAGE && entry < (slot & ~(SS_PAGE - 1)) + 2 * SS_PAGE) ||
	    (entry & 1))
		return GCSWALK_FRAME_INVALID;
	return GCSWALK_FRAME_RETURN;
}

/* Nothing is signed on riscv. */
static uint64_t riscv64_strip_pac(uint64_t address)
{
	return address;
}

/*
 * The signal frame: struct rt_sigframe { siginfo (128); ucontext }, and in
 * the ucontext at 176 (after uc_flags, uc_link, uc_stack and a 128-byte
 * signal mask, 16-aligned) struct sigcontext: the registers (pc, x1-x31:
 * 256 bytes), then the FP state, overlaid by __riscv_extra_ext_header
 * whose reserved word (at 772) is 0 and whose records start at 776:
 * {u32 magic, u32 size (with the header)}, a 0 magic and size ending
 * them. RISCV_ZICFISS_MAGIC's record holds ss_ptr, the slot of the
 * token the kernel pushed (the vector state's record may come first).
 * Frames are 16-aligned, and so are their sigcontexts.
 */
#define UC_MCONTEXT 176
#define SC_RESERVED 772
#define SC_RECORDS 776
#define SC_FP (8 * REG_S0)
#define SC_LR (8 * REG_RA)
#define ZICFISS_MAGIC 0x9487u
#define ZICFISS_SIZE 16u
#define V_MAGIC 0x53465457u

/* Whether the sigcontext at SC (LEN bytes readable) names CAP_SLOT. */
static int sigcontext_names(const unsigned char *sc, size_t len, uint64_t cap_slot)
{
	size_t rec = SC_RECORDS;

	if (len < SC_RECORDS || gw_get32(sc, SC_RESERVED) != 0)
		return 0;
	while (rec + 8 <= len) {
		uint32_t magic = gw_get32(sc, rec), size = gw_get32(sc, rec + 4);

		if (magic == ZICFISS_MAGIC)
			return size == ZICFISS_SIZE && rec + ZICFISS_SIZE <= len &&
			       gw_get64(sc, rec + 8) == cap_slot;
		/* Only the records the kernel writes; anything else is not a
		 * signal frame. */
		if (magic != V_MAGIC || size < 8 || size > len - rec)
			return 0;
		rec += size;
	}
	return 0;
}

static int riscv64_signal_pc(const unsigned char *buf, size_t len, uint64_t base,
			     uint64_t cap_slot, uint64_t *pc, uint64_t *pc_addr)
{
	size_t off;

	for (off = (size_t)((16 - base % 16) % 16); off + SC_RECORDS + 8 <= len; off += 16) {
		uint32_t first = gw_get32(buf, off + SC_RECORDS);

		if (first != ZICFISS_MAGIC && first != V_MAGIC)
			continue;
		if (!sigcontext_names(buf + off, len - off, cap_slot))
			continue;
		*pc = gw_get64(buf, off);
		*pc_addr = base + off;
		return 0;
	}
	return -1;
}

/* A signal handler's own ucontext_t (glibc's matches the kernel's). The
 * records end within the frame the kernel wrote; bounded anyway. */
#define SC_MAX 8192

static int riscv64_self_signal_pc(const void *ucontext, uint64_t cap_slot, uint64_t *pc,
				  uint64_t *pc_addr)
{
	const unsigned char *sc = (const unsigned char *)ucontext + UC_MCONTEXT;

	if (!sigcontext_names(sc, SC_MAX, cap_slot))
		return -1;
	*pc = gw_get64(sc, 0);
	*pc_addr = (uint64_t)(uintptr_t)sc;
	return 0;
}

const struct gw_arch gw_arch_riscv64 = {
	.name = "riscv64",
	.feature = "Zicfiss",
	.elf_machine = GW_EM_RISCV,
	.note_gcs = GW_NT_RISCV_USER_CFI,
	.note_name = "NT_RISCV_USER_CFI",
	.gcs_note_size = 16,
	.entry_size = 8,
	/* s0 holds the caller's stack pointer; the prologue stores ra at
	 * s0 - 8 and the previous s0 at s0 - 16. The signal frame's
	 * registers follow its PC: ra at +8, s0 at +64. */
	.record_offset = -16,
	.sigframe_fp_offset = SC_FP,
	.sigframe_lr_offset = SC_LR,
	.callee_pushes = 1,
	.perf_reg_shadow_stack = 32,	/* PERF_REG_RISCV_SSP */
	.perf_reg_leaf_caller = 1,	/* PERF_REG_RISCV_RA */
	.parse_prstatus = riscv64_parse_prstatus,
	.parse_gcs = riscv64_parse_gcs,
	.basic_dwarf = riscv64_basic_dwarf,
	/* The generic 64-bit struct elf_prpsinfo, as on arm64. */
	.prpsinfo_fname_offset = 40,
	.prpsinfo_fname_size = 16,
	.prpsinfo_pid_offset = 24,
	.strip_pac = riscv64_strip_pac,
	.signal_pc = riscv64_signal_pc,
	.self_signal_pc = riscv64_self_signal_pc,
	.classify = riscv64_classify,
	.checked_return = riscv64_checked_return,
};

#if defined(__riscv) && __riscv_xlen == 64
#include <sys/prctl.h>

#ifndef NT_PRSTATUS
#define NT_PRSTATUS 1
#endif
/* Upstream's generic prctl (6.13+); older headers predate it. */
#define GW_PR_GET_SHADOW_STACK_STATUS 74

const struct gw_arch *gw_arch_native(void)
{
	return &gw_arch_riscv64;
}

int gw_arch_ptrace_regs(pid_t tid, struct gw_regs *regs)
{
	uint64_t r[PRSTATUS_NREGS];

	if (gw_ptrace_regset(tid, NT_PRSTATUS, r, sizeof(r)) != 0)
		return -1;
	regs_from_array(r, regs);
	return 0;
}

/* EINVAL where the kernel or CPU has no user CFI (the regset refuses). */
int gw_arch_ptrace_gcs(pid_t tid, struct gcswalk_gcs_state *gcs)
{
	uint64_t c[2];

	if (gw_ptrace_regset(tid, GW_NT_RISCV_USER_CFI, c, sizeof(c)) != 0)
		return -1;
	return riscv64_parse_gcs(c, sizeof(c), gcs);
}

/* The kernel answers the status prctl only where the CPU has Zicfiss and
 * user shadow stacks are not turned off (riscv_nousercfi=). */
int gw_arch_self_supported(void)
{
	unsigned long status = 0;

	return prctl(GW_PR_GET_SHADOW_STACK_STATUS, &status, 0UL, 0UL, 0UL) == 0;
}

/*
 * ssp, read with ssrdp, which gives 0 while the shadow stack is off (it
 * is a may-be-operation; callers have checked that the CPU has Zicfiss,
 * hence Zimop). The library is built without -fcf-protection, so none of
 * its own functions has pushed: the newest entry is the caller's or an
 * older function's (self.c adds the caller's return from ra). Built with
 * it, gcswalk_self() pushes that return itself, and self.c sees it there.
 */
__attribute__((noinline)) uint64_t gw_arch_self_gcspr(void)
{
	uint64_t v;

	__asm__ volatile(".option push\n\t.option arch, +zicfiss\n\tssrdp %0\n\t.option pop"
			 : "=r"(v) : : "memory");
	return v;
}
#endif
