// SPDX-License-Identifier: MIT
/* An SVG flame graph: the samples' stacks merged into a tree, root at the
 * bottom, each frame as wide as its share of the samples; interactive
 * through its inline script (write_svg_script.c: zoom, search, details),
 * and still one standalone SVG file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "write_json.h"
#include "write_svg.h"

struct node {
	const char *name;          /* interned */
	uint64_t count;
	struct node *child, *last, *next;   /* children in order of first use */
};

/* The child of PARENT named NAME, made if new; CHILDREN maps (parent,
 * name id) to it, as a node can have thousands of children. */
static struct node *child_of(struct gp_map *children, struct node *parent, const char *name)
{
	uint64_t key = (uintptr_t)parent, id = gp_string_id(name);
	struct node *c = (struct node *)(uintptr_t)gp_map_get(children, key, id, 0);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (gp_map_put(children, key, id, 0, (uintptr_t)c) != 0) {
		free(c);
		return NULL;
	}
	c->name = name;
	if (parent->last)
		parent->last->next = c;
	else
		parent->child = c;
	parent->last = c;
	return c;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free_tree(n->child);
		free(n);
		n = next;
	}
}

/* S as XML character data: markup escaped, control characters dropped,
 * bytes that are not UTF-8 (or not XML characters) as U+FFFD. */
static void escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n;

		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (*s >= ' ' && *s < 0x80)
				fputc(*s, f);
			else if (*s >= 0x80 && (n = gp_utf8_length(s)) != 0 &&
				 !(n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)) {
				fwrite(s, 1, n, f);
				s += n;
				continue;
			} else if (*s >= 0x80)
				fputs("\xef\xbf\xbd", f);
		}
		s++;
	}
}

#define WIDTH 1200.0
#define X0 10
#define ROW 16
#define TOP 44           /* the title, the search box and the zoom reset */
#define MIN_WIDTH 0.1    /* narrower frames are left out */

static unsigned depth_of(const struct node *n)
{
	unsigned d = 0;
	const struct node *c;

	for (c = n->child; c; c = c->next) {
		unsigned x = depth_of(c);

		if (x > d)
			d = x;
	}
	return d + 1;
}

/* Frame N at depth LEVEL (0: the root, at the bottom), its stack covering
 * samples FIRST to FIRST + count: the script zooms by these. */
static void draw(FILE *f, const struct node *n, uint64_t first, unsigned level, unsigned height,
		 uint64_t total)
{
	double w = WIDTH * (double)n->count / (double)total;
	double x = WIDTH * (double)first / (double)total;
	double y = TOP + (double)(height - 1 - level) * ROW;
	const struct node *c;
	const char *s;
	unsigned h = 0;

	if (w < MIN_WIDTH)
		return;
	for (s = n->name; *s; s++)
		h = h * 31 + (unsigned char)*s;
	fprintf(f, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-c=\"%" PRIu64 "\" data-d=\"%u\"><title>",
		first, n->count, level);
	escape(f, n->name);
	fprintf(f, " (%" PRIu64 " samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" "
		   "width=\"%.1f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
		n->count, 100.0 * (double)n->count / (double)total, X0 + x, y, w, ROW - 1,
		200 + h % 56, 80 + (h >> 8) % 120, 40 + (h >> 16) % 40);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", X0 + x + 3, y + ROW - 4);
	if (w > 20) {
		size_t maxc = (size_t)((w - 6) / 7), len = strlen(n->name);

		if (len <= maxc)
			escape(f, n->name);
		else if (maxc > 2) {
			char *t = strndup(n->name, maxc - 2);

			if (t)
				escape(f, t);
			fputs("..", f);
			free(t);
		}
	}
	fprintf(f, "</text></g>\n");
	for (c = n->child; c; c = c->next) {
		draw(f, c, first, level + 1, height, total);
		first += c->count;
	}
}

/* The title, the controls the script drives, and the recording's caveats
 * (NNOTES lines) at the foot, under the details line. */
static void header(FILE *f, const struct gp_model *m, uint64_t total, unsigned height,
		   char **notes, size_t nnotes)
{
	double bottom = TOP + height * ROW;
	size_t i;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" font-size=\"11\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		   "<g id=\"layout\" data-width=\"%.0f\" data-x=\"%d\" data-total=\"%" PRIu64 "\"/>\n"
		   "<text x=\"%d\" y=\"16\" font-size=\"14\">gcsprof flame graph: %" PRIu64
		   " samples (",
		WIDTH + 2 * X0, bottom + 30 + (double)nnotes * ROW, WIDTH, X0, total, X0, total);
	escape(f, m->command);
	fprintf(f, ")</text>\n"
		   "<text id=\"reset\" x=\"%d\" y=\"34\" style=\"display:none;cursor:pointer\" "
		   "fill=\"#06c\">Reset zoom</text>\n"
		   "<rect id=\"search-box\" x=\"%.0f\" y=\"4\" width=\"300\" height=\"18\" rx=\"3\" "
		   "fill=\"#fff\" stroke=\"#888\" style=\"cursor:text\"/>\n"
		   "<text id=\"search-text\" x=\"%.0f\" y=\"17\" style=\"cursor:text\">Search</text>\n"
		   "<text id=\"matched\" x=\"%.0f\" y=\"34\" text-anchor=\"end\"> </text>\n"
		   "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n",
		X0, WIDTH + X0 - 300, WIDTH + X0 - 296, WIDTH + X0, X0, bottom + 18);
	for (i = 0; i < nnotes; i++) {
		fprintf(f, "<text class=\"note\" x=\"%d\" y=\"%.0f\" fill=\"#a00\">", X0,
			bottom + 18 + (double)(i + 1) * ROW);
		escape(f, notes[i]);
		fputs("</text>\n", f);
	}
}

int gp_write_svg(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	struct node root = { "all", 0, NULL, NULL, NULL };
	struct gp_map children = { 0 };
	unsigned height;
	char **notes;
	size_t i, j, nnotes;
	FILE *f = out->fp;

	for (i = 0; i < m->nsamples; i++) {
		const char **names;
		size_t n = o->graph == GP_GRAPH_CALLEE ?
				   gp_sample_stack_inverted(m, &m->samples[i], o->per_thread, &names) :
				   gp_sample_stack(m, &m->samples[i], o->per_thread, &names);
		struct node *cur = &root;

		if (n == (size_t)-1) {
			free_tree(root.child);
			gp_map_free(&children);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		root.count += (uint64_t)m->samples[i].count;
		for (j = 0; j < n && cur; j++) {
			cur = child_of(&children, cur, names[j]);
			if (cur)
				cur->count += (uint64_t)m->samples[i].count;
		}
		free(names);
		if (!cur) {
			free_tree(root.child);
			gp_map_free(&children);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
	}
	gp_map_free(&children);
	nnotes = gp_model_notes(m, &notes);
	if (nnotes == (size_t)-1) {
		free_tree(root.child);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	height = depth_of(&root);
	header(f, m, root.count, height, notes, nnotes);
	gp_model_notes_free(notes, nnotes);
	if (root.count)
		draw(f, &root, 0, 0, height, root.count);
	/* Last, so that every element it looks for exists when it runs. */
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		gp_svg_script);
	free_tree(root.child);
	return 0;
}
