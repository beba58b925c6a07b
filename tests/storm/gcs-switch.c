// SPDX-License-Identifier: MIT
/*
 * The storm's GCS switches (gcs-switch.h). GCSSS1 is "sys #3, c7, c7, #2"
 * and GCSSS2 "sysl Xt, #3, c7, c7, #3": binutils 2.40 has no mnemonics.
 */
#include "gcs-switch.h"

__asm__(
"	.text\n"
"	.globl	storm_call_on_gcs\n"
"	.type	storm_call_on_gcs, %function\n"
"storm_call_on_gcs:\n"
"	stp	x29, x30, [sp, #-32]!\n"
"	mov	x29, sp\n"
"	str	x19, [sp, #16]\n"
"	sys	#3, c7, c7, #2, x0\n"      /* GCSSS1: to the new GCS */
"	sysl	x19, #3, c7, c7, #3\n"     /* GCSSS2: x19 = the old GCS's cap */
"	mov	x0, x2\n"
"	blr	x1\n"
"	sys	#3, c7, c7, #2, x19\n"     /* and back */
"	sysl	x9, #3, c7, c7, #3\n"
"	ldr	x19, [sp, #16]\n"
"	ldp	x29, x30, [sp], #32\n"
"	ret\n"
"	.globl	storm_call_on_gcs_end\n"
"storm_call_on_gcs_end:\n"
"	.size	storm_call_on_gcs, . - storm_call_on_gcs\n"

"	.globl	storm_window_leaf\n"
"	.type	storm_window_leaf, %function\n"
"storm_window_leaf:\n"
"1:	subs	x0, x0, #1\n"
"	b.hi	1b\n"
"	ret\n"
"	.globl	storm_window_leaf_end\n"
"storm_window_leaf_end:\n"
"	.size	storm_window_leaf, . - storm_window_leaf\n"

"	.globl	storm_window\n"
"	.type	storm_window, %function\n"
"storm_window:\n"
"	stp	x29, x30, [sp, #-32]!\n"
"	mov	x29, sp\n"
"	str	x19, [sp, #16]\n"
"	mov	x19, x2\n"
"	sys	#3, c7, c7, #2, x0\n"      /* GCSSS1: GCSPR_EL0 = the in-progress cap */
"	.globl	storm_window_spin\n"
"storm_window_spin:\n"
"	subs	x1, x1, #1\n"
"	b.hi	storm_window_spin\n"
"	.globl	storm_window_spin_end\n"
"storm_window_spin_end:\n"
"	mov	x0, x19\n"
"	bl	storm_window_leaf\n"         /* pushed on top of the in-progress cap */
"	.globl	storm_window_ret\n"
"storm_window_ret:\n"
"	sysl	x19, #3, c7, c7, #3\n"     /* GCSSS2 */
"	sys	#3, c7, c7, #2, x19\n"     /* back */
"	sysl	x9, #3, c7, c7, #3\n"
"	ldr	x19, [sp, #16]\n"
"	ldp	x29, x30, [sp], #32\n"
"	ret\n"
"	.size	storm_window, . - storm_window\n"
);
