#!/bin/sh
# The sh -c and gdb programs here are quoted for the shell that runs them.
# shellcheck disable=SC2016
# Real programs with GCS: Debian sid's GCS-marked programs (coreutils,
# dash, grep, sed, tar...) run with glibc's tunable at 1 (enforce) get a
# GCS and behave exactly as without it, in pipelines, under signals and
# many at once (expr is not used: it loads unmarked libgmp and is refused);
# gdb (itself refused under policy 1: it loads unmarked
# libraries) debugs a GCS-enabled program and sees its GCS registers.
# TAP; skips (4) where the CPU or kernel has no GCS.
set -u
GCS=glibc.cpu.aarch64_gcs=1
# shellcheck source=../tap.sh
. "$(dirname "$0")/tap.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# with_gcs CMD...: run under the tunable; without_gcs: with none at all.
with_gcs() { env GLIBC_TUNABLES=$GCS "$@"; }
without_gcs() { env -u GLIBC_TUNABLES "$@"; }

if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
	echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
	exit 4
fi
echo "TAP version 13"
echo "1..9"

# One GCS (one "ss" mapping) with the tunable, none without.
check "a marked program gets one ss mapping under the tunable" \
	test "$(with_gcs grep -c '^VmFlags:.* ss' /proc/self/smaps)" = 1
check "and none without it" \
	test "$(without_gcs grep -c '^VmFlags:.* ss' /proc/self/smaps)" = 0

cat >"$work/pipeline.sh" <<'PIPELINE'
seq 1 20000 | sort -rn | head -n 3 | tr '\n' ' '
ls -la /usr/bin | wc -l
tar -cf - /etc 2>/dev/null | tar -tf - | sort | sed -n '1p;$p'
printf 'alpha\nbeta\ngamma\n' | grep -n a | cut -d: -f1 | paste -sd+
PIPELINE
without_gcs sh "$work/pipeline.sh" >"$work/plain" 2>&1
with_gcs sh "$work/pipeline.sh" >"$work/gcs" 2>&1
check "pipelines give the same output with and without GCS" \
	test "$(cat "$work/plain")" = "$(cat "$work/gcs")"
check "and the output is right" grep -q '^20000 19999 19998 ' "$work/gcs"

# The shell itself under GCS: dash handles SIGCHLD for every child.
# (dash reports "Terminated" on stderr; the status is what matters.)
with_gcs sh -c 'sleep 10 & pid=$!; kill -TERM $pid; wait $pid; echo $?' >"$work/sig" 2>/dev/null
check "a GCS shell sees its child killed by SIGTERM (143)" test "$(cat "$work/sig")" = 143
with_gcs sh -c 'trap "echo caught" USR1; kill -USR1 $$; echo after' >"$work/trap" 2>&1
check "a GCS shell runs its signal handler and carries on" \
	test "$(tr '\n' ' ' <"$work/trap")" = "caught after "

# Many GCS processes at once, each a pipeline of GCS processes.
with_gcs sh -c '
	i=1
	while [ $i -le 150 ]; do
		(seq 1 $i | sort -rn | head -n 1 >"'"$work"'/many.$i") &
		i=$((i + 1))
	done
	wait'
bad=0
i=1
while [ $i -le 150 ]; do
	[ "$(cat "$work/many.$i" 2>/dev/null)" = "$i" ] || bad=$((bad + 1))
	i=$((i + 1))
done
[ $bad = 0 ] || echo "# $bad of 150 concurrent pipelines gave a wrong result"
check "150 concurrent GCS pipelines all give the right result" test $bad = 0

# gdb 18, run without the tunable (it loads unmarked libraries), debugs
# a GCS-enabled /usr/bin/echo stopped at its write system call.
without_gcs gdb -batch -nx \
	-ex "set environment GLIBC_TUNABLES=$GCS" \
	-ex 'catch syscall write' -ex run \
	-ex 'printf "gcspr=%#lx features=%#lx\n", $gcspr, $gcs_features_enabled' \
	-ex kill --args /usr/bin/echo hello >"$work/gdb" 2>&1
sed 's/^/# gdb: /' "$work/gdb" | grep -E 'gcspr|rror' | head -n 5
check "gdb sees the inferior's GCSPR" grep -Eq 'gcspr=0x[0-9a-f]{6,}' "$work/gdb"
check "gdb sees GCS enabled in the inferior" grep -q 'features=0x1' "$work/gdb"

tap_done
