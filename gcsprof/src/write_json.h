/* SPDX-License-Identifier: MIT */
/* Text pieces shared by the writers that produce JSON (speedscope, the
 * Firefox Profiler) or XML (the SVG). */
#ifndef GCSPROF_WRITE_JSON_H
#define GCSPROF_WRITE_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * S as a JSON string, quotes included. Names come from ELF files and
 * paths, which promise no encoding: bytes that are not UTF-8 become
 * U+FFFD, so that the output is always valid JSON.
 */
void gp_json_string(FILE *f, const char *s);

/* The length of the well-formed UTF-8 sequence at S, whose first byte is
 * 0x80 or more, or 0 if it is not one (the SVG writer checks names too). */
size_t gp_utf8_length(const unsigned char *s);

#endif
