#!/bin/sh
# Every shell script of the project passes shellcheck (.shellcheckrc at
# the top follows sourced files): the tracked files named *.sh and those
# whose first line names sh or bash. TAP, one line per script.
# Usage: shellcheck.sh TOP
set -u
top=$1
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
cd "$top" || exit 1
if ! command -v shellcheck >/dev/null; then
	echo "1..0 # SKIP no shellcheck (Debian's shellcheck; scripts/deps installs it)"
	exit 4
fi
git ls-files >files.$$ 2>/dev/null || find . -type f ! -path './build/*' ! -path './.git/*' |
	sed 's|^\./||' >files.$$
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case $f in
	*.sh) ;;
	*) head -n 1 "$f" | grep -qE '^#!.*(/|env )(ba)?sh( |$)' || continue ;;
	esac
	if shellcheck "$f" >sc.$$ 2>&1; then
		ok "$f"
	else
		not_ok "$f"
		show sc.$$ | head -n 30
	fi
done <files.$$
rm -f files.$$ sc.$$
tap_done
