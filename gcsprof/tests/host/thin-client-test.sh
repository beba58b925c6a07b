#!/bin/sh
# gcsprof is a client of libgcswalk's public API: ELF, DWARF, /proc and
# HWCAP facts are the library's. Its objects and its binary reference no
# libelf, libdw or libdwfl call, the binary does not link those libraries
# itself, and its sources neither read AT_HWCAP nor build /proc/PID paths.
# TAP.
# Usage: thin-client-test.sh GCSPROF NM READELF SRC_DIR OBJECT...
set -u
gp=$1 nm=$2 readelf=$3 src=$4
shift 4
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
elfutils='^(elf|elf32|elf64|gelf|dwfl|dwarf|dwelf|ebl)_'

check "the objects are given" [ "$#" -gt 0 ]
bad=$(for o in "$@"; do
	"$nm" -u "$o" | awk '{ print $NF }' | grep -E "$elfutils" | sed "s|^|${o##*/}: |"
done)
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'
check "no object of gcsprof calls libelf, libdw or libdwfl ($# objects)" [ -z "$bad" ]

bad=$("$nm" -D --undefined-only "$gp" | awk '{ print $NF }' | sed 's/@.*//' | grep -E "$elfutils" || true)
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'
check "the gcsprof binary imports no libelf, libdw or libdwfl call" [ -z "$bad" ]

needed=$("$readelf" -d "$gp" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | sed 's/^/# needs /'
libgcswalk=$(echo "$needed" | grep -c '^libgcswalk\.so')
elfutils_libs=$(echo "$needed" | grep -cE '^lib(elf|dw)[.-]')
check "the binary links libgcswalk" [ "$libgcswalk" -eq 1 ]
check "and not libelf or libdw itself" [ "$elfutils_libs" -eq 0 ]

# The sources, without comments and string literals (messages may name
# AT_HWCAP or /proc files): no HWCAP reading, no /proc/PID path built.
# (src/ and its folders: src/record/ holds gcsprof record's files.)
sources=$(find "$src" -name '*.[ch]' | sort)
check "the sources are found ($(echo "$sources" | wc -l) files, src/record/ among them)" \
	sh -c "echo '$sources' | grep -q '/record/'"
code=$(for f in $sources; do
	sed -E 's://.*$::; s:/\*.*\*/::g; /^[[:space:]]*\*/d' "$f" | sed "s|^|${f#"$src"/}: |"
done)
hw=$(echo "$code" | sed -E 's/"([^"\\]|\\.)*"/""/g' | grep -E '\bgetauxval\b|sys/auxv\.h|\bAT_HWCAP2?\b' || true)
[ -z "$hw" ] || echo "$hw" | sed 's/^/# /'
check "gcsprof/src reads no AT_HWCAP (gcswalk_system_gcs() does)" [ -z "$hw" ]
# shellcheck disable=SC2086 # file names without spaces, split on purpose
proc=$(grep -nE '/proc/%|/proc/"' $sources || true)
[ -z "$proc" ] || echo "$proc" | sed 's/^/# /'
check "gcsprof/src builds no /proc/PID path (the library's gcswalk_proc_* calls do)" [ -z "$proc" ]
tap_done
