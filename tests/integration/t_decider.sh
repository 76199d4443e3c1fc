#!/bin/bash
# --decider COMMAND: asked (outside the sandbox, JSON lines on its stdin and stdout)
# only about hosts no rule of the policy matched; its answer is audited with the rule
# "decider"; a decider that sends garbage, huge lines or wrong ids, hangs or exits
# leaves the policy's default, with one line on stderr. Names as in t_egress.sh
# (egress_lib.sh), origins on loopback only. And --events: every record's schema.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
. "$IT/egress_lib.sh"
cp "$IT/decider.py" "$W/decider.py"
printf '127.0.0.1 ask.test ask2.test\n' >>"$W/etc/hosts"
cat >"$W/dec.yaml" <<'YAML'
egress:
  default: deny
  allowedDomains: [origin.test]
  deniedDomains: [denied.test]
  allowPrivate: [127.0.0.1/32]
YAML
cat >"$W/open.yaml" <<'YAML'
egress:
  default: allow
  deniedDomains: [denied.test]
  allowPrivate: [127.0.0.1/32]
YAML
chmod -R a+rX "$W"
start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)

dec() { # MODE [HALO OPTIONS] -- HOSTS...: run with the decider; OUT codes, ERR stderr
	# (DEC_TAG, when set, names the files of a run beside others: q$DEC_TAG.log,
	# d$DEC_TAG.audit, derr$DEC_TAG.)
	local mode=$1 t=${DEC_TAG:-}
	shift
	local -a opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	rm -f "$W/q$t.log"
	local s="" h
	for h in "$@"; do s="$s curl -s -o /dev/null -w '%{http_code} ' --max-time 15 -x http://127.0.0.1:3128 http://$h:$O1/hello;"; done
	T0=$(date +%s%N)
	OUT=$(HR_ERR="$W/derr$t" hr dec.yaml "d$t.audit" --decider "python3 $W/decider.py $mode $W/q$t.log" "${opts[@]}" -- sh -c "$s")
	RC=$?
	MS=$((($(date +%s%N) - T0) / 1000000))
	OUT=$(trim "$OUT")
	ERR=$(cat "$W/derr$t")
}
qlog() { # the questions' FIELD values, ';'-joined
	python3 - "$W/q.log" "$@" <<'PY'
import json, os, sys
p = sys.argv[1]
qs = [json.loads(l) for l in open(p)] if os.path.exists(p) else []
print(";".join(" ".join(str(q.get(f, "-")) for f in sys.argv[2:]) for q in qs))
PY
}

dec allow -- ask.test
expect "decider allow: the unmatched host is reached" "200" "$OUT"
expect "... the question: id host port protocol session" "1 ask.test $O1 http " "$(qlog id host port protocol session)"
expect "... audited with the rule \"decider\"" "http ask.test $O1 allow decider" "$(aud d.audit proto host port decision rule)"

dec deny -- ask.test
expect "decider deny: refused (403)" "403" "$OUT"
expect "... audited with the rule \"decider\"" "deny decider" "$(aud d.audit decision rule)"
expect_match "... the denial line names the decider" "egress denied: ask.test:$O1 \(decider\)" "$ERR"

dec allow -- origin.test denied.test 'bad_host' ask.test
expect "rules first: allowlist 200, deny rule 403, invalid host 403, unmatched (asked) 200" "200 403 403 200" "$OUT"
expect "... and the decider was asked only about the unmatched host" "ask.test" "$(qlog host)"

dec session -- ask.test ask.test ask2.test
expect "remember session: allowed thrice" "200 200 200" "$OUT"
expect "... asked once per host:port" "ask.test;ask2.test" "$(qlog host)"
expect "... later answers audited as the decider's too" "decider;decider;decider" "$(aud d.audit rule)"

dec allow -- ask.test ask.test
expect "remember once (the default): asked again" "ask.test;ask.test" "$(qlog host)"

# Under default allow the decider is asked too (it comes before the default) and may
# refuse; a deny rule still never reaches it.
rm -f "$W/q.log"
OUT=$(trim "$(HR_ERR="$W/derr" hr open.yaml d.audit --decider "python3 $W/decider.py deny $W/q.log" -- sh -c "curl -s -o /dev/null -w '%{http_code} ' --max-time 15 -x http://127.0.0.1:3128 http://ask.test:$O1/hello; curl -s -o /dev/null -w '%{http_code} ' --max-time 15 -x http://127.0.0.1:3128 http://denied.test:$O1/hello")")
expect "default allow: the decider's deny refuses the unmatched host; the deny rule is not asked" "403 403:ask.test" "$OUT:$(qlog host)"
expect "... audited" "decider;deniedDomains[0] denied.test" "$(aud d.audit rule)"

# Hostile deciders: the default (deny) every time, one stderr line per kind of trouble.
# Each of these runs waits out the 1 s timeout for both of its questions, one after the
# other: the runs themselves share nothing (each its own decider, audit, question log
# and stderr, DEC_TAG), so all but "exit" (timed below) run at once and are checked in
# order after.
hostile_start() { # MODE: its run, in the background; OUT in $W/hout.MODE
	(
		DEC_TAG=.$1
		dec "$1" --decider-timeout 1s -- ask.test ask2.test
		printf '%s' "$OUT" >"$W/hout.$1"
	) &
	hjob[$1]=$!
}
hostile() { # MODE WANT-STDERR NAME
	if [ -n "${hjob[$1]:-}" ]; then
		wait "${hjob[$1]}"
		OUT=$(cat "$W/hout.$1" 2>/dev/null) ERR=$(cat "$W/derr.$1" 2>/dev/null)
	else
		DEC_TAG=.$1 dec "$1" --decider-timeout 1s -- ask.test ask2.test
	fi
	expect "$3: the default (deny) for both" "403 403" "$OUT"
	expect_match "$3: said on stderr" "$2" "$ERR"
	expect "$3: said once" 1 "$(grep -c "halo-run: $2" <<<"$ERR")"
	expect_match "$3: audited as the default, with why" "default deny \(decider" "$(aud "d.$1.audit" rule)"
}
declare -A hjob=()
for m in garbage huge wrongid hang dupkey; do hostile_start $m; done
hostile garbage "decider sent a line that is not an answer: not JSON" "garbage answer"
hostile huge "decider sent a line over 4096 bytes" "a 10000-byte line"
hostile wrongid "decider answered an id with no question waiting" "wrong ids"
hostile hang "decider did not answer in time" "a decider that hangs"
hostile dupkey "decider sent a line that is not an answer: a key given twice" "a key twice"
hostile exit "decider exited" "a decider that exits"
expect "a decider that exits: no wait for the timeout" yes "$([ "$MS" -lt 2500 ] && echo yes || echo "no ($MS ms)")"
dec hang --decider-timeout 1s -- ask.test
expect "a hanging decider holds a connection for its timeout only (1 s)" yes "$([ "$MS" -lt 6000 ] && [ "$MS" -ge 900 ] && echo yes || echo "no ($MS ms)")"

# --events: each egress record is the audit record's fields, with type, ts, session
# and pid instead of time; the decider's troubles are records too.
rm -f "$W/e.jsonl"
dec allow --events "$W/e.jsonl" -- origin.test denied.test ask.test
expect "events: the egress records carry exactly the audit's fields and values" same "$(python3 - "$W/e.jsonl" "$W/d.audit" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
au = [json.loads(l) for l in open(sys.argv[2])]
eg = [r for r in ev if r["type"] == "egress"]
strip = lambda r, ks: {k: v for k, v in r.items() if k not in ks}
a = [strip(r, {"time", "duration_ms"}) for r in au]
b = [strip(r, {"type", "ts", "session", "pid", "duration_ms"}) for r in eg]
ok = len(eg) == 3 and a == b and all(r["ts"] == x["time"] for r, x in zip(eg, au))
print("same" if ok else "differ: %r vs %r" % (a, b))
PY
)"
expect "events: start, 3 egress, exit" "start egress egress egress exit" "$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$W/e.jsonl")"
rm -f "$W/e.jsonl"
dec hang --decider-timeout 1s --events "$W/e.jsonl" -- ask.test
expect "events: a decider's trouble is a record" "did not answer in time ask.test:$O1" "$(python3 -c '
import json,sys
print(";".join(r["problem"] + " " + r.get("detail","") for r in map(json.loads, open(sys.argv[1])) if r["type"] == "decider"))' "$W/e.jsonl" | sed "s/#/:/")"

# A connection still waiting when the command ends (its client gave up first, the
# decider still thinking) is closed with the proxy: its record reaches the events as it
# reaches the audit, and before the exit record.
rm -f "$W/e.jsonl"
OUT=$(HR_ERR="$W/derr" hr dec.yaml d.audit --decider "python3 $W/decider.py hang $W/q.log" --events "$W/e.jsonl" -- \
	curl -s -o /dev/null -w '%{http_code}' --max-time 1 -x http://127.0.0.1:3128 "http://ask.test:$O1/hello")
expect "events: a connection closed at the end is recorded as in the audit, before exit" "audit 1; events start egress exit" \
	"$(python3 - "$W/e.jsonl" "$W/d.audit" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
au = [json.loads(l) for l in open(sys.argv[2])]
print("audit %d; events %s" % (len(au), " ".join(r["type"] for r in ev)))
PY
)"

# Bad options are refused before anything runs.
OUT=$(cd "$WS" && "$HALO" --decider-timeout 5s -- true 2>&1); RC=$?
expect "--decider-timeout without --decider: 125" 125 "$RC"
OUT=$(cd "$WS" && "$HALO" --decider true --decider-timeout 0 -- true 2>&1); RC=$?
expect "--decider-timeout 0: 125" 125 "$RC"
# (The command waits a second: the supervisor notices the exit from its loop, and an
# \`echo\` alone may be over first on a loaded machine.)
OUT=$(cd "$WS" && "$HALO" --decider 'exit 0' -- sh -c 'sleep 1; echo ran' 2>"$W/derr"); RC=$?
expect "a decider that exits at once does not stop a command that needs none" "0:ran" "$RC:$OUT"
expect_match "... and its exit is said" "decider exited" "$(cat "$W/derr")"

# The decider runs outside the sandbox: its network namespace is the host's.
OUT=$(cd "$WS" && "$HALO" --decider "readlink /proc/self/ns/net >$W/dec.ns" -- readlink /proc/self/ns/net 2>/dev/null)
expect "the decider runs outside the sandbox (host network namespace)" "$(readlink /proc/self/ns/net) differs" "$(cat "$W/dec.ns" 2>/dev/null) $([ "$OUT" != "$(cat "$W/dec.ns" 2>/dev/null)" ] && echo differs)"
# The decider and everything it started end with the run (its own process group): a
# decider that leaves `sleep 300 &` behind, reading its questions until the run ends,
# or exiting at once. By pid, after halo-run has returned.
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# The decider may live in a pid namespace of its own: the background child writes its
# pid as this side sees it (the first field of /proc/self/stat, read by the shell).
BG="sh -c 'read p _ </proc/self/stat; echo \$p >$WS/bg.pid; exec sleep 300'"
for how in reads exits leaves kills; do
	rm -f "$WS/bg.pid"
	case $how in
	reads) d="$BG & exec cat >/dev/null" ;;
	exits) d="$BG &" ;;
	leaves) d="setsid $BG & exec cat >/dev/null" ;; # own session
	# a double fork into its own session, then kills its keeper (the same user)
	kills) d="(setsid $BG &); sleep 0.2; kill -9 \$PPID; exec cat >/dev/null" ;;
	esac
	# The command lasts until the background child has written its pid (5 s at most:
	# the workspace is the sandbox's too); half a second more where the decider kills
	# its keeper 0.2 s on, so that the run ends after that.
	(cd "$WS" && timeout -k 2 30 "$HALO" --decider "$d" -- sh -c \
		'i=0; while [ ! -s bg.pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done; [ "$1" != kills ] || sleep 0.5' \
		sh "$how" >/dev/null 2>&1)
	bg=$(cat "$WS/bg.pid" 2>/dev/null)
	if [ -z "$bg" ]; then
		fail "decider that $how: its background child ended with the run" "no pid written"
	elif gone "$bg"; then
		ok "decider that $how: its background child ended with the run"
	else
		fail "decider that $how: its background child ended with the run" "pid $bg alive"
		kill -9 "$bg" 2>/dev/null
	fi
done
# ... and when halo-run itself is killed (SIGKILL): the decider's keeper is told.
rm -f "$WS/bg.pid"
(cd "$WS" && exec timeout -k 2 30 "$HALO" --decider "setsid $BG & exec cat >/dev/null" -- sleep 20 >/dev/null 2>&1) &
hp=$!
for _ in $(seq 50); do [ -s "$WS/bg.pid" ] && break; sleep 0.1; done
bg=$(cat "$WS/bg.pid" 2>/dev/null)
pkill -KILL -P "$hp" -x halo-run 2>/dev/null || kill -9 "$(pgrep -P "$hp")" 2>/dev/null
wait "$hp" 2>/dev/null
for _ in $(seq 30); do [ -n "$bg" ] && gone "$bg" && break; sleep 0.1; done
if [ -n "$bg" ] && gone "$bg"; then
	ok "halo-run killed: what its decider started ends too"
else
	fail "halo-run killed: what its decider started ends too" "pid ${bg:-none} alive"
	[ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
fi
# ... and with the session, for a session's decider.
S="dec$$"
rm -f "$WS/bg.pid"
(cd "$WS" && timeout -k 2 30 "$HALO" --session "$S" --decider "$BG & exec cat >/dev/null" -- true >/dev/null 2>&1 </dev/null)
for _ in $(seq 50); do [ -s "$WS/bg.pid" ] && break; sleep 0.1; done
bg=$(cat "$WS/bg.pid" 2>/dev/null)
"$HALO" session stop "$S" >/dev/null 2>&1
for _ in $(seq 50); do [ -n "$bg" ] && gone "$bg" && break; sleep 0.1; done
if [ -n "$bg" ] && gone "$bg"; then
	ok "a session's decider: its background child ended with the session"
else
	fail "a session's decider: its background child ended with the session" "pid ${bg:-none} alive"
	[ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
fi
finish
