#!/bin/bash
# What one run can make the host hold and how much it may ask of it (issue 33), and
# the record of every refusal (issue 31), end to end through halo-run's proxy:
# - 100 connections (CONNECT tunnels, then captured ones) to a loopback origin that
#   accepts and never reads, written to for a few seconds, and 100 tunnels whose origin
#   writes as fast as it can to a command that never reads: the host's TCP memory
#   (/proc/net/sockstat "TCP: ... mem", pages) rises by less than BOUND_MIB, 160
#   (halo-run before issue 33: ~0.9-1.5 GiB writing, ~600 MiB reading; after: ~50-100
#   MiB writing, ~110-125 MiB reading);
# - limits.connections: past it, 503 and a refusal audit record whose counts add up;
#   the default cap, 256;
# - limits.wildcardNames / wildcardNamesPerMinute: distinct names under a wildcard
#   rule past the budget are refused before any lookup, audited with the count, and
#   --events says so once.
# Everything is on loopback; the names come from the bind-mounted /etc/hosts of
# egress_lib.sh, so no lookup ever becomes a DNS query.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
cp "$IT/flood_client.py" "$WS/flood.py"
chmod a+r "$WS/flood.py"

BOUND_MIB=160 # for 100 tunnels (~0.6 MiB each measured), with room for other traffic on a shared host
FLOOD_S=4

cat >"$W/bounds.yaml" <<'EOF2'
egress:
  default: deny
  allowedDomains: [origin.test]
  allowPrivate: [127.0.0.1/32]
EOF2
cat >"$W/cap5.yaml" <<'EOF2'
egress:
  default: deny
  allowedDomains: [origin.test]
  allowPrivate: [127.0.0.1/32]
limits: {connections: 5}
EOF2
chmod a+r "$W"/*.yaml

# refusals AUDIT CODE: the sum of the counts of the refusal records with CODE, and
# their rule(s).
refusals() {
	python3 - "$W/$1" "$2" <<'EOF2'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rs = [r for r in recs if r.get("code") == sys.argv[2]]
print(sum(r["count"] for r in rs), " | ".join(sorted({r["rule"] for r in rs})))
EOF2
}

tcp_mem() { awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1) }' /proc/net/sockstat; }

# sink SECONDS [source]: a non-reading origin on 127.0.0.1 (with source, one that also
# writes as fast as it can); sets SINK (port) and SINK_PID.
sink() {
	rm -f "$W/sink.port"
	timeout $(($1 + 5)) python3 "$IT/sink_origin.py" 127.0.0.1 "$W/sink.port" "$1" ${2:-} 2>>"$W/sink.err" &
	SINK_PID=$!
	pids+=("$SINK_PID")
	SINK=$(wait_port sink)
}

# flood MODE: 100 connections written to for FLOOD_S seconds at most (hold: the origin
# writes, the command never reads); flood.py ends sooner once a second passes with no
# byte moved, every buffer full: the peak is held by then, and a proxy that kept taking
# bytes runs the whole FLOOD_S. The highest TCP memory seen meanwhile, over the level
# before, in MiB (FLOOD_MIB), and the client's line.
flood() {
	local base max m out
	sink $((FLOOD_S + 40)) $([ "$1" = hold ] && echo source)
	base=$(tcp_mem) max=0
	HR_BOUND=60 hr bounds.yaml flood.audit -- python3 flood.py "$1" 100 origin.test "$SINK" "$FLOOD_S" >"$W/flood.out" &
	local hpid=$!
	while kill -0 "$hpid" 2>/dev/null; do
		m=$(tcp_mem)
		[ "$m" -gt "$max" ] && max=$m
		sleep 0.1
	done
	wait "$hpid"
	kill "$SINK_PID" 2>/dev/null
	FLOOD_MIB=$(((max - base) * 4096 / 1048576))
	FLOOD_OUT=$(tail -1 "$W/flood.out")
	echo "# $1: TCP memory +$FLOOD_MIB MiB (pages $base -> $max; tcp_mem $(cat /proc/sys/net/ipv4/tcp_mem)); $FLOOD_OUT"
}

for mode in connect direct hold; do
	flood $mode
	written=$(sed -n 's/.*written \([0-9]*\).*/\1/p' <<<"$FLOOD_OUT")
	if [ "$mode" = direct ] && [ "$(sed -n 's/^open \([0-9]*\).*/\1/p' <<<"$FLOOD_OUT")" = 0 ]; then
		skip "flood, captured: TCP memory bounded" "no captured connection (no nf_tables here?): $(head -c 200 "$HR_ERR" 2>/dev/null)"
		continue
	fi
	expect "flood ($mode): 100 connections open" "open 100" "$(grep -o '^open [0-9]*' <<<"$FLOOD_OUT")"
	# The flood really happened: tens of MiB written (each connection fills its buffers).
	if [ $mode = hold ]; then :; elif [ "${written:-0}" -gt $((20 << 20)) ]; then ok "flood ($mode): the command wrote $((written >> 20)) MiB"; else
		fail "flood ($mode): the command wrote" "only ${written:-0} bytes: $FLOOD_OUT"; fi
	if [ "$FLOOD_MIB" -lt "$BOUND_MIB" ]; then ok "flood ($mode): host TCP memory +$FLOOD_MIB MiB < $BOUND_MIB MiB"; else
		fail "flood ($mode): host TCP memory" "+$FLOOD_MIB MiB, bound $BOUND_MIB MiB"; fi
done

# ------------------------------------------------------------ limits.connections
sink 30
out=$(HR_BOUND=40 hr cap5.yaml cap.audit -- python3 flood.py connect 8 origin.test "$SINK" 1 | tail -1)
expect "limits.connections 5: 5 open, 3 refused" "open 5 refused 3" "$(sed 's/ written [0-9]*//' <<<"$out")"
got=$(refusals cap.audit 503)
expect "limits.connections 5: 503 refusal records count 3" "3 limits.connections (5 open)" "$got"
expect_match "limits.connections 5: the stderr line" "egress error: too many open connections, retry later \(503\)" "$(cat "$W/err")"
# A run that ends inside the refusals' second: the counts still held are in the audit
# before --summary-md reads it, and the summary counts each refusal, not each record.
rm -f "$W/cap.md"
HR_BOUND=40 hr cap5.yaml capsum.audit --summary-md "$W/cap.md" -- python3 flood.py connect 8 origin.test "$SINK" 0.1 >/dev/null
expect "run ends within the second: refusal records count 3" "3 limits.connections (5 open)" "$(refusals capsum.audit 503)"
expect_match "... and --summary-md counts the 3" '\*\*3 denied\*\*' "$(cat "$W/cap.md" 2>/dev/null)"
# --fail-on-deny: connections turned away at the cap fail a run whose command exits 0,
# as denials do (the command swallowed them; what they were for is unknown).
HR_BOUND=40 hr cap5.yaml capf.audit --fail-on-deny -- sh -c "python3 flood.py connect 8 origin.test $SINK 0.1 >/dev/null; exit 0"
expect "--fail-on-deny: refusals at limits.connections fail the run (122)" 122 "$?"
expect_match "... saying why" "^halo-run: --fail-on-deny: the command exited 0, but the run refused 3 egress connections at a proxy limit \(limits.connections\); exit status 122" "$(cat "$W/err")"
kill "$SINK_PID" 2>/dev/null

sink 40
out=$(HR_BOUND=60 hr bounds.yaml cap.audit -- python3 flood.py connect 300 origin.test "$SINK" 1 | tail -1)
expect "default cap: 256 open, 44 refused" "open 256 refused 44" "$(sed 's/ written [0-9]*//' <<<"$out")"
expect "default cap: 503 refusal records count 44" "44 limits.connections (256 open)" "$(refusals cap.audit 503)"
kill "$SINK_PID" 2>/dev/null

# ------------------------------------------------- limits.wildcardNames
# Eight distinct names under one wildcard with a budget of five: five resolved and
# tunnelled, three refused before any lookup, each refusal audited with the count,
# one --events "limit" record; a name resolved before still goes through.
printf '127.0.0.1 w1.wild.test w2.wild.test w3.wild.test w4.wild.test w5.wild.test w6.wild.test w7.wild.test w8.wild.test\n' >>"$W/etc/hosts"
cat >"$W/wild.yaml" <<'EOF2'
egress:
  default: deny
  allowedDomains: ["*.wild.test"]
  allowPrivate: [127.0.0.1/32]
limits: {wildcardNames: 5}
EOF2
chmod a+r "$W/wild.yaml" "$W/etc/hosts"
start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)
rm -f "$W/ev.jsonl"
out=$(hr wild.yaml wild.audit --events "$W/ev.jsonl" -- sh -c \
	'for n in 1 2 3 4 5 6 7 8 2; do python3 client.py http "CONNECT w$n.wild.test:$0 HTTP/1.1\r\nHost: w$n.wild.test:$0\r\n\r\n" | head -1; done' "$O1")
expect "wildcardNames 5: answers" "200 200 200 200 200 403 403 403 200" "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
got=$(aud wild.audit host decision rule | grep -o 'deny limits.wildcardNames (5 names resolved under wildcard rules; [123] refused)' | wc -l)
expect "wildcardNames 5: three refusals audited with the count" 3 "$got"
expect "wildcardNames 5: allowed records" 6 "$(aud wild.audit decision | tr ';' '\n' | grep -c allow)"
expect "wildcardNames 5: one --events limit record" \
	'1 wildcardNames 5' "$(python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
lim = [r for r in recs if r.get("type") == "limit"]
print(len(lim), lim[0]["limit"] if lim else "-", lim[0]["value"] if lim else "-")' "$W/ev.jsonl" 2>&1)"

finish
