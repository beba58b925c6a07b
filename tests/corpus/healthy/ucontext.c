// SPDX-License-Identifier: MIT
/*
 * Healthy: a coroutine made with makecontext on a stack of its own
 * (glibc gives it a GCS of its own too), entered with swapcontext; it
 * yields back once, is resumed, and abort()s three calls deep. Its chain
 * starts on the coroutine's stack: no corruption claimed.
 */
#include <stdlib.h>
#include <ucontext.h>

#include "../corpus.h"

static ucontext_t main_ctx, co_ctx;
static char co_stack[256 * 1024] __attribute__((aligned(16)));

NOINLINE static void co3(void) { abort(); }
NOINLINE static void co2(void) { co3(); KEEP(); }

static void coroutine(void)
{
	if (swapcontext(&co_ctx, &main_ctx) != 0)
		exit(2);
	co2();
	KEEP();
}

int main(void)
{
	if (getcontext(&co_ctx) != 0)
		return 2;
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	if (swapcontext(&main_ctx, &co_ctx) != 0)   /* runs until the yield */
		return 2;
	if (swapcontext(&main_ctx, &co_ctx) != 0)   /* resumed: aborts */
		return 2;
	return 1;
}
