/* SPDX-License-Identifier: MIT */
/*
 * Prints its real and effective user ids and spins for a moment: made
 * set-user-ID root by a test, it shows whether it ran with its privilege
 * when started under a recorder that may not trace it.
 */
#include <stdio.h>
#include <unistd.h>

#include "common.h"

int main(void)
{
	spin_for(0.3);
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	return 0;
}
