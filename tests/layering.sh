# shellcheck shell=sh
# The cross-file call graph of a program or library, derived from its
# objects, for the layering tests (libgcswalk's and gcsprof's). Source it
# (after tap.sh), then:
#   layering_edges NM NAMEFN PATTERN OUT OBJECT...
#       OUT gets one line "user used symbol" for every global symbol
#       matching the awk regex PATTERN that object "user" uses and
#       another object "used" defines; NAMEFN is a function that prints
#       an object's short name (its source file, e.g. record/perf_ring).
#   layering_loop EDGES
#       the files of a cycle among the "user used" pairs of EDGES, or
#       nothing when there is none (tsort says which files form a loop).
#   layering_print EDGES
#       the graph as TAP comments, one line per file: "A -> B: symbols".

layering_edges() {
	le_nm=$1 le_name=$2 le_pattern=$3 le_out=$4
	shift 4
	: >"$le_out.defined"
	: >"$le_out.used"
	for le_o in "$@"; do
		le_f=$("$le_name" "$le_o")
		"$le_nm" --defined-only "$le_o" |
			awk -v f="$le_f" -v p="$le_pattern" '$2 ~ /^[TDBR]$/ && $3 ~ p { print $3, f }' \
			>>"$le_out.defined"
		"$le_nm" -u "$le_o" | awk -v f="$le_f" -v p="$le_pattern" '$NF ~ p { print f, $NF }' \
			>>"$le_out.used"
	done
	awk 'NR == FNR { by[$1] = $2; next } ($2 in by) && by[$2] != $1 { print $1, by[$2], $2 }' \
		"$le_out.defined" "$le_out.used" | sort -u >"$le_out"
	[ -s "$le_out.defined" ]
}

layering_loop() {
	awk '{ print $1, $2 }' "$1" | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p' |
		grep -v 'input contains a loop' | tr '\n' ' '
}

layering_print() {
	awk '{ e[$1 " -> " $2] = e[$1 " -> " $2] " " $3 } END { for (k in e) print k ":" e[k] }' \
		"$1" | sort | sed 's/^/# /'
}

# The check itself, on a graph that has a cycle: it must find it.
layering_self_test() {
	printf 'walk fallback x\nfallback symbol x\nsymbol walk x\nsymbol target x\n' >"$1"
	check "a cycle is found where there is one (walk -> fallback -> symbol -> walk)" \
		[ -n "$(layering_loop "$1")" ]
}
