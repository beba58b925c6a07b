// SPDX-License-Identifier: MIT
/* Linked with a build-id of known bytes (see CMakeLists.txt) for the
 * facts test; it also runs as a busy thread's body when asked to. */
int main(void)
{
	return 0;
}
