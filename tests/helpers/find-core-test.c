// SPDX-License-Identifier: MIT
/*
 * Host test of the shared C test helper find_core() (tests/find-core.h):
 * no core, "core", "core.PID", and names that only start like one.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "find-core.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop

static int touch(const char *dir, const char *name)
{
	char *p;
	int fd;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return -1;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	free(p);
	return fd < 0 ? -1 : close(fd);
}

static int removed(const char *dir, const char *name)
{
	char *p;
	int r;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return -1;
	r = unlink(p);
	free(p);
	return r;
}

/* find_core(DIR) is DIR/WANT (NULL: none). */
static int finds(const char *dir, const char *want)
{
	char *got = find_core(dir), *expect = NULL;
	int ok;

	if (want && asprintf(&expect, "%s/%s", dir, want) < 0)
		expect = NULL;
	ok = want ? got && expect && strcmp(got, expect) == 0 : !got;
	if (!ok)
		tap_diag("find_core: %s, expected %s", got ? got : "none", want ? want : "none");
	free(got);
	free(expect);
	return ok;
}

int main(void)
{
	char dir[] = "/tmp/find-core-test.XXXXXX";

	if (!mkdtemp(dir))
		tap_skip_all("no temporary folder");
	tap_plan(5);
	tap_result(!find_core("/nonexistent/folder"), "a folder that is not there: none");
	tap_result(touch(dir, "corefile") == 0 && touch(dir, "core-dump.txt") == 0 &&
			   finds(dir, NULL),
		   "names that only start like a core: none");
	tap_result(touch(dir, "core.4242") == 0 && finds(dir, "core.4242"), "core.PID");
	tap_result(removed(dir, "core.4242") == 0 && touch(dir, "core") == 0 && finds(dir, "core"),
		   "core");
	tap_result(removed(dir, "core") == 0 && removed(dir, "corefile") == 0 &&
			   removed(dir, "core-dump.txt") == 0 && rmdir(dir) == 0,
		   "the temporary folder removed");
	tap_finish();
}
