// SPDX-License-Identifier: MIT
/*
 * verify-core: gcswalk_verify()'s verdicts on every thread of a core, as
 * counts, one line a thread, then the core's verdict:
 *
 *   thread TID: agree A, unchecked U, older O, other S, corrupt C
 *   thread TID: not checked
 *   verdict: corrupt|clean
 *
 * corpus-test.sh reads the same counts out of gcsprof inspect's words
 * and compares: inspect must say what the library says, claim for claim
 * (one implementation, libgcswalk's, under both). Only the public API is
 * used, as any client would.
 *
 * Usage: verify-core CORE    Exit: 0, 1 if the core cannot be opened.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gcswalk.h"

/* Room for every record, grown as gcsprof inspect grows it: a chain of
 * records may be longer than the GCS. */
static int verify_all(gcswalk_target *t, size_t i, struct gcswalk_record_check **checks,
		      size_t *n)
{
	size_t max = 256;
	int ret;

	for (;;) {
		struct gcswalk_record_check *g = realloc(*checks, max * sizeof(*g));

		if (!g)
			return GCSWALK_E_NOMEM;
		*checks = g;
		ret = gcswalk_verify(t, i, *checks, max, n);
		if (ret != GCSWALK_CUT || max >= ((size_t)1 << 22))
			return ret;
		max *= 4;
	}
}

int main(int argc, char **argv)
{
	struct gcswalk_record_check *checks = NULL;
	gcswalk_target *t;
	char *msg = NULL;
	size_t i, k, n;
	int corrupt = 0, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: verify-core CORE\n");
		return 1;
	}
	ret = gcswalk_target_open_core(&t, argv[1], &msg);
	if (ret < 0) {
		fprintf(stderr, "verify-core: %s: %s (%s)\n", argv[1], gcswalk_strerror(ret),
			msg ? msg : "");
		free(msg);
		return 1;
	}
	for (i = 0; i < gcswalk_target_thread_count(t); i++) {
		struct gcswalk_thread_info info;
		size_t count[GCSWALK_REGISTER_FP_NOT_RECORD + 1] = { 0 }, bad;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
			continue;
		ret = verify_all(t, i, &checks, &n);
		if (ret < 0) {
			printf("thread %d: not checked\n", info.tid);
			continue;
		}
		for (k = 0; k < n; k++)
			if (checks[k].verdict >= GCSWALK_RECORD_MATCHES &&
			    checks[k].verdict <= GCSWALK_REGISTER_FP_NOT_RECORD)
				count[checks[k].verdict]++;
		bad = count[GCSWALK_RECORD_MISMATCH] + count[GCSWALK_RECORD_BAD_LINK] +
		      count[GCSWALK_REGISTER_LR_MISMATCH] + count[GCSWALK_REGISTER_FP_NOT_RECORD];
		corrupt |= bad > 0;
		printf("thread %d: agree %zu, unchecked %zu, older %zu, other %zu, corrupt %zu\n",
		       info.tid, count[GCSWALK_RECORD_MATCHES], count[GCSWALK_RECORD_UNCHECKED],
		       count[GCSWALK_RECORD_OLDER_THAN_GCS], count[GCSWALK_RECORD_OTHER_STACK], bad);
	}
	printf("verdict: %s\n", corrupt ? "corrupt" : "clean");
	free(checks);
	gcswalk_target_close(t);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
