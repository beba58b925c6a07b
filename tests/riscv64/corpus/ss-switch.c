// SPDX-License-Identifier: MIT
/*
 * Healthy, riscv64: the thread moves to a new stack and a new shadow stack
 * made with map_shadow_stack (its restore token at the top), switching
 * the way zicfiss.rst describes (a restore token left on the old shadow
 * stack, the new one's taken in), keeps its frame-record chain linked to
 * the old stack, and abort()s there. The records on the old stack are on
 * the other shadow stack: inspect says "another stack", neutrally.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../corpus/corpus.h"

#define SS_SIZE 65536
#define STACK_SIZE (256 * 1024)

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

NOINLINE void s3(void) { abort(); }
NOINLINE void s2(void) { s3(); KEEP(); }
NOINLINE void on_new_stack(void) { s2(); KEEP(); }

NOINLINE static void switch_away(void)
{
	uint64_t *ss = (uint64_t *)syscall(__NR_map_shadow_stack, 0, SS_SIZE,
					   SHADOW_STACK_SET_TOKEN);
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ss == MAP_FAILED || stack == MAP_FAILED) {
		perror("ss-switch: map_shadow_stack or mmap");
		exit(2);
	}
	/* The token is the top entry. */
	run_on(stack + STACK_SIZE, ss + SS_SIZE / 8 - 1, on_new_stack);
}

int main(void)
{
	switch_away();
	return 1;
}
