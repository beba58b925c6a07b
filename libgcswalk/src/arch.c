// SPDX-License-Identifier: MIT
/*
 * The architecture table: a target's back end is chosen by its ELF machine
 * (a core's header, a caller-supplied source's field, this host's for live
 * targets), never by the build, so that one build reads every
 * architecture's cores. The native calls (ptrace, the calling thread) come
 * from the file of the architecture the library is built for; on any other
 * host they are these refusals.
 */
#include <errno.h>

#include "internal.h"

static const struct gw_arch *const arches[] = { &gw_arch_arm64, &gw_arch_riscv64 };

static int arch_info(const struct gw_arch *arch, struct gcswalk_arch_info *info)
{
	struct gcswalk_arch_info a = {
		sizeof(a), arch->name, arch->feature, arch->elf_machine,
		arch->perf_reg_shadow_stack, arch->perf_reg_leaf_caller,
	};

	return gw_sized_out(info, info->size, &a, sizeof(a), GW_ARCH_INFO_SIZE_1_2);
}

int gcswalk_system_arch(struct gcswalk_arch_info *info)
{
	if (!info || info->size < GW_ARCH_INFO_SIZE_1_2)
		return GCSWALK_E_INVALID;
	if (!gw_arch_native())
		return GCSWALK_E_UNSUPPORTED;
	return arch_info(gw_arch_native(), info);
}

int gcswalk_target_arch(const gcswalk_target *t, struct gcswalk_arch_info *info)
{
	if (!t || !info || info->size < GW_ARCH_INFO_SIZE_1_2)
		return GCSWALK_E_INVALID;
	if (!t->arch)
		return GCSWALK_E_UNSUPPORTED;
	return arch_info(t->arch, info);
}

const struct gw_arch *gw_arch_for_machine(unsigned elf_machine)
{
	size_t i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i]->elf_machine == elf_machine)
			return arches[i];
	return NULL;
}

#if defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64)
#include <sys/ptrace.h>
#include <sys/uio.h>

int gw_ptrace_regset(pid_t tid, unsigned type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)type, &iov) != 0)
		return -1;
	if (iov.iov_len < len) {
		errno = EIO;
		return -1;
	}
	return 0;
}
#else
const struct gw_arch *gw_arch_native(void)
{
	return NULL;
}

int gw_arch_ptrace_regs(pid_t tid, struct gw_regs *regs)
{
	(void)tid;
	(void)regs;
	errno = ENOSYS;
	return -1;
}

int gw_arch_ptrace_gcs(pid_t tid, struct gcswalk_gcs_state *gcs)
{
	(void)tid;
	(void)gcs;
	errno = ENOSYS;
	return -1;
}

int gw_arch_self_supported(void)
{
	return 0;
}

uint64_t gw_arch_self_gcspr(void)
{
	return 0;
}
#endif
