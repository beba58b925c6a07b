#!/bin/sh
# The 1.0 ABI, checked: the library exports exactly the version script's
# calls, all in GCSWALK_1.0 (no wildcard took anything else); the soname is
# libgcswalk.so.MAJOR; gcswalk.pc, the header and gcswalk_version() all say
# CMake's version.
#
# Usage: abi-check.sh LIB MAP NM READELF VERSION PC ABI_VERSION_PROGRAM
set -u
lib=$1 map=$2 nm=$3 readelf=$4 version=$5 pc=$6 prog=$7
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
# Every exported call carries a version node of the map.
"$readelf" --dyn-syms -W "$lib" | awk '$7 != "UND" && $8 ~ /^gcswalk_/ { print $8 }' >"$work/versioned.txt"
unversioned=$(grep -cv '@@GCSWALK_1\.0$' "$work/versioned.txt")
if [ -s "$work/versioned.txt" ] && [ "$unversioned" -eq 0 ]; then
	ok "every exported call is versioned GCSWALK_1.0"
else
	grep -v '@@GCSWALK_1\.0$' "$work/versioned.txt" >"$work/bad.txt"
	show "$work/bad.txt"
	not_ok "every exported call is versioned GCSWALK_1.0"
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
tap_done
