// SPDX-License-Identifier: MIT
/*
 * The arm64 GCS back end: everything that depends on arm64's register
 * layout, GCS entry and cap token formats, and the GCSPR_EL0 register.
 * arch-riscv64.c is the other instance (Zicfiss); arch.c chooses.
 *
 * The core-file parts are plain byte layouts and work on any host; the
 * live (ptrace) and self parts exist only when built for arm64.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "internal.h"

#define GW_EM_AARCH64 183
#define GW_NT_ARM_GCS 0x410

/* Upstream's final ABI; older headers predate it. */
#define GW_HWCAP_GCS (1UL << 32)

/* Cap tokens: the slot's page in the upper bits, the type in the low 12. */
#define GCS_CAP_ADDR_MASK (~0xfffULL)
#define GCS_CAP_TYPE_MASK 0xfffULL
#define GCS_CAP_SIGNAL 0x0ULL
#define GCS_CAP_VALID 0x1ULL

/*
 * struct elf_prstatus for arm64 (64-bit): pr_info (12), pr_cursig (2) and
 * padding (2), pr_sigpend and pr_sighold (8 each), pr_pid at 32, pr_ppid,
 * pr_pgrp, pr_sid, four struct timevals (64), then pr_reg at 112: x0-x30,
 * sp, pc, pstate (34 * 8), then pr_fpvalid.
 */
#define PRSTATUS_PID_OFFSET 32
#define PRSTATUS_REG_OFFSET 112
#define PRSTATUS_NREGS 34
#define REG_FP 29
#define REG_LR 30
#define REG_SP 31
#define REG_PC 32

static void regs_from_array(const uint64_t *r, struct gw_regs *regs)
{
	unsigned i;

	memset(regs, 0, sizeof(*regs));
	regs->valid = 1;
	regs->pc = r[REG_PC];
	regs->lr = r[REG_LR];
	regs->sp = r[REG_SP];
	regs->fp = r[REG_FP];
	/* DWARF numbering on arm64: x0-x30 are 0-30, sp is 31; the PC has
	 * no DWARF number and is passed separately. */
	for (i = 0; i < 32; i++)
		regs->dwarf[i] = r[i];
	regs->ndwarf = 32;
}

static int arm64_parse_prstatus(const void *desc, size_t len, pid_t *pid, struct gw_regs *regs)
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

/* struct user_gcs: features_enabled, features_locked, gcspr_el0. */
static int arm64_parse_gcs(const void *desc, size_t len, struct gcswalk_gcs_state *gcs)
{
	if (len < 24)
		return -1;
	gcs->features_enabled = gw_get64(desc, 0);
	gcs->features_locked = gw_get64(desc, 8);
	gcs->gcspr = gw_get64(desc, 16);
	return 0;
}

static enum gcswalk_frame_kind arm64_classify(uint64_t entry, uint64_t slot)
{
	uint64_t page = slot & GCS_CAP_ADDR_MASK;

	if (entry == 0)
		return GCSWALK_FRAME_TERMINATOR;
	/* A cap token names the page of its own slot: no return address can
	 * (GCS pages are never executable). */
	if ((entry & GCS_CAP_ADDR_MASK) == page) {
		switch (entry & GCS_CAP_TYPE_MASK) {
		case GCS_CAP_SIGNAL:
			return GCSWALK_FRAME_SIGNAL_CAP;
		case GCS_CAP_VALID:
			return GCSWALK_FRAME_SWITCH_CAP;
		default:
			return GCSWALK_FRAME_INVALID;
		}
	}
	/* Instructions are 4-byte aligned: anything else is not a return
	 * address (an in-progress switch token, a cap for another page with
	 * a non-zero type, or garbage). */
	if (entry & 3)
		return GCSWALK_FRAME_INVALID;
	return GCSWALK_FRAME_RETURN;
}

/*
 * User addresses fit in 48 bits (52-bit VAs are only handed out to
 * programs that ask for them with a hint above 48 bits); the bits above
 * hold the PAC of a signed return address. The GCS itself never holds
 * signed addresses.
 */
static uint64_t arm64_strip_pac(uint64_t address)
{
	return address & ((1ULL << 48) - 1);
}

/*
 * The signal frame: struct sigcontext { fault_address; regs[31]; sp; pc;
 * pstate; __reserved[4096] aligned to 16 }, so pc at 264 and the records
 * at 288. The records ({u32 magic, u32 size}, sizes multiples of 16, a 0
 * magic ends them) start with fpsimd_context (528 bytes); gcs_context
 * (32 bytes) holds the GCSPR saved at delivery: the cap's own slot (it
 * points at the cap the kernel pushed), or the slot above it.
 */
#define SC_PC 264
#define SC_RESERVED 288
#define SC_RESERVED_SIZE 4096
#define FPSIMD_MAGIC 0x46508001u
#define FPSIMD_SIZE 528u
#define GCS_MAGIC 0x47435300u
#define GCS_CONTEXT_SIZE 32u

static int arm64_signal_pc(const unsigned char *buf, size_t len, uint64_t base,
			   uint64_t cap_slot, uint64_t *pc, uint64_t *pc_addr)
{
	size_t off, rec, end;

	for (off = SC_RESERVED + (size_t)((16 - (base + SC_RESERVED) % 16) % 16); off + 8 <= len;
	     off += 16) {
		if (gw_get32(buf, off) != FPSIMD_MAGIC || gw_get32(buf, off + 4) != FPSIMD_SIZE)
			continue;
		end = off + SC_RESERVED_SIZE < len ? off + SC_RESERVED_SIZE : len;
		for (rec = off; rec + 8 <= end;) {
			uint32_t magic = gw_get32(buf, rec), size = gw_get32(buf, rec + 4);

			if (magic == 0 || size < 16 || size % 16 || size > end - rec)
				break;
			if (magic == GCS_MAGIC && size >= GCS_CONTEXT_SIZE) {
				uint64_t gcspr = gw_get64(buf, rec + 8);

				if (gcspr != cap_slot && gcspr != cap_slot + 8)
					break;
				*pc = gw_get64(buf, off - SC_RESERVED + SC_PC);
				*pc_addr = base + off - SC_RESERVED + SC_PC;
				return 0;
			}
			rec += size;
		}
	}
	return -1;
}

/*
 * ucontext_t: uc_flags, uc_link, uc_stack (24 bytes), uc_sigmask padded to
 * 128 bytes (kernel and glibc agree), then uc_mcontext, a struct
 * sigcontext aligned to 16: at 176.
 */
#define UC_MCONTEXT 176

static int arm64_self_signal_pc(const void *ucontext, uint64_t cap_slot, uint64_t *pc,
				uint64_t *pc_addr)
{
	const unsigned char *sc = (const unsigned char *)ucontext + UC_MCONTEXT;

	return arm64_signal_pc(sc, SC_RESERVED + SC_RESERVED_SIZE, (uint64_t)(uintptr_t)sc,
			       cap_slot, pc, pc_addr);
}

/* A caller-supplied source gives x29, x30 and sp (DWARF 29-31) only. */
static void arm64_basic_dwarf(struct gw_regs *regs)
{
	regs->dwarf[29] = regs->fp;
	regs->dwarf[30] = regs->lr;
	regs->dwarf[31] = regs->sp;
	regs->ndwarf = 32;
}

/* The RET that GCS refused returned to the LR. */
static uint64_t arm64_checked_return(const struct gw_regs *regs)
{
	return regs->lr;
}

const struct gw_arch gw_arch_arm64 = {
	.name = "arm64",
	.feature = "GCS",
	.elf_machine = GW_EM_AARCH64,
	.note_gcs = GW_NT_ARM_GCS,
	.note_name = "NT_ARM_GCS",
	.gcs_note_size = 24,
	.entry_size = 8,
	/* x29 points at the record {x29, x30}; a signal frame's sigcontext
	 * holds regs[0..30], sp, pc: x29 and x30 24 and 16 bytes below pc. */
	.record_offset = 0,
	.sigframe_fp_offset = -24,
	.sigframe_lr_offset = -16,
	.callee_pushes = 0,
	.perf_reg_shadow_stack = 47,	/* PERF_REG_ARM64_GCSPR */
	.perf_reg_leaf_caller = -1,	/* BL pushes: the caller is on the GCS */
	.parse_prstatus = arm64_parse_prstatus,
	.parse_gcs = arm64_parse_gcs,
	.basic_dwarf = arm64_basic_dwarf,
	/* struct elf_prpsinfo: pr_state, pr_sname, pr_zomb, pr_nice (4),
	 * padding (4), pr_flag (8), pr_uid, pr_gid, pr_pid, pr_ppid,
	 * pr_pgrp, pr_sid (24), then pr_fname[16]. */
	.prpsinfo_fname_offset = 40,
	.prpsinfo_fname_size = 16,
	.prpsinfo_pid_offset = 24,
	.strip_pac = arm64_strip_pac,
	.signal_pc = arm64_signal_pc,
	.self_signal_pc = arm64_self_signal_pc,
	.classify = arm64_classify,
	.checked_return = arm64_checked_return,
};

#if defined(__aarch64__)
#include <sys/auxv.h>

#ifndef NT_PRSTATUS
#define NT_PRSTATUS 1
#endif

const struct gw_arch *gw_arch_native(void)
{
	return &gw_arch_arm64;
}

int gw_arch_ptrace_regs(pid_t tid, struct gw_regs *regs)
{
	uint64_t r[PRSTATUS_NREGS];

	if (gw_ptrace_regset(tid, NT_PRSTATUS, r, sizeof(r)) != 0)
		return -1;
	regs_from_array(r, regs);
	return 0;
}

int gw_arch_ptrace_gcs(pid_t tid, struct gcswalk_gcs_state *gcs)
{
	uint64_t g[3];

	if (gw_ptrace_regset(tid, GW_NT_ARM_GCS, g, sizeof(g)) != 0)
		return -1;
	return arm64_parse_gcs(g, sizeof(g), gcs);
}

int gw_arch_self_supported(void)
{
	return (getauxval(AT_HWCAP) & GW_HWCAP_GCS) != 0;
}

/*
 * The GCS slot holding gcswalk_self()'s return into its caller: inside this
 * function the newest entry (GCSPR_EL0) is our return into gcswalk_self(),
 * the one after it is gcswalk_self()'s own. noinline and the asm keep this
 * a real call, so that the count of entries to skip is exact.
 * GCSPR_EL0 is read by its encoding: binutils 2.40 lacks the name.
 */
__attribute__((noinline)) uint64_t gw_arch_self_gcspr(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, S3_3_C2_C5_1" : "=r"(v) : : "memory");
	return v ? v + 8 : 0;
}
#endif
