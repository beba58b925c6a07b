// SPDX-License-Identifier: MIT
/*
 * The instructions that a uprobe cannot single-step and the kernel
 * simulates instead (BL, BLR, RET), at labels of their own so that a
 * probe can be put on each, and two returns the GCS does not hold.
 * Called from uprobe-target.c. File-scope assembly in C, so that the
 * build needs no assembler language of its own.
 */

__asm__(
	".text\n"
	"\t.p2align 2\n"

	/* unsigned long site_call_bl(unsigned long x): leaf(x) through a BL. */
	"\t.globl	site_call_bl\n"
	"\t.type	site_call_bl, %function\n"
	"site_call_bl:\n"
	"\tstr	x30, [sp, #-16]!\n"
	"\t.globl	site_bl\n"
	"site_bl:\n"
	"\tbl	leaf\n"
	"\tldr	x30, [sp], #16\n"
	"\t.globl	site_ret\n"
	"site_ret:\n"
	"\tret\n"
	"\t.size	site_call_bl, . - site_call_bl\n"

	/*
	 * unsigned long site_call_blr(unsigned long x, unsigned long (*f)(unsigned long)):
	 * f(x) through a BLR.
	 */
	"\t.globl	site_call_blr\n"
	"\t.type	site_call_blr, %function\n"
	"site_call_blr:\n"
	"\tstr	x30, [sp, #-16]!\n"
	"\t.globl	site_blr\n"
	"site_blr:\n"
	"\tblr	x1\n"
	"\tldr	x30, [sp], #16\n"
	"\tret\n"
	"\t.size	site_call_blr, . - site_call_blr\n"

	/*
	 * void bad_return(void *to): return to TO instead of the caller, which
	 * the GCS does not hold: SEGV_CPERR at site_bad_ret.
	 */
	"\t.globl	bad_return\n"
	"\t.type	bad_return, %function\n"
	"bad_return:\n"
	"\tmov	x30, x0\n"
	"\t.globl	site_bad_ret\n"
	"site_bad_ret:\n"
	"\tret\n"
	"\t.size	bad_return, . - bad_return\n"

	/*
	 * void hijacked_bad_return(void *to): the same in a function of its own,
	 * for a uretprobe at its entry: the return address it discards is then
	 * the uretprobe's trampoline, and the GCS entry it fails against too.
	 */
	"\t.globl	hijacked_bad_return\n"
	"\t.type	hijacked_bad_return, %function\n"
	"hijacked_bad_return:\n"
	"\tmov	x30, x0\n"
	"\t.globl	site_hijacked_ret\n"
	"site_hijacked_ret:\n"
	"\tret\n"
	"\t.size	hijacked_bad_return, . - hijacked_bad_return\n"
);
