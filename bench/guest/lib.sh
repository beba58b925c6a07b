#!/bin/sh
# Helpers of the guest half of bench/: turning each method's output into
# folded chains (root first, frames joined by ';', a count last) and
# judging them against the ground truth of the workload. Sourced by
# profile.sh; POSIX sh, as the guest's /bin/sh is dash.

awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
now_ns() { date +%s%N; }

# A frame as judge and edges compare it: the function's name without the
# offset (+0x..) or source (" (...)") a tool adds; where there is no name
# (Debian's binaries are stripped), the file's base name and the offset,
# rounded up to the instruction (perf's DWARF unwinder gives a return
# address minus one, gcsprof and perf's kernel chains the address itself):
# "[unknown] (/usr/bin/gzip+0x3eef)" and "[gzip+0x3ef0]" are one frame.
# The workloads' inlined helpers (common.h: spin, spin_for, seconds_now)
# come out as "": gcsprof shows inlined calls, perf --no-inline does not.
CLEAN_AWK='
function hexval(h,    i, v) {
	v = 0; h = tolower(h)
	for (i = 1; i <= length(h); i++)
		v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
function unnamed(file, off,    v) {
	sub(/.*\//, "", file)
	v = hexval(off); v = v + (4 - v % 4) % 4
	return sprintf("[%s+0x%x]", file, v)
}
function clean(g,    a) {
	sub(/^[ \t]+/, "", g); sub(/[ \t]+$/, "", g)
	if (match(g, /^\[unknown\] \(.*\+0x[0-9a-f]+\)$/)) {
		g = substr(g, 12, length(g) - 12)
		a = g; sub(/\+0x[0-9a-f]+$/, "", a); sub(/.*\+0x/, "", g)
		return unnamed(a, g)
	}
	if (match(g, /^\[.*\+0x[0-9a-f]+\]$/)) {
		g = substr(g, 2, length(g) - 2)
		a = g; sub(/\+0x[0-9a-f]+$/, "", a); sub(/.*\+0x/, "", g)
		return unnamed(a, g)
	}
	sub(/ \(.*\)$/, "", g); sub(/\+0x[0-9a-f]+$/, "", g)
	if (g == "spin" || g == "spin_for" || g == "seconds_now")
		return ""
	return g
}
# frames(LINE): the cleaned frames of a folded line into f[1..], merging
# consecutive repeats when merge is set; returns their number.
function frames(line, merge,    k, raw, i, g, m, prev) {
	k = split(line, raw, ";"); m = 0; prev = "\001"
	for (i = 1; i <= k; i++) {
		g = clean(raw[i])
		if (g == "" || (merge && g == prev)) continue
		f[++m] = g; prev = g
	}
	return m
}'

# perf_folded IN OUT: perf script's blocks (leaf first, one frame a line,
# "ADDR SYMBOL (FILE+OFFSET)" as -F ip,sym,dsoff prints it) as root-first
# folded lines. Kernel frames (perf adds them at a sample taken in a
# system call) are left out: every method here records user chains.
perf_folded() {
	awk 'BEGIN { RS = ""; FS = "\n" } {
		s = ""
		for (i = NF; i >= 1; i--) {
			line = $i; a = line
			sub(/^[ \t]*/, "", a); sub(/ .*/, "", a)
			if (length(a) == 16 && a ~ /^ffff[89a-f]/) continue
			sub(/^[ \t]*[0-9a-f]+ /, "", line)
			if (line == "" || line ~ /^[^ ]+ +[0-9]+ /) continue
			s = s (s == "" ? "" : ";") line
		}
		if (s != "") print s " 1"
	}' "$1" >"$2"
}

# judge MODE PARAM FOLDED: prints "IN EXACT": the samples in scope (whose
# innermost frame is the workload's own hot function) and, of those, the
# ones whose whole chain is the true one, frames compared as clean gives
# them.
#  split: _start ... main, path_a, burn_a (or the b path). Consecutive
#         repeats of a frame are merged first: perf's fp mode adds a leaf's
#         caller from the link register even when the kernel's chain (the
#         GCS) already holds it; split has no recursion to hide.
#  depth: _start ... main, PARAM descend frames, burn. No merging.
#  busy:  two frames of libc (the thread's entry and start_thread), worker.
#  ref:   the samples with a frame in the program ("^prog;NAME" in the
#         file PARAM) are in scope; exact if the chain is complete (from
#         one of the program's entries, "^root;FRAME") and every caller ->
#         callee step in it is one of PARAM's, made by edges from the
#         reference method's chains. The step into the leaf is not judged:
#         the leaf is the sampled instruction, wherever it fell, and an
#         unnamed one cannot be matched across runs. Repeats are merged
#         as in split.
judge() {
	awk -v mode="$1" -v param="$2" "$CLEAN_AWK"'
	BEGIN {
		if (mode == "ref")
			while ((getline line < param) > 0)
				if (line ~ /^\^root;/) root[substr(line, 7)] = 1
				else if (line ~ /^\^prog;/) prog = "[" substr(line, 7) "+"
				else want[line] = 1
	}
	{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		line = $0; sub(/ +$/, "", line)
		m = frames(line, mode == "split" || mode == "ref")
		if (m == 0) next
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
			good = m == 3 && f[1] ~ /^\[libc\.so\.6\+/ && f[2] ~ /^\[libc\.so\.6\+/
		} else if (mode == "ref") {
			for (i = 1; i <= m && index(f[i], prog) != 1; i++)
				;
			if (i > m) next
			good = f[1] in root
			for (i = 1; good && i < m - 1; i++)
				good = (f[i] ";" f[i + 1]) in want
		}
		in_scope += n
		if (good) exact += n
	}
	END { print in_scope + 0, exact + 0 }' "$3"
}

# edges FOLDED...: the reference of judge's ref mode: "^root;FRAME" for
# each entry of the program (the roots of at least 2% of the chains: the
# program's _start, the dynamic loader's), then the caller -> callee steps
# ("caller;callee", one a line) of the chains from those roots.
edges() {
	awk "$CLEAN_AWK"'{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		line = $0; sub(/ +$/, "", line)
		m = frames(line, 1)
		if (m == 0) next
		chains[++c] = line; roots[f[1]] += n; total += n
	}
	END {
		for (r in roots) if (roots[r] * 50 >= total) { print "^root;" r; ok[r] = 1 }
		for (j = 1; j <= c; j++) {
			m = frames(chains[j], 1)
			if (!(f[1] in ok)) continue
			for (i = 1; i < m; i++) if (!((f[i] ";" f[i + 1]) in seen)) {
				seen[f[i] ";" f[i + 1]] = 1
				print f[i] ";" f[i + 1]
			}
		}
	}' "$@"
}
