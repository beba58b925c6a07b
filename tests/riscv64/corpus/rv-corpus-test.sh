#!/bin/sh
# gcsprof inspect on healthy riscv64 cores, in the riscv guest, TAP: the
# inspect corpus's healthy programs (tests/corpus/healthy, which say what
# each does; gcs-switch with riscv's switch) built for the Zicfiss shadow
# stack. Each runs to its core (its shadow stack turned on at
# start, or by itself: enable-main, enable-thread); inspect must name no
# corruption, and give every thread a chain from the shadow stack (but
# enable-thread's main thread, which never turns it on).
# Exit: 0 all passed, 1 a failure, 4 skipped (no Zicfiss).
set -u
T=/opt/gcsprof/tests/riscv64
work=${GCSPROF_TEST_DIR:-/tmp/rv-corpus-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../tap.sh
. "$T/tap.sh"

if ! grep -q '_zicfiss' /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU has no Zicfiss"
	exit 4
fi

# name, who turns the shadow stack on (the enabler linked in, or the
# program itself), and the status it dies with.
scenarios='
abort-deep       enabler 134
recursion        enabler 134
threads-syscalls enabler 134
enable-main      self    134
enable-thread    self    134
gcs-switch       enabler 134
ucontext         enabler 134
sigaltstack      enabler 134
nested-signals   enabler 134
leaf-handler     enabler 139
leaf-thread      enabler 134
longjmp          enabler 134
mixed-fp         enabler 134
cxx-exception    enabler 134
'

echo "$scenarios" | while read -r name who want; do
	[ -n "$name" ] || continue
	p=$T/healthy-$name
	[ -x "$p" ] || { skip "$name: not built here"; continue; }
	ss=3
	[ "$who" = self ] && ss=0
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GCSPROF_SHADOW_STACK=$ss exec "$p") >"$name.out" 2>&1
	rc=$?
	core=$(first_core)
	if [ "$rc" -ne "$want" ] || [ -z "$core" ]; then
		not_ok "$name: dies with status $want and a core (status $rc, core ${core:-none})"
		show "$name.out"
		continue
	fi
	mv "$core" "$name.core"
	gcsprof inspect "$name.core" >"$name.txt" 2>&1
	chains=$(grep -c 'no Zicfiss chain' "$name.txt")
	if grep -q '^verdict: no stack corruption found$' "$name.txt" &&
		! grep -q 'CORRUPTION' "$name.txt" &&
		{ [ "$chains" -eq 0 ] || { [ "$name" = enable-thread ] && [ "$chains" -eq 1 ]; }; }; then
		ok "$name: inspect claims no corruption"
	else
		not_ok "$name: inspect claims no corruption"
		show "$name.txt"
	fi
done | tee results.tap
# The loop ran in a pipeline's subshell: count its results here.
n=$(grep -c '^ok\|^not ok' results.tap)
if grep -q '^not ok' results.tap; then
	echo "1..$n"
	exit 1
fi
echo "1..$n"
exit 0
