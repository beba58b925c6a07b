#!/bin/sh
# Install the library into a temporary prefix, extract the example program
# from docs/libgcswalk.md, build it with pkg-config against the installed
# copy, and run it on an arm64 core (synthetic: no guest needed).
#
# Usage: example-test.sh BUILD_DIR DOC CC SYNTH_TEST [EXTRA_CFLAGS]
set -u
build=$1 doc=$2 cc=$3 extra=${5:-}
work=$(mktemp -d /tmp/gcswalk-example.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
echo "1..5"
if cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1; then
	echo "ok 1 cmake --install into a temporary prefix"
else
	sed 's/^/# /' "$work/install.log"
	echo "not ok 1 cmake --install into a temporary prefix"
	exit 1
fi
sed -n '/<!-- example: gcswalk-stack.c -->/,/^```$/p' "$doc" | sed '1,2d;$d' >"$work/gcswalk-stack.c"
pc=$(find "$work/prefix" -name gcswalk.pc | head -n 1)
export PKG_CONFIG_PATH="${pc%/*}"
# $extra and pkg-config's output are lists of flags: split on purpose.
# shellcheck disable=SC2046,SC2086
if [ -s "$work/gcswalk-stack.c" ] &&
	$cc $extra -std=c11 -Wall -Wextra -Werror -o "$work/gcswalk-stack" "$work/gcswalk-stack.c" \
		$(pkg-config --cflags --libs gcswalk) -Wl,-rpath,"$(pkg-config --variable=libdir gcswalk)" \
		>"$work/cc.log" 2>&1; then
	echo "ok 2 the documented example builds with pkg-config --cflags --libs gcswalk"
else
	sed 's/^/# /' "$work/cc.log"
	echo "not ok 2 the documented example builds with pkg-config --cflags --libs gcswalk"
	exit 1
fi
# A core that the example can read: the synthetic one, kept by its test.
core=$(GCSWALK_KEEP_CORE="$work/synth.core" "$4" >/dev/null 2>&1; echo "$work/synth.core")
out=$("$work/gcswalk-stack" --core "$core" 2>&1)
if printf '%s\n' "$out" | grep -q 'signal-cap' && printf '%s\n' "$out" | grep -q 'thread 101 synth'; then
	echo "ok 3 the example walks a core"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok 3 the example walks a core"
	exit 1
fi
# The caller-supplied source's example: built the same way, and run.
sed -n '/<!-- example: gcswalk-source.c -->/,/^```$/p' "$doc" | sed '1,2d;$d' >"$work/gcswalk-source.c"
# shellcheck disable=SC2046,SC2086
if [ -s "$work/gcswalk-source.c" ] &&
	$cc $extra -std=c11 -Wall -Wextra -Werror -o "$work/gcswalk-source" "$work/gcswalk-source.c" \
		$(pkg-config --cflags --libs gcswalk) -Wl,-rpath,"$(pkg-config --variable=libdir gcswalk)" \
		>"$work/cc2.log" 2>&1; then
	echo "ok 4 the source example builds with pkg-config --cflags --libs gcswalk"
else
	sed 's/^/# /' "$work/cc2.log"
	echo "not ok 4 the source example builds with pkg-config --cflags --libs gcswalk"
	exit 1
fi
out=$("$work/gcswalk-source" 2>&1)
want='pc return sigreturn signal-cap return terminator (end'
got=$(printf '%s\n' "$out" | awk '{ print $1 }' | tr '\n' ' ')
if [ "$got" = "$want " ]; then
	echo "ok 5 the source example walks its hand-made GCS"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok 5 the source example walks its hand-made GCS"
	exit 1
fi
