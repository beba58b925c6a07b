#!/bin/sh
# Helpers of the guest half of bench/: turning each method's output into
# folded chains (root first, frames joined by ';', a count last) and
# judging them against the ground truth of the workload. Sourced by
# profile.sh; POSIX sh, as the guest's /bin/sh is dash.

awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
now_ns() { date +%s%N; }

# A frame as judge and edges compare it: the function's name, without
# the offset (+0x..) or the source (" (...)") a tool may add.
CLEAN_AWK='
function clean(g) {
	sub(/^[ \t]+/, "", g); sub(/[ \t]+$/, "", g)
	sub(/ \(.*\)$/, "", g); sub(/\+0x[0-9a-f]+$/, "", g)
	return g
}'

# perf_folded IN OUT: perf script's blocks (leaf first, one frame a line,
# "ADDR SYMBOL" as -F ip,sym prints it) as root-first folded lines.
perf_folded() {
	awk 'BEGIN { RS = ""; FS = "\n" } {
		s = ""
		for (i = NF; i >= 1; i--) {
			line = $i; sub(/^[ \t]*[0-9a-f]+ /, "", line)
			if (line == "" || line ~ /^[^ ]+ +[0-9]+ /) continue
			s = s (s == "" ? "" : ";") line
		}
		if (s != "") print s " 1"
	}' "$1" >"$2"
}

# judge MODE PARAM FOLDED: prints "IN EXACT": the samples in scope (whose
# innermost frame is the workload's own hot function) and, of those, the
# ones whose whole chain is the true one, frames compared by name (clean).
#  split: _start ... main, path_a, burn_a (or the b path). Consecutive
#         repeats of a frame are merged first: perf's fp mode adds a leaf's
#         caller from the link register even when the kernel's chain (the
#         GCS) already holds it; split has no recursion to hide.
#  depth: _start ... main, PARAM descend frames, burn. No merging.
#  busy:  the thread's entry (clone*, thread_start), start_thread, worker.
#  ref:   every sample is in scope; exact if its chain is complete (from
#         _start through main) and every caller -> callee step in it is
#         one of the file PARAM's, the steps of the reference method's
#         complete chains (see edges).
judge() {
	awk -v mode="$1" -v param="$2" "$CLEAN_AWK"'
	BEGIN {
		if (mode == "ref")
			while ((getline line < param) > 0)
				want[line] = 1
	}
	{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		line = $0; sub(/ +$/, "", line)
		k = split(line, raw, ";")
		m = 0; prev = ""
		for (i = 1; i <= k; i++) {
			g = clean(raw[i])
			if (mode == "split" && g == prev) continue
			f[++m] = g; prev = g
		}
		good = 0
		if (mode == "split") {
			if (f[m] != "burn_a" && f[m] != "burn_b") next
			good = f[1] == "_start" && m >= 4 && f[m - 2] == "main" &&
				f[m - 1] == (f[m] == "burn_a" ? "path_a" : "path_b")
		} else if (mode == "depth") {
			if (f[m] != "burn") next
			d = param + 0
			good = f[1] == "_start" && m >= d + 3 && f[m - d - 1] == "main"
			for (i = m - d; good && i < m; i++)
				good = f[i] == "descend"
		} else if (mode == "busy") {
			if (f[m] != "worker") next
			good = m == 3 && f[2] == "start_thread" && f[1] ~ /clone|thread_start/
		} else if (mode == "ref") {
			good = f[1] == "_start"
			for (i = 1; good && i < m; i++)
				good = (f[i] ";" f[i + 1]) in want
			for (i = 1; good && i <= m && f[i] != "main"; i++)
				;
			good = good && i <= m
		}
		in_scope += n
		if (good) exact += n
	}
	END { print in_scope + 0, exact + 0 }' "$3"
}

# edges FOLDED...: the caller -> callee steps ("caller;callee", one a
# line) of the complete chains (from _start through main) in the files.
edges() {
	awk "$CLEAN_AWK"'{
		if ($NF ~ /^[0-9]+$/) $NF = ""
		line = $0; sub(/ +$/, "", line)
		k = split(line, raw, ";"); main = 0
		for (i = 1; i <= k; i++) {
			g = clean(raw[i])
			f[i] = g
			if (g == "main") main = 1
		}
		if (f[1] != "_start" || !main) next
		for (i = 1; i < k; i++) print f[i] ";" f[i + 1]
	}' "$@" | sort -u
}
