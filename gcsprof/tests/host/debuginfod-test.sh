#!/bin/sh
# Host test: a profile whose file is not on this machine is symbolised
# through debuginfod by the build-id the profile recorded. The "server" is
# a file:// URL with debuginfod's layout (DIR/buildid/HEX/executable)
# holding a copy of gcsprof itself, named in the profile by a path that
# does not exist. TAP.
# Usage: debuginfod-test.sh GCSPROF NM READELF WORKDIR
set -u
gp=$1 nm=$2 readelf=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"

# The function and the build-id the profile points at.
fn=gp_model_check_files
value=$("$nm" "$gp" | awk -v f="$fn" '$3 == f && ($2 == "T" || $2 == "t") { print $1; exit }')
hex=$("$readelf" -n "$gp" | sed -n 's/^[[:space:]]*Build ID: \([0-9a-f]*\)$/\1/p' | head -n 1)
if [ -z "$value" ] || [ -z "$hex" ]; then
	echo "1..0 # SKIP gcsprof has no symbol $fn or no build-id"
	exit 4
fi
# A PIE's first segment is at 0: loaded at 0x400000, the function is at
# 0x400000 + its value; 4 bytes in, so that the address is inside it.
pc=$(printf '%x' $((0x400000 + 0x$value + 4)))
cat >gone.data <<P
gcsprof-profile 1
hz 99
mode cpu
command gone
mapping 0 42 400000 4400000 0 $hex /no/such/gcsprof-copy
sample 100 42 42 R 0 main - P$pc
end 1000 1 1
P
mkdir -p "server/buildid/$hex" && cp "$gp" "server/buildid/$hex/executable"
export DEBUGINFOD_CACHE_PATH="$work/cache"

unset DEBUGINFOD_URLS
status_is 0 "no DEBUGINFOD_URLS: reported" "$gp" report gone.data -f folded
check "the frame is [file+offset]" grep -q '^\[gcsprof-copy+0x' out.txt
# shellcheck disable=SC2016 # the inner shell expands it
check "the warning says DEBUGINFOD_URLS would fetch it, in one line" sh -c \
	'[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "not on this machine.*set DEBUGINFOD_URLS" err.txt'
show err.txt

DEBUGINFOD_URLS="file://$work/server" status_is 0 "DEBUGINFOD_URLS set: reported" \
	"$gp" report gone.data -f folded
check "the file fetched by its build-id names the function" grep -qx "$fn 1" out.txt
check "and nothing is said to be missing" [ ! -s err.txt ]
show err.txt

# (A cache of its own: the one above has the file now.)
mkdir -p empty
DEBUGINFOD_URLS="file://$work/empty" DEBUGINFOD_CACHE_PATH="$work/cache2" status_is 0 "a server without the file: reported" \
	"$gp" report gone.data -f folded
check "the frame is [file+offset]" grep -q '^\[gcsprof-copy+0x' out.txt
check "the warning says debuginfod did not have it" \
	grep -q "not on this machine.*DEBUGINFOD_URLS is set: debuginfod did not have them" err.txt
tap_done
