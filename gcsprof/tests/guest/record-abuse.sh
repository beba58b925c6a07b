#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# Its variables hold pids, counts and fixed paths, never spaces.
# shellcheck disable=SC2086
# gcsprof record under abuse, in the guest: the recorder or the target
# killed mid-run, a target that churns processes and threads, one that
# execs a set-user-ID program, a full disk, -p on a process that exits
# during attach. In each, the target behaves as it does unrecorded
# (output, exit status, signals) and nothing recorded is lost.
# Usage: record-abuse.sh GROUP...|all. TAP; exit 4 where there is no GCS.
set -u
T=/opt/gcsprof/tests
export GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3
work=${GCSPROF_TEST_DIR:-/tmp/record-abuse.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/tap.sh"

if ! grep -qw gcs /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU or kernel has no GCS"
	exit 4
fi
M=${GCSPROF_METHOD:-}
if [ -n "$M" ]; then
	method=$M
elif [ -e /proc/sys/kernel/perf_callchain_gcs ]; then
	method=perf
else
	method=ptrace
fi
echo "# record method: $method"

# Samples in a profile (its sample records), whatever its state.
# Samples in a profile (gzip, or cut short while it is written: zcat -f
# prints what inflates).
nsamples() { zcat -f "$1" 2>/dev/null | grep -c '^sample '; }

# Wait up to 30 s for no process named NAME to be left.
wait_gone() {
	i=0
	while pgrep -x "$1" >/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	! pgrep -x "$1" >/dev/null
}

# On the debug kernel everything is 10-15 times slower, and the target's
# busy threads with the sampling NMIs starve this script: a fork takes
# seconds. There the targets run longer, and at nice 19 (through nice, so
# the command's name is still gcsprof-split), so that the kills below land
# while the target runs, as they do elsewhere.
if on_debug_kernel; then
	slow=5
	nice_target="nice -n 19"
else
	slow=1
	nice_target=
fi

# Wait until FILE holds a sample (up to 30 s, 150 on the debug kernel).
wait_samples() {
	i=0 n=0
	while [ "$n" -lt 1 ] && [ $i -lt $((300 * slow)) ]; do
		sleep 0.1
		i=$((i + 1))
		n=$(nsamples "$1" 2>/dev/null)
		n=${n:-0}
	done
	[ "$n" -ge 1 ]
}

# The recorder killed with SIGKILL mid-run: the target runs on to its own
# end, and the file holds every sample but the last 100 ms', plain.
t_kill_recorder() {
	gcsprof record --method $method -F 499 -q -o kill.data -- \
		$nice_target $T/gcsprof-split $((4 * slow)) >split.out 2>rec.err &
	rec=$!
	# Killed once the file holds samples and then a second more of them
	# (five on the debug kernel, where the ptrace method takes about ten
	# a second, the first ones often still in the dynamic loader).
	wait_samples kill.data
	sleep $slow
	kill -KILL $rec
	wait $rec
	check "the recorder died of SIGKILL" [ $? -eq 137 ]
	check "the target ran on to its end" wait_gone gcsprof-split
	check "and printed what it prints" grep -q '^split: [0-9]* rounds' split.out
	status_is 70 "report says the profile is truncated" gcsprof report kill.data
	check "in one line" [ "$(grep -c 'truncated profile' err.txt)" -eq 1 ]
	n=$(nsamples kill.data)
	echo "# $n samples kept"
	check "samples were kept ($n)" [ "$n" -gt 0 ]
	check "and reported" grep -q 'path_a' out.txt
	# Compression comes at the recording's end, which this one never had.
	check "the file was left plain text" sh -c "head -c 8 kill.data | grep -q '^gcsprof'"
	[ "$method" = perf ] || return 0
	# With --defer the samples are held until the end: killed, it keeps
	# none (as documented), but the file is still a profile.
	gcsprof record --method perf --defer -F 499 -q -o defer.data -- \
		$nice_target $T/gcsprof-split $((2 * slow)) >split.out 2>rec.err &
	rec=$!
	sleep $slow
	kill -KILL $rec
	wait $rec
	check "the deferring recorder died of SIGKILL" [ $? -eq 137 ]
	check "the target ran on to its end" wait_gone gcsprof-split
	status_is 70 "report says the deferred profile is truncated" gcsprof report defer.data
	check "with no sample" [ "$(nsamples defer.data)" -eq 0 ]
}

# The target killed with SIGKILL while sampled (once it has samples, and
# two seconds more, ten on the debug kernel): record exits as the target
# did (128 + 9), with a complete profile.
t_kill_target() {
	gcsprof record --method $method -q -o killed.data -- \
		$nice_target $T/gcsprof-split $((6 * slow)) &
	rec=$!
	wait_samples killed.data
	sleep $((2 * slow))
	pkill -KILL -x gcsprof-split
	wait $rec
	st=$?
	check "record exits as its command did (137, got $st)" [ $st -eq 137 ]
	status_is 0 "the profile is complete" gcsprof report killed.data
	check "with the samples before the kill" [ "$(nsamples killed.data)" -gt 20 ]
}

# -p on a process that exits during the attach: a clear line, no hang,
# and a valid (if empty) profile or a clear refusal: gone (65), or caught
# before its C library turned GCS on (67).
t_attach_exit() {
	n=0 bad=0
	while [ $n -lt 10 ]; do
		$T/gcsprof-split 0.$((n + 1)) >/dev/null &
		pid=$!
		timeout 30 gcsprof record --method $method -q -o attach.data -p $pid 2>att.err
		st=$?
		wait $pid
		case $st in
		0) gcsprof report attach.data >/dev/null 2>&1 || bad=$((bad + 1)) ;;
		65 | 67) [ "$(wc -l <att.err)" -eq 1 ] || bad=$((bad + 1)) ;;
		*)
			echo "# attach $n: status $st: $(cat att.err)"
			bad=$((bad + 1))
			;;
		esac
		n=$((n + 1))
	done
	check "10 attaches to processes that exit: each a profile or one line" [ $bad -eq 0 ]
	[ "$method" = perf ] || return 0
	# --defer, attached: the held records are handled when the process
	# is gone (its forks known then), and the recording ends with it.
	$T/gcsprof-split 2 >/dev/null &
	pid=$!
	status_is 0 "attached with --defer until the process exits" \
		timeout 60 gcsprof record --method perf --defer -q -o attach.data -p $pid
	wait $pid
	check "its samples were written" [ "$(nsamples attach.data)" -gt 0 ]
}

# 100 processes and 1000 threads, each checked by the target itself.
t_churn() {
	status_is 0 "a target churning 100 processes and 1000 threads" \
		gcsprof record --method $method -q -o churn.data -- $T/gcsprof-churn 100 1000
	check "it saw every child and thread right" grep -qx 'churn: 100 processes, 1000 threads, 0 wrong' out.txt
	status_is 0 "the profile reports" gcsprof report churn.data --per-thread -f folded
	check "with samples of the children" grep -q 'child_work' out.txt
}

# A set-user-ID program exec'd by a target that the recorder, run as an
# ordinary user, may not trace. Through perf the program runs with its
# privilege, as it does unrecorded; ptrace cannot give it (the kernel
# drops the privilege of a traced exec), which gcsprof.1 documents.
t_setuid() {
	cp $T/gcsprof-euid /tmp/suid-euid && chown 0:0 /tmp/suid-euid && chmod 4755 /tmp/suid-euid
	chmod 1777 "$work"
	setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/suid-euid >plain.out 2>&1
	check "unrecorded, it runs set-user-ID: $(cat plain.out)" grep -qx 'uid 65534 euid 0' plain.out
	if [ $method != perf ]; then
		skip "recorded by an ordinary user: the ptrace method drops its privilege (documented)"
		return
	fi
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		gcsprof record --method perf -q -o "$work/suid.data" -- /tmp/suid-euid >rec.out 2>rec.err
	st=$?
	check "recorded by an ordinary user, it exits 0 (got $st)" [ $st -eq 0 ]
	check "with its privilege: $(cat rec.out)" grep -qx 'uid 65534 euid 0' rec.out
	status_is 0 "and the profile reports" gcsprof report "$work/suid.data"
}

# A full disk: one clear line, the target runs to its end and its status
# is not lost in the noise, and the file is readable up to the full disk.
# The disk is sized from a first recording, to hold about half of it: a
# recording long and fast enough (6 s at 999 Hz) that half of it is
# several of tmpfs's 4 KB pages, compressed as it is.
t_enospc() {
	gcsprof record --method $method -F 999 -q -o whole.data -- $T/gcsprof-split 6 >/dev/null 2>&1
	size=$(wc -c <whole.data)
	mkdir -p small
	if ! busybox mount -t tmpfs -o size=$((size + 65536)) tmpfs small; then
		skip "cannot mount a small tmpfs"
		return
	fi
	# Fill all but half a recording (tmpfs counts whole 4 KB pages), or
	# all but one page when half is less (a compressed recording on a slow
	# host is a few KB): that page holds the header and the first samples.
	room=$((size / 2 - size / 2 % 4096))
	[ "$room" -ge 4096 ] || room=4096
	if [ "$size" -le $((room + 4096)) ]; then
		skip "a whole recording is $size bytes: too few samples (a slow host) to fill a disk of $room bytes"
		busybox umount small
		return
	fi
	head -c $(((size + 65536 + 4095) / 4096 * 4096 - room)) /dev/zero >small/fill 2>/dev/null
	echo "# a whole recording is $size bytes"
	gcsprof record --method $method -F 999 -q -o small/full.data -- $T/gcsprof-split 6 \
		>split.out 2>rec.err
	st=$?
	check "record fails with 'output not writable' (72, got $st)" [ $st -eq 72 ]
	check "saying so in one line" [ "$(grep -c 'No space left on device' rec.err)" -eq 1 ]
	sed 's/^/# /' rec.err
	check "the target ran to its end" grep -q '^split: [0-9]* rounds' split.out
	status_is 70 "the file reads as truncated" gcsprof report small/full.data
	n=$(nsamples small/full.data)
	check "with the samples that fitted ($n)" [ "$n" -gt 0 ]
	busybox umount small
}

tap_groups "kill_recorder kill_target attach_exit churn setuid enospc" "$@"
