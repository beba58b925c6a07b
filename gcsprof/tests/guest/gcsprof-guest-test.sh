#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# Its variables hold pids, counts and fixed paths, never spaces.
# shellcheck disable=SC2086
# gcsprof's guest tests, one feature a group, one group per argument (or
# "all"; a name's "-" is t_NAME's "_"), TAP output: each group is a CTest
# test of its own (gcsprof/tests/CMakeLists.txt), so that a failure names
# the feature. Runs in the QEMU guest (vm/run) with gcsprof and its
# workloads staged under /opt/gcsprof. Exit: 0 all passed, 1 a failure,
# 4 skipped (no GCS in this CPU or kernel).
#
# The workloads are built by GCC 12, which does not mark them as GCS
# compatible, so they run with glibc.cpu.aarch64_gcs=3 (GCS forced).
set -u
T=/opt/gcsprof/tests
GCS3=glibc.cpu.aarch64_gcs=3
work=${GCSPROF_TEST_DIR:-/tmp/gcsprof-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/tap.sh"
# The guest root has mawk without the awk alternative link.
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }

if ! grep -qw gcs /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU or kernel has no GCS (no gcs in /proc/cpuinfo)"
	# Even so, record must say so with its own status.
	gcsprof record -o /tmp/nogcs.data -- true 2>/tmp/nogcs.err
	rc=$?
	echo "# gcsprof record without GCS: status $rc: $(cat /tmp/nogcs.err)"
	[ "$rc" -eq 68 ] || exit 1
	exit 4
fi

# The method record is asked to use (GCSPROF_METHOD: perf or ptrace), and
# the one its default (auto) must choose: perf where the kernel takes call
# chains from the GCS.
M=${GCSPROF_METHOD:-}
if [ -e /proc/sys/kernel/perf_callchain_gcs ]; then
	auto_method=perf
else
	auto_method=ptrace
fi
want_method=${M:-$auto_method}
# (A function: in the background, $! would be the subshell running it,
# not gcsprof, so background recordings spell the command out.)
rec() { gcsprof record ${M:+--method "$M"} "$@"; }
echo "# record method: ${M:-auto}, expecting $want_method"

# The samples (total) of FUNCTION in a text report.
samples_of() { # samples_of REPORT FUNCTION
	awk -v f="$2" '$4 == f { print $3; exit }' "$1"
}

# Wait (up to 30 s) until FILE holds samples: a recording under way.
# in_profile FILE GREP-ARGS...: grep the profile's text (format 2 is
# gzip; zcat -f passes plain text and a stream cut mid-recording as far as
# it goes).
in_profile() {
	ip_file=$1
	shift
	zcat -f "$ip_file" 2>/dev/null | grep "$@"
}

wait_for_samples() { # wait_for_samples FILE
	i=0
	while ! in_profile "$1" -q '^sample ' && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# The chains of a `perf script -D --no-inline -F ip,sym,dso` dump, one
# line per sample, root first: the kernel's chain as it recorded it (the
# raw entries, named by perf script's own lines for those addresses), "|",
# and the chain perf script printed. A frame perf has no symbol for is
# named by its file, in brackets.
perf_chains() { # perf_chains DUMP
	# shellcheck disable=SC2016 # an awk program
	awk 'function flush(  i, a, b) {
		if (!np) return
		for (i = nr; i >= 1; i--) a = a (i < nr ? ";" : "") (raw[i] in name ? name[raw[i]] : "?" raw[i])
		for (i = np; i >= 1; i--) b = b (i < np ? ";" : "") printed[i]
		print a "|" b
		np = 0; nr = 0; split("", name)
	}
	/^\.\.\. (FP )?chain: nr:/ { flush(); inraw = 1; nr = 0; next }
	inraw && /^\.\.\.\.\. / { if (NF == 3) { x = $3; sub(/^0+/, "", x); raw[++nr] = x }; next }
	{ inraw = 0 }
	/^\t/ && nr { f = $2; if (f == "[unknown]") { d = $NF; gsub(/[()]/, "", d); sub(/.*\//, "", d); f = "[" d "]" }
		name[$1] = f; printed[++np] = f; next }
	/^$/ { flush() }
	END { flush() }' "$1"
}

# The samples of a profile whose chains are marked cut (flag c).
cut_samples() { zcat -f "$1" | awk '$1 == "sample" && $8 ~ /c/ { n++ } END { print n + 0 }'; }

# The kernel's chains (perf_chains' first part) of the samples taken in
# the split's paths (path_a, burn_a, path_b, burn_b).
in_paths() { cut -d'|' -f1 "$1" | grep -E '(^|;)(path|burn)_[ab]$'; }

t_split() {
	# Samples of the two paths, from recordings of 8 s each until there
	# are at least 1000: under emulation on a loaded host the sampling
	# rate can fall to 50/s, and a 5-point test needs that many samples
	# to fail only when the profile is wrong (a binomial share of 75% from
	# 1000 samples has a standard deviation of 1.4 points).
	sa=0 sb=0
	for round in 1 2 3 4 5 6; do
		status_is 0 "record the 3:1 split workload (run $round)" \
			rec -q -F 250 --gcs-tunable 3 -o split.data -- $T/gcsprof-split 8
		# Every function listed: the paths have little self time, and with
		# the default 20 rows a few unnamed library frames can push one out.
		status_is 0 "report text" gcsprof report split.data --top 1000 -o split.txt
		[ "$round" -eq 1 ] && show split.txt | head -n 20
		# The split is between the two paths: samples elsewhere
		# (startup, the loop's clock reads, exit) are not part of it.
		ra=$(samples_of split.txt path_a) rb=$(samples_of split.txt path_b)
		echo "# run $round: path_a $ra, path_b $rb"
		sa=$((sa + ${ra:-0})) sb=$((sb + ${rb:-0}))
		[ $((sa + sb)) -ge 1000 ] && break
	done
	# Shares in tenths of a point, rounded to nearest.
	sum=$((sa + sb + (sa + sb == 0)))
	a=$(((sa * 2000 / sum + 1) / 2)) b=$(((sb * 2000 / sum + 1) / 2))
	echo "# path_a $sa samples ($((a / 10)).$((a % 10))%), path_b $sb" \
		"($((b / 10)).$((b % 10))%) of the two paths (expected 75% and 25%)"
	check "enough samples of the two paths ($((sa + sb)))" [ $((sa + sb)) -ge 1000 ]
	check "path_a's share is 75 +- 5 points ($((a / 10)).$((a % 10)))" [ "$a" -ge 700 -a "$a" -le 800 ]
	check "path_b's share is 25 +- 5 points ($((b / 10)).$((b % 10)))" [ "$b" -ge 200 -a "$b" -le 300 ]
	check "the profile says method $want_method" in_profile split.data -qx "method $want_method"
	check "the profile records its architecture (arch arm64 GCS)" in_profile split.data -qx "arch arm64 GCS"
	check "the profile is gzip once recorded" gzip -t split.data
	if [ "$want_method" = perf ]; then
		# --defer: every record held until the command's end, then written.
		status_is 0 "record the split with --defer" \
			rec -q -F 250 --defer --gcs-tunable 3 -o defer.data -- $T/gcsprof-split 4
		status_is 0 "its report" gcsprof report defer.data --top 1000 -o defer.txt
		da=$(samples_of defer.txt path_a) db=$(samples_of defer.txt path_b)
		check "the held samples were written: both paths, path_a's more (${da:-0}, ${db:-0})" \
			[ "${db:-0}" -gt 0 -a "${da:-0}" -gt "${db:-0}" ]
		check "a deferred profile is gzip too" gzip -t defer.data
	fi
	if [ "$want_method" = perf ]; then
		ev=${GCSPROF_EXPECT_EVENT:-cycles}
		check "sampling on $ev" in_profile split.data -qx "event $ev"
	fi
	check "report names the method" grep -q "^# method: $want_method" split.txt
	status_is 0 "report folded" gcsprof report split.data --format folded -o split.folded
	total=$(awk '{ s += $NF } END { print s + 0 }' split.folded)
	inpaths=$(grep -E '(^|;)(path_a|path_b|burn_a|burn_b)(;| )' split.folded |
		awk '{ s += $NF } END { print s + 0 }')
	bad=$(grep -E '(^|;)(path_a|path_b|burn_a|burn_b)(;| )' split.folded |
		grep -vE '(^|;)main;' | awk '{ s += $NF } END { print s + 0 }')
	nomain=$(grep -vE '(^|;)main(;| )' split.folded | awk '{ s += $NF } END { print s + 0 }')
	echo "# $total samples, $inpaths in the two paths, $nomain outside main (startup, exit)"
	check "samples were taken ($total)" [ "$total" -ge 100 ]
	check "every chain through path_a/path_b reaches main ($bad do not)" [ "$bad" -eq 0 ]
	check "at most 5% of all chains miss main (startup and exit)" \
		[ $((nomain * 100)) -le $((total * 5)) ]
	# shellcheck disable=SC2016 # an awk program
	check "folded output parses (frames;... count)" \
		awk 'NF < 2 || $NF !~ /^[0-9]+$/ { exit 1 }' split.folded
	status_is 0 "report svg" gcsprof report split.data --format svg -o split.svg
	check "the SVG names path_a" grep -q '>path_a<\|path_a (' split.svg
	status_is 0 "report pprof" gcsprof report split.data --format pprof -o split.pb.gz
	check "pprof output is gzip" gzip -t split.pb.gz
}

t_vdso() {
	# The vDSO has no file: its frames are named as perf names them. The
	# split's clock reads are too few samples to count on; this workload
	# lives in the vDSO.
	status_is 0 "record the clock-reading workload" \
		rec -q --gcs-tunable 3 -o clock.data -- $T/gcsprof-clock 2
	status_is 0 "report folded (clock)" gcsprof report clock.data --format folded -o clock.folded
	ctotal=$(awk '{ s += $NF } END { print s + 0 }' clock.folded)
	cvdso=$(grep -E 'read_clocks;clock_gettime;__kernel_clock_gettime \[vdso\] ' clock.folded |
		awk '{ s += $NF } END { print s + 0 }')
	echo "# clock: $cvdso of $ctotal samples in main;read_clocks;clock_gettime;__kernel_clock_gettime [vdso]"
	check "vDSO frames are named as perf names them, under their callers ($cvdso of $ctotal)" \
		[ "$ctotal" -ge 20 -a $((cvdso * 4)) -ge "$ctotal" ]
}

t_depth() {
	# A chain deeper than any default limit (libgcswalk's 1024 frames,
	# perf's 127 entries, raised here as the man page says) is recorded
	# whole: 1500 descend frames between main and burn.
	max_stack=$(cat /proc/sys/kernel/perf_event_max_stack)
	echo 4096 >/proc/sys/kernel/perf_event_max_stack
	status_is 0 "record a chain 1500 frames deep" \
		rec -q -F 99 --gcs-tunable 3 -o depth.data -- /opt/gcsprof/bench/bench-depth 1 1500
	echo "$max_stack" >/proc/sys/kernel/perf_event_max_stack
	status_is 0 "report folded (depth)" gcsprof report depth.data --format folded -o depth.folded
	deepest=$(awk -F';' '/;burn( |;)/ { n = 0; for (i = 1; i <= NF; i++) if ($i == "descend") n++
		if (n > m) m = n } END { print m + 0 }' depth.folded)
	check "the deepest chain holds all 1500 descend frames ($deepest)" [ "$deepest" = 1500 ]
	check "and no chain is marked cut ($(cut_samples depth.data))" [ "$(cut_samples depth.data)" -eq 0 ]
	if [ "$want_method" = perf ]; then
		check "the profile gives the raised limit" in_profile depth.data -qx 'max-stack 4096 sysctl'
	fi
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
	status_is 0 "speedscope and Firefox Profiler files" sh -c 'gcsprof report threads.data -f speedscope \
		-o threads.speedscope.json && gcsprof report threads.data -f firefox -o threads.firefox.json'
	# shellcheck disable=SC2016 # the inner shell expands it
	check "each worker a speedscope profile and a Firefox Profiler thread, by name" sh -c 'for w in \
		worker-1 worker-2 worker-3; do grep -q "\"name\":\"$w (tid [0-9]*)\"" threads.speedscope.json &&
		grep -q "{\"name\":\"$w\"," threads.firefox.json || exit 1; done'
}

# A status line on a terminal, none elsewhere.
t_status_line() {
	status_is 0 "record with stderr not a terminal" \
		rec --gcs-tunable 3 -o notty.data -- $T/gcsprof-split 1
	check "no status line when stderr is not a terminal" sh -c '! grep -q "samples/s" err.txt'
	if command -v script >/dev/null; then
		script -qec "gcsprof record ${M:+--method $M} --gcs-tunable 3 -o tty.data -- $T/gcsprof-split 2" \
			tty.log >/dev/null 2>&1
		check "a status line on a terminal" grep -q 'samples/s' tty.log
	fi
}

t_cpu_share() {
	# A CPU profile's samples stand for CPU time: with 16 busy threads on
	# the guest's CPUs, as many as the CPU time used at -F 99, not one per
	# thread per tick for waiting its turn.
	status_is 0 "record 16 busy threads" \
		rec -q -F 99 --gcs-tunable 3 -o t16.data -- $T/gcsprof-threads 3 16
	cpu=$(sed -n 's/^threads: done, cpu \([0-9.]*\) s$/\1/p' out.txt)
	got=$(in_profile t16.data -c '^sample ')
	want=$(awk -v c="${cpu:-0}" 'BEGIN { printf "%d", c * 99 }')
	echo "# 16 threads: $got samples for ${cpu:-?} s of CPU time ($want at 99 Hz)"
	check "no more samples than the CPU time used (1.25 times $want: $got)" \
		[ "$want" -gt 0 -a $((got * 100)) -le $((want * 125)) ]
	# The lower bound is a rate: on the debug kernel (vm/run says so on
	# the command line) a ptrace stop costs more than the 10 ms tick.
	if on_debug_kernel; then
		skip "the debug kernel: sampling cannot keep up with 99 Hz there ($got of $want)"
	else
		check "and at least 0.4 times as many ($got)" [ $((got * 100)) -ge $((want * 40)) ]
	fi
}

t_signals() {
	status_is 3 "signals delivered, exit status 3 passed through" \
		rec -q --gcs-tunable 3 -o signals.data -- $T/gcsprof-signals
	check "the command's output says all 10 signals arrived" grep -q '10 of 10' out.txt
	status_is 143 "death by SIGTERM passed through as 128+15" \
		rec -q --gcs-tunable 3 -o signals2.data -- $T/gcsprof-signals kill
	status_is 0 "the profile of a killed command is complete" gcsprof report signals2.data -o /dev/null
	GLIBC_TUNABLES=$GCS3 status_is 3 "a user's GLIBC_TUNABLES is kept" \
		rec -q -o signals3.data -- $T/gcsprof-signals
}

t_fork() {
	# The forked child (its own process, named forked-child) is sampled
	# too, with chains from its main into child_work.
	GLIBC_TUNABLES=$GCS3 status_is 3 "record a command that forks" \
		rec -q -o signals3.data -- $T/gcsprof-signals
	status_is 0 "report of a command that forks" \
		gcsprof report signals3.data --per-thread -o signals3.txt
	grep '^## thread' signals3.txt | show
	parent=$(sed -n 's/^## thread \([0-9]*\) (gcsprof-signals) of process \1:.*/\1/p' signals3.txt)
	child=$(sed -n 's/^## thread [0-9]* (forked-child) of process \([0-9]*\): \([0-9]*\) samples/\1 \2/p' \
		signals3.txt)
	# shellcheck disable=SC2086 # two words, split on purpose
	set -- $child
	check "the forked child is in the report as a process of its own (${1:-none} vs ${parent:-none})" \
		[ -n "${1:-}" -a -n "$parent" -a "${1:-0}" != "$parent" ]
	check "with samples (${2:-0})" [ "${2:-0}" -ge 5 ]
	status_is 0 "folded --per-thread" \
		gcsprof report signals3.data --per-thread -f folded -o signals3.folded
	check "the child's chains run from main into child_work" \
		grep -qE '^forked-child;(.*;)?main;child_work( |;)' signals3.folded
}

t_exec() {
	# A shell that runs the workload, then execs it: every program's
	# chains are symbolised through libc, however early in its life
	# (ld.so still mapping libraries) its first sample came. A frame in
	# no recorded file shows as [0x...]; only a leaf may (the vDSO).
	status_is 0 "record a shell that runs the workload, then execs it" \
		rec -q -F 250 --gcs-tunable 3 -o exec.data -- \
		sh -c "$T/gcsprof-split 1; exec $T/gcsprof-split 1"
	status_is 0 "report it folded" gcsprof report exec.data -f folded -o exec.folded
	grep -E '\[0x[0-9a-f]+\];' exec.folded | head -n 3 | show
	lost=$(grep -E '\[0x[0-9a-f]+\];' exec.folded | awk '{ s += $NF } END { print s + 0 }')
	check "no frame but the innermost is outside every recorded file ($lost samples)" \
		[ "$lost" -eq 0 ]
	check "the workload's chains run from _start through libc into the paths" \
		grep -qE '^_start;__libc_start_main;(.*;)?main;path_a;' exec.folded
}

t_interrupt() {
	# A signal to gcsprof alone ends the recording and reaches the command.
	# (SIGTERM: a background job of a script ignores SIGINT, and so would
	# the command, as it would without gcsprof.)
	start=$(date +%s)
	gcsprof record ${M:+--method "$M"} -q --gcs-tunable 3 -o int.data -- \
		$T/gcsprof-split 60 >/dev/null &
	rec=$!
	# Once samples are in the file (the debug kernel takes long to start).
	wait_for_samples int.data
	sleep 1
	kill -TERM $rec
	wait $rec
	rc=$? took=$(($(date +%s) - start))
	check "SIGTERM ends the recording and the command, status 143 ($rc after ${took}s)" \
		[ "$rc" -eq 143 -a "$took" -lt 40 ]
	status_is 0 "the interrupted profile is complete" gcsprof report int.data -o int.txt
	check "and has samples" grep -q path_a int.txt
}

t_attach() {
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 60 >/dev/null &
	target=$!
	sleep 1
	gcsprof record ${M:+--method "$M"} -q -p $target -o attach.data 2>attach.err &
	rec=$!
	sleep 4
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
	kill $target
	wait $target 2>/dev/null
}

t_attach_signals() {
	# Signals sent to an attached target all arrive, each exactly once
	# (real-time signals queue, so the target can count them): first a
	# stream of them while the recorder samples, then five while the
	# recorder is stopped, which leave the target in a signal-delivery-stop
	# nobody answers until the recorder, continued with SIGINT pending,
	# answers it and detaches.
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-sigcount >sigcount.out &
	target=$!
	sleep 1
	sig=$(sed -n 's/^signal //p' sigcount.out)
	gcsprof record ${M:+--method "$M"} -q -F 10 -p $target -o sigs.data 2>sigs.err &
	rec=$!
	sleep 1
	rm -f sender.stop
	(
		sent=0
		while [ ! -e sender.stop ]; do
			kill -"${sig:-34}" $target 2>/dev/null && sent=$((sent + 1))
		done
		echo "$sent" >sender.sent
	) &
	sender=$!
	sleep 2
	: >sender.stop
	wait $sender
	sent=$(cat sender.sent)
	kill -STOP $rec
	sleep 1
	for i in 1 2 3 4 5; do kill -"${sig:-34}" $target && sent=$((sent + 1)); done
	sleep 1
	kill -INT $rec
	kill -CONT $rec
	wait $rec
	rc=$?
	check "record -p under a stream of signals ends with status 0 ($rc)" [ "$rc" -eq 0 ]
	show sigs.err
	check "the target is not traced any more" \
		grep -q '^TracerPid:[[:space:]]*0$' /proc/$target/status
	# The kernel delivers lower-numbered signals first, so SIGUSR2 would
	# overtake real-time signals still queued (a fast sender on a busy
	# host left thousands): let the target take them all first.
	i=0
	while grep -qE '^(ShdPnd|SigPnd):[[:space:]]*0*[1-9a-f]' /proc/$target/status &&
		[ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -USR2 $target
	wait $target
	show sigcount.out
	check "all $sent signals sent arrived, across the detach" grep -q "^sigcount: $sent\$" sigcount.out
	status_is 0 "the profile taken under signals reports" gcsprof report sigs.data -o sigs.txt
	check "with the target's loop in it" grep -q count_loop sigs.txt
}

t_wall() {
	status_is 0 "record --wall" gcsprof record -q --wall --gcs-tunable 3 -o wall.data -- \
		$T/gcsprof-sleeper 3
	status_is 0 "folded" gcsprof report wall.data -f folded -o wall.folded
	status_is 0 "record (cpu)" gcsprof record -q --gcs-tunable 3 -o cpu.data -- \
		$T/gcsprof-sleeper 3
	status_is 0 "folded" gcsprof report cpu.data -f folded -o cpu.folded
	sum() { awk '{ s += $NF } END { print s + 0 }'; }
	ws=$(grep 'sleep_here' wall.folded | sum) wt=$(sum <wall.folded)
	cs=$(grep 'sleep_here' cpu.folded | sum) ct=$(sum <cpu.folded)
	echo "# sleeping thread: $ws of $wt samples with --wall, $cs of $ct without"
	check "--wall sees the sleeping thread (a third or more of the samples)" \
		[ "$wt" -gt 0 -a $((ws * 3)) -ge "$wt" ]
	check "the CPU profile sees it at most half as much" \
		[ "$ct" -gt 0 -a $((cs * wt * 2)) -le $((ws * ct)) ]
	check "states are recorded (S)" in_profile wall.data -q '^sample [0-9]* [0-9]* [0-9]* S '
}

t_smash() {
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GLIBC_TUNABLES=$GCS3 exec $T/gcsprof-smash) >smash.out 2>&1
	rc=$?
	check "the smashed program dies of SIGSEGV ($rc)" [ "$rc" -eq 139 ]
	core=$(first_core)
	check "it dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] || return
	status_is 0 "inspect the core" gcsprof inspect "$core"
	show out.txt
	check "inspect names the GCS fault" grep -q 'SEGV_CPERR' out.txt
	check "inspect reports the corruption" grep -q 'STACK CORRUPTION' out.txt
	check "the true chain: level2, level1, main in order" \
		sh -c "grep -o ' level2\| level1\| main' out.txt | tr -d ' ' | tr '\n' ' ' |
			grep -q 'level2 level1 main'"
	check "with source lines" grep -q 'level1.* at .*smash.c:[0-9]' out.txt
	env -u GLIBC_TUNABLES gdb -q -batch -ex bt $T/gcsprof-smash "$core" >gdb.txt 2>&1
	show gdb.txt | tail -n 8
	if grep -q 'level1' gdb.txt; then
		echo "# note: gdb's bt found level1 on this core too"
	else
		ok "gdb's bt on the same core does not reach level1 (the stack is overwritten)"
	fi
	mkdir -p /share/smash 2>/dev/null && cp "$core" /share/smash/core 2>/dev/null &&
		cp $T/gcsprof-smash /share/smash/ 2>/dev/null
}

t_deep_core() {
	# A healthy program's deep core: abort() 2000 calls down. Every frame
	# is accounted for, the recursion in one line, and nothing is called
	# corruption; --max-frames cuts and says what it cut.
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GLIBC_TUNABLES=$GCS3 exec $T/gcsprof-deep 2000) >/dev/null 2>&1
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
		status_is 0 "inspect --max-frames 100" gcsprof inspect --max-frames 100 deep.core
		check "says what it cut" grep -qE '[0-9]+ more frames not shown \(--max-frames 100\)' out.txt
	fi
}

t_errors() {
	[ -f split.data ] ||
		gcsprof record -q --gcs-tunable 3 -o split.data -- $T/gcsprof-split 1 >/dev/null
	status_is 65 "nonexistent pid" rec -p 999999 -o e.data
	status_is 65 "status of a nonexistent pid" gcsprof status 999999
	sleep 30 &
	s=$!
	status_is 67 "target without GCS" rec -p $s -o e.data
	status_is 66 "not permitted" setpriv --reuid=65534 --regid=65534 --clear-groups \
		/opt/gcsprof/bin/gcsprof record ${M:+--method $M} -p $s -o /tmp/e.data
	kill $s
	status_is 72 "unwritable output" rec -o /proc/nonexistent/x -- true
	status_is 72 "unwritable report output" gcsprof report split.data -o /proc/nonexistent/x
	printf 'hello\n' >bad.data
	status_is 69 "bad profile" gcsprof report bad.data
	head -c $(($(wc -c <split.data) / 2)) split.data >trunc.data
	status_is 70 "truncated profile" gcsprof report trunc.data
	status_is 71 "bad core" gcsprof inspect bad.data
	status_is 75 "missing profile" gcsprof report /nonexistent
	status_is 127 "command not found" rec -o e.data -- /nonexistent/program
}

t_fallback() {
	status_is 0 "--fallback fp samples a process without GCS" \
		rec --fallback fp -o fb.data -- $T/gcsprof-split 2
	check "and says so once" [ "$(grep -c 'without GCS' err.txt)" -eq 1 ]
	check "its samples are marked as fallback" in_profile fb.data -qE '^sample .* f [0-9-]+ [0-9-]+ [0-9]+$'
	status_is 0 "--fallback cfi samples it with DWARF CFI (through ptrace)" \
		gcsprof record -q --fallback cfi -o cfi.data -- $T/gcsprof-split 2
	check "the profile says ptrace" in_profile cfi.data -qx 'method ptrace'
	status_is 0 "its report" gcsprof report cfi.data -f folded -o cfi.folded
	check "CFI finds main under the paths" grep -qE '(^|;)main;path_a;burn_a' cfi.folded
	status_is 0 "without --fallback the same is skipped, and counted" \
		rec -o nofb.data -- $T/gcsprof-split 2
	check "counted as no-gcs" in_profile nofb.data -q '^lost no-gcs [1-9]'
}

t_args() {
	status_is 0 "the command gets its arguments and nothing more" \
		rec -q -F 50 -o e.data -- /bin/echo one two
	check "exactly them" [ "$(cat out.txt)" = "one two" ]
}

t_usage() {
	status_is 64 "usage error" gcsprof record --frobnicate
	check "each error is one line" [ "$(wc -l <err.txt)" -eq 1 ]
}

t_status() {
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 30 >/dev/null &
	s=$!
	sleep 1
	status_is 0 "status of a GCS process" gcsprof status $s
	show out.txt
	check "status shows GCS on" grep -q ' on ' out.txt
	check "and the method record would use by default ($auto_method)" \
		grep -q "^record would sample with $auto_method" out.txt
	kill $s
}

# The perf method's own tests (perf_*) run where record's default method
# is perf; elsewhere they say why not and skip.
need_perf() {
	[ "$want_method" = perf ] && return 0
	skip "record samples with $want_method here (the kernel takes no GCS call chains)"
	return 1
}

# The choice of method: perf where the kernel takes GCS call chains,
# ptrace elsewhere and for what perf cannot do (--wall).
t_perf_method() {
	if [ "$want_method" != perf ]; then
		status_is 74 "--method perf where the kernel takes no GCS call chains" \
			gcsprof record --method perf -o e.data -- true
		check "in one line" [ "$(wc -l <err.txt)" -eq 1 ]
		show err.txt
		status_is 0 "auto records with ptrace" rec -q --gcs-tunable 3 -o auto.data -- \
			$T/gcsprof-split 1
		check "and says why, once" [ "$(grep -c 'sampling with ptrace' err.txt)" -eq 1 ]
		check "the profile says ptrace" in_profile auto.data -qx 'method ptrace'
		return
	fi
	status_is 74 "--method perf --wall is refused" \
		gcsprof record --method perf --wall -o e.data -- true
	status_is 0 "--wall alone records with ptrace" \
		gcsprof record -q --wall --gcs-tunable 3 -o w.data -- $T/gcsprof-split 1
	check "and the profile says so" in_profile w.data -qx 'method ptrace'
	check "without a warning (it is documented)" sh -c '! grep -q warning err.txt'
}

# -p with perf: the target is never stopped or traced.
t_perf_attach() {
	need_perf || return
	# -p: the target is never stopped or traced while it is sampled.
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 30 >/dev/null &
	target=$!
	sleep 1
	gcsprof record -q -p $target -o p.data 2>p.err &
	rec=$!
	traced=0 stopped=0 i=0
	# Each look reads the status once: a target gone since is no look.
	while [ $i -lt 40 ] && st=$(cat /proc/$target/status 2>/dev/null) && [ -n "$st" ]; do
		printf '%s\n' "$st" | grep -q '^TracerPid:[[:space:]]*0$' || traced=$((traced + 1))
		printf '%s\n' "$st" | grep -q '^State:[[:space:]]*[tT]' && stopped=$((stopped + 1))
		i=$((i + 1))
		sleep 0.05
	done
	kill -INT $rec
	wait $rec
	rc=$?
	check "record -p ends on SIGINT ($rc)" [ "$rc" -eq 0 ]
	check "the target was never traced ($traced of $i looks)" [ "$traced" -eq 0 -a "$i" -gt 0 ]
	check "nor stopped ($stopped of $i looks)" [ "$stopped" -eq 0 ]
	status_is 0 "the perf -p profile reports" gcsprof report p.data -o p.txt
	check "with path_a" grep -q path_a p.txt
	check "and method perf" in_profile p.data -qx 'method perf'
	kill $target
	wait $target 2>/dev/null

}

# A recorder that cannot keep up: what the kernel could not write is counted.
t_perf_lost() {
	need_perf || return
	# A recorder that cannot keep up: stopped for 3 s while 8 threads
	# fill its small rings (8 pages) at 2000 Hz. What the kernel could
	# not write is counted, and what it wrote is kept.
	gcsprof record -q -F 2000 -m 8 --gcs-tunable 3 -o lost.data -- $T/gcsprof-threads 5 8 \
		>/dev/null 2>lost.err &
	rec=$!
	sleep 1
	kill -STOP $rec
	sleep 3
	kill -CONT $rec
	wait $rec
	rc=$?
	check "the stopped recorder's run ends with status 0 ($rc)" [ "$rc" -eq 0 ]
	show lost.err
	in_profile lost.data '^lost ring-overrun' | show
	check "the ring overruns are counted" in_profile lost.data -qE '^lost ring-overrun [1-9]'
	status_is 0 "and the profile reports" gcsprof report lost.data -o lost.txt
	check "naming the loss" grep -q 'ring-overrun' lost.txt

}

# perf's own tool gets the GCS chains.
t_perf_tool() {
	need_perf || return
	# perf's own tool on this kernel: perf record -g gets the GCS chains
	# of a program without frame pointers, exact frame by frame; with the
	# kernel told to walk frame records instead, they are not.
	for gcs in 1 0; do
		echo $gcs >/proc/sys/kernel/perf_callchain_gcs
		perf record -q -e cycles:u -g -F 499 -o perf$gcs.data -- \
			env GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 2 >/dev/null 2>&1
		perf script -i perf$gcs.data -D --no-inline -F ip,sym,dso >perf$gcs.dump 2>/dev/null
		perf_chains perf$gcs.dump >perf$gcs.chains
	done
	echo 1 >/proc/sys/kernel/perf_callchain_gcs
	# The kernel's chains through the split's paths: from _start through
	# libc (its __libc_start_call_main has no symbol in Debian's libc)
	# into main, one path, and that path's burn unless the sample fell in
	# the path itself.
	exact='^_start;__libc_start_main;\[libc\.so\.6\];main;path_(a(;burn_a)?|b(;burn_b)?)$'
	n=$(in_paths perf1.chains | wc -l)
	x=$(in_paths perf1.chains | grep -cE "$exact")
	in_paths perf1.chains | grep -vE "$exact" | sort | uniq -c | sort -rn | head -n 5 | show
	# At least 40 in the paths: a loaded host gives the guest fewer
	# cycles (94 at load 25, where every one was exact).
	check "perf record -g: every chain in the paths is exact, frame by frame ($x of $n)" \
		[ "$n" -ge 40 -a "$x" -eq "$n" ]
	# perf script prints the kernel's chain, but for a leaf's caller that
	# its arm64 unwinder adds (for the frame-record walk, which misses it)
	# and the GCS already has: that frame twice, nothing else changed.
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(awk -F'|' '$1 ~ /(^|;)(path|burn)_[ab]$/ { n = split($1, k, ";")
		twice = ""; for (i = 1; i < n; i++) twice = twice k[i] ";"
		twice = twice k[n - 1] ";" k[n]
		if ($2 == $1) same++; else if (n > 1 && $2 == twice) dup++; else other++ }
		END { print same + 0, dup + 0, other + 0 }' perf1.chains)
	check "perf script prints those chains ($1 as they are, $2 with the leaf's caller twice, $3 otherwise)" \
		[ "$3" -eq 0 -a $(($1 + $2)) -eq "$n" ]
	n=$(in_paths perf0.chains | wc -l)
	x=$(in_paths perf0.chains | grep -cE "$exact")
	check "with kernel.perf_callchain_gcs=0 they are not ($x of $n exact)" [ "$n" -ge 40 -a "$x" -lt "$n" ]

}

# kernel.perf_callchain_gcs off: refused, or ptrace, and said.
t_perf_sysctl() {
	need_perf || return
	# gcsprof with kernel.perf_callchain_gcs=0: its chains would be frame
	# records, labelled by nothing in a sample (the GCSPR is still there),
	# so --method perf is refused, saying how to turn it on, and auto
	# samples with ptrace, saying why once.
	echo 0 >/proc/sys/kernel/perf_callchain_gcs
	status_is 74 "--method perf with kernel.perf_callchain_gcs=0 is refused" \
		gcsprof record --method perf --gcs-tunable 3 -o off0.data -- $T/gcsprof-split 1
	show err.txt
	check "in one line" [ "$(wc -l <err.txt)" -eq 1 ]
	check "saying why and how to turn it on" \
		grep -q 'kernel.perf_callchain_gcs is 0: .*sysctl -w kernel.perf_callchain_gcs=1' err.txt
	check "and the command is not run" sh -c '! grep -q "^split:" out.txt'
	status_is 0 "auto records it with ptrace" gcsprof record -q --gcs-tunable 3 -o off0.data -- \
		$T/gcsprof-split 1
	check "saying why, once" [ "$(grep -c 'sampling with ptrace.*perf_callchain_gcs is 0' err.txt)" -eq 1 ]
	check "the profile says ptrace" in_profile off0.data -qx 'method ptrace'
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 5 >/dev/null &
	s=$!
	sleep 1
	status_is 0 "status of a GCS process" gcsprof status $s
	check "says record would use ptrace, and why" \
		grep -q '^record would sample with ptrace .*perf_callchain_gcs is 0' out.txt
	kill $s
	wait $s 2>/dev/null
	echo 1 >/proc/sys/kernel/perf_callchain_gcs
	# Turned off during a recording: read once at the start, the change
	# is not tracked, but record says so at the end.
	gcsprof record -q --gcs-tunable 3 -o mid.data -- $T/gcsprof-split 3 >/dev/null 2>mid.err &
	rec=$!
	wait_for_samples mid.data
	echo 0 >/proc/sys/kernel/perf_callchain_gcs
	wait $rec
	rc=$?
	echo 1 >/proc/sys/kernel/perf_callchain_gcs
	show mid.err
	check "turned off mid-recording: the recording ends with status 0 ($rc)" [ "$rc" -eq 0 ]
	check "and says the change was not tracked" \
		grep -q 'perf_callchain_gcs was set to 0 during the recording: it is read once' mid.err

}

# Chains cut at the kernel's depth limit: marked, counted, said.
t_perf_cut() {
	need_perf || return
	# A recursion deeper than the kernel's limit (kernel.perf_event_max_stack,
	# the default here): its chains are cut there; record marks and counts
	# them, and the report says how many, at what depth, and what to raise.
	max_stack=$(cat /proc/sys/kernel/perf_event_max_stack)
	status_is 0 "record a recursion 300 frames deep (limit $max_stack)" \
		rec -q -F 99 --gcs-tunable 3 -o cut.data -- /opt/gcsprof/bench/bench-depth 2 300
	show err.txt
	check "the profile gives the limit" in_profile cut.data -qx "max-stack $max_stack sysctl"
	total=$(in_profile cut.data -c '^sample ')
	ncut=$(cut_samples cut.data)
	# A sample's chain depth: its stack node's (sample TIME PID TID STATE
	# ASID NAME FLAGS CPU WEIGHT STACK; a node one deeper than its parent).
	long=$(zcat -f cut.data | awk '$1 == "stack" { d[++n] = d[$2] + 1 }
		$1 == "sample" && $8 ~ /c/ && d[$11] == '"$max_stack"' { c++ } END { print c + 0 }')
	check "the chains in the recursion are marked cut ($ncut of $total)" \
		[ "$total" -ge 50 -a $((ncut * 10)) -ge $((total * 9)) ]
	check "each at the limit, $max_stack frames ($long of $ncut)" [ "$ncut" -gt 0 -a "$long" -eq "$ncut" ]
	check "record says how many were cut" \
		grep -q "warning: $ncut of $total samples have chains cut at $max_stack frames (kernel.perf_event_max_stack" err.txt
	status_is 0 "report it" gcsprof report cut.data -o cut.txt
	show cut.txt | head -n 6
	check "the report says how many were cut, at what depth" \
		grep -q "^# cut: $ncut of $total samples ([0-9.]*%) have chains that reached the limit of $max_stack frames" cut.txt
	check "and how to raise the limit" grep -q '^# cut: .*sysctl -w kernel.perf_event_max_stack=N' cut.txt

}

# The kernel's throttling: counted in the profile, said by the report.
t_perf_throttle() {
	need_perf || return
	# The kernel throttles an event that takes more samples a tick than
	# kernel.perf_event_max_sample_rate allows: lowered to 100 while
	# record samples at 2000 Hz, every tick is throttled. record counts
	# the throttling in the profile, and the report says so.
	rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	gcsprof record -q -F 2000 --gcs-tunable 3 -o thr.data -- $T/gcsprof-split 4 >/dev/null 2>thr.err &
	rec=$!
	wait_for_samples thr.data
	echo 100 >/proc/sys/kernel/perf_event_max_sample_rate
	sleep 1
	echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
	wait $rec
	rc=$?
	show thr.err
	in_profile thr.data '^throttle' | show
	check "the throttled recording ends with status 0 ($rc)" [ "$rc" -eq 0 ]
	check "the profile counts the throttling" in_profile thr.data -qE '^throttle [1-9][0-9]* [0-9]+$'
	status_is 0 "report it" gcsprof report thr.data -o thr.txt
	check "the report's header says so" grep -q '^# throttled: the kernel paused sampling [1-9][0-9]* times' thr.txt
	status_is 0 "record the workload at the default rate" \
		rec -q --gcs-tunable 3 -o plain.data -- $T/gcsprof-split 1
	check "and so does every perf recording, throttled or not" in_profile plain.data -qE '^throttle [0-9]+ [0-9]+$'

}

# A thread that turns GCS off part-way.
t_perf_gcsoff() {
	need_perf || return
	# A thread that turns GCS off part-way: its later samples are
	# counted as without GCS, or labelled as fallback chains.
	status_is 0 "record a program that turns GCS off" \
		rec -q --gcs-tunable 0 -o off.data -- $T/gcsprof-gcsoff 1
	status_is 0 "report it" gcsprof report off.data -f folded -o off.folded
	check "the half with GCS is there" grep -q ';with_gcs' off.folded
	check "the half without is not" sh -c '! grep -q without_gcs off.folded'
	check "it is counted as no-gcs" in_profile off.data -qE '^lost no-gcs [1-9]'
	status_is 0 "the same with --fallback fp" \
		rec -q --fallback fp --gcs-tunable 0 -o offfp.data -- $T/gcsprof-gcsoff 1
	check "the fallback samples are labelled" in_profile offfp.data -qE '^sample .* f [0-9-]+ [0-9-]+ [0-9]+$'

}

# An unprivileged user: perf where perf_event_paranoid allows it.
t_perf_user() {
	need_perf || return
	# An unprivileged user samples its own command through perf
	# (perf_event_paranoid 2), with rings that fit its locked-memory
	# allowance; at 3 (Debian's "no perf for users") record falls back to
	# ptrace, saying why, and --method perf is refused as not permitted.
	u="setpriv --reuid=65534 --regid=65534 --clear-groups"
	out=/tmp/gcsprof-user.$$.data
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	# shellcheck disable=SC2086 # $u is a command and its arguments
	status_is 0 "an unprivileged user records with perf" \
		$u /opt/gcsprof/bin/gcsprof record -q --gcs-tunable 3 -o "$out" -- $T/gcsprof-split 1
	check "its profile says method perf" in_profile "$out" -qx 'method perf'
	echo 3 >/proc/sys/kernel/perf_event_paranoid
	# shellcheck disable=SC2086 # $u is a command and its arguments
	status_is 66 "--method perf when perf_event_paranoid forbids it" \
		$u /opt/gcsprof/bin/gcsprof record --method perf -o "$out" -- $T/gcsprof-split 1
	show err.txt
	# shellcheck disable=SC2086 # $u is a command and its arguments
	status_is 0 "auto falls back to ptrace" \
		$u /opt/gcsprof/bin/gcsprof record -q --gcs-tunable 3 -o "$out" -- $T/gcsprof-split 1
	check "saying why, once" [ "$(grep -c 'sampling with ptrace.*perf_event_paranoid' err.txt)" -eq 1 ]
	check "its profile says method ptrace" in_profile "$out" -qx 'method ptrace'
	echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
	rm -f $out

}

# Hundreds of programs, then the workload.
t_perf_many() {
	need_perf || return
	# A command that runs hundreds of programs, then execs the workload.
	status_is 0 "record a shell running 200 programs" \
		rec -q --gcs-tunable 3 -o many.data -- \
		sh -c "i=0; while [ \$i -lt 200 ]; do /bin/true; i=\$((i + 1)); done; exec $T/gcsprof-split 1"
	status_is 0 "its profile reports" gcsprof report many.data -f folded -o many.folded
	check "with the workload's chains" grep -qE '(^|;)main;path_a;' many.folded
}

# For the host test: a profile and a core, with the files they map, in
# /share (vm/run --share brings them back).
t_for_host() {
	status_is 0 "record for the host" \
		gcsprof record -q -F 250 --gcs-tunable 3 -o /share/split.data -- $T/gcsprof-split 6
	gcsprof report /share/split.data -o /share/split.guest.txt
	gcsprof report /share/split.data -f folded -o /share/split.guest.folded
	status_is 0 "archive it" gcsprof archive /share/split.data -o /share/split.archive
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GLIBC_TUNABLES=$GCS3 exec $T/gcsprof-smash) >/dev/null 2>&1
	core=$(first_core)
	check "a core for the host" [ -n "$core" ]
	[ -n "$core" ] && cp "$core" /share/smash.core
	gcsprof inspect /share/smash.core >/share/smash.guest.txt 2>&1
	# The mapped files, under /share/root as the sysroot; the library by
	# its soname and the file it names, whatever the version.
	for f in $(zcat -f /share/split.data | sed -n 's/^mapping .* \([^ ]*\)$/\1/p' | sort -u) \
		$T/gcsprof-smash /opt/gcsprof/lib/libgcswalk.so.*; do
		[ -f "$f" ] || continue
		mkdir -p "/share/root$(dirname "$f")" && cp "$f" "/share/root$f"
	done
	check "libgcswalk is among the files for the host" \
		sh -c 'ls /share/root/opt/gcsprof/lib/libgcswalk.so.* >/dev/null 2>&1'
	share_libc
}

groups="split vdso depth threads status_line cpu_share signals fork exec interrupt attach"
groups="$groups attach_signals wall smash deep_core errors fallback args usage status"
groups="$groups perf_method perf_attach perf_lost perf_tool perf_sysctl perf_cut perf_throttle"
groups="$groups perf_gcsoff perf_user perf_many"
# shellcheck disable=SC2046 # group names, split on purpose
set -- $(echo "$@" | tr '-' '_')
tap_groups "$groups" "$@"
