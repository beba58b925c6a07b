#!/bin/sh
# The ABI, checked: the library exports exactly the version script's
# calls, each versioned with the node the map lists it under (no wildcard
# took anything else), and docs/libgcswalk.md documents every one; the
# soname is libgcswalk.so.MAJOR; gcswalk.pc, the header, gcswalk_version()
# and `gcsprof --version` all say CMake's version.
#
# Usage: abi-check.sh LIB MAP NM READELF VERSION PC ABI_VERSION_PROGRAM DOC GCSPROF
set -u
lib=$1 map=$2 nm=$3 readelf=$4 version=$5 pc=$6 prog=$7 doc=$8 gcsprof=$9
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
work=$(mktemp -d /tmp/gcswalk-abi.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# The names in the map's global: lists (every node), one a line, sorted.
sed -n '/global:/,/local:/p' "$map" | sed -n 's/^[[:space:]]*\(gcswalk_[a-z_0-9]*\);$/\1/p' |
	sort >"$work/map.txt"
"$nm" -D --defined-only "$lib" | awk '$2 ~ /^[TtWDdBbRr]$/ { print $3 }' | sed 's/@.*//' |
	grep -v '^GCSWALK_' | sort >"$work/exported.txt"
if [ -s "$work/map.txt" ] && diff "$work/map.txt" "$work/exported.txt" >"$work/diff.txt"; then
	ok "exported symbols equal the version script's list ($(wc -l <"$work/map.txt") calls)"
else
	show "$work/diff.txt"
	not_ok "exported symbols equal the version script's list"
fi
# Every exported call carries the version node the map lists it under,
# whichever nodes the map has (GCSWALK_1.0, later GCSWALK_1.1, ...).
awk '/^[[:space:]]*GCSWALK_[0-9A-Za-z_.]*[[:space:]]*\{/ { node = $1; sub(/\{.*/, "", node) }
     /^[[:space:]]*gcswalk_[a-z_0-9]*;$/ { name = $1; sub(/;$/, "", name); print name "@@" node }' \
	"$map" | sort >"$work/map-versioned.txt"
"$readelf" --dyn-syms -W "$lib" | awk '$7 != "UND" && $8 ~ /^gcswalk_/ { print $8 }' |
	sort >"$work/versioned.txt"
nodes=$(sed 's/.*@@//' "$work/map-versioned.txt" | sort -u | tr '\n' ' ')
if [ -s "$work/versioned.txt" ] && diff "$work/map-versioned.txt" "$work/versioned.txt" >"$work/bad.txt"; then
	ok "every exported call is versioned with its node in the map ($nodes)"
else
	show "$work/bad.txt"
	not_ok "every exported call is versioned with its node in the map ($nodes)"
fi
# Every call of the map has a row of its own in docs/libgcswalk.md's
# tables: `name(` in a row's first column.
: >"$work/undocumented.txt"
while read -r name; do
	grep -Eq "^\| [^|]*\`$name\(" "$doc" || echo "$name" >>"$work/undocumented.txt"
done <"$work/map.txt"
if [ -s "$work/map.txt" ] && [ ! -s "$work/undocumented.txt" ]; then
	ok "every call of the version script is documented in ${doc##*/}"
else
	show "$work/undocumented.txt"
	not_ok "every call of the version script is documented in ${doc##*/}"
fi
major=${version%%.*}
soname=$("$readelf" -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = "libgcswalk.so.$major" ]; then
	ok "soname is libgcswalk.so.$major"
else
	not_ok "soname is libgcswalk.so.$major (got '$soname')"
fi
pc_version=$(sed -n 's/^Version: //p' "$pc")
if [ "$pc_version" = "$version" ]; then
	ok "gcswalk.pc says Version: $version"
else
	not_ok "gcswalk.pc says Version: $version (got '$pc_version')"
fi
out=$("$prog")
if [ "$out" = "$version $version $version" ]; then
	ok "the header's version string, its numbers and gcswalk_version() are $version"
else
	not_ok "the header's version string, its numbers and gcswalk_version() are $version (got '$out')"
fi
# gcsprof prints its version and the library's: the same one number.
gp_out=$("$gcsprof" --version)
case $gp_out in
"gcsprof $version (libgcswalk $version"*)
	ok "gcsprof --version says gcsprof $version (libgcswalk $version" ;;
*)
	not_ok "gcsprof --version says gcsprof $version (libgcswalk $version (got '$gp_out')" ;;
esac
tap_done
