#!/bin/bash
# Run every Check unit-test binary given; print one closing tally for the lot, in
# checks: "unit: N passed, M failed, K skipped". A check that cannot test what it
# claims here (not root, a kernel without the feature) calls UNIT_SKIP (unit.h), which
# prints a "skip - " line: it is counted as skipped, not as passed.
# UNIT_JOBS binaries run at a time (default: two per CPU: most of a binary's time is
# spent waiting on sockets, timers and children, not on a CPU; UNIT_JOBS=1 is one after
# another). Each binary's output is printed whole, in the order given, never interleaved.
# Every suite keeps its state in directories of its own (mkdtemp), so none shares any.
set -u
# Check's per-test timeouts catch a hung test; several binaries at once (and an ASan
# build, a loaded machine) make a CPU-bound test slower, not hung: the limits times 3,
# unless the caller chose.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}
jobs=${UNIT_JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}
case $jobs in '' | *[!0-9]* | 0) echo "run-unit.sh: UNIT_JOBS must be a positive number, got '$jobs'" >&2; exit 2 ;; esac
pass=0 fail=0 skip=0 bad=0 nbin=$#
logs=$(mktemp -d /tmp/halo-unit.XXXXXX) || exit 1
trap 'rm -rf "$logs"' EXIT
t0=$SECONDS
bins=("$@")
one() { # idx: the binary's output in $logs/idx.log, its exit status in $logs/idx.rc
	"${bins[$1]}" >"$logs/$1.log" 2>&1
	echo $? >"$logs/$1.rc.tmp" && mv "$logs/$1.rc.tmp" "$logs/$1.rc"
}
shown=0
tally() { # print and count the finished binaries, in order, up to the first unfinished
	local i log rc s
	while [ "$shown" -lt "$nbin" ] && [ -e "$logs/$shown.rc" ]; do
		i=$shown log=$logs/$shown.log rc=$(cat "$logs/$shown.rc")
		cat "$log"
		# "100%: Checks: 12, Failures: 0, Errors: 0"
		set -- $(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\)$/\1 \2 \3/p' "$log" | tail -1) ""
		s=$(grep -c '^skip - ' "$log")
		if [ -z "$1" ]; then
			fail=$((fail + 1)) # ended before its summary: a crash
		else
			pass=$((pass + $1 - $2 - $3 - s)) fail=$((fail + $2 + $3))
		fi
		skip=$((skip + s))
		if [ "$rc" -ne 0 ]; then bad=$((bad + 1)); echo "FAILED: ${bins[$i]}" >&2; fi
		shown=$((shown + 1))
	done
}
# The longest first, in this order (seconds on 2 cores, plain / ASan: proxy_load 26 /
# 21, scan 7 / 10, pin 10 / 5, proxy 8 / 9, managed - / 9, decide - / 8, relay 13 / 16
# but mostly waiting, http - / 6, host - / 6, scan_index - / 5, broker - / 5), so that
# the pool does not end waiting on one of them; the rest as given.
slow="test_proxy_load test_scan test_pin test_proxy test_managed test_decide test_relay test_http
	test_host test_scan_index test_broker"
order=()
for n in $slow; do
	for i in "${!bins[@]}"; do [ "$(basename "${bins[$i]}")" = "$n" ] && order+=("$i"); done
done
for i in "${!bins[@]}"; do
	case " ${slow//[[:space:]]/ } " in *" $(basename "${bins[$i]}") "*) ;; *) order+=("$i") ;; esac
done
for i in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
		tally
	done
	one "$i" &
done
wait
tally
echo "unit: $pass passed, $fail failed, $skip skipped ($nbin binaries, $((SECONDS - t0)) s, $jobs at a time)"
[ "$bad" -eq 0 ] && [ "$fail" -eq 0 ]
