// SPDX-License-Identifier: MIT
/* Prints the header's version and the library's (gcswalk_version()), for
 * the ABI check: they must agree with each other and with CMake's. */
#include <stdio.h>
#include <string.h>

#include "gcswalk.h"

int main(void)
{
	char composed[64];

	snprintf(composed, sizeof(composed), "%d.%d.%d", GCSWALK_VERSION_MAJOR,
		 GCSWALK_VERSION_MINOR, GCSWALK_VERSION_PATCH);
	printf("%s %s %s\n", GCSWALK_VERSION_STRING, composed, gcswalk_version());
	return strcmp(composed, GCSWALK_VERSION_STRING) != 0;
}
