#!/bin/sh
# One contract for a chain: the inspect corpus's cores, made in the guest
# (on KERNEL) by corpus-test.sh, printed on this host by the three tools
# that print chains, which must give the same frames:
#   - `gcsprof inspect` and the GDB plugin's `thread apply all gcs bt`
#     (gdb-multiarch): the same numbered code frames (gcswalk_frame_is_code:
#     the PC, returns, the signal trampoline, the interrupted PC), each of
#     the same kind (told by its note), address and name, recursion runs unfolded to
#     the same numbers, and the same lines for a signal delivery, a GCS
#     switch, an unreadable slot; the plugin may go on past a GCS switch
#     (it follows the thread to the GCS it left), inspect stops there;
#   - `gcsprof report --per-thread` of the cores' chains as a profile
#     (core-profile: one sample a thread): each thread's chain holds the
#     same functions, inline ones included, in the same order, with the
#     signal trampoline where inspect has it ("[signal handler called]").
# A function no tool can name (a stripped library's local one) counts as
# unknown in all three. TAP; 4 (skip) without an arm64 build or without
# GCS in the guest.
# Usage: chain-contract-test.sh VM_RUN KERNEL STAGE GCSPROF CORE_PROFILE GDB PLUGIN WORKDIR
#        chain-contract-test.sh guest      (in the guest, through vm/run)
set -u
here=$(cd "$(dirname "$0")" && pwd)
C=/opt/gcsprof/tests/corpus

# In the guest: the corpus's cores into /share/cores, and the libraries
# they map into /share/root.
if [ "${1:-}" = guest ]; then
	# shellcheck source=../tap.sh
	. /opt/gcsprof/tests/tap.sh
	GCSPROF_TEST_DIR=/share/cores $C/corpus-test.sh
	rc=$?
	share_libc
	for f in /lib/aarch64-linux-gnu/libstdc++.so.6 /lib/aarch64-linux-gnu/libgcc_s.so.1 \
		/lib/aarch64-linux-gnu/libm.so.6; do
		[ -e "$f" ] || continue
		r=$(readlink -f "$f")
		mkdir -p "/share/root$(dirname "$f")" "/share/root$(dirname "$r")"
		cp "$r" "/share/root$f" && cp "$r" "/share/root$r"
	done
	exit $rc
fi

vm_run=$1 kernel=$2 stage=$3 gp=$4 core_profile=$5 gdb=$6 plugin=$7 work=$8
# shellcheck source=../tap.sh
. "$here/../tap.sh"
if [ ! -x "$stage/tests/corpus/corpus-test.sh" ]; then
	echo "1..0 # SKIP no arm64 build in $stage (scripts/build makes it)"
	exit 4
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$vm_run" --kernel "$kernel" --stage "$stage" --share "$work" --timeout 1200 \
	--add "$0:/tmp/chain-contract-test.sh" -- sh /tmp/chain-contract-test.sh guest \
	>"$work.log" 2>&1
rc=$?
case $rc in
0 | 1) ;;
4) echo "1..0 # SKIP the guest ($kernel kernel) has no GCS"; exit 4 ;;
*) echo "# the guest run failed ($rc):"; tail -n 40 "$work.log" | show -; exit 1 ;;
esac
check "the corpus's own checks passed in the guest" [ "$rc" -eq 0 ]
cd "$work" || exit 1
root=$work/root
mkdir -p "$root$C" && cp "$stage"/tests/corpus/healthy-* "$stage"/tests/corpus/corrupt-* "$root$C/"

# numbered FILE: the chains of `gcsprof inspect` or `gcs bt` output, one
# line per frame or mark: "TID SEQ NUMBER KIND ADDRESS NAMES", NAMES the
# frame's function and its inline ones (innermost first, joined by "|"),
# or "TID SEQ - MARK" for a line that is not a frame. Threads in numeric
# order, each in its own order. Names go through same_names.
numbered() {
	mawk '
	function name_of(s) {
		sub(/ at [^ ]*:[0-9]+$/, "", s); sub(/ \[inlined\]$/, "", s)
		sub(/\+0x[0-9a-f]+$/, "", s)
		return s ~ /^\?\?/ ? "?" : s
	}
	function flush(  k) {
		if (num == "") return
		if (kind == "sigreturn") names = "<sigreturn>"
		for (k = num; k <= last; k++) print tid, seq++, k, kind, addr, names
		num = ""
	}
	function mark(m) { flush(); print tid, seq++, "-", m }
	/^thread [0-9]+ \(LWP [0-9]+\)/ { flush(); tid = $4; sub(/\).*/, "", tid); seq = 0; next }
	/^thread [0-9]+/ { flush(); tid = $2; sub(/[^0-9].*/, "", tid); seq = 0; next }
	tid == "" { next }
	/^  #[0-9]+ +0x[0-9a-f]+ / {
		flush(); num = substr($1, 2) + 0; last = num
		kind = num == 0 ? "pc" : "return"; addr = $2
		s = $0; sub(/^  #[0-9]+ +0x[0-9a-f]+ /, "", s); names = name_of(s); next
	}
	num != "" && /^        \[the signal handler returns here/ { kind = "sigreturn"; next }
	num != "" && /^        \[interrupted here by the signal\]/ { kind = "interrupted-pc"; next }
	num != "" && /^        \[the link register/ { kind = "lr"; next }
	num != "" && /^        \[the same frame [0-9]+ more times: #[0-9]+ to #[0-9]+/ {
		s = $0; sub(/.* to #/, "", s); sub(/[^0-9].*/, "", s); last = s + 0; next
	}
	num != "" && /^                   +[^ [(]/ { s = $0; sub(/^ +/, "", s); names = names "|" name_of(s); next }
	/^  ---- signal delivered here/ { mark("signal-cap"); next }
	/^  ---- GCS switch/ { mark("switch-cap"); next }
	/^  \[the GCS slot at 0x[0-9a-f]+ cannot be read/ { mark("unreadable"); next }
	/^  \[[a-z-]+ entry 0x/ { s = $1; sub(/^\[/, "", s); mark(s); next }
	{ flush() }
	END { flush() }
	' "$1" | same_names 6 | sort -s -n -k1,1 -k2,2
}

# same_names FIELD: the names in FIELD (joined by "|") of each line of
# standard input as all three tools would give them: demangled (GDB
# demangles C++ symbols, libgcswalk gives an ELF symbol as it is), without
# a parameter list, and without leading underscores (the tools may pick
# different aliases of one libc function: poll and __poll, at one
# address).
same_names() {
	c++filt | mawk -v f="$1" 'NF < f { print; next }
		{ head = ""; names = $f
		for (i = 1; i < f; i++) head = head $i " "
		for (i = f + 1; i <= NF; i++) names = names " " $i
		n = split(names, part, "|"); out = ""
		for (i = 1; i <= n; i++) {
			s = part[i]; sub(/\(.*\)$/, "", s); sub(/^_+/, "", s)
			out = out (i > 1 ? "|" : "") s
		}
		print head out }'
}

# report_names FILE: each thread's chain in a `report --per-thread` text,
# innermost first: "TID NAMES" (one name a field, joined by "|").
report_names() {
	mawk '
	# A function outside the program carries its object, "raise [libc.so.6]".
	function norm(s) {
		if (s == "[signal handler called]") return "<sigreturn>"
		if (s ~ /^\[/) return "?"
		sub(/ \[[^]]*\]$/, "", s)
		return s
	}
	/^## thread [0-9]+/ { tid = $3; want = 0; next }
	/^Heaviest call chains/ { want = tid != ""; next }
	want && /^ *[0-9.]+% +[0-9]+  / {
		s = $0; sub(/^ *[0-9.]+% +[0-9]+  /, "", s)
		n = split(s, part, " -> "); out = ""
		for (i = n; i >= 1; i--) {
			c = 1
			if (match(part[i], / \[x[0-9]+, recursion\]$/)) {
				c = substr(part[i], RSTART + 3) + 0; part[i] = substr(part[i], 1, RSTART - 1)
			}
			for (k = 0; k < c; k++) out = out (out == "" ? "" : "|") norm(part[i])
		}
		print tid, out; want = 0
	}' "$1" | same_names 2 | sort -n -k1,1
}

# inspect_names NUMBERED: the same from numbered's lines: every frame's
# names, innermost first, a thread a line.
inspect_names() {
	mawk '$3 != "-" { out[$1] = out[$1] (out[$1] == "" ? "" : "|") $6 }
	END { for (t in out) print t, out[t] }' "$1" | sort -n -k1,1
}

cores=0
for core in cores/*.core; do
	[ -e "$core" ] || continue
	p=${core##*/}
	p=${p%.core}
	cores=$((cores + 1))
	echo "# --- $p"
	"$gp" inspect --sysroot "$root" "$core" >"$p.inspect" 2>"$p.inspect.err"
	"$gdb" -q -nx -batch -ex "set sysroot $root" -ex "source $plugin" -ex "file $root$C/$p" \
		-ex "core-file $core" -ex "thread apply all -c gcs bt" >"$p.bt" 2>&1
	if "$core_profile" "$core" "$p.data" 2>"$p.data.err"; then
		"$gp" report --sysroot "$root" --per-thread "$p.data" -o "$p.report" 2>"$p.report.err"
	fi
	numbered "$p.inspect" >"$p.inspect.n"
	numbered "$p.bt" >"$p.bt.n"
	frames=$(mawk '$3 != "-"' "$p.inspect.n" | wc -l)
	check "$p: inspect numbers frames ($frames)" [ "$frames" -gt 0 ]
	# Every frame and mark of inspect is gcs bt's, the same numbers,
	# kinds and names.
	if mawk 'NR == FNR { a[$1 " " $2] = $0; next } ($1 " " $2) in a { if (a[$1 " " $2] != $0) exit 1; delete a[$1 " " $2] }
		END { for (k in a) exit 1 }' "$p.inspect.n" "$p.bt.n"; then
		ok "$p: gcs bt has inspect's frames: numbers, kinds, names, marks"
	else
		not_ok "$p: gcs bt has inspect's frames: numbers, kinds, names, marks"
		diff "$p.inspect.n" "$p.bt.n" | head -n 20 | show -
	fi
	# What gcs bt has beyond them starts with a GCS switch: the plugin
	# follows the thread onto the GCS it left.
	beyond=$(mawk 'NR == FNR { n[$1]++; next }
		$2 == n[$1] + 0 && $0 ~ / - switch-cap$/ { sw[$1] = 1 }
		$2 >= n[$1] + 0 && !sw[$1] { print }' "$p.inspect.n" "$p.bt.n")
	[ -z "$beyond" ] || printf '%s\n' "$beyond" | head -n 5 | show -
	check "$p: gcs bt goes past inspect only after a GCS switch" [ -z "$beyond" ]
	inspect_names "$p.inspect.n" >"$p.inspect.names"
	report_names "$p.report" >"$p.report.names" 2>/dev/null
	if [ -s "$p.report.names" ] && cmp -s "$p.inspect.names" "$p.report.names"; then
		ok "$p: report's chains are inspect's, function for function"
	else
		not_ok "$p: report's chains are inspect's, function for function"
		cat "$p.data.err" "$p.report.err" 2>/dev/null | show -
		diff "$p.inspect.names" "$p.report.names" | head -n 10 | show -
	fi
done
check "the guest made the corpus's cores ($cores)" [ "$cores" -ge 20 ]
# The kinds the corpus holds, so that each rule above met a case.
for k in pc return sigreturn interrupted-pc; do
	check "frames of kind $k were compared" grep -q " $k " ./*.inspect.n
done
check "a signal line was compared" grep -q ' - signal-cap$' ./*.inspect.n
tap_done
