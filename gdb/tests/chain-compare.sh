# shellcheck shell=sh
# GDB's $ variables and the regexps matching them are single-quoted on purpose.
# shellcheck disable=SC2016
# Helpers shared by the plugin's guest and host tests (POSIX sh, mawk).
#   frames_of FILE        the function names of `gcs bt` or inspect frames, in order
#   bt_frames_of FILE     the function names of GDB's own `bt`
#   chains_of FILE        every line of every thread's chain: "TID SEQ ADDRESS
#                         NAME+OFF at FILE:LINE", inline levels, folded runs and
#                         signal lines, from `gcs bt` (headers "thread N (LWP
#                         TID): ...") or `gcsprof inspect` (headers "thread
#                         TID...:"), sorted by thread: the two compare frame
#                         for frame, file and line included
#   nogcs_core_commands   GDB arguments: each gcs command between markers
#   nogcs_core_checks OUT their output on a core without GCS: one line each
#   compare_with_inspect NAME EXE CORE GDB_OUTPUT
#                         in the guest: the gcs bt of GDB_OUTPUT against
#                         gcsprof inspect of CORE, frame for frame (TAP)
frames_of() {
	sed -n 's/^  #[0-9]* *0x[0-9a-f]* \([^ +]*\).*/\1/p' "$1" | tr '\n' ' '
}

bt_frames_of() {
	sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\) (.*/\2/p' "$1" | tr '\n' ' '
}

chains_of() {
	mawk '
	/^thread [0-9]+ \(LWP [0-9]+\)/ { t = $4; sub(/\).*/, "", t); seq = 0; next }
	/^thread [0-9]+/ { t = $2; sub(/[^0-9].*/, "", t); seq = 0; next }
	t == "" { next }
	/^  #[0-9]+ +0x[0-9a-f]+ / { sub(/^  #[0-9]+ +/, ""); print t, seq++, $0; next }
	/^ +\[the same frame/ { sub(/^ +/, ""); print t, seq++, $0; next }
	/^  ---- / { print t, seq++, "signal"; next }
	/^                   +[^ [(]/ { sub(/^ +/, ""); print t, seq++, "inline", $0; next }
	' "$1" | sort -n -k1,1 -k2,2
}

# What each gcs command prints on a core of a program without GCS (run
# without the tunable: GCC 12 does not mark the corpus as GCS compatible).
nogcs_core_checks() { # nogcs_core_checks OUT
	for c in bt verify status; do
		sed -n "/^==$c==/,/^==/p" "$1" | sed '1d;$d' >"$1.$c"
		check "core without GCS: gcs $c prints one line" [ "$(wc -l <"$1.$c")" -eq 1 ]
	done
	check "gcs bt and gcs verify: the same gcs: line, GCS not enabled (or no note)" \
		grep -q '^gcs: GCS is not enabled in thread 1\|^gcs: no GCS in the target' "$1.bt"
	check "gcs verify says what gcs bt says" [ "$(cat "$1.bt")" = "$(cat "$1.verify")" ]
	check "gcs status: not enabled" grep -q '^GCS of thread 1 (LWP [0-9]*) (from .*): not enabled' \
		"$1.status"
	check "\$_gcs_verify is -1" grep -q '^\$1 = -1$' "$1"
	check "no Python traceback in $1" sh -c "! grep -q 'Traceback\\|File \"' $1"
}

# shellcheck disable=SC2034 # used by the scripts that source this one
nogcs_core_commands='-ex "echo ==bt==\n" -ex "gcs bt" -ex "echo ==verify==\n" -ex "gcs verify"'
nogcs_core_commands="$nogcs_core_commands"' -ex "echo ==status==\n" -ex "gcs status"'
nogcs_core_commands="$nogcs_core_commands"' -ex "echo ==end==\n" -ex "p \$_gcs_verify"'

# A core of EXE, compared with gcsprof inspect frame for frame.
compare_with_inspect() { # compare_with_inspect NAME EXE CORE GDB_OUTPUT
	gcsprof inspect "$3" >"$1.inspect.txt" 2>&1
	chains_of "$4" >"$1.gdb.chains"
	chains_of "$1.inspect.txt" >"$1.inspect.chains"
	n=$(wc -l <"$1.gdb.chains")
	if cmp -s "$1.gdb.chains" "$1.inspect.chains" && [ "$n" -gt 0 ]; then
		ok "$1: gcs bt equals gcsprof inspect, frame for frame ($n lines)"
	else
		not_ok "$1: gcs bt equals gcsprof inspect, frame for frame"
		diff "$1.gdb.chains" "$1.inspect.chains" | head -n 20 | show
	fi
}
