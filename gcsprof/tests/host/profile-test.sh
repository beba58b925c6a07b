#!/bin/sh
# Host tests of gcsprof report on hand-written profiles: every format from
# one profile, and the errors for bad, truncated, missing and unwritable
# input and output, each with its status. TAP.
# Usage: profile-test.sh GCSPROF WORKDIR [PPROF_CHECK]
set -u
gp=$1 work=$2 pprof_check=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"

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
status_is 0 "svg" "$gp" report good.data -f svg -o g.svg
check "svg is an SVG document" grep -q '</svg>' g.svg
status_is 0 "pprof" "$gp" report good.data -f pprof -o g.pb.gz
check "pprof is gzip" gzip -t g.pb.gz
if [ -n "$pprof_check" ]; then
	status_is 0 "the pprof output is a valid Profile" "$pprof_check" g.pb.gz
	check "pprof's top function by self matches the text report's" \
		grep -qx '2 \[prog+0x100\]' out.txt
fi
if command -v go >/dev/null 2>&1; then
	status_is 0 "go tool pprof reads it" go tool pprof -top g.pb.gz
	check "pprof's top matches" grep -q 'prog+0x100' out.txt
else
	skip "go tool pprof: no 'go' on this host (Debian's golang-go)"
fi

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
