// SPDX-License-Identifier: MIT
/* The library's version at run time: the header's a caller was built
 * with may be older (GCSWALK_VERSION_STRING). */
#include "internal.h"

const char *gcswalk_version(void)
{
	return GCSWALK_VERSION_STRING;
}
