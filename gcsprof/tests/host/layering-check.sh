#!/bin/sh
# gcsprof's files use each other in one direction only (docs/gcsprof-inside.md):
# the cross-file graph, derived from the objects (for each object, the
# global symbols it uses that another object defines), has no cycle; the
# recorder's two methods (src/record/perf_*, src/record/ptrace_*) never
# use each other; the recorder's shared files below them never use a
# method or the command above (nothing calls back up); and one file
# alone, record/profile_out, writes into the profile (profile.c's
# gp_profile_write_* serialisers). The graph is printed as TAP comments.
# TAP.
#
# Usage: layering-check.sh NM OBJECT...   (gcsprof's objects)
set -u
nm=$1
shift
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
# shellcheck source=../../../tests/layering.sh
. "$(dirname "$0")/../../../tests/layering.sh"
work=$(mktemp -d /tmp/gcsprof-layering.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# name OBJECT (called by layering_edges): the source file's path under src/ without .c.o
# (record/perf_ring, report, ...).
# shellcheck disable=SC2317
name() { n=${1##*/src/}; echo "${n%.c.o}"; }

# edges_where USER_RE USED_RE: the edges from files matching USER_RE to
# files matching USED_RE (extended regular expressions on whole names).
edges_where() {
	awk -v a="^($1)\$" -v b="^($2)\$" '$1 ~ a && $2 ~ b' "$work/edges.txt"
}

# expect_none DESC EDGES: a check that EDGES is empty, listing them if not.
expect_none() {
	[ -z "$2" ] || printf '%s\n' "$2" | sed 's/^/# not allowed: /'
	check "$1" [ -z "$2" ]
}

layering_self_test "$work/cycle.txt"
check "the objects define gcsprof's calls ($# objects)" \
	layering_edges "$nm" name '.' "$work/edges.txt" "$@"
check "the recorder's method files are among them" grep -q ' record/ptrace_method$' \
	"$work/edges.txt.defined"
layering_print "$work/edges.txt"
cycle=$(layering_loop "$work/edges.txt")
[ -z "$cycle" ] || echo "# a cycle through: $cycle"
check "the files of gcsprof/src call each other without a cycle" [ -z "$cycle" ]

# The check of a rule, on a made-up edge that breaks it: it must see it.
printf 'record/perf_sample record/ptrace_process pt_process_open\n' >"$work/bad.txt"
check "a method file calling into the other method is seen" \
	[ -n "$(awk '$1 ~ /^record\/perf_/ && $2 ~ /^record\/ptrace_/' "$work/bad.txt")" ]

expect_none "the perf method's files use nothing of the ptrace method's" \
	"$(edges_where 'record/perf_.*' 'record/ptrace_.*')"
expect_none "the ptrace method's files use nothing of the perf method's" \
	"$(edges_where 'record/ptrace_.*' 'record/perf_.*')"
shared='record/(target|maps|profile_out|vdso|signals|child|status_line)'
expect_none "the recorder's shared files call nothing of the methods or the command" \
	"$(edges_where "$shared" 'record/(perf_.*|ptrace_.*|command)')"
expect_none "record/profile_out alone writes into the profile" \
	"$(awk '$3 ~ /^gp_profile_write_/ && $1 ~ /^record\// && $1 != "record/profile_out"' \
		"$work/edges.txt")"
tap_done
