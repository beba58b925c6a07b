#!/bin/sh
# gcsprof report as a performance engineer uses it, on a profile whose
# frames are real functions: this host's own gcsprof binary stands for the
# recorded program and for a library (a copy at another path), its
# functions at the addresses nm gives. The order of the text report (self
# first, --sort, --children), its chains, names (sources relative to their
# common folder, the library outside the program), callers and callees
# (-g, --peek); every slice (--pid, --tid, --comm, --time, --focus,
# --ignore, --group object, --percent-limit) in every output format; the
# recording's provenance in each format that has room for it, and old
# profiles without it; a stripped library's local functions, named once
# its debug file is in the sysroot's usr/lib/debug; the command-line traps
# (the output's name picks the format, binary output to a terminal, a
# folder that is no bundle, standard input). TAP.
# Usage: report-views-test.sh GCSPROF LIBGCSWALK NM WORKDIR [PPROF_CHECK]
set -u
gp=$1 lib=$2 nm=$3 work=$4 pprof_check=${5:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"
unset DEBUGINFOD_URLS

# The address of function $1 of ELF $2 loaded at $3, plus $4.
addr() {
	v=$("$nm" "$2" | awk -v f="$1" '$3 == f && ($2 == "T" || $2 == "t") { print $1; exit }')
	[ -n "$v" ] || { echo "# no $1 in $2" >&2; echo 0; return; }
	printf '%x' $((0x$3 + 0x$v + $4))
}
mkdir -p root/bin root/lib
cp "$gp" root/bin/prog && cp "$gp" root/lib/libfoo.so
P=400000 L=10000000
# PCs at a function's first instruction, return addresses one after it
# (looked up at the call, 4 bytes before): no inlined code there.
text=$(addr gp_write_text "$gp" $P 0) folded=$(addr gp_write_folded "$gp" $P 0)
svg=$(addr gp_write_svg "$gp" $P 0) run=$(addr report_run "$gp" $P 4)
pmain=$(addr main "$gp" $P 4) lmain=$(addr main "$gp" $L 4)
cat >views.data <<P
gcsprof-profile 1
hz 100
mode cpu
method ptrace
command prog%20--views
date 2026-12-07T10:11:12.345Z
host buildhost
kernel 6.12.0-gcs
cpus 4
mapping 0 42 $P 4400000 0 - /bin/prog
mapping 0 42 $L 14000000 0 - /lib/libfoo.so
mapping 1 50 $P 4400000 0 - /bin/prog
sample 1000000000 42 42 R 0 main - P$text R$run R$pmain R$lmain
sample 1100000000 42 42 R 0 main - P$text R$run R$pmain R$lmain
sample 1200000000 42 42 R 0 main - P$text R$run R$pmain R$lmain
sample 2000000000 42 43 R 0 worker - P$folded R$run R$lmain
sample 3000000000 50 50 R 1 other - P$svg R$pmain
end 3500000000 5 3
P
r() { "$gp" report views.data --sysroot root "$@"; }

# ---- The text report ----
status_is 0 "text report" r
show out.txt
row() { grep -E '^ +[0-9.]+% +[0-9.]+% +[0-9]+  ' out.txt | sed -n "${1}p"; }
check "hottest by self first: gp_write_text, 60% self" \
	sh -c "echo '$(row 1)' | grep -q '^ *60.00% *60.00% *3  gp_write_text (write_text.c)$'"
check "sources by their name in the program's tree, not the build machine's path" \
	sh -c '! grep -q "(/" out.txt'
check "the library's function says its library, the program's does not" sh -c \
	'grep -q "  main (main.c) \[libfoo.so\]$" out.txt && grep -q "  main (main.c)$" out.txt'
check "the provenance in the header" \
	grep -qx '# recorded: 2026-12-07 10:11:12 UTC on buildhost (Linux 6.12.0-gcs, 4 CPUs)' out.txt
check "five chains at most, and how many there are" \
	grep -q '^Heaviest call chains (root first; 3 distinct):$' out.txt
status_is 0 "--sort total" r --sort total
check "by total: report_run (80%) first" sh -c "echo '$(row 1)' | grep -q ' 80.00% .* report_run '"
status_is 0 "--children" r --children
check "is --sort total" sh -c "echo '$(row 1)' | grep -q ' report_run '"
status_is 0 "--no-children" r --no-children
check "is --sort self" sh -c "echo '$(row 1)' | grep -q ' gp_write_text '"
status_is 64 "--children with --no-children" r --children --no-children
status_is 0 "--top 2 --chains 1" r --top 2 --chains 1
# shellcheck disable=SC2016 # the inner shell expands it
check "two functions, one chain" sh -c '[ "$(grep -cE "^ +[0-9.]+% +[0-9.]+% +[0-9]+  " out.txt)" -eq 2 ] &&
	[ "$(grep -cE "^ +[0-9.]+% +[0-9]+  .* -> " out.txt)" -eq 1 ]'
status_is 0 "-g callee" r -g callee
show out.txt
check "under gp_write_text, its callers, nearest first" \
	grep -qE '^ +callers: +100.00%  report_run <- main <- main \[libfoo.so\]$' out.txt
status_is 0 "-g caller" r -g caller
check "under report_run, its callees" sh -c \
	'grep -qE "^ +callees: +75.00%  gp_write_text$" out.txt && grep -qE "^ +25.00%  gp_write_folded$" out.txt'
status_is 0 "--peek report_run" r --peek '^report_run$'
show out.txt
check "peek: its callers and callees with counts" sh -c \
	'grep -qE "^    callers: +60.00% +3  main \(main.c\)$" out.txt &&
	 grep -qE "^    callees: +60.00% +3  gp_write_text \(write_text.c\)$" out.txt &&
	 grep -qE "^ +20.00% +1  gp_write_folded \(write_folded.c\)$" out.txt'

# ---- Every slice in every format ----
# The function names a file holds (pprof: its function table).
names() {
	case $1 in
	pprof) "$pprof_check" --functions "$2" ;;
	*) cat "$2" ;;
	esac
}
formats="text folded svg speedscope firefox"
[ -n "$pprof_check" ] && formats="$formats pprof"
# slice DESC KEEP DROP OPTIONS...: in every format, KEEP is there and DROP not.
slice() {
	desc=$1 keep=$2 drop=$3
	shift 3
	for f in $formats; do
		r -f "$f" -o "slice.$f" "$@" 2>slice.err
		rc=$?
		names "$f" "slice.$f" >slice.names 2>/dev/null
		check "$desc, $f: $keep kept, $drop left out" sh -c "[ $rc -eq 0 ] &&
			grep -q '$keep' slice.names && ! grep -q '$drop' slice.names"
	done
}
slice "--pid 50" gp_write_svg gp_write_text --pid 50
slice "--tid 43" gp_write_folded gp_write_text --tid 43
slice "--comm worker" gp_write_folded gp_write_text --comm worker
slice "--comm main,other" gp_write_svg gp_write_folded --comm main,other
slice "--time 0.5,1.5" gp_write_text gp_write_folded --time 0.5,1.5
slice "--time 2.5," gp_write_svg gp_write_text --time 2.5,
slice "--focus report_run" gp_write_folded gp_write_svg --focus report_run
slice "--ignore" gp_write_folded gp_write_text --ignore '^gp_write_t[e]xt$'
slice "--group object" libfoo.so gp_write_text --group object
slice "--percent-limit 30" gp_write_text gp_write_folded --percent-limit 30
r --pid 50 >out.txt 2>/dev/null
check "text: a slice says what it kept" \
	grep -qx '# shown: 1 of 5 samples (process 50); shares are of these' out.txt
check "text: shares of the slice" grep -qE '^ +100.00% +100.00% +1  gp_write_svg' out.txt
r --group object --sort total >out.txt 2>/dev/null
check "text: grouped by file, the program and the library" sh -c \
	'grep -qE "^ +0.00% +80.00% +4  libfoo.so$" out.txt && grep -qE "^ +100.00% +100.00% +5  prog$" out.txt'
r -f folded -g callee >out.txt 2>/dev/null
check "folded -g callee: leaf first (an inverted flame graph)" \
	grep -qx 'gp_write_text;report_run;main;main 3' out.txt
r -f svg -g callee -o callee.svg 2>/dev/null
check "svg -g callee: the leaf at the root" grep -q 'data-d="1"><title>gp_write_text (3 samples' callee.svg
for bad in "--pid x" "--tid 1,,2" "--time 3,1" "--time 1" "--focus (" "--ignore [" \
	"--percent-limit 101" "--percent-limit x" "-f folded --peek x" "-f pprof -g callee" \
	"-f speedscope -g callee" "--peek ("; do
	# shellcheck disable=SC2086 # the options split
	status_is 64 "refused: $bad" r $bad
	check "in one line" [ "$(wc -l <err.txt)" -eq 1 ]
done

# ---- Provenance, and profiles without it ----
r -f firefox -o views.json 2>/dev/null
check "firefox: the real start time (ms since the epoch)" \
	grep -q '"startTime":1796638272345,' views.json
if [ -n "$pprof_check" ]; then
	r -f pprof -o views.pb.gz 2>/dev/null
	"$pprof_check" --comments views.pb.gz >out.txt
	check "pprof: the provenance as a comment" \
		grep -qx 'comment recorded: 2026-12-07 10:11:12 UTC on buildhost (Linux 6.12.0-gcs, 4 CPUs)' out.txt
	"$pprof_check" --functions views.pb.gz >out.txt
	check "pprof: the start as time_nanos" grep -qx 'time_nanos 1796638272345000000' out.txt
fi
r -f svg -o views.svg 2>/dev/null
check "svg: the provenance at its foot" grep -q '<text class="note" [^>]*>recorded: 2026-12-07' views.svg
sed '/^date /d; /^host /d; /^kernel /d; /^cpus /d' views.data >old.data
status_is 0 "a profile from before the provenance records" "$gp" report old.data --sysroot root
check "reads as before, without a provenance line" sh -c \
	'grep -q "gp_write_text" out.txt && ! grep -q "^# recorded" out.txt'
r -f firefox -o old.json 2>/dev/null
sed 's/^date .*/date 2026-13-07T10:11:12.345Z/' views.data >baddate.data
status_is 69 "a malformed date" "$gp" report baddate.data
sed 's/^cpus 4/cpus 0/' views.data >badcpus.data
status_is 69 "a malformed cpu count" "$gp" report badcpus.data
sed 's/^host buildhost/host bad%zzhost/' views.data >badhost.data
status_is 69 "a malformed host" "$gp" report badhost.data
status_is 0 "from another machine, without --sysroot" "$gp" report views.data -f folded
# shellcheck disable=SC2016 # the inner shell expands it
check "one line says so, with the fix" sh -c '[ "$(wc -l <err.txt)" -eq 1 ] &&
	grep -q "this profile was recorded on buildhost (Linux 6.12.0-gcs), and 2 of the 2 files it names are not here.*give --sysroot DIR, a copy of that machine.s root" err.txt'

# ---- A stripped library, and its debug file in the sysroot ----
cp "$lib" root/lib/libs.so
strip --strip-unneeded root/lib/libs.so
exported=$(addr gcswalk_version "$lib" $L 0)
local_fn=$("$nm" "$lib" | awk '$2 == "t" && $3 !~ /^_/ { print $3; exit }')
local_addr=$(addr "$local_fn" "$lib" $L 4)
cat >strip.data <<P
gcsprof-profile 1
hz 100
mode cpu
command s
mapping 0 42 $L 14000000 0 - /lib/libs.so
sample 1 42 42 R 0 t - P$exported R$local_addr
end 1 1 1
P
status_is 0 "a stripped library" "$gp" report strip.data --sysroot root
check "its exported function is named" grep -q ' gcswalk_version$' out.txt
check "its local function ($local_fn) is not" sh -c "! grep -q ' $local_fn' out.txt"
check "said once: install its debug package in the sysroot's usr/lib/debug, or debuginfod" \
	grep -q '^# unnamed: 1 frame in libraries that have only their exported symbols (e.g. \[libs.so+0x.*install its debug package (e.g. libc6-dbg) in the sysroot, where it lands in usr/lib/debug, or set DEBUGINFOD_URLS$' out.txt
id=$("$gp" report strip.data --sysroot root >/dev/null 2>&1; readelf -n "$lib" | sed -n 's/.*Build ID: //p')
mkdir -p "root/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug "$lib" "root/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
status_is 0 "with its debug file in the sysroot's usr/lib/debug" "$gp" report strip.data --sysroot root
check "its local function is named ($local_fn)" grep -q " $local_fn " out.txt
check "and the hint is gone" sh -c '! grep -q "^# unnamed" out.txt'

# ---- Traps ----
for pair in svg:svg pb.gz:pprof folded:folded speedscope.json:speedscope json:firefox txt:text; do
	ext=${pair%%:*} fmt=${pair#*:}
	r -o "named.$ext" 2>/dev/null
	r -f "$fmt" -o "asked.$ext" 2>/dev/null
	check "-o named.$ext writes $fmt" cmp -s "named.$ext" "asked.$ext"
done
status_is 64 "-f text -o flame.svg" r -f text -o flame.svg
# shellcheck disable=SC2016 # the inner shell expands it
check "refused in one line, nothing written" sh -c '[ "$(wc -l <err.txt)" -eq 1 ] && [ ! -e flame.svg ] &&
	grep -q "names svg output, but -f text was asked" err.txt'
status_is 0 "-f speedscope -o x.json (a JSON name fits both)" r -f speedscope -o x.json
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "'$gp' report views.data --sysroot root -f pprof" /dev/null >tty.out 2>&1
	check "pprof to a terminal: refused" grep -q 'pprof output is binary: not written to a terminal' tty.out
	script -qec "'$gp' report views.data --sysroot root -f pprof --force >/dev/tty" /dev/null >tty.out 2>&1
	check "unless --force" sh -c '! grep -q "not written to a terminal" tty.out'
else
	skip "no 'script' to give gcsprof a terminal"
fi
r -f pprof 2>/dev/null | gzip -t
check "pprof to a pipe is written" [ $? -eq 0 ]
mkdir -p notabundle
status_is 75 "report of a folder that is no bundle" "$gp" report notabundle
check "says so, in one line" grep -qx 'gcsprof: report: notabundle is a folder, not a profile (nor a bundle from gcsprof archive, which would hold notabundle/profile)' err.txt
status_is 0 "'-' reads standard input" sh -c "'$gp' report - --sysroot root -f folded <views.data"
check "the same stacks as from the file" sh -c "r() { '$gp' report views.data --sysroot root -f folded; }; [ \"\$(r 2>/dev/null)\" = \"\$(cat out.txt)\" ]"
printf 'junk\n' | "$gp" report - >/dev/null 2>err.txt
check "standard input that is no profile: named as such" grep -q '^gcsprof: standard input: not a gcsprof profile$' err.txt
status_is 71 "inspect of a profile" "$gp" inspect views.data
check "says to report it" grep -qx "gcsprof: inspect: views.data is a gcsprof profile, not a core dump: read it with 'gcsprof report views.data'" err.txt
status_is 0 "archive with none of the files" "$gp" archive views.data -o none.bundle
check "says the bundle holds the profile alone" grep -q '^none.bundle: the profile alone: none of the 2 file(s)' out.txt
status_is 0 "archive with every file" "$gp" archive views.data --sysroot root -o all.bundle
check "says it reports anywhere" grep -q '^all.bundle: the profile and the 2 file(s) it names; report it anywhere' out.txt
status_is 64 "archive of standard input" "$gp" archive -
tap_done
