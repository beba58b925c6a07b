/* SPDX-License-Identifier: MIT */
/* JSON pieces shared by the writers that produce JSON (speedscope, the
 * Firefox Profiler). */
#ifndef GCSPROF_WRITE_JSON_H
#define GCSPROF_WRITE_JSON_H

#include <stdio.h>

/*
 * S as a JSON string, quotes included. Names come from ELF files and
 * paths, which promise no encoding: bytes that are not UTF-8 become
 * U+FFFD, so that the output is always valid JSON.
 */
void gp_json_string(FILE *f, const char *s);

#endif
