#!/bin/sh
# What a uprobe costs per hit on a task with GCS and without, in one boot:
# tests/uprobes/uprobe-target run ROUNDS with GCS (enabled and locked) and
# with --no-gcs, unprobed and with one kind of probe at a time, each the
# fastest of REPS runs; a probe's cost per hit is (probed - unprobed) /
# hits. The kinds: an entry probe stepped out of line (leaf), a simulated
# BL (site_bl: with GCS it pushes), a simulated RET (site_ret: with GCS it
# checks and pops), a uretprobe (deep_target: with GCS its GCS entry is
# replaced too). Times under emulation are only comparable within the run.
#
# Usage: uprobe-cost.sh [ROUNDS [REPS]]     (vm/run -- /opt/gcsprof/bench/uprobe-cost.sh)
# Prints one line per kind: "kind gcs_us_per_hit nogcs_us_per_hit gcs/nogcs".
set -eu
ROUNDS=${1:-10000}
REPS=${2:-5}
T=/opt/gcsprof/tests/uprobes/uprobe-target
TRACE=/sys/kernel/tracing
# shellcheck source=../../tests/uprobes/symbols.sh
. /opt/gcsprof/tests/uprobes/symbols.sh
[ -e "$TRACE/uprobe_events" ] || busybox mount -t tracefs nodev "$TRACE"

now_ns() { date +%s%N; }

best_of() { # best_of ARGS...: the fastest of REPS runs of $T ARGS, in ns
	bo_best=
	for _r in $(seq "$REPS"); do
		bo_t0=$(now_ns)
		"$T" "$@" >/dev/null
		bo_t=$(($(now_ns) - bo_t0))
		if [ -z "$bo_best" ] || [ "$bo_t" -lt "$bo_best" ]; then bo_best=$bo_t; fi
	done
	echo "$bo_best"
}

probe_on() { # probe_on KIND SYMBOL
	echo "$1:cost/probe $T:$(file_offset "$T" "$2")" >"$TRACE/uprobe_events"
	echo 1 >"$TRACE/events/cost/enable"
}

probe_off() {
	[ -d "$TRACE/events/cost" ] && echo 0 >"$TRACE/events/cost/enable"
	echo >"$TRACE/uprobe_events"
}

echo 0 >"$TRACE/tracing_on"
probe_off
base_gcs=$(best_of run "$ROUNDS")
base_nogcs=$(best_of --no-gcs run "$ROUNDS")
echo "# $ROUNDS rounds, best of $REPS; unprobed: $((base_gcs / 1000000)) ms with GCS, $((base_nogcs / 1000000)) ms without"
echo "# kind gcs_us_per_hit nogcs_us_per_hit gcs/nogcs"
for spec in p:leaf:6 p:site_bl:1 p:site_ret:1 r:deep_target:1; do
	kind=${spec%%:*} rest=${spec#*:}
	sym=${rest%%:*} per=${rest#*:}
	hits=$((ROUNDS * per))
	probe_on "$kind" "$sym"
	g=$(best_of run "$ROUNDS")
	n=$(best_of --no-gcs run "$ROUNDS")
	probe_off
	mawk -v k="$kind:$sym" -v g="$g" -v bg="$base_gcs" -v n="$n" -v bn="$base_nogcs" -v h="$hits" \
		'BEGIN { a = (g - bg) / h / 1000; b = (n - bn) / h / 1000
		printf "%s %.1f %.1f %.2f\n", k, a, b, (b > 0 ? a / b : 0) }'
done
