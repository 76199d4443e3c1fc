#!/bin/bash
# halo-run hook --wrap: the hook as the harness's sandbox backend. Claude Code
# PreToolUse events for Bash are answered with hookSpecificOutput.updatedInput (and
# never a permissionDecision) whose command, run through the real bash as the harness
# runs it, executes the original command in `halo-run --session hook-<session_id>`:
# two events of one session share /tmp, neither may write /etc, a blocked call is
# still blocked (exit 2, nothing runs), tricky quoting reaches bash unchanged, a NUL
# is refused, and SessionEnd stops the session. Runs as root and as uid 65534.
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
ws=$TMPDIR/ws
mkdir -p "$ws"
pol=$TMPDIR/policy.yaml
cat >"$pol" <<'EOF'
sandbox:
  mode: workspace-write
egress:
  allowedDomains: [github.com]
EOF
SID="wrap-$$-$RANDOM"
cleanup() { "$HALO" session stop "hook-$SID" "hook-$SID-race" "hook-$SID-root" >/dev/null 2>&1; }
trap cleanup EXIT

# A hook that outlives Claude Code's timeout (10 s in the rendered settings) lets the
# call run unwrapped: here stdin never ends, and the hook blocks by itself within 8 s.
# Those 8 s are the hook's own (WRAP_BUDGET_S), and the hook shares nothing with the
# rows below: it runs in the background from here, checked at the end. (The stdin's
# sleep holds no stream of the script's: run.sh reads to their end.)
(
	t0=$(date +%s)
	OUT=$(timeout -k 1 15 "$HALO" hook --wrap --harness claude-code --policy "$pol" < <(sleep 20 2>/dev/null) 2>"$TMPDIR/slow.err")
	RC=$?
	t1=$(date +%s)
	printf '%s' "$RC:$OUT:$((t1 - t0 < 10))" >"$TMPDIR/slow.res"
) &
slow_hook=$!

# ev SESSION COMMAND [EVENT]: a Claude Code event as it writes them.
ev() {
	python3 -c 'import json,sys
e={"session_id":sys.argv[1],"transcript_path":"/tmp/t.jsonl","cwd":sys.argv[3],
   "hook_event_name":sys.argv[4],"permission_mode":"default"}
if sys.argv[4]=="PreToolUse":
	e.update(tool_name="Bash",tool_use_id="toolu_1",
	         tool_input={"command":sys.argv[2],"description":"d","timeout":60000})
else:
	e["reason"]="exit"
print(json.dumps(e))' "$1" "$2" "$ws" "${3:-PreToolUse}"
}
# answer COMMAND: the hook's stdout for a Bash event of session SID; RC its exit.
answer() {
	OUT=$(ev "$SID" "$1" | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>"$TMPDIR/err")
	RC=$?
	ERR=$(cat "$TMPDIR/err")
}
# field PY_EXPR: one field of the last answer.
field() { python3 -c 'import json,sys; a=json.loads(sys.stdin.read()); print('"$1"')' <<<"$OUT"; }
# run_answer: the rewritten command run as the harness does, through bash.
run_answer() {
	local cmd
	cmd=$(python3 -c 'import json,sys; sys.stdout.write(json.loads(sys.stdin.read())["hookSpecificOutput"]["updatedInput"]["command"])' <<<"$OUT")
	ROUT=$(cd "$ws" && timeout -k 2 30 bash -c "$cmd" 2>"$TMPDIR/rerr" </dev/null)
	RRC=$?
	RERR=$(cat "$TMPDIR/rerr")
	# A session refuses every call once a protected file (a unix socket counts) appears
	# anywhere the sandbox would see it: other work on a shared machine can do that
	# mid-test. Then the rows below cannot check anything: they say so.
	if [ "$RRC" = 125 ] && grep -q 'appeared or was replaced since the session started' <<<"$RERR"; then
		DISTURBED="another process made a protected file appear during the session: $(head -c 200 <<<"$RERR")"
	fi
}
DISTURBED=
# check NAME WANT GOT: expect, or skip when the session was disturbed.
check() {
	if [ -n "$DISTURBED" ]; then skip "$1" "$DISTURBED"; else expect "$@"; fi
}

# The answer's shape, before anything runs (works without a sandbox).
answer 'echo hi'
expect "an allowed Bash call: exit 0, nothing on stderr" "0:" "$RC:$ERR"
expect "the answer names PreToolUse" "PreToolUse" "$(field 'a["hookSpecificOutput"]["hookEventName"]')"
expect "no permissionDecision (the harness's own permission flow stays)" "False:False" \
	"$(field '"%s:%s" % ("permissionDecision" in a["hookSpecificOutput"], "decision" in a)')"
expect "every other input key kept" "d:60000" \
	"$(field 'a["hookSpecificOutput"]["updatedInput"]["description"]+":"+str(a["hookSpecificOutput"]["updatedInput"]["timeout"])')"
expect_match "the session is named from session_id, the workspace is cwd" \
	"'--session' 'hook-$SID' '--workspace' '$ws' '--' 'bash' '-c' 'echo hi'\$" \
	"$(field 'a["hookSpecificOutput"]["updatedInput"]["command"]')"

# --wrap without --harness reads Claude Code's events: a Gemini CLI shell call is not
# let through unwrapped.
OUT=$(python3 -c 'import json; print(json.dumps({"session_id":"g","cwd":"/tmp","hook_event_name":"BeforeTool",
	"tool_name":"run_shell_command","tool_input":{"command":"ls"}}))' | "$HALO" hook --wrap --policy "$pol" 2>&1)
expect "--wrap alone: another harness's event is blocked (exit 2)" 2 "$?"

# A session_id that is not a session name: its digest, under another prefix.
long="odd id/with spaces and a very long tail $(printf 'x%.0s' $(seq 60))"
OUT=$(ev "$long" 'ls' | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>&1)
expect_match "an odd session_id: hookx- and 40 hex digits of its SHA-256" \
	"'--session' 'hookx-$(printf %s "$long" | sha256sum | cut -c1-40)'" "$OUT"
OUT=$(python3 -c 'import json; print(json.dumps({"cwd":"/tmp","hook_event_name":"PreToolUse",
	"tool_name":"Bash","tool_input":{"command":"ls"}}))' |
	"$HALO" hook --wrap --harness claude-code --policy "$pol" 2>&1)
expect_match "no session_id: blocked, never run unwrapped" '^halo-run: blocked \(cannot wrap\): .*session_id' "$OUT"

# raw_answer PY_EVENT_EXPR [HOOK_OPTS...]: the hook's answer to a hand-made event (e is
# the default Bash event of session SID in $ws; the expression may change it).
raw_answer() {
	local expr=$1
	shift
	OUT=$(python3 -c 'import json,sys
e={"session_id":sys.argv[1],"cwd":sys.argv[2],"hook_event_name":"PreToolUse",
   "tool_name":"Bash","tool_input":{"command":"ls"}}
'"$expr"'
print(json.dumps(e))' "$SID" "$ws" | "$HALO" hook --wrap --harness claude-code --policy "$pol" "$@" 2>"$TMPDIR/err")
	RC=$?
	ERR=$(cat "$TMPDIR/err")
}
# A shell call the hook allows but cannot rewrite never goes out unwrapped.
raw_answer 'e["tool_input"]["command"]=["ls","-l"]'
expect "a Bash command given as an array: blocked (exit 2, no answer), never run unwrapped" "2:" "$RC:$OUT"
expect_match "its reason" 'cannot wrap' "$ERR"
# Options the hook would judge with but not carry into the rewritten call (a limit, a
# decider, an audit file...) are refused, not silently dropped.
for o in "--limit mem=64M" "--timeout 5s" "--audit $TMPDIR/a.log" "--events $TMPDIR/ev.log" \
	"--decider true" "--decider-timeout 1s" "--session mine" "--workspace $ws" "--die-with-parent"; do
	raw_answer '' $o
	expect "hook --wrap $o: refused (exit 2, no answer), not dropped from the rewrite" "2:" "$RC:$OUT"
	expect_match "hook --wrap $o: names the option" "${o%% *}" "$ERR"
done
# Hostile session_id values: each a valid session name of its own, or refused.
for sid in '-rf' '--policy' '..' '../../etc' 'a/b' $'x\ny' 'é' "$(printf 'y%.0s' $(seq 60))"; do
	OUT=$(python3 -c 'import json,sys
print(json.dumps({"session_id":sys.argv[1],"cwd":sys.argv[2],"hook_event_name":"PreToolUse",
   "tool_name":"Bash","tool_input":{"command":"ls"}}))' "$sid" "$ws" |
		"$HALO" hook --wrap --harness claude-code --policy "$pol" 2>&1)
	name=$(python3 -c 'import json,sys,shlex; w=shlex.split(json.loads(sys.stdin.read())["hookSpecificOutput"]["updatedInput"]["command"]); print(w[w.index("--session")+1])' <<<"$OUT" 2>&1)
	expect_match "session_id $(printf %q "$sid"): a session name of [A-Za-z0-9._-], not an option nor a path" \
		'^hook(-[A-Za-z0-9._-]{1,59}|x-[0-9a-f]{40})$' "$name"
done
for bad in 'e["session_id"]=7' 'e["session_id"]=""' 'e["session_id"]=["a"]' 'e["cwd"]="ws"' \
	'e["cwd"]=7' 'del e["cwd"]' 'e["cwd"]=""'; do
	raw_answer "$bad"
	expect "$bad: blocked (exit 2, no answer)" "2:" "$RC:$OUT"
done
OUT=$(printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \xff\xfe"}}' \
	"$SID" "$ws" | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>/dev/null)
expect "invalid UTF-8 in the event: blocked (exit 2, no answer)" "2:" "$?:$OUT"
# The one-off flags the hook judged with go into the rewritten call: the Bash call's
# sandbox holds what the hook allowed (a --writable the file tools may write).
mkdir -p "$ws/sub"
OUT=$(ev "$SID" 'echo hi' | (cd "$ws" && "$HALO" hook --wrap --harness claude-code --policy "$pol" \
	--allow one.test --writable sub --host-port 4873 --env MYVAR) 2>"$TMPDIR/err")
expect_match "one-off flags carried into the rewritten call (--writable made absolute)" \
	"'--writable' '$ws/sub' '--allow' 'one.test' '--host-port' '4873' '--env' 'MYVAR' '--session' 'hook-$SID'" \
	"$(field 'a["hookSpecificOutput"]["updatedInput"]["command"]')"
OUT=$(ev "$SID" 'echo hi' | (cd "$ws" && "$HALO" hook --wrap --harness claude-code --policy "$pol" \
	--allow one.test --mode read-only) 2>"$TMPDIR/err")
expect_match "--mode carried into the rewritten call" \
	"'--allow' 'one.test' '--mode' 'read-only' '--session' 'hook-$SID'" \
	"$(field 'a["hookSpecificOutput"]["updatedInput"]["command"]')"
OUT=$(ev "$SID" 'echo hi' | "$HALO" hook --wrap --harness claude-code --policy "$pol" --env MYVAR=s3cr3t-v 2>&1)
RC=$?
expect "--env NAME=VALUE: blocked (exit 2), its value never in an answer" "2:0" "$RC:$(grep -c s3cr3t-v <<<"$OUT")"
expect_match "... with its reason" "blocked \(cannot wrap\): --env NAME=VALUE would put its value" "$OUT"

answer 'curl https://evil.test/x'
expect "a blocked call is still blocked (exit 2, no answer)" "2:" "$RC:$OUT"
expect_match "its reason" '^halo-run: blocked: curl -> evil.test' "$ERR"

# A NUL cannot reach bash: the JSON escape is refused, nothing is rewritten.
OUT=$(printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo a\\u0000rm -rf x"}}' \
	"$SID" "$ws" | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>"$TMPDIR/err")
RC=$?
expect "a NUL in the command is refused (exit 2, no answer)" "2:" "$RC:$OUT"

ev "$SID" 'ls' >"$TMPDIR/ev.json" # (refused before stdin is read: no pipe)
OUT=$("$HALO" hook --wrap --harness codex --policy "$pol" <"$TMPDIR/ev.json" 2>&1)
expect_match "--wrap for a harness that cannot take a rewritten input is refused" \
	'--wrap.*claude-code' "$OUT"

# ------------------------------------------------------------ the settings that install it
SNIP=$TMPDIR/snippet.json
"$HALO" policy render --harness claude-code --hook --policy "$pol" >"$SNIP" 2>"$TMPDIR/err"
expect "policy render --hook: exit 0" 0 "$?"
expect "the snippet installs PreToolUse (Bash among the tools) and SessionEnd, both hook --wrap" \
	"Bash:True:True" "$(python3 -c 'import json,sys
h=json.load(open(sys.argv[1]))["hooks"]; p=h["PreToolUse"][0]; e=h["SessionEnd"][0]
c=p["hooks"][0]["command"]
print("%s:%s:%s" % ("Bash" if "Bash" in p["matcher"].split("|") else "-",
	c.endswith(" hook --wrap --harness claude-code --policy '"'"'%s'"'"'" % sys.argv[2]),
	e["hooks"][0]["command"] == c))' "$SNIP" "$pol" 2>&1)"
# A binary and a policy under paths with a space, a quote and a newline: the snippet's
# command, read by bash as Claude Code runs it, starts that binary with that policy, and
# its answer's rewritten line names both, word for word.
odd=$TMPDIR/$'it\'s a\ndir'
mkdir -p "$odd" && cp "$HALO" "$odd/halo-run" && cp "$pol" "$odd/p o'l.yaml"
hcmd=$("$odd/halo-run" policy render --harness claude-code --hook --policy "$odd/p o'l.yaml" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["hooks"]["PreToolUse"][0]["hooks"][0]["command"])')
OUT=$(ev "$SID" 'ls' | bash -c "$hcmd" 2>&1)
expect "odd paths: the snippet's command runs that binary and answers" \
	"True:True" "$(python3 -c 'import json,sys,shlex
w=shlex.split(json.loads(sys.stdin.read())["hookSpecificOutput"]["updatedInput"]["command"])
print("%s:%s" % (w[0]==sys.argv[1]+"/halo-run", w[w.index("--policy")+1]==sys.argv[1]+"/p o'"'"'l.yaml"))' "$odd" <<<"$OUT" 2>&1)"
# No --policy: the policy the hook judged with ($HALO_POLICY here) is the one the
# rewritten call names, not whatever the harness's shell environment would find.
OUT=$(ev "$SID" 'ls' | HALO_POLICY=$pol "$HALO" hook --wrap 2>&1)
expect_match "no --policy: the rewrite names the policy the hook found (\$HALO_POLICY)" \
	"'--policy' '$pol' '--session'" "$OUT"
# An option the hook would not carry is refused here too, not left out of the snippet.
OUT=$("$HALO" policy render --harness claude-code --hook --policy "$pol" --allow b.example 2>"$TMPDIR/err")
expect "render --hook --allow: refused (125), no snippet" "125:" "$?:$OUT"
expect_match "render --hook --allow: names the option" '--hook: --allow' "$(cat "$TMPDIR/err")"
OUT=$("$HALO" policy render --harness claude-code --hook --policy "$pol" --mode read-only 2>"$TMPDIR/err")
expect "render --hook --mode: refused (125), no snippet" "125:" "$?:$OUT"
expect_match "render --hook --mode: names the option" '--hook: --mode' "$(cat "$TMPDIR/err")"
OUT=$("$HALO" policy render --harness codex --hook --policy "$pol" 2>&1)
expect_match "render --hook for a harness without a rewrite that keeps its permissions: refused" \
	'--hook: .*claude-code' "$OUT"
# Claude Code's own reading of the snippet: it prints nothing but the missing login, and
# its debug log shows the SessionEnd hook it parsed run with status 0 (a snippet it
# rejects registers no hook). In a network namespace of its own: no traffic leaves.
if ! command -v claude >/dev/null; then
	skip "Claude Code accepts the snippet" "no claude CLI (npm install -g @anthropic-ai/claude-code)"
elif ! unshare --map-current-user -n true 2>/dev/null; then
	skip "Claude Code accepts the snippet" "no user and network namespace for $AS to run it offline"
else
	mkdir -p "$TMPDIR/chome"
	mkdir -m 0700 "$TMPDIR/xdg" # its SessionEnd looks for sessions there, not in ours
	OUT=$(cd "$ws" && HOME=$TMPDIR/chome XDG_RUNTIME_DIR=$TMPDIR/xdg timeout -k 2 90 \
		unshare --map-current-user -n claude --settings "$SNIP" \
		--debug-file "$TMPDIR/chome/debug.txt" -p hi </dev/null 2>&1)
	expect "claude --settings SNIPPET -p hi: only the missing login" "Not logged in · Please run /login" "$OUT"
	expect_match "Claude Code ran the snippet's SessionEnd hook, status 0" \
		"SessionEnd:[a-z_]+ \\[.*hook --wrap --harness claude-code.*\\] completed with status 0" \
		"$(cat "$TMPDIR/chome/debug.txt" 2>/dev/null)"
fi

# The same event through a fresh process each, judged alone and judged and rewritten,
# answered every time (the time per event is tests/bench/hook's figure).
ev "$SID" 'git status && ls -la && npm test' >"$TMPDIR/ev.json"
n=30
for ((i = 0; i < n; i++)); do "$HALO" hook --policy "$pol" <"$TMPDIR/ev.json" || break; done
for ((k = 0; k < n; k++)); do "$HALO" hook --wrap --policy "$pol" <"$TMPDIR/ev.json" >/dev/null || break; done
expect "$n events judged, $n answered" "$n:$n" "$i:$k"

if ! "$HALO" -- true 2>/dev/null; then
	skip "--wrap end to end" "this machine cannot build the sandbox for $AS"
	finish
	exit
fi

# ------------------------------------------------------------ end to end, one session
answer 'echo kept-$((6*7)) >/tmp/x; touch /etc/halo-wrap-probe && echo wrote-etc; echo first'
run_answer
check "event 1 runs in the sandbox" "0:first" "$RRC:$ROUT"
[ -n "$DISTURBED" ] || expect_match "event 1 cannot touch /etc" "halo-wrap-probe" "$RERR"
[ -e /etc/halo-wrap-probe ] && fail "nothing reached the host's /etc" || ok "nothing reached the host's /etc"
[ -e /tmp/x ] && [ "$(cat /tmp/x 2>/dev/null)" = kept-42 ] &&
	fail "the session's /tmp is its own" "/tmp/x reached the host" || ok "the session's /tmp is its own"
answer 'cat /tmp/x'
run_answer
check "event 2 (same session_id) reads event 1's /tmp/x" "0:kept-42" "$RRC:$ROUT"
expect_match "session list shows the session" "hook-$SID +running" "$("$HALO" session list)"

# Quoting: what bash prints for each command run directly, and through the rewrite.
n=0
while IFS= read -r -d '' c; do
	n=$((n + 1))
	want=$(cd "$ws" && bash -c "$c" 2>&1 </dev/null)
	answer "$c"
	run_answer
	check "tricky command $n reaches bash unchanged" "0:$want" "$RRC:$ROUT"
	[ "$RRC:$ROUT" = "0:$want" ] || printf '# its stderr: %s\n' "$(head -c 300 <<<"$RERR")"
done < <(printf '%s\0' \
	"echo \"it's\" 'a\"b' \$'tab\\there' \\\\ \\'" \
	$'cat <<\'EOF\'\n$HOME `id` \'quoted\' "dq"\nEOF\necho after' \
	$'x=1; cat <<EOF\nx is $x\nEOF' \
	"printf '%s|' a\\ b \"c  d\" \$'e\\nf' ; echo" \
	"echo '''' \"'\"'\"' \$'\\''" \
	$'echo one\necho two; echo three' \
	"echo \$((2+3)) \$(echo sub) \`echo bq\` {a,b}" \
	$'echo cr\rx; printf "%s" "a\rb" | od -c | head -1' \
	'echo trail\' \
	$'   \t  ' \
	'# only a comment; echo not-run' \
	$'echo caf\u00e9 \u2603 $\'\\u00e9\'' \
	"echo \$'\\x27' '\\'''" \
	"bash -c 'bash -c \"echo \\\$0 \\\"in'\\''ner\\\"\"'" \
	$'cat <<-"E\'\\\'\'X"\n\tq\'\\\'\'q $x\n\tE\'\\\'\'X' \
	"echo $(printf "'q'%.0s" $(seq 3000)) | wc -c" \
	"x=\$(printf '%*s' 60000 '' | tr ' ' \"'\"); echo \${#x}" \
	"x=$(head -c 100000 /dev/zero | tr '\0' a); echo \${#x}")

# A session keeps the policy it started with: an event under another policy file (here
# read-only) is not run under the session's looser one, it is refused (125).
strict=$TMPDIR/strict.yaml
printf 'sandbox:\n  mode: read-only\n' >"$strict"
OUT=$(ev "$SID" 'echo ran-under-the-old-policy' |
	"$HALO" hook --wrap --harness claude-code --policy "$strict" 2>"$TMPDIR/err")
run_answer
check "an event under another policy does not run in the session started with the old one" \
	"125:" "$RRC:$ROUT"
[ -n "$DISTURBED" ] || expect_match "its reason names the policy" 'polic' "$RERR"
# A cwd that is no workspace (/): the rewritten call refuses to start; it never runs
# unwrapped.
OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1]+"-root","cwd":"/",
	"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo ran"}}))' "$SID" |
	"$HALO" hook --wrap --harness claude-code --policy "$pol" 2>/dev/null)
run_answer
expect "cwd / : the rewritten call refuses to start (125), nothing runs" "125:" "$RRC:$ROUT"
# A cwd that is gone, or a file: the same.
: >"$TMPDIR/afile"
for cwd in "$ws/gone" "$TMPDIR/afile"; do
	OUT=$(python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1]+"-root","cwd":sys.argv[2],
	"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo ran"}}))' "$SID" "$cwd" |
		"$HALO" hook --wrap --harness claude-code --policy "$pol" 2>/dev/null)
	run_answer
	expect "cwd $cwd: the rewritten call refuses to start (125), nothing runs" "125:" "$RRC:$ROUT"
done
# Two first calls of a new harness session at once: one session, both calls run in it.
SID2="$SID-race"
OUT=$(ev "$SID2" 'echo $$ >/tmp/mine-$RANDOM; sleep 0.3; ls /tmp | grep -c mine-' |
	"$HALO" hook --wrap --harness claude-code --policy "$pol" 2>/dev/null)
cmd=$(python3 -c 'import json,sys; sys.stdout.write(json.loads(sys.stdin.read())["hookSpecificOutput"]["updatedInput"]["command"])' <<<"$OUT")
(cd "$ws" && timeout -k 2 60 bash -c "$cmd" >"$TMPDIR/r1" 2>"$TMPDIR/e1" </dev/null; echo $? >>"$TMPDIR/r1") &
(cd "$ws" && timeout -k 2 60 bash -c "$cmd" >"$TMPDIR/r2" 2>"$TMPDIR/e2" </dev/null; echo $? >>"$TMPDIR/r2") &
wait
race="$(tr '\n' ' ' <"$TMPDIR/r1")/ $(tr '\n' ' ' <"$TMPDIR/r2")"
if grep -q 'appeared or was replaced since the session started' "$TMPDIR/e1" "$TMPDIR/e2"; then
	skip "two racing first calls share one session" "another process made a protected file appear"
else
	expect_match "two racing first calls: both run (exit 0) in one session (each sees both files)" \
		'^2 0 / 2 0 $' "$race"
fi
expect "one session for the raced harness session" 1 "$("$HALO" session list | grep -c "hook-$SID2 ")"
"$HALO" session stop "hook-$SID2" >/dev/null 2>&1

# ------------------------------------------------------------ SessionEnd
OUT=$(ev "$SID" "" SessionEnd | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>&1)
RC=$?
expect "SessionEnd: exit 0, nothing printed" "0:" "$RC:$OUT"
list=$("$HALO" session list)
if grep -q "hook-$SID" <<<"$list"; then
	fail "SessionEnd stopped the session" "$list"
else
	ok "SessionEnd stopped the session (session list shows it gone)"
fi
OUT=$(ev "$SID" "" SessionEnd | "$HALO" hook --wrap --harness claude-code --policy "$pol" 2>&1)
expect "a second SessionEnd (no session left): exit 0, silent" "0:" "$?:$OUT"
OUT=$(ev "$SID" "" SessionEnd | "$HALO" hook --harness claude-code --policy "$pol" 2>&1)
expect_match "SessionEnd without --wrap names where the hook belongs" "SessionEnd is for hook --wrap" "$OUT"

# The hook started at the top, its stdin never ending.
wait "$slow_hook"
expect "a hook still waiting after 8 s blocks by itself (exit 2, no answer, before 10 s)" \
	"2::1" "$(cat "$TMPDIR/slow.res" 2>/dev/null)"
expect_match "its reason" 'more than 8 s' "$(cat "$TMPDIR/slow.err")"
finish
