#!/bin/sh
# One source of truth for gcsprof's options: the option tables. Usage,
# --help, `gcsprof help COMMAND` and the man page's SYNOPSIS and OPTIONS
# (docs/gcsprof.1, whose generated part is `gcsprof help --roff`) must
# agree, and the man page's version must be gcsprof's. TAP.
# Usage: help-test.sh GCSPROF MANPAGE WORKDIR
set -u
gp=$1 man=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$(dirname "$0")/../../../tests/tap.sh"

"$gp" help --roff >generated.roff
# shellcheck disable=SC2016 # a sed program
sed -n '/^\.\\" generated: gcsprof help --roff$/,/^\.\\" end of the generated part$/p' "$man" \
	>manpage.roff
check "the man page's SYNOPSIS and OPTIONS are what the option tables say (else: update them with 'gcsprof help --roff')" \
	cmp -s generated.roff manpage.roff
diff generated.roff manpage.roff | head -n 20 | sed 's/^/# /'
version=$("$gp" --version | cut -d' ' -f2)
check "the man page's version is gcsprof's ($version)" \
	grep -q "^\.TH GCSPROF 1 \"[0-9]*\" \"gcsprof $version\"" "$man"
status_is 0 "-V" "$gp" -V
check "-V is --version" [ "$(cat out.txt)" = "$("$gp" --version)" ]
for cmd in record report inspect status archive; do
	"$gp" help "$cmd" >help.txt
	"$gp" "$cmd" --help >dashhelp.txt
	check "gcsprof help $cmd is $cmd --help" cmp -s help.txt dashhelp.txt
	# Every option of the table in the usage lines, in --help and in the
	# man page's OPTIONS, under this command.
	sed -n "/^\.SS $cmd\$/,/^\.S[SH] /p" manpage.roff >section.roff
	missing=
	sed -n '1,/^$/p' help.txt >usage.txt
	# "  -f, --format ..." or "      --wall ...": short letter (or -), long name.
	sed -n 's/^  -\(.\), --\([a-z-]*\).*/\1 \2/p; s/^      --\([a-z-]*\).*/- \1/p' help.txt \
		| grep -v ' help$' >options.txt
	while read -r short long; do
		if [ "$short" = - ]; then
			grep -q -- "\[--${long}[] ]" usage.txt || missing="$missing usage:$long"
		else
			grep -q -- "\[-${short}[] ]" usage.txt || missing="$missing usage:$long"
		fi
		grep -q "^\.B .*\\\\-\\\\-$(echo "$long" | sed 's/-/\\\\-/g')\( \|$\)" section.roff ||
			missing="$missing man:$long"
	done <options.txt
	check "$cmd: as many options in --help as in the man page ($(wc -l <options.txt))" \
		[ "$(wc -l <options.txt)" -eq "$(grep -c '^\.TP$' section.roff)" ]
	check "$cmd: every option in its usage and in the man page's OPTIONS${missing:+ (missing:$missing)}" \
		[ -z "$missing" ]
done
status_is 64 "help of an unknown command" "$gp" help frobnicate
check "says so in one line" [ "$(wc -l <err.txt)" -eq 1 ]
status_is 0 "gcsprof help" "$gp" help
# shellcheck disable=SC2016 # the inner shell expands it
check "names every command" sh -c 'for c in record report inspect status archive; do
	grep -q "^  $c " out.txt || exit 1; done'
tap_done
