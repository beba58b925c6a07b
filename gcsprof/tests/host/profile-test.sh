#!/bin/sh
# Host tests of gcsprof report on hand-written profiles: every format from
# one profile, and the errors for bad, truncated, missing and unwritable
# input and output, each with its status. TAP.
# Usage: profile-test.sh GCSPROF WORKDIR [PPROF_CHECK]
set -u
gp=$1 work=$2 pprof_check=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"
# The files these profiles name are made up: no build-id look-ups over the
# network (gcsprof.debuginfod tests those).
unset DEBUGINFOD_URLS

# A profile of a process whose files are not on this machine: names come
# out as [file+offset], which is enough to check the writers.
cat >good.data <<'P'
gcsprof-profile 1
hz 99
mode cpu
command test%20program
mapping 0 42 400000 401000 0 0123abcd /no/such/prog
mapping 0 42 7f0000 7f8000 0 - /no/such/libc.so.6
sample 100 42 42 R 0 main%20thread - P400100 R400200 R7f0010
sample 200 42 42 R 0 main%20thread - P400100 R400200 R7f0010
sample 300 42 43 S 0 worker - P400300 R7f0020
lost no-gcs 1
end 1000000 3 2
P
status_is 0 "text report" "$gp" report good.data
check "text: the leaf function has 2 of 3 samples" grep -q '66.67%.*prog+0x100' out.txt
status_is 0 "folded" "$gp" report good.data -f folded
check "folded: root first, merged, counted" \
	grep -qxF '[libc.so.6+0x10];[prog+0x200];[prog+0x100] 2' out.txt
status_is 0 "folded per thread" "$gp" report good.data -f folded --per-thread
check "folded per thread: the thread is the root" grep -q '^worker;' out.txt
status_is 0 "text per thread" "$gp" report good.data --per-thread
check "text per thread: a section per thread" \
	grep -qF '## thread 43 (worker) of process 42: 1 samples' out.txt
status_is 0 "svg" "$gp" report good.data -f svg -o g.svg
check "svg is an SVG document" grep -q '</svg>' g.svg
status_is 0 "pprof" "$gp" report good.data -f pprof -o g.pb.gz
check "pprof is gzip" gzip -t g.pb.gz
if [ -n "$pprof_check" ]; then
	status_is 0 "the pprof output is a valid Profile" "$pprof_check" g.pb.gz
	check "pprof's top function by self matches the text report's" \
		grep -qx '2 \[prog+0x100\]' out.txt
fi
status_is 0 "pprof per thread" "$gp" report good.data -f pprof --per-thread -o t.pb.gz
if [ -n "$pprof_check" ]; then
	status_is 0 "the per-thread pprof output is a valid Profile" "$pprof_check" --roots t.pb.gz
	check "per thread, each stack's root is its thread" \
		sh -c 'grep -qx "2 main thread" out.txt && grep -qx "1 worker" out.txt'
	status_is 0 "and its leaves are the same" "$pprof_check" t.pb.gz
	check "the top function by self as before" grep -qx '2 \[prog+0x100\]' out.txt
fi
if command -v go >/dev/null 2>&1; then
	status_is 0 "go tool pprof reads it" go tool pprof -top g.pb.gz
	check "pprof's top matches" grep -q 'prog+0x100' out.txt
else
	skip "go tool pprof: no 'go' on this host (Debian's golang-go)"
fi

# speedscope: valid by its schema, one profile per thread named by name
# and tid, and the same leaf weights as the text report.
here=$(cd "$(dirname "$0")" && pwd)
if command -v python3 >/dev/null 2>&1; then
	status_is 0 "speedscope" "$gp" report good.data -f speedscope -o s.json
	status_is 0 "speedscope: valid by its file format's schema" \
		python3 "$here/speedscope-check.py" s.json
	check "speedscope: one profile per thread, named by name and tid" sh -c \
		'grep -qx "profile main thread (tid 42) 2" out.txt &&
		 grep -qx "profile worker (tid 43) 1" out.txt'
	check "speedscope: the main thread's leaf weighs 2 periods" \
		grep -qx 'leaf 20202020 \[prog+0x100\]' out.txt
	# A thread name that is not UTF-8 still makes valid JSON.
	sed 's/ worker / bad%ffname%22 /' good.data >utf.data
	"$gp" report utf.data -f speedscope -o utf.json 2>/dev/null
	status_is 0 "speedscope: a name that is not UTF-8, still valid" \
		python3 "$here/speedscope-check.py" utf.json
	check "speedscope: the bad byte replaced, the quote kept" \
		grep -qF "$(printf 'profile bad\357\277\275name" (tid 43) 1')" out.txt
	# The Firefox Profiler (Gecko format): threads named, samples at their
	# times in ms, leaves as in the text report.
	status_is 0 "firefox" "$gp" report good.data -f firefox -o f.json
	status_is 0 "firefox: the structure the profiler's importer needs" \
		python3 "$here/firefox-check.py" f.json
	check "firefox: threads named, samples on the timeline" sh -c \
		'grep -qx "thread main thread 42 2 0.000100 0.000200" out.txt &&
		 grep -qx "thread worker 43 1 0.000300 0.000300" out.txt'
	check "firefox: the main thread's leaf" grep -qx 'leaf 2 \[prog+0x100\]' out.txt
	"$gp" report utf.data -f firefox -o utf-f.json 2>/dev/null
	status_is 0 "firefox: a name that is not UTF-8, still valid" \
		python3 "$here/firefox-check.py" utf-f.json
	# A thread that names itself after it starts goes by its latest name.
	sed 's/^sample 300 42 43 S 0 worker/sample 50 42 43 R 0 prog - P400300\n&/' good.data |
		sed 's/^end 1000000 3 2/end 1000000 4 2/' >rename.data
	"$gp" report rename.data --per-thread -o rename.txt 2>/dev/null
	"$gp" report rename.data -f speedscope -o rename.json 2>/dev/null
	"$gp" report rename.data -f firefox -o rename-f.json 2>/dev/null
	check "a renamed thread by its latest name, in text, speedscope and firefox" sh -c \
		'grep -qF "## thread 43 (worker) of process 42: 2 samples" rename.txt &&
		 grep -qF "\"name\":\"worker (tid 43)\"" rename.json &&
		 grep -qF "{\"name\":\"worker\"," rename-f.json'
	# Samples out of order in the file come out in order of time.
	sed 's/^sample 100 42 42/sample 900 42 42/' good.data >order.data
	"$gp" report order.data -f firefox -o order.json 2>/dev/null
	status_is 0 "firefox: samples out of order in the file, in order of time" \
		python3 "$here/firefox-check.py" order.json
	check "firefox: the main thread from 200 to 900 ns" \
		grep -qx "thread main thread 42 2 0.000200 0.000900" out.txt
	# The interactive SVG: valid XML, its script inline, frames where
	# their shares put them; the script itself run under node when there
	# is one: zoom, search (nested matches counted once), details, reset.
	status_is 0 "svg: a standalone SVG with its script and controls" \
		python3 "$here/svg-check.py" g.svg
	check "svg: every frame drawn, one root of 3 samples" \
		sh -c 'grep -qx "frames 6" out.txt && grep -qx "root 3" out.txt'
	if command -v node >/dev/null 2>&1; then
		status_is 0 "svg: the script zooms, searches, details, resets" \
			python3 "$here/svg-check.py" g.svg --search 0x100 --node node
		check "svg: the search's share" grep -qx 'matched 66.67%' out.txt
		status_is 0 "svg: a search whose matches nest" \
			python3 "$here/svg-check.py" g.svg --search prog --node node
		check "svg: nested matches counted once" grep -qx 'matched 100.00%' out.txt
	elif [ "${CI:-}" = true ]; then
		not_ok "svg script checks: no node, which CI must have (scripts/deps installs nodejs)"
	else
		skip "svg script checks: no node on this host"
	fi
	"$gp" report utf.data -f svg --per-thread -o utf.svg 2>/dev/null
	status_is 0 "svg: a name that is not UTF-8, still valid XML" \
		python3 "$here/svg-check.py" utf.svg
	status_is 0 "svg per thread" "$gp" report good.data -f svg --per-thread -o t.svg
	status_is 0 "svg per thread: valid" python3 "$here/svg-check.py" t.svg
	check "svg per thread: the threads above the root" \
		sh -c 'grep -q "data-d=\"1\"><title>worker (1 samples" t.svg'
else
	skip "speedscope, firefox and svg checks: no python3 on this host"
fi

# Files the profile names, missing or different: one line per cause, the
# same in every writer, with an example path.
for f in text folded svg pprof speedscope firefox; do
	"$gp" report good.data -f "$f" -o "missing.$f" 2>"missing.$f.err"
	n=$(grep -c 'not on this machine' "missing.$f.err")
	check "$f: the files not on this machine said exactly once ($n)" [ "$n" -eq 1 ]
done
check "that line counts both files, names one, and says what would help" \
	grep -q '2 file(s) the profile names are not on this machine (e.g. /no/such/prog).*--sysroot DIR.*gcsprof archive.*DEBUGINFOD_URLS' \
	missing.text.err
check "and it is the only line" [ "$(wc -l <missing.text.err)" -eq 1 ]
status_is 75 "a --sysroot that does not exist" "$gp" report good.data --sysroot /nonexistent/root
# shellcheck disable=SC2016 # the inner shell expands it
check "is an error, in one line" sh -c '[ "$(wc -l <err.txt)" -eq 1 ] &&
	grep -qx "gcsprof: report: --sysroot /nonexistent/root: no such folder" err.txt'
status_is 75 "a --sysroot that is a file" "$gp" report good.data --sysroot good.data
check "is an error too" grep -q 'sysroot good.data: not a folder' err.txt
status_is 75 "archive with a --sysroot that does not exist" \
	"$gp" archive good.data -o never.archive --sysroot /nonexistent/root
check "is the same one-line error, and no bundle is made" sh -c '[ ! -e never.archive ] &&
	grep -qx "gcsprof: archive: --sysroot /nonexistent/root: no such folder" err.txt'
mkdir -p emptyroot
status_is 0 "a --sysroot without the files" "$gp" report good.data --sysroot emptyroot -f folded
n=$(grep -c 'not under --sysroot /.*/emptyroot (e.g. /.*/emptyroot/no/such/prog)' err.txt)
check "said once ($n), with the path under that sysroot" [ "$n" -eq 1 ]
check "and not as files missing from this machine" sh -c '! grep -q "not on this machine" err.txt'
# A file that is here, but not the one recorded: its build-id differs.
mkdir -p other/bin && cp "$gp" other/bin/prog
sed 's|/no/such/prog|/bin/prog|; s|/no/such/libc.so.6|/bin/prog|' good.data >differs.data
status_is 0 "a file whose build-id differs" "$gp" report differs.data --sysroot other -f folded
n=$(grep -c 'are not the ones recorded (build-id mismatch, e.g. /.*/other/bin/prog): their frames are still named from these files' err.txt)
check "said once ($n), as a build-id mismatch with the path" [ "$n" -eq 1 ]
check "and nothing else" [ "$(wc -l <err.txt)" -eq 1 ]
show err.txt

# A chain through a signal handler: the trampoline (in the vDSO, which no
# file maps) is named as gdb names it, not by its address.
cat >sig.data <<'P'
gcsprof-profile 1
hz 99
mode cpu
command sig
mapping 0 42 400000 401000 0 - /no/such/prog
sample 100 42 42 R 0 main - P400100 Sffff00001000 R400200
end 1000 1 1
P
status_is 0 "a chain through a signal handler" "$gp" report sig.data -f folded
check "the trampoline is named as such" \
	grep -qxF '[prog+0x200];[signal handler called];[prog+0x100] 1' out.txt

# A perf recording's caveats: chains cut at the depth limit (flag c,
# with the limit and what set it), the kernel's throttling, lost samples.
# The text header, pprof's comments and the SVG's foot say each; a file
# without them says none.
cat >perf.data <<'P'
gcsprof-profile 1
hz 99
mode cpu
method perf
event cycles
command deep
max-stack 4 sysctl
mapping 0 42 400000 401000 0 - /no/such/prog
sample 100 42 42 R 0 main c P400100 R400200 R400200 R400200
sample 200 42 42 R 0 main - P400100 R400300
sample 300 42 43 R 0 worker fc P400100 F400200 F400200 F400200
throttle 3 2
lost ring-overrun 5
end 1000 3 1
P
status_is 0 "a perf profile with cut chains and throttling" "$gp" report perf.data -o perf.txt
show perf.txt | head -n 8
check "text: the method line gives the depth limit" \
	grep -q '^# method: perf (cycles event; .*; chains of up to 4 frames)$' perf.txt
check "text: how many chains were cut, at what depth" \
	grep -q '^# cut: 2 of 3 samples (66.7%) have chains that reached the limit of 4 frames' perf.txt
check "text: and how to raise the limit" \
	grep -q '^# cut: .*the limit is kernel.perf_event_max_stack: raise it (sysctl -w kernel.perf_event_max_stack=N' perf.txt
check "text: the throttling" \
	grep -q '^# throttled: the kernel paused sampling 3 times (and resumed it 2 times)' perf.txt
check "text: the lost samples, in a sentence with what to do" grep -qxF '# not sampled: 5 samples (62.5% of the 8 due) were not taken: 5 that the kernel could not write because the ring buffer was full (ring-overrun; to avoid it, a larger -m (ring buffer pages per CPU) or a lower -F).' perf.txt
sed 's/^max-stack 4 sysctl$/max-stack 4 record-size/' perf.data >perf-rs.data
status_is 0 "a limit set by the size of a perf sample" "$gp" report perf-rs.data
check "text: says ptrace records them whole" \
	grep -q '^# cut: .*the limit is the most a perf sample holds: --method ptrace records chains whole$' out.txt
sed '/^max-stack/d; /^throttle/d' perf.data >perf-old.data
status_is 0 "cut flags without a max-stack record" "$gp" report perf-old.data
check "text: the depth from the cut chains" grep -q '^# cut: 2 of 3 .* limit of 4 frames' out.txt
check "text: no throttling said where the file has none" sh -c '! grep -q "^# throttled" out.txt'
status_is 0 "the perf profile as SVG" "$gp" report perf.data -f svg -o perf.svg
check "svg: the caveats at its foot" \
	[ "$(grep -c '<text class="note" [^>]*>\(not sampled\|throttled\|cut\): ' perf.svg)" -eq 3 ]
if command -v python3 >/dev/null 2>&1; then
	status_is 0 "svg with notes: still valid" python3 "$here/svg-check.py" perf.svg
fi
if [ -n "$pprof_check" ]; then
	status_is 0 "the perf profile as pprof" "$gp" report perf.data -f pprof -o perf.pb.gz
	status_is 0 "pprof: its comments" "$pprof_check" --comments perf.pb.gz
	check "pprof: the caveats as comments" sh -c 'grep -q "^comment not sampled: 5 samples (62.5% of the 8 due) were not taken: 5 that the kernel" out.txt &&
		grep -q "^comment throttled: the kernel paused sampling 3 times" out.txt &&
		grep -q "^comment cut: 2 of 3 samples" out.txt'
	status_is 0 "pprof: a profile without caveats has no comments" "$pprof_check" --comments g.pb.gz
	# shellcheck disable=SC2016 # the inner shell expands it
	check "pprof: none but the lost sample" sh -c '[ "$(wc -l <out.txt)" -eq 1 ] &&
		grep -q "^comment not sampled: 1 sample (25.0% of the 4 due) was not taken: 1 from threads running without a shadow stack (GCS) (no-gcs; to avoid it, record with --gcs-tunable 3" out.txt'
fi

# A riscv64 recording: its arch record names the shadow stack, and the
# report's notes say that name (Zicfiss), not arm64's GCS; a file without
# the record (good.data, as every file before it) is arm64's.
sed 's/^command .*/&\narch riscv64 Zicfiss/' good.data >rv.data
status_is 0 "a riscv64 profile" "$gp" report rv.data
check "riscv64: the lost note names Zicfiss" \
	grep -qF 'from threads running without a shadow stack (Zicfiss) (no-gcs; ' out.txt
check "riscv64: and never GCS" sh -c '! grep -q GCS out.txt'
status_is 0 "a profile without an arch record" "$gp" report good.data
check "without an arch record: GCS, as arm64 has it" \
	grep -qF 'from threads running without a shadow stack (GCS) (no-gcs; ' out.txt
printf 'gcsprof-profile 1\nhz 99\nmode cpu\narch riscv64\nend 0 0 0\n' >rv-bad.data
status_is 69 "an arch record without the shadow stack's name" "$gp" report rv-bad.data
# shellcheck disable=SC2016 # the inner shell expands it
check "says so in one line" sh -c '[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "malformed arch record" err.txt'

# A recursion 300 deep: the text report's chain says so in one line,
# every frame accounted for.
{
	printf 'gcsprof-profile 1\nhz 99\nmode cpu\ncommand rec\n'
	printf 'mapping 0 42 400000 401000 0 - /no/such/prog\n'
	printf 'sample 100 42 42 R 0 main - P400100'
	i=0
	while [ $i -lt 300 ]; do printf ' R400200'; i=$((i + 1)); done
	printf ' R400300\nend 1000 1 1\n'
} >rec.data
status_is 0 "a deep recursion" "$gp" report rec.data
check "its chain folds the recursion with its count" \
	grep -qF '[prog+0x300] -> [prog+0x200] [x300, recursion] -> [prog+0x100]' out.txt

# Version 1 and version 2 of one recording report alike, in every format:
# a profile recorded in the guest by gcsprof before version 2 (a fixture
# kept in the tree), and the same samples as version 2, made from it by an
# awk script of its own (profile-v1-to-v2.awk), plain and gzip.
fixture=$here/fixtures/v1-split.data
awk -f "$here/profile-v1-to-v2.awk" "$fixture" >v2-split.data
gzip -n -c v2-split.data >v2-split.data.gz
check "the fixture is version 1" grep -qx 'gcsprof-profile 1' "$fixture"
# shellcheck disable=SC2016 # the inner shell expands it
check "its version 2 shares chains: fewer stack nodes than frames" sh -c \
	'[ "$(grep -c "^stack " v2-split.data)" -lt "$(grep "^sample " "$1" | tr " " "\n" | grep -c "^[PRSF]")" ]' \
	sh "$fixture"
for fmt in text folded svg speedscope firefox pprof; do
	"$gp" report "$fixture" -f "$fmt" -o "v1.$fmt" 2>v1.err
	"$gp" report v2-split.data -f "$fmt" -o "v2.$fmt" 2>v2.err
	"$gp" report v2-split.data.gz -f "$fmt" -o "v2gz.$fmt" 2>v2gz.err
	check "version 1 and 2 (plain and gzip) report alike: $fmt" sh -c \
		"[ -s v1.$fmt ] && cmp -s v1.$fmt v2.$fmt && cmp -s v1.$fmt v2gz.$fmt && cmp -s v1.err v2.err"
done
status_is 0 "archive of a gzip version-2 profile" "$gp" archive v2-split.data.gz -o v2.bundle
check "it holds the profile as it is" cmp -s v2-split.data.gz v2.bundle/profile
printf 'not a profile\n' >bad.data
status_is 69 "bad profile" "$gp" report bad.data
head -c 300 good.data >trunc.data
status_is 70 "truncated profile" "$gp" report trunc.data
check "it says so in one line" [ "$(grep -c 'truncated profile' err.txt)" -eq 1 ]
sed '/^end/d' good.data >noend.data
status_is 70 "profile without its end record" "$gp" report noend.data -f folded
check "and still reports every complete sample" \
	grep -qxF '[libc.so.6+0x10];[prog+0x200];[prog+0x100] 2' out.txt
check "saying how many it used" grep -q 'using its 3 complete sample' err.txt
# Cut in the middle of the last sample: that one is dropped, not misread.
head -c "$(($(grep -b '^sample 300' good.data | cut -d: -f1) + 20))" good.data >cut.data
status_is 70 "profile cut inside a sample" "$gp" report cut.data -f folded
check "the samples before it are kept" grep -q 'prog+0x100\] 2$' out.txt
check "the cut one is not" sh -c '! grep -q worker out.txt && ! grep -q "prog+0x300" out.txt'
sed 's/^end 1000000 3 2/end 1000000 4 2/' good.data >count.data
status_is 69 "profile whose counts disagree" "$gp" report count.data
sed 's/P400100/Pzz/' good.data >frame.data
status_is 69 "malformed frame" "$gp" report frame.data
sed 's/^max-stack 4 sysctl$/max-stack 0 sysctl/' perf.data >ms.data
status_is 69 "malformed max-stack record" "$gp" report ms.data
sed 's/^throttle 3 2$/throttle 3/' perf.data >th.data
status_is 69 "malformed throttle record" "$gp" report th.data
sed 's/gcsprof-profile 1/gcsprof-profile 9/' good.data >ver.data
status_is 69 "unknown version" "$gp" report ver.data
check "the version error says which" grep -q 'version 9' err.txt
status_is 75 "missing profile" "$gp" report /nonexistent/profile
status_is 72 "unwritable output" "$gp" report good.data -o /nonexistent/dir/out
check "one line on stderr" [ "$(wc -l <err.txt)" -eq 1 ]
status_is 71 "not a core" "$gp" inspect good.data
# gcsprof archive: the profile and the files it names, in a folder that
# report reads as it is; missing files said once; an existing folder kept.
mkdir -p files/bin && cp "$gp" files/bin/prog
cat >arch.data <<'P'
gcsprof-profile 1
hz 99
mode cpu
command x
mapping 0 1 400000 401000 0 - /bin/prog
mapping 0 1 500000 501000 0 - /no/such/lib
sample 1 1 1 R 0 t - P400100 R500100
end 1 1 2
P
status_is 0 "archive" "$gp" archive arch.data --sysroot files -o arch.bundle
check "it holds the profile" cmp -s arch.data arch.bundle/profile
check "and the file at its path" cmp -s files/bin/prog arch.bundle/root/bin/prog
check "the missing one said once" [ "$(grep -c 'not here' err.txt)" -eq 1 ]
status_is 0 "report reads the bundle" "$gp" report arch.bundle -f folded
check "naming frames by the bundle's file" grep -q 'prog+0x100' out.txt
# shellcheck disable=SC2016 # the inner shell expands it
check "and warns only of the missing library" sh -c \
	'[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "/no/such/lib" err.txt'
status_is 72 "archive into an existing folder" "$gp" archive arch.data -o arch.bundle
status_is 64 "bad option" "$gp" report --frobnicate
status_is 64 "bad format" "$gp" report -f jpeg good.data
status_is 0 "--help" "$gp" report --help
if [ "$(uname -m)" != aarch64 ]; then
	status_is 74 "record needs arm64" "$gp" record -- true
fi
tap_done
