#!/bin/sh
# riscv64 cores from the guest, read on this x86_64 host: rv-target's core
# by libgcswalk (rv-core-check), and a threaded and a smashed core by
# gcsprof inspect and by the GDB plugin in gdb-multiarch, which must agree
# frame for frame with each other and with inspect in the guest. The guest
# makes the cores (rv-gcswalk-test --share, rv-gdb-test.sh cores) and sends
# them back with the files they map.
#
# Usage: rv-host-test.sh VM_RUN STAGE WORK CHECKER GCSPROF GDB PLUGIN
# Exit: 0 all passed, 1 a failure, 4 skipped (no riscv64 build, no Zicfiss).
set -u
vm_run=$1 stage=$2 work=$3 checker=$4 gcsprof=$5 gdb=$6 plugin=$7
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tap.sh
. "$here/../../tap.sh"
# shellcheck source=../../../gdb/tests/chain-compare.sh
. "$here/../../../gdb/tests/chain-compare.sh"

if [ ! -x "$stage/tests/riscv64/rv-gcswalk-test" ]; then
	echo "1..0 # SKIP no riscv64 build in $stage (scripts/build makes it)"
	exit 4
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
# shellcheck disable=SC2016 # the guest's shell expands them
"$vm_run" --arch riscv64 --kernel reference --stage "$stage" --share "$work" --timeout 900 -- \
	sh -c 'T=/opt/gcsprof/tests/riscv64
		$T/rv-gcswalk-test --share /share >/share/gcswalk.log 2>&1; a=$?
		$T/rv-gdb-test.sh cores >/share/gdb.log 2>&1; b=$?
		echo "rv-gcswalk-test $a, rv-gdb-test.sh cores $b"
		[ $a = 0 ] && [ $b = 0 ]' >"$work.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	grep -q 'status 4\|rv-gcswalk-test 4' "$work.log" && { echo "1..0 # SKIP no Zicfiss in the guest"; exit 4; }
	echo "# the guest run failed ($rc):"
	sed 's/^/# /' "$work.log" "$work/gcswalk.log" "$work/gdb.log" 2>/dev/null | tail -n 40
	exit 1
fi
cd "$work" || exit 1
# The sysroot: the guest's C library (share_libc), and the programs at
# their guest paths.
r=$work/root/opt/gcsprof/tests/riscv64
mkdir -p "$r" && cp rv-target rv-gdb/gcsprof-threads rv-gdb/gcsprof-smash "$r/" || exit 1
"$checker" "$work" | sed '/^1\.\./d; /^# totals/d' >check.tap
show check.tap
if grep -q '^not ok' check.tap; then
	not_ok "rv-core-check: the riscv64 core, read here"
else
	ok "rv-core-check: the riscv64 core, read here"
fi

for f in threads smash; do
	"$gcsprof" inspect --sysroot "$work/root" "rv-gdb/$f.core" >"$f.host-inspect.txt" 2>&1
	chains_of "$f.host-inspect.txt" >"$f.host-inspect.chains"
	chains_of "rv-gdb/$f.guest-inspect.txt" >"$f.guest-inspect.chains"
	n=$(wc -l <"$f.host-inspect.chains")
	if [ "$n" -gt 0 ] && cmp -s "$f.host-inspect.chains" "$f.guest-inspect.chains"; then
		ok "$f: inspect here equals inspect in the guest, frame for frame ($n lines)"
	else
		not_ok "$f: inspect here equals inspect in the guest"
		diff "$f.host-inspect.chains" "$f.guest-inspect.chains" | head -n 20 | show
	fi
	"$gdb" -q -nx -batch -ex "set sysroot $work/root" -ex "source $plugin" \
		-ex "file $r/gcsprof-$f" -ex "core-file rv-gdb/$f.core" \
		-ex 'thread apply all gcs bt' >"$f.host-gdb.txt" 2>&1
	chains_of "$f.host-gdb.txt" >"$f.host-gdb.chains"
	if [ "$n" -gt 0 ] && cmp -s "$f.host-gdb.chains" "$f.host-inspect.chains"; then
		ok "$f: gdb-multiarch's gcs bt equals inspect, frame for frame"
	else
		not_ok "$f: gdb-multiarch's gcs bt equals inspect"
		diff "$f.host-gdb.chains" "$f.host-inspect.chains" | head -n 20 | show
		head -n 30 "$f.host-gdb.txt" | show
	fi
	check "no Python traceback in $f.host-gdb.txt" sh -c "! grep -q 'Traceback' $f.host-gdb.txt"
done
check "the smash: inspect here finds the forged return in t0" \
	grep -q 't0 (the return address sspopchk checked) holds 0x4141414141414141' smash.host-inspect.txt
tap_done
