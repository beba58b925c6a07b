#!/bin/sh
# Host test of the shared shell test helpers in tests/tap.sh: first_core,
# and status_is and check counting failures into tap_done's status (run in
# a child shell whose TAP this test reads). TAP.
# Usage: tap-test.sh WORKDIR
set -u
work=$1
tap=$(cd "$(dirname "$0")/.." && pwd)/tap.sh
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../tap.sh
. "$tap"

check "first_core: none in an empty folder" [ -z "$(first_core)" ]
: >corefile
: >core-dump.txt
check "first_core: names that only start like a core are not one" [ -z "$(first_core)" ]
: >core.4242
check "first_core: core.PID" [ "$(first_core)" = core.4242 ]
: >core
check "first_core: core first" [ "$(first_core)" = core ]

# A child stream with one failure: its own numbering, a plan, status 1.
sh -c '. "$1"; status_is 0 a true; status_is 3 b sh -c "exit 2"; check c false; skip d; tap_done' \
	child "$tap" >child.txt 2>&1
rc=$?
check "a failing child exits 1" [ "$rc" -eq 1 ]
# shellcheck disable=SC2016 # the inner shell expands it
check "its results, numbered, with the plan at the end" sh -c '
	grep -qx "ok 1 - a (status 0)" child.txt &&
	grep -qx "not ok 2 - b (status 2, expected 3)" child.txt &&
	grep -qx "not ok 3 - c" child.txt && grep -qx "ok 4 # SKIP d" child.txt &&
	[ "$(tail -n 2 child.txt | head -n 1)" = "1..4" ]'
sh -c '. "$1"; ok a; skip b; tap_done' child "$tap" >child.txt 2>&1
check "a passing child exits 0" [ $? -eq 0 ]
tap_done
