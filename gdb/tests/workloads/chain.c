// SPDX-License-Identifier: MIT
/*
 * A known call chain for the GDB plugin's tests:
 * main -> chain_a -> chain_b -> chain_c -> stop_here, three ways:
 *   gdb-chain break    stop_here() returns at once: a breakpoint target;
 *   gdb-chain wait     stop_here() sleeps until killed: a target to attach to
 *                      (it prints "ready" when it is in place);
 *   gdb-chain signal   chain_c() raises SIGUSR1, whose handler calls
 *                      in_handler(): a breakpoint target inside a signal.
 * Built with -O2 -fomit-frame-pointer, as real programs are: GDB unwinds
 * it with CFI, and its chain must equal the GCS's.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
/* After a call, so that it is not a tail call and its frame stays. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

static const char *mode = "break";
volatile int sink;

NOINLINE void in_handler(int sig)
{
	sink += sig;
	KEEP_FRAME();
}

NOINLINE void handler(int sig)
{
	in_handler(sig);
	KEEP_FRAME();
}

NOINLINE void stop_here(void)
{
	if (strcmp(mode, "wait") == 0) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	sink++;
	KEEP_FRAME();
}

NOINLINE void chain_c(void)
{
	if (strcmp(mode, "signal") == 0)
		raise(SIGUSR1);
	else
		stop_here();
	KEEP_FRAME();
}

NOINLINE void chain_b(void)
{
	chain_c();
	KEEP_FRAME();
}

NOINLINE void chain_a(void)
{
	chain_b();
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		mode = argv[1];
	if (signal(SIGUSR1, handler) == SIG_ERR)
		return 1;
	chain_a();
	printf("chain: done\n");
	return 0;
}
