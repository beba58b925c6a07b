#!/bin/sh
# The test groups are called by name through tap_groups.
# shellcheck disable=SC2317
# Uprobes on a GCS-enabled, GCS-locked program (uprobe-target, built
# -O2 -fomit-frame-pointer): entry probes on functions reached by BL, by
# BLR and on a leaf, uretprobes on a function deep in a known chain, on a
# recursive one and on one that takes a signal while its return is
# hijacked, and probes on the BL, BLR and RET instructions themselves,
# which the kernel simulates. For each: the program's output and exit
# status are those of an unprobed run, every probe fired exactly as often
# as the program calls it, and a return the GCS does not hold still gets
# SIGSEGV with SEGV_CPERR at the RET. Through the kernel's uprobe_events
# (group gcsup) and through Debian's `perf probe -x` and `perf stat`
# (group gcsperf).
#
# Usage: uprobes-test.sh [tracefs|perf|all]      TAP; 4 (skip) without GCS
set -u
here=$(dirname "$0")
# shellcheck source=../tap.sh
. "$here/../tap.sh"
# shellcheck source=symbols.sh
. "$here/symbols.sh"
T=$(readlink -f "$here/uprobe-target")
ROUNDS=50
TRACE=/sys/kernel/tracing
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
	echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
	exit 4
fi
[ -e "$TRACE/uprobe_events" ] || busybox mount -t tracefs nodev "$TRACE" 2>/dev/null
echo "TAP version 13"

# Where a probe of the 6.12 kernels (project, distro) and the reference
# kernel differ: a probe on a RET that the GCS check fails. The 6.12
# series raises what the RET itself raises, SEGV_CPERR at the RET;
# upstream's simulation raises a plain SIGSEGV (SI_KERNEL, si_code 128).
# docs/kernel.md, "Uprobes and GCS".
on_612() { case $(uname -r) in 6.12.*) true ;; *) false ;; esac; }

# What each probe must count in one round (uprobe-target.c's header).
per_round() {
	case $1 in
	leaf) echo 6 ;;
	recurse) echo 9 ;;
	*) echo 1 ;;
	esac
}

# The output of the last status_is run is the unprobed run's (the guest
# has no cmp).
same_output() { test "$(cat out.txt)" = "$(cat baseline.txt)"; }

# The unprobed run every probed run must match.
"$T" run "$ROUNDS" >baseline.txt 2>&1
check "uprobe-target runs with GCS enabled and locked" test $? = 0
show baseline.txt

# ------------------------------------------------------------------ tracefs
# tf_add KIND SYMBOL: a probe (KIND p, or r for a return probe) on SYMBOL.
tf_add() {
	tf_off=$(file_offset "$T" "$2") || { echo "no symbol $2" >&2; return 1; }
	echo "$1:gcsup/$1_$2 $T:$tf_off" >>"$TRACE/uprobe_events"
}

tf_clear() {
	echo 0 >"$TRACE/tracing_on"
	[ -d "$TRACE/events/gcsup" ] && echo 0 >"$TRACE/events/gcsup/enable"
	echo >"$TRACE/uprobe_events"
}

# tf_case DESC KIND:SYMBOL...: those probes, one run, the counts, the
# faults.
tf_case() {
	tf_desc=$1
	shift
	tf_clear
	for p in "$@"; do
		tf_add "${p%%:*}" "${p#*:}" || { not_ok "$tf_desc: cannot add probe $p"; return; }
	done
	echo 1 >"$TRACE/events/gcsup/enable"
	echo >"$TRACE/trace"
	echo 1 >"$TRACE/tracing_on"
	status_is 0 "$tf_desc: the probed program exits 0" "$T" run "$ROUNDS"
	echo 0 >"$TRACE/tracing_on"
	check "$tf_desc: and prints what it prints unprobed" same_output
	for p in "$@"; do
		want=$(($(per_round "${p#*:}") * ROUNDS))
		got=$(grep -c " ${p%%:*}_${p#*:}: " "$TRACE/trace")
		check "$tf_desc: ${p%%:*}_${p#*:} fired $got times, $want expected" test "$got" = "$want"
	done
	grep -q 'LOST' "$TRACE/trace" && not_ok "$tf_desc: the trace buffer lost events"
	echo 1 >"$TRACE/tracing_on"
	status_is 0 "$tf_desc: a return the GCS does not hold still faults with SEGV_CPERR" \
		"$T" mismatch
	tf_add r hijacked_bad_return && echo 1 >"$TRACE/events/gcsup/enable"
	status_is 0 "$tf_desc: and so does one with a uretprobe pending" "$T" mismatch-pending
	echo 0 >"$TRACE/tracing_on"
	# uprobe_profile counts a return probe's hits at the function's entry,
	# where the return is hijacked; the function never returns.
	tf_hits=$(grep ' r_hijacked_bad_return ' "$TRACE/uprobe_profile" | while read -r _f _e n; do echo "$n"; done)
	check "$tf_desc: that uretprobe was hit once, its return hijacked (${tf_hits:-no} hits)" \
		test "${tf_hits:-0}" = 1
	tf_clear
}

t_tracefs() {
	if [ ! -w "$TRACE/uprobe_events" ]; then
		not_ok "the kernel has uprobe_events ($TRACE/uprobe_events)"
		return
	fi
	tf_case "entry probe on a function reached by BL" p:by_bl
	tf_case "entry probe on a function reached by BLR" p:by_blr
	tf_case "entry probe on a leaf" p:leaf
	tf_case "uretprobe deep in a known chain" r:deep_target
	tf_case "uretprobe and entry probe on a recursive function" r:recurse p:recurse
	tf_case "uretprobe pending across a signal" r:with_signal
	tf_case "probe on a BL (simulated)" p:site_bl
	tf_case "probe on a BLR (simulated)" p:site_blr
	tf_case "probe on a RET (simulated)" p:site_ret
	tf_case "every probe at once" p:by_bl p:by_blr p:leaf r:deep_target r:recurse \
		r:with_signal p:site_bl p:site_blr p:site_ret
	# A probe on the failing RET itself: the kernel simulates the check.
	tf_clear
	tf_add p site_bad_ret && echo 1 >"$TRACE/events/gcsup/enable"
	if on_612; then
		status_is 0 "a probed RET that the GCS does not hold gets SEGV_CPERR at the RET" \
			"$T" mismatch
	else
		status_is 1 "a probed RET that the GCS does not hold: SIGSEGV (reference kernel)" \
			"$T" mismatch
		check "  DIVERGES (docs/kernel.md): SI_KERNEL, not SEGV_CPERR, on this kernel" \
			grep -q 'si_code=128 ' out.txt
	fi
	show out.txt
	tf_clear
}

# --------------------------------------------------------------------- perf
# The same through the tools a user has: perf probe names the probes by
# symbol, perf stat counts them. The instructions in sites.c have no debug
# information (perf probe refuses SYMBOL+OFFSET there), so they are
# probed by address, as a user would probe an instruction of assembly.
pf_spec() {
	case $1 in
	p:site_*) echo "gcsperf:p_${1#p:}=$(address_of "$T" "${1#p:}")" ;;
	p:*) echo "gcsperf:p_${1#p:}=${1#p:}" ;;
	r:*) echo "gcsperf:r_${1#r:}=${1#r:}%return" ;;
	esac
}

# pf_event KIND:SYMBOL: the event perf probe made of it (it names return
# probes EVENT__return).
pf_event() {
	case $1 in
	r:*) echo "gcsperf:r_${1#r:}__return" ;;
	*) echo "gcsperf:${1%%:*}_${1#*:}" ;;
	esac
}

pf_clear() { perf probe -q -d 'gcsperf:*' >/dev/null 2>&1; }

pf_case() {
	pf_desc=$1
	shift
	pf_clear
	pf_events=
	for p in "$@"; do
		if ! perf probe -q -x "$T" --add "$(pf_spec "$p")" >probe.txt 2>&1; then
			not_ok "$pf_desc: perf probe --add $(pf_spec "$p")"
			show probe.txt
			return
		fi
		pf_events="$pf_events -e $(pf_event "$p")"
	done
	# shellcheck disable=SC2086 # one -e per event
	status_is 0 "$pf_desc: the probed program exits 0 under perf stat" \
		perf stat -x, -o stat.txt $pf_events -- "$T" run "$ROUNDS"
	check "$pf_desc: and prints what it prints unprobed" same_output
	for p in "$@"; do
		want=$(($(per_round "${p#*:}") * ROUNDS))
		got=$(grep ",$(pf_event "$p")," stat.txt | cut -d, -f1)
		check "$pf_desc: $(pf_event "$p") counted ${got:-nothing}, $want expected" \
			test "${got:-x}" = "$want"
	done
	# shellcheck disable=SC2086
	status_is 0 "$pf_desc: a return the GCS does not hold still faults with SEGV_CPERR" \
		perf stat -x, -o stat.txt $pf_events -- "$T" mismatch
	pf_clear
}

t_perf() {
	if ! command -v perf >/dev/null; then
		not_ok "perf is installed in the guest"
		return
	fi
	pf_case "perf probe: function reached by BL" p:by_bl
	pf_case "perf probe: function reached by BLR" p:by_blr
	pf_case "perf probe: leaf" p:leaf
	pf_case "perf probe: %return deep in a chain" r:deep_target
	pf_case "perf probe: %return and entry on a recursive function" r:recurse p:recurse
	pf_case "perf probe: %return pending across a signal" r:with_signal
	pf_case "perf probe: the BL, BLR and RET instructions" p:site_bl p:site_blr p:site_ret
}

tap_groups "tracefs perf" "$@"
