#!/bin/sh
# Install the library into a temporary prefix, extract the example programs
# from docs/libgcswalk.md, build them with pkg-config against the installed
# copy, and run them: one on an arm64 core (synthetic: no guest needed),
# one on its hand-made GCS. TAP; a step the next ones need ends the run.
#
# Usage: example-test.sh BUILD_DIR DOC CC SYNTH_TEST [EXTRA_CFLAGS]
set -u
build=$1 doc=$2 cc=$3 extra=${5:-}
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
work=$(mktemp -d /tmp/gcswalk-example.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# needed DESC: the step described just failed (its output in $work/step.log):
# show why and end the run.
needed() {
	show "$work/step.log"
	not_ok "$1"
	tap_done
}

desc="cmake --install into a temporary prefix"
if cmake --install "$build" --prefix "$work/prefix" >"$work/step.log" 2>&1; then
	ok "$desc"
else
	needed "$desc"
fi
pc=$(find "$work/prefix" -name gcswalk.pc | head -n 1)
export PKG_CONFIG_PATH="${pc%/*}"

# build_example NAME: extract the block marked NAME.c from the doc and
# build it with pkg-config against the installed copy.
build_example() {
	desc="the example $1.c builds with pkg-config --cflags --libs gcswalk"
	sed -n "/<!-- example: $1.c -->/,/^\`\`\`\$/p" "$doc" | sed '1,2d;$d' >"$work/$1.c"
	: >"$work/step.log"
	# $extra and pkg-config's output are lists of flags: split on purpose.
	# shellcheck disable=SC2046,SC2086
	if [ -s "$work/$1.c" ] &&
		$cc $extra -std=c11 -Wall -Wextra -Werror -o "$work/$1" "$work/$1.c" \
			$(pkg-config --cflags --libs gcswalk) \
			-Wl,-rpath,"$(pkg-config --variable=libdir gcswalk)" >"$work/step.log" 2>&1; then
		ok "$desc"
	else
		needed "$desc"
	fi
}

build_example gcswalk-stack
# A core that the example can read: the synthetic one, kept by its test.
core=$(GCSWALK_KEEP_CORE="$work/synth.core" "$4" >/dev/null 2>&1; echo "$work/synth.core")
"$work/gcswalk-stack" --core "$core" >"$work/step.log" 2>&1
if grep -q 'signal-cap' "$work/step.log" && grep -q 'thread 101 synth' "$work/step.log"; then
	ok "the example walks a core"
else
	needed "the example walks a core"
fi
# The caller-supplied source's example: built the same way, and run.
build_example gcswalk-source
"$work/gcswalk-source" >"$work/step.log" 2>&1
got=$(awk '{ print $1 }' "$work/step.log" | tr '\n' ' ')
if [ "$got" = 'pc return sigreturn signal-cap return terminator (end ' ]; then
	ok "the source example walks its hand-made GCS"
else
	needed "the source example walks its hand-made GCS"
fi
tap_done
