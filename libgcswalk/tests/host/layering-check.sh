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
work=$(mktemp -d /tmp/gcswalk-layering.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# name OBJECT: the source file's name without .c.o (core, live, ...).
name() { n=${1##*/}; echo "${n%.c.o}"; }

# loop EDGES: the files of a cycle in the "user used" pairs of EDGES, or
# nothing when there is none (tsort says which files form a loop).
loop() {
	awk '{ print $1, $2 }' "$1" | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p' |
		grep -v 'input contains a loop' | tr '\n' ' '
}

# The check itself, on a graph that has a cycle: it must find it.
printf 'walk fallback\nfallback symbol\nsymbol walk\nsymbol target\n' >"$work/cycle.txt"
check "a cycle is found where there is one (walk -> fallback -> symbol -> walk)" \
	[ -n "$(loop "$work/cycle.txt")" ]

: >"$work/defined.txt"
: >"$work/used.txt"
for o in "$@"; do
	f=$(name "$o")
	"$nm" --defined-only "$o" | awk -v f="$f" '$2 ~ /^[TDBR]$/ && $3 ~ /^(gw_|gcswalk_)/ { print $3, f }' \
		>>"$work/defined.txt"
	"$nm" -u "$o" | awk -v f="$f" '$NF ~ /^(gw_|gcswalk_)/ { print f, $NF }' >>"$work/used.txt"
done
check "the objects define the library's calls ($# objects)" [ -s "$work/defined.txt" ]
# user used symbol, for every symbol another object defines.
awk 'NR == FNR { by[$1] = $2; next } ($2 in by) && by[$2] != $1 { print $1, by[$2], $2 }' \
	"$work/defined.txt" "$work/used.txt" | sort -u >"$work/edges.txt"
awk '{ e[$1 " -> " $2] = e[$1 " -> " $2] " " $3 } END { for (k in e) print k ":" e[k] }' \
	"$work/edges.txt" | sort | sed 's/^/# /'
cycle=$(loop "$work/edges.txt")
[ -z "$cycle" ] || echo "# a cycle through: $cycle"
check "the files of libgcswalk/src call each other without a cycle" [ -z "$cycle" ]
tap_done
