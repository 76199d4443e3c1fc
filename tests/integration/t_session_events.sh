#!/bin/bash
# --events and --decider with sessions: the session's supervisor holds both for every
# call. The events file given at the session's start follows each call (start and
# exit, numbered by "call"), the egress and decider records of the shared proxy (with
# the session's name) and the session's end; a later call naming another events file,
# none, or another decider is refused (125), and --events fd:N is refused with a
# session. The decider is the supervisor's child: asked once, its "remember":"session"
# answers later calls without a question, and it dies when the session is stopped.
# Names as in t_egress.sh (egress_lib.sh: halo-run in a mount namespace of its own
# with the test's /etc/hosts), origins on loopback only. Root and unprivileged.
# (Once run alone: other scripts' index watchers' sockets refused a session's calls
# until sessions became immune to other launches (issue 24, item 7; t_own_state).)
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
  allowPrivate: [127.0.0.1/32]
YAML
chmod -R a+rX "$W"
eg_one_ns # (sessions serve callers in their own user namespace only)
S="ev$$"
SESSIONS=()
se_cleanup() {
	for s in "${SESSIONS[@]}"; do "${WRAP[@]}" "$HALO" session stop "$s" >/dev/null 2>&1; done
	pgrep -f "halo-sev-mark-$$" | xargs -r kill -KILL 2>/dev/null
	eg_cleanup
}
trap se_cleanup EXIT

if ! (cd "$WS" && "${WRAP[@]}" "$HALO" -- true) 2>/dev/null; then
	skip "sessions with --events and --decider" "this machine cannot build the sandbox for $AS"
	exit 0
fi
start_origin o1 echo 127.0.0.1
O1=$(wait_port o1)

# sc NAME [HALO OPTIONS] -- CMD...: one bounded call into session NAME under the test
# names; OUT, ERR, RC.
sc() {
	local name=$1
	shift
	OUT=$(cd "$WS" && timeout -k 2 "${BOUND:-40}" "${WRAP[@]}" "$HALO" --session "$name" \
		--policy "$W/dec.yaml" "$@" 2>"$W/err" </dev/null)
	RC=$?
	ERR=$(cat "$W/err")
	[ "$RC" != 125 ] || printf '# call exit 125: %s\n' "$(printf '%s' "$ERR" | head -3 | tr '\n' ' ')"
}
# evf FILE TYPE FIELD...: the FIELDs of every TYPE record ("-" absent), ';'-joined;
# "invalid" when a line lacks the common fields.
evf() {
	python3 - "$@" <<'PY'
import json, sys
path, typ, fields = sys.argv[1], sys.argv[2], sys.argv[3:]
out = []
for line in open(path):
    r = json.loads(line)
    if not (isinstance(r, dict) and isinstance(r.get("type"), str) and
            isinstance(r.get("ts"), str) and isinstance(r.get("session"), str) and
            isinstance(r.get("pid"), int)):
        print("invalid: " + line.strip()); sys.exit()
    if typ == "*" or r["type"] == typ:
        out.append(" ".join(r[f] if isinstance(r.get(f), str) else json.dumps(r.get(f, "-"))
                            if f in r else "-" for f in fields))
print(";".join(out))
PY
}
gone() { ! pgrep -f "$1" >/dev/null; }
wait_for() { # SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
get() { echo "curl -s -o /dev/null -w '%{http_code} ' --max-time 15 -x http://127.0.0.1:3128 http://$1:$O1/hello;"; }

# ------------------------------------------------------------------ one file, two calls
EV="$W/ev.jsonl"
rm -f "$EV"
SESSIONS+=("$S")
sc "$S" --events "$EV" -- sh -c "$(get origin.test) $(get denied-$$.invalid) exit 3"
expect "call 1: allowed and denied egress, its own exit status" "3:200 403" "$RC:$(trim "$OUT")"
sc "$S" --events "$EV" -- sh -c "$(get origin.test) echo; cat '$EV' >/dev/null 2>&1 && echo read || echo masked"
expect "call 2: the session's events file is masked inside" "0:200 masked" "$RC:$(trim "$(tr -s ' \n' ' ' <<<"$OUT")")"
expect "the records follow both calls, in order" \
	"start 1;egress -;egress -;exit 1;start 2;egress -;exit 2" "$(evf "$EV" '*' type call)"
expect "each call's start: its command" "sh -c exit 3" "$(python3 -c '
import json, sys
c = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "start"][0]["command"]
print(c[0], c[1], c[2][-6:])' "$EV")"
expect "each call's exit: outcome, status, code" "exited 3 3;exited 0 0" "$(evf "$EV" exit outcome status code)"
expect_match "each call's exit: a duration" '^[0-9]+;[0-9]+$' "$(evf "$EV" exit duration_ms)"
expect "egress records carry the session's name" \
	"origin.test allow $S;denied-$$.invalid deny $S;origin.test allow $S" "$(evf "$EV" egress host decision session)"
SUP=$("${WRAP[@]}" "$HALO" session list | sed -n "s/^  $S  running, supervisor pid \([0-9]*\).*/\1/p")
expect "every record: the session's name and its supervisor's pid" \
	"$(for _ in 1 2 3 4 5 6 7; do printf '%s %s;' "$S" "$SUP"; done | sed 's/;$//')" \
	"$(evf "$EV" '*' session pid)"
D=$(evf "$EV" start policy_digest | cut -d';' -f1)
expect "the start's digest is the policy's" "sha256:$("$HALO" policy --policy "$W/dec.yaml" --json | sha256sum | cut -d' ' -f1)" "$D"

# A call's wall-clock limit, a call killed mid-way, and the session's end.
sc "$S" --events "$EV" --timeout 1 -- sleep 20
expect "a call's wall-clock limit: 124" 124 "$RC"
expect "... recorded: limit wall 1, exit timeout 124" "limit wall 1;exit timeout 124 -" \
	"$(evf "$EV" '*' call type limit value outcome status code | tr ';' '\n' | sed -n 's/^3 //p' |
		sed 's/^limit \(.*\) - - -$/limit \1/; s/^exit - - /exit /; /^start/d' | paste -sd';')"
(cd "$WS" && exec timeout -k 2 40 "${WRAP[@]}" "$HALO" --session "$S" --policy "$W/dec.yaml" \
	--events "$EV" -- sh -c "sleep 30; : halo-sev-mark-$$-kill" </dev/null >/dev/null 2>&1) &
HPID=$!
if wait_for 15 pgrep -f "^sh -c sleep 30; : halo-sev-mark-$$-kill" >/dev/null; then
	sleep 0.3
	pkill -KILL -f "^$HALO --session $S .*halo-sev-mark-$$-kill" 2>/dev/null
	wait "$HPID" 2>/dev/null
	wait_for 5 gone "halo-sev-mark-$$-kill"
	wait_for 5 grep -q '"type":"exit".*"call":4' "$EV"
	expect_match "a call killed mid-way: its exit record says so" \
		"^exit 4 signaled 137 the call went away" "$(evf "$EV" exit type call outcome status error | tr ';' '\n' | grep '^exit 4')"
else
	fail "a call killed mid-way: its exit record says so" "the call never started"
fi
"${WRAP[@]}" "$HALO" session stop "$S" >/dev/null
expect "the session's end: its last record" "session_end stopped 4" "$(evf "$EV" '*' type reason calls | tr ';' '\n' | tail -1)"

# ------------------------------------------------------------------ what a later call may name
S2="${S}b"
SESSIONS+=("$S2")
rm -f "$W/ev2.jsonl" "$W/ev3.jsonl"
sc "$S2" --events "$W/ev2.jsonl" -- true
expect "a session with --events starts" 0 "$RC"
sc "$S2" --events "$W/ev3.jsonl" -- true
expect "a later call naming another events file: refused 125" 125 "$RC"
expect_match "... named" "refused: launch options differ.*events=$W/ev2.jsonl.*events=$W/ev3.jsonl" "$ERR"
if [ -s "$W/ev3.jsonl" ]; then fail "... and nothing written there" "$(head -c 200 "$W/ev3.jsonl")"; else ok "... and nothing written there"; fi
sc "$S2" -- true
expect "a later call without --events: refused 125" 125 "$RC"
OUT=$(cd "$WS/.." && timeout -k 2 40 "${WRAP[@]}" sh -c 'cd ws && exec "$@"' sh "$HALO" --session "$S2" \
	--policy "$W/dec.yaml" --events ../ev2.jsonl -- echo same 2>&1 </dev/null)
expect "the same file by a relative name: accepted" "same" "$OUT"
sc "$S2" --events "$W/ev2.jsonl" --decider "python3 $W/decider.py allow $W/q.log" -- true
expect "a later call adding a decider: refused 125" 125 "$RC"
expect_match "... named" "refused: launch options differ.*decider=" "$ERR"
sc "$S2" --events "$W/ev2.jsonl" -- no-such-command-e14s
expect "a command not found: 127, and its exit record" "127:notfound 127" "$RC:$(evf "$W/ev2.jsonl" exit outcome status | tr ';' '\n' | tail -1)"
"${WRAP[@]}" "$HALO" session stop "$S2" >/dev/null
sc "${S}c" --events fd:5 -- true 5>/dev/null
expect "--events fd:N with --session: refused 125" 125 "$RC"
expect_match "... named" "--events fd:5: a descriptor is this call's.*use --events FILE with --session" "$ERR"
SESSIONS+=("${S}c")
mkdir -p "$W/evdir"
sc "${S}c" --events "$W/evdir" -- true
expect "a bad events file: the first call says why (125)" 125 "$RC"
expect_match "... named" "session ${S}c: --events $W/evdir: " "$ERR"

# ------------------------------------------------------------------ the session's decider
S3="${S}d"
SESSIONS+=("$S3")
rm -f "$W/q.log" "$W/ev4.jsonl"
DEC="python3 $W/decider.py session $W/q.log"
sc "$S3" --events "$W/ev4.jsonl" --decider "$DEC" -- sh -c "$(get ask.test)"
expect "call 1: the decider allows the unmatched host" "0:200" "$RC:$(trim "$OUT")"
QLOG=$(python3 -c 'import json,sys; print(";".join("%s %s %s" % (q["host"], q["port"], q["session"]) for q in map(json.loads, open(sys.argv[1]))))' "$W/q.log" 2>/dev/null)
expect "... asked once, with the session's name" "ask.test $O1 $S3" "$QLOG"
if pgrep -f "^python3 $W/decider.py session" >/dev/null; then
	ok "the decider outlives the call (the session's)"
else
	fail "the decider outlives the call (the session's)" "not running"
fi
sc "$S3" --events "$W/ev4.jsonl" --decider "$DEC" -- sh -c "$(get ask.test) $(get ask2.test)"
expect "call 2: remembered for the session (200), the other host asked" "0:200 200" "$RC:$(trim "$OUT")"
expect "... the remembered host not asked again" "ask.test;ask2.test" "$(python3 -c 'import json,sys; print(";".join(q["host"] for q in map(json.loads, open(sys.argv[1]))))' "$W/q.log")"
expect "... every answer audited as the decider's, in the session's events" \
	"ask.test allow decider $S3;ask.test allow decider $S3;ask2.test allow decider $S3" \
	"$(evf "$W/ev4.jsonl" egress host decision rule session)"
sc "$S3" --events "$W/ev4.jsonl" --decider "$DEC" --decider-timeout 9s -- true
expect "a later call with another --decider-timeout: refused 125" 125 "$RC"
"${WRAP[@]}" "$HALO" session stop "$S3" >/dev/null
if wait_for 5 gone "^python3 $W/decider.py session"; then
	ok "the decider dies with session stop"
else
	fail "the decider dies with session stop" "$(pgrep -af "^python3 $W/decider.py")"
fi
rm -f "$W/q.log"
sc "$S3" --events "$W/ev4.jsonl" --decider "$DEC" -- sh -c "$(get ask.test)"
expect "a new session asks again (remembered answers die with the session)" "0:200:ask.test" "$RC:$(trim "$OUT"):$(python3 -c 'import json,sys; print(";".join(q["host"] for q in map(json.loads, open(sys.argv[1]))))' "$W/q.log")"
"${WRAP[@]}" "$HALO" session stop "$S3" >/dev/null

# The supervisor killed without a word: its decider dies too (it dies with its parent).
S5="${S}k"
SESSIONS+=("$S5")
sc "$S5" --decider "python3 $W/decider.py allow $W/q5.log" -- true
SUP=$("${WRAP[@]}" "$HALO" session list | sed -n "s/^  $S5  running, supervisor pid \([0-9]*\).*/\1/p")
if [ -n "$SUP" ] && pgrep -f "^python3 $W/decider.py allow $W/q5.log" >/dev/null; then
	kill -KILL "$SUP"
	if wait_for 5 gone "^python3 $W/decider.py allow $W/q5.log"; then
		ok "a supervisor killed: its decider dies too"
	else
		fail "a supervisor killed: its decider dies too" "still running"
	fi
else
	fail "a supervisor killed: its decider dies too" "no supervisor or decider (sup=$SUP)"
fi

# A decider that exits: the default (deny) for the session, said on the call's stderr
# and in the events.
S4="${S}e"
SESSIONS+=("$S4")
rm -f "$W/ev5.jsonl"
sc "$S4" --events "$W/ev5.jsonl" --decider "python3 $W/decider.py exit $W/q.log" -- sh -c "sleep 1; $(get ask.test)"
expect "an exited decider: the default (deny)" "0:403" "$RC:$(trim "$OUT")"
sc "$S4" --events "$W/ev5.jsonl" --decider "python3 $W/decider.py exit $W/q.log" -- sh -c "$(get ask.test)"
expect "... in later calls too" "0:403" "$RC:$(trim "$OUT")"
expect "... one decider record in the session's events" "exited or closed its stdout $S4" "$(evf "$W/ev5.jsonl" decider problem session)"
"${WRAP[@]}" "$HALO" session stop "$S4" >/dev/null
finish
