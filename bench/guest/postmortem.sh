#!/bin/sh
# The post-mortem benchmark, in the QEMU guest: three cores of a known
# shape, read by every tool, each run timed and judged against the true
# chains. bench/run boots the guest with `vm/run --share DIR` (DIR is
# this script's working folder, /share) and then runs bench/postmortem-host
# DIR on the host, which reads what this leaves in DIR/cores/.
#
# The cores:
#   smash      gcsprof-smash: main -> level1 -> level2, whose frame record
#              victim() overwrote with 0x41s; level2's RET faults on the GCS
#              check (SIGSEGV, SEGV_CPERR) in level2
#   deep2000   bench-cores deep 2000: main -> recurse x 2001 -> abort(),
#              three more threads blocked in known functions
#   threads64  bench-cores threads 64: main -> pool_dump -> abort(), 64
#              threads blocked in pool_worker -> pool_fetch|pool_drain ->
#              pool_wait_cond|pool_wait_pipe
# The tools: gcsprof inspect; gdb -batch -ex 'thread apply all bt'; eu-stack
# --core -e EXE -n 0 (-n 0: every frame, not the first 256 of each
# thread); the GDB plugin's `thread apply all gcs bt`. GDB and eu-stack run
# without the GCS tunable; only the programs that dump the cores get it.
#
# Prints, for every core, tool and repetition, one line:
#   pm|guest|CORE|TOOL|REP|TIME_NS|FRAMES|CORRECT|TOTAL|NOTE
# (judge.awk says what FRAMES and CORRECT count), and nothing else on
# stdout; progress goes to stderr. Leaves in cores/: CORE.core, a manifest
# (CORE|EXE|SPEC per line), root/ (the programs and the C library at
# their guest paths: the host's sysroot) and guest/ (each tool's last
# output). Environment: REPEAT (default 5), DEPTH (default 2000), THREADS
# (default 64), QUICK=1 (one repetition, and DEPTH 500 unless set),
# JUDGE (judge.awk, default next to this script).
set -u
T=/opt/gcsprof/tests
B=/opt/gcsprof/bench
PLUGIN=/opt/gcsprof/share/gcsprof/gdb/gcs.py
GCS3=glibc.cpu.aarch64_gcs=3
REPEAT=${REPEAT:-5}
# GDB's bt of 2000 frames takes one to two minutes under TCG (it evaluates
# every frame's entry values): the quick run goes 500 deep (deep500).
if [ "${QUICK:-0}" = 1 ]; then
	REPEAT=1
	DEPTH=${DEPTH:-500}
fi
DEPTH=${DEPTH:-2000}
THREADS=${THREADS:-64}
JUDGE=${JUDGE:-$(dirname "$0")/judge.awk}
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
now_ns() { date +%s%N; }
say() { echo "postmortem: $*" >&2; }
# The shared shell helpers (first_core); this script prints no TAP.
# shellcheck source=../../tests/tap.sh
. "$T/tap.sh"

[ -r "$JUDGE" ] || { say "no $JUDGE"; exit 1; }
rm -rf cores && mkdir -p cores/guest cores/root || exit 1
: >cores/manifest

# make_core NAME SPEC EXE ARGS...: run EXE with GCS on, keep its core as
# cores/NAME.core and note it in the manifest.
make_core() {
	name=$1 spec=$2 exe=$3
	shift 2
	rm -f core core.*
	# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
	(ulimit -c unlimited; GLIBC_TUNABLES=$GCS3 exec "$@") >"cores/guest/$name.run" 2>&1
	rc=$?
	c=$(first_core)
	echo "$name|$exe|$spec" >>cores/manifest
	if [ -z "$c" ]; then
		say "$name: no core (status $rc)"
		return
	fi
	mv "$c" "cores/$name.core"
	say "$name: core of $(du -k "cores/$name.core" | cut -f1) KB on disk (status $rc)"
	mkdir -p "cores/root$(dirname "$exe")" && cp -p "$exe" "cores/root$exe"
}

t0=$(now_ns)
make_core smash "1:main level1 level2" $T/gcsprof-smash
make_core "deep$DEPTH" "1:main recurse*$((DEPTH + 1)),1:deep_cond_entry deep_cond_wait,1:deep_pause_entry deep_pause_wait,1:deep_read_entry deep_read_wait" \
	$B/bench-cores deep "$DEPTH"
make_core "threads$THREADS" "1:main pool_dump,$(((THREADS + 1) / 2)):pool_worker pool_fetch pool_wait_cond,$((THREADS / 2)):pool_worker pool_drain pool_wait_pipe" \
	$B/bench-cores threads "$THREADS"
# The dynamic loader and the C library, for the host (at their paths and at
# the files they link to).
for f in /lib/ld-linux-aarch64.so.1 /lib/aarch64-linux-gnu/libc.so.6; do
	[ -e "$f" ] || continue
	r=$(readlink -f "$f")
	mkdir -p "cores/root$(dirname "$f")" "cores/root$(dirname "$r")"
	cp -p "$r" "cores/root$f"
	[ "$r" = "$f" ] || cp -p "$r" "cores/root$r"
done
say "cores made in $((($(now_ns) - t0) / 1000000)) ms"

# judge_run CORE TOOL FMT SPEC REP OUT CMD...: time CMD (its output in
# OUT), judge it, print the line.
judge_run() {
	j_core=$1 j_tool=$2 j_fmt=$3 j_spec=$4 j_rep=$5 j_out=$6
	shift 6
	s=$(now_ns)
	"$@" </dev/null >"$j_out" 2>&1
	rc=$?
	e=$(now_ns)
	res=$(awk -v fmt="$j_fmt" -v spec="$j_spec" -f "$JUDGE" "$j_out")
	frames=${res%% *}
	res=${res#* }
	correct=${res%% *}
	res=${res#* }
	total=${res%% *}
	note=${res#* }
	if [ "$frames" = 0 ]; then
		why=$(grep -v '^$' "$j_out" | head -n 1 | tr -d '|' | cut -c1-100)
		note="no frames: ${why:-no output}"
	fi
	[ "$rc" -eq 0 ] || note="exit $rc; $note"
	echo "pm|guest|$j_core|$j_tool|$j_rep|$((e - s))|$frames|$correct|$total|$note"
}

# missing CORE TOOL SPEC WHY: the line of a tool that cannot run.
missing() {
	n=0
	IFS=,
	for part in $3; do n=$((n + ${part%%:*})); done
	unset IFS
	r=1
	while [ "$r" -le "$REPEAT" ]; do
		echo "pm|guest|$1|$2|$r|0|0|0|$n|$4"
		r=$((r + 1))
	done
}

while IFS='|' read -r name exe spec; do
	core=cores/$name.core
	for tool in "gcsprof inspect" "gdb bt" "eu-stack" "gdb gcs bt"; do
		case $tool in
		"gcsprof inspect") need=gcsprof ;;
		eu-stack) need=eu-stack ;;
		*) need=gdb ;;
		esac
		if ! command -v "$need" >/dev/null; then
			missing "$name" "$tool" "$spec" "$need is not installed"
			continue
		fi
		if [ "$tool" = "gdb gcs bt" ] && [ ! -r "$PLUGIN" ]; then
			missing "$name" "$tool" "$spec" "no plugin at $PLUGIN"
			continue
		fi
		if [ ! -f "$core" ]; then
			missing "$name" "$tool" "$spec" "no core (see cores/guest/$name.run)"
			continue
		fi
		out="cores/guest/$name.$(echo "$tool" | tr ' ' '-').txt"
		say "$name: $tool"
		r=1
		while [ "$r" -le "$REPEAT" ]; do
			case $tool in
			"gcsprof inspect")
				judge_run "$name" "$tool" gcs "$spec" "$r" "$out" \
					env -u GLIBC_TUNABLES gcsprof inspect "$core" ;;
			"gdb bt")
				judge_run "$name" "$tool" gdb "$spec" "$r" "$out" \
					env -u GLIBC_TUNABLES gdb -q -nx -batch \
					-ex 'thread apply all bt' "$exe" "$core" ;;
			eu-stack)
				judge_run "$name" "$tool" eu "$spec" "$r" "$out" \
					env -u GLIBC_TUNABLES eu-stack -n 0 -e "$exe" --core="$core" ;;
			"gdb gcs bt")
				judge_run "$name" "$tool" gcs "$spec" "$r" "$out" \
					env -u GLIBC_TUNABLES gdb -q -nx -batch -ex "source $PLUGIN" \
					-ex 'thread apply all gcs bt' "$exe" "$core" ;;
			esac
			r=$((r + 1))
		done
	done
done <cores/manifest
say "done in $((($(now_ns) - t0) / 1000000)) ms"
