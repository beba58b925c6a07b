/* SPDX-License-Identifier: MIT */
/*
 * A stdio stream that writes gzip (zlib's deflate, in gzip's wrapper): the
 * profile's writers print into it as into any FILE. Each time stdio hands
 * its buffer over (when full, or at fflush) the data is deflated with a
 * sync flush, so that what is on disk after an fflush always inflates to
 * every byte written before it: a recording cut short is still read up to
 * its last flush. fclose writes gzip's trailer and closes the file.
 */
#ifndef GCSPROF_GZIP_FILE_H
#define GCSPROF_GZIP_FILE_H

#include <stdio.h>

/* Create (or truncate) PATH for writing gzip at LEVEL (zlib's 1-9). NULL
 * with errno set on failure. */
FILE *gp_gzip_create(const char *path, int level);

#endif
