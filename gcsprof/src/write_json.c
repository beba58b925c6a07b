// SPDX-License-Identifier: MIT
/* JSON strings for the JSON writers: escaped, and valid UTF-8 always. */
#include "write_json.h"

/* Overlong forms, surrogates and code points beyond U+10FFFF are not
 * well-formed. */
size_t gp_utf8_length(const unsigned char *s)
{
	size_t n, i;
	unsigned long cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;   /* also stops at the terminating NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void gp_json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		size_t n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			fputc(*s++, f);
		} else if ((n = gp_utf8_length(s)) != 0) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fputs("\\ufffd", f);
			s++;
		}
	}
	fputc('"', f);
}
