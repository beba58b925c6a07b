#!/bin/sh
# GDB's $ variables and the regexps matching them are single-quoted on purpose.
# shellcheck disable=SC2016
# one_line_each is called through check, which shellcheck cannot see.
# shellcheck disable=SC2317
# The plugin in gdb-multiarch on this host, where no GCS exists: every
# command answers in one line (no process, an x86_64 program, no
# libgcswalk, bad arguments) and no Python traceback ever shows.
# Usage: gdb-errors-test.sh GDB PLUGIN CC WORKDIR
set -u
gdb=$1 plugin=$2 cc=$3 work=$4
. "$(dirname "$0")/../../../tests/tap.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

g() {
	out=$1
	shift
	"$gdb" -q -nx -batch -ex "source $plugin" "$@" >"$out" 2>&1
}
one_line_each() { # one_line_each FILE COUNT PATTERN
	[ "$(grep -c "$3" "$1")" -eq "$2" ] && ! grep -q 'Traceback\|File "' "$1"
}

g none.txt -ex 'gcs bt' -ex 'gcs backtrace 5 -full' -ex 'gcs verify' -ex 'p $_gcs_verify' \
	-ex 'gcs status'
show none.txt
check "no process: one line for each command" one_line_each none.txt 4 '^gcs: no process'
check "\$_gcs_verify is -1" grep -q '^\$1 = -1$' none.txt

printf 'int main(void) { return 0; }\n' >x.c
"$cc" -g -o x x.c || exit 1
g x86.txt -ex 'break main' -ex run -ex 'gcs bt' -ex 'gcs verify' -ex 'gcs status' ./x
show x86.txt
check "an x86_64 program: one line each, neither arm64 nor riscv64" one_line_each x86.txt 3 \
	'^gcs: no shadow stack in the target: it is i386:x86-64, not arm64 (GCS) or riscv64 (Zicfiss)$'

g lib.txt -ex 'set gcs library /nonexistent/libgcswalk.so.1' -ex 'gcs bt' \
	-ex 'set gcs library /bin/sh' -ex 'gcs bt' -ex 'show gcs library'
show lib.txt
check "no libgcswalk: one line" one_line_each lib.txt 1 '^gcs: no libgcswalk at /nonexistent'
check "not a library: one line" one_line_each lib.txt 1 '^gcs: cannot load libgcswalk from /bin/sh'
check "show gcs library names the setting" grep -q '^libgcswalk: /bin/sh (set gcs library)' lib.txt
g default.txt -ex 'show gcs library'
show default.txt
check "by default the library next to the plugin" grep -q '(next to the plugin)$' default.txt
lib=$(sed -n 's/^libgcswalk: \(.*\) (next to the plugin)$/\1/p' default.txt)
check "and it exists ($lib)" [ -f "$lib" ]
GCSWALK_LIBRARY=/nonexistent/x.so g env.txt -ex 'show gcs library' -ex 'gcs bt'
check "GCSWALK_LIBRARY overrides it" grep -q '^libgcswalk: /nonexistent/x.so (GCSWALK_LIBRARY)' env.txt

g args.txt -ex 'gcs bt frobnicate' -ex 'gcs verify 3' -ex 'gcs status now'
show args.txt
check "bad arguments: one usage line each" one_line_each args.txt 3 '^gcs: usage: gcs '
g help.txt -ex 'help gcs' -ex 'help gcs bt' -ex 'help gcs verify' -ex 'help gcs status'
check "help for every command" [ "$(grep -c '^Usage: gcs ' help.txt)" -eq 3 ]
check "help gcs lists them" grep -q 'gcs backtrace, gcs bt' help.txt
g twice.txt -ex "source $plugin" -ex 'gcs bt'
check "sourcing it twice is harmless" one_line_each twice.txt 1 '^gcs: no process'
tap_done
