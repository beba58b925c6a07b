#!/bin/sh
# CTest's bench.quick: bench/run --quick end to end into DIR, then a check
# that the table, the raw figures and the plots are there and every method
# produced numbers. It asserts no timing. Usage: quick-test.sh TOP DIR
set -u
top=$1 dir=$2
rm -rf "$dir"
"$top/bench/run" --quick -o "$dir" || { echo "not ok 1 - bench/run --quick failed"; echo "1..1"; exit 1; }
exec "$top/bench/tests/check-results.py" "$dir"
