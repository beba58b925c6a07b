#!/bin/sh
# libgcswalk's files use each other in one direction only (docs/libgcswalk.md,
# "Inside"): the cross-file call graph, derived from the objects (for each
# object, the gw_ and gcswalk_ symbols it uses that another object defines),
# must have no cycle. The graph is printed as TAP comments. TAP.
#
# Usage: layering-check.sh NM OBJECT...   (the library's objects)
set -u
nm=$1
shift
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
# shellcheck source=../../../tests/layering.sh
. "$(dirname "$0")/../../../tests/layering.sh"
work=$(mktemp -d /tmp/gcswalk-layering.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# name OBJECT (called by layering_edges): the source file's name without .c.o (core, live, ...).
# shellcheck disable=SC2317
name() { n=${1##*/}; echo "${n%.c.o}"; }

layering_self_test "$work/cycle.txt"
check "the objects define the library's calls ($# objects)" \
	layering_edges "$nm" name '^(gw_|gcswalk_)' "$work/edges.txt" "$@"
layering_print "$work/edges.txt"
cycle=$(layering_loop "$work/edges.txt")
[ -z "$cycle" ] || echo "# a cycle through: $cycle"
check "the files of libgcswalk/src call each other without a cycle" [ -z "$cycle" ]
tap_done
