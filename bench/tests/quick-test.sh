#!/bin/sh
# CTest's bench.quick: bench/run --quick end to end into DIR, then a check
# that the table, the raw figures and the plots are there and every method
# produced numbers (check-results.py, whose results are carried into this
# one TAP stream). It asserts no timing. Usage: quick-test.sh TOP DIR
set -u
top=$1 dir=$2
# shellcheck source=../../tests/tap.sh
. "$top/tests/tap.sh"
rm -rf "$dir"
check "bench/run --quick" "$top/bench/run" --quick -o "$dir"
[ "$tap_failed" -eq 0 ] || tap_done
"$top/bench/tests/check-results.py" "$dir" >"$dir/check.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) not_ok "${line#not ok * - }" ;;
	"#"*) echo "$line" ;;
	esac
done <"$dir/check.tap"
check "check-results.py found nothing wrong (status $rc)" [ "$rc" -eq 0 ]
tap_done
