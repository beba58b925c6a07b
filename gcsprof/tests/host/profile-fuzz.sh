#!/bin/sh
# gcsprof report on hostile profiles: mutants of a valid profile, in
# format version 1 and version 2 (made from it by profile-v1-to-v2.awk; lines
# dropped, repeated, swapped or cut; fields replaced by empty, negative,
# overflowing, badly escaped or very long values; the file cut at random
# bytes, and its version 2 gzip-compressed cut at random bytes). Each
# mutant must be reported (0), then in every format too,
# refused as bad (69) with one line on stderr, or reported as far as it
# goes as truncated (70), saying so in one line: never a crash, a
# sanitizer error, a hang or another status. Deterministic: the mutants come from
# fixed seeds. TAP. Usage: profile-fuzz.sh GCSPROF WORKDIR [COUNT]
set -u
gp=$1 work=$2 count=${3:-400}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"

cat >seed.data <<'P'
gcsprof-profile 1
hz 99
mode wall
command test%20program%20arg
date 2026-12-07T10:11:12.345Z
host fuzz%20host
kernel 6.12.0-gcs
cpus 4
mapping 0 42 400000 401000 0 0123abcd /no/such/prog
mapping 0 42 7f0000 7f8000 1000 - /no/such/libc.so.6
mapping 5000 43 500000 501000 0 - /no/such/child
sample 100 42 42 R 0 main%20thread - P400100 R400200 R7f0010
sample 200 42 42 S 0 main%20thread - P400100 R400200 R7f0010
sample 300 42 43 D 0 worker - P400300 R7f0020
sample 400 43 43 R 0 child - P500010 R500020
sample 500 42 44 R 0 fb f P400100 R400200
lost no-gcs 1
lost timeout 2
end 1000000 5 3
P

here=$(cd "$(dirname "$0")" && pwd)
awk -f "$here/profile-v1-to-v2.awk" seed.data >seed2.data
gzip -n -c seed2.data >seed2.data.gz

# One mutant of the file $2, by awk with seed $1.
mutate() {
	awk -v seed="$1" '
	function pick(n) { return int(rand() * n) + 1 }
	function longstr(s, i) { s = ""; for (i = 0; i < 5000; i++) s = s "x"; return s }
	BEGIN { srand(seed) }
	{ line[NR] = $0 }
	END {
		nl = NR
		ops = 1 + int(rand() * 3)
		for (o = 0; o < ops; o++) {
			op = pick(6); i = pick(nl); j = pick(nl)
			if (op == 1) { line[i] = "" }
			else if (op == 2) { line[i] = line[i] "\n" line[i] }
			else if (op == 3) { t = line[i]; line[i] = line[j]; line[j] = t }
			else if (op == 4) { line[i] = substr(line[i], 1, int(rand() * length(line[i]))) }
			else {
				nf = split(line[i], f, " ")
				k = pick(nf)
				v = pick(10)
				if (v == 1) f[k] = ""
				else if (v == 2) f[k] = "-1"
				else if (v == 3) f[k] = "18446744073709551616"
				else if (v == 4) f[k] = "ffffffffffffffffff"
				else if (v == 5) f[k] = "%"
				else if (v == 6) f[k] = "%zz%0"
				else if (v == 7) f[k] = longstr()
				else if (v == 8) f[k] = "P" f[k]
				else if (v == 9) f[k] = "0"
				else f[k] = f[k] f[k]
				s = f[1]; for (m = 2; m <= nf; m++) s = s " " f[m]
				line[i] = s
			}
		}
		for (i = 1; i <= nl; i++) print line[i]
	}' "$2"
}

run_one() { # run_one FILE DESCRIPTION
	timeout 20 "$gp" report "$1" -o out.txt 2>err.txt
	st=$?
	case $st in
	0)
		# What reports as text must report in every format.
		for fmt in folded pprof svg speedscope firefox; do
			timeout 20 "$gp" report "$1" -f "$fmt" -o "out.$fmt" 2>err.txt || {
				st=$fmt
				break
			}
		done
		# And through the views and slices.
		[ "$st" = 0 ] && { timeout 20 "$gp" report "$1" -g caller --peek . --group object \
			--sort total -o out.views 2>err.txt || st="text views"; }
		[ "$st" = 0 ] && { timeout 20 "$gp" report "$1" -f svg -g callee --percent-limit 20 \
			--focus . --ignore zz --time ,1 --tid 42,43 -o out.views.svg 2>err.txt ||
			st="svg slices"; }
		if [ "$st" = 0 ]; then ok "$2: reported"; else
			not_ok "$2: reported as text, not as $st"; sed 's/^/# /' err.txt | head -n 5
			cp "$1" "kept-$tap_n.data"; fi ;;
	69)
		if [ "$(wc -l <err.txt)" -eq 1 ]; then ok "$2: refused ($st)"; else
			not_ok "$2: refused ($st) but not in one line"; sed 's/^/# /' err.txt | head -n 5; fi ;;
	70)
		# Truncated: reported as far as it goes, said in one line (the
		# report's own warnings may follow).
		if [ "$(grep -c 'truncated profile' err.txt)" -eq 1 ] &&
			[ "$(grep -vc 'truncated profile\|: warning: ' err.txt)" -eq 0 ]; then
			# And what it holds reports in every format too.
			for fmt in folded pprof svg speedscope firefox; do
				timeout 20 "$gp" report "$1" -f "$fmt" -o "out.$fmt" 2>/dev/null
				[ $? -eq 70 ] || { st=$fmt; break; }
			done
			if [ "$st" = 70 ]; then ok "$2: truncated, reported ($st)"; else
				not_ok "$2: truncated, reported as text, not as $st"
				cp "$1" "kept-$tap_n.data"; fi
		else
			not_ok "$2: truncated ($st) but not said in one line"; sed 's/^/# /' err.txt | head -n 5
		fi ;;
	*)
		not_ok "$2: status $st"
		sed 's/^/# /' err.txt | head -n 20
		cp "$1" "kept-$tap_n.data" ;;
	esac
}

# Half the mutants of each version; the cuts of each file.
i=1
while [ "$i" -le "$count" ]; do
	if [ $((i % 2)) = 1 ]; then seed=seed.data; else seed=seed2.data; fi
	mutate "$i" "$seed" >m.data
	run_one m.data "line mutant $i (${seed%.data})"
	i=$((i + 1))
done
for seed in seed.data seed2.data.gz; do
	size=$(wc -c <"$seed")
	i=1
	while [ "$i" -lt "$size" ]; do
		head -c "$i" "$seed" >cut.data
		run_one cut.data "$seed cut at byte $i"
		i=$((i + 7))
	done
done
tap_done
