#!/bin/sh
# The plugin as installed: `cmake --install` of this build into a fresh
# prefix, then PREFIX/share/gcsprof/gdb/gcs.py sourced in gdb-multiarch.
# It must load its modules from the prefix, find the libgcswalk installed
# next to it (show gcs library), load that one (mapped in GDB), and do
# the same from wherever the prefix is moved. TAP.
# Usage: gdb-install-test.sh CMAKE BUILD_DIR GDB WORKDIR
set -u
cmake=$1 build=$2 gdb=$3 work=$4
. "$(dirname "$0")/../../../tests/tap.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

status_is 0 "cmake --install into a fresh prefix" "$cmake" --install "$build" --prefix "$work/prefix"
plugin=share/gcsprof/gdb/gcs.py
check "the plugin is installed ($plugin)" [ -f "prefix/$plugin" ]

# The installed plugin in PREFIX: what it says, which modules and which
# library GDB has loaded (its own map), and that a command runs.
installed() { # installed PREFIX OUT
	"$gdb" -q -nx -batch -ex "source $1/$plugin" -ex 'show gcs library' -ex 'gcs bt' \
		-ex 'python import gcsgdb; print("modules: " + gcsgdb.__file__)' \
		-ex 'python print("".join("mapped: " + l for l in open("/proc/self/maps") if "libgcswalk" in l))' \
		>"$2" 2>&1
}
for where in prefix moved; do
	if [ $where = moved ]; then
		# Relocated as a package manager or a user might: it must not
		# fall back on the build tree or the old prefix.
		mv prefix moved
	fi
	p=$work/$where
	installed "$p" $where.txt
	show $where.txt
	lib=$(sed -n 's/^libgcswalk: \(.*\) (next to the plugin)$/\1/p' $where.txt)
	check "$where: show gcs library names the library next to the plugin, in the prefix ($lib)" \
		sh -c "case '$lib' in '$p'/lib*/libgcswalk.so.[0-9]*) [ -f '$lib' ] ;; *) exit 1 ;; esac"
	check "$where: the plugin's modules come from the prefix" \
		grep -q "^modules: $p/share/gcsprof/gdb/gcsgdb/__init__.py\$" $where.txt
	check "$where: a command runs, answering in one line" grep -qx 'gcs: no process: .*' $where.txt
	check "$where: GDB has the installed library loaded, and no other copy" \
		sh -c "grep -q '^mapped: .* $p/lib[^ ]*/libgcswalk.so' $where.txt &&
			! grep '^mapped: ' $where.txt | grep -v ' $p/lib' | grep -q ."
	check "$where: no Python traceback" sh -c "! grep -q 'Traceback\\|File \"' $where.txt"
done
tap_done
