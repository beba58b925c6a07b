#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# Its variables hold pids, counts and fixed paths, never spaces.
# shellcheck disable=SC2086
# gcsprof on riscv64 shadow stacks (Zicfiss), in the riscv guest: one group
# per argument (or "all"), TAP output. Exit: 0 all passed, 1 a failure, 4
# skipped (no Zicfiss in this CPU or kernel).
#
# The workloads are gcsprof's own (gcsprof/tests/workloads), built with
# GCC 16's -fcf-protection=return and gcsprof-shstk linked in, which turns
# their shadow stack on at start (GCSPROF_SHADOW_STACK=0 leaves it off).
# Commands record launches get the same from --gcs-tunable 3 (the default,
# 2, turns it on only for programs whose every object is built for it,
# and sid's glibc is not).
set -u
T=/opt/gcsprof/tests/riscv64
work=${GCSPROF_TEST_DIR:-/tmp/rv-gcsprof-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../tap.sh
. "$(dirname "$0")/tap.sh"
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }

if ! grep -qw 'zicfiss' /proc/cpuinfo && ! grep -q '_zicfiss' /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU has no Zicfiss"
	exit 4
fi

M=${GCSPROF_METHOD:-}
# perf on the project kernel, which takes perf's call chains from the
# shadow stack (record adds a leaf's caller from ra: docs/riscv.md);
# ptrace on the reference kernel, which takes none.
if [ -e /proc/sys/kernel/perf_callchain_gcs ]; then
	auto_method=perf no_perf=
else
	auto_method=ptrace no_perf='no call chains from the Zicfiss'
fi
want_method=${M:-$auto_method}
rec() { gcsprof record ${M:+--method "$M"} "$@"; }
echo "# record method: ${M:-auto}, expecting $want_method"

samples_of() { # samples_of REPORT FUNCTION
	awk -v f="$2" '$4 == f { print $3; exit }' "$1"
}
sum() { awk '{ s += $NF } END { print s + 0 }'; }

wait_for_samples() { # wait_for_samples FILE
	i=0
	while ! grep -q '^sample ' "$1" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

t_split() {
	# Samples of the two paths, recordings of 8 s until there are 1000:
	# a 5-point test needs that many to fail only when the profile is
	# wrong. burn_a and burn_b are leaves: nothing pushed, their callers
	# only in ra (libgcswalk's LR frame, from their CFI).
	sa=0 sb=0
	for round in 1 2 3 4 5 6 7 8; do
		status_is 0 "record the 3:1 split workload (run $round)" \
			rec -q -F 250 --gcs-tunable 3 -o split.data -- $T/gcsprof-split 8
		# Every function listed: the paths have little self time, and with
		# the default 20 rows a few unnamed library frames can push one out.
		status_is 0 "report text" gcsprof report split.data --top 1000 -o split.txt
		[ "$round" -eq 1 ] && show split.txt | head -n 20
		ra=$(samples_of split.txt path_a) rb=$(samples_of split.txt path_b)
		echo "# run $round: path_a $ra, path_b $rb"
		sa=$((sa + ${ra:-0})) sb=$((sb + ${rb:-0}))
		gcsprof report split.data --format folded >>all.folded
		[ $((sa + sb)) -ge 1000 ] && break
	done
	sum_ab=$((sa + sb + (sa + sb == 0)))
	a=$(((sa * 2000 / sum_ab + 1) / 2)) b=$(((sb * 2000 / sum_ab + 1) / 2))
	echo "# path_a $sa samples ($((a / 10)).$((a % 10))%), path_b $sb" \
		"($((b / 10)).$((b % 10))%) of the two paths (expected 75% and 25%)"
	check "enough samples of the two paths ($((sa + sb)))" [ $((sa + sb)) -ge 1000 ]
	check "path_a's share is 75 +- 5 points ($((a / 10)).$((a % 10)))" [ "$a" -ge 700 -a "$a" -le 800 ]
	check "path_b's share is 25 +- 5 points ($((b / 10)).$((b % 10)))" [ "$b" -ge 200 -a "$b" -le 300 ]
	check "the profile says method $want_method" sh -c "zcat -f split.data | grep -qx 'method $want_method'"
	check "the profile records its architecture (arch riscv64 Zicfiss)" \
		sh -c "zcat -f split.data | grep -qx 'arch riscv64 Zicfiss'"
	check "the leaf's caller is there: burn_a under path_a" grep -qE '(^|;)main;path_a;burn_a(;| )' all.folded
	inpaths=$(grep -E '(^|;)(path_a|path_b|burn_a|burn_b)(;| )' all.folded | sum)
	bad=$(grep -E '(^|;)(path_a|path_b|burn_a|burn_b)(;| )' all.folded | grep -vE '(^|;)main;' | sum)
	echo "# $inpaths samples in the two paths, $bad of them without main"
	grep -E '(^|;)(path_a|path_b|burn_a|burn_b)(;| )' all.folded | grep -vE '(^|;)main;' |
		head -n 5 | show
	check "every chain through path_a/path_b reaches main ($bad do not)" \
		[ "$inpaths" -gt 0 -a "$bad" -eq 0 ]
	status_is 0 "report svg" gcsprof report split.data --format svg -o split.svg
	check "the SVG names path_a" grep -q '>path_a<\|path_a (' split.svg
	status_is 0 "report pprof" gcsprof report split.data --format pprof -o split.pb.gz
	check "pprof output is gzip" gzip -t split.pb.gz
	# Deep recursion, recorded whole: 2000 descend frames between main and
	# burn, with ptrace whatever the method above (perf's chains stop at
	# kernel.perf_event_max_stack; ptrace's walk does not).
	status_is 0 "record a chain 2000 frames deep (ptrace)" \
		gcsprof record --method ptrace -q -F 99 --gcs-tunable 3 -o depth.data -- \
		$T/bench-depth 2 2000
	status_is 0 "report folded (depth)" gcsprof report depth.data --format folded -o depth.folded
	deepest=$(awk -F';' '/;burn( |;)/ { n = 0; for (i = 1; i <= NF; i++) if ($i == "descend") n++
		if (n > m) m = n } END { print m + 0 }' depth.folded)
	check "the deepest chain holds all 2000 descend frames ($deepest)" [ "$deepest" = 2000 ]
	ncut=$(zcat -f depth.data | awk '$1 == "sample" && $8 ~ /c/ { n++ } END { print n + 0 }')
	check "and no chain is marked cut ($ncut)" [ "$ncut" -eq 0 ]
}

t_threads() {
	status_is 0 "record three named threads (new after attach)" \
		rec -q --gcs-tunable 3 -o threads.data -- $T/gcsprof-threads 3
	status_is 0 "report --per-thread" gcsprof report threads.data --per-thread -o threads.txt
	grep '^## thread' threads.txt | show
	for w in worker-1 worker-2 worker-3; do
		check "$w is in the report by name" grep -q "^## thread [0-9]* ($w)" threads.txt
	done
	status_is 0 "folded --per-thread" gcsprof report threads.data --per-thread -f folded -o threads.folded
	check "worker-1's chains end in worker" grep -qE '^worker-1;(.*;)?worker(;| )' threads.folded
}

t_signals() {
	status_is 3 "signals delivered, exit status 3 passed through" \
		rec -q --gcs-tunable 3 -o signals.data -- $T/gcsprof-signals
	check "the command's output says all 10 signals arrived" grep -q '10 of 10' out.txt
	status_is 143 "death by SIGTERM passed through as 128+15" \
		rec -q --gcs-tunable 3 -o signals2.data -- $T/gcsprof-signals kill
	status_is 0 "report of a command that forks" \
		gcsprof report signals.data --per-thread -o signals.txt
	grep '^## thread' signals.txt | show
	child=$(sed -n 's/^## thread [0-9]* (forked-child) of process \([0-9]*\): \([0-9]*\) samples/\2/p' \
		signals.txt)
	check "the forked child is sampled (${child:-0} samples)" [ "${child:-0}" -ge 5 ]
	status_is 0 "folded --per-thread" \
		gcsprof report signals.data --per-thread -f folded -o signals.folded
	check "the child's chains run from main into child_work" \
		grep -qE '^forked-child;(.*;)?main;child_work( |;)' signals.folded
	# A program as users have it (no enabler linked in), run by a shell
	# that execs it: exec turns the shadow stack off, and the enabler
	# record preloads (inherited with the environment) turns it on again.
	status_is 0 "record a shell that execs a program (--gcs-tunable 3: preloaded enabler)" \
		rec -q -F 250 --gcs-tunable 3 -o exec.data -- sh -c "exec $T/gcsprof-split-plain 2"
	status_is 0 "report it folded" gcsprof report exec.data -f folded -o exec.folded
	check "the exec'd program's chains reach main" grep -qE '(^|;)main;path_a;' exec.folded
	status_is 0 "the default --gcs-tunable 2 leaves a program with an unmarked libc without" \
		gcsprof record -q -o def.data -- $T/gcsprof-split-plain 1
	check "its samples are counted as without a shadow stack" sh -c "zcat -f def.data | grep -qE '^lost no-gcs [1-9]'"
	status_is 127 "--gcs-tunable 1 refuses it, naming the object" \
		gcsprof record -q --gcs-tunable 1 -o one.data -- $T/gcsprof-split-plain 1
	show err.txt
	check "libc is not shadow-stack compatible" grep -q "libc.so.6 is not shadow-stack compatible" err.txt
}

t_attach() {
	$T/gcsprof-split 60 >/dev/null &
	target=$!
	sleep 1
	gcsprof record ${M:+--method "$M"} -q -p $target -o attach.data 2>attach.err &
	rec=$!
	sleep 6
	kill -INT $rec
	wait $rec
	rc=$?
	check "record -p ends on SIGINT with status 0 ($rc)" [ "$rc" -eq 0 ]
	show attach.err
	check "the target is still running after detach" kill -0 $target
	check "the target is not traced any more" \
		grep -q '^TracerPid:[[:space:]]*0$' /proc/$target/status
	status_is 0 "the attached profile reports" gcsprof report attach.data -o attach.txt
	show attach.txt | head -n 12
	check "attached samples show path_a" grep -q path_a attach.txt
	status_is 0 "status of a process with Zicfiss" gcsprof status $target
	show out.txt
	check "status names the feature and its columns" grep -q 'zicfiss.*landing-pads.*ssp' out.txt
	check "the main thread's shadow stack is on" grep -qE "^ *$target .* on " out.txt
	check "and the method record would use ($auto_method)" \
		grep -q "^record would sample with $auto_method" out.txt
	kill $target
	wait $target 2>/dev/null
}

t_smash() {
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; exec $T/gcsprof-smash) >smash.out 2>&1
	rc=$?
	check "the smashed program dies of SIGSEGV ($rc)" [ "$rc" -eq 139 ]
	core=$(first_core)
	check "it dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] || return
	status_is 0 "inspect the core" gcsprof inspect "$core"
	show out.txt
	check "inspect names the shadow-stack fault" grep -q 'from a Zicfiss check (SEGV_CPERR)' out.txt
	check "inspect reports the corruption" grep -q 'STACK CORRUPTION' out.txt
	check "where: the return sspopchk checked (t0) holds the forged 0x4141414141414141" \
		grep -q 't0 (the return address sspopchk checked) holds 0x4141414141414141' out.txt
	check "the true chain: victim, level2, level1, main in order" \
		sh -c "grep -o ' victim\| level2\| level1\| main' out.txt | tr -d ' ' | tr '\n' ' ' |
			grep -q 'victim level2 level1 main'"
	check "with source lines" grep -q 'level1.* at .*smash.c:[0-9]' out.txt
	gdb -q -batch -ex bt $T/gcsprof-smash "$core" >gdb.txt 2>&1
	show gdb.txt | tail -n 8
	if grep -q 'level1' gdb.txt; then
		echo "# note: gdb's bt found level1 on this core too"
	else
		ok "gdb's bt on the same core does not reach level1 (the stack is overwritten)"
	fi
	mv "$core" smash.core
	# A healthy program's deep core: abort() 2000 calls down.
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; exec $T/gcsprof-deep 2000) >/dev/null 2>&1
	deep=$(first_core)
	check "the deep program dumped a core ($deep)" [ -n "$deep" ]
	if [ -n "$deep" ]; then
		mv "$deep" deep.core
		status_is 0 "inspect the deep core" gcsprof inspect deep.core
		grep -E 'same frame|main|abort' out.txt | head -n 6 | show
		check "the recursion is one line, its 2000 frames counted" \
			grep -qE 'the same frame (199[0-9]|20[0-9][0-9]) more times: #[0-9]+ to #[0-9]+, recursion' out.txt
		check "down to main" grep -q ' main+' out.txt
		check "no corruption claimed for a healthy abort()" sh -c '! grep -q CORRUPTION out.txt'
	fi
}

t_errors() {
	[ -f split.data ] ||
		gcsprof record -q --gcs-tunable 3 -o split.data -- $T/gcsprof-split 1 >/dev/null
	status_is 65 "nonexistent pid" rec -p 999999 -o e.data
	status_is 65 "status of a nonexistent pid" gcsprof status 999999
	GCSPROF_SHADOW_STACK=0 $T/gcsprof-split 30 >/dev/null &
	s=$!
	sleep 1
	status_is 67 "a target without a shadow stack" rec -p $s -o e.data
	show err.txt
	check "says so by the feature's name, in one line, and how to start one with it" \
		sh -c "tail -n 1 err.txt | grep -q 'runs without Zicfiss: start it with GCSPROF_SHADOW_STACK=3 LD_PRELOAD=libgcsprof-shstk.so'"
	if [ -n "$no_perf" ]; then
		check "ptrace, saying why not perf" grep -q "sampling with ptrace .*$no_perf" err.txt
	fi
	status_is 0 "status of it" gcsprof status $s
	check "shows the shadow stack off" grep -qE "^ *$s .* off " out.txt
	kill $s
	status_is 66 "not permitted" setpriv --reuid=65534 --regid=65534 --clear-groups \
		/opt/gcsprof/bin/gcsprof record ${M:+--method $M} -p $$ -o /tmp/e.data
	if [ -n "$no_perf" ]; then
		status_is 74 "--method perf refused" gcsprof record --method perf -o e.data -- true
		check "saying why" grep -q "$no_perf" err.txt
	fi
	status_is 72 "unwritable output" rec -o /proc/nonexistent/x -- true
	printf 'hello\n' >bad.data
	status_is 69 "bad profile" gcsprof report bad.data
	status_is 71 "bad core" gcsprof inspect bad.data
	status_is 127 "command not found" rec -o e.data -- /nonexistent/program
	status_is 0 "archive a riscv64 profile" gcsprof archive split.data -o split.archive
	check "the archive holds the workload" sh -c 'find split.archive -name gcsprof-split | grep -q .'
	status_is 0 "which reports on its own" gcsprof report split.archive -o arch.txt
	check "with the workload's functions" grep -q main arch.txt
}

tap_groups "split threads signals attach smash errors" "$@"
