/* SPDX-License-Identifier: MIT */
/* The SVG flame graph's inline script (write_svg_script.c). */
#ifndef GCSPROF_WRITE_SVG_H
#define GCSPROF_WRITE_SVG_H

extern const char gp_svg_script[];

#endif
