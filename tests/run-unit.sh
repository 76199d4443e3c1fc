#!/bin/sh
# Run every Check unit-test binary given; print one closing tally for the lot, in
# checks: "unit: N passed, M failed, K skipped". A check that cannot test what it
# claims here (not root, a kernel without the feature) calls UNIT_SKIP (unit.h), which
# prints a "skip - " line: it is counted as skipped, not as passed.
set -u
pass=0; fail=0; skip=0; bad=0; nbin=$#
log=$(mktemp /tmp/halo-unit.XXXXXX) || exit 1
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	# "100%: Checks: 12, Failures: 0, Errors: 0"
	set -- $(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\)$/\1 \2 \3/p' "$log" | tail -1) ""
	s=$(grep -c '^skip - ' "$log")
	if [ -z "$1" ]; then
		fail=$((fail + 1)) # ended before its summary: a crash
	else
		pass=$((pass + $1 - $2 - $3 - s)); fail=$((fail + $2 + $3))
	fi
	skip=$((skip + s))
	if [ "$rc" -ne 0 ]; then bad=$((bad + 1)); echo "FAILED: $t" >&2; fi
done
echo "unit: $pass passed, $fail failed, $skip skipped ($nbin binaries)"
[ "$bad" -eq 0 ] && [ "$fail" -eq 0 ]
