// SPDX-License-Identifier: MIT
/*
 * Healthy: the thread moves to a new stack and a new GCS made with
 * map_shadow_stack (a cap token and an end marker), switching GCS with
 * GCSSS1/GCSSS2 the way a coroutine library does, keeps its frame-record
 * chain linked to the old stack, and abort()s there. The records on the
 * old stack are on the other GCS: inspect says "another stack", neutrally.
 *
 * Built for riscv64 too (tests/riscv64): there the new shadow stack has
 * only its restore token at the top (riscv has no end marker), and the
 * switch is the one zicfiss.rst describes (a restore token left on the old
 * shadow stack, the new one's taken in).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../corpus.h"

#define GCS_SIZE 65536
#define STACK_SIZE (256 * 1024)

#if defined(__riscv)
/* The restore token is the top entry. */
#define GCS_FLAGS SHADOW_STACK_SET_TOKEN
#define CAP_SLOT(gcs) ((gcs) + GCS_SIZE / 8 - 1)

/*
 * run_on(sp, token, fn): switch the shadow stack to the one whose restore
 * token is at TOKEN, then the stack to SP, and call FN there. Its frame
 * record (below s0) links back to the old stack. FN must not return.
 */
void run_on(void *sp, uint64_t *token, void (*fn)(void));
__asm__(".text\n"
	".option push\n"
	".option arch, +zicfiss\n"
	".global run_on\n"
	".type run_on, %function\n"
	"run_on:\n"
	"	addi sp, sp, -16\n"
	"	sd ra, 8(sp)\n"
	"	sd s0, 0(sp)\n"
	"	addi s0, sp, 16\n"
	"	ssrdp t0\n"                     /* leave a token: t0 - 8 holds t0 */
	"	addi t1, t0, -8\n"
	"	csrw ssp, t1\n"
	"	ssamoswap.d t2, t0, (t1)\n"
	"	ssamoswap.d t2, zero, (a1)\n"  /* take the new stack's token */
	"	addi t3, a1, 8\n"
	"	bne t2, t3, 1f\n"
	"	csrw ssp, t2\n"
	"	mv sp, a0\n"
	"	jalr a2\n"
	"1:	ebreak\n"
	".size run_on, .-run_on\n"
	".option pop\n");
#else
/* The marker is the last entry, the cap token the one below it. */
#define GCS_FLAGS (SHADOW_STACK_SET_TOKEN | SHADOW_STACK_SET_MARKER)
#define CAP_SLOT(gcs) ((gcs) + GCS_SIZE / 8 - 2)

/*
 * run_on(sp, cap, fn): switch the GCS to the one whose cap token is at CAP
 * (GCSSS1 takes it in, GCSSS2 leaves a cap token on the old GCS), then the
 * stack to SP, and call FN there. Its frame record links back to the old
 * stack. FN must not return.
 */
void run_on(void *sp, uint64_t *cap, void (*fn)(void));
__asm__(".text\n"
	".global run_on\n"
	".type run_on, %function\n"
	"run_on:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	"	sys #3, c7, c7, #2, x1\n"      /* GCSSS1 x1 */
	"	sysl x3, #3, c7, c7, #3\n"     /* GCSSS2 x3 */
	"	mov sp, x0\n"
	"	blr x2\n"
	"	brk #0\n"
	".size run_on, .-run_on\n");
#endif

NOINLINE void s3(void) { abort(); }
NOINLINE void s2(void) { s3(); KEEP(); }
NOINLINE void on_new_stack(void) { s2(); KEEP(); }

NOINLINE static void switch_away(void)
{
	uint64_t *gcs = (uint64_t *)syscall(__NR_map_shadow_stack, 0, GCS_SIZE, GCS_FLAGS);
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (gcs == MAP_FAILED || stack == MAP_FAILED) {
		perror("gcs-switch: map_shadow_stack or mmap");
		exit(2);
	}
	run_on(stack + STACK_SIZE, CAP_SLOT(gcs), on_new_stack);
}

int main(void)
{
	switch_away();
	return 1;
}
