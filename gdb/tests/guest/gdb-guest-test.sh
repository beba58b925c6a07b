#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# GDB's $ variables and the regexps matching them are single-quoted on purpose.
# shellcheck disable=SC2016
# $T is a fixed path without spaces.
# shellcheck disable=SC2086
# The GDB plugin in the guest's GDB 18, one group per argument (or "all"),
# TAP output: live processes (run to a breakpoint, attach, a signal), cores
# (threads, the stack smash, a deep recursion) against gcsprof inspect, the
# inspect corpus's overwritten frame records and GCS switch, a program
# without GCS (live and a core), and the one-line errors. Exit: 0 all passed, 1 a
# failure, 4 skipped (no GCS in this CPU or kernel).
#
# The workloads are built by GCC 12, which does not mark them as GCS
# compatible, so they run with glibc.cpu.aarch64_gcs=3 (GCS forced). GDB
# itself runs with the tunable unset (python3 is not GCS compatible) and
# passes it to the program with `set environment`.
set -u
T=/opt/gcsprof/tests
C=$T/corpus
PLUGIN=/opt/gcsprof/share/gcsprof/gdb/gcs.py
GCS3=glibc.cpu.aarch64_gcs=3
work=${GCSPROF_TEST_DIR:-/tmp/gdb-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../../tests/tap.sh
. "$T/tap.sh"
# shellcheck source=../chain-compare.sh
. "$T/gdb-chain-compare.sh"

# The guest root has busybox's cmp and diff, not diffutils.
command -v cmp >/dev/null || cmp() { busybox cmp "$@"; }
command -v diff >/dev/null || diff() { busybox diff "$@"; }

if ! grep -qw gcs /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU or kernel has no GCS (no gcs in /proc/cpuinfo)"
	exit 4
fi

# gdb -batch with the plugin loaded; output in the file named first.
g() {
	out=$1
	shift
	env -u GLIBC_TUNABLES gdb -q -nx -batch -ex "source $PLUGIN" "$@" >"$out" 2>&1
}

# Run CMD with GCS on until it dies; its core becomes NAME.core.
dump_core() { # dump_core NAME CMD...
	name=$1
	shift
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GLIBC_TUNABLES=$GCS3 exec "$@") >/dev/null 2>&1
	core=$(first_core)
	check "$name: the program dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] && mv "$core" "$name.core"
}

# Whether the words of $1 begin with the (non-empty) words of $2.
starts_with() { [ -n "$2" ] && [ "${1#"$2"}" != "$1" ]; }

# No Python traceback reaches the user, and each gcs error is one line.
no_traceback() {
	check "no Python traceback in $1" sh -c "! grep -q 'Traceback\|File \"' $1"
}

t_live() {
	g live.txt -ex "set environment GLIBC_TUNABLES=$GCS3" -ex 'break stop_here' -ex run \
		-ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' -ex 'gcs status' -ex 'gcs bt 3' \
		-ex 'gcs bt 2 -full' -ex 'echo ==bt==\n' -ex bt \
		-ex 'enable frame-filter global gcs' -ex 'echo ==filtered==\n' -ex bt \
		--args $T/gdb-chain break
	show live.txt
	names=$(frames_of live.txt)
	check "gcs bt: the known chain stop_here chain_c chain_b chain_a main" \
		sh -c "echo '$names' | grep -q '^stop_here chain_c chain_b chain_a main '"
	check "with source lines" grep -q '#1 .* chain_c+0x[0-9a-f]* at .*chain.c:[0-9]' live.txt
	sed -n '/^==bt==/,/^==filtered==/p' live.txt >bt.txt
	sed -n '/^==filtered==/,$p' live.txt >filtered.txt
	gdbnames=$(bt_frames_of bt.txt)
	ours=$(sed -n '1,/^==bt==/p' live.txt | sed -n '/frames from the GCS/,/: GDB.s unwind/p' |
		sed -n 's/^  #[0-9]* *0x[0-9a-f]* \([^ +]*\).*/\1/p' | tr '\n' ' ')
	# GDB's bt stops at main (backtrace past-main is off); the GCS goes on.
	check "the same functions as GDB's bt, frame for frame ($gdbnames)" \
		starts_with "$ours" "$gdbnames"
	check "gcs verify agrees" grep -q ': agree$' live.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' live.txt
	check "gcs status: enabled" grep -q '^  enabled   yes' live.txt
	# glibc (glibc.cpu.aarch64_gcs=3) turns GCS on, neither push nor
	# write, and locks it, the enable bit among the locked ones.
	check "gcs status: locked, enable among the locked features" \
		grep -q '^  locked    0x[0-9a-f]* (enable[,)]' live.txt
	check "gcs status: push no" grep -qx '  push      no' live.txt
	check "gcs status: write no" grep -qx '  write     no' live.txt
	# The PC in stop_here, then the returns into chain_c, chain_b,
	# chain_a, main, libc's __libc_start_call_main and __libc_start_main,
	# and _start: what gcs bt counts too.
	n=$(sed -n 's/^thread 1 (LWP [0-9]*): \([0-9]*\) frames from the GCS .*/\1/p' live.txt | head -n 1)
	check "gcs status: depth 8 frames, 7 return addresses, as gcs bt counts (${n:-none})" \
		sh -c "grep -qx '  depth     8 frames (7 return addresses on the GCS)' live.txt && [ '${n:-0}' = 8 ]"
	check "gcs status: the GCS mapping" grep -q '^  mapping   0x' live.txt
	gcspr=$(sed -n 's/^  GCSPR     \(0x[0-9a-f]*\)$/\1/p' live.txt)
	lo=$(sed -n 's/^  mapping   \(0x[0-9a-f]*\)-.*/\1/p' live.txt)
	hi=$(sed -n 's/^  mapping   0x[0-9a-f]*-\(0x[0-9a-f]*\) .*/\1/p' live.txt)
	inside=no
	if [ -n "$gcspr" ] && [ -n "$lo" ] && [ -n "$hi" ] && [ $((gcspr)) -ge $((lo)) ] &&
		[ $((gcspr)) -lt $((hi)) ]; then
		inside=yes
	fi
	check "gcs status: GCSPR inside the mapping ($gcspr in $lo-$hi)" [ "$inside" = yes ]
	# Where GDB's unwind is sound, the frame filter changes nothing.
	check "the gcs frame filter, enabled, leaves a sound bt as it was" \
		[ -n "$gdbnames" -a "$(bt_frames_of filtered.txt)" = "$gdbnames" ]
	check "and adds no frame from the GCS" sh -c '! grep -q "\[from the GCS" filtered.txt'
	check "gcs bt 3 counts the frames it does not show" grep -q 'more frames not shown (gcs bt 3): #3 to' live.txt
	check "gcs bt -full gives the GCS slots" grep -q '^        \[GCS slot 0x[0-9a-f]*, return' live.txt
	no_traceback live.txt

	# Deep in a recursion: the frames folded into one line.
	g deep-live.txt -ex "set environment GLIBC_TUNABLES=$GCS3" -ex 'break recurse if n == 0' \
		-ex run -ex 'gcs bt' -ex 'gcs verify' --args $T/gcsprof-deep 40
	grep -v '^\[' deep-live.txt | head -n 12 | show
	check "40 recursive calls in one line" \
		grep -q 'the same frame 39 more times: #2 to #40, recursion' deep-live.txt
	check "then main (#41)" grep -q '^  #41  0x[0-9a-f]* main' deep-live.txt
	check "gcs verify agrees over the recursion" grep -q ': agree$' deep-live.txt
}

t_attach() {
	GLIBC_TUNABLES=$GCS3 $T/gdb-chain wait >wait.out &
	pid=$!
	i=0
	while ! grep -q ready wait.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# The same GCS state from the ptrace regset (gcsprof status), while
	# the program waits in pause(): locked yes, push off, write off,
	# GCSPR, return addresses.
	gcsprof status "$pid" >status.txt 2>&1
	show status.txt
	# shellcheck disable=SC2046 # the fields, split on purpose
	set -- $(mawk -v p="$pid" '$1 == p { print $4, $5, $6, $7, $8 }' status.txt)
	g attach.txt -p "$pid" -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' -ex 'gcs status'
	show attach.txt
	check "gcs status agrees with gcsprof status: locked (${1:-?})" \
		sh -c "[ '${1:-}' = yes ] && grep -q '^  locked    0x[0-9a-f]* (enable' attach.txt"
	check "push (${2:-?})" sh -c "[ '${2:-}' = off ] && grep -qx '  push      no' attach.txt"
	check "write (${3:-?})" sh -c "[ '${3:-}' = off ] && grep -qx '  write     no' attach.txt"
	check "GCSPR (${4:-?})" grep -qx "  GCSPR     ${4:-none}" attach.txt
	check "return addresses (${5:-?})" grep -q "^  depth     [0-9]* frames (${5:-none} return addresses on the GCS)\$" attach.txt
	names=$(frames_of attach.txt)
	check "after attach: stop_here chain_c chain_b chain_a main in the chain" \
		sh -c "echo '$names' | grep -q ' stop_here chain_c chain_b chain_a main '"
	check "gcs verify agrees" grep -q ': agree$' attach.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' attach.txt
	check "the program runs on after GDB detached" kill -0 "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	no_traceback attach.txt
}

t_signal() {
	g signal.txt -ex "set environment GLIBC_TUNABLES=$GCS3" -ex 'handle SIGUSR1 nostop noprint pass' \
		-ex 'break in_handler' -ex run \
		-ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' --args $T/gdb-chain signal
	show signal.txt
	# GDB unwinds through the signal frame as the GCS records it: its
	# <signal handler called> frame is the trampoline, the next the
	# interrupted PC.
	check "gcs verify agrees through the signal frame" grep -q ': agree$' signal.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' signal.txt
	check "the signal delivery is shown as such" grep -q -- '---- signal delivered here' signal.txt
	names=$(frames_of signal.txt)
	check "in_handler, handler, then the interrupted chain down to main" \
		sh -c "echo '$names' | grep -q '^in_handler handler .* chain_c chain_b chain_a main '"
	check "the trampoline is labelled" grep -q 'the signal handler returns here' signal.txt
	no_traceback signal.txt
}

t_threads() {
	rm -f core core.*
	GLIBC_TUNABLES=$GCS3 $T/gcsprof-threads 60 3 >/dev/null &
	pid=$!
	sleep 3
	kill -ABRT "$pid"
	wait "$pid"
	core=$(first_core)
	check "the threaded program dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] || return
	mv "$core" threads.core
	g threads.txt -ex 'thread apply all gcs bt' -ex 'echo ==verify==\n' \
		-ex 'thread apply all gcs verify' $T/gcsprof-threads threads.core
	head -n 30 threads.txt | show
	check "every thread's chain (4)" [ "$(grep -c 'frames from the GCS' threads.txt)" -eq 4 ]
	check "the workers' chains run through worker" [ "$(grep -c ' worker+0x' threads.txt)" -ge 3 ]
	check "inline frames at their call sites" grep -q ' spin_for \[inlined\] at .*common.h:[0-9]' threads.txt
	check "the main thread's through main" grep -q '^  #[0-9]* *0x[0-9a-f]* main' threads.txt
	sed -n '/^==verify==/,$p' threads.txt >threads.verify.txt
	check "thread apply all gcs verify: every thread agrees (4)" \
		[ "$(grep -c '^thread [0-9]* (LWP [0-9]*): GDB.s unwind .*: agree$' threads.verify.txt)" -eq 4 ]
	check "and no thread parts" sh -c '! grep -q "they part" threads.verify.txt'
	compare_with_inspect threads $T/gcsprof-threads threads.core threads.txt
	no_traceback threads.txt
}

t_smash() {
	dump_core smash $T/gcsprof-smash || return
	g smash.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' -ex 'gcs status' \
		-ex 'echo ==bt==\n' -ex bt $T/gcsprof-smash smash.core
	show smash.txt
	check "gcs bt: the true chain level2 level1 main" \
		sh -c "echo '$(frames_of smash.txt)' | grep -q '^level2 level1 main '"
	check "gcs verify: GDB and the GCS part at frame #1" grep -q 'they part at frame #1$' smash.txt
	check "naming the smashed frame (#0, level2)" grep -q 'overwritten from frame #0 (level2)' smash.txt
	check "\$_gcs_verify is 1" grep -q '^\$1 = 1$' smash.txt
	sed -n '/^==bt==/,$p' smash.txt >smash.bt.txt
	check "GDB's own bt does not reach level1" sh -c '! grep -q level1 smash.bt.txt'
	# The frame filter: listed and off by default; enabled, GDB's own bt
	# follows the GCS past the smash, without GDB's bogus frame.
	g filter.txt -ex 'info frame-filter' -ex 'echo ==off==\n' -ex bt \
		-ex 'enable frame-filter global gcs' -ex 'echo ==on==\n' -ex bt $T/gcsprof-smash smash.core
	show filter.txt
	sed -n '/^==off==/,/^==on==/p' filter.txt >filter.off.txt
	sed -n '/^==on==/,$p' filter.txt >filter.on.txt
	check "the gcs frame filter is there, off by default" grep -qE '^ +100 +No +gcs$' filter.txt
	check "off, bt stops at the smash, at GDB's bogus frame" \
		sh -c '! grep -q level1 filter.off.txt && grep -q 0x4141414141414141 filter.off.txt'
	check "enabled, bt goes past the smash: level2, then level1 and main from the GCS" \
		sh -c 'grep -q "^#0 .* in level2 " filter.on.txt &&
			grep -q "^0x[0-9a-f]* in level1 \[from the GCS\]" filter.on.txt &&
			grep -q "^0x[0-9a-f]* in main \[from the GCS\]" filter.on.txt'
	check "and drops GDB's bogus frame" sh -c '! grep -q 0x4141414141414141 filter.on.txt'
	check "gcs status: the GCS from GDB or the core note" grep -q '^  GCSPR     0x' smash.txt
	check "gcs status: the core's GCS segment" grep -q '^  mapping   0x' smash.txt
	compare_with_inspect smash $T/gcsprof-smash smash.core smash.txt
	no_traceback smash.txt
}

t_deep() {
	dump_core deep $T/gcsprof-deep 2000 || return
	g deep.txt -ex 'gcs bt' $T/gcsprof-deep deep.core
	grep -v '^\[' deep.txt | head -n 14 | show
	check "2000 frames of recursion in one line" \
		grep -qE 'the same frame (199[0-9]|20[0-9][0-9]) more times: #[0-9]+ to #[0-9]+, recursion' deep.txt
	compare_with_inspect deep $T/gcsprof-deep deep.core deep.txt
}

t_nogcs() {
	g nogcs.txt -ex 'break stop_here' -ex run -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' \
		-ex 'gcs status' --args $T/gdb-chain break
	show nogcs.txt
	check "gcs bt without GCS: one clear line" \
		[ "$(grep -c '^gcs: GCS is not enabled in thread 1' nogcs.txt)" -eq 2 ]
	check "\$_gcs_verify is -1" grep -q '^\$1 = -1$' nogcs.txt
	check "gcs status says it is off, in one line" \
		grep -q '^GCS of thread 1 (LWP [0-9]*) (from .*): not enabled (features_enabled 0x0' nogcs.txt
	no_traceback nogcs.txt
}

t_nogcs_core() {
	rm -f core core.*
	# shellcheck disable=SC3045
	(ulimit -c unlimited; exec env -u GLIBC_TUNABLES $C/healthy-abort-deep) >/dev/null 2>&1
	core=$(first_core)
	check "the program without GCS dumped a core ($core)" [ -n "$core" ]
	[ -n "$core" ] || return
	mv "$core" nogcs.core
	eval g nogcs-core.txt "$nogcs_core_commands" $C/healthy-abort-deep nogcs.core
	show nogcs-core.txt
	nogcs_core_checks nogcs-core.txt
}

# Frame records overwritten further up than x30 (the inspect corpus).
t_records() {
	dump_core lr $C/corrupt-overwritten-lr || return
	g lr.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' $C/corrupt-overwritten-lr lr.core
	show lr.txt
	check "gcs bt: d c b a main, from the GCS" sh -c "echo '$(frames_of lr.txt)' | grep -q ' d c b a main '"
	b=$(sed -n 's/^  #\([0-9]*\) *0x[0-9a-f]* b+0x.*/\1/p' lr.txt | head -n 1)
	a=$((${b:-90} + 1))
	check "gcs verify: they part at a's frame, #$a (b's caller)" grep -q "they part at frame #$a\$" lr.txt
	gcs_a=$(sed -n "s/^  #$a *\(0x[0-9a-f]*\) a+0x.*/\1/p" lr.txt | head -n 1)
	check "the GCS's address for #$a is a's return address in gcs bt ($gcs_a)" \
		grep -q "^  GCS: #$a *${gcs_a:-none} a+0x[0-9a-f]* at .*overwritten-lr.c:[0-9]*  (GCS slot 0x" lr.txt
	check "GDB's address for #$a is the one d wrote" grep -q "^  GDB: #$a *0x0000dead0000bee0 ??" lr.txt
	check "GDB read b's return address from the stack" \
		grep -q "GDB read frame #$b (b)'s return address from the stack; the CPU pushed ${gcs_a:-none} (a)" lr.txt
	check "the frame record is named: b's, holding 0x0000dead0000bee0, GDB's source for #$a" \
		grep -q "the frame record at 0x[0-9a-f]* (frame #$b's, b) holds return address 0x0000dead0000bee0, which is not on the GCS: GDB took frame #$a from it" lr.txt
	gcsprof inspect lr.core >lr.inspect.txt 2>&1
	rec=$(sed -n 's/.*its frame record at \(0x[0-9a-f]*\) holds return address 0x0000dead0000bee0.*/\1/p' \
		lr.inspect.txt)
	check "the same record as gcsprof inspect names (${rec:-none})" grep -q "frame record at ${rec:-none} " lr.txt
	check "\$_gcs_verify is $a" grep -q "^\$1 = $a\$" lr.txt
	no_traceback lr.txt

	# A saved frame pointer overwritten: GDB unwinds by the CFI and agrees
	# with the GCS, but the x29 chain does not, and verify says so.
	dump_core heap $C/corrupt-fp-into-heap || return
	g heap.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' $C/corrupt-fp-into-heap heap.core
	show heap.txt
	c=$(sed -n 's/^  #\([0-9]*\) *0x[0-9a-f]* c+0x.*/\1/p' heap.txt | head -n 1)
	check "gcs verify: GDB's unwind agrees" grep -q ': agree$' heap.txt
	check "but names c's frame record (#${c:-?}), its link overwritten" \
		grep -q "the frame record at 0x[0-9a-f]* (frame #${c:-x}'s, c) holds the right return address 0x[0-9a-f]*, but its saved frame pointer 0x[0-9a-f]* points below it" heap.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' heap.txt
	no_traceback heap.txt
}

# A real GCS switch (GCSSS1/GCSSS2 onto a map_shadow_stack GCS).
t_switch() {
	dump_core switch $C/healthy-gcs-switch || return
	g switch.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'p $_gcs_verify' $C/healthy-gcs-switch switch.core
	show switch.txt
	check "gcs bt shows the switch" \
		grep -q '^  ---- GCS switch: this stack was left here (switch cap token 0x[0-9a-f]* at 0x[0-9a-f]*)' switch.txt
	sed -n '1,/: GDB.s unwind/p' switch.txt >switch.bt.txt
	sed -n '/GCS switch/q;p' switch.bt.txt >switch.new.txt
	sed -n '/GCS switch/,$p' switch.bt.txt >switch.old.txt
	check "the new GCS's frames, then the old one's: s3 s2 on_new_stack run_on | switch_away main" \
		sh -c "echo '$(frames_of switch.new.txt)' | grep -q ' s3 s2 on_new_stack run_on \$' &&
			echo '$(frames_of switch.old.txt)' | grep -q '^switch_away main '"
	check "gcs verify agrees across the switch" grep -q ': agree$' switch.txt
	check "\$_gcs_verify is 0" grep -q '^\$1 = 0$' switch.txt
	no_traceback switch.txt
}

t_errors() {
	g err1.txt -ex 'gcs bt' -ex 'gcs verify' -ex 'gcs status'
	show err1.txt
	check "no process: one line for each command" \
		[ "$(grep -c '^gcs: no process' err1.txt)" -eq 3 -a "$(wc -l <err1.txt)" -eq 3 ]
	g err2.txt -ex 'set gcs library /nonexistent/libgcswalk.so.1' -ex 'gcs bt'
	show err2.txt
	check "no libgcswalk: one line" [ "$(grep -c '^gcs: no libgcswalk at /nonexistent' err2.txt)" -eq 1 ]
	GCSWALK_LIBRARY=/nonexistent/lib.so g err3.txt -ex 'show gcs library'
	check "GCSWALK_LIBRARY is obeyed" grep -q '/nonexistent/lib.so (GCSWALK_LIBRARY)' err3.txt
	g err4.txt -ex 'show gcs library'
	show err4.txt
	check "by default, the library next to the plugin" \
		grep -q '^libgcswalk: /opt/gcsprof/lib/libgcswalk.so.[0-9]* (next to the plugin)' err4.txt
	g err5.txt -ex 'help gcs' -ex 'help gcs backtrace' -ex 'help gcs verify' -ex 'help gcs status' \
		-ex 'help gcs bt'
	check "every command has help" [ "$(grep -c '^Usage: gcs' err5.txt)" -eq 4 ]
	for f in err1.txt err2.txt err3.txt err5.txt; do no_traceback $f; done
}

# For the host test: cores and the files they map, in /share.
t_for_host() {
	t_smash
	t_threads
	t_deep
	t_nogcs_core
	t_records
	t_switch
	for f in smash threads deep; do
		cp $f.core $f.txt $f.inspect.txt /share/ 2>/dev/null
		mkdir -p /share/root$T && cp $T/gcsprof-$f /share/root$T/
	done
	cp nogcs.core lr.core lr.txt switch.core switch.txt /share/ 2>/dev/null
	mkdir -p /share/root$C
	cp $C/healthy-abort-deep $C/corrupt-overwritten-lr $C/healthy-gcs-switch /share/root$C/
	share_libc
}

tap_groups "errors live attach signal threads smash deep nogcs nogcs_core records switch" "$@"
