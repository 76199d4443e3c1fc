#!/bin/bash
# policy render --proxy PORT[,SOCKSPORT] (issue 26, the harness side): Claude Code gets
# its bring-your-own-proxy keys (sandbox.network.httpProxyPort/socksProxyPort), every
# other harness a warning naming it and what is not possible, bad values a clear error
# (exit 125), and Claude Code's own settings reader takes the rendered file (offline, in
# a network namespace of its own: no traffic leaves).
set -u
. "$IT/lib.sh"
cd "$TMPDIR" || exit 1
E="$TMPDIR/_stderr"
run() { OUT=$(timeout -k 2 30 "$@" 2>"$E" </dev/null); RC=$?; ERR=$(cat "$E"); }

cat >pol.yaml <<'P'
egress:
  allowedDomains: [github.com]
  deniedDomains: [pastebin.com]
P

# ------------------------------------------------------------- Claude Code
run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy 3128,1080
expect "claude-code --proxy 3128,1080 renders" 0 "$RC"
printf '%s\n' "$OUT" >claude.json
got=$(python3 -c 'import json,sys
n=json.load(open(sys.argv[1]))["sandbox"]["network"]
print(n.get("httpProxyPort"), n.get("socksProxyPort"), n.get("allowManagedDomainsOnly"))' claude.json 2>&1)
expect "sandbox.network.httpProxyPort and socksProxyPort are numbers, the lists stay" \
	"3128 1080 True" "$got"
expect_match "the warning says which halo-run proxy to start" \
	'warning: claude-code: --proxy: .*`halo-run proxy --listen 127.0.0.1:3128 --socks 127.0.0.1:1080`' "$ERR"
run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy 8080
got=$(python3 -c 'import json,sys
n=json.load(sys.stdin)["sandbox"]["network"]
print(n.get("httpProxyPort"), n.get("socksProxyPort"))' <<<"$OUT" 2>&1)
expect "--proxy 8080: the HTTP port only" "8080 None" "$got"
expect_match "no SOCKS port: Claude Code's own SOCKS proxy is said" \
	'warning: claude-code: --proxy: no SOCKS port' "$ERR"
run "$HALO" policy render --harness claude-code --policy pol.yaml
expect "without --proxy: no proxy key" "" "$(grep -o 'ProxyPort' <<<"$OUT")"
expect "without --proxy: no --proxy warning" "" "$(grep -e '--proxy' <<<"$ERR")"
mkdir -p outdir
run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy 3128 --out outdir
expect "--out writes the proxy key too" yes \
	"$(grep -q '"httpProxyPort":[[:space:]]*3128' outdir/managed-settings.json && echo yes)"

# ----------------------------------------------- every other harness: a warning
for h in codex copilot gemini opencode cursor; do
	for os in linux macos windows; do
		run "$HALO" policy render --harness "$h" --os "$os" --policy pol.yaml --proxy 3128,1080
		if [ "$RC" = 0 ] && grep -qE "^halo-run: warning: $h: --proxy: .+" <<<"$ERR" &&
			! grep -q 'ProxyPort\|8877\|3128' <<<"$OUT"; then
			ok "$h $os: --proxy is a warning naming the harness, nothing rendered"
		else
			fail "$h $os: --proxy is a warning naming the harness, nothing rendered" \
				"rc $RC; stderr: ${ERR:0:300}"
		fi
	done
done
run "$HALO" policy render --harness gemini --os macos --policy pol.yaml --proxy 8877
expect_match "gemini: GEMINI_SANDBOX_PROXY_COMMAND on port 8877 named" \
	"warning: gemini: --proxy: Gemini CLI has no settings key .*GEMINI_SANDBOX_PROXY_COMMAND='halo-run proxy --listen 127.0.0.1:8877" "$ERR"
run "$HALO" policy render --harness gemini --policy pol.yaml --proxy 3128
expect_match "gemini: another port cannot be used" 'port 3128 cannot be used \(Gemini CLI waits on 8877\)' "$ERR"
cat >off.yaml <<'P'
sandbox: {mode: off}
P
run "$HALO" policy render --harness claude-code --policy off.yaml --proxy 3128
expect_match "mode off: nothing rendered, and --proxy says so" \
	'warning: claude-code: --proxy: sandbox.mode off: nothing is rendered' "$ERR"
expect "mode off: no proxy key" "" "$(grep -o 'ProxyPort' <<<"$OUT")"

# ---------------------------------------------------------------- bad values
while IFS='|' read -r val why; do
	run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy "$val"
	if [ "$RC" = 125 ] && [ -z "$OUT" ] && grep -qF -- "$why" <<<"$ERR"; then
		ok "--proxy '$val' refused: $why"
	else
		fail "--proxy '$val' refused: $why" "rc $RC; out ${OUT:0:80}; stderr: ${ERR:0:200}"
	fi
done <<'V'
0|halo-run: --proxy: port 0 is out of range (1-65535)
65536|halo-run: --proxy: port 65536 is out of range (1-65535)
abc|halo-run: --proxy: 'abc' is not a port number (expected PORT or PORT,SOCKSPORT)
80x|'80x' is not a port number
-1|'-1' is not a port number
1,2,3|halo-run: --proxy: at most two ports (PORT or PORT,SOCKSPORT)
3128,|an empty port
3128,3128|the HTTP and SOCKS ports are both 3128
3128,70000|port 70000 is out of range
V
run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy=
expect "--proxy= (empty) refused" 125 "$RC"
expect_match "--proxy= names the option" '--proxy needs a non-empty value' "$ERR"
run "$HALO" policy render --harness claude-code --policy pol.yaml --proxy 3128 --hook
expect "--proxy with --hook refused" 125 "$RC"
expect_match "--proxy with --hook: said why" '--proxy renders .*--hook prints' "$ERR"
run "$HALO" policy render --harness nosuch --policy pol.yaml --proxy 3128
expect "--proxy for an unknown harness: the harness error" 125 "$RC"

# --------------------------------------------- Claude Code reads the rendered file
# With its sandbox's tools hidden (PATH empty), a file Claude Code accepts turns its
# sandbox on and failIfUnavailable stops it, naming the sandbox; a file it rejects is
# dropped and it gets as far as the missing login. The same file with the port as a
# string shows the difference is the file's validity.
if ! command -v claude >/dev/null; then
	skip "Claude Code accepts the --proxy settings" "no claude CLI (npm install -g @anthropic-ai/claude-code)"
elif ! unshare --map-current-user -n true 2>/dev/null; then
	skip "Claude Code accepts the --proxy settings" "no user and network namespace for $AS to run it offline"
else
	CLAUDE=$(command -v claude)
	mkdir -p chome ws
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); d["sandbox"]["network"]["httpProxyPort"]="3128"
json.dump(d, open(sys.argv[2], "w"))' claude.json mutated.json
	claude_reads() {
		(cd ws && HOME=$TMPDIR/chome timeout -k 2 90 unshare --map-current-user -n \
			env PATH=/nonexistent "$CLAUDE" --settings "$1" -p hi </dev/null 2>&1)
	}
	OUT=$(claude_reads "$TMPDIR/claude.json")
	expect_match "claude --settings RENDERED: accepted (its sandbox required, and on)" \
		'sandbox required but unavailable' "$OUT"
	OUT=$(claude_reads "$TMPDIR/mutated.json")
	expect_match "claude --settings with the port as a string: dropped (so the check means something)" \
		'Not logged in' "$OUT"
fi
skip "Claude Code's sandbox reaches halo-run proxy on the rendered port" \
	"needs a logged-in Claude Code whose model runs a Bash call; not possible offline"
finish
