// SPDX-License-Identifier: MIT
/*
 * The "lo-hi " that starts every line of /proc/PID/maps and of the header
 * lines of smaps, read one character at a time. Both readers of those
 * files use it: proc.c on a whole file, and the self walk (self.c), which
 * runs in signal handlers and so reads /proc/self/maps in small chunks,
 * with no line buffer and no library call. Hence a state machine fed
 * characters, calling nothing at all.
 */
#include "proc.h"

/* The kernel prints each bound as lowercase hex ("%08lx"); more digits
 * than a 64-bit value holds is no address. */
#define MAX_DIGITS 16

enum { IN_LO, IN_HI, IN_REST };

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int gw_maps_head_feed(struct gw_maps_head *h, char c)
{
	int d = hex_digit(c);

	if (c == '\n') {
		*h = (struct gw_maps_head)GW_MAPS_HEAD_INIT;
		return 0;
	}
	switch (h->state) {
	case IN_LO:
		if (d >= 0 && h->digits < MAX_DIGITS) {
			h->lo = h->lo << 4 | (uint64_t)d;
			h->digits++;
		} else {
			h->state = c == '-' && h->digits ? IN_HI : IN_REST;
			h->digits = 0;
		}
		return 0;
	case IN_HI:
		if (d >= 0 && h->digits < MAX_DIGITS) {
			h->hi = h->hi << 4 | (uint64_t)d;
			h->digits++;
			return 0;
		}
		h->state = IN_REST;
		return c == ' ' && h->digits;
	default:
		return 0;       /* the rest of the line is not ours */
	}
}

int gw_maps_find_feed(struct gw_maps_find *f, const char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n && !f->end; i++)
		if (gw_maps_head_feed(&f->head, buf[i]) && f->addr >= f->head.lo &&
		    f->addr < f->head.hi)
			f->end = f->head.hi;
	return f->end != 0;
}
