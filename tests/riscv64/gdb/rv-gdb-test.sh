#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# GDB's $ variables and the regexps matching them are single-quoted on purpose.
# shellcheck disable=SC2016
# $T is a fixed path without spaces.
# shellcheck disable=SC2086
# The GDB plugin on riscv64 shadow stacks (Zicfiss) in the riscv guest's
# GDB 18, one group per argument (or "all"), TAP output: a live process at
# a breakpoint, one attached to (its state against gcsprof status), a
# signal handler, a threaded core and a smashed one against gcsprof
# inspect frame for frame, a program without a shadow stack; and the cores
# for the host (gdb-multiarch), into /share when it is there. GDB has no
# register for riscv's shadow stack: the plugin reads a live thread's
# NT_RISCV_USER_CFI through libgcswalk, from GDB's own process.
# Exit: 0 all passed, 1 a failure, 4 skipped (no Zicfiss).
set -u
T=/opt/gcsprof/tests/riscv64
PLUGIN=/opt/gcsprof/share/gcsprof/gdb/gcs.py
work=${GCSPROF_TEST_DIR:-/tmp/rv-gdb-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../tap.sh
. "$T/tap.sh"
# shellcheck source=../../../gdb/tests/chain-compare.sh
. "$T/gdb-chain-compare.sh"
command -v cmp >/dev/null || cmp() { busybox cmp "$@"; }
command -v diff >/dev/null || diff() { busybox diff "$@"; }

if ! grep -q '_zicfiss' /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU has no Zicfiss"
	exit 4
fi

# gdb -batch with the plugin loaded; output in the file named first.
g() {
	out=$1
	shift
	gdb -q -nx -batch -ex "source $PLUGIN" "$@" >"$out" 2>&1
}

no_traceback() {
	check "no Python traceback in $1" sh -c "! grep -q 'Traceback\|File \"' $1"
}

# Run CMD (its shadow stack on) until it dies; its core becomes NAME.core.
dump_core() { # dump_core NAME CMD...
	name=$1
	shift
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; exec "$@") >/dev/null 2>&1
	core=$(first_core)
	check "$name: the program dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] && mv "$core" "$name.core"
}

t_live() {
	g live.txt -ex 'break stop_here' -ex run -ex 'gcs bt' -ex 'gcs verify' \
		-ex 'p $_gcs_verify' -ex 'gcs status' -ex 'echo ==bt==\n' -ex bt \
		--args $T/gdb-chain break
	show live.txt
	names=$(frames_of live.txt)
	check "gcs bt: the known chain stop_here chain_c chain_b chain_a main" \
		sh -c "echo '$names' | grep -q '^stop_here chain_c chain_b chain_a main '"
	check "from the thread's NT_RISCV_USER_CFI regset" \
		grep -q 'frames from the shadow stack at 0x[0-9a-f]* (the thread.s NT_RISCV_USER_CFI regset)' live.txt
	check "with source lines" grep -q '#1 .* chain_c+0x[0-9a-f]* at .*chain.c:[0-9]' live.txt
	sed -n '/^==bt==/,$p' live.txt >live.bt.txt
	gdbnames=$(bt_frames_of live.bt.txt)
	check "the same functions as GDB's bt, frame for frame ($gdbnames)" \
		sh -c "starts_with() { [ -n \"\$2\" ] && [ \"\${1#\"\$2\"}\" != \"\$1\" ]; }; starts_with '$names' '$gdbnames'"
	check "gcs verify agrees" grep -q ': agree$' live.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' live.txt
	check "gcs status: Zicfiss, enabled" grep -q '^Zicfiss of thread 1 .*' live.txt
	check "  enabled yes" grep -q '^  enabled   yes' live.txt
	check "  landing pads off (glibc has none)" grep -qx '  landing-pads no' live.txt
	check "  ssp and the mapping" sh -c "grep -q '^  ssp       0x' live.txt && grep -q '^  mapping   0x' live.txt"
	no_traceback live.txt
}

t_attach() {
	$T/gdb-chain wait >wait.out &
	pid=$!
	i=0
	while ! grep -q ready wait.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	gcsprof status "$pid" >status.txt 2>&1
	show status.txt
	# shellcheck disable=SC2046 # the fields, split on purpose
	set -- $(mawk -v p="$pid" '$1 == p { print $3, $4, $5, $6, $7 }' status.txt)
	g attach.txt -p "$pid" -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' -ex 'gcs status'
	show attach.txt
	check "gcs status agrees with gcsprof status: enabled (${1:-?})" \
		sh -c "[ '${1:-}' = on ] && grep -q '^  enabled   yes' attach.txt"
	check "landing pads (${3:-?})" sh -c "[ '${3:-}' = off ] && grep -qx '  landing-pads no' attach.txt"
	check "ssp (${4:-?})" grep -qx "  ssp       ${4:-none}" attach.txt
	check "return addresses (${5:-?})" \
		grep -q "^  depth     [0-9]* frames (${5:-none} return addresses on the shadow stack)\$" attach.txt
	# stop_here waits in glibc's pause(), built without -fcf-protection:
	# pause pushed nothing, so stop_here (its caller) is not on the shadow
	# stack; its own return into chain_c is.
	names=$(frames_of attach.txt)
	check "after attach: chain_c chain_b chain_a main in the chain" \
		sh -c "echo '$names' | grep -q ' chain_c chain_b chain_a main '"
	check "gcs verify agrees" grep -q ': agree$' attach.txt
	check "and names GDB's frames the shadow stack has not (stop_here's, under glibc)" \
		grep -q "GDB shows [0-9]* frames\\{0,1\\} that the shadow stack has not" attach.txt
	check "the program runs on after GDB detached" kill -0 "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	no_traceback attach.txt
}

t_signal() {
	g signal.txt -ex 'handle SIGUSR1 nostop noprint pass' -ex 'break in_handler' -ex run \
		-ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' --args $T/gdb-chain signal
	show signal.txt
	check "the signal delivery is shown as such" grep -q -- '---- signal delivered here' signal.txt
	# chain_c raised the signal in glibc's raise(), which pushed nothing:
	# chain_c is not on the shadow stack (chain_b, its caller, is).
	names=$(frames_of signal.txt)
	check "in_handler, handler, then the interrupted chain to main" \
		sh -c "echo '$names' | grep -q '^in_handler handler .* chain_b chain_a main '"
	check "the trampoline is labelled" grep -q 'the signal handler returns here' signal.txt
	check "gcs verify agrees through the signal frame" grep -q ': agree$' signal.txt
	no_traceback signal.txt
}

t_cores() {
	rm -f core core.*
	$T/gcsprof-threads 60 3 >/dev/null &
	pid=$!
	sleep 3
	kill -ABRT "$pid"
	wait "$pid"
	core=$(first_core)
	check "the threaded program dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] && mv "$core" threads.core
	g threads.txt -ex 'thread apply all gcs bt' $T/gcsprof-threads threads.core
	head -n 30 threads.txt | show
	check "every thread's chain (4)" \
		[ "$(grep -c 'frames from the shadow stack' threads.txt)" -eq 4 ]
	check "the workers' chains run through worker" [ "$(grep -c ' worker+0x' threads.txt)" -ge 3 ]
	compare_with_inspect threads $T/gcsprof-threads threads.core threads.txt
	no_traceback threads.txt
	dump_core smash $T/gcsprof-smash || return
	g smash.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' -ex 'gcs status' \
		-ex 'echo ==bt==\n' -ex bt $T/gcsprof-smash smash.core
	show smash.txt
	check "gcs bt: the true chain victim level2 level1 main" \
		sh -c "echo '$(frames_of smash.txt)' | grep -q '^victim level2 level1 main '"
	check "gcs verify: GDB and the shadow stack part at frame #1" grep -q 'they part at frame #1$' smash.txt
	check "from the core's NT_RISCV_USER_CFI note" grep -q "(the core's NT_RISCV_USER_CFI note)" smash.txt
	compare_with_inspect smash $T/gcsprof-smash smash.core smash.txt
	no_traceback smash.txt
	if [ -d /share ]; then
		mkdir -p /share/rv-gdb
		cp threads.core smash.core $T/gcsprof-threads $T/gcsprof-smash /share/rv-gdb/
		for f in threads smash; do
			gcsprof inspect $f.core >/share/rv-gdb/$f.guest-inspect.txt 2>&1
			cp $f.txt /share/rv-gdb/$f.guest-gdb.txt
		done
		share_libc
	fi
}

t_nogcs() {
	GCSPROF_SHADOW_STACK=0 $T/gdb-chain wait >wait2.out &
	pid=$!
	i=0
	while ! grep -q ready wait2.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	g nogcs.txt -p "$pid" -ex 'echo ==bt==\n' -ex 'gcs bt' -ex 'echo ==status==\n' \
		-ex 'gcs status' -ex 'echo ==end==\n'
	show nogcs.txt
	check "gcs bt: one line, Zicfiss not enabled" \
		grep -q '^gcs: Zicfiss is not enabled in thread 1 .*runs without a shadow stack' nogcs.txt
	check "gcs status: not enabled" grep -q '^Zicfiss of thread 1 (LWP [0-9]*) (from .*): not enabled' nogcs.txt
	kill "$pid"
	wait "$pid" 2>/dev/null
	no_traceback nogcs.txt
}

tap_groups "live attach signal cores nogcs" "$@"
