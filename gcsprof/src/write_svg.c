// SPDX-License-Identifier: MIT
/* An SVG flame graph: the samples' stacks merged into a tree, root at the
 * bottom, each frame as wide as its share of the samples. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct node {
	const char *name;          /* interned */
	uint64_t count;
	struct node *child, *next;
};

static struct node *child_of(struct node *parent, const char *name)
{
	struct node *c, **tail = &parent->child;

	for (c = parent->child; c; c = c->next) {
		if (c->name == name)
			return c;
		tail = &c->next;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		c->name = name;
		*tail = c;
	}
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

static void escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= ' ')
				fputc(*s, f);
		}
	}
}

#define WIDTH 1200.0
#define ROW 16
#define PAD 24

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

static void draw(FILE *f, const struct node *n, double x, unsigned level, unsigned height,
		 uint64_t total)
{
	double w = WIDTH * (double)n->count / (double)total;
	const struct node *c;
	unsigned h = 0;
	double cx = x;

	if (w < 0.3)
		return;
	if (level > 0) {
		double y = PAD + (double)(height - level) * ROW;
		const char *s;

		for (s = n->name; *s; s++)
			h = h * 31 + (unsigned char)*s;
		fprintf(f, "<g><title>");
		escape(f, n->name);
		fprintf(f, " (%" PRIu64 " samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" "
			"width=\"%.1f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			n->count, 100.0 * (double)n->count / (double)total, x + 10, y, w, ROW - 1,
			200 + h % 56, 80 + (h >> 8) % 120, 40 + (h >> 16) % 40);
		if (w > 40) {
			size_t maxc = (size_t)(w / 7), len = strlen(n->name);

			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 13, y + ROW - 4);
			if (len <= maxc)
				escape(f, n->name);
			else if (maxc > 2) {
				char *t = strndup(n->name, maxc - 2);

				if (t)
					escape(f, t);
				fputs("..", f);
				free(t);
			}
			fprintf(f, "</text>");
		}
		fprintf(f, "</g>\n");
	}
	for (c = n->child; c; c = c->next) {
		draw(f, c, cx, level + 1, height, total);
		cx += WIDTH * (double)c->count / (double)total;
	}
}

int gp_write_svg(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	struct node root = { "all", 0, NULL, NULL };
	unsigned height;
	size_t i, j;
	FILE *f = out->fp;

	for (i = 0; i < m->nsamples; i++) {
		const char **names;
		size_t n = gp_sample_stack(m, &m->samples[i], o->per_thread, &names);
		struct node *cur = &root;

		if (n == (size_t)-1) {
			free_tree(root.child);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		root.count += (uint64_t)m->samples[i].count;
		for (j = 0; j < n && cur; j++) {
			cur = child_of(cur, names[j]);
			if (cur)
				cur->count += (uint64_t)m->samples[i].count;
		}
		free(names);
		if (!cur) {
			free_tree(root.child);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
	}
	height = depth_of(&root);
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%u\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" font-size=\"11\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		   "<text x=\"10\" y=\"16\" font-size=\"14\">gcsprof flame graph: %" PRIu64
		   " samples (",
		WIDTH + 20, PAD + height * ROW + 10, root.count);
	escape(f, m->command);
	fprintf(f, ")</text>\n");
	if (root.count)
		draw(f, &root, 0, 0, height, root.count);
	fprintf(f, "</svg>\n");
	free_tree(root.child);
	return 0;
}
