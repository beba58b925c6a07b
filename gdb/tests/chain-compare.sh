# shellcheck shell=sh
# Helpers shared by the plugin's guest and host tests (POSIX sh, mawk).
#   frames_of FILE        the function names of `gcs bt` or inspect frames, in order
#   bt_frames_of FILE     the function names of GDB's own `bt`
#   chains_of FILE        every line of every thread's chain: "TID SEQ ADDRESS
#                         NAME+OFF at FILE:LINE", inline levels, folded runs and
#                         signal lines, from `gcs bt` (headers "thread N (LWP
#                         TID): ...") or `gcsprof inspect` (headers "thread
#                         TID...:"), sorted by thread: the two compare frame
#                         for frame, file and line included
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
