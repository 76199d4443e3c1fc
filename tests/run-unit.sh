#!/bin/sh
# Run every Check unit-test binary given; print one closing tally for the lot.
set -u
pass=0; fail=0
for t in "$@"; do
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $t" >&2; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
